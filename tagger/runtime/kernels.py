"""The product kernels of the torch-free tagger runtime (:mod:`tagger.runtime.skip_lstm`), one
interface over three kinds (``tagger/modules/_fastscan.c``): the bf16 kernels (AMX tiles or
AVX512-BF16 dot products, :mod:`tagger.runtime.bf16`) where the CPU multiplies bf16 natively,
float32 kernels everywhere else (AVX-512, AVX2 with FMA, or plain C that the compiler vectorised
for the CPU it was built on: NEON on aarch64), and beside them, on x86-64 CPUs with AVX2 and no
native bf16, int8 kernels (7-bit codes of the layers' outputs times 8-bit weights, int32 sums, by
AVX-VNNI's or AVX512-VNNI's dot products, or AVX2's byte products of weights of 7 bits,
:attr:`Kernel.weight_max`: 1.3–1.4× the float32 kernels' speed for the whole `tagger tag` with
AVX2's, docs/benchmarks.md). All take a right-hand side packed once per model
(:mod:`tagger.modules.packing`) and scan a whole bidirectional LSTM layer in one C call (with the
int8 and float32 kernels an upper layer's input product too, a time step at a time: :func:`scan_upper`),
the GIL released, so that batches in threads run side by side.

Which kernel runs is chosen here, by what the CPU has (:func:`f32_kernel`, :func:`i8_kernel`,
:func:`tagger.runtime.bf16.bf16_kernel`; ``--precision fp32`` keeps to float32), or by the
environment: ``TAGGER_CPU`` (``avx2``, ``avx-vnni``, ``avx512-vnni``) runs as such a CPU would, to
measure it on another (:data:`AS_CPU_KERNELS`); ``TAGGER_F32_KERNEL`` (a name of
:data:`F32_KERNELS`: ``none`` goes back to the per-time-step path of :mod:`tagger.runtime.scan`),
``TAGGER_I8_KERNEL`` (``none``: float32 products) and ``TAGGER_BF16_KERNEL`` ask for one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from tagger.modules.fused import AS_CPU_KERNELS, F32_KERNELS, FUSED, I8_KERNELS, KERNELS, _fastscan, asked
from tagger.modules.fused import f32_kernel  # noqa: F401 - the runtimes' name for it
from tagger.modules.packing import Packed
from tagger.options import as_cpu
from tagger.runtime import bf16


@dataclass(frozen=True)
class Kernel:
    """How the runtime multiplies: by the bf16 kernel ``bf16`` (an index of :data:`KERNELS`), or
    the float32 kernel ``f32`` (an index of :data:`F32_KERNELS`), or (both 0, false) by numpy a
    time step at a time; with ``i8`` (an index of :data:`I8_KERNELS`, beside an ``f32``) every
    product by the int8 kernel: the layers' outputs as codes at a fixed scale, the first layer's
    per-word rows (from embeddings of any range) at a scale per word."""

    bf16: int = 0
    f32: int = 0
    i8: int = 0

    def __bool__(self) -> bool:
        return bool(self.bf16 or self.f32)

    @property
    def name(self) -> str:
        if self.i8:
            return f"i8-{I8_KERNELS[self.i8]}"
        return KERNELS[self.bf16] if self.bf16 else f"f32-{F32_KERNELS[self.f32]}" if self.f32 else "numpy"

    @property
    def weight_max(self) -> int:
        """The largest magnitude of the int8 weights the int8 kernel takes (63 for AVX2's, which
        adds its byte products in int16; 127 for the VNNI kernels'), or 0 without one."""
        return _weight_max(self.i8) if self.i8 else 0

    @property
    def packing(self) -> str:
        """What the model's right sides are packed for (:func:`tagger.models.skip_lstm.export.export`)."""
        return "bf16" if self.bf16 else "i8" if self.i8 else "f32" if self.f32 else ""

    @property
    def table_type(self) -> type:
        """The type of what the kernel reads on the left: bf16 bits, or float32."""
        return np.uint16 if self.bf16 else np.float32

    def rows(self, work: bf16.Workspace, name: str, count: int, width: int) -> np.ndarray:
        """A left-hand side for ``count`` rows of ``width`` values under ``name`` in ``work``:
        padded bf16 rows (:func:`tagger.runtime.bf16.rows`), or float32 [count, width]."""
        if self.bf16:
            return work.rows(name, count, width)
        if self.i8:  # the int8 kernels' codes (packing.codes), rows of a multiple of 4
            return work.take(name, (count, -(-width // 4) * 4), np.uint8)
        return work.take(name, (count, width), np.float32)

    def left(self, x: np.ndarray) -> np.ndarray:
        """``x`` [M, K] float32 as the kernel's left-hand side."""
        if not self.bf16:
            return np.ascontiguousarray(x, dtype=np.float32)
        a = bf16.rows(*x.shape)
        a[: x.shape[0], : x.shape[1]] = bf16.to_bf16(x)
        return a


@lru_cache(maxsize=None)
def _weight_max(i8: int) -> int:
    """:attr:`Kernel.weight_max`, asked of the C side once per kernel (it is read at every product)."""
    return int(_fastscan.i8_weight_max(i8))


#: Products a time step at a time, in numpy (what a build without the C steps runs).
NUMPY = Kernel()


def product(kernel: Kernel, a: np.ndarray, b: Packed, out: np.ndarray, bias: np.ndarray | None = None, *,
            block: int | None = None, stride: int = 0, offset: int = 0, count: int | None = None,
            add: bool = False, by_row: np.ndarray | None = None) -> None:
    """``out`` (float32, rows contiguous) = ``a`` [≥ M rows] · b, plus ``bias``, or added to what
    is there (``add``); the columns' placement as :func:`tagger.runtime.bf16.product` says. For a
    right side packed for the int8 kernel, ``a`` is codes (uint8), and ``by_row`` [≥ M] (float32)
    a factor per row: codes at a scale per row (:func:`tagger.modules.packing.row_codes`)."""
    if kernel.bf16:
        bf16.product(kernel.bf16, a, b, out, bias, block=block, stride=stride, offset=offset, count=count, add=add)
        return
    rows_, width = out.shape
    block = b.n if block is None else block
    count = width if count is None else count
    last = (b.n // block - 1) * stride + offset + count
    i8 = b.tiles.dtype == np.int8  # packed for the int8 kernel: ``a`` the codes
    if (a.ndim != 2 or a.shape[1] != b.k or a.shape[0] < rows_ or a.dtype != (np.uint8 if i8 else np.float32)
            or a.strides[1] != a.itemsize or not out.flags.c_contiguous or out.dtype != np.float32 or last > width
            or block % 16 or count > block or (i8 and not (kernel.i8 and b.top <= kernel.weight_max))
            or (not i8 and b.tiles.dtype != np.float32)
            or (bias is not None and len(bias) < last) or (by_row is not None and (
                not i8 or by_row.dtype != np.float32 or not by_row.flags.c_contiguous or len(by_row) < rows_))):
        raise ValueError("product: shapes do not fit")
    if i8:
        _fastscan.i8_product(kernel.i8, rows_, b.n // 16, b.k // 4, a.ctypes.data, a.strides[0], b.tiles.ctypes.data,
                             b.corr.ctypes.data, b.deq.ctypes.data, 0 if by_row is None else by_row.ctypes.data,
                             int(add), out.ctypes.data, rows_, width,
                             0 if bias is None else bias.ctypes.data, block, stride, offset, count)
        return
    _fastscan.f32_product(kernel.f32, rows_, b.n // 16, b.k, a.ctypes.data, a.strides[0] // 4, b.tiles.ctypes.data,
                          int(add), out.ctypes.data, rows_, width, 0 if bias is None else bias.ctypes.data, block,
                          stride, offset, count)


def scan(kernel: Kernel, gx: np.ndarray, w_h: Packed, hidden: int, k: np.ndarray | None, mask: np.ndarray | None,
         out: np.ndarray | None, xs: np.ndarray, steps: int, batch: int, block: int = 0) -> None:
    """One bidirectional LSTM layer, all time steps in one C call: the arguments of
    :func:`tagger.runtime.bf16.scan`, ``xs`` the outputs in sentence order as the kernel's
    left-hand side (:meth:`Kernel.rows` of T·B, 2H)."""
    if kernel.bf16:
        bf16.scan(kernel.bf16, gx, w_h, hidden, k, mask, out, xs, steps, batch, block)
        return
    if w_h.tiles.dtype == np.int8:
        _scan_i8(kernel, gx, w_h, hidden, k, mask, out, xs, steps, batch, block)
        return
    width = w_h.cols
    _check_gates(gx, steps, batch, width, block)
    _check_f32_scan(w_h, hidden, xs, steps, batch)
    if not gx.flags.c_contiguous or gx.dtype != np.float32:
        raise ValueError("scan: shapes do not fit")
    _fastscan.f32_scan(kernel.f32, steps, batch, hidden, width // hidden - 1, 0 if k is None else 1,
                       0 if mask is None else mask.shape[0], w_h.n, gx.ctypes.data, int(block > 0),
                       gx.shape[-1] if block else 0, block, w_h.tiles.ctypes.data, 0 if k is None else k.ctypes.data,
                       0 if mask is None else mask.ctypes.data, 0 if out is None else out.ctypes.data, xs.ctypes.data,
                       xs.shape[1])


def _check_gates(gx: np.ndarray, steps: int, batch: int, width: int, block: int) -> None:
    """A ValueError unless ``gx`` is a layer's input projections as :func:`scan` reads them."""
    if block == 0 and gx.shape != (2, steps, batch, width):
        raise ValueError("scan: gx in scan order is [2, T, B, G]")
    if block and (gx.ndim != 2 or gx.shape[0] < steps * batch or block < width or gx.shape[1] < block + width):
        raise ValueError("scan: gx in sentence order is [T·B, 2·block]")


def _scan_i8(kernel: Kernel, gx: np.ndarray, w_h: Packed, hidden: int, k: np.ndarray | None, mask: np.ndarray | None,
             out: np.ndarray | None, xs: np.ndarray, steps: int, batch: int, block: int) -> None:
    """:func:`scan` with W_h packed for the int8 kernel (:func:`tagger.modules.packing.recurrent`):
    ``xs`` the outputs' codes at W_h's scale (:meth:`Kernel.rows`)."""
    width = w_h.cols
    _check_gates(gx, steps, batch, width, block)
    _check_i8_scan(kernel, w_h, hidden, xs, steps, batch)
    if not gx.flags.c_contiguous or gx.dtype != np.float32:
        raise ValueError("scan: shapes do not fit")
    _fastscan.i8_scan(kernel.i8, steps, batch, hidden, width // hidden - 1, 0 if k is None else 1,
                      0 if mask is None else mask.shape[0], w_h.n, gx.ctypes.data, int(block > 0),
                      gx.shape[-1] if block else 0, block, w_h.tiles.ctypes.data, w_h.corr.ctypes.data,
                      w_h.deq.ctypes.data, w_h.scale, 0 if k is None else k.ctypes.data,
                      0 if mask is None else mask.ctypes.data, 0 if out is None else out.ctypes.data, xs.ctypes.data,
                      xs.shape[1])


def scan_upper(kernel: Kernel, x: np.ndarray, w_x: Packed, bias_x: np.ndarray, src: np.ndarray | None,
               w_u: Packed | None, w_h: Packed, hidden: int, k: np.ndarray | None, mask: np.ndarray | None,
               out: np.ndarray | None, xs: np.ndarray, steps: int, batch: int) -> None:
    """:func:`scan` of an upper layer by the int8 or the float32 kernels, its input product in the
    scan, a time step at a time (no [T·B, 2G] of gates written and read back): ``x`` the layer
    below's outputs in sentence order as the kernel's left side (:meth:`Kernel.rows`), ``w_x`` and
    ``bias_x`` its input projection (:func:`tagger.modules.packing.input_projection`), and with a
    shortcut ``src``, the layer two below's outputs, and ``w_u`` its U
    (:func:`tagger.modules.packing.directions`, blocks of H rounded up to 16). The same floats as
    :func:`product` then :func:`scan`."""
    width, gp, i8 = w_h.cols, w_h.n, w_h.tiles.dtype == np.int8
    left = np.uint8 if i8 else np.float32
    if (kernel.bf16 or not kernel.f32 or w_x.tiles.dtype != w_h.tiles.dtype or w_x.n != 2 * gp
            or (i8 and max(w_h.top, w_x.top, 0 if w_u is None else w_u.top) > kernel.weight_max)
            or x.dtype != left or x.ndim != 2 or x.shape[0] < steps * batch or x.shape[1] != w_x.k
            or not x.flags.c_contiguous or bias_x.dtype != np.float32 or len(bias_x) < 2 * gp
            or (src is None) != (w_u is None)
            or (w_u is not None and (w_u.tiles.dtype != w_h.tiles.dtype or src.dtype != left or src.ndim != 2
                                     or src.shape[0] < steps * batch or src.shape[1] != w_u.k
                                     or not src.flags.c_contiguous or w_u.n % 32 or w_u.n // 2 < hidden
                                     or width != 5 * hidden))):
        raise ValueError("scan: shapes do not fit")
    ub = 0 if w_u is None else w_u.n // 2
    shortcut = (0, 0, 0, 0) if w_u is None else (src.ctypes.data, src.shape[1], w_u.k // 4 if i8 else w_u.k,
                                                 w_u.tiles.ctypes.data)
    common = (steps, batch, hidden, width // hidden - 1, 0 if k is None else 1, 0 if mask is None else mask.shape[0],
              gp, 0, 0, 0, 0, w_h.tiles.ctypes.data)
    states = (0 if k is None else k.ctypes.data, 0 if mask is None else mask.ctypes.data,
              0 if out is None else out.ctypes.data, xs.ctypes.data, xs.shape[1])
    if i8:
        _check_i8_scan(kernel, w_h, hidden, xs, steps, batch)
        _fastscan.i8_scan(kernel.i8, *common, w_h.corr.ctypes.data, w_h.deq.ctypes.data, w_h.scale, *states,
                          x.ctypes.data, x.shape[1], w_x.k // 4, w_x.tiles.ctypes.data, w_x.corr.ctypes.data,
                          w_x.deq.ctypes.data, bias_x.ctypes.data, *shortcut,
                          0 if w_u is None else w_u.corr.ctypes.data, 0 if w_u is None else w_u.deq.ctypes.data, ub)
        return
    _check_f32_scan(w_h, hidden, xs, steps, batch)
    _fastscan.f32_scan(kernel.f32, *common, *states, x.ctypes.data, x.shape[1], w_x.k, w_x.tiles.ctypes.data,
                       bias_x.ctypes.data, *shortcut, ub)


def _check_f32_scan(w_h: Packed, hidden: int, xs: np.ndarray, steps: int, batch: int) -> None:
    """A ValueError unless W_h and the outputs ``xs`` are what the float32 scan takes."""
    width = w_h.cols
    if (width % hidden or not 4 <= width // hidden <= 5 or w_h.k != hidden or w_h.tiles.dtype != np.float32
            or w_h.tiles.shape != (2 * w_h.n // 16, hidden, 16) or xs.shape[0] < steps * batch
            or xs.shape[1] < 2 * hidden or xs.dtype != np.float32 or not xs.flags.c_contiguous):
        raise ValueError("scan: shapes do not fit")


def _check_i8_scan(kernel: Kernel, w_h: Packed, hidden: int, xs: np.ndarray, steps: int, batch: int) -> None:
    """A ValueError unless W_h and the outputs ``xs`` are what the int8 scan takes."""
    width = w_h.cols
    if (not kernel.i8 or w_h.top > kernel.weight_max or width % hidden or not 4 <= width // hidden <= 5
            or w_h.k != hidden or hidden % 4 or w_h.tiles.shape != (2 * w_h.n // 16, hidden // 4, 16, 4)
            or xs.shape[0] < steps * batch or xs.shape[1] < 2 * hidden or xs.dtype != np.uint8
            or not xs.flags.c_contiguous):
        raise ValueError("scan: shapes do not fit")


@lru_cache(maxsize=1)
def i8_kernel() -> int:
    """The int8 kernel the runtime may use (beside the float32 one), an index of
    :data:`I8_KERNELS` (0: none): AVX512-VNNI's dot products, AVX-VNNI's or AVX2's on x86-64 (the
    widest the CPU has, asked once by CPUID; no more than ``TAGGER_CPU``'s); elsewhere none, as not
    measured to pay there.
    ``TAGGER_I8_KERNEL`` (a name of I8_KERNELS) asks for one, no more than the CPU has: ``none``
    turns them off."""
    if not FUSED:
        return 0
    has = int(_fastscan.i8_kernel())
    if as_cpu():
        has = min(has, I8_KERNELS.index(AS_CPU_KERNELS[as_cpu()][1]))
    wanted = asked("TAGGER_I8_KERNEL", I8_KERNELS, has)
    chosen = has if wanted is None else wanted
    while chosen and not _fastscan.i8_kernel_runs(chosen):  # a CPU with AVX512-VNNI need not have AVX-VNNI
        chosen -= 1
    return chosen
