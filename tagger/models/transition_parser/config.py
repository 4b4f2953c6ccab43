"""The transition parser's model config: the network's hyper-parameters only (training ones are
:class:`tagger.config.TrainingConfig`, with this family's defaults and named presets in
``presets.py``)."""

from __future__ import annotations

from dataclasses import dataclass

ARCHS = ("ffn", "lstm", "gru", "elman")
#: What training does with a tree arc-standard cannot build because it is non-projective.
NONPROJECTIVE = ("lift", "skip")


@dataclass
class ParserConfig:
    arch: str = "ffn"  # ffn | lstm | gru | elman
    tag_column: str = "upos"  # the POS column the parser reads: upos, xpos, or joined (upos+feats)
    word_dim: int = 100
    tag_dim: int = 100
    label_dim: int = 100
    hidden: int = 256
    hidden_bias_init: float = 0.02  # b of the hidden layer (and of the recurrent gates)
    init_range: float = 0.01  # weights and embeddings U(-init_range, init_range)
    dropout: float = 0.3  # on the hidden layer's output
    input_dropout: float = 0.3  # on the embedding layer
    bptt: int = 5  # truncated BPTT: detach the recurrent state every bptt transitions; 0 = full
    forget_bias: float = 1.0  # LSTM: constant added to the forget gate pre-activation
    min_word_count: int = 1
    rare_word_dropout: float = 0.25  # training: words seen once become UNK with this probability
    precompute: int = 10000  # most frequent words whose W·e rows are precomputed for decoding; 0 = off
    precompute_mb: float = 256.0  # memory cap of those rows (fewer words for the wider recurrent layers)
    # non-projective training trees: lift = pseudo-projective (Nivre & Nilsson 2005: lift the arcs,
    # label them d↑h, move them back after decoding); skip = leave those trees out (arc-standard as in
    # the paper). Model files without this key were trained by skipping and load as "skip".
    nonprojective: str = "lift"
    lift_min_count: int = 5  # lift: a decorated label d↑h seen fewer times in training is learnt as plain d

    def __post_init__(self) -> None:
        if self.arch not in ARCHS:
            raise ValueError(f"arch must be one of {', '.join(ARCHS)}, not {self.arch!r}")
        if not self.tag_column:
            raise ValueError("tag_column must name a column (upos or xpos)")
        for name, value in (("word_dim", self.word_dim), ("tag_dim", self.tag_dim), ("label_dim", self.label_dim),
                            ("hidden", self.hidden)):
            if value < 1:
                raise ValueError(f"{name} must be positive, not {value}")
        for name, value in (("dropout", self.dropout), ("input_dropout", self.input_dropout),
                            ("rare_word_dropout", self.rare_word_dropout)):
            if not 0.0 <= value < 1.0:
                raise ValueError(f"{name} must be in [0, 1), not {value}")
        if self.nonprojective not in NONPROJECTIVE:
            raise ValueError(f"nonprojective must be one of {', '.join(NONPROJECTIVE)}, not {self.nonprojective!r}")
        if self.lift_min_count < 1:
            raise ValueError(f"lift_min_count must be >= 1, not {self.lift_min_count}")
        if self.bptt < 0 or self.precompute < 0 or self.precompute_mb < 0:
            raise ValueError("bptt, precompute and precompute_mb must be >= 0")
