"""The skip-LSTM tagger's model config: the network's hyper-parameters only (training ones are
:class:`tagger.config.TrainingConfig`; named combinations of both are in ``presets.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from tagger.modules.recurrent import COMPOSITIONS, CellSpec

#: How a ``feats`` column is predicted (``feats_mode``): ``bundle``, one label per whole FEATS
#: value (``Mood=Ind|Number=Sing|...`` or ``_``); ``feature``, one softmax per feature name (its
#: values and a "none" value), the features predicted joined back into a bundle sorted by name.
#: ``bundle`` is the default: +1.1 dev FEATS on EWT in the same 8 epochs (docs/benchmarks.md).
FEATS_MODES = ("bundle", "feature")


@dataclass
class TaggerConfig:
    # the columns learned, comma-separated (upos,xpos,feats): upos, xpos, feats, supertag, or `columns` names;
    # the first is the main one (multi-tagging, the tagged/pipe formats' one tag); every one is output
    column: str = "upos"
    feats_mode: str = "bundle"  # how a feats column is predicted: "bundle" or "feature" (FEATS_MODES; docs/tagger.md)
    # input layer
    word_dim: int = 100
    caps_dim: int = 5
    char_dim: int = 5
    char_length: int = 5  # first-l and last-l characters (l_w)
    char_cnn: int = 0  # filters of the character CNN over the whole word (0 = off)
    char_cnn_width: int = 3  # its convolution width, in characters (boundary symbols included)
    char_cnn_dim: int = 0  # its own character embedding size; 0 = the same size as char_dim
    char_cnn_max: int = 20  # characters it reads; longer words keep their first ⌈m/2⌉ and last ⌊m/2⌋
    window: int = 3
    window_gates: bool = True
    min_word_count: int = 1
    rare_word_dropout: float = 0.0  # replace training words seen once by UNK with this probability
    rare_tag_count: int = 0  # tags seen fewer times than this map to RARE (CCGbank: 10), in each column learned
    # stacked bidirectional layers
    layers: int = 3
    hidden: int = 128
    cell: str = "lstm"
    skip: str = "output"
    gate: str = "recurrent"
    skip_map: str = "identity"
    skip_span: int = 1  # k = h^{l - skip_span - 1}; 0: k = h^1 for every l >= 2
    composition: str = "chain"  # "chain" (as skip_span says), "nested" (+ h^{l - 2·skip_span - 2}), "adjacent" (l-1)
    skip_source: str = "output"  # k from the sources' outputs h^j, cells c^j ("internal"), or both ("separate")
    skip_mix: str = "add"  # "add": v + γ⊙k; "highway": (1-γ)⊙v + γ⊙k
    skip_ungated: str = ""  # "internal" or "output": no gate on the shortcut there
    rhn_depth: int = 3  # cell=rhn: micro-steps per time step
    forget_bias: float = 0.0
    init_scale: float = 0.1  # weights N(0, 1/sqrt(fan_in)) × init_scale; the papers' 0.1 suits on-line SGD
    # dropout: on the window input, and on the outputs of the first and last hidden layers
    input_dropout: float = 0.25
    hidden_dropout: float = 0.5
    middle_dropout: float = 0.0  # dropout on the outputs of the layers between the first and the last
    label_smoothing: float = 0.0  # cross-entropy against (1-ε)·gold + ε·uniform
    # a column learned beside `column` but never output (multi-task, e.g. xpos for upos); "" = none.
    # `column=upos,xpos` learns and outputs both instead.
    aux_column: str = ""
    aux_weight: float = 0.5  # its share of the loss: Σ CE(columns) + aux_weight · CE(aux_column)

    def __post_init__(self) -> None:
        self.cell_spec  # validates the names and their combination
        if self.composition not in COMPOSITIONS:
            raise ValueError(f"composition must be one of {', '.join(COMPOSITIONS)}, not {self.composition!r}")
        if self.skip_span < 0:
            raise ValueError("skip_span must be ≥ 0")
        if not 1 <= self.layers <= 64:
            raise ValueError(f"layers must be between 1 and 64, not {self.layers}")
        if self.hidden < 1:
            raise ValueError("hidden must be positive")
        if self.char_cnn < 0 or self.char_cnn_dim < 0:
            raise ValueError("char_cnn and char_cnn_dim must be ≥ 0")
        if self.char_cnn_width < 1 or self.char_cnn_max < 1:
            raise ValueError("char_cnn_width and char_cnn_max must be ≥ 1")
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
        if self.feats_mode not in FEATS_MODES:
            raise ValueError(f"feats_mode must be one of {', '.join(FEATS_MODES)}, not {self.feats_mode!r}")
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
