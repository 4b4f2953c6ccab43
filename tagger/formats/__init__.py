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
import itertools
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, TextIO

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats import ccgbank, columns, conll, conllx, dp, mrg, pipe, pos, ptb, text, trees
from tagger.formats import columns as columns_format
from tagger.formats.base import OnError, Source, peek, source_name, window
from tagger.formats.supertags import supertags_from_conll

#: Format name -> module.
FORMATS = {m.NAME: m for m in (conll, conllx, ptb, pos, mrg, trees, dp, ccgbank, pipe, text, columns)}

#: Old names of formats, still taken where a format is written: ``auto`` was CCGbank AUTO's name
#: (where a format is read, ``auto`` means "detect the format").
OUTPUT_ALIASES = {"auto": "ccgbank"}

#: File extension -> format name. ``.txt`` says little (plain or tagged text, ...): it is sniffed.
BY_EXTENSION = {ext: m.NAME for m in FORMATS.values() for ext in m.EXTENSIONS if ext != ".txt"}

_SEPARATOR = re.compile(r"={6,}")


def detect_format(path: str | os.PathLike | None, sample_text: str) -> str:
    """The format of a file: by its extension when that is known, else by ``sample_text`` (its
    first lines, see :func:`guess_format`). ``.conll``, which both CoNLL dialects are written
    with, is CoNLL-U where its first lines show CoNLL-U (:func:`_conll_dialect`), else CoNLL-X."""
    return guess_format(path, sample_text)[0]


def guess_format(path: str | os.PathLike | None, sample_text: str) -> tuple[str, str | None]:
    """The format of a file (as :func:`detect_format`) and, where the guess is unsure, a note
    saying what was guessed and how to read the file otherwise (``None`` where it is sure).

    By content, looking past ``#`` comment lines at the first lines of :func:`base.window`:
    ``ID=`` lines -> ccgbank; 10 tab columns with a CoNLL ID (in most lines: a bad line is then
    the reader's to report) -> conllu; one token per line with 3-4 tab columns, an integer third,
    in blank-line separated blocks -> dp; the same with any consistent number of tab columns and
    no spaces -> columns (noted: which column is the word is a guess, unless a header comment
    names the layout, :func:`columns.header_layout`); a leading ``(`` -> trees
    where each line's brackets balance (one tree a line, as EVALB reads), else mrg, unless a
    word stands outside every bracket (then plain text, or what else the words say);
    ``======`` or ``[ ]`` chunks -> pos; ``w|P|S`` or ``w|P`` tokens -> pipe; ``w/TAG`` tokens -> tagged;
    anything else -> text (noted when its lines hold tabs: a column file that is not one token
    per line in blank-line separated blocks is read as text, and its words are all kept)."""
    return _guess(path, sample_text.splitlines())


def _guess(path: str | os.PathLike | None, lines: list[str]) -> tuple[str, str | None]:
    if path is not None:
        suffix = Path(path).suffix.lower()
        if suffix in conllx.SHARED_EXTENSIONS:
            return _conll_dialect(window(lines)), None
        if suffix in BY_EXTENSION:
            return BY_EXTENSION[suffix], None
    return _sniff(window(lines))


def _by_extension(path: str | os.PathLike | None) -> str | None:
    """The format ``path``'s extension names on its own (:data:`BY_EXTENSION`): None for none, and
    for an extension both CoNLL dialects are written with (``.conll``), whose lines decide."""
    if path is None:
        return None
    suffix = Path(path).suffix.lower()
    return None if suffix in conllx.SHARED_EXTENSIONS else BY_EXTENSION.get(suffix)


#: A CoNLL-U DEPS value (``4:nsubj``, ``0:root|8.1:obj``): CoNLL-X's PHEAD there is a number.
_DEPS = re.compile(r"\d+(?:\.\d+)?:[^|]+(?:\|\d+(?:\.\d+)?:[^|]+)*")
#: An item of a CoNLL-U MISC value (``SpaceAfter=No``): CoNLL-X's PDEPREL there is a label.
_MISC_ITEM = re.compile(r"[A-Za-z][\w.:\[\]-]*=")


