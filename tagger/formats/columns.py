"""Generic column files (like Flair's ``ColumnCorpus`` or CoNLL-2003): one token per line,
columns separated by tabs (or, on a line without tabs, by whitespace), a blank line after each
sentence. Lines starting with ``#`` are comments; ``-DOCSTART-`` lines (CoNLL-2003) are skipped.

Which column holds what is given by a spec mapping names to 1-based column numbers, e.g.
``{"form": 2, "tag": 6}`` (``parse_column_spec("form=2,tag=6")``). ``form`` is required and
gives the words; every other name becomes a column of that name, kept as given (``tag`` stays
``tag``); ``head`` is read as an integer (``_`` = unknown).
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, Mapping, TextIO

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats.base import OnError, Source, blocks, each_sentence, iter_lines, parse_head, source_name

NAME = "columns"
EXTENSIONS = (".tsv", ".column", ".columns")

DEFAULT_COLUMNS = {"form": 1, "tag": 2}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def parse_column_spec(spec: str) -> dict[str, int]:
    """``"form=2,tag=6"`` -> ``{"form": 2, "tag": 6}``; a :class:`TaggerError` if malformed."""
    columns: dict[str, int] = {}
    for item in spec.split(","):
        name, _, number = (part.strip() for part in item.partition("="))
        if not _NAME.fullmatch(name) or not number.isdigit() or int(number) < 1:
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


def read(source: Source, *, columns: Mapping[str, int] | str | None = None,
         on_error: OnError | None = None) -> Iterator[Sentence]:
    """Yield the sentences of a column file; ``columns`` is a spec (mapping or ``"form=1,tag=2"``
    string), by default ``form=1,tag=2``. With ``on_error``, malformed sentences are reported
    to it and skipped."""
    spec = _spec(columns)
    needed = max(spec.values())
    name = source_name(source)

    def sentence(block: list[tuple[int, str]]) -> Sentence | None:
        rows = [(number, text) for number, text in block if not text.startswith(("#", "-DOCSTART-"))]
        if not rows:
            return None
        words: list[str] = []
        values: dict[str, list] = {column: [] for column in spec if column != "form"}
        for number, text in rows:
            fields = text.split("\t") if "\t" in text else text.split()
            if len(fields) < needed:
                raise TaggerError(f"line has {len(fields)} columns, the column spec needs {needed}", name, number)
            if not fields[spec["form"] - 1]:
                raise TaggerError(f"empty word in column {spec['form']}", name, number)
            words.append(fields[spec["form"] - 1])
            for column in values:
                value = fields[spec[column] - 1]
                values[column].append(parse_head(value, name, number) if column == "head" else value)
        return Sentence(words, values, source=name, line=block[0][0])

    yield from each_sentence(blocks(iter_lines(source, name, lenient=on_error is not None)), sentence, on_error)



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
