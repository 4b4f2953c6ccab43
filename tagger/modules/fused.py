"""Whether the C steps (``tagger/modules/_fastscan.c``) are here, torch-free: ``pip install``
builds them where a C compiler is, and without them torch or numpy does it all. The taggers'
inference scan (:mod:`tagger.modules.recurrent`), the torch-free tagger runtime
(:mod:`tagger.runtime.skip_lstm`) and the tokenizer's numpy runtime
(:mod:`tagger.tokenization.runtime`) import them from here."""

from __future__ import annotations

import os
from functools import lru_cache

try:
    from tagger.modules import _fastscan
except ImportError:  # pragma: no cover - no compiler at install
    _fastscan = None

#: ``TAGGER_FUSED_SCAN=0`` keeps every scan that would use the C step in torch or numpy (to
#: compare, or to rule the C step out).
FUSED = _fastscan is not None and os.environ.get("TAGGER_FUSED_SCAN", "1") != "0"

#: The bf16 product kernels of ``_fastscan`` (:mod:`tagger.runtime.bf16`), by number.
KERNELS = ("none", "avx512-bf16", "amx")


@lru_cache(maxsize=1)
def bf16_kernel() -> int:
    """The bf16 product kernel the torch-free tagger runtime uses, an index of :data:`KERNELS`
    (0: none, products in float32). By default AMX where the CPU has it and Linux grants it
    (asked here, once); the AVX512-BF16 dot products where they are all the CPU has and they
    multiply at least half as fast as numpy's float32 here, measured once in ~20 ms
    (:func:`tagger.runtime.bf16.dot_products_pay`; docs/benchmarks.md, "Tagging speed"). The
    environment variable ``TAGGER_BF16_KERNEL`` (a name of KERNELS) asks for one: ``none`` turns
    them off, ``avx512-bf16`` takes those dot products even where AMX is; no more than the CPU has."""
    if not FUSED:
        return 0
    has = int(_fastscan.bf16_kernel())
    wanted = os.environ.get("TAGGER_BF16_KERNEL", "")
    if wanted in KERNELS:
        return min(has, KERNELS.index(wanted))
    if has == KERNELS.index("avx512-bf16"):
        from tagger.runtime.bf16 import dot_products_pay  # numpy, and only on such a CPU

        return has if dot_products_pay() else 0
    return has


__all__ = ["FUSED", "KERNELS", "_fastscan", "bf16_kernel"]
