"""CoNLL-U (Universal Dependencies) and CoNLL-X: ten tab-separated columns per word.

IDs and HEADs are parsed with the ``conllu`` package's value parsers; the line structure is
checked here so that every problem is reported as ``file:line``. Multiword-token ranges
(``3-4``) and empty nodes (``5.1``) are not words (they are left out of ``Sentence.words``) but
stay in ``Sentence.raw``, so that :func:`write` reproduces every line it did not change byte
for byte.

``raw`` is ``{"format": "conllu" | "conllx", "lines": [the block's lines, comments included]}``.
"""

from __future__ import annotations

from typing import Iterable, Iterator, TextIO

from conllu.exceptions import ParseException
from conllu.parser import parse_id_value

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats.base import OnError, Source, blocks, each_sentence, iter_lines, parse_head, source_name

NAME = "conllu"
EXTENSIONS = (".conllu",)

#: Column name -> 0-based field index, per dialect. FORM (1) is ``Sentence.words``.
FIELDS = {
    "conllu": {"lemma": 2, "upos": 3, "xpos": 4, "feats": 5, "head": 6, "deprel": 7, "misc": 9},
    "conllx": {"lemma": 2, "upos": 3, "xpos": 4, "feats": 5, "head": 6, "deprel": 7},
}


def read(source: Source, *, dialect: str = "conllu", on_error: OnError | None = None) -> Iterator[Sentence]:
    """Yield the sentences of a CoNLL-U (or, with ``dialect="conllx"``, CoNLL-X) file; with
    ``on_error``, malformed sentences are reported to it and skipped."""
    fields = FIELDS[dialect]
    name = source_name(source)
    lines = iter_lines(source, name, lenient=on_error is not None)
    yield from each_sentence(blocks(lines), lambda block: _sentence(block, name, dialect, fields), on_error)


def _sentence(block: list[tuple[int, str]], name: str, dialect: str, fields: dict) -> Sentence:
    words: list[str] = []
    columns: dict[str, list] = {column: [] for column in fields}
    heads: list[tuple[int, int]] = []  # (line, head) of each word, checked once n is known
    ranges: list[tuple[int, int]] = []  # (line, last word) of each multiword range
    for number, text in block:
        if text.startswith("#"):
            continue
        values = text.split("\t")
        if len(values) != 10:
            raise TaggerError(f"expected 10 tab-separated columns, found {len(values)}", name, number)
        if "" in values:
            raise TaggerError(f"column {values.index('') + 1} is empty (use '_')", name, number)
        if values[0].isdigit():  # the common case, without the general parser
            wid = int(values[0])
        else:
            try:
                wid = parse_id_value(values[0])
            except ParseException:
                wid = None
        if wid is None:
            raise TaggerError(f"bad ID '{values[0]}'", name, number)
        expected = len(words) + 1
        if isinstance(wid, tuple):  # (3, "-", 4) or (5, ".", 1)
            first, kind, last = wid
            if kind == "-" and first != expected:
                raise TaggerError(f"multiword range {values[0]} should start at word {expected}", name, number)
            if kind == "." and first != expected - 1:
                raise TaggerError(f"empty node {values[0]} should follow word {expected - 1}", name, number)
            if kind == "-":
                ranges.append((number, last))
            continue
        if wid != expected:
            raise TaggerError(f"word ID {wid} out of order, expected {expected}", name, number)
        head = parse_head(values[6], name, number)
        words.append(values[1])
        for column, index in fields.items():
            columns[column].append(head if column == "head" else values[index])
        heads.append((number, head))
    n = len(words)
    if n == 0:
        raise TaggerError("sentence has no words (only comments or ranges)", name, block[0][0])
    for number, last in ranges:
        if last > n:
            raise TaggerError(f"multiword range ends at word {last}, sentence has {n}", name, number)
    for wid, (number, head) in enumerate(heads, 1):
        if head > n:
            raise TaggerError(f"HEAD {head} out of range 0..{n}", name, number)
        if head == wid:
            raise TaggerError(f"word {wid} is its own HEAD", name, number)
    lines = [text for _, text in block]
    return Sentence(words, columns, source=name, line=block[0][0], raw={"format": dialect, "lines": lines})



def write(sentences: Iterable[Sentence], stream: TextIO, *, dialect: str = "conllu") -> None:
    """Write ``sentences`` as CoNLL-U (or CoNLL-X), one blank line after each.

    A sentence read from CoNLL keeps its comments, multiword ranges, empty nodes and every
    column this toolkit does not model; only FORM and the columns in ``Sentence.columns``
    are written from the record. Other sentences are written fresh, ``_`` for what is missing.
    """
    fields = FIELDS[dialect]
    for sentence in sentences:
        raw = sentence.raw if isinstance(sentence.raw, dict) else {}
        lines = raw.get("lines") if raw.get("format") in FIELDS else None
        if lines is not None and _word_count(lines) == len(sentence.words):
            out = _rewrite(sentence, lines, fields)
        else:
            out = _fresh(sentence, fields)
        stream.write("\n".join(out))
        stream.write("\n\n")


def _is_word(values: list[str]) -> bool:
    return values[0].isdigit()


def _word_count(lines: list[str]) -> int:
    return sum(1 for line in lines if not line.startswith("#") and _is_word(line.split("\t", 1)))


def _value(sentence: Sentence, column: str, i: int) -> str:
    value = sentence.columns[column][i]
    if column == "head":
        return "_" if value is None or value < 0 else str(value)
    return "_" if value is None or value == "" else str(value)


def _rewrite(sentence: Sentence, lines: list[str], fields: dict) -> list[str]:
    out, i = [], 0
    for line in lines:
        values = line.split("\t")
        if line.startswith("#") or not _is_word(values) or len(values) != 10:
            out.append(line)
            continue
        values[1] = sentence.words[i]
        for column, index in fields.items():
            if column in sentence.columns:
                values[index] = _value(sentence, column, i)
        out.append("\t".join(values))
        i += 1
    return out


def _fresh(sentence: Sentence, fields: dict) -> list[str]:
    out = []
    for i, word in enumerate(sentence.words):
        values = [str(i + 1), word] + ["_"] * 8
        for column, index in fields.items():
            if column in sentence.columns:
                values[index] = _value(sentence, column, i)
        out.append("\t".join(values))
    return out
