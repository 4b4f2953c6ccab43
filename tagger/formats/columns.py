"""Generic column files (like Flair's ``ColumnCorpus`` or CoNLL-2003): one token per line,
columns separated by tabs (or, on a line without tabs, by whitespace), a blank line after each
sentence. Lines starting with ``#`` are comments; ``-DOCSTART-`` lines (CoNLL-2003) are skipped.

Which column holds what is given by a spec mapping names to 1-based column numbers, e.g.
``{"form": 2, "tag": 6}`` (``parse_column_spec("form=2,tag=6")``). ``form`` is required and
gives the words; every other name becomes a column of that name, kept as given (``tag`` stays
``tag``); ``head`` is read as an integer (``_`` = unknown).

A file may name its own layout in a comment before its first token, as ``data/sample.tsv``
does: a ``#`` line holding ``--columns SPEC`` (``# form, UPOS, XPOS: read with --columns
form=1,upos=2,xpos=3``). Read without a layout given, that one is used; a layout given wins.
Without either, the layout is guessed (``form=1,tag=2``), or, with ``guess=False`` (a format
named ``columns``, not detected), the reading is refused in one line.
"""

from __future__ import annotations

import itertools
import re
from typing import Iterable, Iterator, Mapping, TextIO

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats.base import OnError, Source, blocks, each_sentence, iter_lines, parse_head, source_name

NAME = "columns"
EXTENSIONS = (".tsv", ".column", ".columns")

DEFAULT_COLUMNS = {"form": 1, "tag": 2}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
#: ``--columns SPEC`` (or ``--columns=SPEC``) in a header comment; quotes and brackets around it are not part of it.
_HEADER = re.compile(r"--columns(?:=|\s+)([^\s`'\"()]+)")

#: The refusal of a file read as ``columns`` without a layout (``guess=False``), as ``tagger convert`` words it.
NEEDS_LAYOUT = "reading the 'columns' format needs --columns, e.g. --columns form=2,xpos=5"


def parse_column_spec(spec: str) -> dict[str, int]:
    """``"form=2,tag=6"`` -> ``{"form": 2, "tag": 6}``; a :class:`TaggerError` if malformed."""
    columns: dict[str, int] = {}
    for item in spec.split(","):
        name, _, number = (part.strip() for part in item.partition("="))
        if not _NAME.fullmatch(name) or not (number.isascii() and number.isdigit()) or int(number) < 1:
            raise TaggerError(f"bad column spec '{spec}': '{item.strip()}' is not name=N (N = 1, 2, ...)")
        if name in columns:
            raise TaggerError(f"bad column spec '{spec}': '{name}' given twice")
        columns[name] = int(number)
    return check_columns(columns, spec)


def check_columns(columns: Mapping[str, int], spec: object = None) -> dict[str, int]:
    """Validate a name -> column mapping: ``form`` present, columns positive and distinct."""
    what = f"bad column spec '{spec if spec is not None else columns}'"
    if "form" not in columns:
        raise TaggerError(f"{what}: 'form' (the word column) is required")
    numbers = list(columns.values())
    if any(not isinstance(n, int) or n < 1 for n in numbers):
        raise TaggerError(f"{what}: column numbers start at 1")
    if len(set(numbers)) != len(numbers):
        raise TaggerError(f"{what}: two names share one column")
    return dict(columns)


def _spec(columns: Mapping[str, int] | str | None) -> dict[str, int]:
    if columns is None:
        return dict(DEFAULT_COLUMNS)
    if isinstance(columns, str):
        return parse_column_spec(columns)
    return check_columns(columns)


def header_layout(lines: Iterable[str], name: str | None = None,
                  numbers: Iterable[int] | None = None) -> tuple[dict[str, int], str] | None:
    """The layout a column file's header names, and its spec as written: the first ``#`` line
    before the first token that holds ``--columns SPEC`` (``None`` if there is none). A
    malformed spec there is a :class:`TaggerError` naming the line (``numbers``: the lines'
    numbers; by default 1, 2, ...)."""
    for number, text in zip(numbers if numbers is not None else itertools.count(1), lines):
        if not text.strip():
            continue
        if not text.startswith("#"):
            return None
        found = _HEADER.search(text)
        if found is not None:
            spec = found.group(1).rstrip(".,;:")
            try:
                return parse_column_spec(spec), spec
            except TaggerError as e:
                raise TaggerError(f"the header's --columns: {e.message}", name, number) from None
    return None


