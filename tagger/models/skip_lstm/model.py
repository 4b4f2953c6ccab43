"""The deep stacked BiLSTM tagger with skip connections (Wu, Zhang & Zong 2016) and shortcut
blocks (Wu, Zhang & Zong 2017), for POS tags and CCG supertags. SPEC §3."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields
from typing import Any, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from tagger.corpus.records import Sentence
from tagger.corpus.vocab import PAD, Vocab
from tagger.errors import TaggerError
from tagger.evaluation.metrics import TagMetric
from tagger.models.base import GreedyDecoding, check_vector_size
from tagger.modules.init import scaled_normal_
from tagger.modules.input_layer import CHAR_BOW, CHAR_EOW, InputFeaturizer, InputLayer, char_slots, normalize
from tagger.models.skip_lstm.config import TaggerConfig
from tagger.models.skip_lstm.presets import PRESETS, TRAINING_DEFAULTS
from tagger.modules.recurrent import StackedBiRNN

RARE = "<rare>"


@dataclass
class TaggerBatch:
    """A batch numbered once per distinct word: B sentences, T = longest, U distinct words
    (row 0 of the per-word tensors is padding), 2l char slots, L = the longest spelling (the
    character CNN's input, only when the model has one)."""

    types: torch.Tensor  # [B, T] row of each token in the per-word tensors (0 = padding)
    words: torch.Tensor  # [U+1] word id of each distinct word
    caps: torch.Tensor  # [U+1]
    chars: torch.Tensor  # [U+1, 2l]
    lengths: torch.Tensor  # [B]
    tags: torch.Tensor | None  # [B, T] gold tag ids, -100 at padding; None when untagged
    spelled: torch.Tensor | None = None  # [U+1, L] char ids of <w> word </w>, 0-padded; None without a CNN
    forms: list[str] | None = None  # the U distinct words (rows 1..U), as spelled
    aux_tags: torch.Tensor | None = None  # [B, T] gold ids of the auxiliary column (config.aux_column), -100 at padding

    def to(self, device: torch.device) -> "TaggerBatch":
        move = lambda t: t.to(device, non_blocking=True) if isinstance(t, torch.Tensor) else t  # noqa: E731
        return TaggerBatch(*(move(getattr(self, f.name)) for f in fields(self)))

    @property
    def n_tokens(self) -> int:
        return int(self.lengths.sum())


class SkipLSTMTagger(GreedyDecoding, nn.Module):
    """Input layer → stacked bidirectional skip/shortcut layers → softmax over tags."""

    name = "skip_lstm"
    kind = "tagger"  # what it is to the CLI: a tagger model (``--pos-model``) or a parser
    #: The columns of its input it reads besides the words: none (it reads words only).
    input_columns: list[str] = []
    Config = TaggerConfig
    PRESETS = PRESETS
    default_preset = "fast"
    training_defaults = TRAINING_DEFAULTS
    # capabilities (tagger.models.base.Model)
    gives_distribution = True
    can_bootstrap = False
    can_take_encoder = False
    can_lower_precision = True

    def __init__(self, config: TaggerConfig, vocabs: dict[str, list[str]]):
        super().__init__()
        self.config = config
        self.vocabs = vocabs
        self.word_vocab = Vocab.from_list(vocabs["words"])
        self.tag_vocab = Vocab.from_list(vocabs["tags"])
        self.featurizer = InputFeaturizer(self.word_vocab, Vocab.from_list(vocabs["chars"]), config.char_length,
                                          config.char_cnn_max if config.char_cnn else 0)
        self.rare_word_from = int(vocabs.get("rare_word_from", ["0"])[0])
        self.input = InputLayer(len(self.word_vocab), len(vocabs["chars"]), config.word_dim, config.caps_dim,
                                config.char_dim, config.char_length, config.window, config.window_gates, config.init_scale,
                                config.char_cnn, config.char_cnn_width, config.cnn_dim)
        self.input_dropout = nn.Dropout(config.input_dropout)
        dropouts = [config.middle_dropout] * config.layers
        dropouts[0] = dropouts[-1] = config.hidden_dropout
        self.rnn = StackedBiRNN(self.input.output_size, config.hidden, config.layers, config.cell_spec, config.skip_span,
                                tuple(dropouts), config.init_scale, config.composition)
        # One product scores both label sets: the column's tags, then the auxiliary column's.
        self.n_tags, self.n_aux = len(self.tag_vocab), len(vocabs.get("aux_tags", ()))
        self.aux_vocab = Vocab.from_list(vocabs["aux_tags"]) if self.n_aux else None
        self.output = nn.Linear(self.rnn.output_size, self.n_tags + self.n_aux)
        scaled_normal_(self.output.weight, self.output.in_features, config.init_scale)
        nn.init.zeros_(self.output.bias)
        # Never predict padding or RARE (RARE is trained as a class, as in the papers, but not output).
        banned = torch.zeros(len(self.tag_vocab), dtype=torch.bool)
        for special in (PAD, RARE):
            if special in self.tag_vocab:
                banned[self.tag_vocab.index(special)] = True
        self.register_buffer("banned", banned, persistent=False)

    def set_precision(self, dtype: torch.dtype | None, in_place: bool = False) -> None:
        """Inference matrix products in ``dtype`` (None: float32; see :mod:`tagger.modules.precision`).
        ``in_place``: the recurrent matrices themselves become ``dtype`` (one copy in memory; for
        inference only, see :meth:`tagger.modules.recurrent.BiLayer.set_matmul_dtype`)."""
        self.rnn.set_matmul_dtype(dtype, in_place)

    # ----------------------------------------------------------------------------- data → tensors
    @staticmethod
    def required_columns(config: TaggerConfig) -> list[str]:
        return [config.column] + ([config.aux_column] if config.aux_column else [])

    @classmethod
    def pos_column(cls, config: TaggerConfig) -> str | None:
        """None: a tagger reads words only, so ``--pos-model`` has nothing to retag."""
        return None

    @classmethod
    def training_meta(cls, config: TaggerConfig, sentences: Sequence[Sentence]) -> tuple[dict[str, Any], list[str]]:
        """What the model file's meta records about the training sentences, and notes: nothing."""
        return {}, []

    @classmethod
    def vocabs_from(cls, config: TaggerConfig, sentences: Sequence[Sentence]) -> dict[str, list[str]]:
        """Word, character and tag vocabularies from the training sentences.

        Characters: those of the first/last-l slots; with the character CNN, also every character
        of every word (the middle of long words) and the CNN's ``<w>``, ``</w>`` boundaries.
        """
        words, chars, tags, aux = Counter(), Counter(), Counter(), Counter()
        for sentence in sentences:
            tags.update(sentence.column(config.column))
            if config.aux_column:
                aux.update(sentence.column(config.aux_column))
            for word in sentence.words:
                words[normalize(word)] += 1
                chars.update(char_slots(word, config.char_length))
                if config.char_cnn:
                    chars.update(word)
        if config.char_cnn:
            chars.update((CHAR_BOW, CHAR_EOW))
        word_vocab = Vocab.build(words, config.min_word_count)
        rare_from = next((i for i, w in enumerate(word_vocab.itos) if words.get(w, 2) < 2), len(word_vocab))
        kept_tags = Vocab.build(tags, max(1, config.rare_tag_count), specials=(PAD,))
        if len(kept_tags) == 1:  # only padding: every tag would be RARE, and RARE is never output
            raise TaggerError(f"no '{config.column}' tag is seen {config.rare_tag_count} times in the training data, "
                              f"so every tag would be rare and none could be predicted: lower it with "
                              f"--set rare_tag_count=N (1 keeps every tag)", sentences[0].source if sentences else None)
        tag_list = kept_tags.to_list() + ([RARE] if len(kept_tags) - 1 < len(tags) else [])
        vocabs = {
            "words": word_vocab.to_list(),
            "chars": Vocab.build(chars).to_list(),
            "tags": tag_list,
            "rare_word_from": [str(rare_from)],
        }
        if config.aux_column:
            vocabs["aux_tags"] = Vocab.build(aux, specials=(PAD,)).to_list()
        return vocabs

    def collate(self, sentences: Sequence[Sentence], with_gold: bool = True) -> TaggerBatch:
        """Number and pad ``sentences``, featurising each distinct word once; gold tags only when ``with_gold``."""
        lengths = [len(s) for s in sentences]
        steps = max(lengths)
        token = self.featurizer.token
        rows: dict[str, int] = {}
        words, caps, chars, spelled = [0], [0], [[0] * (2 * self.config.char_length)], [[]]
        types = []
        for sentence in sentences:
            ids = []
            for word in sentence.words:
                row = rows.get(word)
                if row is None:
                    row = rows[word] = len(words)
                    w, c, ch, sp = token(word)
                    words.append(w)
                    caps.append(c)
                    chars.append(ch)
                    spelled.append(sp)
                ids.append(row)
            types.append(ids + [0] * (steps - len(ids)))
        spelled_ids = None
        if self.config.char_cnn:
            longest = max(map(len, spelled))
            spelled_ids = torch.tensor([sp + [0] * (longest - len(sp)) for sp in spelled])
        def gold(column: str, stoi: dict[str, int], unknown: int) -> torch.Tensor:  # [B, T], -100 at padding
            return torch.tensor([[stoi.get(t, unknown) for t in s.column(column)] + [-100] * (steps - len(s)) for s in sentences])

        tags = aux_tags = None
        if with_gold:
            tags = gold(self.config.column, self.tag_vocab.stoi, self.tag_vocab.stoi.get(RARE, -100))
            if self.aux_vocab is not None:  # an auxiliary tag unseen in training is left out of the loss
                aux_tags = gold(self.config.aux_column, self.aux_vocab.stoi, -100)
        return TaggerBatch(torch.tensor(types), torch.tensor(words), torch.tensor(caps), torch.tensor(chars), torch.tensor(lengths), tags,
                           spelled_ids, list(rows), aux_tags)

    # ----------------------------------------------------------------------------- the network
    def forward(self, batch: TaggerBatch) -> torch.Tensor:
        """Tag scores [B, T, n_tags + n_aux] (unnormalised log-probabilities): the column's tags,
        then, with ``aux_column``, the auxiliary column's (``n_aux`` = 0 without).

        In evaluation mode the first layer's input projection is computed per distinct word
        (:meth:`InputLayer.project_by_type`), which is exact without dropout; training builds
        the window input per token, so that dropout and rare-word dropout act per token. The
        character CNN runs once per distinct word on either path, and is gathered per token.
        """
        types = batch.types.t()  # [T, B]
        if not self.training and self.rnn.sources[0] is None:
            first = self.rnn.layers[0]
            projected = self.input.project_by_type(batch.words, batch.caps, batch.chars, types, first.input_weight(), first.bias, batch.spelled,
                                                    batch.forms)
            hidden = self.rnn(None, batch.lengths, projected)
        else:
            words = batch.words[types]
            if self.training and self.config.rare_word_dropout > 0:
                rare = (words >= self.rare_word_from) & (torch.rand(words.shape, device=words.device) < self.config.rare_word_dropout)
                words = words.masked_fill(rare, self.word_vocab.unk_index)
            spelling = self.input.spelling(batch.spelled)[types] if self.config.char_cnn else None  # [T, B, K]
            x = self.input_dropout(self.input(words, batch.caps[types], batch.chars[types], spelling))  # [T, B, D]
            hidden = self.rnn(x, batch.lengths)
        return self.output(hidden).transpose(0, 1)

    def loss(self, scores: torch.Tensor, batch: TaggerBatch) -> torch.Tensor:
        """Mean cross-entropy of ``scores`` (from :meth:`forward`) over the batch's tokens, plus
        ``aux_weight`` times that of the auxiliary column."""
        smoothing = self.config.label_smoothing
        loss = F.cross_entropy(scores[..., : self.n_tags].flatten(0, 1), batch.tags.flatten(), ignore_index=-100, label_smoothing=smoothing)
        if self.n_aux and batch.aux_tags is not None:
            aux = F.cross_entropy(scores[..., self.n_tags :].flatten(0, 1), batch.aux_tags.flatten(), ignore_index=-100, label_smoothing=smoothing)
            loss = loss + self.config.aux_weight * aux
        return loss

    @torch.no_grad()
    def distribution(self, batch: TaggerBatch) -> torch.Tensor:
        """Tag probabilities [B, T, n_tags], padding and RARE excluded."""
        return self(batch)[..., : self.n_tags].masked_fill(self.banned, float("-inf")).softmax(-1)

    @torch.no_grad()
    def decode(self, batch: TaggerBatch) -> list[list[str]]:
        """The best tag of every token, as strings."""
        best = self(batch)[..., : self.n_tags].masked_fill(self.banned, float("-inf")).argmax(-1).tolist()
        itos = self.tag_vocab.itos
        return [[itos[i] for i in row[:n]] for row, n in zip(best, batch.lengths.tolist())]

    @property
    def distribution_labels(self) -> list[str]:
        """The tags :meth:`distribution`'s last axis is over."""
        return self.tag_vocab.itos

    # ----------------------------------------------------------------------------- results
    @property
    def output_columns(self) -> list[str]:
        """The columns :meth:`annotate` fills."""
        return [self.config.column]

    def annotate(self, sentence: Sentence, prediction: list[str]) -> None:
        """Write a predicted tag sequence into ``sentence``'s column."""
        sentence.columns[self.config.column] = prediction

    def metric(self, sentences: Sequence[Sentence], predictions: Sequence[list[str]]) -> TagMetric:
        metric = TagMetric()
        for sentence, prediction in zip(sentences, predictions):
            metric.update(sentence.words, sentence.column(self.config.column), prediction)
        return metric

    def load_embeddings(self, words: list[str], vectors: torch.Tensor) -> int:
        """Initialise word embeddings from pretrained ``vectors``; returns how many rows were set."""
        check_vector_size(vectors, self.config.word_dim)
        rows, found = [], []
        for i, word in enumerate(words):
            index = self.word_vocab.stoi.get(normalize(word))
            if index is not None and index > 1:
                rows.append(index)
                found.append(i)
        if rows:
            self.input.load_vectors(vectors[found], torch.tensor(rows))
        return len(rows)

    def bootstrap(self, source: Any, gates: list[str] | None = None) -> None:
        """Not a capability of this family (``can_bootstrap`` is False)."""
        raise TaggerError(f"model {self.name} cannot be bootstrapped")

    @classmethod
    def with_encoder(cls, config: TaggerConfig, vocabs: dict[str, list[str]], source: Any) -> "SkipLSTMTagger":
        """Not a capability of this family (``can_take_encoder`` is False)."""
        raise TaggerError(f"model {cls.name} takes no encoder from another model (--encoder-from is for parsers)")