def _conll_dialect(lines: list[str]) -> str:
    """The dialect of a ``.conll`` file (an extension written for both) by its first ``lines``:
    conllu where they show what only CoNLL-U has, a ``#`` comment line, a multiword-token range
    (``3-4``) or an empty node (``8.1``) as an ID, DEPS (``4:nsubj``) in column 9 or a MISC
    ``Name=Value`` (``SpaceAfter=No``) in column 10; else conllx (PHEAD and PDEPREL there)."""
    for line in lines:
        if line.startswith("#"):
            return "conllu"
        fields = line.rstrip("\r\n").split("\t")
        if len(fields) != 10:
            continue
        if isinstance(conll.conll_id(fields[0]), tuple) or _DEPS.fullmatch(fields[8]):
            return "conllu"
        if any(_MISC_ITEM.match(item) for item in fields[9].split("|")):
            return "conllu"
    return "conllx"


def _is_conll_id(value: str) -> bool:
    return conll.conll_id(value) is not None


def _sniff(lines: list[str]) -> tuple[str, str | None]:
    filled = [line for line in lines if line.strip()]
    if not filled:
        return "text", None
    first = filled[0].strip()
    if first.startswith("ID=") or first.startswith("(<"):
        return "ccgbank", None
    body = [line for line in filled if not line.startswith("#")] or filled
    tabular = _tabular(lines, body)
    if tabular is not None:
        return tabular
    layout = _tree_layout(body) if body[0].lstrip().startswith("(") else None  # (a comment line first: its trees)
    if layout is not None:
        return layout, None
    tokens = [token for line in body for token in line.split() if not _SEPARATOR.fullmatch(token)]
    tagged = all(t in ("[", "]") or ptb.split_token(t) for t in tokens)
    if tagged and ("[" in tokens or any(_SEPARATOR.fullmatch(line.strip()) for line in lines)):
        return "pos", None
    if all(pipe.split_token(t, 2) for t in tokens):  # word|POS|supertag or word|POS (the reader holds a file to one)
        return "pipe", None
    if tagged:
        return "tagged", None
    if any("\t" in line for line in body):
        return "text", ("read as plain text, one sentence per line (its lines hold tabs, but not one token per "
                        "line in blank-line separated blocks); for a column file give the input format: columns")
    return "text", None


def _tree_layout(lines: list[str]) -> str | None:
    """``trees`` if ``lines`` hold bracketed trees whose brackets balance on every line (one tree
    a line, as EVALB reads), ``mrg`` if they hold trees over several lines; None if a ``)``
    closes nothing or a word stands outside every bracket (plain text that starts with ``(``)."""
    depth, each_line = 0, True
    for line in lines:
        for char in line:
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth < 0:
                    return None
            elif depth == 0 and not char.isspace():
                return None
        each_line = each_line and depth == 0
    return "trees" if each_line else "mrg"


def _tabular(lines: list[str], body: list[str]) -> tuple[str, str | None] | None:
    """conllu, dp or columns if the non-comment lines ``body`` are rows of tab-separated fields
    (the CoNLL-2003 ``-DOCSTART-`` line aside); ``None`` if they are not."""
    data = [line for line in body if not line.startswith("-DOCSTART-")]
    rows = [line.split("\t") for line in data]
    if not rows or not all(len(r) > 1 for r in rows):
        return None
    conll = sum(len(r) == 10 and _is_conll_id(r[0]) for r in rows)
    if conll == len(rows) or conll > len(rows) / 2:
        return "conllu", None
    widths = {len(r) for r in rows}
    if any(" " in line for line in data) or not _in_blocks(lines):
        return None
    if widths <= {3, 4} and all(r[2].isdigit() or r[2] == "_" for r in rows):
        return "dp", None
    if len(widths) > 1:
        return None
    try:
        header = columns_format.header_layout(lines)
    except TaggerError:
        header = None  # the reader names the bad line
    if header is not None:
        layout, spec = header
        where = ", ".join(f"{name} in {number}" for name, number in layout.items() if name != "form")
        return "columns", (f"read as columns: the word in column {layout['form']}{', ' if where else ''}{where}, "
                           f"as its header says (--columns {spec})")
    return "columns", (f"read as columns: the word in column 1, a tag in column 2 (of {widths.pop()}); "
                       "--columns gives the layout, e.g. --columns form=2,upos=4")


