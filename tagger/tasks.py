"""The tasks: one entry per thing a user can train for (``--task``), naming its model family,
the columns it learns and scores, its default preset and config, its dev metric and how
``--split wsj`` divides the Penn Treebank for it.

The runner (:mod:`tagger.training.run`), ``tagger evaluate``, ``tag``, ``info`` and the bench
scripts read these entries; none of them branches on a task's or a model's name. Adding a task
is one entry here plus its model family's own files (``tagger/models/FAMILY/``).
Plain data, no torch: importing it is cheap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from tagger.errors import TaggerError


def _frozen(values: dict[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(values))


@dataclass(frozen=True)
class Task:
    """One task. ``columns`` are what it learns and scores; with ``column_from_data``, ``--column``
    not given falls back through them in order (the first the training data has), else the
    model config's own default stands. ``column_key`` is the config key ``--column`` sets (a
    tagger's ``column`` may name several, ``upos,xpos,feats``: one model learns them all)."""

    name: str
    model: str  # the model family, a key of tagger.models.MODELS
    columns: tuple[str, ...]
    column_key: str  # "column" (a tagger learns it), "tag_column" (the POS a parser reads), "" (none: tokenize)
    preset: str  # the family's preset used without --preset
    metric: str  # the name of the dev score (Metric.score_name), for files that do not store it
    splits: str  # which task's WSJ sections --split wsj takes (tagger.formats.ptb.WSJ_SECTIONS)
    defaults: Mapping[str, Any] = field(default_factory=lambda: _frozen({}))  # config values below the preset's
    column_from_data: bool = True
    description: str = ""
    #: A pipeline task: a tagger of these columns (those the training data has; ``--column``
    #: names others) feeds the task's model, jackknifed, and one file holds both
    #: (:mod:`tagger.training.pipeline`). Empty: the task trains its model alone.
    tagger_columns: tuple[str, ...] = ()

    def default_column(self, sentences: Sequence[Any]) -> str:
        """The first of :attr:`columns` that the first 50 ``sentences`` all have: the column a
        tagger learns when ``--column`` is not given."""
        sample = sentences[:50]
        for name in self.columns:
            if sample and all(s.has(name) for s in sample):
                return name
        where = sentences[0] if sentences else None
        raise TaggerError(
            f"no {' or '.join(self.columns)} column to learn from; name one with --column",
            where.source if where else None,
            where.line if where else None,
        )


TASKS: dict[str, Task] = {
    "pos": Task("pos", "skip_lstm", ("upos", "xpos", "tag", "supertag"), "column", "fast", "accuracy", "pos",
                description="part-of-speech tags (UPOS, else XPOS, else a generic tag column)"),
    "ccg": Task("ccg", "skip_lstm", ("supertag", "tag"), "column", "fast", "accuracy", "ccg",
                # CCGbank practice: supertags seen fewer than 10 times in training are one RARE class.
                defaults=_frozen({"rare_tag_count": 10}),
                description="CCG supertags"),
    # Lemmas are learned as the edit rules that make them of the words (tagger.corpus.lemmas);
    # --column upos,lemma learns both in one tagger.
    "lemma": Task("lemma", "skip_lstm", ("lemma",), "column", "fast", "accuracy", "pos",
                  description="lemmas (LEMMA), learned as the edit rules that make them of the words"),
    "dep": Task("dep", "transition_parser", ("head", "deprel"), "tag_column", "ffn", "LAS (no punct)", "dep",
                column_from_data=False, description="labelled dependency trees (HEAD, DEPREL)"),
    "pipeline": Task("pipeline", "transition_parser", ("head", "deprel"), "tag_column", "bilstm-words",
                     "LAS (no punct)", "dep", column_from_data=False, tagger_columns=("upos", "xpos", "feats", "lemma"),
                     description="a tagger (UPOS, XPOS, FEATS, LEMMA) and a dependency parser (by default reading a BiLSTM "
                                 "started from that tagger; one reading POS trains on jackknifed tags), in one model file"),
    # The tree is no column of the data: tag_column names the POS copied from the input into its trees.
    "const": Task("const", "seq2seq", ("tree",), "tag_column", "fast", "bracket F1", "dep",
                  column_from_data=False, description="constituency trees (.mrg), as labelled brackets"),
    # Learns from the text of CoNLL-U sentences (# text, SpaceAfter=No, # newpar), not from a column.
    "tokenize": Task("tokenize", "tokenizer", (), "", "fast", "boundary F1", "dep", column_from_data=False,
                     description="tokens, multiword tokens and sentences of raw text, learned from CoNLL-U"),
}


def get_task(name: str) -> Task:
    """The task called ``name``; a one-line error naming the known ones otherwise."""
    task = TASKS.get(name)
    if task is None:
        raise TaggerError(f"--task must be one of {', '.join(TASKS)}")
    return task
