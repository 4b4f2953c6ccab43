"""CoNLL-U (Universal Dependencies) and CoNLL-X: ten tab-separated columns per word.

IDs and HEADs are parsed with the ``conllu`` package's value parsers; the line structure is
checked here so that every problem is reported as ``file:line``. Multiword-token ranges
(``3-4``) and empty nodes (``5.1``) are not words (they are left out of ``Sentence.words``) but
stay in ``Sentence.raw``, so that :func:`write` reproduces every line it did not change byte
for byte.

``raw`` is ``{"format": "conllu" | "conllx", "lines": [the block's lines, comments included]}``.
"""

from __future__ import annotations

import operator
import re
from typing import Iterable, Iterator, Sequence, TextIO


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

#: Sentences up to this many words are read on the fast path (see :func:`_plain`); longer
#: ones, line by line.
PLAIN_WORDS = 1024
#: The IDs ``"1"``, ``"2"``, ... of a plain sentence's words.
_IDS = [str(i) for i in range(1, PLAIN_WORDS + 1)]
#: HEAD text -> value, for ``_`` and the numbers up to :data:`PLAIN_WORDS` without leading zeros.
_HEADS = {"_": -1, **{str(i): i for i in range(PLAIN_WORDS + 1)}}


def read(source: Source, *, dialect: str = "conllu", on_error: OnError | None = None) -> Iterator[Sentence]:
    """Yield the sentences of a CoNLL-U (or, with ``dialect="conllx"``, CoNLL-X) file; with
    ``on_error``, malformed sentences are reported to it and skipped."""
    fields = FIELDS[dialect]
    name = source_name(source)
    lines = iter_lines(source, name, lenient=on_error is not None)
    yield from each_sentence(blocks(lines), lambda block: _sentence(block, name, dialect, fields), on_error)


def _sentence(block: list[tuple[int, str]], name: str, dialect: str, fields: dict) -> Sentence:
    """The sentence of one block of numbered lines: its word lines' fields, ten per word in one
    flat list, are sliced into the columns."""
    lines = [text for _, text in block]
    plain = _plain([text for text in lines if not text.startswith("#")])
    values, heads = plain if plain is not None else _checked(block, name)
    columns = {column: heads if column == "head" else values[index::10] for column, index in fields.items()}
    return Sentence(values[1::10], columns, source=name, line=block[0][0], raw={"format": dialect, "lines": lines})


def _plain(lines: list[str]) -> tuple[list[str], list[int]] | None:
    """The fields of a block's non-comment ``lines`` (ten per line, one flat list) and the HEADs,
    if the block is a plain sentence: 1 to :data:`PLAIN_WORDS` word lines of ten non-empty
    fields, whose IDs are ``1``, ``2``, ... and whose HEADs are ``_`` or a number from 0 to the
    word count, written without leading zeros, other than the word's own ID.

    Else None, and :func:`_checked` reads the block line by line: multiword ranges, empty nodes,
    IDs and HEADs written otherwise, and every error. What is read here is exactly what that
    reading gives; this is only the common case without a call per line.
    """
    n = len(lines)
    if not 0 < n <= PLAIN_WORDS or [line.count("\t") for line in lines].count(9) != n:
        return None
    values = "\t".join(lines).split("\t")
    if "" in values:
        return None
    if values[::10] != _IDS[:n]:  # multiword ranges or empty nodes, or an error
        lasts = _without_ranges(values)
        n = len(values) // 10
        if lasts is None or n == 0 or values[::10] != _IDS[:n] or max(lasts, default=0) > n:
            return None
    heads = [_HEADS.get(value) for value in values[6::10]]
    if None in heads or max(heads) > n or any(map(operator.eq, heads, range(1, n + 1))):
        return None
    return values, heads


def conll_id(value: str) -> int | tuple | None:
    """A CoNLL-U ID parsed as conllu parses it (``5``, ``(3, "-", 4)``, ``(5, ".", 1)``), None
    where it is not one. conllu is imported on first use: a run that reads no CoNLL (raw text
    through a tokenizer alone) starts without it."""
    from conllu.exceptions import ParseException
    from conllu.parser import parse_id_value

    try:
        return parse_id_value(value)
    except ParseException:
        return None


