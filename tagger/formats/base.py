"""What every format module shares: decoding input lines and naming where they came from."""

from __future__ import annotations

import errno
import io
import hashlib
import os
import stat
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, TextIO, TypeVar, Union

from tagger.errors import TaggerError

Source = Union[str, os.PathLike, BinaryIO, TextIO]

#: ``on_error(error, first_line, last_line)``: told about a malformed sentence that is skipped.
OnError = Callable[[TaggerError, int, int], None]
T = TypeVar("T")


def source_name(source: Source) -> str:
    """A printable name: the path, or ``<stdin>`` for a stream without one."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    name = getattr(source, "name", None)
    if isinstance(name, str) and not name.startswith("<"):
        return name
    return "<stdin>"


#: A stream with ``read1`` (a file, stdin's bytes, in-memory bytes) is decoded this many bytes
#: (or what is there without waiting for more), completed to a line end, at a time.
CHUNK = 1 << 20


def iter_lines(source: Source, name: str | None = None, lenient: bool = False) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line, 1-based, without the line ending.

    Decodes UTF-8 so that invalid bytes are reported as ``file:line``; a missing file or a
    directory is a :class:`TaggerError`. A leading BOM is dropped. With ``lenient`` an
    undecodable line does not end the reading: it comes as an :class:`Undecodable` text (for
    :func:`each_sentence` to skip the sentence holding it). Binary streams with ``read1`` are
    decoded a chunk at a time (:func:`_chunked_lines`); other iterables of lines (text streams,
    :class:`Replay`) line by line.
    """
    name = name or source_name(source)
    if isinstance(source, (str, os.PathLike)):
        try:
            stream: BinaryIO = open(source, "rb")
        except FileNotFoundError:
            raise TaggerError("no such file", name) from None
        except IsADirectoryError:
            raise TaggerError("is a directory, expected a file", name) from None
        except OSError as e:
            raise TaggerError(f"cannot read: {e.strerror}", name) from None
        close = True
    else:
        stream = getattr(source, "buffer", source)  # text stdin -> its bytes
        close = False
    try:
        if hasattr(stream, "read1"):
            yield from _chunked_lines(stream, name, lenient)
        else:
            for number, data in enumerate(stream, 1):
                yield number, _line(data, number, name, lenient)
    finally:
        if close:
            stream.close()


def _chunked_lines(stream: BinaryIO, name: str, lenient: bool) -> Iterator[tuple[int, str]]:
    """:func:`iter_lines` for a binary stream: each chunk (what ``read1`` gives, up to
    :data:`CHUNK` bytes, and the rest of its last line) is decoded and split at once, without a
    call per line; one that is not valid UTF-8 goes line by line (:func:`_line`), which reports
    the line. ``read1`` does not wait for more than is there, so stdin's lines are handed on as
    they come, as with reading line by line."""
    number = 0
    while data := stream.read1(CHUNK):
        ended = data.endswith(b"\n")
        if not ended:
            data += stream.readline()
            ended = data.endswith(b"\n")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pieces = data.split(b"\n")
            if ended:
                pieces.pop()
            for number, piece in enumerate(pieces, number + 1):
                yield number, _line(piece, number, name, lenient)
            continue
        lines = text.split("\n")
        if ended:
            lines.pop()  # the empty text after the last line end
        if "\r" in text:
            lines = [line.rstrip("\r") for line in lines]
        if number == 0 and lines and lines[0].startswith("\ufeff"):
            lines[0] = lines[0][1:]
        yield from enumerate(lines, number + 1)
        number += len(lines)


def _line(data: bytes | str, number: int, name: str, lenient: bool) -> str:
    """The text of line ``number`` (bytes or text, with or without its ending), for
    :func:`iter_lines`: without the line ending, nor a BOM on line 1; an :class:`Undecodable`
    text, or with ``lenient`` false a :class:`TaggerError`, if it is not valid UTF-8."""
    if isinstance(data, str):
        text = data
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            error = TaggerError(f"invalid UTF-8 (byte {data[e.start]:#04x} at column {e.start + 1})", name, number)
            if not lenient:
                raise error from None
            return Undecodable(data.decode("utf-8", "replace").rstrip("\r\n"), error)
    if number == 1 and text.startswith("\ufeff"):
        text = text[1:]
    return text.rstrip("\r\n")