def _in_blocks(lines: list[str]) -> bool:
    """Whether ``lines`` come in blocks of several lines, one blank line (at least) ending one."""
    run = longest = 0
    ended = False
    for line in lines:
        if line.strip():
            run += 1
            longest = max(longest, run)
        else:
            ended = ended or run > 0
            run = 0
    return ended and longest > 1


def sniff(source: Source, columns_given: bool = False) -> tuple[str, Source]:
    """The format of ``source`` (by its extension, else by its first lines: :func:`guess_format`)
    and a source to read instead (a stream's first lines are replayed). Where the guess is unsure
    a one-line ``note:`` on stderr says what was guessed (for columns, not when
    ``columns_given``: the caller has the layout)."""
    name = source if isinstance(source, (str, os.PathLike)) else getattr(source, "name", None)
    path = name if isinstance(name, (str, os.PathLike)) else None
    known = _by_extension(path)
    if known is not None:
        return known, source
    lines, replay = peek(source)
    written = _output_only(lines)
    if written is not None:
        raise TaggerError(f"this is {written}, which tagger writes but does not read: write conllu, pipe or tagged "
                          "(--output-format) to read it back, tag it again or score it", source_name(source))
    fmt, note = _guess(path, lines)  # the lines as they are: a blank last line ends a block
    if note is not None and not (fmt == "columns" and columns_given):
        print(f"note: {source_name(source)}: {note}", file=sys.stderr, flush=True)
    return fmt, replay


def _output_only(lines: list[str]) -> str | None:
    """What ``tagger tag`` output of a format no reader takes ``lines`` begin with, if they do:
    jsonl (``{"words": [...], ...}``) or msuper (``word TAB count TAB tag TAB p ...``)."""
    filled = [line.rstrip("\r\n") for line in lines if line.strip()][:20]
    if filled and all(line.startswith("{") and line.endswith("}") and '"words": [' in line for line in filled):
        return "tagger tag's jsonl output"
    rows = [line.split("\t") for line in filled]
    if rows and all(len(row) >= 4 and row[1].isdigit() and len(row) == 2 + 2 * int(row[1]) for row in rows):
        return "tagger tag's msuper output (several tags a word)"
    return None


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


def _files(folder: Path, fmt: str, columns_given: bool) -> list[tuple[Path, str]]:
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
    found = [(p, _by_extension(p) or sniff(p, columns_given)[0])  # (.conll: its lines say which CoNLL)
             for p in paths if p.suffix.lower() in BY_EXTENSION]
    if not found:  # only then are .txt files data rather than a README or LICENSE
        found = [(p, sniff(p, columns_given)[0]) for p in paths if p.suffix.lower() == ".txt"]
    kinds = sorted({f for _, f in found})
    if not kinds:
        subfolders = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
        hint = (f" (it holds folders: {', '.join(subfolders[:4])}{', ...' if len(subfolders) > 4 else ''}: give one, "
                "or the whole of a WSJ-sectioned corpus with --split wsj where the command takes it)") if subfolders else ""
        raise TaggerError(f"no files of a known format in directory{hint}", str(folder))
    if len(kinds) > 1:
        raise TaggerError(f"directory holds files of several formats ({', '.join(kinds)}); choose one",
                          str(folder))
    return found


def _inputs(source: Source | Iterable, fmt: str, columns_given: bool) -> Iterator[tuple[Source, str]]:
    """Expand ``source`` into ``(file or stream, format)`` pairs."""
    if isinstance(source, (list, tuple)):
        for item in source:
            yield from _inputs(item, fmt, columns_given)
    elif isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
        yield from _files(Path(source), fmt, columns_given)
    elif fmt != "auto":
        yield source, fmt
    else:
        kind, replay = sniff(source, columns_given)
        yield replay, kind


