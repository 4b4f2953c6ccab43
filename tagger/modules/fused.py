"""Whether the C steps (``tagger/modules/_fastscan.c``) are here, torch-free: ``pip install``
builds them where a C compiler is, and without them torch or numpy does it all. The taggers'
inference scan (:mod:`tagger.modules.recurrent`), the torch-free tagger runtime
(:mod:`tagger.runtime.skip_lstm`) and the tokenizer's numpy runtime
(:mod:`tagger.runtime.tokenizer`) import them from here."""

from __future__ import annotations

import os

try:
    from tagger.modules import _fastscan
except ImportError:  # pragma: no cover - no compiler at install
    _fastscan = None

#: ``TAGGER_FUSED_SCAN=0`` keeps every scan that would use the C step in torch or numpy (to
#: compare, or to rule the C step out).
FUSED = _fastscan is not None and os.environ.get("TAGGER_FUSED_SCAN", "1") != "0"

#: The bf16 product kernels of ``_fastscan``, by number; :func:`tagger.runtime.bf16.bf16_kernel`
#: chooses one.
KERNELS = ("none", "avx512-bf16", "amx")

#: The float32 kernels of ``_fastscan`` (products and whole-layer scans), by number:
#: :func:`tagger.runtime.kernels.f32_kernel` chooses one; ``generic`` is plain C vectorised by the
#: compiler for its target (NEON on aarch64).
F32_KERNELS = ("none", "generic", "avx2", "avx512")

#: The int8 kernels of ``_fastscan`` (products and whole-layer scans with 7-bit activations and
#: 8-bit weights), by number: :func:`tagger.runtime.kernels.i8_kernel` chooses one.
I8_KERNELS = ("none", "avx2", "avx-vnni", "avx512-vnni")




def asked(variable: str, names: tuple[str, ...], has: int) -> int | None:
    """The kernel the environment ``variable`` asks for (a name of ``names``), no more than the
    ``has`` this CPU runs; None when it asks for none of them."""
    wanted = os.environ.get(variable, "")
    return min(has, names.index(wanted)) if wanted in names else None


__all__ = ["F32_KERNELS", "FUSED", "I8_KERNELS", "KERNELS", "_fastscan", "asked"]