def open_output(path: str | os.PathLike | None) -> TextIO:
    """A UTF-8 text stream for ``path`` (missing parent folders are created, as for model
    files), or stdout for ``None``/``-``. A path is an :class:`OutputFile`: written to a
    temporary file that replaces ``path`` when it is closed, so that an existing file is never
    truncated before there is output to put in its place, and a failed write is a
    :class:`TaggerError` naming the file."""
    if path is None or os.fspath(path) == "-":
        return sys.stdout
    parent = Path(path).parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise TaggerError(f"cannot write: {parent} is a file, not a folder", os.fspath(path)) from None
    except OSError as e:
        raise TaggerError(f"cannot create the folder {parent}: {e.strerror}", os.fspath(path)) from None
    return OutputFile(path)


def write_error(error: OSError, name: str) -> TaggerError:
    """The one-line error of a failed write (a full disk, an I/O error) to ``name``."""
    return TaggerError(f"cannot write: {error.strerror or error}", name)


class GuardedStream:
    """A text stream passed through, whose failed writes (any :class:`OSError` but a closed pipe,
    which the command line ends quietly) are a :class:`TaggerError` naming the output: what
    ``tagger`` puts in place of ``sys.stdout`` while a command runs, and the base of
    :class:`OutputFile`. Other attributes are the stream's."""

    def __init__(self, stream: TextIO, name: str):
        self.stream, self.name = stream, name
        self.failed = False

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as e:
            self.failed = True
            raise write_error(e, self.name) from None

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            self.failed = True
            raise write_error(e, self.name) from None

    def __getattr__(self, name: str):
        if name == "stream":  # (not set yet)
            raise AttributeError(name)
        return getattr(self.stream, name)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback) -> None:
        self.close(failed=kind is not None)

    def close(self, failed: bool | None = None) -> None:
        self.flush()
        self.stream.close()


