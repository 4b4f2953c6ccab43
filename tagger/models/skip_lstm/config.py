"""The skip-LSTM tagger's model config: the network's hyper-parameters only (training ones are
:class:`tagger.config.TrainingConfig`; named combinations of both are in ``presets.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from tagger.config import check_ranges, ranged
from tagger.corpus.features import named_kinds
from tagger.corpus.vocab import Vocab
from tagger.modules.cellspec import COMPOSITIONS, CellSpec

#: How a ``feats`` column is predicted (``feats_mode``): ``bundle``, one label per whole FEATS
#: value (``Mood=Ind|Number=Sing|...`` or ``_``); ``feature``, one softmax per feature name (its
#: values and a "none" value), the features predicted joined back into a bundle sorted by name.
#: ``bundle`` is the default: +1.1 dev FEATS on EWT in the same 8 epochs (docs/benchmarks.md).
FEATS_MODES = ("bundle", "feature")
#: The tag class that is never output: a tag seen fewer than ``rare_tag_count`` times in training.
RARE = "<rare>"


@dataclass
class TaggerConfig:
    # the columns learned, comma-separated (upos,xpos,feats): upos, xpos, feats, supertag, or `columns` names;
    # the first is the main one (multi-tagging, the tagged/pipe formats' one tag); every one is output
    column: str = "upos"
    feats_mode: str = "bundle"  # how a feats column is predicted: "bundle" or "feature" (FEATS_MODES; docs/tagger.md)
    # input layer
    word_dim: int = ranged(100, at_least=0)  # 0: no word embedding (the character-only presets)
    caps_dim: int = ranged(5, at_least=0)
    char_dim: int = ranged(5, at_least=0)
    char_length: int = ranged(5, at_least=0)  # first-l and last-l characters (l_w)
    char_cnn: int = ranged(0, at_least=0)  # filters of the character CNN over the whole word (0 = off)
    char_cnn_width: int = ranged(3, at_least=1)  # its convolution width, in characters (boundary symbols included)
    char_cnn_dim: int = ranged(0, at_least=0)  # its own character embedding size; 0 = the same size as char_dim
    char_cnn_max: int = ranged(20, at_least=1)  # characters it reads; longer words keep their first ⌈m/2⌉ and last ⌊m/2⌋
    # subword units whose embeddings are averaged into each word's features, for words unseen in
    # training (tagger.corpus.features.subword_units): "auto" = "pieces" where at least 1% of the
    # training tokens hold a space (Vietnamese), else none; "" = none; or kinds, comma-separated
    subwords: str = "auto"
    subword_dim: int = ranged(32, at_least=0)  # their embedding size (0: off)
    affix_length: int = ranged(4, at_least=1)  # suffixes and prefixes of 1..affix_length characters
    # decoding with a tag dictionary (tagger.corpus.lexicon): a word seen at least N times in
    # training is given only labels it was seen with there; "auto": N (or none) chosen per column
    # on the dev data after training; "0": none
    lexicon: str = "auto"
    window: int = ranged(3, at_least=1, odd=True)  # tokens read: the word and (window - 1) / 2 on each side
    window_gates: bool = True
    min_word_count: int = ranged(1, at_least=1)  # words seen fewer times are UNK
    rare_word_dropout: float = ranged(0.0, at_least=0, below=1)  # replace training words seen once by UNK with this probability
    rare_tag_count: int = ranged(0, at_least=0)  # tags seen fewer times than this map to RARE (CCGbank: 10), in each column learned
    # pretrained word vectors (--embeddings): "frozen" keeps a fixed table of them for every word it
    # holds, seen in training or not, projected to word_dim and added to the word's trained
    # embedding (Dozat & Manning 2017); "init" only initialises the training words' embeddings
    vectors: str = "frozen"
    vectors_mb: float = ranged(8.0, at_least=0)  # the frozen table's size at most (fp16): training words first, then the source's most frequent
    pretrained_dim: int = ranged(0, at_least=0)  # the frozen table's vector size, set from the vectors (0: no table)
    # a pretrained transformer under the layers (--encoder; tagger/modules/transformer.py): its word
    # vectors (pieces pooled, layers mixed), projected to transformer_dim, join each token's input; "" = none
    transformer: str = ""  # a local Hugging Face folder, a hub name, or all-minilm-l6-v2 (the transformers extra)
    transformer_pooling: str = "mean"  # a word's vector from its pieces: "first" or "mean"
    transformer_layers: str = "mix"  # "mix": a learned mix of every layer; "last": the last layer
    transformer_tune: bool = False  # fine-tune the transformer (false: frozen, only the mix and projection train)
    transformer_dim: int = ranged(256, at_least=1)  # the projection's size, joined to the input layer's
    # stacked bidirectional layers
    layers: int = ranged(3, at_least=1, at_most=64)
    hidden: int = ranged(128, at_least=1)
    cell: str = "lstm"
    skip: str = "output"
    gate: str = "recurrent"
    skip_map: str = "identity"
    skip_span: int = ranged(1, at_least=0)  # k = h^{l - skip_span - 1}; 0: k = h^1 for every l >= 2
    composition: str = "chain"  # "chain" (as skip_span says), "nested" (+ h^{l - 2·skip_span - 2}), "adjacent" (l-1)
    skip_source: str = "output"  # k from the sources' outputs h^j, cells c^j ("internal"), or both ("separate")
    skip_mix: str = "add"  # "add": v + γ⊙k; "highway": (1-γ)⊙v + γ⊙k
    skip_ungated: str = ""  # "internal" or "output": no gate on the shortcut there
    rhn_depth: int = ranged(3, at_least=1)  # cell=rhn: micro-steps per time step
    forget_bias: float = ranged(0.0)
    init_scale: float = ranged(0.1, at_least=0)  # weights N(0, 1/sqrt(fan_in)) × init_scale; the papers' 0.1 suits on-line SGD
    # dropout: on the window input, and on the outputs of the first and last hidden layers
    input_dropout: float = ranged(0.25, at_least=0, below=1)
    hidden_dropout: float = ranged(0.5, at_least=0, below=1)
    middle_dropout: float = ranged(0.0, at_least=0, below=1)  # dropout on the outputs of the layers between the first and the last
    label_smoothing: float = ranged(0.0, at_least=0, below=1)  # cross-entropy against (1-ε)·gold + ε·uniform
    # a column learned beside `column` but never output (multi-task, e.g. xpos for upos); "" = none.
    # `column=upos,xpos` learns and outputs both instead.
    aux_column: str = ""
    aux_weight: float = ranged(0.5, at_least=0)  # its share of the loss: Σ CE(columns) + aux_weight · CE(aux_column)

    def __post_init__(self) -> None:
        check_ranges(self)
        self.cell_spec  # validates the names and their combination
        if self.composition not in COMPOSITIONS:
            raise ValueError(f"composition must be one of {', '.join(COMPOSITIONS)}, not {self.composition!r}")
        if not self.word_dim + self.caps_dim + self.char_dim * self.char_length + self.char_cnn:
            raise ValueError("every input feature is switched off: set word_dim, caps_dim, char_dim with char_length, "
                             "or char_cnn")
        columns = [name.strip() for name in self.column.split(",")]
        if not all(columns):
            raise ValueError(f"column must name one column or several separated by commas (upos,xpos,feats), "
                             f"not {self.column!r}")
        twice = next((name for i, name in enumerate(columns) if name in columns[:i]), None)
        if twice is not None:
            raise ValueError(f"column names {twice!r} twice ({self.column!r}): each column is learned once")
        self.column = ",".join(columns)
        if self.aux_column in columns:
            raise ValueError(f"aux_column must differ from the columns learned (column={self.column}): "
                             f"it would be learned twice")
        if "," in self.aux_column:
            raise ValueError(f"aux_column names one column, not {self.aux_column!r}: to learn and output several, "
                             f"use --column {self.column},{self.aux_column}")
        named_kinds(self.subwords)
        if self.lexicon != "auto" and not (self.lexicon.isascii() and self.lexicon.isdigit()):
            raise ValueError(f"lexicon must be auto or a count (0: no tag dictionary), not {self.lexicon!r}")
        if self.vectors not in VECTORS:
            raise ValueError(f"vectors must be one of {', '.join(VECTORS)}, not {self.vectors!r}")
        if self.pretrained_dim and not self.word_dim:
            raise ValueError("a table of pretrained vectors needs word embeddings (word_dim > 0)")
        if self.feats_mode not in FEATS_MODES:
            raise ValueError(f"feats_mode must be one of {', '.join(FEATS_MODES)}, not {self.feats_mode!r}")
        if self.transformer_pooling not in ("first", "mean"):
            raise ValueError(f"transformer_pooling must be first or mean, not {self.transformer_pooling!r}")
        if self.transformer_layers not in ("mix", "last"):
            raise ValueError(f"transformer_layers must be mix or last, not {self.transformer_layers!r}")
        if self.char_cnn and not self.cnn_dim:
            raise ValueError("char_cnn needs a character size: set char_cnn_dim (char_dim is 0)")

    @property
    def columns(self) -> list[str]:
        """The columns learned and output, in order (``column`` split at its commas)."""
        return self.column.split(",")

    @property
    def cell_spec(self) -> CellSpec:
        """What each recurrent layer computes (docs/zoo.md)."""
        return CellSpec(self.cell, self.skip, self.gate, self.skip_map, self.forget_bias, self.skip_source, self.skip_mix,
                        self.skip_ungated, self.rhn_depth)

    @property
    def cnn_dim(self) -> int:
        """The character CNN's embedding size (``char_cnn_dim``, or ``char_dim`` when 0)."""
        return self.char_cnn_dim or self.char_dim


