"""Greedy arc-standard dependency parser with a feed-forward or recurrent hidden layer
(Chen & Manning 2014; Elkaref & Bohnet 2017). SPEC §4.

The configuration at each transition is described by the 48 Chen & Manning features
(:mod:`tagger.transitions.features`): words and tags of 18 token slots, labels of the 12 child
slots, each embedded in 100 dims and concatenated into ``x`` (4800 dims). Then

* ``ffn``:   ``h = relu(W x + b)``
* ``lstm``:  ``[i, j, f, o] = W_x x + W_h h_{t-1} + b``; ``c = c ⊙ σ(f + forget_bias) + σ(i) ⊙ tanh(j)``;
  ``h = tanh(c) ⊙ σ(o)`` (TensorFlow's ``BasicLSTMCell``: no peepholes, the forget bias is a
  constant added to the gate, so bootstrapping ``b_f`` from the FFN keeps it)
* ``gru``:   ``[r, z] = σ(W_x[r,z] x + W_h[r,z] h_{t-1} + b)``; ``h̃ = tanh(W_x[h] x + W_h[h] (r ⊙ h_{t-1}) + b_h)``;
  ``h = z ⊙ h_{t-1} + (1 - z) ⊙ h̃``
* ``elman``: ``h = relu(W_x x + W_h h_{t-1} + b)``

and ``y = softmax(W_y h)`` over the ``2L + 1`` actions. Dropout is applied to ``x`` and to ``h``
before the output layer (for the recurrent models: the non-recurrent connections only, as in
Zaremba et al. 2014). The recurrent models run over the transition sequence of one sentence;
training uses teacher forcing on the static oracle's sequence and truncated BPTT.

Decoding is greedy with illegal actions masked, batched across sentences. Because ``W x`` is linear
in the embeddings, it is a sum of one ``W_slot · e`` row per feature: those rows are precomputed
(Chen & Manning) for every tag and label and for the most frequent words, the other words of a
batch get theirs computed once per batch, and each step is then one ``embedding_bag`` sum.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from tagger.corpus.records import Sentence
from tagger.corpus.vocab import PAD, UNK, Vocab
from tagger.errors import TaggerError
from tagger.evaluation.metrics import AttachmentMetric, is_punct
from tagger.models.base import check_vector_size
from tagger.models.transition_parser.config import ARCHS, ParserConfig  # noqa: F401 - ARCHS re-exported
from tagger.models.transition_parser.presets import PRESETS, TRAINING_DEFAULTS
from tagger.modules.input_layer import normalize
from tagger.transitions.arc_standard import State, apply, legal_code, mask_templates, oracle
from tagger.transitions.features import TOKEN_SLOTS, token_slots

NULL = "<null>"
ROOT = "<root>"
#: Special entries at the start of the word, tag and label embedding tables.
SPECIALS = (PAD, UNK, NULL, ROOT)
PAD_ID, UNK_ID, NULL_ID, ROOT_ID = range(4)
#: Label embedding id of transition label k is ``k + LABEL_OFFSET``.
LABEL_OFFSET = len(SPECIALS)

N_SLOTS = len(TOKEN_SLOTS)  # 18 token slots; slots 6..17 (children) also give a label feature
N_CHILD = N_SLOTS - 6  # 12
GATES = {"ffn": (), "lstm": ("i", "j", "f", "o"), "gru": ("r", "z", "h"), "elman": ("h",)}

# Global positions in a batch: 0 is the NULL sentinel (an empty slot), 1 a scratch slot that
# is written but never read, then each sentence's ROOT and words.
SENTINEL, SCRATCH, FIRST_BASE = 0, 1, 2


def tag_column_values(sentence: Sentence, column: str) -> list[str] | None:
    """The tags the parser reads: one column (``upos``), or several joined with ``+``
    (``upos+feats`` gives ``NOUN+Number=Sing``: one tag per combination, as UDPipe 1 also reads
    FEATS). ``None`` when the sentence has none of them."""
    if "+" not in column:
        return sentence.columns.get(column)
    parts = [sentence.columns.get(name) for name in column.split("+")]
    if all(part is None for part in parts):
        return None
    blank = ["_"] * len(sentence)
    return ["+".join(values) for values in zip(*(part or blank for part in parts))]


@dataclass
class ParserBatch:
    """Sentences numbered for the parser. ``G`` global positions: 0 = NULL sentinel, 1 = scratch,
    then per sentence its ROOT and words (sentence ``b`` starts at ``bases[b]``)."""

    words: torch.Tensor  # [G] word id per global position
    tags: torch.Tensor  # [G] tag id per global position
    lengths: torch.Tensor  # [B] words per sentence
    bases: torch.Tensor  # [B] global position of each sentence's ROOT
    labels: torch.Tensor | None = None  # [G] gold label-embedding id (training)
    positions: torch.Tensor | None = None  # [B, T, 18] global positions of the token slots, per oracle step
    actions: torch.Tensor | None = None  # [B, T] oracle actions, -100 after the sentence's 2n steps
    kept: list[int] | None = None  # indices (into the collated list) of the sentences in the batch

    def to(self, device: torch.device) -> "ParserBatch":
        move = lambda t: None if t is None else t.to(device, non_blocking=True)  # noqa: E731
        return ParserBatch(move(self.words), move(self.tags), move(self.lengths), move(self.bases),
                           move(self.labels), move(self.positions), move(self.actions), self.kept)

    @property
    def n_tokens(self) -> int:
        return int(self.lengths.sum())

    @property
    def valid(self) -> torch.Tensor:
        """[B, T] true for real transitions (sentence b has exactly 2·n_b)."""
        steps = self.actions.shape[1] if self.actions is not None else int(2 * self.lengths.max())
        return torch.arange(steps, device=self.lengths.device) < 2 * self.lengths.unsqueeze(1)


class TransitionParser(nn.Module):
    """Embeddings of 48 features → FFN or recurrent hidden layer → softmax over 2L+1 actions."""

    name = "transition_parser"
    kind = "parser"  # what it is to the CLI: a tagger model (``--pos-model``) or a parser
    Config = ParserConfig
    PRESETS = PRESETS
    default_preset = "ffn"
    training_defaults = TRAINING_DEFAULTS
    # capabilities (tagger.models.base.Model)
    gives_distribution = False
    can_bootstrap = True  # a recurrent parser from a trained FFN (bootstrap)
    can_lower_precision = False

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
        # Older model files also keep the count of non-projective training trees in
        # ``vocabs["nonprojective"]``: ignored (the meta's ``nonprojective_skipped`` holds it).
        self.n_labels = len(self.label_names)
        self.n_actions = 2 * self.n_labels + 1
        c = config
        self.input_size = N_SLOTS * c.word_dim + N_SLOTS * c.tag_dim + N_CHILD * c.label_dim
        self.gates = GATES[c.arch]
        width = max(1, len(self.gates)) * c.hidden
        self.word_emb = nn.Embedding(len(self.word_vocab), c.word_dim)
        self.tag_emb = nn.Embedding(len(self.tag_vocab), c.tag_dim)
        self.label_emb = nn.Embedding(self.n_labels + LABEL_OFFSET, c.label_dim)
        self.hidden = nn.Linear(self.input_size, width)  # W (FFN) or W_x of all gates, stacked
        self.recurrent = None if c.arch == "ffn" else nn.Parameter(torch.empty(width, c.hidden))  # W_h
        self.output = nn.Linear(c.hidden, self.n_actions, bias=False)  # y = softmax(W_y h)
        self.input_drop = nn.Dropout(c.input_dropout)
        self.hidden_drop = nn.Dropout(c.dropout)
        for weight in (self.word_emb.weight, self.tag_emb.weight, self.label_emb.weight, self.hidden.weight,
                       self.output.weight, self.recurrent):
            if weight is not None:
                nn.init.uniform_(weight, -c.init_range, c.init_range)
        nn.init.constant_(self.hidden.bias, c.hidden_bias_init)
        templates = mask_templates(self.n_labels)
        mask = torch.tensor([list(t) for t in templates], dtype=torch.bool)
        root = self.label_index.get("root")
        if root is not None:  # UD: the arc from ROOT is labelled root, and no other arc is
            for code in range(8):
                from_root = bool(code & 4) and not code & 2  # RIGHT-ARC legal, LEFT-ARC not: s1 is ROOT
                if from_root:
                    mask[code, 2::2] = False
                    mask[code, 2 + 2 * root] = True
                else:
                    mask[code, 1 + 2 * root] = mask[code, 2 + 2 * root] = False
        self.register_buffer("mask_bias", torch.zeros(mask.shape).masked_fill(~mask, float("-inf")), persistent=False)
        self._word_ids: dict[str, int] = {}
        self._tables: dict | None = None

    @property
    def input_columns(self) -> list[str]:
        """The columns of its input it reads besides the words: the parts of ``tag_column``
        (``upos+feats`` reads ``upos`` and ``feats``). Input without them parses badly."""
        return self.config.tag_column.split("+")

    @classmethod
    def pos_column(cls, config: ParserConfig) -> str | None:
        """The POS column ``--pos-model`` retags: of ``upos+feats`` the tagger predicts upos."""
        return config.tag_column.split("+")[0]

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
        """Sentences whose gold tree arc-standard cannot build (non-projective, several roots)."""
        count = 0
        for sentence in sentences:
            heads = sentence.columns.get("head")
            if heads is None:
                continue
            try:
                oracle(heads, [0] * len(heads))
            except ValueError:
                count += 1
        return count

    @classmethod
    def training_meta(cls, config: ParserConfig, sentences: Sequence[Sentence]) -> tuple[dict[str, Any], list[str]]:
        """What the model file's meta records about the training sentences, and the notes that
        report it before training: how many trees arc-standard cannot build (non-projective,
        several roots, missing heads), which training skips (they are not projectivised)."""
        count = cls.count_nonprojective(sentences)
        notes = [f"{count} non-projective training tree{'s' * (count != 1)} will be skipped (of {len(sentences)})"] if count else []
        return {"nonprojective_skipped": count}, notes

    @classmethod
    def vocabs_from(cls, config: ParserConfig, sentences: Sequence[Sentence]) -> dict[str, list[str]]:
        """Words (normalised), tags and labels of the training sentences, most frequent first,
        and where the words seen once start (for ``rare_word_dropout``)."""
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
        return {
            "words": word_vocab.to_list(),
            "tags": Vocab.build(tags, specials=SPECIALS).to_list(),
            "labels": sorted(labels, key=lambda k: (-labels[k], k)),
            "rare_word_from": [str(rare_from)],
        }

    def _word_id(self, word: str) -> int:
        index = self._word_ids.get(word)
        if index is None:
            index = self.word_vocab.stoi.get(normalize(word), UNK_ID)
            if len(self._word_ids) < 500_000:
                self._word_ids[word] = index
        return index

    def collate(self, sentences: Sequence[Sentence], with_gold: bool = True) -> ParserBatch:
        """Number ``sentences``; with gold, also replay the static oracle on each tree.

        With gold, sentences whose tree arc-standard cannot build (non-projective, several roots,
        missing heads) or that use a label unseen in training are left out of the batch
        (``batch.kept`` lists the ones in it).
        """
        tag_stoi, word_id = self.tag_vocab.stoi, self._word_id
        column = self.config.tag_column
        kept, oracles = [], []
        for k, sentence in enumerate(sentences):
            if with_gold:
                heads = sentence.columns.get("head")
                rels = sentence.columns.get("deprel") or ["_"] * len(sentence)
                if heads is None:
                    continue
                try:
                    labels = [self.label_index[r] for r in rels]
                    oracles.append((oracle(heads, labels), labels))
                except (KeyError, ValueError):
                    continue
            kept.append(k)
        words, tags, lengths, bases = [NULL_ID, NULL_ID], [NULL_ID, NULL_ID], [], []
        gold_labels = [NULL_ID, NULL_ID]
        for j, k in enumerate(kept):
            sentence = sentences[k]
            n = len(sentence)
            bases.append(len(words))
            lengths.append(n)
            words.append(ROOT_ID)
            words.extend(word_id(w) for w in sentence.words)
            tags.append(ROOT_ID)
            tag_values = tag_column_values(sentence, column)
            if tag_values is None:
                tags.extend([UNK_ID] * n)
            else:
                tags.extend(tag_stoi.get(t, UNK_ID) for t in tag_values)
            if with_gold:
                gold_labels.append(NULL_ID)
                gold_labels.extend(label + LABEL_OFFSET for label in oracles[j][1])
        batch = ParserBatch(torch.tensor(words), torch.tensor(tags), torch.tensor(lengths, dtype=torch.long),
                            torch.tensor(bases, dtype=torch.long), kept=kept)
        if not with_gold:
            return batch
        flat: list[int] = []
        row_base: list[int] = []
        all_actions: list[int] = []
        for j, (actions, _) in enumerate(oracles):
            state = State(lengths[j])
            for action in actions:
                flat += token_slots(state)
                apply(state, action)
            row_base += [bases[j]] * len(actions)
            all_actions += actions
        steps = 2 * max(lengths, default=0)
        raw = torch.tensor(flat, dtype=torch.long).view(-1, N_SLOTS)
        raw = torch.where(raw >= 0, raw + torch.tensor(row_base, dtype=torch.long).unsqueeze(1), SENTINEL)
        batch.labels = torch.tensor(gold_labels)
        batch.actions = torch.full((len(kept), steps), -100, dtype=torch.long)
        valid = batch.valid
        batch.actions[valid] = torch.tensor(all_actions, dtype=torch.long)
        batch.positions = torch.zeros(len(kept), steps, N_SLOTS, dtype=torch.long)
        batch.positions[valid] = raw
        return batch

    # ----------------------------------------------------------------------------- the network
    def _embed(self, pos: torch.Tensor, words: torch.Tensor, tags: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """``x`` [..., 4800]: embeddings of the words, tags and labels at global positions ``pos`` [..., 18]."""
        return torch.cat([self.word_emb(words[pos]).flatten(-2), self.tag_emb(tags[pos]).flatten(-2),
                          self.label_emb(labels[pos[..., 6:]]).flatten(-2)], -1)

    def forward(self, batch: ParserBatch) -> torch.Tensor:
        """Scores [N, 2L+1] of the oracle's N configurations (all sentences, in order; teacher forcing)."""
        words = batch.words
        if self.training and self.config.rare_word_dropout > 0 and self.rare_word_from < len(self.word_vocab):
            drop = (words >= self.rare_word_from) & (torch.rand(words.shape, device=words.device) < self.config.rare_word_dropout)
            words = words.masked_fill(drop, UNK_ID)
        valid = batch.valid
        if self.recurrent is None:
            x = self.input_drop(self._embed(batch.positions[valid], words, batch.tags, batch.labels))
            return self.output(self.hidden_drop(F.relu(self.hidden(x))))
        pre = self.hidden(self.input_drop(self._embed(batch.positions, words, batch.tags, batch.labels)))  # [B, T, G·H]
        batch_size, steps = valid.shape
        h = pre.new_zeros(batch_size, self.config.hidden)
        c = torch.zeros_like(h) if self.config.arch == "lstm" else None
        outputs = []
        tau = self.config.bptt
        for t in range(steps):
            if tau and t and t % tau == 0:
                h = h.detach()
                c = c.detach() if c is not None else None
            h, c = self._cell(pre[:, t], h, c)
            outputs.append(h)
        if not outputs:
            return self.output.weight.new_zeros(0, self.n_actions) + 0.0 * self.output.weight.sum()
        hs = torch.stack(outputs, 1)[valid]
        return self.output(self.hidden_drop(hs))

    def _cell(self, pre: torch.Tensor, h: torch.Tensor, c: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """One recurrent step from the input projection ``pre`` = W_x x + b [B, G·H]."""
        arch, size, w_h = self.config.arch, self.config.hidden, self.recurrent
        if arch == "lstm":
            i, j, f, o = torch.addmm(pre, h, w_h.t()).chunk(4, 1)
            c = c * torch.sigmoid(f + self.config.forget_bias) + torch.sigmoid(i) * torch.tanh(j)
            return torch.tanh(c) * torch.sigmoid(o), c
        if arch == "gru":
            r, z = torch.sigmoid(torch.addmm(pre[:, : 2 * size], h, w_h[: 2 * size].t())).chunk(2, 1)
            candidate = torch.tanh(torch.addmm(pre[:, 2 * size :], r * h, w_h[2 * size :].t()))
            return torch.lerp(candidate, h, z), None  # z ⊙ h + (1 - z) ⊙ h̃
        return F.relu(torch.addmm(pre, h, w_h.t())), None  # elman

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

    def _weights_key(self) -> tuple:
        params = (self.word_emb.weight, self.tag_emb.weight, self.label_emb.weight, self.hidden.weight, self.hidden.bias)
        return tuple(p._version for p in params) + tuple(p.data_ptr() for p in params) + (self.hidden.weight.device,)

    def precomputed_words(self) -> int:
        """How many of the most frequent words get precomputed rows (``precompute``, memory-capped)."""
        if self.config.precompute <= 0:
            return 0
        row_bytes = N_SLOTS * self.hidden.out_features * self.hidden.weight.element_size()
        cap = int(self.config.precompute_mb * 2**20 // row_bytes)
        return max(len(SPECIALS), min(self.config.precompute, len(self.word_vocab), cap))

    def _slot_projection(self, first: int, dim: int, slots: int) -> torch.Tensor:
        """[dim, slots · G·H]: the blocks of W that ``slots`` consecutive features of ``dim`` dims
        starting at input column ``first`` are multiplied with, side by side."""
        blocks = self.hidden.weight[:, first : first + slots * dim].reshape(-1, slots, dim)  # [GH, slots, dim]
        return blocks.permute(2, 1, 0).reshape(dim, -1)

    def _build_tables(self) -> dict:
        """The static rows: tags, labels and the most frequent words. Layout ``[tags | labels | words]``,
        ``N_SLOTS`` rows per entry (row ``s`` = ``W_s · e``; label rows of slots 0-5 are zero). The
        hidden bias is folded into the word rows of slot s0, which is never empty (ROOT stays on
        the stack)."""
        c = self.config
        width = self.hidden.out_features
        tag_rows = (self.tag_emb.weight @ self._slot_projection(N_SLOTS * c.word_dim, c.tag_dim, N_SLOTS))
        child = self.label_emb.weight @ self._slot_projection(N_SLOTS * (c.word_dim + c.tag_dim), c.label_dim, N_CHILD)
        label_rows = child.new_zeros(len(child), N_SLOTS, width)
        label_rows[:, 6:] = child.view(len(child), N_CHILD, width)
        n_words = self.precomputed_words()
        t0, l0, w0 = 0, len(tag_rows) * N_SLOTS, (len(tag_rows) + len(label_rows)) * N_SLOTS
        static = w0 + n_words * N_SLOTS
        # room for the rows of 1,024 rarer words per batch (grown when a batch needs more)
        table = torch.empty(static + 1024 * N_SLOTS, width, device=tag_rows.device, dtype=tag_rows.dtype)
        table[t0:l0] = tag_rows.view(-1, width)
        table[l0:w0] = label_rows.view(-1, width)
        tables = {"key": self._weights_key(), "table": table, "t0": t0, "l0": l0, "w0": w0, "n_words": n_words,
                  "static_rows": static, "word_projection": self._slot_projection(0, c.word_dim, N_SLOTS)}
        self._word_rows(tables, torch.arange(n_words, device=table.device), w0)
        return tables

    def _word_rows(self, tables: dict, ids: torch.Tensor, start: int) -> None:
        """Write the rows of words ``ids`` into the table from row ``start`` on."""
        rows = tables["table"][start : start + len(ids) * N_SLOTS].view(len(ids), -1)
        torch.mm(self.word_emb.weight[ids], tables["word_projection"], out=rows)
        rows.view(len(ids), N_SLOTS, -1)[:, 0] += self.hidden.bias

    def _tables_for(self, words: torch.Tensor) -> tuple[dict, torch.Tensor]:
        """The row table for one batch, and each global position's word id in it (the words not
        precomputed get rows after the static ones, numbered from ``n_words`` on)."""
        tables = self._tables
        if tables is None or tables["key"] != self._weights_key():
            tables = self._tables = self._build_tables()
        n_words = tables["n_words"]
        rare = words >= n_words
        ext = words
        if bool(rare.any()):
            unique, inverse = torch.unique(words[rare], return_inverse=True)
            ext = words.clone()
            ext[rare] = n_words + inverse
            start = tables["static_rows"]
            end = start + len(unique) * N_SLOTS
            if end > len(tables["table"]):  # grow the spare region at the end (rarely)
                grown = tables["table"].new_empty(start + 2 * (end - start), tables["table"].shape[1])
                grown[:start] = tables["table"][:start]
                tables["table"] = grown
            self._word_rows(tables, unique, start)
        return tables, ext

    @torch.inference_mode()
    def decode(self, batch: ParserBatch) -> list[tuple[list[int], list[str]]]:
        """Greedy parse of every sentence of ``batch``: ``(heads, deprels)`` per sentence, in order.

        All sentences advance together, one transition per step (a sentence of n words takes
        exactly 2n); illegal actions are masked, so each result is a single-rooted projective tree.
        """
        lengths = batch.lengths.tolist()
        n_sent = len(lengths)
        if n_sent == 0:
            return []
        device = batch.words.device
        order = sorted(range(n_sent), key=lambda b: -lengths[b])
        states = [State(lengths[b]) for b in order]
        sorted_steps = [2 * lengths[b] for b in order]
        base = batch.bases[torch.tensor(order, device=device)].unsqueeze(1)
        arch, hidden_size = self.config.arch, self.config.hidden
        precompute = self.config.precompute > 0
        if precompute:
            tables, ext = self._tables_for(batch.words)
            table = tables["table"]
            # per global position: the first row of its word and tag, and (updated as arcs are
            # made) of its label; slot s adds s.
            word_tag_rows = torch.stack([tables["w0"] + ext * N_SLOTS, tables["t0"] + batch.tags * N_SLOTS], 1)
            label_rows = torch.full_like(ext, tables["l0"] + NULL_ID * N_SLOTS)
            slot = torch.arange(N_SLOTS, device=device).unsqueeze(1)
            child_slot = torch.arange(6, N_SLOTS, device=device)
            label_first, label_stride = tables["l0"], N_SLOTS
        else:
            labels = torch.full_like(batch.words, NULL_ID)
            label_first, label_stride = 0, 1
        mask_bias = self.mask_bias
        w_out = self.output.weight.t()
        h = c = None
        if arch != "ffn":
            h = torch.zeros(n_sent, hidden_size, device=device)
            c = torch.zeros_like(h) if arch == "lstm" else None
        active = n_sent
        for t in range(sorted_steps[0]):
            while sorted_steps[active - 1] <= t:
                active -= 1
            live = states[:active] if active < n_sent else states
            flat: list[int] = []
            codes: list[int] = []
            for state in live:
                flat += token_slots(state)
                codes.append(legal_code(state))
            raw = torch.tensor(flat, dtype=torch.long, device=device).view(active, N_SLOTS)
            pos = torch.where(raw >= 0, raw + base[:active], SENTINEL)
            if precompute:
                index = torch.cat([(word_tag_rows[pos] + slot).view(active, 2 * N_SLOTS),
                                   label_rows[pos[:, 6:]] + child_slot], 1)
                pre = F.embedding_bag(index, table, mode="sum")
            else:
                pre = self.hidden(self._embed(pos, batch.words, batch.tags, labels))
            if arch == "ffn":
                hid = F.relu(pre)
            else:
                hid, c = self._cell(pre, h[:active], c[:active] if c is not None else None)
                h = hid
            scores = hid @ w_out + mask_bias[torch.tensor(codes, device=device)]
            best = scores.argmax(1)
            # the label feature of the new dependent: s1 for LEFT-ARC (odd), s0 for RIGHT-ARC
            dependent = torch.where(best > 0, torch.where(best % 2 == 1, pos[:, 1], pos[:, 0]), SCRATCH)
            value = label_first + ((best - 1).clamp(min=0) // 2 + LABEL_OFFSET) * label_stride
            if precompute:
                label_rows[dependent] = value
            else:
                labels[dependent] = value
            for state, action in zip(live, best.tolist()):
                try:
                    apply(state, action)
                except ValueError:  # only reachable with NaN scores: take any legal action
                    apply(state, _first_legal(state))
        results: list = [None] * n_sent
        names = self.label_names
        for b, state in zip(order, states):
            heads, labels_ = state.tree()
            results[b] = (heads, [names[k] for k in labels_])
        return results

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
            upos = sentence.columns.get("upos") or ["_"] * n
            xpos = sentence.columns.get("xpos") or ["_"] * n
            gold_heads = sentence.columns.get("head") or [-1] * n
            gold_rels = sentence.columns.get("deprel") or ["_"] * n
            metric.update(gold_heads, gold_rels, heads, rels, [is_punct(u, x) for u, x in zip(upos, xpos)])
        return metric

    def load_embeddings(self, words: list[str], vectors: torch.Tensor) -> int:
        """Initialise word embeddings from pretrained ``vectors``; returns how many rows were set."""
        check_vector_size(vectors, self.config.word_dim)
        rows, found, seen = [], [], set()
        for i, word in enumerate(words):
            index = self.word_vocab.stoi.get(normalize(word))
            if index is not None and index >= len(SPECIALS) and index not in seen:
                seen.add(index)
                rows.append(index)
                found.append(i)
        if rows:
            with torch.no_grad():
                self.word_emb.weight[torch.tensor(rows)] = vectors[found].to(self.word_emb.weight)
        return len(rows)

    # ----------------------------------------------------------------------------- bootstrapping
    def bootstrap(self, ffn: "TransitionParser", gates: list[str] | None = None) -> None:
        """Initialise this recurrent parser from a trained FFN parser (Elkaref & Bohnet 2017, §4).

        Copies the three embedding tables and the output layer, and for each gate in ``gates``
        (``i j f o`` for LSTM, ``r z h`` for GRU, ``h`` for Elman; ``None`` or empty = all) the
        FFN's hidden weights ``W`` into that gate's ``W_x`` block and its bias ``b`` into the
        gate's bias. Everything else (``W_h``, the other gates) keeps its initialisation.
        """
        arch = self.config.arch
        if arch == "ffn":
            raise ValueError("bootstrapping initialises a recurrent parser (arch lstm, gru or elman) from an FFN")
        if not isinstance(ffn, TransitionParser) or ffn.config.arch != "ffn":
            arch = ffn.config.arch if isinstance(ffn, TransitionParser) else "?"
            raise ValueError(f"can only bootstrap from a trained FFN transition parser, not a {ffn.name} model with arch {arch}")
        for key in ("words", "tags", "labels"):
            if list(ffn.vocabs[key]) != list(self.vocabs[key]):
                raise ValueError(f"the FFN's {key} vocabulary differs from this parser's "
                                 f"({len(ffn.vocabs[key])} vs {len(self.vocabs[key])} entries): "
                                 f"build this parser with the FFN's vocabularies")
        for key in ("word_dim", "tag_dim", "label_dim", "hidden"):
            if getattr(ffn.config, key) != getattr(self.config, key):
                raise ValueError(f"{key} differs: FFN {getattr(ffn.config, key)}, this parser {getattr(self.config, key)}")
        aliases = {"h~": "h", "htilde": "h", "h_tilde": "h"}
        chosen = [aliases.get(g.strip().lower(), g.strip().lower()) for g in gates] if gates else list(self.gates)
        unknown = [g for g in chosen if g not in self.gates]
        if unknown:
            raise ValueError(f"unknown gate(s) {', '.join(unknown)} for {arch}; choose from {', '.join(self.gates)}")
        size = self.config.hidden
        with torch.no_grad():
            for mine, theirs in ((self.word_emb, ffn.word_emb), (self.tag_emb, ffn.tag_emb), (self.label_emb, ffn.label_emb),
                                 (self.output, ffn.output)):
                mine.weight.copy_(theirs.weight)
            for gate in chosen:
                k = self.gates.index(gate)
                self.hidden.weight[k * size : (k + 1) * size] = ffn.hidden.weight
                self.hidden.bias[k * size : (k + 1) * size] = ffn.hidden.bias
        self._tables = None


def _first_legal(state: State) -> int:
    code = legal_code(state)
    return 0 if code & 1 else (1 if code & 2 else 2)
