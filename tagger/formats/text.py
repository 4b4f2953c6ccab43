"""Plain text: one sentence per line, tokens separated by whitespace; blank lines are skipped."""

from __future__ import annotations

from typing import Iterable, Iterator, TextIO

from tagger.corpus.records import Sentence
from tagger.formats.base import Source, iter_lines, source_name

NAME = "text"
EXTENSIONS = (".txt",)


def read(source: Source) -> Iterator[Sentence]:
    """Yield one sentence (words only) per non-blank line."""
    name = source_name(source)
    for number, text in iter_lines(source, name):
        words = text.split()
        if words:
            yield Sentence(words, {}, source=name, line=number)


def write(sentences: Iterable[Sentence], stream: TextIO) -> None:
    """Write each sentence's words on one line, separated by single spaces."""
    for sentence in sentences:
        stream.write(" ".join(sentence.words) + "\n")
