"""Plain text: one sentence per line, tokens separated by whitespace (spaces or tabs); blank lines
are skipped."""

from __future__ import annotations

from typing import Iterable, Iterator, TextIO

from tagger.corpus.records import Sentence
from tagger.formats.base import OnError, Source, each_sentence, iter_lines, source_name

NAME = "text"
EXTENSIONS = (".txt",)


def read(source: Source, *, on_error: OnError | None = None) -> Iterator[Sentence]:
    """Yield one sentence (words only) per non-blank line; with ``on_error``, lines that are not
    valid UTF-8 are reported to it and skipped."""
    name = source_name(source)

    def sentence(item: tuple[int, str]) -> Sentence | None:
        words = item[1].split()
        return Sentence(words, {}, source=name, line=item[0]) if words else None

    yield from each_sentence(iter_lines(source, name, lenient=on_error is not None), sentence, on_error)


def write(sentences: Iterable[Sentence], stream: TextIO) -> None:
    """Write each sentence's words on one line, separated by single spaces."""
    for sentence in sentences:
        stream.write(" ".join(sentence.words) + "\n")
