"""Readers and writers, one module per format, all yielding and taking :class:`Sentence` records.

Every format module has ``NAME``, ``EXTENSIONS``, ``read(source, **options)`` and
``write(sentences, stream, **options)``. This package adds format detection and reading of
directories and lists of files::

    for sentence in formats.read("train.conllu"):          # format from the extension
        ...
    formats.read(sys.stdin)                                 # format from the first lines
    formats.read("wsj/combined", fmt="mrg")                 # every .mrg file, sorted by name
    formats.write(sentences, sys.stdout, "conllu")
"""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TextIO

from conllu.exceptions import ParseException
from conllu.parser import parse_id_value

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats import ccgbank, columns, conll, conllx, dp, mrg, pipe, pos, ptb, text
from tagger.formats.base import OnError, Source, peek, source_name

#: Format name -> module.
FORMATS = {m.NAME: m for m in (conll, conllx, ptb, pos, mrg, dp, ccgbank, pipe, text, columns)}

#: File extension -> format name. ``.txt`` says little (plain or tagged text, ...): it is sniffed.
BY_EXTENSION = {ext: m.NAME for m in FORMATS.values() for ext in m.EXTENSIONS if ext != ".txt"}

_SEPARATOR = re.compile(r"={6,}")


def detect_format(path: str | os.PathLike | None, sample_text: str) -> str:
    """The format of a file: by its extension when that is known, else by ``sample_text`` (its
    first lines): ``ID=`` lines -> auto; 10 tab columns with a CoNLL ID -> conllu; 3-4 tab
    columns with an integer third -> dp; other tab columns -> columns; a leading ``(`` -> mrg;
    ``======`` or ``[ ]`` chunks -> pos; ``w|P|S`` tokens -> pipe; ``w/TAG`` tokens -> tagged;
    anything else -> text."""
    if path is not None:
        suffix = Path(path).suffix.lower()
        if suffix in BY_EXTENSION:
            return BY_EXTENSION[suffix]
    return _sniff([line for line in sample_text.splitlines() if line.strip()][:20])


def _is_conll_id(value: str) -> bool:
    try:
        return parse_id_value(value) is not None
    except ParseException:
        return False


def _sniff(lines: list[str]) -> str:
    if not lines:
        return "text"
    first = lines[0].strip()
    if first.startswith("ID=") or first.startswith("(<"):
        return "auto"
    body = [line for line in lines if not line.startswith("#")] or lines
    rows = [line.split("\t") for line in body]
    if all(len(r) == 10 and _is_conll_id(r[0]) for r in rows):
        return "conllu"
    if all(len(r) in (3, 4) and (r[2].isdigit() or r[2] == "_") for r in rows):
        return "dp"
    if all(len(r) > 1 for r in rows):
        return "columns"
    if first.startswith("("):
        return "mrg"
    tokens = [token for line in body for token in line.split() if not _SEPARATOR.fullmatch(token)]
    tagged = all(t in ("[", "]") or ptb.split_token(t) for t in tokens)
    if tagged and ("[" in tokens or any(_SEPARATOR.fullmatch(line.strip()) for line in lines)):
        return "pos"
    if all(pipe.split_token(t) for t in tokens):
        return "pipe"
    if tagged:
        return "tagged"
    return "text"


def _module(fmt: str):
    if fmt not in FORMATS:
        raise TaggerError(f"unknown format '{fmt}' (known: {', '.join(sorted(FORMATS))})")
    return FORMATS[fmt]


def _call(function: Callable, fmt: str, args: tuple, options: dict) -> Any:
    """Call a reader/writer, turning options it does not take into a :class:`TaggerError`."""
    accepted = inspect.signature(function).parameters
    for option in options:
        if option not in accepted or accepted[option].kind != inspect.Parameter.KEYWORD_ONLY:
            raise TaggerError(f"the '{fmt}' format has no option '{option}'")
    return function(*args, **options)