def read(source: Source | Iterable, fmt: str = "auto", *, on_error: OnError | None = None,
         columns: Mapping[str, int] | str | None = None, **options: Any) -> Iterator[Sentence]:
    """Yield the sentences of a file, a stream, a directory (every file of the format inside,
    sorted by name) or a list of these. ``fmt="auto"`` detects each file's format (see
    :func:`detect_format`); ``options`` go to the format's reader. Input without any sentence
    yields nothing: whether that is an error is the caller's to say (``tagger train`` refuses
    it; ``tag`` and ``convert`` write nothing).

    ``columns`` is the layout of the files read as ``columns`` (a ``--columns`` spec such as
    ``"form=2,tag=6"``, or its mapping; checked here, once, for every command): with ``auto``
    it goes to the files detected as columns and no other; a format named that is not
    ``columns`` has no such option.

    ``on_error(error, first_line, last_line)``: the readers of one-sentence blocks or lines
    (conllu, conllx, columns, dp, text, tagged, pipe) then report a malformed sentence to it and
    go on with the next; the others (mrg, pos, ccgbank) still stop at the first error."""
    if fmt != "auto":
        _module(fmt)
    layout = column_layout(columns)  # a bad spec or format is an error before anything is read
    if layout is not None and fmt not in ("auto", columns_format.NAME):
        raise TaggerError(f"the '{fmt}' format has no option 'columns'")
    return _read(source, fmt, on_error, layout, options)


def _read(source: Source | Iterable, fmt: str, on_error: OnError | None, layout: dict[str, int] | None,
          options: dict[str, Any]) -> Iterator[Sentence]:
    for item, kind in _inputs(source, fmt, layout is not None):
        reader = _module(kind).read
        extra = {"on_error": on_error} if on_error is not None and "on_error" in inspect.signature(reader).parameters else {}
        if layout is not None and kind == columns_format.NAME:
            extra["columns"] = layout
        elif kind == columns_format.NAME and fmt == columns_format.NAME:
            extra["guess"] = False  # named, not detected: its layout is given (or in its header), never guessed
        yield from _call(reader, kind, (item,), {**options, **extra})


def column_layout(spec: Mapping[str, int] | str | None) -> dict[str, int] | None:
    """The one reading of a ``--columns`` spec: ``"form=2,tag=6"`` (or a mapping) -> ``{"form": 2,
    "tag": 6}``, checked (a one-line :class:`TaggerError` if malformed); ``None`` for none."""
    if spec is None:
        return None
    return columns_format.parse_column_spec(spec) if isinstance(spec, str) else columns_format.check_columns(spec)


def read_corpus(path: Source | Iterable, fmt: str = "auto", columns: Mapping[str, int] | str | None = None, *,
                max_sentences: int | None = None, supertag_in: str = "misc") -> list[Sentence]:
    """The sentences of a corpus as :func:`read` gives them (``path``: a file, ``-`` for stdin, a
    folder or a list of files; ``columns``: the layout of column files), at most
    ``max_sentences``, empty ones left out, and with the CCG supertags that CoNLL files carry
    in MISC (``supertag=CAT``, as ``tagger convert`` writes them; or, with ``supertag_in="xpos"``,
    in XPOS, as ``tagger tag --supertag-in xpos`` does) brought out into the ``supertag``
    column. What ``tagger train`` and ``tagger evaluate`` read."""
    source = sys.stdin if isinstance(path, str) and path == "-" else path
    sentences: Iterable[Sentence] = read(source, fmt, columns=columns)
    if max_sentences:
        sentences = itertools.islice(sentences, max_sentences)
    return [supertags_from_conll(sentence, supertag_in, _dialect(sentence)) for sentence in sentences if len(sentence)]


def _dialect(sentence: Sentence) -> str:
    """``conllx`` for a sentence read from CoNLL-X (whose supertags in XPOS move its POS), else ``conllu``."""
    return "conllx" if isinstance(sentence.raw, dict) and sentence.raw.get("format") == "conllx" else "conllu"


def write(sentences: Iterable[Sentence], stream: TextIO, fmt: str, **options: Any) -> None:
    """Write ``sentences`` to the text ``stream`` in format ``fmt`` (options go to its writer;
    ``auto`` is taken for ``ccgbank``: :data:`OUTPUT_ALIASES`)."""
    fmt = OUTPUT_ALIASES.get(fmt, fmt)
    _call(_module(fmt).write, fmt, (sentences, stream), options)


__all__ = ["FORMATS", "BY_EXTENSION", "OUTPUT_ALIASES", "detect_format", "guess_format", "sniff", "read", "read_corpus",
           "column_layout", "write", "Sentence"]
