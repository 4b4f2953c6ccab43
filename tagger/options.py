"""The settings ``tagger tag`` offers, as plain data without torch: the command's options are
built from them before any model is loaded (a tokenizer alone then runs without torch,
:mod:`tagger.tokenization.runtime`). :mod:`tagger.tagging` and :mod:`tagger.modules.precision`
use them."""

import functools
import re
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


@functools.cache
def cpu_has_bf16() -> bool:
    """Whether this CPU multiplies bf16 natively (Linux ``/proc/cpuinfo`` flags; False elsewhere)."""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return re.search(r"\b(avx512_bf16|amx_bf16)\b", info) is not None
