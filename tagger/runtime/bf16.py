"""bf16 products for the torch-free tagger runtime (:mod:`tagger.runtime.skip_lstm`), through
the kernels of ``tagger/modules/_fastscan.c``: AMX tiles or AVX512-BF16 dot products
(:func:`tagger.modules.fused.bf16_kernel` says which), fp32 accumulation.

A right-hand side is packed once per model (:func:`pack`); a left-hand side is a bf16 matrix
(:func:`rows`) whose rows are padded to a multiple of 16 and whose columns to a multiple of 32,
the padding zero. bf16 values are numpy ``uint16`` holding the top half of the float32 bits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tagger.modules.fused import _fastscan


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
    padded), ``k`` and ``n`` its padded sizes."""

    tiles: np.ndarray
    k: int
    n: int


def pack(w: np.ndarray) -> Packed:
    """``w`` [K, N] (float32) as bf16 tiles: tile (nb, kb) holds rows 32 kb … 32 kb + 31 and
    columns 16 nb … 16 nb + 15, element (k, n) at [(k % 32) // 2, 2 (n % 16) + k % 2] (the pairs
    of k that one AMX or AVX512-BF16 dot product takes)."""
    k, n = w.shape
    kp, np_ = up(k, 32), up(n, 16)
    padded = np.zeros((kp, np_), dtype=np.float32)
    padded[:k, :n] = w
    tiles = to_bf16(padded).reshape(kp // 32, 16, 2, np_ // 16, 16).transpose(3, 0, 1, 4, 2)
    return Packed(np.ascontiguousarray(tiles).reshape(np_ // 16, kp // 32, 16, 32), kp, np_)


def directions(w: np.ndarray, block: int) -> Packed:
    """Two directions' matrices ``w`` [2, K, N] side by side, each padded to ``block`` columns
    (a multiple of 16), packed: one product gives both, direction d at columns d·block …"""
    two = np.zeros((w.shape[1], 2 * block), dtype=np.float32)
    two[:, : w.shape[2]], two[:, block : block + w.shape[2]] = w[0], w[1]
    return pack(two)


def rows(count: int, width: int) -> np.ndarray:
    """A zero bf16 left-hand side for ``count`` rows of ``width`` values, padded."""
    return np.zeros((up(count, 16), up(width, 32)), dtype=np.uint16)


class Workspace:
    """Arrays kept from one batch to the next (one workspace per thread): a fresh array of
    megabytes is fresh pages from the OS, and on EWT train writing into them cost a third of the
    products' time (docs/benchmarks.md, "Tagging speed")."""

    def __init__(self) -> None:
        self.buffers: dict[str, np.ndarray] = {}

    def take(self, name: str, shape: tuple[int, ...], dtype: type) -> np.ndarray:
        """An array of ``shape`` under ``name``, its values left from before (uninitialised)."""
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        buffer = self.buffers.get(name)
        if buffer is None or buffer.nbytes < size:
            buffer = self.buffers[name] = np.empty(max(size, 2 * (0 if buffer is None else buffer.nbytes)), np.uint8)
        return buffer[:size].view(dtype).reshape(shape)

    def rows(self, name: str, count: int, width: int) -> np.ndarray:
        """:func:`rows` under ``name``: its padding zero, the rest left from before."""
        out = self.take(name, (up(count, 16), up(width, 32)), np.uint16)
        out[count:] = 0
        out[:count, width:] = 0
        return out


def product(kernel: int, a: np.ndarray, b: Packed, out: np.ndarray, bias: np.ndarray | None = None) -> None:
    """``out`` [M, N'] (float32, or bf16 bits as uint16, rows contiguous; N' ≤ the unpadded N) =
    ``a`` [≥ M rows] · b (+ bias [N'])."""
    count, ncols = out.shape
    if (a.shape[1] != b.k or a.shape[0] < count or a.dtype != np.uint16 or not out.flags.c_contiguous
            or out.dtype not in (np.float32, np.uint16)):
        raise ValueError("product: shapes do not fit")
    _fastscan.bf16_gemm(kernel, a.shape[0], b.n // 16, b.k // 32, a.ctypes.data, 2 * a.shape[1], b.tiles.ctypes.data,
                        0, 0, int(out.dtype == np.uint16), out.ctypes.data, count, ncols, ncols, 0 if bias is None else bias.ctypes.data,
                        0, 0, 0, 0, 0, 0)


def scan_order(kernel: int, a: np.ndarray, b: Packed, gx: np.ndarray, bias: np.ndarray | None, block: int,
               offset: int = 0, count: int | None = None, add: bool = False) -> None:
    """An input projection of both directions written in scan order: ``a`` rows t·B + b in
    sentence order, ``b`` packed by :func:`directions` (``block`` columns a direction), into
    ``gx`` [2, T, B, G] at columns ``offset`` … ``offset + count``, direction 1 reversed in time
    (t → T - 1 - t), plus ``bias`` [2, G] (at the same columns), or added to what is there."""
    _, steps, batch, width = gx.shape
    count = width if count is None else count
    if a.shape[1] != b.k or a.shape[0] < steps * batch or not gx.flags.c_contiguous or gx.dtype != np.float32:
        raise ValueError("scan_order: shapes do not fit")
    _fastscan.bf16_gemm(kernel, a.shape[0], b.n // 16, b.k // 32, a.ctypes.data, 2 * a.shape[1], b.tiles.ctypes.data,
                        1, int(add), 0, gx.ctypes.data, steps * batch, 0, 0, 0 if bias is None else bias.ctypes.data,
                        steps, batch, width, block, offset, count)


def scan(kernel: int, gx: np.ndarray, w_h: Packed, hidden: int, k: np.ndarray | None, mask: np.ndarray | None,
         out: np.ndarray | None, xs: np.ndarray) -> None:
    """One bidirectional LSTM layer, all time steps in one C call: ``gx`` [2, T, B, G] (scan
    order, G = (nsig + 1)·hidden), ``w_h`` both directions' W_h packed one after the other
    (:func:`recurrent`), ``k`` [T, 2, B, H] the gated shortcut's source or None, ``mask``
    [P, 2, B] or None; writes ``out`` [T, 2, B, H] (if given) and ``xs`` (:func:`rows` of T·B,
    2H): the outputs in sentence order, bf16, the next layer's input."""
    _, steps, batch, width = gx.shape
    hp, gp = up(hidden, 32), up(width, 16)
    if w_h.tiles.shape != (2 * gp // 16, hp // 32, 16, 32) or xs.shape[0] < steps * batch or xs.shape[1] < 2 * hidden:
        raise ValueError("scan: shapes do not fit")
    _fastscan.bf16_scan(kernel, steps, batch, hidden, width // hidden - 1, 0 if k is None else 1,
                        0 if mask is None else mask.shape[0], hp, gp, gx.ctypes.data, w_h.tiles.ctypes.data,
                        0 if k is None else k.ctypes.data, 0 if mask is None else mask.ctypes.data,
                        0 if out is None else out.ctypes.data, xs.ctypes.data, xs.shape[1])


def recurrent(w_h: np.ndarray) -> Packed:
    """W_h of both directions [2, H, G], each packed to H rounded up to 32 rows and G to 16
    columns, the second's tiles after the first's (what :func:`scan` reads)."""
    first, second = pack(w_h[0]), pack(w_h[1])
    return Packed(np.ascontiguousarray(np.concatenate([first.tiles, second.tiles])), first.k, first.n)
