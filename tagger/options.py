"""The settings ``tagger tag`` offers, as plain data without torch: the command's options are
built from them before any model is loaded (a tokenizer alone then runs without torch,
:mod:`tagger.tokenization.runtime`). :mod:`tagger.tagging` and :mod:`tagger.modules.precision`
use them."""

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
