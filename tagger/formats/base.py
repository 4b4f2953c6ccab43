"""What every format module shares: decoding input lines and naming where they came from."""

from __future__ import annotations

import io
import os
import sys
from typing import BinaryIO, Iterator, TextIO, Union

from tagger.errors import TaggerError

Source = Union[str, os.PathLike, BinaryIO, TextIO]


def source_name(source: Source) -> str:
    """A printable name: the path, or ``<stdin>`` for a stream without one."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    name = getattr(source, "name", None)
    if isinstance(name, str) and not name.startswith("<"):
        return name
    return "<stdin>"


def iter_lines(source: Source, name: str | None = None) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line, 1-based, without the line ending.

    Decodes UTF-8 line by line so that invalid bytes are reported as ``file:line``; a missing
    file or a directory is a :class:`TaggerError`. A leading BOM is dropped.
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
        for number, data in enumerate(stream, 1):
            if isinstance(data, str):
                text = data
            else:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise TaggerError(
                        f"invalid UTF-8 (byte {data[e.start]:#04x} at column {e.start + 1})", name, number
                    ) from None
            if number == 1 and text.startswith("\ufeff"):
                text = text[1:]
            yield number, text.rstrip("\r\n")
    finally:
        if close:
            stream.close()


def open_output(path: str | os.PathLike | None) -> TextIO:
    """A UTF-8 text stream for ``path``, or stdout for ``None``/``-``."""
    if path is None or os.fspath(path) == "-":
        return sys.stdout
    try:
        return open(path, "w", encoding="utf-8", newline="\n")
    except OSError as e:
        raise TaggerError(f"cannot write: {e.strerror}", os.fspath(path)) from None


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


def peek(source: Source, count: int = 20) -> tuple[list[str], Source]:
    """The first ``count`` non-empty lines of ``source`` (decoded leniently, for sniffing only)
    and a source to read instead of ``source``: the path itself, or a :class:`Replay` stream.
    """
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, "rb") as f:
                head = [line for _, line in zip(range(1000), f)]
        except OSError:
            return [], source  # the reader reports it properly
        return _texts(head, count), source
    stream = getattr(source, "buffer", source)
    iterator = iter(stream)
    head, filled = [], 0
    for line in iterator:
        head.append(line)
        filled += bool(line.strip())
        if filled >= count or len(head) >= 1000:
            break
    return _texts(head, count), Replay(head, iterator, source_name(source))


def _texts(lines: list, count: int) -> list[str]:
    texts = []
    for line in lines:
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        text = text.lstrip("\ufeff").rstrip("\r\n")
        if text.strip():
            texts.append(text)
    return texts[:count]


__all__ = ["Source", "source_name", "iter_lines", "open_output", "blocks", "peek", "Replay", "io"]
