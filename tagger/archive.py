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

from tagger.errors import TaggerError

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


def _rebuild_tensor(storage: Any, offset: int, size: tuple, stride: tuple) -> Any:
    """A tensor of ``storage`` (a flat numpy array, or a raw :class:`_Storage`) as an array of its
    own (a view of the storage where it is the whole storage, row-major), or :class:`Raw`."""
    if isinstance(storage, _Storage):
        return _raw_tensor(storage, offset, size, stride)
    import numpy as np

    if not size:
        return storage[offset : offset + 1].reshape(()).copy()
    if offset == 0 and _elements(size) == len(storage) and _row_major(size, stride):
        return storage.reshape(size)
    strides = tuple(s * storage.itemsize for s in stride)
    return np.lib.stride_tricks.as_strided(storage[offset:], shape=size, strides=strides).copy()


def _elements(size: tuple) -> int:
    count = 1
    for n in size:
        count *= n
    return count


def _row_major(size: tuple, stride: tuple) -> bool:
    """Whether a tensor of ``size`` with ``stride`` (in elements) is laid out row-major."""
    step = 1
    for n, s in zip(reversed(size), reversed(stride)):
        if n > 1 and s != step:
            return False
        step *= n
    return True


def _raw_tensor(storage: _Storage, offset: int, size: tuple, stride: tuple) -> Raw:
    """A row-major tensor's bytes, a view of its storage's; a ValueError for another layout
    (a transposed view: no model file of ours holds one)."""
    if not _row_major(size, stride):
        raise ValueError("a tensor that is not row-major")
    item = ITEM_BYTES[storage.dtype]
    return Raw(storage.data[offset * item : (offset + _elements(size)) * item], size, storage.dtype)


@dataclass(frozen=True)
class Unread:
    """A tensor of a peek, its data unread: where its elements are (the storage ``key`` and its
    ``dtype`` name) and its layout, for a full read of the same file to read (:func:`_filled`)."""

    key: str
    dtype: str
    offset: int
    size: tuple
    stride: tuple


def _unread(storage: tuple[str, str], offset: int, size: tuple, stride: tuple, *rest: Any) -> Unread:
    return Unread(*storage, offset, tuple(size), tuple(stride))


class _Unpickler(pickle.Unpickler):
    """Plain data, its tensors :class:`Unread` (their data never read: what a model file is,
    without the cost of its weights)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _unread
        if module == "torch" and name in STORAGES:
            return STORAGES[name]
        raise pickle.UnpicklingError(f"refused global {module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        kind, dtype, key, _location, _numel = pid
        if kind != "storage":
            raise pickle.UnpicklingError(f"unknown persistent id {kind!r}")
        return key, dtype


#: The last peek of each file, with the file's (inode, size, mtime) then: ``tagger tag`` asks
#: what a model file is three times before it reads the weights (which engine, which stages,
#: which runtime), and a pipeline's vocabularies take 0.08 s to unpickle each time.
_PEEKED: dict[str, tuple[tuple[int, int, int], dict[str, Any] | None]] = {}


def read(path: str | os.PathLike, peek: bool = False, raw: bool = False) -> dict[str, Any] | None:
    """The plain data of a model file, tensors as numpy arrays (with ``raw``: :class:`Raw`, numpy
    not imported; with ``peek``: :class:`Unread`, their data unread); None when the file is not a
    zip archive of little-endian plain data that this reader takes (the caller then uses torch,
    which also gives the errors); a :class:`TaggerError` for a file whose data fails its
    checksum. A peek at a file unchanged since the last one gives the same
    dict (read it, do not change it); a full read is that peek with its tensors read
    (:func:`_filled`), the pickle unpickled once however often the file is asked about (for a
    model's first line, ``tagger tag`` peeks before it reads: 8 ms of `fast`'s 15)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    key, stamp = os.path.abspath(path), (info.st_ino, info.st_size, info.st_mtime_ns)
    hit = _PEEKED.get(key)
    if hit is None or hit[0] != stamp:
        hit = _PEEKED[key] = (stamp, _read(path))
    if peek or hit[1] is None:
        return hit[1]
    try:
        with zipfile.ZipFile(path) as archive:
            return _filled(hit[1], _Tensors(archive, _prefix(archive.namelist()) or "", raw))
    except zipfile.BadZipFile as error:
        _check_sums(error, path)
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _check_sums(error: zipfile.BadZipFile, path: str | os.PathLike) -> None:
    """A :class:`TaggerError` for a file whose data fails its zip checksum: torch, which the
    caller asks about a file this reader does not take, reads such a file without a word, and
    would tag with the damaged weights."""
    if "CRC" in str(error):
        raise TaggerError("corrupt model file: its data fails the zip checksum (copy or download it again)",
                          os.fspath(path)) from None


def _prefix(names: list[str]) -> str | None:
    """The folder of an archive's ``data.pkl`` (None: it has none)."""
    pickled = next((n for n in names if n.endswith("/data.pkl")), None)
    return None if pickled is None else pickled[: -len("/data.pkl")]


def _read(path: str | os.PathLike) -> dict[str, Any] | None:
    """The plain data of a model file, tensors :class:`Unread`."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            prefix = _prefix(names)
            if prefix is None:
                return None
            if f"{prefix}/byteorder" in names and archive.read(f"{prefix}/byteorder") != b"little":
                return None
            # the pickle whole, in memory: unpickling from the zip member reads it a few bytes a call
            pickled = io.BytesIO(archive.read(f"{prefix}/data.pkl"))
            loaded = _Unpickler(pickled).load()
    except zipfile.BadZipFile as error:
        _check_sums(error, path)
        return None
    except (OSError, pickle.UnpicklingError, ValueError, KeyError, EOFError, TypeError):
        return None
    return loaded if isinstance(loaded, dict) else None


class _Tensors:
    """The tensors of a peek's :class:`Unread` ones, read from ``archive``: numpy arrays, writable
    (torch trains them), or with ``raw`` :class:`Raw` (numpy not imported); a storage read once,
    however many tensors view it."""

    def __init__(self, archive: zipfile.ZipFile, prefix: str, raw: bool = False):
        self.archive, self.prefix, self.raw = archive, prefix, raw
        self.storages: dict[str, Any] = {}

    def __call__(self, tensor: Unread) -> Any:
        storage = self.storages.get(tensor.key)
        if storage is None:
            data = self.archive.read(f"{self.prefix}/data/{tensor.key}")
            if self.raw:
                storage = _Storage(memoryview(data), tensor.dtype)
            else:
                import numpy as np

                storage = np.frombuffer(bytearray(data), dtype=tensor.dtype)
            self.storages[tensor.key] = storage
        return _rebuild_tensor(storage, tensor.offset, tensor.size, tensor.stride)


#: The containers plain data is built of (what :func:`_filled` copies).
_NESTED = frozenset((dict, collections.OrderedDict, list, tuple, set, Unread))


def _filled(value: Any, tensor: Any) -> Any:
    """``value`` (a peek's plain data) with each :class:`Unread` replaced by ``tensor(it)``, every
    container copied (the peek stays as it is: a caller may change what it is given)."""
    kind = type(value)
    if kind is Unread:
        return tensor(value)
    if kind is dict or kind is collections.OrderedDict:
        return kind([(key, _filled(item, tensor)) for key, item in value.items()])
    if kind is list or kind is tuple:
        if _NESTED.isdisjoint(map(type, value)):  # (a vocabulary: strings alone, checked in C)
            return kind(value)
        return kind([_filled(item, tensor) for item in value])
    if kind is set:  # (holds no tensor: they are not hashable)
        return set(value)
    return value
