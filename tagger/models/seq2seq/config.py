"""The seq2seq constituency parser's model config: the network's hyper-parameters and its
decoding defaults (training ones are :class:`tagger.config.TrainingConfig`; named combinations
of both are in ``presets.py``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Seq2seqConfig:
    tag_column: str = "xpos"  # the POS put back into output trees from the input (else upos, else XX)
    word_dim: int = 256  # input word embeddings (pretrained vectors must have this size)
    symbol_dim: int = 128  # embeddings of the output symbols fed back to the decoder
    hidden: int = 256  # LSTM cells per layer, encoder and decoder alike
    layers: int = 3
    attention_dim: int = 256  # rows of W1 and W2 in u = vᵀ tanh(W1 h_i + W2 d_t)
    dropout: float = 0.3  # between the LSTM layers, on the embeddings and before the output layer
    input_feeding: bool = True  # the attention context d'_t is fed to the next decoder step
    min_word_count: int = 1
    rare_word_dropout: float = 0.5  # a training word seen once becomes its (shape's) UNK with this probability
    unk_shapes: bool = True  # unknown words as one of a few spelling-shape UNKs (Xx, x, X, 9, ...) rather than one
    reverse_input: bool = True  # the encoder reads the sentence backwards (Vinyals et al.)
    beam: int = 10  # beam size at tagging time (1 = greedy); `tagger tag --beam` overrides it
    dev_beam: int = 1  # beam size when scoring dev during training
    constrained: bool = False  # decode only symbols that keep the output a well-formed tree (the paper: any symbol, then repair)
    max_length_ratio: float = 5.0  # decoding stops after max_length_ratio × words + 10 symbols

    def __post_init__(self) -> None:
        for name in ("word_dim", "symbol_dim", "hidden", "attention_dim", "beam", "dev_beam"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive, not {getattr(self, name)}")
        if not 1 <= self.layers <= 16:
            raise ValueError(f"layers must be between 1 and 16, not {self.layers}")
        for name in ("dropout", "rare_word_dropout"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"{name} must be in [0, 1), not {getattr(self, name)}")
        if self.max_length_ratio < 1.0:
            raise ValueError(f"max_length_ratio must be at least 1, not {self.max_length_ratio}")
