"""What both tokenizer runtimes (:mod:`tagger.runtime.c_tokenizer`, :mod:`tagger.runtime.numpy_tokenizer`)
take from a tokenizer's config and vocabularies, numpy and torch not imported."""

from __future__ import annotations

from tagger.models.tokenizer.config import TokenizerConfig
from tagger.tokenization.joined import JOINED
from tagger.tokenization.labels import char_code, spaced_tokens
from tagger.tokenization.multiword import Expander


class Vocabulary:
    """What both runtimes take from a tokenizer's config and vocabularies: the windows
    (``segment`` characters labelled in the middle of ``window``, ``context`` each side), the
    characters' codes (:meth:`code`), and what turns labels into tokens (``expander``,
    ``spaced_tokens``, ``joined``); ``known``: the characters of its training text."""

    def __init__(self, config: TokenizerConfig, vocabs: dict[str, list[str]]):
        self.segment, self.context, self.window = config.segment, config.context, config.window
        self.scripts = config.scripts  # categories qualified by script (tagger.tokenization.labels.SCRIPTS)
        self.ids = {char: i for i, char in enumerate(vocabs["chars"])}
        self.unknown = self.ids["<unk>"]
        self.expander = Expander.from_vocabs(vocabs)
        self.spaced_tokens = spaced_tokens(vocabs)
        self.joined = frozenset(vocabs.get(JOINED, ()))
        self.known = frozenset(vocabs["chars"])  # the characters seen in training (unseen_share)

    def code(self, char: str) -> int:
        """A character's code, ``id × N_CATEGORIES + category``."""
        return char_code(char, self.ids, self.unknown, self.scripts)
