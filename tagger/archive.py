"""The one reader of model files, without torch: a file's plain data, tensors as numpy arrays.

A model file is a zip archive written by ``torch.save``; its ``data.pkl`` is unpickled with an
unpickler that allows only the globals a file of plain data and tensors holds
(``collections.OrderedDict``, ``torch.FloatStorage`` and kin, ``torch._utils._rebuild_tensor_v2``)
and refuses every other, as ``torch.load(weights_only=True)`` does: reading a model file never
runs code. :func:`read` gives None for anything it does not take (not a zip archive, a refused
global, big-endian data, another storage type); :func:`tagger.model_file.read_archive` then asks
``torch.load(weights_only=True)``, which reads the rest of what it reads and words the errors.
The torch-free runtimes (:mod:`tagger.runtime.skip_lstm`, :mod:`tagger.runtime.tokenizer`)
read through this alone.
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import zipfile
from typing import Any

import numpy as np

#: ``torch.XStorage`` -> numpy dtype.
STORAGES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
            "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16, "CharStorage": np.int8,
            "ByteStorage": np.uint8, "BoolStorage": np.bool_}


def _rebuild_tensor(storage: np.ndarray, offset: int, size: tuple, stride: tuple, *rest: Any) -> np.ndarray:
    if not size:
        return storage[offset : offset + 1].reshape(()).copy()
    strides = tuple(s * storage.itemsize for s in stride)
    return np.lib.stride_tricks.as_strided(storage[offset:], shape=size, strides=strides).copy()


def _no_tensor(*args: Any) -> None:
    return None


class _Unpickler(pickle.Unpickler):
    """Plain data and tensors (as numpy arrays); with ``peek``, tensors are None and their data
    is never read (what a model file is, without the cost of its weights)."""

    def __init__(self, data: Any, archive: zipfile.ZipFile, prefix: str, peek: bool = False):
        super().__init__(data)
        self.archive, self.prefix, self.peek = archive, prefix, peek
        self.storages: dict[str, np.ndarray] = {}  # a storage read once, however many tensors view it

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _no_tensor if self.peek else _rebuild_tensor
        if module == "torch" and name in STORAGES:
            return np.dtype(STORAGES[name])
        raise pickle.UnpicklingError(f"refused global {module}.{name}")

    def persistent_load(self, pid: Any) -> np.ndarray | None:
        kind, dtype, key, _location, _numel = pid
        if kind != "storage":
            raise pickle.UnpicklingError(f"unknown persistent id {kind!r}")
        if self.peek:
            return None
        if key not in self.storages:
            self.storages[key] = np.frombuffer(self.archive.read(f"{self.prefix}/data/{key}"), dtype=dtype)
        return self.storages[key]


#: The last peek of each file, with the file's (inode, size, mtime) then: ``tagger tag`` asks
#: what a model file is three times before it reads the weights (which engine, which stages,
#: which runtime), and a pipeline's vocabularies take 0.08 s to unpickle each time.
_PEEKED: dict[str, tuple[tuple[int, int, int], dict[str, Any] | None]] = {}


def read(path: str | os.PathLike, peek: bool = False) -> dict[str, Any] | None:
    """The plain data of a model file, tensors as numpy arrays (with ``peek``: None, unread);
    None when the file is not a zip archive of little-endian plain data that this reader takes
    (the caller then uses torch, which also gives the errors). A peek at a file unchanged since
    the last one gives the same dict (read it, do not change it)."""
    if not peek:
        return _read(path, peek)
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    key, stamp = os.path.abspath(path), (info.st_ino, info.st_size, info.st_mtime_ns)
    hit = _PEEKED.get(key)
    if hit is None or hit[0] != stamp:
        hit = _PEEKED[key] = (stamp, _read(path, peek))
    return hit[1]


def _read(path: str | os.PathLike, peek: bool) -> dict[str, Any] | None:
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
            loaded = _Unpickler(io.BytesIO(archive.read(pickled)), archive, prefix, peek).load()
    except (OSError, zipfile.BadZipFile, pickle.UnpicklingError, ValueError, KeyError, EOFError, TypeError):
        return None
    return loaded if isinstance(loaded, dict) else None
