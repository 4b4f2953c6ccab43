"""Greedy arc-standard dependency parser with a feed-forward or recurrent hidden layer
(Chen & Manning 2014; Elkaref & Bohnet 2017). SPEC §4.

The configuration at each transition is described by the 48 Chen & Manning features
(:mod:`tagger.transitions.features`): words and tags of 18 token slots, labels of the 12 child
slots, each embedded in 100 dims and concatenated into ``x`` (4800 dims). Then

* ``ffn``:   ``h = relu(W x + b)``
* ``lstm``, ``gru``, ``elman``: ``W_x x + b`` into one step of that recurrent cell
  (:mod:`tagger.modules.cells`: TensorFlow's cells, the LSTM's forget bias a constant added to
  the gate, so bootstrapping ``b_f`` from the FFN keeps it)

and ``y = softmax(W_y h)`` over the ``2L + 1`` actions. Dropout is applied to ``x`` and to ``h``
before the output layer (for the recurrent models: the non-recurrent connections only, as in
Zaremba et al. 2014). The recurrent models run over the transition sequence of one sentence;
training uses teacher forcing on the static oracle's sequence and truncated BPTT.

Non-projective training trees are projectivised (``nonprojective="lift"``, the default: Nivre &
Nilsson 2005, :mod:`tagger.transitions.pseudo_projective`; the lifted labels ``d↑h`` join the
label vocabulary, after the plain ones, and decoding moves their arcs back) or skipped
(``"skip"``, arc-standard as in the paper).

The pieces, in files of their own: the batch and the oracle replay (:mod:`.batch`), batched
greedy decoding with the illegal actions of :mod:`tagger.transitions` masked (:mod:`.decoder`),
the Chen & Manning precomputed rows that make it fast (:mod:`.precompute`), and bootstrapping a
recurrent parser from an FFN (:mod:`.bootstrap`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from tagger.corpus.features import InputFeaturizer
from tagger.corpus.records import Sentence
from tagger.corpus.vocab import Vocab
from tagger.errors import TaggerError
from tagger.evaluation.metrics import AttachmentMetric, punct_flags
from tagger.models.base import GreedyDecoding, NoDistillation, NoTransformer, check_vector_size
from tagger.models.transition_parser import bootstrap as bootstrapping
from tagger.models.transition_parser import decoder
from tagger.models.transition_parser import encoder as encoding
from tagger.models.transition_parser.config import ARCHS, ParserConfig  # noqa: F401 - ARCHS re-exported
from tagger.models.transition_parser.presets import PRESETS, TRAINING_DEFAULTS
from tagger.models.transition_parser.batch import ParserBatch, collate, lifted_tree, tag_column_values
from tagger.models.transition_parser.ids import FIRST_CHILD, LABEL_OFFSET, N_CHILD, N_SLOTS, SPECIALS, UNK_ID
from tagger.models.transition_parser.ids import NULL_ID  # noqa: F401  (the package exports it from here)
from tagger.models.transition_parser.precompute import RowTable, precomputed_words, slot_blocks, weights_key
from tagger.modules import pretrained
from tagger.modules.cells import step
from tagger.modules.pretrained import FrozenVectors
from tagger.modules.input_layer import normalize
from tagger.transitions.arc_standard import (CYCLE, MISSING_HEADS, NONPROJECTIVE, SEVERAL_ROOTS, mask_templates, n_actions,
                                             oracle, root_label, single_root, tree_problem)
from tagger.transitions.pseudo_projective import SEPARATOR, label_parts, split_lifted

GATES = {"ffn": (), "lstm": ("i", "j", "f", "o"), "gru": ("r", "z", "h"), "elman": ("h",)}


class TransitionParser(GreedyDecoding, NoDistillation, NoTransformer, nn.Module):
    """Embeddings of 48 features → FFN or recurrent hidden layer → softmax over 2L+1 actions."""

    name = "transition_parser"
    kind = "parser"  # what it is to the CLI: a tagger model (``--pos-model``) or a parser
    Config = ParserConfig
    PRESETS = PRESETS
    default_preset = "ffn"
    training_defaults = TRAINING_DEFAULTS
    # capabilities (tagger.models.base.Model)
    reads_raw_text = False  # it reads sentences from a format reader
    gives_distribution = False
    can_bootstrap = True  # a recurrent parser from a trained FFN (bootstrap)
    can_take_encoder = True  # contextual features from a trained skip-LSTM tagger (with_encoder)
    takes_transformer = True  # config.encoder_transformer: a pretrained transformer under the BiLSTM encoder
    transformer_key = "encoder_transformer"
    can_lower_precision = False
    batches_in_threads = False

    def __init__(self, config: ParserConfig, vocabs: dict[str, list[str]]):
        super().__init__()
        self.config = config
        self.vocabs = vocabs
        self.word_vocab = Vocab.from_list(vocabs["words"])
        self.tag_vocab = Vocab.from_list(vocabs["tags"])
        self.label_names = list(vocabs["labels"])
        self.label_index = {label: k for k, label in enumerate(self.label_names)}
        for name, vocab in (("words", self.word_vocab), ("tags", self.tag_vocab)):
            if vocab.itos[: len(SPECIALS)] != list(SPECIALS):
                raise ValueError(f"the {name} vocabulary must start with {SPECIALS}")
        if not self.label_names:
            raise ValueError("no dependency labels: the parser needs a DEPREL column to learn from")
        self.rare_word_from = int(vocabs.get("rare_word_from", [str(len(self.word_vocab))])[0])
        # The labels after the first ``plain_labels`` are lifted ones, d↑h (files without the entry: none)
        parts = label_parts(self.label_names, int(vocabs.get("plain_labels", [str(len(self.label_names))])[0]))
        self.plain_labels = [plain for plain, _ in parts]  # per label index: the label it is written as
        self.lifted_from = [head for _, head in parts]  # per label index: h of d↑h, None for a plain label
        self.lifts = any(head is not None for head in self.lifted_from)
        # Older model files also keep the count of non-projective training trees in
        # ``vocabs["nonprojective"]``: ignored (the meta's ``nonprojective_skipped`` holds it).
        self.n_labels = len(self.label_names)
        self.n_actions = n_actions(self.n_labels)
        c = config
        if c.reads_static:
            self.input_size = N_SLOTS * c.word_dim + N_SLOTS * c.tag_dim + N_CHILD * c.label_dim
        else:  # features=replace: the token slots read the encoder's vectors only (slot_weight, below)
            self.input_size = N_CHILD * c.label_dim
        self.gates = GATES[c.arch]
        width = max(1, len(self.gates)) * c.hidden
        self.word_emb = nn.Embedding(len(self.word_vocab), c.word_dim) if c.reads_static else None
        self.tag_emb = nn.Embedding(len(self.tag_vocab), c.tag_dim) if c.reads_static else None
        self.label_emb = nn.Embedding(self.n_labels + LABEL_OFFSET, c.label_dim)
        self.hidden = nn.Linear(self.input_size, width)  # W (FFN) or W_x of all gates, stacked
        self.recurrent = None if c.arch == "ffn" else nn.Parameter(torch.empty(width, c.hidden))  # W_h
        self.output = nn.Linear(c.hidden, self.n_actions, bias=False)  # y = softmax(W_y h)
        self.input_drop = nn.Dropout(c.input_dropout)
        self.hidden_drop = nn.Dropout(c.dropout)
        for weight in (self.word_emb, self.tag_emb, self.label_emb.weight, self.hidden.weight, self.output.weight,
                       self.recurrent):
            if isinstance(weight, nn.Embedding):
                weight = weight.weight
            if weight is not None:
                nn.init.uniform_(weight, -c.init_range, c.init_range)
        nn.init.constant_(self.hidden.bias, c.hidden_bias_init)
        #: the BiLSTM over the sentence (:mod:`.encoder`), or None
        self.encoder = encoding.TokenEncoder(c, vocabs, len(self.tag_vocab)) if c.encoder != "none" else None
        #: with an encoder, the W_s that multiply its vector v in the first ``encoder_slots`` token slots s:
        #: [2·encoder_hidden, encoder_slots, G·H] (``W_s v = v · slot_weight[:, s]``); None without
        self.slot_weight = None
        if self.encoder is not None:
            self.slot_weight = nn.Parameter(torch.empty(self.encoder.output_size, c.encoder_slots, width))
            nn.init.uniform_(self.slot_weight, -c.init_range, c.init_range)
        # the legal actions per legal_code of a state (UD's root-label rule included), as -inf biases
        templates = mask_templates(self.n_labels, root_label(self.label_names))
        mask = torch.tensor([list(t) for t in templates], dtype=torch.bool)
        self.register_buffer("mask_bias", torch.zeros(mask.shape).masked_fill(~mask, float("-inf")), persistent=False)
        #: the static word features' frozen table of pretrained vectors (``vocabs["pretrained"]``: the
        #: words only it holds, rows after the trained embedding's), or None; created last, so that
        #: the other weights draw as without it
        self.word_pretrained = None
        if c.pretrained_dim:
            rows = len(self.word_vocab) + len(vocabs.get("pretrained", []))
            self.word_pretrained = FrozenVectors(rows, c.pretrained_dim, c.word_dim, c.init_range)
        self._word_ids: dict[str, int] = {}
        self._lookup = self._lookup_table()
        self._tables: RowTable | None = None

    @property
    def input_columns(self) -> list[str]:
        """The columns of its input it reads besides the words: the parts of ``tag_column``
        (``upos+feats`` reads ``upos`` and ``feats``), none when it reads no tags
        (``config.reads_tags``). Input without them parses badly."""
        return self.pos_columns(self.config)

    @property
    def known_input_values(self) -> dict[str, frozenset[str]]:
        """The POS tags of its first input column that it saw in training (of ``upos+feats``
        tags ``NOUN+Number=Sing``, the UPOS part)."""
        column = self.pos_column(self.config)
        return {column: frozenset(tag.split("+", 1)[0] for tag in self.tag_vocab.itos)} if column else {}

    @classmethod
    def pos_column(cls, config: ParserConfig) -> str | None:
        """The POS column ``--pos-model`` retags: of ``upos+feats`` the tagger predicts upos
        (None when it reads no tags)."""
        return config.tag_column.split("+")[0] if config.reads_tags else None

    @classmethod
    def pos_columns(cls, config: ParserConfig) -> list[str]:
        """The parts of ``tag_column``, as :attr:`input_columns`: ``upos+feats`` reads both;
        none when it reads no tags (``config.reads_tags``)."""
        return config.tag_column.split("+") if config.reads_tags else []

    @property
    def distribution_labels(self) -> list[str]:
        """Empty: it gives no distribution (``gives_distribution`` is False)."""
        return []

    def distribution(self, batch: "ParserBatch") -> torch.Tensor:
        """Not a capability of this family (``gives_distribution`` is False)."""
        raise TaggerError(f"the {self.name} model gives no tag distribution")

    def set_precision(self, dtype: torch.dtype | None, in_place: bool = False) -> None:
        """Float32 only (``can_lower_precision`` is False): None is accepted, a lower dtype refused."""
        if dtype is not None:
            raise TaggerError(f"the {self.name} model computes in float32 only, not {dtype}")

    # ----------------------------------------------------------------------------- data → tensors
    @classmethod
    def required_columns(cls, config: ParserConfig) -> list[str]:
        """What training sentences must have (the POS column and DEPREL may be ``_``: tags then read
        as unknown, and a corpus without labels trains an unlabelled parser)."""
        return ["head"]

    @classmethod
    def count_nonprojective(cls, sentences: Sequence[Sentence]) -> int:
        """Sentences whose gold tree arc-standard cannot build as it is (non-projective, a cycle,
        several roots, missing heads): what ``nonprojective="skip"`` leaves out."""
        return len(_unbuildable(sentences))

    @classmethod
    def training_units(cls, config: ParserConfig, sentences: Sequence[Sentence]) -> list[Sentence]:
        """The sentences read; with ``several_roots="attach"``, a tree with several words on ROOT
        as one with a single root (:func:`~tagger.transitions.arc_standard.single_root`: its other
        root words hang from the main one), a copy, so that the parser learns from it."""
        if config.several_roots != "attach":
            return list(sentences)
        out = []
        for sentence in sentences:
            heads = sentence.columns.get("head")
            fixed = single_root(heads, sentence.columns.get("deprel") or []) if heads and sentence.has("deprel") else None
            out.append(sentence if fixed is None else replace(sentence, columns={**sentence.columns, "head": fixed}))
        return out

    @classmethod
    def training_meta(cls, config: ParserConfig, sentences: Sequence[Sentence]) -> tuple[dict[str, Any], list[str]]:
        """What the model file's meta records about the training sentences, and the notes that
        report it before training: with ``nonprojective="skip"`` how many trees arc-standard
        cannot build, which training skips; with ``"lift"`` how many trees (and arcs) are
        projectivised, and how many are still skipped (a cycle, several roots, missing heads:
        lifting cannot help those). The note on skipped trees counts each reason
        (:func:`~tagger.transitions.arc_standard.tree_problem`). A one-line error naming the
        training file when every tree would be skipped: the parser would learn nothing."""
        n = len(sentences)
        trees = arcs = 0
        decorated: Counter = Counter()
        skipped: Counter = Counter()  # trees skipped, by reason
        for heads, rels in _unbuildable(sentences):
            tree = lifted_tree(heads, rels) if config.nonprojective == "lift" else None
            if tree is None:
                skipped[tree_problem(heads) or NONPROJECTIVE] += 1
                continue
            trees += 1
            for old, new, label in zip(heads, tree[0], tree[1]):
                if old != new:
                    arcs += 1
                    decorated[label] += 1
        count = sum(skipped.values())
        if n and count == n:
            hint = ("--set nonprojective=lift learns from non-projective trees" if skipped[NONPROJECTIVE] else
                    "the parser learns from trees with every head given, one root word and no cycle")
            raise TaggerError(f"no training tree to learn from: all {n} would be skipped ({_reasons(skipped)}); {hint}",
                              sentences[0].source)
        notes = [_skip_note(skipped, n)] if count else []
        if config.nonprojective == "skip":
            return {"nonprojective_skipped": count}, notes
        if trees:
            kept = sum(count >= config.lift_min_count for count in decorated.values())
            notes.insert(0, f"{trees} non-projective training tree{'s' * (trees != 1)} of {n} projectivised "
                            f"({arcs} arc{'s' * (arcs != 1)} lifted; {len(decorated)} lifted labels, {kept} seen "
                            f">= {config.lift_min_count} times learnt as such)")
        return {"nonprojective_lifted_trees": trees, "nonprojective_lifted_arcs": arcs,
                "nonprojective_skipped": count}, notes

    @classmethod
    def vocabs_from(cls, config: ParserConfig, sentences: Sequence[Sentence]) -> dict[str, list[str]]:
        """Words (normalised), tags and labels of the training sentences, most frequent first,
        and where the words seen once start (for ``rare_word_dropout``). With
        ``nonprojective="lift"`` the labels are the plain ones, then the lifted ``d↑h`` seen at
        least ``lift_min_count`` times in the projectivised trees, and ``plain_labels`` says
        where the lifted ones start."""
        words, tags, labels = Counter(), Counter(), Counter()
        for sentence in sentences:
            words.update(normalize(w) for w in sentence.words)
            tag_values = tag_column_values(sentence, config.tag_column)
            if tag_values is not None:
                tags.update(tag_values)
            labels.update(sentence.columns.get("deprel") or ["_"] * len(sentence))
        if set(labels) != {"_"}:  # "_" is a label only in unlabelled data (Malt-TAB .dp without DEPREL)
            labels.pop("_", None)
        word_vocab = Vocab.build(words, config.min_word_count, specials=SPECIALS)
        rare_from = next((i for i, w in enumerate(word_vocab.itos) if i >= len(SPECIALS) and words[w] < 2),
                         len(word_vocab))
        label_list = sorted(labels, key=lambda k: (-labels[k], k))
        vocabs = {
            "words": word_vocab.to_list(),
            "tags": Vocab.build(tags, specials=SPECIALS).to_list(),
            "labels": label_list,
            "rare_word_from": [str(rare_from)],
        }
        if config.nonprojective == "lift":
            plain = set(label_list)
            lifted = _lifted_labels(sentences, plain)
            kept = sorted((k for k in lifted if lifted[k] >= config.lift_min_count), key=lambda k: (-lifted[k], k))
            for label in kept:  # a label read back as d↑h one way only (labels may hold the separator)
                if label in plain or len(split_lifted(label, plain)) != 1:
                    raise TaggerError(f"the training labels contain {SEPARATOR!r}, so the lifted label {label!r} "
                                      "could be misread; train with --set nonprojective=skip")
            vocabs["labels"] = label_list + kept
            vocabs["plain_labels"] = [str(len(label_list))]
        if config.encoder != "none":
            vocabs.update(encoding.encoder_vocabs(config, sentences))
            if config.encoder_transformer:
                from tagger.modules.transformer import files, resolve

                vocabs[encoding.TRANSFORMER_KEY] = [part for item in sorted(files(resolve(config.encoder_transformer)).items())
                                                    for part in item]
        elif config.encoder_transformer:
            raise TaggerError("a transformer goes under the parser's BiLSTM encoder: use --preset bilstm-words or "
                              "bilstm-tags (or --set encoder=bilstm) with --encoder")
        return vocabs

    def _lookup_table(self) -> dict[str, int]:
        """The row of each normalised word form: the trained embedding's, then (with a frozen
        table) the words only the table holds."""
        if self.word_pretrained is None:
            return self.word_vocab.stoi
        lookup = dict(self.word_vocab.stoi)
        for index, word in enumerate(self.vocabs.get("pretrained", []), len(self.word_vocab)):
            lookup.setdefault(word, index)
        return lookup

    def _word_id(self, word: str) -> int:
        index = self._word_ids.get(word)
        if index is None:
            index = self._lookup.get(normalize(word), UNK_ID)
            if len(self._word_ids) < 500_000:
                self._word_ids[word] = index
        return index

    def collate(self, sentences: Sequence[Sentence], with_gold: bool = True) -> ParserBatch:
        """Number ``sentences``; with gold, also replay the static oracle on each tree
        (:func:`.batch.collate`: non-projective trees projectivised with ``nonprojective="lift"``;
        sentences whose tree arc-standard cannot build even so, or with a label unseen in training,
        are left out; ``batch.kept`` lists the ones in it)."""
        batch = collate(sentences, with_gold, self._word_id, self.tag_vocab.stoi, self.config.tag_column,
                        self.label_index, lift=self.config.nonprojective == "lift")
        if self.encoder is not None:
            batch.encoder = self.encoder.collate([sentences[k] for k in batch.kept])
        return batch

    # ----------------------------------------------------------------------------- the network
    def word_rows(self, words: torch.Tensor, trained: torch.Tensor | None = None) -> torch.Tensor:
        """The static word vectors [..., word_dim] of word ids ``words`` of any shape: the trained
        embedding's rows, plus the projected frozen vectors where there is a table
        (:mod:`tagger.modules.pretrained`; ids past the trained rows read UNK's trained row).
        ``trained``: the ids the trained part reads instead (rare-word dropout's UNKs, which keep
        their vectors as unseen words do)."""
        trained = words if trained is None else trained
        if self.word_pretrained is None:
            return self.word_emb(trained)
        trained = trained.masked_fill(trained >= len(self.word_vocab), UNK_ID)
        return self.word_emb(trained) + self.word_pretrained(words)

    def embed(self, pos: torch.Tensor, word_x: torch.Tensor | None, tags: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """``x`` [..., 4800]: embeddings of the words, tags and labels at global positions ``pos``
        [..., 18], the words' from ``word_x`` [G, word_dim] (:meth:`word_rows` of every global
        position; with an encoder and ``features`` ``replace``: None, and only the 12 labels, [..., 1200])."""
        label_x = self.label_emb(labels[pos[..., FIRST_CHILD:]]).flatten(-2)
        if self.word_emb is None:
            return label_x
        return torch.cat([word_x[pos].flatten(-2), self.tag_emb(tags[pos]).flatten(-2), label_x], -1)

    def token_vectors(self, batch: ParserBatch) -> torch.Tensor:
        """With an encoder, its vector of every global position of ``batch`` [G, 2·encoder_hidden]."""
        assert self.encoder is not None and batch.encoder is not None, "a parser with an encoder, and its batch"
        return self.encoder(batch.encoder, batch.tags, batch.bases, batch.lengths)

    def token_pre(self, batch: ParserBatch, word_x: torch.Tensor | None, positions: torch.Tensor) -> torch.Tensor:
        """With an encoder, ``W x + b`` [..., G·H] of the configurations whose token slots hold
        ``positions`` [..., 18] (training): every product ``W_s e`` made once per token and slot
        (:func:`.encoder.slot_rows`) and summed per configuration (:func:`.encoder.token_sum`),
        for the encoder's vectors, the word vectors ``word_x`` [G, word_dim] and tags (``features`` ``beside``)
        and the labels; dropout (``input_dropout``) on the embeddings once per token."""
        c, weight = self.config, self.hidden.weight
        parts = [(self.token_vectors(batch), self.slot_weight, 0)]
        if c.reads_static:
            parts.append((self.input_drop(word_x), slot_blocks(weight, 0, c.word_dim, N_SLOTS), 0))
            parts.append((self.input_drop(self.tag_emb(batch.tags)),
                          slot_blocks(weight, N_SLOTS * c.word_dim, c.tag_dim, N_SLOTS), 0))
        parts.append((self.input_drop(self.label_emb(batch.labels)),
                      slot_blocks(weight, weight.shape[1] - N_CHILD * c.label_dim, c.label_dim, N_CHILD), FIRST_CHILD))
        pre = self.hidden.bias
        for vectors, blocks, first in parts:
            rows = encoding.slot_rows(vectors, blocks)
            pre = pre + encoding.token_sum(rows, positions[..., first : first + blocks.shape[1]])
        return pre

    def plain_encoded(self, pos: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
        """:meth:`encoded` the plain way, for ``pos`` [B, 18]: the encoder's ``vectors`` [G, 2H]
        (:meth:`token_vectors`) of the slots, concatenated, times the matrix of the W_s."""
        x = vectors[pos[:, : self.config.encoder_slots]].flatten(1)  # [B, slots · 2H], slot-major
        return x @ self.slot_weight.transpose(0, 1).reshape(x.shape[1], -1)

    def forward(self, batch: ParserBatch) -> torch.Tensor:
        """Scores [N, 2L+1] of the oracle's N configurations (all sentences, in order; teacher forcing)."""
        words = trained = batch.words
        if self.training and self.config.rare_word_dropout > 0 and self.rare_word_from < len(self.word_vocab):
            rare = (words >= self.rare_word_from) & (words < len(self.word_vocab))
            drop = rare & (torch.rand(words.shape, device=words.device) < self.config.rare_word_dropout)
            trained = words.masked_fill(drop, UNK_ID)
        word_x = self.word_rows(words, trained) if self.word_emb is not None else None  # [G, word_dim]
        valid = batch.valid
        if self.encoder is not None:
            pre = self.token_pre(batch, word_x, batch.positions[valid] if self.recurrent is None else batch.positions)
            if self.recurrent is None:
                return self.output(self.hidden_drop(F.relu(pre)))
        elif self.recurrent is None:
            x = self.input_drop(self.embed(batch.positions[valid], word_x, batch.tags, batch.labels))
            return self.output(self.hidden_drop(F.relu(self.hidden(x))))
        else:
            pre = self.hidden(self.input_drop(self.embed(batch.positions, word_x, batch.tags, batch.labels)))  # [B, T, G·H]
        batch_size, steps = valid.shape
        h = pre.new_zeros(batch_size, self.config.hidden)
        c = torch.zeros_like(h) if self.config.arch == "lstm" else None
        outputs = []
        tau = self.config.bptt
        per_step = pre.unbind(1)  # one backward for all steps (a slice's would fill a whole [B, T, G·H] each)
        for t in range(steps):
            if tau and t and t % tau == 0:
                h = h.detach()
                c = c.detach() if c is not None else None
            h, c = step(self.config.arch, per_step[t], h, c, self.recurrent, self.config.forget_bias)
            outputs.append(h)
        if not outputs:
            return self.output.weight.new_zeros(0, self.n_actions) + 0.0 * self.output.weight.sum()
        hs = torch.stack(outputs, 1)[valid]
        return self.output(self.hidden_drop(hs))

    def loss(self, scores: torch.Tensor, batch: ParserBatch) -> torch.Tensor:
        """Mean cross-entropy over the batch's oracle transitions."""
        gold = batch.actions[batch.valid]
        if gold.numel() == 0:
            return scores.sum() * 0.0
        return F.cross_entropy(scores, gold)

    # ----------------------------------------------------------------------------- decoding
    def train(self, mode: bool = True) -> "TransitionParser":
        if mode:
            self._tables = None  # the precomputed rows go stale as soon as the weights change
        return super().train(mode)

    def precomputed_words(self) -> int:
        """How many of the most frequent words get precomputed rows (``precompute``, memory-capped)."""
        return precomputed_words(self)

    def row_table(self) -> RowTable:
        """The precomputed rows (:mod:`.precompute`) of the current weights: rebuilt when they changed."""
        if self._tables is None or self._tables.key != weights_key(self):
            self._tables = RowTable.build(self)
        return self._tables

    def decode(self, batch: ParserBatch) -> list[tuple[list[int], list[str]]]:
        """Greedy parse of every sentence of ``batch``: ``(heads, deprels)`` per sentence, in order
        (:mod:`.decoder`); each a single-rooted tree, projective unless lifted arcs were moved
        back (their labels are plain again)."""
        return decoder.decode(self, batch)

    # ----------------------------------------------------------------------------- results
    @property
    def output_columns(self) -> list[str]:
        """The columns :meth:`annotate` fills."""
        return ["head", "deprel"]

    def annotate(self, sentence: Sentence, prediction: tuple[list[int], list[str]]) -> None:
        """Write predicted heads and labels into ``sentence``'s ``head`` and ``deprel`` columns."""
        heads, rels = prediction
        sentence.columns["head"] = list(heads)
        sentence.columns["deprel"] = list(rels)

    def metric(self, sentences: Sequence[Sentence], predictions: Sequence[tuple[list[int], list[str]]]) -> AttachmentMetric:
        """UAS/LAS against the sentences' gold trees; punctuation by UPOS ``PUNCT`` or PTB tags."""
        metric = AttachmentMetric()
        for sentence, (heads, rels) in zip(sentences, predictions):
            n = len(sentence)
            gold_heads = sentence.columns.get("head") or [-1] * n
            gold_rels = sentence.columns.get("deprel") or ["_"] * n
            metric.update(gold_heads, gold_rels, heads, rels, punct_flags(sentence))
        return metric

    def load_embeddings(self, words: list[str], vectors: torch.Tensor) -> int:
        """Pretrained ``vectors`` of ``words`` (the source's order, most frequent first) for the
        static word features: with ``vectors="frozen"`` (the default) a frozen table
        (:meth:`_freeze_vectors`), with ``"init"`` the training words' initial embeddings. With an
        encoder also its own word embeddings start from them, when they are as wide (and those
        alone with ``features`` ``replace``). Returns how many rows of the static words have a vector."""
        if self.config.vectors == "frozen" and self.word_emb is None and len(words) and self.encoder is not None \
                and self.config.encoder_word_dim and not self.config.encoder_pretrained_dim:
            return self._freeze_encoder_vectors(words, vectors)  # its encoder's are its only words
        frozen = self.config.vectors == "frozen" and self.word_emb is not None and len(words) > 0
        if frozen:
            count = self._freeze_vectors(words, vectors)
            words_of_encoder = self.encoder.input.word if self.encoder is not None else None
            if words_of_encoder is None or self.config.encoder_pretrained_dim \
                    or vectors.shape[1] != words_of_encoder.weight.shape[1]:
                return count
            self._init_rows([(self.encoder.word_vocab, words_of_encoder.weight, 2)], words, vectors)
            return count
        tables = [(self.word_vocab, self.word_emb.weight, len(SPECIALS))] if self.word_emb is not None else []
        encoder_words = self.encoder.input.word if self.encoder is not None else None
        if self.config.encoder_pretrained_dim:  # it has the vectors already, its trained part starting at zero
            encoder_words = None
            if not tables:
                return 0
        if encoder_words is not None and (not tables or vectors.shape[1] == encoder_words.weight.shape[1]):
            tables.append((self.encoder.word_vocab, encoder_words.weight, 2))  # after PAD, UNK
        if not tables:
            raise TaggerError(f"the {self.name} model has no word embeddings to initialise (encoder_word_dim=0)")
        if self.word_emb is None and vectors.shape[1] != self.config.encoder_word_dim:
            raise TaggerError(f"vectors have {vectors.shape[1]} dimensions but encoder_word_dim is "
                              f"{self.config.encoder_word_dim}; add --set encoder_word_dim={vectors.shape[1]}")
        check_vector_size(vectors, tables[0][1].shape[1])
        return self._init_rows(tables, words, vectors)[0]

    @staticmethod
    def _init_rows(tables: list, words: list[str], vectors: torch.Tensor) -> list[int]:
        """Copy ``vectors`` into the rows of ``tables`` ((vocabulary, weight, first row) each)
        whose normalised words they have; how many rows each got."""
        counts = []
        for vocab, weight, first in tables:
            rows, found, seen = [], [], set()
            for i, word in enumerate(words):
                index = vocab.stoi.get(normalize(word))
                if index is not None and index >= first and index not in seen:
                    seen.add(index)
                    rows.append(index)
                    found.append(i)
            if rows:
                with torch.no_grad():
                    weight[torch.tensor(rows)] = vectors[found].to(weight)
            counts.append(len(rows))
        return counts

    def _freeze_vectors(self, words: list[str], vectors: torch.Tensor) -> int:
        """:meth:`load_embeddings` with ``vectors="frozen"``: the static words' table (their
        normalised forms matched), the extra words in the vocabularies (``pretrained``), the
        config's ``pretrained_dim``; the trained rows of words with a vector start at zero."""
        if self.word_pretrained is not None:
            raise TaggerError("this model has a table of pretrained vectors already")
        known, dim = self.word_vocab.itos, vectors.shape[1]
        room = pretrained.room_for(self.config.vectors_mb, dim, len(known))
        extra, table, found = pretrained.frozen_rows(known, words, vectors, room, normalize, len(SPECIALS))
        self.take_table(extra, table)
        self.word_pretrained.start_from(self.word_emb, found)
        return len(found) + len(extra)

    def _freeze_encoder_vectors(self, words: list[str], vectors: torch.Tensor) -> int:
        """:meth:`load_embeddings` with ``vectors="frozen"`` for a parser whose words are its
        encoder's alone (``features=replace``): the encoder's input gets the frozen table, as a
        tagger's does (the extra words in the vocabularies, ``encoder_pretrained``; the config's
        ``encoder_pretrained_dim``), the same as one taken from a tagger (:meth:`with_encoder`)."""
        encoder = self.encoder
        known, dim = encoder.word_vocab.itos, vectors.shape[1]
        room = pretrained.room_for(self.config.vectors_mb, dim, len(known))
        extra, table, found = pretrained.frozen_rows(known, words, vectors, room, normalize, 2)  # after PAD, UNK
        self.vocabs = {**self.vocabs, encoding.PRETRAINED_KEY: list(extra)}
        self.config = replace(self.config, encoder_pretrained_dim=dim)
        old = encoder.featurizer
        encoder.featurizer = InputFeaturizer(Vocab.from_list(list(known) + list(extra)), old.chars, old.char_length,
                                             old.spell_length)
        encoder.input.add_pretrained(table.to(encoder.input.word.weight.device))
        encoder.input.start_from_pretrained(found)
        return len(found) + len(extra)

    def take_table(self, extra: list[str], table: torch.Tensor) -> None:
        """Hold the frozen ``table`` [words + extra, dim] (a new projection), ``extra`` its words
        beyond the training words."""
        self.vocabs = {**self.vocabs, "pretrained": list(extra)}
        self.config = replace(self.config, pretrained_dim=table.shape[1])
        self.word_pretrained = FrozenVectors.holding(table, self.config.word_dim, self.config.init_range,
                                                     self.word_emb.weight.device)
        self._word_ids, self._lookup, self._tables = {}, self._lookup_table(), None

    # ----------------------------------------------------------------------------- bootstrapping
    def bootstrap(self, ffn: "TransitionParser", gates: list[str] | None = None) -> None:
        """Initialise this recurrent parser from a trained FFN parser (Elkaref & Bohnet 2017, §4):
        its embeddings, output layer and, for each gate in ``gates`` (``i j f o`` for LSTM,
        ``r z h`` for GRU, ``h`` for Elman; ``None`` or empty = all), hidden weights and bias
        (:mod:`.bootstrap`). A ``ValueError`` when they do not fit."""
        bootstrapping.bootstrap(self, ffn, gates)
        self._tables = None

    def load_transformer(self) -> str:
        """The pretrained weights of the transformer under the encoder (``encoder_transformer``),
        for a parser about to be trained; a note saying which ("" without one)."""
        encoder = self.encoder
        if encoder is None or encoder.transformer is None:
            return ""
        from tagger.modules.transformer import pretrained_state, resolve

        encoder.transformer.model.load_state_dict(pretrained_state(resolve(self.config.encoder_transformer)))
        return f"transformer {self.config.encoder_transformer} loaded under the encoder"

    def pretrained_parameters(self) -> list[nn.Parameter]:
        """The weights of a fine-tuned transformer under the encoder (taken from a tagger with
        ``transformer_tune``): trained at the encoder's learning rate."""
        encoder = self.encoder
        if encoder is None or encoder.transformer is None or not self.config.encoder_transformer_tune:
            return []
        return list(encoder.transformer.model.parameters())

    @classmethod
    def with_encoder(cls, config: ParserConfig, vocabs: dict[str, list[str]], source: Any) -> "TransitionParser":
        """A parser of ``config`` and ``vocabs`` with contextual features whose encoder starts
        as the trained skip-LSTM tagger ``source``'s: its shape (which wins over ``config``'s
        encoder options; :func:`.encoder.config_from_tagger`), its word and character
        vocabularies, and its input layer and recurrent layers (:func:`.encoder.copy_tagger_weights`).
        A ``ValueError`` when ``source`` is no skip-LSTM tagger or has a shape the encoder lacks."""
        if source.name != "skip_lstm":
            raise ValueError(f"the encoder comes from a skip_lstm tagger, not a {source.name} model")
        config = encoding.config_from_tagger(config, source.config)
        words = list(source.vocabs["words"])
        vocabs = {**vocabs, "encoder_words": words, "encoder_chars": list(source.vocabs["chars"]),
                  "encoder_rare_word_from": list(source.vocabs.get("rare_word_from", [str(len(words))]))}
        if config.encoder_pretrained_dim:  # the tagger's frozen table comes too, with its words
            vocabs[encoding.PRETRAINED_KEY] = list(source.vocabs.get("pretrained", []))
        for key, source_key in zip(encoding.SUBWORD_KEYS, ("subwords", "subword_kinds")):  # and its subword units
            vocabs.pop(key, None)
            if source.vocabs.get("subwords") and config.encoder_subword_dim:
                vocabs[key] = list(source.vocabs[source_key])
        if config.encoder_transformer:  # and its transformer, with its files
            vocabs[encoding.TRANSFORMER_KEY] = list(source.vocabs["transformer_files"])
        model = cls(config, vocabs)
        encoding.copy_tagger_weights(model.encoder, source.state_dict())
        return model


