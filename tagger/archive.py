"""The one reader of model files, without torch: a file's plain data, tensors as numpy arrays
(or, with ``raw``, as :class:`Raw` values: their bytes, without numpy).

A model file is a zip archive written by ``torch.save``; its ``data.pkl`` is unpickled with an
unpickler that allows only the globals a file of plain data and tensors holds
(``collections.OrderedDict``, ``torch.FloatStorage`` and kin, ``torch._utils._rebuild_tensor_v2``)
and refuses every other, as ``torch.load(weights_only=True)`` does: reading a model file never
runs code. :func:`read` gives None for anything it does not take (not a zip archive, a refused
global, big-endian data, another storage type); :func:`tagger.model_file.read_archive` then asks
``torch.load(weights_only=True)``, which reads the rest of what it reads and words the errors.
The torch-free runtimes (:mod:`tagger.runtime.skip_lstm`, :mod:`tagger.runtime.tokenizer`)
read through this alone; numpy is imported only when a file's tensors are read as arrays (a
tokenizer's C runtime, :mod:`tagger.runtime.c_tokenizer`, reads them ``raw``: importing numpy
is a third of a small text's process).
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import zipfile
from dataclasses import dataclass
from typing import Any

#: ``torch.XStorage`` -> numpy dtype name (and :attr:`Raw.dtype`).
STORAGES = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
            "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16", "CharStorage": "int8",
            "ByteStorage": "uint8", "BoolStorage": "bool"}
#: The bytes of one element of each dtype.
ITEM_BYTES = {"float32": 4, "float64": 8, "float16": 2, "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1,
              "bool": 1}


@dataclass(frozen=True)
class Raw:
    """A tensor read ``raw``: ``data`` its elements' bytes in row-major order (a memoryview, as
    a numpy array's ``data``), its ``shape`` and ``dtype`` name (a numpy array's, as strings)."""

    data: memoryview
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class _Storage:
    """A storage read ``raw``: its bytes and dtype name."""

    data: memoryview
    dtype: str


def _rebuild_tensor(storage: Any, offset: int, size: tuple, stride: tuple, *rest: Any) -> Any:
    if isinstance(storage, _Storage):
        return _raw_tensor(storage, offset, tuple(size), tuple(stride))
    import numpy as np

    if not size:
        return storage[offset : offset + 1].reshape(()).copy()
    strides = tuple(s * storage.itemsize for s in stride)
    return np.lib.stride_tricks.as_strided(storage[offset:], shape=size, strides=strides).copy()


def _raw_tensor(storage: _Storage, offset: int, size: tuple, stride: tuple) -> Raw:
    """A row-major tensor's bytes, a view of its storage's; a ValueError for another layout
    (a transposed view: no model file of ours holds one)."""
    expected, step = [], 1
    for n in reversed(size):
        expected.append(step)
        step *= n
    if any(n > 1 and s != e for n, s, e in zip(size, stride, reversed(expected))):
        raise ValueError("a tensor that is not row-major")
    item = ITEM_BYTES[storage.dtype]
    return Raw(storage.data[offset * item : (offset + step) * item], size, storage.dtype)


def _no_tensor(*args: Any) -> None:
    return None


class _Unpickler(pickle.Unpickler):
    """Plain data and tensors (as numpy arrays, or :class:`Raw` with ``raw``); with ``peek``,
    tensors are None and their data is never read (what a model file is, without the cost of its
    weights)."""

    def __init__(self, data: Any, archive: zipfile.ZipFile, prefix: str, peek: bool = False, raw: bool = False):
        super().__init__(data)
        self.archive, self.prefix, self.peek, self.raw = archive, prefix, peek, raw
        self.storages: dict[str, Any] = {}  # a storage read once, however many tensors view it

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _no_tensor if self.peek else _rebuild_tensor
        if module == "torch" and name in STORAGES:
            return STORAGES[name]
        raise pickle.UnpicklingError(f"refused global {module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        kind, dtype, key, _location, _numel = pid
        if kind != "storage":
            raise pickle.UnpicklingError(f"unknown persistent id {kind!r}")
        if self.peek:
            return None
        if key not in self.storages:
            data = self.archive.read(f"{self.prefix}/data/{key}")
            if self.raw:
                self.storages[key] = _Storage(memoryview(data), dtype)
            else:
                import numpy as np

                self.storages[key] = np.frombuffer(data, dtype=dtype)
        return self.storages[key]


#: The last peek of each file, with the file's (inode, size, mtime) then: ``tagger tag`` asks
#: what a model file is three times before it reads the weights (which engine, which stages,
#: which runtime), and a pipeline's vocabularies take 0.08 s to unpickle each time.
_PEEKED: dict[str, tuple[tuple[int, int, int], dict[str, Any] | None]] = {}


def read(path: str | os.PathLike, peek: bool = False, raw: bool = False) -> dict[str, Any] | None:
    """The plain data of a model file, tensors as numpy arrays (with ``raw``: :class:`Raw`, numpy
    not imported; with ``peek``: None, unread); None when the file is not a zip archive of
    little-endian plain data that this reader takes (the caller then uses torch, which also gives
    the errors). A peek at a file unchanged since the last one gives the same dict (read it, do
    not change it)."""
    if not peek:
        return _read(path, peek, raw)
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    key, stamp = os.path.abspath(path), (info.st_ino, info.st_size, info.st_mtime_ns)
    hit = _PEEKED.get(key)
    if hit is None or hit[0] != stamp:
        hit = _PEEKED[key] = (stamp, _read(path, peek))
    return hit[1]


def _read(path: str | os.PathLike, peek: bool, raw: bool = False) -> dict[str, Any] | None:
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            pickled = next((n for n in names if n.endswith("/data.pkl")), None)
            if pickled is None:
                return None
            prefix = pickled[: -len("/data.pkl")]
            if f"{prefix}/byteorder" in names and archive.read(f"{prefix}/byteorder") != b"little":
                return None
            # the pickle whole, in memory: unpickling from the zip member reads it a few bytes a call
            loaded = _Unpickler(io.BytesIO(archive.read(pickled)), archive, prefix, peek, raw).load()
    except (OSError, zipfile.BadZipFile, pickle.UnpicklingError, ValueError, KeyError, EOFError, TypeError):
        return None
    return loaded if isinstance(loaded, dict) else None