def _layout(chunks: Iterator[list[tuple[int, str]]], columns: Mapping[str, int] | str | None, guess: bool,
            name: str) -> tuple[list[list[tuple[int, str]]], dict[str, int]]:
    """The blocks up to the first one with a token (read ahead, to be read again) and the
    layout: ``columns`` if given, else the header's (:func:`header_layout`), else the guess
    ``form=1,tag=2`` or (without ``guess``) a :class:`TaggerError`."""
    head: list[list[tuple[int, str]]] = []
    first = None  # the first token's line
    for block in chunks:
        head.append(block)
        first = next((number for number, text in block if not text.startswith(("#", "-DOCSTART-"))), None)
        if first is not None:
            break
    if columns is not None:
        return head, _spec(columns)
    lines = [(number, text) for block in head for number, text in block if not text.startswith("-DOCSTART-")]
    found = header_layout([text for _, text in lines], name, [number for number, _ in lines])
    if found is not None:
        return head, found[0]
    if not guess and first is not None:
        raise TaggerError(f"{NEEDS_LAYOUT} (or a '# --columns SPEC' header line)", name, first)
    return head, dict(DEFAULT_COLUMNS)


def read(source: Source, *, columns: Mapping[str, int] | str | None = None,
         on_error: OnError | None = None, guess: bool = True) -> Iterator[Sentence]:
    """Yield the sentences of a column file; ``columns`` is a spec (mapping or ``"form=1,tag=2"``
    string), by default the one its header names, else (``guess``) ``form=1,tag=2``; without
    ``guess`` a file with neither is refused. With ``on_error``, malformed sentences are
    reported to it and skipped."""
    if columns is not None:
        _spec(columns)  # a bad spec is an error before anything is read
    name = source_name(source)
    chunks = blocks(iter_lines(source, name, lenient=on_error is not None))
    head, spec = _layout(chunks, columns, guess, name)
    needed = max(spec.values())

    def sentence(block: list[tuple[int, str]]) -> Sentence | None:
        rows = [(number, text) for number, text in block if not text.startswith(("#", "-DOCSTART-"))]
        if not rows:
            return None
        words: list[str] = []
        values: dict[str, list] = {column: [] for column in spec if column != "form"}
        for number, text in rows:
            fields = text.split("\t") if "\t" in text else text.split()
            if len(fields) < needed:
                raise TaggerError(f"line has {len(fields)} column{'s' * (len(fields) != 1)}, the column spec needs "
                                  f"{needed}", name, number)
            if not fields[spec["form"] - 1]:
                raise TaggerError(f"empty word in column {spec['form']}", name, number)
            words.append(fields[spec["form"] - 1])
            for column in values:
                value = fields[spec[column] - 1]
                values[column].append(parse_head(value, name, number) if column == "head" else value)
        return Sentence(words, values, source=name, line=block[0][0])

    yield from each_sentence(itertools.chain(head, chunks), sentence, on_error)



def write(sentences: Iterable[Sentence], stream: TextIO, *,
          columns: Mapping[str, int] | str | None = None) -> None:
    """Write the spec's columns at their positions (``_`` for missing values and unnamed columns)."""
    spec = _spec(columns)
    width = max(spec.values())
    for sentence in sentences:
        for i, word in enumerate(sentence.words):
            fields = ["_"] * width
            for column, number in spec.items():
                if column == "form":
                    fields[number - 1] = word
                elif column in sentence.columns:
                    value = sentence.columns[column][i]
                    missing = value is None or (column == "head" and value < 0)
                    fields[number - 1] = "_" if missing else str(value)
            stream.write("\t".join(fields) + "\n")
        stream.write("\n")
