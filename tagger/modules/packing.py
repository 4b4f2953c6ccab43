"""bf16 values and the tiles the bf16 product kernels of ``tagger/modules/_fastscan.c`` read a
right-hand side from, in numpy alone: what a model's exporter (:mod:`tagger.models.skip_lstm.export`)
packs once per model, and :mod:`tagger.runtime.bf16` multiplies by. bf16 values are numpy
``uint16`` holding the top half of the float32 bits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def up(n: int, to: int) -> int:
    """``n`` rounded up to a multiple of ``to``."""
    return -(-n // to) * to


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 → bf16 bits (``uint16``), rounded to nearest even as torch's ``.to(bfloat16)``."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16).astype(np.uint16)


def from_bf16(x: np.ndarray) -> np.ndarray:
    """bf16 bits → float32 (exact)."""
    return (x.astype(np.uint32) << 16).view(np.float32)


@dataclass
class Packed:
    """A right-hand side [K, N] in the kernels' tiles: ``tiles`` [N/16, K/32, 16, 32] (K and N
    padded), ``k`` and ``n`` its padded sizes, ``cols`` N."""

    tiles: np.ndarray
    k: int
    n: int
    cols: int


def pack(w: np.ndarray) -> Packed:
    """``w`` [K, N] (float32) as bf16 tiles: tile (nb, kb) holds rows 32 kb … 32 kb + 31 and
    columns 16 nb … 16 nb + 15, element (k, n) at [(k % 32) // 2, 2 (n % 16) + k % 2] (the pairs
    of k that one AMX or AVX512-BF16 dot product takes)."""
    k, n = w.shape
    kp, np_ = up(k, 32), up(n, 16)
    padded = np.zeros((kp, np_), dtype=np.float32)
    padded[:k, :n] = w
    tiles = to_bf16(padded).reshape(kp // 32, 16, 2, np_ // 16, 16).transpose(3, 0, 1, 4, 2)
    return Packed(np.ascontiguousarray(tiles).reshape(np_ // 16, kp // 32, 16, 32), kp, np_, n)


def directions(w: np.ndarray, block: int) -> Packed:
    """Two directions' matrices ``w`` [2, K, N] side by side, each padded to ``block`` columns
    (a multiple of 16), packed: one product gives both, direction d at columns d·block …"""
    two = np.zeros((w.shape[1], 2 * block), dtype=np.float32)
    two[:, : w.shape[2]], two[:, block : block + w.shape[2]] = w[0], w[1]
    return pack(two)


def recurrent(w_h: np.ndarray) -> Packed:
    """W_h of both directions [2, H, G], each packed to H rounded up to 32 rows and G to 16
    columns, the second's tiles after the first's (what :func:`scan` reads; ``cols`` is G)."""
    first, second = pack(w_h[0]), pack(w_h[1])
    return Packed(np.ascontiguousarray(np.concatenate([first.tiles, second.tiles])), first.k, first.n, first.cols)
