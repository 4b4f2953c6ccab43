"""Several transition parsers deciding together (an ensemble): trained alike on the same data
with different seeds (``tagger train --task pipeline --parsers N``) or combined afterwards
(``tagger ensemble``). Decoding stays greedy and batched: at each step every member scores the
same configuration and the transition with the highest sum of the members' log-probabilities is
taken (:func:`.decoder.decode_together`), so the result is one tree per sentence, as from one
parser, at the members' summed cost.

In a model file an ensemble is ``{format_version, name: "parser_ensemble", members: [...],
state_dict: {}, meta}``, each member the plain archive of a parser file
(:func:`tagger.model_file.save_ensemble`), the same layout as a pipeline's stages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch
from torch import nn

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.evaluation.metrics import AttachmentMetric
from tagger.models.base import GreedyDecoding, NoTransformer
from tagger.models.transition_parser import decoder
from tagger.models.transition_parser.batch import ParserBatch
from tagger.models.transition_parser.model import TransitionParser

#: The ``name`` of an ensemble's archive.
NAME = "parser_ensemble"


@dataclass
class EnsembleBatch:
    """The same sentences as each member numbers them (``batches[k]`` for member ``k``)."""

    batches: list[ParserBatch]

    def to(self, device: torch.device) -> "EnsembleBatch":
        return EnsembleBatch([batch.to(device) for batch in self.batches])

    @property
    def n_tokens(self) -> int:
        return self.batches[0].n_tokens


def check_members(members: Sequence[nn.Module], names: Sequence[str] = ()) -> None:
    """A :class:`TaggerError` unless ``members`` are at least two transition parsers with the
    same transitions (labels, lifted labels included) and the same POS column: parsers trained
    on the same treebank. ``names`` (their files) go into the message."""
    if len(members) < 2:
        raise TaggerError("an ensemble needs at least two parsers")
    first = members[0]
    for k, member in enumerate(members):
        label = names[k] if k < len(names) else f"member {k + 1}"
        if not isinstance(member, TransitionParser):
            raise TaggerError(f"an ensemble combines transition parsers, not {member.name} models", label)
        if member.label_names != first.label_names:
            raise TaggerError("its dependency labels differ from the first parser's: an ensemble needs parsers "
                              "trained on the same treebank (and the same nonprojective setting)", label)
        if member.input_columns != first.input_columns:
            raise TaggerError(f"it reads {', '.join(member.input_columns) or 'no POS'}, the first parser "
                              f"{', '.join(first.input_columns) or 'no POS'}: an ensemble's parsers read the same "
                              "columns", label)


class ParserEnsemble(GreedyDecoding, NoTransformer, nn.Module):
    """Transition parsers (``members``) parsing together; applied like one parser (the parts of
    :class:`tagger.models.base.Model` that applying a model needs). It is not trained as one:
    each member is trained on its own."""

    name = NAME
    kind = "parser"
    reads_raw_text = False
    gives_distribution = False
    can_lower_precision = False
    batches_in_threads = False
    distribution_labels: list[str] = []

    def __init__(self, members: Sequence[TransitionParser]):
        super().__init__()
        check_members(members)
        self.members = nn.ModuleList(members)

    @property
    def first(self) -> TransitionParser:
        return self.members[0]  # type: ignore[return-value]

    @property
    def input_columns(self) -> list[str]:
        return self.first.input_columns

    @property
    def known_input_values(self) -> dict[str, frozenset[str]]:
        return self.first.known_input_values

    @property
    def output_columns(self) -> list[str]:
        return self.first.output_columns

    def collate(self, sentences: Sequence[Sentence], with_gold: bool = False) -> EnsembleBatch:
        """``sentences`` numbered by each member (for decoding: an ensemble is not trained)."""
        if with_gold:
            raise TaggerError("an ensemble is not trained as one: train its parsers, then combine them")
        return EnsembleBatch([member.collate(sentences, with_gold=False) for member in self.members])

    def decode(self, batch: EnsembleBatch) -> list[tuple[list[int], list[str]]]:
        """``(heads, deprels)`` per sentence, in order (:func:`.decoder.decode_together`)."""
        return decoder.decode_together(list(self.members), batch.batches)  # type: ignore[arg-type]

    def annotate(self, sentence: Sentence, prediction: tuple[list[int], list[str]]) -> None:
        self.first.annotate(sentence, prediction)

    def metric(self, sentences: Sequence[Sentence], predictions: Sequence[tuple[list[int], list[str]]]) -> AttachmentMetric:
        return self.first.metric(sentences, predictions)

    def set_precision(self, dtype: torch.dtype | None, in_place: bool = False) -> None:
        for member in self.members:
            member.set_precision(dtype, in_place)

    def distribution(self, batch: Any) -> torch.Tensor:
        raise TaggerError("a parser ensemble gives no tag distribution")
