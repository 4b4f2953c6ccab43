"""The settings ``tagger tag`` offers, as plain data without torch: the command's options are
built from them before any model is loaded (a tokenizer alone then runs without torch,
:mod:`tagger.runtime.tokenizer`). :mod:`tagger.tagging` and :mod:`tagger.modules.precision`
use them, and :func:`in_worker_process` says how many threads a model gets by default."""

import functools
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

#: ``--output-format`` values.
OUTPUT_FORMATS = ("conllu", "conllx", "tagged", "pipe", "jsonl", "msuper", "trees", "mrg")
#: ``--on-error`` values.
ON_ERROR = ("fail", "skip")
#: Sentences read, tagged and written at a time (``--chunk-size``), and words per batch: the
#: defaults of ``tagger tag`` and of the Python API alike.
CHUNK_SIZE = 1000
MAX_TOKENS = 2048
#: ``--precision`` values.
PRECISIONS = ("auto", "fp32", "bf16")


@dataclass(frozen=True)
class TagRequest:
    """How ``tagger tag`` and :meth:`tagger.api.Model.tag_file` read and write, the options of
    both (the model, device, threads and precision are :func:`tagger.load`'s): ``format`` the
    output format (None: the model's default), ``input_format`` (auto detects), ``columns`` a
    ``--columns`` spec, ``supertag_in``, multi-tagging ``top_k``/``beta``, ``chunk_size``
    sentences at a time, ``on_error`` (fail, skip), ``allow_missing_columns``,
    ``show_attention`` a picture file of the first sentence's attention, and ``presegmented``:
    raw text read by a tokenizer holds one sentence a line."""

    format: str | None = None
    input_format: str = "auto"
    columns: str | None = None
    supertag_in: str = "misc"
    top_k: int | None = None
    beta: float | None = None
    chunk_size: int = CHUNK_SIZE
    on_error: str = "fail"
    allow_missing_columns: bool = False
    show_attention: str | os.PathLike | None = None
    presegmented: bool = False  # raw text through a tokenizer: one sentence a line

    @property
    def multi(self) -> bool:
        """Several tags a word (``top_k``/``beta``), or the best with its probability (``msuper``)."""
        return self.top_k is not None or self.beta is not None or self.format == "msuper"

    @property
    def plain(self) -> bool:
        """One label a word and no picture: what the torch-free runtimes write."""
        return not self.multi and self.show_attention is None


#: ``TAGGER_CPU`` values: run as a CPU with AVX2 and FMA alone (AMD's before Zen 4, Intel's before
#: Alder Lake without AVX-512), with AVX-VNNI too (Intel's laptop and desktop cores since Alder
#: Lake), or with AVX-512 and its VNNI but no bf16 (Intel's servers from Cascade Lake to Ice Lake)
#: would: no native bf16 (and no AVX-512 kernels but for the last). To measure on another CPU
#: what such a CPU runs (:data:`tagger.runtime.kernels.AS_CPU_KERNELS`).
AS_CPUS = ("avx2", "avx-vnni", "avx512-vnni")


def as_cpu() -> str:
    """The CPU that ``TAGGER_CPU`` asks to run as (a name of :data:`AS_CPUS`), or ""."""
    value = os.environ.get("TAGGER_CPU", "")
    return value if value in AS_CPUS else ""


@functools.cache
def cpu_has_bf16() -> bool:
    """Whether this CPU multiplies bf16 natively (Linux ``/proc/cpuinfo`` flags; False elsewhere,
    and under :func:`as_cpu`)."""
    if as_cpu():
        return False
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return re.search(r"\b(avx512_bf16|amx_bf16)\b", info) is not None


def in_worker_process() -> bool:
    """Whether this process is a worker of a parallel engine: a ``multiprocessing`` child
    (``Pool``, ``ProcessPoolExecutor``) or a Ray worker (task or actor). Neither is imported
    here: a worker has always imported its engine (``tagger tag`` starts without them)."""
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is not None and multiprocessing.parent_process() is not None:
        return True
    ray = sys.modules.get("ray")  # a Ray worker has always imported ray; never import it here
    if ray is None:
        return False
    try:
        return ray.get_runtime_context().worker.mode == ray.WORKER_MODE
    except Exception:  # noqa: BLE001 - an old or partly initialised ray: not a worker we can tell
        return False