def _without_ranges(values: list[str]) -> list[int] | None:
    """Take the fields of multiword-range and empty-node lines out of ``values`` (ten fields per
    line) and give the last word of each range, if each such line is where :func:`_checked`
    wants it; else None. The words' IDs are left for the caller to check."""
    words, lasts, ranges = 0, [], []
    for i, value in enumerate(values[::10]):
        if value.isdigit():
            words += 1
            continue
        wid = conll_id(value)
        if not isinstance(wid, tuple):
            return None
        first, kind, last = wid
        if first != (words + 1 if kind == "-" else words):
            return None
        if kind == "-":
            if last <= first or (lasts and first <= lasts[-1]):  # one word, or inside the range before
                return None
            lasts.append(last)
        ranges.append(i)
    for i in reversed(ranges):
        del values[10 * i : 10 * i + 10]
    return lasts


def _check_range(text: str, first: int, last: int, ranges: list[tuple[int, int]], name: str, number: int) -> None:
    """A :class:`TaggerError` at ``name:number`` if the multiword range ``text`` (words ``first``
    to ``last``) is not one the CoNLL-U validator accepts: it covers one word only, or words of
    the range before it (``ranges``: (line, last word) of each, in order). Words beyond the
    sentence are checked once its length is known."""
    if last <= first:
        raise TaggerError(f"multiword range {text} covers one word (a range covers at least 2)", name, number)
    if ranges and first <= ranges[-1][1]:
        line, end = ranges[-1]
        raise TaggerError(f"multiword range {text} overlaps the range ending at word {end} (line {line}): "
                          f"word {first} is in both", name, number)


def _checked(block: list[tuple[int, str]], name: str) -> tuple[list[str], list[int]]:
    """The fields of the block's word lines (ten per word, one flat list) and their HEADs, checking
    each line and reporting the first problem as ``name:line``; multiword ranges and empty nodes
    are checked and left out."""
    values: list[str] = []
    heads: list[tuple[int, int]] = []  # (line, head) of each word, checked once n is known
    ranges: list[tuple[int, int]] = []  # (line, last word) of each multiword range
    for number, text in block:
        if text.startswith("#"):
            continue
        fields = text.split("\t")
        if len(fields) != 10:
            raise TaggerError(f"expected 10 tab-separated columns, found {len(fields)}", name, number)
        if "" in fields:
            raise TaggerError(f"column {fields.index('') + 1} is empty (use '_')", name, number)
        if fields[0].isdecimal():  # the common case, without the general parser
            wid = int(fields[0])
        else:
            wid = conll_id(fields[0])
        if wid is None:
            raise TaggerError(f"bad ID '{fields[0]}'", name, number)
        expected = len(heads) + 1
        if isinstance(wid, tuple):  # (3, "-", 4) or (5, ".", 1)
            first, kind, last = wid
            if kind == "-" and first != expected:
                raise TaggerError(f"multiword range {fields[0]} should start at word {expected}", name, number)
            if kind == "." and first != expected - 1:
                raise TaggerError(f"empty node {fields[0]} should follow word {expected - 1}", name, number)
            if kind == "-":
                _check_range(fields[0], first, last, ranges, name, number)
                ranges.append((number, last))
            continue
        if wid != expected:
            raise TaggerError(f"word ID {wid} out of order, expected {expected}", name, number)
        values.extend(fields)
        heads.append((number, parse_head(fields[6], name, number)))
    n = len(heads)
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
    return values, [head for _, head in heads]


def write(sentences: Iterable[Sentence], stream: TextIO, *, dialect: str = "conllu",
          columns: Sequence[str] | None = None) -> None:
    """Write ``sentences`` as CoNLL-U (or CoNLL-X), one blank line after each.

    A sentence read from the same dialect keeps its comments, multiword ranges, empty nodes and
    every column this toolkit does not model (one read from the other is written fresh: CoNLL-X
    has no comments, ranges, empty nodes, DEPS or MISC); only FORM and the columns in ``Sentence.columns``
    are written from the record. With ``columns``, only FORM and those of the record's columns
    that are named there are: the others stay as they are in the sentence's lines, unformatted
    (what ``tagger tag`` wants: the model changed its output columns, nothing else). Other
    sentences are written fresh, ``_`` for what is missing, from every column of the record.
    """
    fields = FIELDS[dialect]
    chosen = fields if columns is None else {column: index for column, index in fields.items() if column in columns}
    for sentence in sentences:
        raw = sentence.raw if isinstance(sentence.raw, dict) else {}
        lines = raw.get("lines") if raw.get("format") == dialect else None  # CoNLL-U lines are no CoNLL-X ones
        text = _rewrite(sentence, lines, chosen) if lines is not None else None
        if text is None:
            text = _fresh(sentence, fields)
        stream.write(text + "\n\n")


