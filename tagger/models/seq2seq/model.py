"""The LSTM+A constituency parser of Vinyals et al. 2015 (SPEC §5): a sentence, read backwards by
a stacked LSTM encoder, is translated by a stacked LSTM decoder with attention into its
linearised tree (``(S (NP XX XX )NP (VP XX )VP XX )S``, :mod:`tagger.transitions.linearise`),
which is then repaired into a well-formed tree over the input's words and POS tags.

Attention at decoder step ``t`` over the encoder states ``h_1..h_S``::

    u_i = vᵀ tanh(W1 h_i + W2 d_t),   a = softmax(u),   d'_t = Σ_i a_i h_i

and ``[d_t; d'_t]`` predicts the next symbol. With ``input_feeding`` (the ``vinyals2015`` preset),
as in the paper's implementation, ``d'_t`` is also fed to the next step beside the embedding of
the symbol just emitted.
The decoder starts from the encoder's final state. Decoding is beam search (:mod:`.beam`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields, replace
from typing import Any, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from tagger.corpus.records import Sentence
from tagger.corpus.trees import Tree
from tagger.corpus.vocab import PAD, UNK, Vocab
from tagger.errors import TaggerError
from tagger.evaluation.evalb import COLLINS, BracketMetric
from tagger.models.base import NoDistillation, NoTransformer, check_vector_size
from tagger.models.seq2seq import beam as beam_search
from tagger.models.seq2seq.config import Seq2seqConfig
from tagger.models.seq2seq.presets import PRESETS, TRAINING_DEFAULTS
from tagger.modules import pretrained
from tagger.modules.pretrained import FrozenVectors
from tagger.transitions.linearise import LEAF, delinearise, linearise, normalise, root_label_of, symbols_of

#: Output symbols besides the tree's: padding, end of output, start of output.
EOS, BOS = "<eos>", "<bos>"
SYMBOL_SPECIALS = (PAD, EOS, BOS)
PAD_ID = 0
EOS_ID, BOS_ID = beam_search.EOS_ID, beam_search.BOS_ID  # the ids the beam search starts and ends on

#: Raw brackets as the Penn Treebank spells them in its trees (what the training words hold).
PTB_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}

#: Unknown words by spelling shape (``unk_shapes``): a language-neutral stand-in for the
#: Berkeley parser's signatures.
SHAPES = ("<unk:Xx>", "<unk:X>", "<unk:x>", "<unk:9>", "<unk:x-x>", "<unk:.>")
WORD_SPECIALS = (PAD, UNK, *SHAPES)
UNK_ID = 1


def shape(word: str) -> str:
    """The spelling-shape UNK of ``word`` (one of :data:`SHAPES`)."""
    if any(ch.isdigit() for ch in word):
        return "<unk:9>"
    if not any(ch.isalpha() for ch in word):
        return "<unk:.>"
    if "-" in word:
        return "<unk:x-x>"
    if word[0].isupper():
        return "<unk:X>" if word.isupper() and len(word) > 1 else "<unk:Xx>"
    return "<unk:x>"


def tree_of(sentence: Sentence) -> Tree:
    """The normalised gold tree of a training sentence; a one-line error where it has none."""
    if sentence.tree is None:
        raise TaggerError("this sentence has no constituency tree to learn from (the const task reads .mrg "
                          "or .trees files)", sentence.source, sentence.line)
    return normalise(sentence.tree)


#: :func:`outer_layout` of treebanks whose trees stand in an unlabelled outer bracket (WSJ's).
WRAPPED, BARE = "wrapped", "bare"


def outer_layout(sentences: Sequence[Sentence]) -> str:
    """:data:`WRAPPED` where most training trees stand in an unlabelled outer bracket (WSJ's
    ``( (S ...))``, NeGra's ``( (S ...) ($. .))``), else :data:`BARE` (``(ROOT ...)``)."""
    wrapped = sum(s.tree is not None and s.tree.label == "" and not s.tree.is_preterminal for s in sentences)
    return WRAPPED if 2 * wrapped >= len(sentences) else BARE


def input_tags(sentence: Sentence, column: str) -> list[str] | None:
    """The POS tags the output tree takes from the input: ``column`` (xpos), else UPOS, else
    None (the tree then has ``XX``)."""
    for name in (column, "upos"):
        if sentence.has(name):
            return list(sentence.columns[name])
    return None


@dataclass
class Seq2seqBatch:
    """B sentences: S = the longest in words, L = the longest linearised tree (+ ``<eos>``)."""

    words: torch.Tensor  # [B, S] word ids, in encoder order (reversed), 0-padded
    tags: torch.Tensor | None  # [B, S] ids of the input's POS tags (tag_dim > 0), in the same order; else None
    lengths: torch.Tensor  # [B] words per sentence
    rare: torch.Tensor  # [B, S] True where the word was seen once in training (rare-word dropout)
    unk: torch.Tensor  # [B, S] the UNK that rare-word dropout turns each word into (its shape's, with unk_shapes)
    targets: torch.Tensor | None  # [B, L] gold symbol ids ending in <eos>, PAD_ID after; None without gold

    def to(self, device: torch.device) -> "Seq2seqBatch":
        move = lambda t: t.to(device, non_blocking=True) if isinstance(t, torch.Tensor) else t  # noqa: E731
        return Seq2seqBatch(*(move(getattr(self, f.name)) for f in fields(self)))

    @property
    def n_tokens(self) -> int:
        return int(self.lengths.sum())


@dataclass
class Parse:
    """One decoded sentence: the symbols the decoder emitted (without ``<eos>``), and the
    attention rows [len(symbols) + 1, words] when asked for."""

    symbols: list[str]
    attention: torch.Tensor | None = None
    repaired: bool | None = None  # set by Seq2seqParser.annotate: whether the output needed repair


class Seq2seqParser(NoDistillation, NoTransformer, nn.Module):
    """Word embeddings → LSTM encoder (reversed input) → LSTM decoder with attention → symbols."""

    name = "seq2seq"
    kind = "parser"
    Config = Seq2seqConfig
    PRESETS = PRESETS
    default_preset = "fast"
    training_defaults = TRAINING_DEFAULTS
    reads_raw_text = False  # it reads sentences from a format reader
    gives_distribution = False
    can_bootstrap = False
    can_take_encoder = False
    can_lower_precision = False
    batches_in_threads = False
    has_beam = True
    has_attention = True

    def __init__(self, config: Seq2seqConfig, vocabs: dict[str, list[str]]):
        super().__init__()
        self.config = config
        self.vocabs = vocabs
        self.word_vocab = Vocab.from_list(vocabs["words"])
        self.symbols = list(vocabs["symbols"])
        if self.symbols[: len(SYMBOL_SPECIALS)] != list(SYMBOL_SPECIALS):
            raise ValueError(f"the symbol vocabulary must start with {SYMBOL_SPECIALS}")
        self.symbol_index = {s: i for i, s in enumerate(self.symbols)}
        self.root_label = vocabs["root"][0]
        #: whether trees are written in an unlabelled outer bracket, as the training trees were
        #: (WSJ's ``( (S ...))``); files before it was kept: always
        self.wrapped = vocabs.get("outer", [WRAPPED])[0] == WRAPPED
        self.rare_word_from = int(vocabs["rare_word_from"][0])
        c = config
        self.word_emb = nn.Embedding(len(self.word_vocab), c.word_dim, padding_idx=0)
        self.symbol_emb = nn.Embedding(len(self.symbols), c.symbol_dim, padding_idx=0)
        self.encoder = nn.LSTM(c.word_dim + c.tag_dim, c.hidden // 2 if c.bidirectional else c.hidden, c.layers, batch_first=True,
                               dropout=c.dropout if c.layers > 1 else 0.0, bidirectional=c.bidirectional)
        feed = c.hidden if c.input_feeding else 0
        self.decoder = nn.LSTM(c.symbol_dim + feed, c.hidden, c.layers, batch_first=True,
                               dropout=c.dropout if c.layers > 1 else 0.0)
        self.w1 = nn.Linear(c.hidden, c.attention_dim, bias=False)
        self.w2 = nn.Linear(c.hidden, c.attention_dim)
        self.v = nn.Linear(c.attention_dim, 1, bias=False)
        self.output = nn.Linear(2 * c.hidden, len(self.symbols))
        self.drop = nn.Dropout(c.dropout)
        for weight in self.parameters():
            nn.init.uniform_(weight, -0.1, 0.1)
        kinds = [beam_search.LEAF if s == LEAF else beam_search.OPEN if s.startswith("(") else
                 beam_search.CLOSE if s.startswith(")") else beam_search.OTHER for s in self.symbols]
        closing = [self.symbol_index.get(")" + s[1:], 0) if s.startswith("(") else 0 for s in self.symbols]
        self.register_buffer("symbol_kinds", torch.tensor(kinds), persistent=False)
        self.register_buffer("closing", torch.tensor(closing), persistent=False)
        self.tag_vocab = Vocab.from_list(vocabs["tags"]) if c.tag_dim else None
        self.tag_emb = None
        if c.tag_dim:  # after the rest, so that a model without tags draws its weights as before
            self.tag_emb = nn.Embedding(len(self.tag_vocab), c.tag_dim, padding_idx=0)
            nn.init.uniform_(self.tag_emb.weight, -0.1, 0.1)
        #: the frozen table of pretrained vectors (``vocabs["pretrained"]``: the words only it holds,
        #: rows after the trained embedding's), or None; created last so that the rest draws as before
        self.word_pretrained = None
        if c.pretrained_dim:
            rows = len(self.word_vocab) + len(vocabs.get("pretrained", []))
            self.word_pretrained = FrozenVectors(rows, c.pretrained_dim, c.word_dim, 0.1)
        self._lookup = self._lookup_table()
        self.beam = c.beam  # what decode uses outside training; `tagger tag --beam` sets it
        self.selecting = False  # True once trained in this process: dev scoring then uses dev_beam

    # ----------------------------------------------------------------------------- declared facts
    @property
    def input_columns(self) -> list[str]:
        """The POS column it reads (``tag_column``, with ``tag_dim`` > 0), else none: the words only
        (POS tags, where present, are copied into its trees either way)."""
        return self.pos_columns(self.config)

    @property
    def output_columns(self) -> list[str]:
        """It fills the sentence's tree (:attr:`Sentence.tree`), shown as the column ``tree``."""
        return ["tree"]

    @property
    def distribution_labels(self) -> list[str]:
        return []

    def distribution(self, batch: Seq2seqBatch) -> torch.Tensor:
        raise TaggerError(f"the {self.name} model gives no tag distribution")

    def set_precision(self, dtype: torch.dtype | None, in_place: bool = False) -> None:
        if dtype is not None:
            raise TaggerError(f"the {self.name} model computes in float32 only, not {dtype}")

    def bootstrap(self, source: Any, gates: list[str] | None = None) -> None:
        raise TaggerError(f"model {self.name} cannot be bootstrapped")

    @classmethod
    def with_encoder(cls, config: Seq2seqConfig, vocabs: dict[str, list[str]], source: Any) -> "Seq2seqParser":
        """Not a capability of this family (``can_take_encoder`` is False)."""
        raise TaggerError(f"model {cls.name} takes no encoder from another model (--encoder-from is for the "
                          f"transition parser)")

    @classmethod
    def required_columns(cls, config: Seq2seqConfig) -> list[str]:
        """None: it learns from the sentences' trees (checked in :meth:`training_meta`)."""
        return []

    @classmethod
    def pos_column(cls, config: Seq2seqConfig) -> str | None:
        """``tag_column`` where it reads the input's POS (``tag_dim`` > 0: what ``--pos-model``
        retags), else None."""
        return config.tag_column if config.tag_dim else None

    @property
    def known_input_values(self) -> dict[str, frozenset[str]]:
        """The POS tags it saw in training, where it reads them (``tag_dim`` > 0)."""
        return {self.config.tag_column: frozenset(self.tag_vocab.itos)} if self.tag_vocab is not None else {}

    @classmethod
    def pos_columns(cls, config: Seq2seqConfig) -> list[str]:
        """``[tag_column]`` where it reads the input's POS (``tag_dim`` > 0), else none."""
        return [config.tag_column] if config.tag_dim else []

    # ----------------------------------------------------------------------------- data → tensors
    @classmethod
    def training_units(cls, config: Seq2seqConfig, sentences: Sequence[Sentence]) -> list[Sentence]:
        """The sentences read, as they are."""
        return list(sentences)

    @classmethod
    def training_meta(cls, config: Seq2seqConfig, sentences: Sequence[Sentence]) -> tuple[dict[str, Any], list[str]]:
        """Facts about the training trees: symbols per word (the decode budget is ``max_length_ratio``
        × words + 10), and a note for trees longer than that budget."""
        ratios = [len(linearise(tree_of(s))) / max(1, len(s)) for s in sentences]
        over = sum(r * len(s) >= config.max_length_ratio * len(s) + 10 for r, s in zip(ratios, sentences))
        notes = [f"{over} training tree{'s' * (over != 1)} longer than the decoding budget (max_length_ratio)"] if over else []
        return {"symbols_per_word": round(sum(ratios) / max(1, len(ratios)), 3)}, notes

    @classmethod
    def vocabs_from(cls, config: Seq2seqConfig, sentences: Sequence[Sentence]) -> dict[str, list[str]]:
        """Words (as written: case matters to a parser), most frequent first, with where the words
        seen once start; the output symbols of the training trees; their most frequent root label."""
        trees = [tree_of(s) for s in sentences]
        words = Counter(w for s in sentences for w in s.words)
        vocab = Vocab.build(words, config.min_word_count, specials=WORD_SPECIALS)
        rare_from = next((i for i, w in enumerate(vocab.itos) if i >= len(WORD_SPECIALS) and words[w] < 2), len(vocab))
        vocabs = {"words": vocab.to_list(), "rare_word_from": [str(rare_from)],
                  "symbols": [*SYMBOL_SPECIALS, *symbols_of(trees)], "root": [root_label_of(trees)],
                  "outer": [outer_layout(sentences)]}
        if config.tag_dim:
            tags = Counter(t for s in sentences for t in (input_tags(s, config.tag_column) or []))
            if not tags:
                raise TaggerError(f"tag_dim needs POS tags ({config.tag_column}) in the training trees",
                                  sentences[0].source if sentences else None)
            vocabs["tags"] = Vocab.build(tags, 1, specials=(PAD, UNK)).to_list()
        return vocabs

    def unk_id(self, word: str) -> int:
        """The UNK that stands for ``word`` when it is unknown: its spelling shape's (``unk_shapes``)
        or the one UNK."""
        return self.word_vocab.stoi[shape(word)] if self.config.unk_shapes else UNK_ID

    def _lookup_table(self) -> dict[str, int]:
        """With a frozen table: the rows that words not in the vocabulary as written read by their
        lowercase form (the training words' first, then the words only the table holds)."""
        if self.word_pretrained is None:
            return {}
        lookup: dict[str, int] = {}
        for index, word in enumerate(self.word_vocab.itos[len(WORD_SPECIALS):], len(WORD_SPECIALS)):
            lookup.setdefault(word.lower(), index)
        for index, word in enumerate(self.vocabs.get("pretrained", []), len(self.word_vocab)):
            lookup.setdefault(word, index)
        return lookup

    def word_id(self, word: str) -> int:
        """``word``'s row; a raw bracket that the trees spelled escaped (``(`` as ``-LRB-``, as a
        .mrg file holds it) reads that row; with a frozen table, else its lowercase form's (rows
        past the trained embedding's are words only the table holds); else its UNK."""
        index = self.word_vocab.stoi.get(word)
        if index is None and word in PTB_BRACKETS:
            index = self.word_vocab.stoi.get(PTB_BRACKETS[word])
        if index is None and self._lookup:
            index = self._lookup.get(word.lower())
        return self.unk_id(word) if index is None else index

    def collate(self, sentences: Sequence[Sentence], with_gold: bool = True) -> Seq2seqBatch:
        """Number ``sentences`` (words reversed for the encoder); with gold, their linearised trees
        end in ``<eos>`` (a symbol unseen in training is an error naming the sentence)."""
        size, longest = len(sentences), max(len(s) for s in sentences)
        words = torch.zeros(size, longest, dtype=torch.long)
        unks = torch.full((size, longest), UNK_ID, dtype=torch.long)
        for b, sentence in enumerate(sentences):
            order = sentence.words[::-1] if self.config.reverse_input else sentence.words
            words[b, : len(order)] = torch.tensor([self.word_id(w) for w in order])
            unks[b, : len(order)] = torch.tensor([self.unk_id(w) for w in order])
        lengths = torch.tensor([len(s) for s in sentences])
        tags = self._tags(sentences, longest) if self.tag_vocab is not None else None
        targets = None
        if with_gold:
            sequences = []
            for sentence in sentences:
                symbols = linearise(tree_of(sentence))
                try:
                    sequences.append([self.symbol_index[s] for s in symbols] + [EOS_ID])
                except KeyError as e:
                    raise TaggerError(f"constituent label {e.args[0][1:]!r} was not in the training trees",
                                      sentence.source, sentence.line) from None
            targets = torch.zeros(size, max(map(len, sequences)), dtype=torch.long)
            for b, ids in enumerate(sequences):
                targets[b, : len(ids)] = torch.tensor(ids)
        rare = (words >= self.rare_word_from) & (words < len(self.word_vocab))
        return Seq2seqBatch(words, tags, lengths, rare, unks, targets)

    def _tags(self, sentences: Sequence[Sentence], longest: int) -> torch.Tensor:
        """[B, S] ids of the sentences' POS (``tag_column``; UNK for unknown tags and for a
        sentence without them), in the words' order."""
        tags = torch.zeros(len(sentences), longest, dtype=torch.long)
        unk = self.tag_vocab.unk_index
        for b, sentence in enumerate(sentences):
            column = input_tags(sentence, self.config.tag_column) or [UNK] * len(sentence)
            order = column[::-1] if self.config.reverse_input else column
            tags[b, : len(order)] = torch.tensor([self.tag_vocab.stoi.get(t, unk) for t in order])
        return tags

    # ----------------------------------------------------------------------------- the network
    def encode(self, batch: Seq2seqBatch) -> beam_search.Encoded:
        """Encoder states ``H`` [B, S, H], their attention projections ``W1 H`` [B, S, A], the
        padding mask [B, S] and the decoder's initial state."""
        words = trained = batch.words
        if self.word_pretrained is not None:  # rows only the frozen table holds: their UNK's trained row
            trained = torch.where(words >= len(self.word_vocab), batch.unk, words)
        if self.training and self.config.rare_word_dropout > 0:
            drop = batch.rare & (torch.rand(words.shape, device=words.device) < self.config.rare_word_dropout)
            trained = torch.where(drop, batch.unk, trained)  # the UNK rows that unknown words read at tagging
        x = self.word_emb(trained)
        if self.word_pretrained is not None:  # a dropped word keeps its vector, as an unseen word has it
            x = x + self.word_pretrained(words)
        if self.tag_emb is not None:
            tags = batch.tags
            if self.training and self.config.tag_dropout > 0:
                drop = (tags > 0) & (torch.rand(tags.shape, device=tags.device) < self.config.tag_dropout)
                tags = tags.masked_fill(drop, self.tag_vocab.unk_index)
            x = torch.cat([x, self.tag_emb(tags)], -1)
        x = self.drop(x)
        packed = nn.utils.rnn.pack_padded_sequence(x, batch.lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, state = self.encoder(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=words.shape[1])
        states = self.drop(states)
        if self.config.bidirectional:  # [layers · 2, B, H/2] → [layers, B, H]: both directions' final states
            state = tuple(s.view(self.config.layers, 2, *s.shape[1:]).transpose(1, 2).flatten(2).contiguous()
                          for s in state)
        mask = torch.arange(words.shape[1], device=words.device)[None, :] < batch.lengths.to(words.device)[:, None]
        return beam_search.Encoded(states, self.w1(states), mask, state)

    def step(self, symbols: torch.Tensor, feed: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor],
             encoded: beam_search.Encoded) -> tuple[torch.Tensor, torch.Tensor, tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
        """One decoder step for N rows: previous ``symbols`` [N], fed context ``feed`` [N, H],
        LSTM ``state`` ([layers, N, H] × 2) → scores [N, V], context d' [N, H], new state,
        attention [N, S]."""
        x = self.drop(self.symbol_emb(symbols))
        if self.config.input_feeding:
            x = torch.cat([x, feed], -1)
        out, state = self.decoder(x[:, None], state)
        context, a = self.attend(out, encoded)
        d, context, a = out[:, 0], context[:, 0], a[:, 0]
        scores = self.output(self.drop(torch.cat([d, context], -1)))
        return scores, context, state, a

    def attend(self, d: torch.Tensor, encoded: beam_search.Encoded) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention of decoder states ``d`` [N, L, H] over the encoder states: the contexts
        d' [N, L, H] and the weights a [N, L, S] (``u_i = vᵀ tanh(W1 h_i + W2 d_t)``, a = softmax(u))."""
        u = self.v(torch.tanh(encoded.projected[:, None] + self.w2(d)[:, :, None])).squeeze(-1)  # [N, L, S]
        a = torch.softmax(u.masked_fill(~encoded.mask[:, None], float("-inf")), -1)
        return torch.bmm(a, encoded.states), a

    def forward(self, batch: Seq2seqBatch) -> torch.Tensor:
        """Scores [B, L, V] of every gold symbol given the ones before it (teacher forcing)."""
        encoded = self.encode(batch)
        targets = batch.targets
        size = targets.shape[0]
        previous = torch.cat([targets.new_full((size, 1), BOS_ID), targets[:, :-1]], 1)
        if not self.config.input_feeding:  # no step depends on the last one's attention: all steps at once
            out, _ = self.decoder(self.drop(self.symbol_emb(previous)), encoded.state)  # [B, L, H]
            return self.output(self.drop(torch.cat([out, self.attend(out, encoded)[0]], -1)))
        state, feed = encoded.state, encoded.states.new_zeros(size, self.config.hidden)
        scores = []
        for t in range(targets.shape[1]):
            step_scores, feed, state, _ = self.step(previous[:, t], feed, state, encoded)
            scores.append(step_scores)
        return torch.stack(scores, 1)

    def loss(self, scores: torch.Tensor, batch: Seq2seqBatch) -> torch.Tensor:
        """Mean cross-entropy per gold symbol (``<eos>`` included)."""
        return F.cross_entropy(scores.flatten(0, 1), batch.targets.flatten(), ignore_index=PAD_ID)

    # ----------------------------------------------------------------------------- decoding
    def train(self, mode: bool = True) -> "Seq2seqParser":
        if mode:
            self.selecting = True
        return super().train(mode)

    def decode(self, batch: Seq2seqBatch, with_attention: bool = False) -> list[Parse]:
        """Beam search (:attr:`beam` wide; ``dev_beam`` while selecting the best epoch in
        training) for every sentence of ``batch``, in order; with ``constrained``, over the
        symbols that keep each output on its way to a well-formed tree (:class:`.beam.Grammar`)."""
        width = self.config.dev_beam if self.selecting else self.beam
        encoded = self.encode(batch)
        limits = (batch.lengths.float() * self.config.max_length_ratio + 10).long().tolist()
        grammar = beam_search.Grammar(self.symbol_kinds, self.closing) if self.config.constrained else None
        found = beam_search.search(self, encoded, width, limits, with_attention, grammar, batch.lengths)
        return [Parse([self.symbols[i] for i in ids], attention) for ids, attention in found]

    def tree(self, sentence: Sentence, parse: Parse) -> tuple[Tree, bool]:
        """The repaired tree of ``parse`` over ``sentence``'s words and POS, and whether it needed
        repair: in an unlabelled outer bracket where the training trees had one (WSJ's ``( (S
        ...))``; a root that is that bracket already, over several phrases, is not wrapped twice),
        else bare (``(VROOT ...)``, ``(ROOT ...)``), as the treebank writes its trees."""
        tree, repaired = delinearise(parse.symbols, sentence.words, input_tags(sentence, self.config.tag_column),
                                     self.root_label)
        return (Tree("", (tree,)) if self.wrapped and tree.label != "" else tree), repaired

    def annotate(self, sentence: Sentence, prediction: Parse) -> None:
        """Set ``sentence.tree`` to the repaired tree of ``prediction`` (and note in it whether
        it needed repair)."""
        sentence.tree, prediction.repaired = self.tree(sentence, prediction)

    def tune_decoding(self, dev: Sequence[Sentence]) -> dict[str, Any]:
        return {}  # beam and constraint are chosen by the user (set_decoding)

    def output_counts(self, predictions: Sequence[Parse]) -> dict[str, int]:
        """``repaired``: how many of the annotated ``predictions`` needed repair into a tree."""
        return {"repaired": sum(bool(p.repaired) for p in predictions)}

    def set_decoding(self, beam: int | None = None, constrained: bool | None = None) -> None:
        if beam is not None:
            if beam < 1:
                raise TaggerError(f"--beam must be at least 1, not {beam}")
            self.beam = beam
        if constrained is not None:
            self.config.constrained = constrained

    @torch.inference_mode()
    def attention(self, sentence: Sentence) -> tuple[list[str], list[str], torch.Tensor]:
        """The input words (in the order the encoder reads them), the emitted symbols (and
        ``<eos>``, unless the symbol budget ran out first) and the attention matrix [symbols, words] of ``sentence``'s parse."""
        batch = self.collate([sentence], with_gold=False).to(next(self.parameters()).device)
        parse = self.decode(batch, with_attention=True)[0]
        words = sentence.words[::-1] if self.config.reverse_input else list(sentence.words)
        matrix = parse.attention.cpu()
        return words, (parse.symbols + [EOS])[: matrix.shape[0]], matrix

    def metric(self, sentences: Sequence[Sentence], predictions: Sequence[Parse]) -> BracketMetric:
        """Labelled bracket F1 as EVALB with COLLINS.prm, against the sentences' gold trees."""
        metric = BracketMetric(COLLINS)
        for sentence, parse in zip(sentences, predictions):
            metric.update(sentence.tree, self.tree(sentence, parse)[0])
        return metric

    # ----------------------------------------------------------------------------- initialisation
    def load_embeddings(self, words: list[str], vectors: torch.Tensor) -> int:
        """Pretrained ``vectors`` of ``words`` (in the source's order, most frequent first): with
        ``vectors="frozen"`` (the default) they become the frozen table
        (:mod:`tagger.modules.pretrained`; words matched by their lowercase forms), with
        ``"init"`` they initialise the training words' embeddings (a word's own row, else its
        lowercase form's). Returns the rows with a vector."""
        if self.config.vectors == "frozen" and len(words):
            return self._freeze_vectors(words, vectors)
        check_vector_size(vectors, self.config.word_dim)
        exact = {w: i for i, w in enumerate(words)}
        lower: dict[str, int] = {}
        for i, w in enumerate(words):
            lower.setdefault(w.lower(), i)
        rows, found = [], []
        for index, word in enumerate(self.word_vocab.itos):
            if index < len(WORD_SPECIALS):
                continue
            source = exact.get(word, lower.get(word.lower()))
            if source is not None:
                rows.append(index)
                found.append(source)
        if rows:
            with torch.no_grad():
                self.word_emb.weight[torch.tensor(rows)] = vectors[found].to(self.word_emb.weight)
        return len(rows)

    def _freeze_vectors(self, words: list[str], vectors: torch.Tensor) -> int:
        """:meth:`load_embeddings` with ``vectors="frozen"``: the table, the extra words in the
        vocabularies (``pretrained``), the config's ``pretrained_dim``."""
        if self.word_pretrained is not None:
            raise TaggerError("this model has a table of pretrained vectors already")
        known = self.word_vocab.itos
        dim = vectors.shape[1]
        room = pretrained.room_for(self.config.vectors_mb, dim, len(known))
        extra, table, found = pretrained.frozen_rows(known, words, vectors, room, str.lower, len(WORD_SPECIALS))
        self.vocabs = {**self.vocabs, "pretrained": extra}
        self.config = replace(self.config, pretrained_dim=dim)
        self.word_pretrained = FrozenVectors.holding(table, self.config.word_dim, 0.1, self.word_emb.weight.device)
        self.word_pretrained.start_from(self.word_emb, found)
        self._lookup = self._lookup_table()
        return len(found) + len(extra)
