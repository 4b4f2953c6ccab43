"""NLTK-style PTB ``.pos`` files: ``word/TAG`` tokens, ``[ ... ]`` base-NP brackets, blank lines
and ``======`` separators, e.g.::

    [ Pierre/NNP Vinken/NNP ]
    ,/,
    [ 61/CD years/NNS ]
    old/JJ ,/, will/MD join/VB

In these files a blank line does not always end a sentence (and a sentence's closing ``''``
often follows it on a line of its own), so sentences are found this way: a ``======`` line
always ends one; otherwise a new sentence starts on a line that follows a blank line (or a line
holding only closing quotes/brackets) when the text so far ends with a ``.``-tagged token,
possibly followed by closing quotes/brackets. On the NLTK WSJ sample this reproduces 95% of the
treebank's sentences exactly; the rest differ in the source files themselves (the tagged files
predate the treebank's final segmentation and tokenisation).
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, TextIO

from tagger.corpus.records import Sentence
from tagger.formats.base import Source, iter_lines, source_name
from tagger.corpus.spaces import split_tokens
from tagger.formats.ptb import check_words, join_token, parse_tokens, tag_column

NAME = "pos"
EXTENSIONS = (".pos",)

SEPARATOR = "=" * 38
_SEPARATOR = re.compile(r"={6,}")
#: Tokens that may follow a sentence's final punctuation.
CLOSING = frozenset({"''", "'", ")", "}", "]", "-RRB-", "-RCB-", "-RSB-"})


def _ends_sentence(pairs: list[tuple[str, str]]) -> bool:
    i = len(pairs) - 1
    while i >= 0 and pairs[i][0] in CLOSING:
        i -= 1
    return i >= 0 and pairs[i][1] == "."


def read(source: Source, *, column: str = "xpos") -> Iterator[Sentence]:
    """Yield the sentences of an NLTK ``.pos`` file; tags go to ``column``."""
    name = source_name(source)
    current: list[tuple[str, str]] = []
    start = 0
    after_break = False  # a blank line, or a line of closing tokens only, came since the last token

    def sentence() -> Sentence:
        return Sentence([w for w, _ in current], {column: [t for _, t in current]}, source=name, line=start)

    for number, text in iter_lines(source, name):
        stripped = text.strip()
        if _SEPARATOR.fullmatch(stripped):
            if current:
                yield sentence()
            current, after_break = [], False
            continue
        if not stripped:
            after_break = True
            continue
        pairs = parse_tokens(" ".join(t for t in split_tokens(stripped) if t not in ("[", "]")), name, number)
        if not pairs:
            continue
        if current and after_break and pairs[0][0] not in CLOSING and _ends_sentence(current):
            yield sentence()
            current = []
        if not current:
            start = number
        current.extend(pairs)
        after_break = all(word in CLOSING for word, _ in pairs)
    if current:
        yield sentence()


def write(sentences: Iterable[Sentence], stream: TextIO, *, column: str | None = None) -> None:
    """Write each sentence as one line of ``word/TAG`` tokens between ``======`` separators
    (no ``[ ]`` chunks), which :func:`read` splits back exactly."""
    for sentence in sentences:
        check_words(sentence, NAME)
        tags = tag_column(sentence, column)
        tokens = " ".join(join_token(w, t) for w, t in zip(sentence.words, tags))
        stream.write(f"{SEPARATOR}\n\n{tokens}\n\n")
