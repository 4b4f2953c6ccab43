"""Matrix products in bfloat16 at inference, where the processor multiplies bf16 natively.

Only the products' inputs are rounded (weights and activations, 8 bits of mantissa); products
accumulate and come back in float32, and everything else (gates, cell state, softmax) stays in
float32. Training never uses it. ``--precision auto`` takes bf16 only on CPUs that have
``avx512_bf16`` or ``amx_bf16`` (there a bf16 product is ~4× faster than fp32; elsewhere it is
emulated and slower), so the default is the fastest path of the machine at hand. ``tagger
tag`` and ``tagger evaluate`` convert the big matrices in place (:func:`apply` ``in_place``):
one copy of them in memory.
"""

from __future__ import annotations

import sys

import torch

from tagger.options import PRECISIONS, cpu_has_bf16  # noqa: F401 (imported from here too)


def resolve(precision: str, device: torch.device | str = "cpu") -> torch.dtype | None:
    """The dtype of inference matrix products: None (float32) or ``torch.bfloat16``."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    if precision == "fp32":
        return None
    if precision == "bf16":
        return torch.bfloat16
    return torch.bfloat16 if torch.device(device).type == "cpu" and cpu_has_bf16() else None


class Lowered:
    """Copies of weights in a lower dtype, made on first use and made again whenever the weight
    changes (its storage or version counter), so training in between never leaves them stale.
    Plain attributes, never saved with the model."""

    def __init__(self) -> None:
        self._copies: dict[tuple[int, torch.dtype], tuple[tuple, torch.Tensor]] = {}

    def __call__(self, weight: torch.Tensor, dtype: torch.dtype | None) -> torch.Tensor:
        if dtype is None or dtype == weight.dtype:
            return weight
        key = (id(weight), dtype)
        stamp = (weight.data_ptr(), weight._version, torch.is_inference_mode_enabled())
        hit = self._copies.get(key)
        if hit is None or hit[0] != stamp:
            hit = self._copies[key] = (stamp, weight.detach().to(dtype))
        return hit[1]


#: Rows of a product in a lower dtype are padded to a multiple of this. oneDNN, which multiplies
#: bf16 on the CPU, builds and keeps a kernel with its own buffers for every distinct shape it
#: meets (about 0.5 MB each), and a stream of length-bucketed batches has a new row count at
#: almost every batch: unpadded, ``tagger tag`` on EWT train peaked at 720-750 MB in bf16
#: against 410 MB in fp32. Padded, the shapes are few and the peak is fp32's; the extra rows
#: cost under 256 rows of products per call (a few percent of a 2048-word batch).
ROW_QUANTUM = 256


def lowered_matmul(x: torch.Tensor, weight: torch.Tensor, as_float: bool = True) -> torch.Tensor:
    """``x`` [N, K] (float32) times ``weight`` [..., K, M] in the weight's lower dtype (``x``
    rounded to it), as float32 [..., N, M] (or, not ``as_float``, in the lower dtype the product
    comes in: the same values); the rows go to the product padded to a multiple of
    :data:`ROW_QUANTUM` (see there) and the padding is cut off the result."""
    n = x.shape[0]
    rows = -(-n // ROW_QUANTUM) * ROW_QUANTUM
    if rows == n:
        low = x.to(weight.dtype)
    else:
        low = x.new_zeros((rows, x.shape[1]), dtype=weight.dtype)
        low[:n] = x
    product = torch.matmul(low, weight)[..., :n, :]
    return product.float() if as_float else product


def apply(model: torch.nn.Module, precision: str, in_place: bool = False) -> torch.dtype | None:
    """Set ``model``'s inference products to ``precision`` (auto, fp32, bf16) on the device its
    parameters are on, where the model supports it (``can_lower_precision``; other models stay
    float32); returns the dtype chosen. ``in_place`` (``tagger tag``, ``tagger evaluate``: a
    model loaded only to be applied): the big matrices themselves are converted, so that bf16
    holds one copy of them, not float32 weights and bf16 copies."""
    if not model.can_lower_precision:
        return None
    device = next(model.parameters()).device
    dtype = resolve(precision, device)
    if precision == "bf16" and device.type == "cpu" and not cpu_has_bf16():
        print("warning: --precision bf16 on a CPU without avx512_bf16/amx_bf16: the products are emulated "
              "and several times slower than fp32 (auto picks fp32 here)", file=sys.stderr)
    model.set_precision(dtype, in_place)
    return dtype
