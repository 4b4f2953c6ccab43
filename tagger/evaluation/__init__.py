"""Metric objects (tagging accuracy, multi-tagging, attachment scores, EVALB's bracket scores, the
CoNLL 2018 shared task's scores of a system's own tokenisation) and their reports. The reports
(:mod:`tagger.evaluation.report`, which draws its tables with rich) are imported on first use: the
models import the metrics, and ``tagger tag`` needs no report."""

from tagger.evaluation.aligned import AlignedMetric, F1Metric, score_aligned
from tagger.evaluation.evalb import COLLINS, BracketMetric, EvalbParams, read_params, render_evalb
from tagger.evaluation.metrics import (
    PRF,
    AttachmentCounts,
    AttachmentMetric,
    ColumnsMetric,
    Metric,
    MultiTagMetric,
    NonprojectiveCounts,
    TagMetric,
    is_punct,
    punct_flags,
    universal_label,
)

#: The names :mod:`tagger.evaluation.report` gives the package, imported when first asked for.
REPORT = ("paired", "render_table", "score", "score_parsing", "score_tagging", "to_json")

__all__ = [
    "AlignedMetric",
    "F1Metric",
    "score_aligned",
    "COLLINS",
    "BracketMetric",
    "EvalbParams",
    "read_params",
    "render_evalb",
    "PRF",
    "AttachmentCounts",
    "AttachmentMetric",
    "ColumnsMetric",
    "Metric",
    "MultiTagMetric",
    "NonprojectiveCounts",
    "TagMetric",
    "is_punct",
    "punct_flags",
    "universal_label",
    "paired",
    "render_table",
    "score",
    "score_parsing",
    "score_tagging",
    "to_json",
]


def __getattr__(name: str):
    if name in REPORT:
        from tagger.evaluation import report

        return getattr(report, name)
    raise AttributeError(f"module 'tagger.evaluation' has no attribute {name!r}")
