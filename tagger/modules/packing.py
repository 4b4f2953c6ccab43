"""bf16 values, the int8 kernels' codes, and the tiles the product kernels of
``tagger/modules/_fastscan.c`` (bf16, float32, int8) read a right-hand side from, in numpy alone:
what a model's exporter (:mod:`tagger.models.skip_lstm.export`) packs once per model, and
:mod:`tagger.runtime.bf16` and :mod:`tagger.runtime.kernels` multiply by. bf16 values are numpy
``uint16`` holding the top half of the float32 bits; int8 codes are ``uint8``, 7 bits of a value
at a known scale (:func:`codes`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def up(n: int, to: int) -> int:
    """``n`` rounded up to a multiple of ``to``."""
    return -(-n // to) * to


def aligned(x: np.ndarray, to: int = 64) -> np.ndarray:
    """A contiguous copy of ``x`` whose data starts at a multiple of ``to`` bytes: the kernels read
    a right-hand side 64 bytes at a time, and a load across two cache lines costs two (numpy
    aligns to 16; on EWT train a float32 product ran at half speed so)."""
    raw = np.empty(x.nbytes + to, dtype=np.uint8)
    start = -raw.ctypes.data % to
    out = raw[start : start + x.nbytes].view(x.dtype).reshape(x.shape)
    out[...] = x
    return out


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 → bf16 bits (``uint16``), rounded to nearest even as torch's ``.to(bfloat16)``."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16).astype(np.uint16)


def from_bf16(x: np.ndarray) -> np.ndarray:
    """bf16 bits → float32 (exact)."""
    return (x.astype(np.uint32) << 16).view(np.float32)


@dataclass
class Packed:
    """A right-hand side [K, N] in the kernels' tiles: for the bf16 kernels ``tiles`` [N/16, K/32,
    16, 32] (K and N padded; :func:`pack`), for the float32 ones panels [N/16, K, 16] (N padded;
    :func:`pack` with ``f32``), for the int8 ones signed bytes [N/16, K/4, 16, 4] (:func:`pack_i8`,
    which also gives ``scale``, ``corr`` and ``deq``); ``k`` and ``n`` its padded sizes, ``cols`` N."""

    tiles: np.ndarray
    k: int
    n: int
    cols: int
    #: int8 only: the scale s of the left side's codes (:func:`codes`), and per column [n] the
    #: correction 64·Σ_k w_kn (int32) and the factor 1 / (s · the column's scale) of the sums
    scale: float = 0.0
    corr: np.ndarray | None = None
    deq: np.ndarray | None = None
    #: int8 only: the largest magnitude of its bytes (:func:`pack_i8`'s ``top``)
    top: int = 127


#: The codes of the int8 kernels' left side: 7 bits, q = round(x·s) + ZERO, clipped to 0 … 127
ZERO, CODE_MAX = 64, 63


def scale_for(bound: float) -> float:
    """The scale of the codes of values within ±``bound``."""
    return CODE_MAX / bound


def codes(x: np.ndarray, scale: float) -> np.ndarray:
    """``x`` (float32) as the int8 kernels' left side, uint8 codes (what ``_fastscan.c`` computes:
    x·s + 64.5 clipped to [0.5, 127.5], truncated)."""
    v = np.clip(np.asarray(x, dtype=np.float32) * np.float32(scale) + np.float32(64.5), 0.5, 127.5)
    return v.astype(np.uint8)


def row_codes(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``x`` [M, ≤ k] of any range as the int8 kernels' left side at a scale per row (63 over
    the row's largest magnitude), for a right side packed at scale 1: the codes [M, k] (uint8,
    padded with zero's code) and each row's factor, 1 / its scale [M] (float32; the product's
    ``by_row``)."""
    top = np.abs(x).max(1) if x.shape[1] else np.zeros(len(x), np.float32)
    scale = (CODE_MAX / np.where(top > 0, top, 1)).astype(np.float32)
    out = np.full((len(x), k), ZERO, dtype=np.uint8)
    out[:, : x.shape[1]] = codes(x * scale[:, None], 1.0)
    return out, (1 / scale).astype(np.float32)