class OutputFile(GuardedStream):
    """``open(path, "w")`` for output (UTF-8, ``\\n`` line ends) that never truncates ``path`` before
    there is something to put there: a regular file (or a new one) is written through a temporary
    file in the same folder (a symbolic link's target's), which :meth:`close` renames over it
    (with the mode ``path`` has, or a new file's). A special file (``/dev/stdout``, a pipe) is
    written directly.

    Closed after a failure (``close(failed=True)``; by default, when an exception is on its way,
    that is from a ``finally`` block or ``with``), the output written before it replaces ``path``
    (a run that fails on malformed input stops after writing what came before it), but where
    nothing was written ``path`` is left as it was; after a failed write (a full disk) the
    temporary file is removed and ``path`` left as it was."""

    def __init__(self, path: str | os.PathLike):
        self.name = os.fspath(path)
        self.target = os.path.realpath(self.name)  # (a symbolic link stays one: its target is replaced)
        self.temporary: str | None = None
        try:
            stream = self._open()
        except OSError as e:
            if self.temporary is not None:
                Path(self.temporary).unlink(missing_ok=True)
                self.temporary = None
            raise TaggerError(f"cannot write: {e.strerror}", self.name) from None
        super().__init__(stream, self.name)

    def _open(self) -> TextIO:
        try:
            mode: int | None = os.stat(self.name).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):  # /dev/stdout, a FIFO: written through
            return open(self.name, "w", encoding="utf-8", newline="\n")
        if mode is not None and not os.access(self.name, os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        try:
            fd, self.temporary = tempfile.mkstemp(prefix=f".{os.path.basename(self.target)}.", suffix=".tmp",
                                                  dir=os.path.dirname(self.target))
        except PermissionError:  # a file one may write in a folder one may not: written in place
            if mode is None:
                raise
            return open(self.name, "w", encoding="utf-8", newline="\n")
        os.fchmod(fd, stat.S_IMODE(mode) if mode is not None else umask_mode())
        return open(fd, "w", encoding="utf-8", newline="\n")

    def close(self, failed: bool | None = None) -> None:
        if self.stream.closed:
            return
        if failed is None:
            failed = sys.exc_info()[0] is not None
        if self.failed:  # a write failed (and said so): nothing to keep
            self._discard()
            return
        try:
            self.stream.flush()
            written = self.stream.tell() > 0 if self.temporary is not None else True
            self.stream.close()
        except OSError as e:
            self.failed = True
            self._discard()
            raise write_error(e, self.name) from None
        if self.temporary is None:
            return
        if failed and not written:
            self._discard()
            return
        try:
            os.replace(self.temporary, self.target)
        except OSError as e:
            self._discard()
            raise TaggerError(f"cannot write: {e.strerror}", self.name) from None
        self.temporary = None

    def _discard(self) -> None:
        try:
            self.stream.close()
        except OSError:
            pass  # (a full disk: what could not be flushed is dropped with the file)
        if self.temporary is not None:
            Path(self.temporary).unlink(missing_ok=True)
            self.temporary = None

    def __del__(self) -> None:  # never closed (an error before the caller's try): no temporary file is left
        if getattr(self, "temporary", None) is not None:
            self._discard()


def umask_mode() -> int:
    """The mode ``open(path, "w")`` gives a new file: 0o666 less the process's umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def blocks(lines: Iterator[tuple[int, str]]) -> Iterator[list[tuple[int, str]]]:
    """Group numbered lines into blank-line separated blocks (blank lines dropped)."""
    block: list[tuple[int, str]] = []
    for number, text in lines:
        if text.strip():
            block.append((number, text))
        elif block:
            yield block
            block = []
    if block:
        yield block


class Undecodable(str):
    """A line that is not valid UTF-8, read leniently: the text with replacement characters,
    and the error a strict read raises (``.error``)."""

    error: TaggerError

    def __new__(cls, text: str, error: TaggerError) -> "Undecodable":
        line = super().__new__(cls, text)
        line.error = error
        return line


def each_sentence(items: Iterable, parse: Callable[..., T | None], on_error: OnError | None = None) -> Iterator[T]:
    """``parse(item)`` for each item (a block of numbered lines, or one numbered line), dropping
    ``None``. Without ``on_error`` a :class:`TaggerError` ends the reading, as always; with it,
    the error and the item's first and last line numbers go to ``on_error`` and reading goes
    on with the next item (the item must come from ``iter_lines(..., lenient=True)``)."""
    if on_error is None:
        for item in items:
            result = parse(item)
            if result is not None:
                yield result
        return
    for item in items:
        lines = item if isinstance(item, list) else [item]
        try:
            for _, text in lines:
                if isinstance(text, Undecodable):
                    raise text.error
            result = parse(item)
        except TaggerError as error:
            on_error(error, lines[0][0], lines[-1][0])
            continue
        if result is not None:
            yield result


class Replay:
    """A stream whose first lines were already read: yields them again, then the rest.

    Lets a reader look at the start of stdin (to detect its format) without losing it.
    """

    def __init__(self, head: list, rest, name: str):
        self.head = head
        self.rest = rest
        self.name = name

    def __iter__(self):
        yield from self.head
        yield from self.rest


#: Sniffing looks at this many non-blank lines that are not ``#`` comments (however many comment
#: lines come first: some UD treebanks open with a long document header) ...
PEEK_LINES = 20
#: ... and at most this many bytes (a very long comment header, or a first block that never ends).
PEEK_BYTES = 1 << 20
#: ... of which at most this many characters of one line (a 50 MB line of plain text).
PEEK_LINE = 1 << 16


class SniffWindow:
    """How far to peek: :func:`full` is told each line in turn and says when enough is seen:
    :data:`PEEK_LINES` non-blank lines other than ``#`` comments and, while all of those hold a
    tab (a one-token-per-line file, perhaps), the blank line that ends their first block; or
    :data:`PEEK_BYTES` in all."""

    def __init__(self, count: int = PEEK_LINES, limit: int = PEEK_BYTES):
        self.count, self.limit = count, limit
        self.size = self.content = 0
        self.tabbed = True
        self.block_ended = False

    def full(self, text: str) -> bool:
        self.size += len(text) + 1
        stripped = text.strip()
        if not stripped:
            self.block_ended = self.block_ended or self.content > 0
        elif not stripped.startswith("#"):
            self.content += 1
            self.tabbed = self.tabbed and "\t" in text
        enough = self.content >= self.count and (self.block_ended or not self.tabbed)
        return enough or self.size >= self.limit


def window(lines: Iterable[str], count: int = PEEK_LINES) -> list[str]:
    """The first lines of ``lines`` that a sniffer looks at (see :class:`SniffWindow`)."""
    seen, limits = [], SniffWindow(count)
    for text in lines:
        seen.append(text)
        if limits.full(text):
            break
    return seen


def read_once_only(path: str | os.PathLike) -> bool:
    """Whether ``path`` names something that can be read once only: not a file or folder (a
    pipe, a FIFO, a terminal); False where it names nothing (the reader says so)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextmanager
def read_once(source: Any) -> Iterator[Any]:
    """``source`` (a path, a stream or a list of them) with each path that can be read only
    once (a pipe such as bash's ``<(command)``, a FIFO, ``/dev/stdin``) opened as a binary
    stream, so that sniffing its start and reading it are one reading (a path is opened again
    for each: a pipe's start would be lost); what it opened is closed at the end."""
    opened: list[BinaryIO] = []

    def one(item: Any) -> Any:
        if not isinstance(item, (str, os.PathLike)) or not read_once_only(item):
            return item
        try:
            opened.append(open(item, "rb"))
        except OSError:
            return item  # the reader says what is wrong
        return opened[-1]

    try:
        yield [one(item) for item in source] if isinstance(source, (list, tuple)) else one(source)
    finally:
        for stream in opened:
            stream.close()


def peek(source: Source, count: int = PEEK_LINES) -> tuple[list[str], Source]:
    """The first lines of ``source``, blank ones included, as far as :class:`SniffWindow` reads
    (decoded leniently, for sniffing only), and a source to read instead of ``source``: the
    path itself, or a :class:`Replay` stream."""
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, "rb") as f:
                return _head(f, count)[1], source
        except OSError:
            return [], source  # the reader reports it properly
    iterator = iter(getattr(source, "buffer", source))
    head, texts = _head(iterator, count)
    return texts, Replay(head, iterator, source_name(source))


