"""How the parser numbers things in its tensors: the special entries of its embedding tables,
the label-embedding ids, the token slots, and the global positions of a batch."""

from __future__ import annotations

from tagger.corpus.vocab import PAD, UNK
from tagger.transitions.features import FIRST_CHILD_SLOT, N_LABEL_FEATURES, TOKEN_SLOTS

NULL = "<null>"
ROOT = "<root>"
#: Special entries at the start of the word, tag and label embedding tables.
SPECIALS = (PAD, UNK, NULL, ROOT)
PAD_ID, UNK_ID, NULL_ID, ROOT_ID = range(4)
#: Label embedding id of transition label k is ``k + LABEL_OFFSET``.
LABEL_OFFSET = len(SPECIALS)

N_SLOTS = len(TOKEN_SLOTS)  # 18 token slots; slots 6..17 (children) also give a label feature
FIRST_CHILD = FIRST_CHILD_SLOT  # 6
N_CHILD = N_LABEL_FEATURES  # 12

# Global positions in a batch: 0 is the NULL sentinel (an empty slot), 1 a scratch slot that
# is written but never read, then each sentence's ROOT and words.
SENTINEL, SCRATCH, FIRST_BASE = 0, 1, 2
