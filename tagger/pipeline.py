"""Several models applied in order to the same sentences, in one process: a tagger filling UPOS,
XPOS and FEATS, then a parser reading them and filling HEAD and DEPREL.

A :class:`Pipeline` is what ``tagger tag --model pos.tagger --model dep.model`` runs and what a
pipeline model file (``tagger train --task pipeline``) loads as. Each chunk of sentences goes
through every stage before it is written: stage ``k`` reads the columns stages ``< k`` wrote into
the sentence records, so nothing is written out and read back between stages.

It shows the callers of a model (:mod:`tagger.inference`, :mod:`tagger.tagging`, :mod:`tagger.api`,
``tagger evaluate``) the parts of :class:`tagger.models.base.Model` that applying a model needs:
``output_columns`` (every stage's, in order), ``input_columns`` (what the input must bring: columns
a stage reads that no earlier stage fills), decoding and precision settings (passed to the stages
that have them), :meth:`output_counts`; :func:`tagger.inference.annotate` runs its stages in turn
(this module imports nothing that applies a model). It is not trained as one model: each stage is trained on its own
(``--task pipeline`` trains them in turn) and keeps its own model file layout inside the
pipeline's file (:func:`tagger.model_file.save_pipeline`).
"""

from __future__ import annotations

from typing import Any, Sequence

import torch
from torch import nn

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError


class Pipeline(nn.Module):
    """``stages`` (loaded models, :class:`tagger.models.base.Model`) applied in order."""

    name = "pipeline"
    kind = "pipeline"
    gives_distribution = False  # per-token distributions are a tagger's: run the tagger alone for --top-k/--beta
    batches_in_threads = False  # each stage's own batches may run in threads (tagger.inference.predict)
    has_attention = False
    distribution_labels: list[str] = []

    def __init__(self, stages: Sequence[nn.Module]):
        super().__init__()
        if not stages:
            raise ValueError("a pipeline needs at least one stage")
        self.stages = nn.ModuleList(stages)

    # ----------------------------------------------------------------------------- what it declares
    @property
    def can_lower_precision(self) -> bool:  # type: ignore[override]
        return any(stage.can_lower_precision for stage in self.stages)

    @property
    def reads_raw_text(self) -> bool:  # type: ignore[override]
        """Its first stage is a tokenizer (:func:`split_raw` takes it off)."""
        return self.stages[0].reads_raw_text

    @property
    def has_beam(self) -> bool:
        return any(stage.has_beam for stage in self.stages)

    @property
    def output_columns(self) -> list[str]:
        """Every stage's output columns, in stage order, each once."""
        columns: list[str] = []
        for stage in self.stages:
            columns += [c for c in stage.output_columns if c not in columns]
        return columns

    @property
    def known_input_values(self) -> dict[str, frozenset[str]]:
        """Of :attr:`input_columns`, the values the stage that reads each learnt from."""
        known: dict[str, frozenset[str]] = {}
        for stage in self.stages:
            known.update({c: v for c, v in stage.known_input_values.items() if c in self.input_columns and c not in known})
        return known

    @property
    def input_columns(self) -> list[str]:
        """The columns some stage reads that no stage before it fills: what the input must have."""
        needed: list[str] = []
        filled: set[str] = set()
        for stage in self.stages:
            needed += [c for c in stage.input_columns if c not in filled and c not in needed]
            filled.update(stage.output_columns)
        return needed

    def describe(self) -> str:
        """``skip_lstm (upos, xpos, feats) → transition_parser (head, deprel)``."""
        return " → ".join(f"{stage.name} ({', '.join(stage.output_columns)})" for stage in self.stages)

    # ----------------------------------------------------------------------------- settings
    def set_precision(self, dtype: torch.dtype | None, in_place: bool = False) -> None:
        """Set on every stage that can lower its precision; the others stay float32."""
        for stage in self.stages:
            if stage.can_lower_precision:
                stage.set_precision(dtype, in_place)

    def set_decoding(self, beam: int | None = None, constrained: bool | None = None) -> None:
        """Passed to the stages with a beam (constituency parsers); refused when none has one."""
        if beam is None and constrained is None:
            return
        beamed = [stage for stage in self.stages if stage.has_beam]
        if not beamed:
            raise TaggerError("no model of this pipeline has a beam search (--beam and --constrained are for "
                              "constituency parsers)")
        for stage in beamed:
            stage.set_decoding(beam, constrained)

    def distribution(self, batch: Any) -> torch.Tensor:
        raise TaggerError("a pipeline gives no tag distribution: run its tagger alone for --top-k/--beta")

    def attention(self, sentence: Sentence) -> Any:
        raise TaggerError("a pipeline has no attention to show: run its constituency parser alone")

    # ----------------------------------------------------------------------------- applying it
    def output_counts(self, predictions: Sequence[list]) -> dict[str, int]:
        """The stages' own counts (:meth:`tagger.models.base.Model.output_counts`), summed."""
        counts: dict[str, int] = {}
        for stage, predicted in zip(self.stages, predictions):
            for key, number in stage.output_counts(predicted).items():
                counts[key] = counts.get(key, 0) + number
        return counts


def chain(stages: Sequence[nn.Module]) -> nn.Module:
    """One model as it is, several as a :class:`Pipeline` (stages that are pipelines are opened
    up); a model that reads raw text (a tokenizer) anywhere but first is refused."""
    flat: list[nn.Module] = []
    for stage in stages:
        flat += list(stage.stages) if isinstance(stage, Pipeline) else [stage]
    if any(stage.reads_raw_text for stage in flat[1:]):
        if flat[0].reads_raw_text:  # a tokenizer, then a pipeline file that begins with its own
            raise TaggerError("these models hold two tokenizers (a pipeline model file begins with its own): "
                              "give one, first (--model tok.model --model pos.tagger ..., or the pipeline alone)")
        raise TaggerError("a tokenizer reads raw text and makes the sentences: give its model first "
                          "(--model tok.model --model pos.tagger ...)")
    return flat[0] if len(flat) == 1 else Pipeline(flat)


def split_raw(model: nn.Module) -> tuple[nn.Module | None, nn.Module | None]:
    """``(tokenizer, the rest)`` of a model whose first stage reads raw text (the rest None when
    there is nothing after it); ``(None, model)`` otherwise."""
    if not model.reads_raw_text:
        return None, model
    if not isinstance(model, Pipeline):
        return model, None
    first, *rest = model.stages
    return first, (None if not rest else rest[0] if len(rest) == 1 else Pipeline(rest))
