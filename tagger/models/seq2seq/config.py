"""The seq2seq constituency parser's model config: the network's hyper-parameters and its
decoding defaults (training ones are :class:`tagger.config.TrainingConfig`; named combinations
of both are in ``presets.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from tagger.config import check_ranges, ranged


#: How pretrained vectors (``--embeddings``) enter the model (``Seq2seqConfig.vectors``).
VECTORS = ("frozen", "init")


@dataclass
class Seq2seqConfig:
    tag_column: str = "xpos"  # the POS put back into output trees from the input (else upos, else XX)
    word_dim: int = ranged(256, at_least=1)  # input word embeddings
    # pretrained word vectors (--embeddings): "frozen" keeps a fixed table of them for every word it
    # holds, seen in training or not, projected to word_dim and added to the word's trained
    # embedding (tagger.modules.pretrained); "init" only initialises the training words' embeddings
    vectors: str = "frozen"
    vectors_mb: float = ranged(8.0, at_least=0)  # the frozen table's size at most (fp16): training words first, then the source's most frequent
    pretrained_dim: int = ranged(0, at_least=0)  # the frozen table's vector size, set from the vectors (0: no table)
    # the input's POS tags (tag_column) embedded beside the words (0: it reads the words only); at
    # tagging time from a tagger before it (tagger tag --model pos.tagger --model const.model)
    tag_dim: int = ranged(0, at_least=0)
    tag_dropout: float = ranged(0.1, at_least=0, below=1)  # training: a tag becomes UNK with this probability (predicted tags err)
    symbol_dim: int = ranged(128, at_least=1)  # embeddings of the output symbols fed back to the decoder
    hidden: int = ranged(256, at_least=1)  # LSTM cells per layer, encoder and decoder alike
    layers: int = ranged(3, at_least=1, at_most=16)
    attention_dim: int = ranged(256, at_least=1)  # rows of W1 and W2 in u = vᵀ tanh(W1 h_i + W2 d_t)
    dropout: float = ranged(0.3, at_least=0, below=1)  # between the LSTM layers, on the embeddings and before the output layer
    input_feeding: bool = True  # the attention context d'_t is fed to the next decoder step
    min_word_count: int = ranged(1, at_least=1)  # words seen fewer times are UNK
    rare_word_dropout: float = ranged(0.5, at_least=0, below=1)  # a training word seen once becomes its (shape's) UNK with this probability
    unk_shapes: bool = True  # unknown words as one of a few spelling-shape UNKs (Xx, x, X, 9, ...) rather than one
    reverse_input: bool = True  # the encoder reads the sentence backwards (Vinyals et al.)
    bidirectional: bool = False  # a BiLSTM encoder (hidden/2 cells each way; the decoder starts from both final states)
    beam: int = ranged(10, at_least=1)  # beam size at tagging time (1 = greedy); `tagger tag --beam` overrides it
    dev_beam: int = ranged(1, at_least=1)  # beam size when scoring dev during training
    constrained: bool = False  # decode only symbols that keep the output a well-formed tree (the paper: any symbol, then repair)
    max_length_ratio: float = ranged(5.0, at_least=1)  # decoding stops after max_length_ratio × words + 10 symbols

    def __post_init__(self) -> None:
        check_ranges(self)
        if self.vectors not in VECTORS:
            raise ValueError(f"vectors must be one of {', '.join(VECTORS)}, not {self.vectors!r}")
        if self.bidirectional and self.hidden % 2:
            raise ValueError(f"a bidirectional encoder needs an even hidden size, not {self.hidden}")