def _files(folder: Path, fmt: str) -> list[tuple[Path, str]]:
    """The files of ``folder`` to read, sorted by name, with their formats: those with the
    format's extensions (with ``auto``: any known extension, all of one format), or, if there are
    none, its ``.txt`` files."""
    try:
        paths = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    except OSError as e:
        raise TaggerError(f"cannot list directory: {e.strerror}", str(folder)) from None
    if fmt != "auto":
        extensions = _module(fmt).EXTENSIONS
        chosen = [p for p in paths if p.suffix.lower() in extensions]
        chosen = chosen or [p for p in paths if p.suffix.lower() == ".txt"]
        if not chosen:
            raise TaggerError(f"no {'/'.join(extensions)} files in directory", str(folder))
        return [(p, fmt) for p in chosen]
    found = [(p, BY_EXTENSION[p.suffix.lower()]) for p in paths if p.suffix.lower() in BY_EXTENSION]
    if not found:  # only then are .txt files data rather than a README or LICENSE
        found = [(p, detect_format(None, "\n".join(peek(p)[0]))) for p in paths if p.suffix.lower() == ".txt"]
    kinds = sorted({f for _, f in found})
    if not kinds:
        raise TaggerError("no files of a known format in directory", str(folder))
    if len(kinds) > 1:
        raise TaggerError(f"directory holds files of several formats ({', '.join(kinds)}); choose one",
                          str(folder))
    return found


def _inputs(source: Source | Iterable, fmt: str) -> Iterator[tuple[Source, str]]:
    """Expand ``source`` into ``(file or stream, format)`` pairs."""
    if isinstance(source, (list, tuple)):
        for item in source:
            yield from _inputs(item, fmt)
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            yield from _files(path, fmt)
        elif fmt != "auto":
            yield source, fmt
        elif path.suffix.lower() in BY_EXTENSION:
            yield source, BY_EXTENSION[path.suffix.lower()]
        else:
            yield source, detect_format(None, "\n".join(peek(source)[0]))
    elif fmt != "auto":
        yield source, fmt
    else:
        name = getattr(source, "name", None)
        lines, replay = peek(source)
        yield replay, detect_format(name if isinstance(name, str) else None, "\n".join(lines))


def read(source: Source | Iterable, fmt: str = "auto", *, on_error: OnError | None = None,
         **options: Any) -> Iterator[Sentence]:
    """Yield the sentences of a file, a stream, a directory (every file of the format inside,
    sorted by name) or a list of these. ``fmt="auto"`` detects each file's format (see
    :func:`detect_format`); ``options`` go to the format's reader (e.g. ``columns=`` for
    ``columns``). Input without any sentence is a :class:`TaggerError`.

    ``on_error(error, first_line, last_line)``: the readers of one-sentence blocks or lines
    (conllu, conllx, columns, dp, text, tagged, pipe) then report a malformed sentence to it and
    go on with the next; the others (mrg, pos, auto) still stop at the first error."""
    if fmt != "auto":
        _module(fmt)
    count = skipped = 0

    def skip(error: TaggerError, first: int, last: int) -> None:
        nonlocal skipped
        skipped += 1
        on_error(error, first, last)

    for item, kind in _inputs(source, fmt):
        reader = _module(kind).read
        extra = {"on_error": skip} if on_error is not None and "on_error" in inspect.signature(reader).parameters else {}
        for sentence in _call(reader, kind, (item,), {**options, **extra}):
            count += 1
            yield sentence
    if count == 0 and skipped == 0:
        where = source_name(source) if not isinstance(source, (list, tuple)) else None
        raise TaggerError("empty file: no sentences" if where else "empty input: no sentences", where)


def write(sentences: Iterable[Sentence], stream: TextIO, fmt: str, **options: Any) -> None:
    """Write ``sentences`` to the text ``stream`` in format ``fmt`` (options go to its writer)."""
    _call(_module(fmt).write, fmt, (sentences, stream), options)


__all__ = ["FORMATS", "BY_EXTENSION", "detect_format", "read", "write", "Sentence"]
