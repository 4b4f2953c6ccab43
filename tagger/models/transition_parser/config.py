"""The transition parser's model config: the network's hyper-parameters only (training ones are
:class:`tagger.config.TrainingConfig`, with this family's defaults and named presets in
``presets.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from tagger.config import check_ranges, ranged
from tagger.corpus.features import named_kinds

ARCHS = ("ffn", "lstm", "gru", "elman")
#: What training does with a tree arc-standard cannot build because it is non-projective.
NONPROJECTIVE = ("lift", "skip")
SEVERAL_ROOTS = ("attach", "skip")
ENCODERS = ("none", "bilstm")  # what the token slots read besides (or instead of) the static embeddings
FEATURES = ("replace", "beside")  # with an encoder: token slots read its vector only, or it and the embeddings
ENCODER_SKIPS = ("output", "none")
#: How pretrained vectors (``--embeddings``) enter the static word embeddings (``ParserConfig.vectors``).
VECTORS = ("frozen", "init")  # the skip-LSTM's gated shortcut to the output (the tagger's default), or none


#: The encoder's vocabularies, in the parser's ``vocabs`` (the tagger's ``words``, ``chars`` and
#: ``rare_word_from`` when it comes from a tagger).
VOCAB_KEYS = ("encoder_words", "encoder_chars", "encoder_rare_word_from")
#: The words only the encoder's frozen table of pretrained vectors holds (the tagger's ``pretrained``),
#: after ``encoder_words``; there only when ``encoder_pretrained_dim`` is set.
PRETRAINED_KEY = "encoder_pretrained"
#: The encoder's subword units and their kinds (the tagger's ``subwords`` and ``subword_kinds``, or
#: built as the tagger builds them); there only where it embeds them.
SUBWORD_KEYS = ("encoder_subwords", "encoder_subword_kinds")
#: The skip-LSTM tagger options the encoder fixes (to the tagger's defaults); a tagger with other
#: values cannot give its encoder.
FIXED = {"cell": "lstm", "gate": "recurrent", "skip_map": "identity", "skip_span": 1, "composition": "chain",
         "skip_source": "output", "skip_mix": "add", "skip_ungated": "", "forget_bias": 0.0, "window_gates": True,
         "char_cnn_width": 3, "char_cnn_max": 20}
#: ParserConfig field <- the tagger config field it mirrors.
MIRRORED = {"encoder_word_dim": "word_dim", "encoder_caps_dim": "caps_dim", "encoder_char_dim": "char_dim",
            "encoder_char_length": "char_length", "encoder_char_cnn": "char_cnn", "encoder_window": "window",
            "encoder_layers": "layers", "encoder_hidden": "hidden", "encoder_skip": "skip",
            "encoder_pretrained_dim": "pretrained_dim", "encoder_transformer": "transformer",
            "encoder_transformer_pooling": "transformer_pooling", "encoder_transformer_layers": "transformer_layers",
            "encoder_transformer_tune": "transformer_tune", "encoder_transformer_dim": "transformer_dim",
            "encoder_subwords": "subwords", "encoder_subword_dim": "subword_dim", "encoder_affix_length": "affix_length"}
#: The files of the encoder's transformer (the tagger's ``transformer_files``), where it has one.
TRANSFORMER_KEY = "encoder_transformer_files"


@dataclass
class ParserConfig:
    arch: str = "ffn"  # ffn | lstm | gru | elman
    tag_column: str = "upos"  # the POS column the parser reads: upos, xpos, or joined (upos+feats)
    word_dim: int = ranged(100, at_least=1)
    # pretrained word vectors (--embeddings) for the static word features: "frozen" keeps a fixed
    # table of them for every word it holds, seen in training or not, projected to word_dim and
    # added to the word's trained embedding (tagger.modules.pretrained); "init" only initialises
    # the training words' embeddings (Elkaref & Bohnet's "pretrained" rows)
    vectors: str = "frozen"
    vectors_mb: float = ranged(8.0, at_least=0)  # the frozen table's size at most (fp16): training words first, then the source's most frequent
    pretrained_dim: int = ranged(0, at_least=0)  # the frozen table's vector size, set from the vectors (0: no table)
    tag_dim: int = ranged(100, at_least=1)
    label_dim: int = ranged(100, at_least=1)
    hidden: int = ranged(256, at_least=1)
    hidden_bias_init: float = ranged(0.02)  # b of the hidden layer (and of the recurrent gates)
    init_range: float = ranged(0.01, at_least=0)  # weights and embeddings U(-init_range, init_range)
    dropout: float = ranged(0.3, at_least=0, below=1)  # on the hidden layer's output
    input_dropout: float = ranged(0.3, at_least=0, below=1)  # on the embedding layer
    bptt: int = ranged(5, at_least=0)  # truncated BPTT: detach the recurrent state every bptt transitions; 0 = full
    forget_bias: float = ranged(1.0)  # LSTM: constant added to the forget gate pre-activation
    min_word_count: int = ranged(1, at_least=1)  # words seen fewer times are UNK
    rare_word_dropout: float = ranged(0.25, at_least=0, below=1)  # training: words seen once become UNK with this probability
    precompute: int = ranged(10000, at_least=0)  # most frequent words whose W·e rows are precomputed for decoding; 0 = off
    precompute_mb: float = ranged(256.0, at_least=0)  # memory cap of those rows (fewer words for the wider recurrent layers)
    # non-projective training trees: lift = pseudo-projective (Nivre & Nilsson 2005: lift the arcs,
    # label them d↑h, move them back after decoding); skip = leave those trees out (arc-standard as in
    # the paper). Model files without this key were trained by skipping and load as "skip".
    nonprojective: str = "lift"
    lift_min_count: int = ranged(5, at_least=1)  # lift: a decorated label d↑h seen fewer times in training is learnt as plain d
    # training trees with several words on ROOT (CoNLL-X treebanks hang punctuation there): attach =
    # the other root words hang from the main one (its subtree the largest), labels kept, and the tree
    # is learnt; skip = leave such trees out (as before this key). Decoding always gives one root.
    several_roots: str = "attach"
    # contextual features (docs/parser.md "Contextual features"): a BiLSTM over the sentence
    encoder: str = "none"  # none | bilstm: the tagger's skip-LSTM encoder, trained with the parser
    features: str = "beside"  # replace: token slots read the encoder's vector only; beside: it and word/tag embeddings
    encoder_layers: int = ranged(2, at_least=1, at_most=16)
    encoder_hidden: int = ranged(128, at_least=1)  # per direction: the vector of a token is 2 × encoder_hidden wide
    encoder_skip: str = "output"  # output | none (the tagger's skip connections)
    encoder_word_dim: int = ranged(100, at_least=0)  # its own word embeddings (0 = none)
    encoder_caps_dim: int = ranged(5, at_least=0)  # capitalisation class
    encoder_char_dim: int = ranged(20, at_least=0)  # first/last-character embeddings (0 = none)
    encoder_char_length: int = ranged(5, at_least=0)  # first-l and last-l characters
    encoder_char_cnn: int = ranged(0, at_least=0)  # filters of a character CNN over the whole word (width 3; 0 = off)
    encoder_window: int = ranged(1, at_least=1, odd=True)  # the input layer's gated context window (odd; the tagger's is 3)
    encoder_tag_dim: int = ranged(0, at_least=0)  # the POS tag of tag_column as an encoder input too (0 = not read)
    encoder_dropout: float = ranged(0.25, at_least=0, below=1)  # on the encoder's input and on its layers' outputs
    encoder_slots: int = ranged(18, at_least=1, at_most=18)  # the first k token slots read the encoder's vector (4: s0 s1 s2 b0; 6: + b1 b2)
    # the encoder's frozen table of pretrained vectors, taken with the tagger it starts from (that
    # tagger's pretrained_dim; 0: none): E(w) + P v(w) as the tagger reads its words
    encoder_pretrained_dim: int = ranged(0, at_least=0)
    # the encoder's pretrained transformer, taken with the tagger it starts from (the tagger's
    # transformer* options, tagger/models/skip_lstm/config.py): "" = none
    encoder_transformer: str = ""
    encoder_transformer_pooling: str = "mean"
    encoder_transformer_layers: str = "mix"
    encoder_transformer_tune: bool = False
    encoder_transformer_dim: int = ranged(256, at_least=1)
    # the encoder's subword units (the tagger's subwords, subword_dim, affix_length: "auto" embeds the
    # pieces of tokens with spaces where at least 1% of the training tokens hold one)
    encoder_subwords: str = "auto"
    encoder_subword_dim: int = ranged(32, at_least=0)
    encoder_affix_length: int = ranged(4, at_least=1)

    def __post_init__(self) -> None:
        check_ranges(self)
        named_kinds(self.encoder_subwords, "encoder_subwords")
        if self.arch not in ARCHS:
            raise ValueError(f"arch must be one of {', '.join(ARCHS)}, not {self.arch!r}")
        if not self.tag_column:
            raise ValueError("tag_column must name a column (upos or xpos)")
        if self.nonprojective not in NONPROJECTIVE:
            raise ValueError(f"nonprojective must be one of {', '.join(NONPROJECTIVE)}, not {self.nonprojective!r}")
        for name, value, allowed in (("encoder", self.encoder, ENCODERS), ("features", self.features, FEATURES),
                                     ("encoder_skip", self.encoder_skip, ENCODER_SKIPS), ("vectors", self.vectors, VECTORS),
                                     ("several_roots", self.several_roots, SEVERAL_ROOTS)):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
        if self.encoder != "none":
            self._check_encoder()
        if self.pretrained_dim and not self.reads_static:
            raise ValueError("a table of pretrained vectors for the static word features needs them (features=beside)")

    def _check_encoder(self) -> None:
        if not self.encoder_word_dim + self.encoder_caps_dim + self.encoder_char_dim * self.encoder_char_length \
                + self.encoder_char_cnn:
            raise ValueError("the encoder must read the words: set encoder_word_dim, encoder_char_dim or encoder_char_cnn")
        if self.encoder_pretrained_dim and not self.encoder_word_dim:
            raise ValueError("a table of pretrained vectors needs word embeddings (encoder_word_dim > 0)")
        if self.encoder_char_cnn and not self.encoder_char_dim:
            raise ValueError("encoder_char_cnn needs encoder_char_dim > 0 (its character embedding size)")

    @property
    def reads_static(self) -> bool:
        """Whether the token slots read the static word and tag embeddings (no encoder, or beside it)."""
        return self.encoder == "none" or self.features == "beside"

    @property
    def reads_tags(self) -> bool:
        """Whether it reads the POS of ``tag_column`` at all: not when the token slots read only
        the encoder's vectors (``features=replace``) and the encoder reads no tags
        (``encoder_tag_dim=0``). Such a parser needs no tagger before it and nothing jackknifed."""
        return self.reads_static or self.encoder_tag_dim > 0
