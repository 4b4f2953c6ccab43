"""The model interface: everything the trainer, inference, the runner and the CLI call on a model.

Every model family (``tagger/models/FAMILY/``) is a ``torch.nn.Module`` subclass that implements
:class:`Model`; nothing outside the family looks inside it. What a family can or cannot do is
declared as plain class attributes (``gives_distribution``, ``can_distill``, ``can_bootstrap``,
``can_lower_precision``, ``batches_in_threads``, ``has_beam``, ``has_attention``), read by the callers instead of probing
for methods; a family without a
capability still has the method, which raises :class:`tagger.errors.TaggerError`.

Shapes: ``B`` sentences in a batch, ``T`` the longest of them in words, ``C`` output classes
(tags), ``N`` a parser's transitions in a batch, ``A`` its actions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Iterator, Protocol, Sequence, runtime_checkable

import torch

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.evaluation.metrics import Metric


class Batch(Protocol):
    """What :meth:`Model.collate` gives: tensors of ``B`` sentences, moved with :meth:`to`."""

    lengths: torch.Tensor  # [B] words per sentence

    def to(self, device: torch.device) -> "Batch": ...

    @property
    def n_tokens(self) -> int: ...


@dataclass
class SoftTargets:
    """Soft targets of a batch for knowledge distillation (:meth:`Model.with_soft_targets`):
    per token of one column the ``K`` most probable labels under the teachers' averaged
    distribution (at ``temperature``), renormalised. The loss is ``gold_weight`` × the gold
    cross-entropy + (1 − ``gold_weight``) × ``temperature``² × the cross-entropy of the model's
    distribution at ``temperature`` to these targets."""

    ids: torch.Tensor  # [B, T, K] label ids in the column's labels (soft_labels(column)), 0 at padding
    probs: torch.Tensor  # [B, T, K] their probabilities, summing to 1 per token; 0 at padding
    temperature: float = 1.0
    gold_weight: float = 0.0

    def to(self, device: torch.device, non_blocking: bool = False) -> "SoftTargets":
        return SoftTargets(self.ids.to(device, non_blocking=non_blocking), self.probs.to(device, non_blocking=non_blocking),
                           self.temperature, self.gold_weight)


@runtime_checkable
class Model(Protocol):
    """A trainable tagger or parser (see the module docstring)."""

    # ------------------------------------------------------------------ declared by the class
    name: ClassVar[str]  #: the family's name in ``tagger.models.MODELS`` and in model files
    kind: ClassVar[str]  #: ``"tagger"`` (usable as ``--pos-model``) or ``"parser"``
    Config: ClassVar[type]  #: the model config dataclass (hyper-parameters of the network only)
    PRESETS: ClassVar[dict[str, dict[str, Any]]]  #: named presets, ``presets.py`` (see tagger.config)
    default_preset: ClassVar[str]
    training_defaults: ClassVar[dict[str, Any]]  #: TrainingConfig values under every preset of the family
    gives_distribution: ClassVar[bool]  #: :meth:`distribution` gives per-token tag probabilities
    can_distill: ClassVar[bool]  #: :meth:`loss` learns from :meth:`with_soft_targets`' teacher distributions
    can_bootstrap: ClassVar[bool]  #: :meth:`bootstrap` initialises it from another trained model
    can_take_encoder: ClassVar[bool]  #: :meth:`with_encoder` builds it around a trained tagger's encoder
    #: its config may name a pretrained transformer (``--encoder``): :meth:`load_transformer`
    takes_transformer: ClassVar[bool]
    transformer_key: ClassVar[str]  #: the config key ``--encoder`` sets ("" where ``takes_transformer`` is False)
    can_lower_precision: ClassVar[bool]  #: :meth:`set_precision` can run products in bfloat16
    batches_in_threads: ClassVar[bool]  #: its forward pass is thread-safe: inference may run batches in threads at once
    has_beam: ClassVar[bool]  #: :meth:`set_decoding` sets its beam search (width, constraint)
    has_attention: ClassVar[bool]  #: :meth:`attention` gives its attention matrix
    #: It reads raw text and makes the sentences (a tokenizer): ``tagger tag`` gives it the input
    #: text, not a format reader's sentences, and it must be the first of chained models.
    reads_raw_text: ClassVar[bool]

    # ------------------------------------------------------------------ per instance
    config: Any  #: an instance of ``Config``
    vocabs: dict[str, list[str]]  #: plain lists, saved in the model file as they are
    training: bool  #: ``torch.nn.Module``'s train/eval flag

    @property
    def input_columns(self) -> list[str]:
        """The columns of its input it reads besides the words (a parser's UPOS): input without
        them is refused (:class:`tagger.inference.InputCheck`)."""
        ...

    @property
    def known_input_values(self) -> dict[str, frozenset[str]]:
        """Per column of :attr:`input_columns` whose values it learnt as a closed set (a parser's
        POS tags), those values: input mostly of others (another tag set) gets a warning
        (:class:`tagger.inference.InputCheck`). Empty where it reads no such column."""
        ...

    @property
    def output_columns(self) -> list[str]:
        """The columns :meth:`annotate` fills, in the order a writer shows them."""
        ...

    @property
    def distribution_labels(self) -> list[str]:
        """The ``C`` tags that :meth:`distribution`'s last axis is over."""
        ...

    # ------------------------------------------------------------------ before the model exists
    @classmethod
    def vocabs_from(cls, config: Any, sentences: Sequence[Sentence]) -> dict[str, list[str]]:
        """The vocabularies of the training ``sentences`` (what ``__init__(config, vocabs)`` takes)."""
        ...

    @classmethod
    def training_units(cls, config: Any, sentences: Sequence[Sentence]) -> list[Sentence]:
        """What it trains and selects on, made from the sentences read (a tokenizer's windows of
        characters); the sentences themselves for most families."""
        ...

    @classmethod
    def vocabs_with_labels(cls, config: Any, vocabs: dict[str, list[str]],
                           labels: dict[str, Sequence[str]]) -> dict[str, list[str]]:
        """``vocabs`` (:meth:`vocabs_from`) with, per column of ``labels`` (among
        :meth:`soft_columns`), every one of its labels among that column's, those missing added:
        a distilled model covers its teachers' labels. TaggerError where ``can_distill`` is False."""
        ...

    @classmethod
    def soft_columns(cls, config: Any) -> list[str]:
        """The output columns one head scores whole (:meth:`soft_labels`, :meth:`distributions`):
        what a teacher teaches and a student learns from soft targets; empty where ``can_distill``
        is False."""
        ...

    @classmethod
    def training_meta(cls, config: Any, sentences: Sequence[Sentence]) -> tuple[dict[str, Any], list[str]]:
        """Facts about the training sentences for the model file's meta, and notes to show
        before training (e.g. trees the parser will skip)."""
        ...

    @classmethod
    def required_columns(cls, config: Any) -> list[str]:
        """The columns every training and dev sentence must have."""
        ...

    @classmethod
    def pos_column(cls, config: Any) -> str | None:
        """The POS column of its input that ``--pos-model`` retags before training (None: it
        reads none)."""
        ...

    @classmethod
    def pos_columns(cls, config: Any) -> list[str]:
        """Every column of its input that a tagger predicts for it (:attr:`input_columns`,
        known from the config alone): what the taggers of ``--jackknife`` learn (empty: it
        reads none)."""
        ...

    # ------------------------------------------------------------------ training and inference
    def collate(self, sentences: Sequence[Sentence], with_gold: bool = True) -> Batch:
        """``sentences`` (non-empty ones) as a :class:`Batch` on the CPU; gold targets only
        ``with_gold``. A batch keeps the sentences' order."""
        ...

    def forward(self, batch: Any) -> torch.Tensor:
        """Scores (unnormalised log-probabilities): a tagger's ``[B, T, C (+ auxiliary tags)]``,
        a parser's ``[N, A]`` for the oracle's ``N`` transitions (teacher forcing)."""
        ...

    def __call__(self, batch: Any) -> torch.Tensor:
        """:meth:`forward`, through ``torch.nn.Module``'s hooks."""
        ...

    def loss(self, scores: torch.Tensor, batch: Any) -> torch.Tensor:
        """The scalar training loss of ``scores`` (from :meth:`forward`) against the batch's gold,
        and against its :class:`SoftTargets` where it carries some (:meth:`with_soft_targets`)."""
        ...

    def with_soft_targets(self, batch: Any, soft: dict[str, SoftTargets]) -> Batch:
        """``batch`` (from :meth:`collate`, with gold) carrying ``soft`` (per column of
        :meth:`soft_columns`), which :meth:`loss` then learns those columns from (knowledge
        distillation, :mod:`tagger.training.distill`). TaggerError where ``can_distill`` is False."""
        ...

    def distributions(self, batch: Any) -> dict[str, torch.Tensor]:
        """Per column of :meth:`soft_columns`, per-token probabilities ``[B, T, C_column]`` over
        :meth:`soft_labels` of it, from one forward pass (a teacher's, for distillation).
        TaggerError where ``can_distill`` is False."""
        ...

    def soft_labels(self, column: str) -> list[str]:
        """The labels of ``column`` (one of :meth:`soft_columns`) that :meth:`distributions`'
        last axis is over. TaggerError where ``can_distill`` is False."""
        ...

    def decode(self, batch: Any) -> list:
        """The best output of every sentence of ``batch``, in order: a tagger's tag strings
        (``list[str]`` of length ``lengths[b]``), a parser's ``(heads, deprels)``."""
        ...

    def distribution(self, batch: Any) -> torch.Tensor:
        """Per-token probabilities ``[B, T, C]`` over :attr:`distribution_labels` (multi-tagging).
        TaggerError where ``gives_distribution`` is False."""
        ...

    def annotate(self, sentence: Sentence, prediction: Any) -> None:
        """Write one :meth:`decode` result into ``sentence``'s :attr:`output_columns`."""
        ...

    def output_counts(self, predictions: Sequence[Any]) -> dict[str, int]:
        """Counts worth reporting about ``predictions`` once :meth:`annotate` has written them
        (the seq2seq parser's ``repaired``: outputs that needed repair into a tree); ``{}`` for most."""
        ...

    def tune_decoding(self, dev: Sequence[Sentence]) -> dict[str, Any]:
        """After training, with the weights saved as the best: set the decoding choices that the
        ``dev`` sentences decide (a tagger's tag dictionary, :mod:`tagger.corpus.lexicon`), kept
        in the vocabularies; returns them, for the summary (``{}`` where there are none)."""
        ...

    def set_decoding(self, beam: int | None = None, constrained: bool | None = None) -> None:
        """Decode with a beam ``beam`` wide (1: greedy), and ``constrained`` to well-formed
        output or not, from now on (None: as it was). TaggerError where ``has_beam`` is False."""
        ...

    def attention(self, sentence: Sentence) -> tuple[list[str], list[str], torch.Tensor]:
        """What the decoder looked at while parsing ``sentence``: its input words, the symbols it
        emitted and the attention matrix ``[symbols, words]``. TaggerError where
        ``has_attention`` is False."""
        ...

    def metric(self, sentences: Sequence[Sentence], predictions: Sequence[Any]) -> Metric:
        """The dev metric of ``predictions`` against the gold ``sentences`` (``.score`` in 0..1)."""
        ...

    # ------------------------------------------------------------------ initialisation, precision
    def load_embeddings(self, words: list[str], vectors: torch.Tensor) -> int:
        """Set word embeddings from pretrained ``vectors`` ``[V, D]`` (rows of ``words``); how
        many rows were set. TaggerError when ``D`` is not the model's word size."""
        ...

    def bootstrap(self, source: Any, gates: list[str] | None = None) -> None:
        """Initialise from the trained model ``source`` (ValueError when it does not fit).
        TaggerError where ``can_bootstrap`` is False."""
        ...

    @classmethod
    def with_encoder(cls, config: Any, vocabs: dict[str, list[str]], source: Any) -> "Model":
        """A new model of ``config`` and ``vocabs`` whose sentence encoder starts as the trained
        tagger ``source``'s (its shape, vocabularies and weights; ``config`` and ``vocabs`` are
        adjusted to them), to be trained on. ValueError when ``source`` cannot give one;
        TaggerError where ``can_take_encoder`` is False."""
        ...

    def load_transformer(self) -> str:
        """Load the pretrained weights of the transformer its config names, before training; a
        note saying what was loaded ("" where it names none). TaggerError where
        ``takes_transformer`` is False."""
        ...

    def pretrained_parameters(self) -> list[torch.nn.Parameter]:
        """The parameters of pretrained encoders that are trained (a fine-tuned transformer's):
        the trainer gives them their own learning rate and warm-up. Empty for most models."""
        ...

    def set_precision(self, dtype: torch.dtype | None, in_place: bool = False) -> None:
        """Inference matrix products in ``dtype`` (None: float32); ``in_place``: the big matrices
        themselves are converted (inference only). TaggerError for a ``dtype`` where
        ``can_lower_precision`` is False."""
        ...

    # ------------------------------------------------------------------ from torch.nn.Module
    def parameters(self, recurse: bool = True) -> Iterator[torch.nn.Parameter]: ...
    def state_dict(self) -> dict[str, torch.Tensor]: ...
    def load_state_dict(self, state_dict: dict[str, torch.Tensor], strict: bool = True) -> Any: ...
    def to(self, device: torch.device | str) -> Any: ...
    def train(self, mode: bool = True) -> Any: ...
    def eval(self) -> Any: ...


class NoDistillation:
    """The distillation part of :class:`Model` for families that cannot learn from soft targets
    (``can_distill`` False)."""

    can_distill = False
    name: ClassVar[str]

    @classmethod
    def vocabs_with_labels(cls, config: Any, vocabs: dict[str, list[str]],
                           labels: dict[str, Sequence[str]]) -> dict[str, list[str]]:
        raise TaggerError(f"the {cls.name} model cannot be distilled (distillation trains taggers)")

    @classmethod
    def soft_columns(cls, config: Any) -> list[str]:
        return []

    def with_soft_targets(self, batch: Any, soft: dict[str, SoftTargets]) -> Batch:
        raise TaggerError(f"the {self.name} model cannot be distilled (distillation trains taggers)")

    def distributions(self, batch: Any) -> dict[str, torch.Tensor]:
        raise TaggerError(f"the {self.name} model cannot teach (distillation learns from taggers)")

    def soft_labels(self, column: str) -> list[str]:
        raise TaggerError(f"the {self.name} model cannot teach (distillation learns from taggers)")


class NoTransformer:
    """The transformer part of :class:`Model` for families that take none (``takes_transformer``
    False): nothing pretrained to load or to train apart."""

    takes_transformer = False
    transformer_key = ""
    name: ClassVar[str]

    def load_transformer(self) -> str:
        raise TaggerError(f"the {self.name} model takes no transformer encoder (--encoder is for taggers)")

    def pretrained_parameters(self) -> list[torch.nn.Parameter]:
        return []


class GreedyDecoding:
    """The decoding part of :class:`Model` for families without a beam or attention (taggers,
    the transition parser): ``has_beam`` and ``has_attention`` False, nothing to count."""

    has_beam = False
    has_attention = False
    name: ClassVar[str]

    def output_counts(self, predictions: Sequence[Any]) -> dict[str, int]:
        return {}

    def tune_decoding(self, dev: Sequence[Sentence]) -> dict[str, Any]:
        return {}

    def set_decoding(self, beam: int | None = None, constrained: bool | None = None) -> None:
        if beam is not None or constrained is not None:
            raise TaggerError(f"the {self.name} model has no beam search (--beam and --constrained are for "
                              f"constituency parsers)")

    def attention(self, sentence: Sentence) -> tuple[list[str], list[str], torch.Tensor]:
        raise TaggerError(f"the {self.name} model has no attention to show")


def members() -> list[str]:
    """The names :class:`Model` lists (what every family must have)."""
    names = set(Model.__annotations__)
    names |= {n for n in vars(Model) if not n.startswith("_") and n not in ("members",)}
    return sorted(names | {"__call__"})


def check_vector_size(vectors: torch.Tensor, word_dim: int) -> None:
    """A one-line error when pretrained ``vectors`` [V, D] are not ``word_dim`` wide (for
    :meth:`Model.load_embeddings`)."""
    if vectors.shape[1] != word_dim:
        raise TaggerError(f"vectors have {vectors.shape[1]} dimensions but word_dim is {word_dim}; "
                          f"add --set word_dim={vectors.shape[1]}")