def _unbuildable(sentences: Sequence[Sentence]) -> list[tuple[Sequence[int], Sequence[str]]]:
    """``(heads, deprels)`` of the sentences whose gold tree arc-standard cannot build as it is."""
    trees = []
    for sentence in sentences:
        heads = sentence.columns.get("head")
        if heads is None:
            continue
        try:
            oracle(heads, [0] * len(heads))
        except ValueError:
            trees.append((heads, sentence.columns.get("deprel") or ["_"] * len(heads)))
    return trees


#: How :func:`_skip_note` words each reason a tree is skipped for (before or after "training tree").
_REASON_WORDS = {NONPROJECTIVE: ("non-projective ", ""), CYCLE: ("", " with a cycle"),
                 SEVERAL_ROOTS: ("", " with several roots"), MISSING_HEADS: ("", " with missing heads")}


def _reasons(skipped: Counter) -> str:
    """``skipped`` (trees by reason) as ``2 with a cycle, 1 with several roots``."""
    return ", ".join(f"{count} {_REASON_WORDS[reason][0].strip() or _REASON_WORDS[reason][1].strip()}"
                     for reason, count in sorted(skipped.items(), key=lambda item: -item[1]))


def _skip_note(skipped: Counter, n: int) -> str:
    """The note on the training trees that will be skipped, of ``n``: one reason named in the
    sentence (``3 training trees with a cycle will be skipped (of 8)``), several counted each."""
    count = sum(skipped.values())
    trees = f"training tree{'s' * (count != 1)}"
    if len(skipped) == 1:
        before, after = _REASON_WORDS[next(iter(skipped))]
        return f"{count} {before}{trees}{after} will be skipped (of {n})"
    return f"{count} {trees} will be skipped (of {n}): {_reasons(skipped)}"


def _lifted_labels(sentences: Sequence[Sentence], plain: set[str]) -> Counter:
    """How often each lifted label ``d↑h`` occurs in the projectivised training trees (of the
    sentences whose labels are all in ``plain``: the others are never trained on)."""
    counts: Counter = Counter()
    for heads, rels in _unbuildable(sentences):
        tree = lifted_tree(heads, rels) if all(r in plain for r in rels) else None
        if tree is not None:
            counts.update(new for old, new, h, lifted in zip(rels, tree[1], heads, tree[0]) if h != lifted)
    return counts