def pack_i8(w: np.ndarray, scale: float, top: int = 127) -> Packed:
    """``w`` [K, N] (float32) for the int8 kernels, its left side's codes at ``scale``: each column
    as signed bytes at its own scale (``top`` over its largest magnitude: 127, or 63 for AVX2's
    kernel, which adds byte products in int16), K padded to 4 and N to 16 with zeros, element (k,
    n) at [n // 16, k // 4, n % 16, k % 4]."""
    if not 0 < top <= 127:
        raise ValueError(f"int8 weights of at most {top}")
    k, n = w.shape
    kp, np_ = up(k, 4), up(n, 16)
    padded = np.zeros((kp, np_), dtype=np.float32)
    padded[:k, :n] = w
    largest = np.abs(padded).max(0)
    column_scale = np.where(largest > 0, top / np.where(largest > 0, largest, 1), 1.0).astype(np.float32)
    q = np.clip(np.rint(padded * column_scale), -top, top).astype(np.int8)
    tiles = aligned(q.reshape(kp // 4, 4, np_ // 16, 16).transpose(2, 0, 3, 1))
    corr = (ZERO * q.astype(np.int32).sum(0)).astype(np.int32)
    deq = (1.0 / (np.float32(scale) * column_scale)).astype(np.float32)
    return Packed(tiles, kp, np_, n, float(scale), corr, deq, top)


def pack(w: np.ndarray, f32: bool = False) -> Packed:
    """``w`` [K, N] (float32) as bf16 tiles: tile (nb, kb) holds rows 32 kb … 32 kb + 31 and
    columns 16 nb … 16 nb + 15, element (k, n) at [(k % 32) // 2, 2 (n % 16) + k % 2] (the pairs
    of k that one AMX or AVX512-BF16 dot product takes); with ``f32``, as float32 panels of 16
    columns, element (k, n) at [n // 16, k, n % 16] (what the float32 kernels read)."""
    k, n = w.shape
    if f32:
        padded = np.zeros((k, up(n, 16)), dtype=np.float32)
        padded[:, :n] = w
        return Packed(aligned(padded.reshape(k, -1, 16).transpose(1, 0, 2)), k, padded.shape[1], n)
    kp, np_ = up(k, 32), up(n, 16)
    padded = np.zeros((kp, np_), dtype=np.float32)
    padded[:k, :n] = w
    tiles = to_bf16(padded).reshape(kp // 32, 16, 2, np_ // 16, 16).transpose(3, 0, 1, 4, 2)
    return Packed(aligned(tiles.reshape(np_ // 16, kp // 32, 16, 32)), kp, np_, n)


def directions(w: np.ndarray, block: int, f32: bool = False, i8: float = 0.0, top: int = 127) -> Packed:
    """Two directions' matrices ``w`` [2, K, N] side by side, each padded to ``block`` columns
    (a multiple of 16), packed (with ``i8``, for the int8 kernels, the left side's codes at that
    scale): one product gives both, direction d at columns d·block …"""
    two = np.zeros((w.shape[1], 2 * block), dtype=np.float32)
    two[:, : w.shape[2]], two[:, block : block + w.shape[2]] = w[0], w[1]
    return pack_i8(two, i8, top) if i8 else pack(two, f32)


def input_projection(w_x: np.ndarray, bias: np.ndarray, f32: bool = False, i8: float = 0.0, top: int = 127
                     ) -> tuple[Packed, np.ndarray, int]:
    """A bidirectional layer's input projection as one product: ``w_x`` [2, D, G] packed by
    :func:`directions` (each direction ``block`` = G rounded up to 16 columns; ``f32``, ``i8``, ``top`` as
    there), its ``bias`` [2, 1, G] laid out as that product's columns [2·block], and ``block``."""
    width = w_x.shape[-1]
    block = up(width, 16)
    columns = np.zeros(2 * block, dtype=np.float32)
    columns[:width], columns[block : block + width] = bias[0, 0], bias[1, 0]
    return directions(w_x, block, f32, i8, top), columns, block


def recurrent(w_h: np.ndarray, f32: bool = False, i8: float = 0.0, top: int = 127) -> Packed:
    """W_h of both directions [2, H, G], each packed to H rounded up to 32 rows and G to 16
    columns, the second's tiles after the first's (what :func:`scan` reads; ``cols`` is G); with
    ``i8``, for the int8 kernels, the state's codes at that scale (their ``corr`` and ``deq``
    [2·n] the first's, then the second's; weights of at most ``top``)."""
    if i8:
        first, second = pack_i8(w_h[0], i8, top), pack_i8(w_h[1], i8, top)
        return Packed(aligned(np.concatenate([first.tiles, second.tiles])), first.k, first.n, first.cols, i8,
                      np.concatenate([first.corr, second.corr]), np.concatenate([first.deq, second.deq]), top)
    first, second = pack(w_h[0], f32), pack(w_h[1], f32)
    return Packed(aligned(np.concatenate([first.tiles, second.tiles])), first.k, first.n, first.cols)