def _head(lines: Iterator, count: int) -> tuple[list, list[str]]:
    """Lines taken from ``lines`` (bytes or text, as they come) until :class:`SniffWindow` has
    enough, and their texts; the iterator goes on after them."""
    head, texts, limits = [], [], SniffWindow(count)
    for line in lines:
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        text = (text.lstrip("\ufeff") if not head else text).rstrip("\r\n")
        if len(text) > PEEK_LINE:  # a very long line is sniffed by its start, cut after a space
            text = text[: text.rfind(" ", 0, PEEK_LINE) + 1 or PEEK_LINE]
        head.append(line)
        texts.append(text)
        if limits.full(text):
            break
    return head, texts


__all__ = ["Source", "OnError", "source_name", "iter_lines", "open_output", "blocks", "each_sentence", "Undecodable",
           "read_once", "read_once_only", "peek", "window", "SniffWindow", "Replay", "io"]


def parse_head(value: str, name: str, number: int) -> int:
    """A HEAD value: a non-negative integer, or -1 for ``_`` (unannotated)."""
    if value == "_":
        return -1
    if not (value.isascii() and value.isdigit()):
        raise TaggerError(f"HEAD '{value}' is not a non-negative integer", name, number)
    return int(value)


def file_digest(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes, read a MiB at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
