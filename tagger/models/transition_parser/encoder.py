"""Contextual features: a BiLSTM encoding of the sentence that the parser's token slots read
(Kiperwasser & Goldberg 2016 did this for greedy transition parsers), instead of or beside the
static word and tag embeddings (``features``: ``replace`` or ``beside``).

The encoder is the skip-LSTM tagger's (:mod:`tagger.models.skip_lstm`): its input layer (word,
capitalisation, first/last-character features, optional character CNN and context window;
:class:`~tagger.modules.input_layer.InputLayer`), optionally the POS tag embedding beside it,
then its stacked bidirectional layers (:class:`~tagger.modules.recurrent.StackedBiRNN`). It runs
once per sentence; a token's vector is ``[h_fwd; h_bwd]`` (2 × ``encoder_hidden``). Positions
that are not words have learned vectors: ``null`` (empty slots, and the batch's scratch
position) and ``root``.

It is trained with the parser, from scratch or from a trained tagger
(:func:`config_from_tagger`, :func:`copy_tagger_weights`: the tagger's vocabularies, input layer
and recurrent layers, then fine-tuned).

Speed (:func:`slot_rows`, :func:`transition_pre`): the hidden layer's pre-activation of a
transition is ``Σ_s W_s · u[pos_s] + W_l · labels + b`` over the 18 token slots, so the products
``W_s · u`` are computed once per token and slot (``[G, 18, G·H]``) and summed per transition by
an ``embedding_bag`` (the Chen & Manning trick, per batch), in training and in decoding.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, fields
from typing import Any, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from tagger.corpus.features import subword_vocabs
from tagger.corpus.records import Sentence
from tagger.corpus.vocab import Vocab
from tagger.models.transition_parser.config import (FIXED, MIRRORED, PRETRAINED_KEY,  # noqa: F401 - here as before
                                                    SUBWORD_KEYS, TRANSFORMER_KEY, VOCAB_KEYS, ParserConfig)
from tagger.models.transition_parser.ids import N_CHILD
from tagger.modules.input_layer import CHAR_BOW, CHAR_EOW, InputFeaturizer, InputLayer, canonical, char_slots, normalize, padded_ids
from tagger.modules.recurrent import CellSpec, StackedBiRNN

INIT_SCALE = 1.0  # the tagger's ``fast`` presets: N(0, 1/sqrt(fan_in)) weights, N(0, 1) embeddings


@dataclass
class EncoderBatch:
    """What the encoder reads of B sentences, numbered once per distinct word (as the tagger's
    batch): T = longest, U distinct words (row 0 of the per-word tensors is padding)."""

    types: torch.Tensor  # [B, T] row of each token in the per-word tensors (0 = padding)
    words: torch.Tensor  # [U+1] encoder word id of each distinct word
    caps: torch.Tensor  # [U+1]
    chars: torch.Tensor  # [U+1, 2l]
    gather: torch.Tensor  # [G] per global position: 0 = null vector, 1 = root vector, 2 + k = the k-th word
    spelled: torch.Tensor | None = None  # [U+1, L] char ids for the character CNN (None without one)
    forms: list[str] | None = None  # the U distinct words (rows 1..U), as spelled
    sentences: list[list[str]] | None = None  # each sentence's words, for a transformer (else None)
    units: torch.Tensor | None = None  # [U+1, K] ids of each word's known subword units, 0-padded (None without them)

    def to(self, device: torch.device, non_blocking: bool = True) -> "EncoderBatch":
        move = lambda t: t.to(device, non_blocking=non_blocking) if isinstance(t, torch.Tensor) else t  # noqa: E731
        return EncoderBatch(*(move(getattr(self, f.name)) for f in fields(self)))


def encoder_vocabs(config: ParserConfig, sentences: Sequence[Sentence]) -> dict[str, list[str]]:
    """The encoder's vocabularies from the training sentences, as the tagger builds its own:
    normalised words (most frequent first, then where the words seen once start) and the
    characters of the first/last-l slots (with the CNN: of whole words, and its boundaries)."""
    words, chars, forms = Counter(), Counter(), Counter()
    for sentence in sentences:
        spelled = [canonical(word) for word in sentence.words]  # as the featurizer reads them
        forms.update(spelled)
        for word in spelled:
            words[normalize(word)] += 1
            chars.update(char_slots(word, config.encoder_char_length))
            if config.encoder_char_cnn:
                chars.update(word)
    if config.encoder_char_cnn:
        chars.update((CHAR_BOW, CHAR_EOW))
    vocab = Vocab.build(words, config.min_word_count)
    rare_from = next((i for i, w in enumerate(vocab.itos) if words.get(w, 2) < 2), len(vocab))
    out = {"encoder_words": vocab.to_list(), "encoder_chars": Vocab.build(chars).to_list(),
           "encoder_rare_word_from": [str(rare_from)]}
    units, kinds = subword_vocabs(config.encoder_subwords, config.encoder_subword_dim, config.encoder_affix_length, forms)
    if units:
        out.update(zip(SUBWORD_KEYS, (units, kinds)))
    return out


def config_from_tagger(config: ParserConfig, tagger_config: Any) -> ParserConfig:
    """``config`` with an encoder shaped as the skip-LSTM tagger of ``tagger_config``: its input
    features, window, layers and cells (the tagger's shape wins over the preset's). A
    ``ValueError`` for a tagger the encoder cannot mirror (a cell or shortcut other than the
    tagger's defaults)."""
    values = {name: getattr(tagger_config, source) for name, source in MIRRORED.items()}
    if values["encoder_skip"] not in ("output", "none"):
        raise ValueError(f"the tagger's skip={values['encoder_skip']}: the encoder takes skip=output or none")
    for key, value in FIXED.items():
        if getattr(tagger_config, key) != value:
            raise ValueError(f"the tagger's {key}={getattr(tagger_config, key)!r}: the encoder takes only {key}={value!r}")
    if tagger_config.char_cnn and tagger_config.cnn_dim != tagger_config.char_dim:
        raise ValueError("the tagger's character CNN has its own character size (char_cnn_dim): the encoder's "
                         "shares char_dim")
    return dataclasses.replace(config, encoder="bilstm", **values)


class TokenEncoder(nn.Module):
    """The skip-LSTM tagger's input layer and stacked BiLSTM over each sentence (module docstring)."""

    def __init__(self, config: ParserConfig, vocabs: dict[str, list[str]], n_tags: int):
        super().__init__()
        c = config
        missing = [key for key in VOCAB_KEYS if key not in vocabs]
        if missing:
            raise ValueError(f"an encoder needs the vocabularies {', '.join(missing)}")
        if c.encoder_pretrained_dim and PRETRAINED_KEY not in vocabs:
            raise ValueError(f"an encoder with a table of pretrained vectors needs the vocabulary {PRETRAINED_KEY}")
        self.word_vocab = Vocab.from_list(vocabs["encoder_words"])
        # word ids over the trained words, then the frozen table's others (as the tagger's)
        looked_up = list(vocabs["encoder_words"]) + (list(vocabs[PRETRAINED_KEY]) if c.encoder_pretrained_dim else [])
        units = vocabs.get(SUBWORD_KEYS[0]) if c.encoder_subword_dim else None
        self.featurizer = InputFeaturizer(Vocab.from_list(looked_up), Vocab.from_list(vocabs["encoder_chars"]),
                                          c.encoder_char_length, FIXED["char_cnn_max"] if c.encoder_char_cnn else 0,
                                          *((Vocab.from_list(units), tuple(vocabs[SUBWORD_KEYS[1]]), c.encoder_affix_length)
                                            if units else ()))
        self.rare_word_from = int(vocabs["encoder_rare_word_from"][0])
        self.rare_word_dropout = c.rare_word_dropout
        self.char_length, self.cnn = c.encoder_char_length, bool(c.encoder_char_cnn)
        self.input = InputLayer(len(self.word_vocab), len(vocabs["encoder_chars"]), c.encoder_word_dim, c.encoder_caps_dim,
                                c.encoder_char_dim, c.encoder_char_length, c.encoder_window, FIXED["window_gates"],
                                INIT_SCALE, c.encoder_char_cnn, FIXED["char_cnn_width"], c.encoder_char_dim,
                                (len(looked_up), c.encoder_pretrained_dim) if c.encoder_pretrained_dim else (0, 0),
                                (len(units), c.encoder_subword_dim) if units else (0, 0))
        #: the tagger's pretrained transformer and its projection (its files in the vocabularies), or None
        self.transformer = self.transformer_proj = None
        extra = c.encoder_transformer_dim if c.encoder_transformer else 0
        if c.encoder_transformer:
            from tagger.modules.transformer import WordEncoder

            if TRANSFORMER_KEY not in vocabs:
                raise ValueError(f"an encoder with a transformer needs the vocabulary {TRANSFORMER_KEY}")
            flat = vocabs[TRANSFORMER_KEY]
            self.transformer = WordEncoder.from_files(dict(zip(flat[::2], flat[1::2])), c.encoder_transformer_pooling,
                                                      c.encoder_transformer_layers, frozen=not c.encoder_transformer_tune)
            self.transformer_proj = nn.Linear(self.transformer.output_size, extra)
        self.tag_emb = nn.Embedding(n_tags, c.encoder_tag_dim) if c.encoder_tag_dim else None
        if self.tag_emb is not None:
            nn.init.normal_(self.tag_emb.weight, 0.0, INIT_SCALE)
        self.dropout = nn.Dropout(c.encoder_dropout)
        spec = CellSpec(FIXED["cell"], c.encoder_skip, FIXED["gate"], FIXED["skip_map"], FIXED["forget_bias"])
        self.rnn = StackedBiRNN(self.input.output_size + c.encoder_tag_dim + extra, c.encoder_hidden, c.encoder_layers, spec,
                                FIXED["skip_span"], (c.encoder_dropout,) * c.encoder_layers, INIT_SCALE,
                                FIXED["composition"])
        self.null = nn.Parameter(torch.empty(self.output_size))
        self.root = nn.Parameter(torch.empty(self.output_size))
        nn.init.uniform_(self.null, -0.1, 0.1)
        nn.init.uniform_(self.root, -0.1, 0.1)

    @property
    def output_size(self) -> int:
        return self.rnn.output_size

    def collate(self, sentences: Sequence[Sentence]) -> EncoderBatch:
        """Featurise ``sentences`` (the parser batch's, in its order) once per distinct word."""
        steps = max((len(s) for s in sentences), default=0)
        token = self.featurizer.token
        rows: dict[str, int] = {}
        words, caps, chars, spelled, units = [0], [0], [[0] * (2 * self.char_length)], [[]], [[]]
        types, gather = [], [0, 0]
        count = 2
        for sentence in sentences:
            ids = []
            for word in sentence.words:
                row = rows.get(word)
                if row is None:
                    row = rows[word] = len(words)
                    w, c, ch, sp, un = token(word)
                    words.append(w)
                    caps.append(c)
                    chars.append(ch)
                    spelled.append(sp)
                    units.append(un)
                ids.append(row)
            types.append(ids + [0] * (steps - len(ids)))
            gather.append(1)
            gather.extend(range(count, count + len(ids)))
            count += len(ids)
        spelled_ids = padded_ids(spelled) if self.cnn else None
        unit_ids = padded_ids(units) if self.input.subword is not None else None
        return EncoderBatch(torch.tensor(types, dtype=torch.long).view(len(sentences), steps), torch.tensor(words),
                            torch.tensor(caps), torch.tensor(chars), torch.tensor(gather), spelled_ids, list(rows),
                            [list(s.words) for s in sentences] if self.transformer is not None else None, unit_ids)

    def forward(self, batch: EncoderBatch, tags: torch.Tensor, bases: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """The vector of every global position of the parser batch [G, 2·encoder_hidden]: the
        BiLSTM's at words, ``root`` at each ROOT, ``null`` at the sentinel and scratch positions.
        ``tags`` [G], ``bases`` [B] and ``lengths`` [B] are the parser batch's."""
        types = batch.types.t()  # [T, B]
        steps = types.shape[0]
        if steps == 0:
            return torch.stack([self.null, self.root])[batch.gather.clamp(max=1)]
        inside = torch.arange(steps, device=types.device) < lengths.unsqueeze(1)  # [B, T]
        tag_ids = None
        if self.tag_emb is not None:
            positions = torch.where(inside, bases.unsqueeze(1) + 1 + torch.arange(steps, device=types.device), 0)
            tag_ids = tags[positions.t()]  # [T, B]
        extra = None  # the transformer's projected vectors [T, B, E]
        if self.transformer is not None:
            extra = self.transformer_proj(self.transformer(batch.sentences)).transpose(0, 1)
        if not self.training and self.rnn.sources[0] is None and not self.rnn.reads_input:
            hidden = self.rnn(None, lengths, self._projected(batch, types, tag_ids, extra))
        else:
            words = batch.words[types]
            if self.training and self.rare_word_dropout > 0:
                rare = (words >= self.rare_word_from) & (torch.rand(words.shape, device=words.device) < self.rare_word_dropout)
                words = words.masked_fill(rare, self.word_vocab.unk_index)
            spelling = self.input.spelling(batch.spelled)[types] if self.cnn else None  # [T, B, K]
            bags = self.input.bag(batch.units)[types] if self.input.subword is not None else None  # [T, B, S]
            x = self.input(words, batch.caps[types], batch.chars[types], spelling, bags)  # [T, B, D]
            if tag_ids is not None:
                x = torch.cat([x, self.tag_emb(tag_ids)], -1)
            if extra is not None:
                x = torch.cat([x, extra], -1)
            hidden = self.rnn(self.dropout(x), lengths)  # [T, B, 2H]
        words_out = hidden.transpose(0, 1)[inside]  # [n_words, 2H], sentence by sentence
        return torch.cat([self.null.unsqueeze(0), self.root.unsqueeze(0), words_out])[batch.gather]


    def _projected(self, batch: EncoderBatch, types: torch.Tensor, tag_ids: torch.Tensor | None,
                   extra: torch.Tensor | None = None) -> torch.Tensor:
        """Evaluation: the first layer's input projection [2, T, B, G] (direction 1 reversed in
        time) as the tagger computes it, once per distinct word
        (:meth:`~tagger.modules.input_layer.InputLayer.project_by_type`, its rows kept across
        batches), plus the POS tag's part, once per tag."""
        first = self.rnn.layers[0]
        weight = first.input_weight()  # [2, D (+ tag_dim), G]
        size = self.input.output_size
        projected = self.input.project_by_type(batch.words, batch.caps, batch.chars, types, weight[:, :size], first.bias,
                                               batch.spelled, batch.forms, batch.units)
        tag_dim = self.tag_emb.embedding_dim if self.tag_emb is not None else 0
        if tag_ids is not None:
            tag_rows = torch.matmul(self.tag_emb.weight, weight[:, size : size + tag_dim])  # [2, tags, G]
            projected[0] += tag_rows[0][tag_ids]
            projected[1] += tag_rows[1][tag_ids.flip(0)]
        if extra is not None:  # the transformer's part, per token
            rows = torch.matmul(extra, weight[:, size + tag_dim :].float().unsqueeze(1)).to(projected.dtype)  # [2, T, B, G]
            projected[0] += rows[0]
            projected[1] += rows[1].flip(0)
        return projected


def copy_tagger_weights(encoder: TokenEncoder, tagger_state: dict[str, torch.Tensor]) -> int:
    """Copy a skip-LSTM tagger's input layer (``input.*``, its frozen table of pretrained vectors
    included) and recurrent layers (``rnn.*``) from its ``tagger_state`` into ``encoder``; the
    first layer's input rows for the POS tag (when the encoder reads it) keep their
    initialisation. Returns how many tensors were copied; a ``ValueError`` when a shape does not fit."""
    mine = {**dict(encoder.named_parameters()), **dict(encoder.named_buffers())}
    copied = 0
    with torch.no_grad():
        for name, value in tagger_state.items():
            if not name.startswith(("input.", "rnn.", "transformer.", "transformer_proj.")):
                continue
            target = mine.get(name)
            if target is None:
                raise ValueError(f"the tagger's {name} has no place in the encoder")
            if name == "rnn.layers.0.w_x" and value.shape[1] < target.shape[1] and encoder.tag_emb is not None:
                size = encoder.input.output_size  # the rows of the POS tag (before the transformer's) keep theirs
                target[:, :size] = value[:, :size]
                target[:, size + encoder.tag_emb.embedding_dim :] = value[:, size:]
            elif value.shape != target.shape:
                raise ValueError(f"the tagger's {name} is {tuple(value.shape)}, the encoder's {tuple(target.shape)}")
            else:
                target.copy_(value)
            copied += 1
    return copied


# ----------------------------------------------------------------------------- the hidden layer's input
def slot_rows(vectors: torch.Tensor, slot_weight: torch.Tensor) -> torch.Tensor:
    """``W_s · v_g`` for every encoder vector ``v_g`` (``vectors`` [G, V]) and each of the k token
    slots s of ``slot_weight`` [V, k, G·H] (the parser's): [G · k, G·H] (row ``k g + s``), one product."""
    size, slots, width = slot_weight.shape
    return (vectors @ slot_weight.reshape(size, slots * width)).view(-1, width)


def label_rows(label_weight: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``W_c · e_l`` for every label embedding ``e_l`` (``label_weight`` [L, D]) and child slot c
    (12): [L · 12, G·H] (row ``12 l + c``), from the hidden layer's ``weight`` [G·H, 12 · D]."""
    width, size = weight.shape[0], label_weight.shape[1]
    blocks = weight.reshape(width, N_CHILD, size).permute(2, 1, 0).reshape(size, N_CHILD * width)
    return (label_weight @ blocks).view(-1, width)


def token_sum(rows: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """``Σ_s rows[k · positions[..., s] + s]`` (:func:`slot_rows`' rows): the encoder's part of
    the pre-activation of every configuration, ``positions`` [..., k] → [..., G·H]."""
    slots = positions.shape[-1]
    flat = positions.reshape(-1, slots)
    index = flat * slots + torch.arange(slots, device=flat.device)
    return F.embedding_bag(index, rows, mode="sum").view(*positions.shape[:-1], rows.shape[1])
