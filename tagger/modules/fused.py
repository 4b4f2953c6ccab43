"""Whether the C steps (``tagger/modules/_fastscan.c``) are here, torch-free: ``pip install``
builds them where a C compiler is, and without them torch or numpy does it all. The taggers'
inference scan (:mod:`tagger.modules.recurrent`), the torch-free tagger runtime
(:mod:`tagger.runtime.skip_lstm`) and the tokenizer's numpy runtime
(:mod:`tagger.runtime.tokenizer`) import them from here."""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from types import ModuleType

#: The version of ``_fastscan.c``'s functions and arguments this code calls (its ``VERSION``).
C_VERSION = 2


def current(module: ModuleType | None) -> ModuleType | None:
    """``module`` (the built C steps) if it was built from sources of :data:`C_VERSION`, else None,
    said once on stderr: a build left from older sources (a ``git pull`` without ``pip install -e
    .``) would be called with arguments it does not take. Without it, torch or numpy does it all."""
    if module is None or getattr(module, "VERSION", None) == C_VERSION:
        return module
    print(f"tagger: the C steps were built from other sources (version {getattr(module, 'VERSION', 1)}, "
          f"this code's {C_VERSION}); running without them until `pip install -e .` rebuilds them", file=sys.stderr)
    return None


try:
    from tagger.modules import _fastscan
except ImportError:  # pragma: no cover - no compiler at install
    _fastscan = None
_fastscan = current(_fastscan)

#: ``TAGGER_FUSED_SCAN=0`` keeps every scan that would use the C step in torch or numpy (to
#: compare, or to rule the C step out).
FUSED = _fastscan is not None and os.environ.get("TAGGER_FUSED_SCAN", "1") != "0"

#: The bf16 product kernels of ``_fastscan``, by number; :func:`tagger.runtime.bf16.bf16_kernel`
#: chooses one.
KERNELS = ("none", "avx512-bf16", "amx")

#: The float32 kernels of ``_fastscan`` (products and whole-layer scans), by number:
#: :func:`f32_kernel` chooses one; ``generic`` is plain C vectorised by the
#: compiler for its target (NEON on aarch64).
F32_KERNELS = ("none", "generic", "avx2", "avx512")

#: The int8 kernels of ``_fastscan`` (products and whole-layer scans with 7-bit activations and
#: 8-bit weights), by number: :func:`tagger.runtime.kernels.i8_kernel` chooses one.
I8_KERNELS = ("none", "avx2", "avx-vnni", "avx512-vnni")


#: Per ``TAGGER_CPU`` value (:func:`tagger.options.as_cpu`), the best float32 and int8 kernels such a CPU runs.
AS_CPU_KERNELS = {"avx2": ("avx2", "avx2"), "avx-vnni": ("avx2", "avx-vnni"), "avx512-vnni": ("avx512", "avx512-vnni")}


def asked(variable: str, names: tuple[str, ...], has: int) -> int | None:
    """The kernel the environment ``variable`` asks for (a name of ``names``), no more than the
    ``has`` this CPU runs; None when it asks for none of them."""
    wanted = os.environ.get(variable, "")
    return min(has, names.index(wanted)) if wanted in names else None


@lru_cache(maxsize=1)
def f32_kernel() -> int:
    """The float32 kernel the runtimes use where bf16 is not chosen, an index of
    :data:`F32_KERNELS` (0: none, products a time step at a time in numpy): the best this CPU
    runs (asked once, by CPUID; AVX2 at most under ``TAGGER_CPU``, :func:`tagger.options.as_cpu`).
    ``TAGGER_F32_KERNEL`` (a name of F32_KERNELS) asks for one, no more than the CPU has. Here,
    without numpy, for the tokenizer's C runtime (:mod:`tagger.runtime.c_tokenizer`);
    :mod:`tagger.runtime.kernels` gives it to the others."""
    from tagger.options import as_cpu

    if not FUSED:
        return 0
    has = int(_fastscan.f32_kernel())
    if as_cpu():
        has = min(has, F32_KERNELS.index(AS_CPU_KERNELS[as_cpu()][0]))
    wanted = asked("TAGGER_F32_KERNEL", F32_KERNELS, has)
    return has if wanted is None else wanted


__all__ = ["AS_CPU_KERNELS", "F32_KERNELS", "FUSED", "I8_KERNELS", "KERNELS", "_fastscan", "asked", "f32_kernel"]