def subword_table(config: TaggerConfig, vocabs: Mapping[str, Sequence[str]]) -> tuple[int, int]:
    """(units, size) of a tagger's subword embedding (``vocabs["subwords"]``, set by the training
    data), or (0, 0) without one."""
    units = vocabs.get("subwords")
    return (len(units), config.subword_dim) if units and config.subword_dim else (0, 0)


def subword_featurizing(config: TaggerConfig, vocabs: Mapping[str, Sequence[str]]
                        ) -> tuple[Vocab | None, tuple[str, ...], int]:
    """The subword arguments of :class:`~tagger.corpus.features.InputFeaturizer` for a tagger:
    its units' vocabulary (None without a subword embedding), their kinds and ``affix_length``."""
    if not subword_table(config, vocabs)[0]:
        return None, (), 0
    return Vocab.from_list(list(vocabs["subwords"])), tuple(vocabs["subword_kinds"]), config.affix_length


#: How pretrained vectors (``--embeddings``) enter the model (``TaggerConfig.vectors``).
VECTORS = ("frozen", "init")


def lookup_words(vocabs: dict[str, list[str]]) -> list[str]:
    """The words a tagger looks up, each its row of the input: the training words
    (``vocabs["words"]``, with PAD and UNK; the rows of the trained embedding), then the words
    only the frozen table of pretrained vectors holds (``vocabs["pretrained"]``)."""
    return list(vocabs["words"]) + list(vocabs.get("pretrained", []))


#: The layer the fast path (:mod:`tagger.runtime.skip_lstm`, the C kernels) computes: an LSTM whose
#: layer l ≥ 3 adds ``γ⊙h^{l-2}`` to its output, ``γ`` the recurrent gate (the presets ``fast``
#: and ``small``); no character CNN.
FAST_PATH = {"cell": "lstm", "skip": "output", "gate": "recurrent", "skip_map": "identity", "skip_span": 1,
             "composition": "chain", "skip_source": "output", "skip_mix": "add", "skip_ungated": "", "char_cnn": 0}


def supports_fast_path(config: TaggerConfig) -> bool:
    """Whether the torch-free runtime and the C kernels compute a model of ``config``: the layer of
    :data:`FAST_PATH` with any sizes, and a ``feats`` column past the first only as one label per
    bundle, and no transformer under it. (A first layer whose input is as wide as the layers, a
    shortcut source itself, is declined by the exporter, :func:`tagger.models.skip_lstm.export.export`.)"""
    if any(getattr(config, key) != value for key, value in FAST_PATH.items()) or config.transformer:
        return False
    return not ("feats" in config.columns[1:] and config.feats_mode != "bundle")