def _texts(sentence: Sentence, column: str, count: int) -> list[str]:
    """The first ``count`` values of a column as written: ``_`` for a missing one (None, a
    negative HEAD, an empty string); an IndexError if the column is shorter."""
    values = sentence.columns[column]
    if len(values) < count:
        raise IndexError(f"column '{column}' has {len(values)} values for {count} words")
    values = values[:count]
    if column == "head":
        return ["_" if value is None or value < 0 else str(value) for value in values]
    return ["_" if value is None or value == "" else str(value) for value in values]


def _rewrite(sentence: Sentence, lines: list[str], fields: dict) -> str | None:
    """``lines`` with FORM and the ``fields`` columns of each word line (a line whose ID is a
    number) taken from ``sentence``, joined; None if the lines do not hold as many words as the
    sentence. Lines are split only as far as the last field written. A :class:`TaggerError`
    naming the sentence where a line but a comment is not one line of ten fields, or a value
    holds a tab or a line break (:func:`_unbroken`), rather than words written on the wrong lines."""
    pieces = max(fields.values(), default=1) + 1
    rows = [line.split("\t", pieces) for line in lines]
    numbered = [i for i, row in enumerate(rows) if row[0].isdigit()]
    if len(numbered) != len(sentence.words):
        return None
    _unbroken(sentence, "FORM", sentence.words)
    for number, line in enumerate(lines, 1):  # (a comment may hold a tab, and is left as it is but for "\n")
        if "\n" in line or (not line.startswith("#") and (line.count("\t") != 9 or "\r" in line)):
            raise _unwritable(sentence, f"its line {number} {line!r} is not one line of ten tab-separated fields")
    words = [rows[i] for i in numbered]
    for row, word in zip(words, sentence.words):
        row[1] = word
    for column, index in fields.items():
        if column in sentence.columns:
            texts = _texts(sentence, column, len(words))
            _unbroken(sentence, column.upper(), texts)
            for row, text in zip(words, texts):
                row[index] = text
    return "\n".join(["\t".join(row) for row in rows])


def _fresh(sentence: Sentence, fields: dict) -> str:
    """Ten fields per word: ID, FORM and the ``fields`` columns of ``sentence``, ``_`` elsewhere
    (a :class:`TaggerError` where a value holds a tab or a line break: :func:`_unbroken`)."""
    n = len(sentence.words)
    _unbroken(sentence, "FORM", sentence.words)
    rows = [[str(i), word] + ["_"] * 8 for i, word in enumerate(sentence.words, 1)]
    for column, index in fields.items():
        if column in sentence.columns:
            texts = _texts(sentence, column, n)
            _unbroken(sentence, column.upper(), texts)
            for row, text in zip(rows, texts):
                row[index] = text
    return "\n".join(["\t".join(row) for row in rows])


#: What a field of CoNLL cannot hold: the field separator and line breaks.
_BREAKS = re.compile("[\t\n\r]")


def _unbroken(sentence: Sentence, what: str, values: Sequence[str]) -> None:
    """A :class:`TaggerError` naming the sentence (:func:`_unwritable`) where one of ``values``,
    the ``what`` field of each word, holds a tab or a line break (``\\n``, ``\\r``), which would
    cut its line into other fields or lines (one scan of the values joined when none does)."""
    if _BREAKS.search("".join(values)) is None:
        return
    index = next(i for i, value in enumerate(values) if _BREAKS.search(value))
    raise _unwritable(sentence, f"word {index + 1}'s {what} {values[index]!r} holds a tab or a line break, "
                                "which a CoNLL field cannot hold")


def _unwritable(sentence: Sentence, problem: str) -> TaggerError:
    """The one-line error for a sentence CoNLL cannot write: its file and line, its ``sent_id``
    where it has one, and ``problem``."""
    lines = sentence.raw.get("lines") if isinstance(sentence.raw, dict) else None
    sent_id = next((line.split("=", 1)[1].strip() for line in lines or () if line.startswith("# sent_id")
                    and "=" in line), None)
    which = f"sentence {sent_id}" if sent_id else "a sentence"
    return TaggerError(f"cannot write {which} as CoNLL: {problem}", sentence.source, sentence.line)
