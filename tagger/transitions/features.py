"""The 48 Chen & Manning (2014) features of an arc-standard configuration.

18 token slots give 18 word and 18 tag features; the 12 child slots (6..17) also give 12 label
features. Slot order (also :data:`TOKEN_SLOTS`):

====  ==============  ====  ==============  ====  ==============
 0    s0               6    lc1(s0)         12    lc1(s1)
 1    s1               7    rc1(s0)         13    rc1(s1)
 2    s2               8    lc2(s0)         14    lc2(s1)
 3    b0               9    rc2(s0)         15    rc2(s1)
 4    b1              10    lc1(lc1(s0))    16    lc1(lc1(s1))
 5    b2              11    rc1(rc1(s0))    17    rc1(rc1(s1))
====  ==============  ====  ==============  ====  ==============

Label feature ``j`` (0..11) is the arc label of token slot ``6 + j``. ``lc1``/``lc2`` are the
leftmost/second leftmost left children and ``rc1``/``rc2`` the rightmost/second rightmost right
children. A slot with no token gets the NULL id of its type; ROOT (position 0) gets
``word_ids[0]``/``tag_ids[0]``, which the caller sets to its ROOT ids. ROOT is never a child, so
it never has a label.
"""

from __future__ import annotations

from typing import Sequence

from tagger.transitions.arc_standard import State

TOKEN_SLOTS = (
    "s0", "s1", "s2", "b0", "b1", "b2",
    "lc1(s0)", "rc1(s0)", "lc2(s0)", "rc2(s0)", "lc1(lc1(s0))", "rc1(rc1(s0))",
    "lc1(s1)", "rc1(s1)", "lc2(s1)", "rc2(s1)", "lc1(lc1(s1))", "rc1(rc1(s1))",
)  # fmt: skip
N_WORD_FEATURES = N_TAG_FEATURES = len(TOKEN_SLOTS)  # 18
N_LABEL_FEATURES = 12
N_FEATURES = N_WORD_FEATURES + N_TAG_FEATURES + N_LABEL_FEATURES  # 48
#: Names of the 48 features in the order ``words + tags + labels``.
FEATURE_NAMES = (
    tuple(f"{slot}.w" for slot in TOKEN_SLOTS)
    + tuple(f"{slot}.t" for slot in TOKEN_SLOTS)
    + tuple(f"{slot}.l" for slot in TOKEN_SLOTS[6:])
)


def token_slots(state: State) -> list[int]:
    """The positions in the 18 token slots (see the module docstring), -1 where empty."""
    stack = state.stack
    depth = len(stack)
    s0 = stack[-1]
    s1 = stack[-2] if depth > 1 else -1
    s2 = stack[-3] if depth > 2 else -1
    i, n = state.i, state.n
    lc1, lc2, rc1, rc2 = state.lc1, state.lc2, state.rc1, state.rc2
    # Index -1 is the always -1 sentinel slot of the child arrays, so chains need no checks.
    l0, r0, l1, r1 = lc1[s0], rc1[s0], lc1[s1], rc1[s1]
    return [
        s0, s1, s2,
        i if i <= n else -1, i + 1 if i < n else -1, i + 2 if i + 1 < n else -1,
        l0, r0, lc2[s0], rc2[s0], lc1[l0], rc1[r0],
        l1, r1, lc2[s1], rc2[s1], lc1[l1], rc1[r1],
    ]  # fmt: skip


def extract(
    state: State,
    word_ids: Sequence[int],
    tag_ids: Sequence[int],
    *,
    null_word: int,
    null_tag: int,
    null_label: int,
    label_offset: int = 0,
) -> tuple[list[int], list[int], list[int]]:
    """``(words18, tags18, labels12)`` ids for ``state``, in the slot order of the module doc.

    ``word_ids``/``tag_ids`` are per position (index 0 = ROOT, then words 1..n), already
    numbered by the caller. A label feature is ``state.labels[p] + label_offset`` (transition
    label index shifted into the caller's label-embedding numbering) or ``null_label``.
    """
    slots = token_slots(state)
    words = [word_ids[p] if p >= 0 else null_word for p in slots]
    tags = [tag_ids[p] if p >= 0 else null_tag for p in slots]
    labels = state.labels
    labs = [labels[p] + label_offset if p >= 0 else null_label for p in slots[6:]]
    return words, tags, labs
