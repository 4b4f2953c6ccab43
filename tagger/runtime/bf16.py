"""bf16 products for the torch-free tagger runtime (:mod:`tagger.runtime.skip_lstm`), through
the kernels of ``tagger/modules/_fastscan.c``: AMX tiles or AVX512-BF16 dot products
(:func:`bf16_kernel` says which), fp32 accumulation.

A right-hand side is packed once per model (:func:`pack`); a left-hand side is a bf16 matrix
(:func:`rows`) whose rows are padded to a multiple of 16 and whose columns to a multiple of 32,
the padding zero. bf16 values are numpy ``uint16`` holding the top half of the float32 bits.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np

from tagger.modules.fused import FUSED, KERNELS, _fastscan, asked
from tagger.options import as_cpu
from tagger.modules.packing import Packed, directions, from_bf16, pack, recurrent, to_bf16, up  # noqa: F401 - here as before


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


def product(kernel: int, a: np.ndarray, b: Packed, out: np.ndarray, bias: np.ndarray | None = None, *,
            block: int | None = None, stride: int = 0, offset: int = 0, count: int | None = None,
            add: bool = False) -> None:
    """``out`` (float32, or bf16 bits as uint16; rows contiguous) = ``a`` [≥ M rows] · b, plus
    ``bias`` (indexed as out's columns), or added to what is there (``add``). Rows M = out's.
    By default the product's columns are out's (as many as out has, ≤ b's unpadded N); with
    ``block``, they come in blocks of ``block`` (a multiple of 16) and column q·block + j, j <
    ``count``, goes to out's column q·stride + offset + j (two directions' terms into each
    direction's gates of an input projection laid out as :func:`directions`)."""
    rows_, width = out.shape
    block = b.n if block is None else block
    count = width if count is None else count
    last = (b.n // block - 1) * stride + offset + count
    if (a.shape[1] != b.k or a.shape[0] < rows_ or a.dtype != np.uint16 or not out.flags.c_contiguous
            or out.dtype not in (np.float32, np.uint16) or last > width or block % 16 or count > block
            or (bias is not None and len(bias) < last)):
        raise ValueError("product: shapes do not fit")
    _fastscan.bf16_gemm(kernel, a.shape[0], b.n // 16, b.k // 32, a.ctypes.data, 2 * a.shape[1], b.tiles.ctypes.data,
                        int(add), int(out.dtype == np.uint16), out.ctypes.data, rows_, width,
                        0 if bias is None else bias.ctypes.data, block, stride, offset, count)


def scan(kernel: int, gx: np.ndarray, w_h: Packed, hidden: int, k: np.ndarray | None, mask: np.ndarray | None,
         out: np.ndarray | None, xs: np.ndarray, steps: int, batch: int, block: int = 0) -> None:
    """One bidirectional LSTM layer, all time steps in one C call, G = (nsig + 1)·hidden gates a
    direction: ``gx`` the input projections, [2, T, B, G] in scan order (direction 1 reversed in
    time) with ``block`` 0, or in sentence order, rows t·B + b, direction d's gates at columns
    d·block … (a product of :func:`directions`); ``w_h`` both directions' W_h (:func:`recurrent`),
    ``k`` [T, 2, B, H] the gated shortcut's source or None, ``mask`` [P, 2, B] or None; writes
    ``out`` [T, 2, B, H] (if given) and ``xs`` (:func:`rows` of T·B, 2H): the outputs in
    sentence order, bf16, the next layer's input."""
    hp, gp, width = w_h.k, w_h.n, w_h.cols
    if block == 0 and gx.shape != (2, steps, batch, width):
        raise ValueError("scan: gx in scan order is [2, T, B, G]")
    if block and (gx.ndim != 2 or gx.shape[0] < steps * batch or block < width or gx.shape[1] < block + width):
        raise ValueError("scan: gx in sentence order is [T·B, 2·block]")
    if (width % hidden or not 4 <= width // hidden <= 5 or hp != up(hidden, 32)
            or w_h.tiles.shape != (2 * gp // 16, hp // 32, 16, 32) or xs.shape[0] < steps * batch
            or xs.shape[1] < 2 * hidden or not gx.flags.c_contiguous or gx.dtype != np.float32):
        raise ValueError("scan: shapes do not fit")
    _fastscan.bf16_scan(kernel, steps, batch, hidden, width // hidden - 1, 0 if k is None else 1,
                        0 if mask is None else mask.shape[0], hp, gp, gx.ctypes.data, int(block > 0),
                        gx.shape[-1] if block else 0, block, w_h.tiles.ctypes.data,
                        0 if k is None else k.ctypes.data, 0 if mask is None else mask.ctypes.data,
                        0 if out is None else out.ctypes.data, xs.ctypes.data, xs.shape[1])


def best_seconds(run, repeats: int) -> float:
    """The shortest of ``repeats`` timed calls of ``run`` (after one untimed)."""
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def dot_products_pay(repeats: int = 10) -> bool:
    """Whether the AVX512-BF16 kernel (1) multiplies at least half as fast as numpy's float32 on
    this CPU: best of ``repeats`` of a [256, 256] · [256, 512] product each (about 10 ms in all).
    Half is enough: with each layer's time loop in one call, its path beat the float32 one on the
    Xeon measured with products at two thirds of float32's (`tagger tag` of EWT train, `fast`, one
    thread: 6.6 s against 7.9 s; bench/bench_kernels.py). The check keeps it off a CPU where
    those dot products are much slower (emulated, or split into many micro-operations)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 256), dtype=np.float32)
    w = rng.standard_normal((256, 512), dtype=np.float32)
    a, packed = rows(256, 256), pack(w)
    a[:, :256] = to_bf16(x)
    out, out32 = np.empty((256, 512), dtype=np.float32), np.empty((256, 512), dtype=np.float32)

    return 2 * best_seconds(lambda: np.matmul(x, w, out=out32), repeats) >= best_seconds(
        lambda: product(1, a, packed, out), repeats)


@lru_cache(maxsize=1)
def bf16_kernel() -> int:
    """The bf16 product kernel the torch-free tagger runtime uses, an index of :data:`KERNELS`
    (0: none, products in float32). By default AMX where the CPU has it and Linux grants it
    (asked here, once); the AVX512-BF16 dot products where they are all the CPU has and they
    multiply at least half as fast as numpy's float32 here, measured once in ~20 ms
    (:func:`dot_products_pay`; docs/benchmarks.md, "Tagging speed"). The
    environment variable ``TAGGER_BF16_KERNEL`` (a name of KERNELS) asks for one: ``none`` turns
    them off, ``avx512-bf16`` takes those dot products even where AMX is; no more than the CPU has.
    None under ``TAGGER_CPU`` (:func:`tagger.options.as_cpu`)."""
    if not FUSED or as_cpu():
        return 0
    has = int(_fastscan.bf16_kernel())
    wanted = asked("TAGGER_BF16_KERNEL", KERNELS, has)
    if wanted is not None:
        return wanted
    if has == KERNELS.index("avx512-bf16"):
        return has if dot_products_pay() else 0
    return has
