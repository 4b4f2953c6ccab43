"""Metric objects (tagging accuracy, multi-tagging, attachment scores) and their reports."""

from tagger.evaluation.metrics import (
    PRF,
    AttachmentCounts,
    AttachmentMetric,
    Metric,
    MultiTagMetric,
    TagMetric,
    is_punct,
    punct_flags,
    universal_label,
)
from tagger.evaluation.report import paired, render_table, score, score_parsing, score_tagging, to_json

__all__ = [
    "PRF",
    "AttachmentCounts",
    "AttachmentMetric",
    "Metric",
    "MultiTagMetric",
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
