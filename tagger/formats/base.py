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


__all__ = ["Source", "source_name", "iter_lines", "open_output", "blocks", "io"]
