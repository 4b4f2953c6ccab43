"""The character-level tokeniser and sentence splitter (docs/tokenizer.md).

Each character of the (normalised, :func:`tagger.tokenization.labels.normalise`) text gets one
of five labels (:data:`tagger.tokenization.labels.LABELS`): inside, end of token, end of
sentence, end of multiword token, end of multiword token and sentence. A character is read as
the sum of nothing more than two embeddings side by side: its own (rare ones are one unknown
character) and its Unicode category's (``Lu``, ``Ll``, ``Lo``, ``Nd``, ``Po``, ``Zs``, ...: what
lets it read unseen characters and scripts). A bidirectional LSTM over them and a softmax
give the label.

The text is cut into windows of ``segment`` characters, each read with ``context`` more
characters on both sides (labels are taken from its middle only), so that any text is many
windows of one length: training and tagging batch them without padding.

Training units are those windows, as :class:`Sentence` records whose ``words`` are the
characters, with the columns ``boundary`` (the label, ``_`` in the context) and ``expansion``
(``form<TAB>word word`` at the last character of a multiword token): :meth:`Tokenizer.training_units`
builds them from CoNLL-U sentences, so that the generic trainer, batching and metric loop run
unchanged.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields
from typing import Any, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from tagger.corpus.records import Sentence
from tagger.corpus.vocab import PAD, UNK, Vocab
from tagger.errors import TaggerError
from tagger.evaluation.metrics import BoundaryMetric
from tagger.models.base import GreedyDecoding, NoDistillation, NoTransformer
from tagger.models.tokenizer.config import TokenizerConfig
from tagger.models.tokenizer.presets import PRESETS, TRAINING_DEFAULTS
from tagger.modules.recurrent import CellSpec, StackedBiRNN
from tagger.tokenization.labels import (CATEGORIES, CATEGORIES_WITH_SCRIPTS, INSIDE, LABELS, N_CATEGORIES, PAR, SPACED,
                                        char_code, labelled_text, normalise, spaced_tokens, text_sentence, tightened)
from tagger.tokenization.joined import JOINED
from tagger.tokenization.joined import learn as learn_joined
from tagger.tokenization.multiword import Expander, vocabs as multiword_vocabs

#: The columns of a training unit.
BOUNDARY, EXPANSION = "boundary", "expansion"
#: A unit's padding beyond the text (label ``_``: not learned).
PAD_CHAR = PAD
_LABEL = {label: i for i, label in enumerate(LABELS)}
#: Windows per batch when tagging (torch's LSTM projects the input of all steps at once: 2 × window ×
#: 256 × 4H floats).
MAX_WINDOWS = 256


@dataclass
class TokenizerBatch:
    """B windows of T characters."""

    chars: torch.Tensor  # [B, T] character ids (0: padding)
    categories: torch.Tensor  # [B, T] Unicode category ids (CATEGORIES)
    lengths: torch.Tensor  # [B]
    labels: torch.Tensor | None = None  # [B, T] gold label ids, -100 where nothing is learned

    def to(self, device: torch.device) -> "TokenizerBatch":
        move = lambda t: t.to(device, non_blocking=True) if isinstance(t, torch.Tensor) else t  # noqa: E731
        return TokenizerBatch(*(move(getattr(self, f.name)) for f in fields(self)))

    @property
    def n_tokens(self) -> int:
        """Characters learned from (with gold), else read."""
        if self.labels is None:
            return int(self.lengths.sum())
        return int((self.labels != -100).sum())


def _holds_spaced_token(unit: Sentence) -> bool:
    """Whether a training window has a space inside a token: one after a character of a token
    labelled inside it (a space between tokens follows a token's end, or another space)."""
    labels, chars = unit.columns[BOUNDARY], unit.words
    return any(char == " " and at and labels[at - 1] == LABELS[INSIDE] and chars[at - 1] not in (" ", PAR)
               for at, char in enumerate(chars))


class Tokenizer(GreedyDecoding, NoDistillation, NoTransformer, nn.Module):
    """Character and category embeddings → bidirectional LSTM → a softmax over the five labels."""

    name = "tokenizer"
    kind = "tokenizer"
    input_columns: list[str] = []
    known_input_values: dict[str, frozenset[str]] = {}
    reads_raw_text = True
    batches_in_threads = False  # one torch.nn.LSTM call per batch already uses the threads
    Config = TokenizerConfig
    PRESETS = PRESETS
    default_preset = "fast"
    training_defaults = TRAINING_DEFAULTS
    gives_distribution = False
    can_bootstrap = False
    can_take_encoder = False
    can_lower_precision = False

    def __init__(self, config: TokenizerConfig, vocabs: dict[str, list[str]]):
        super().__init__()
        self.config, self.vocabs = config, vocabs
        self.chars = Vocab.from_list(vocabs["chars"])
        self.expander = Expander.from_vocabs(vocabs)
        self.spaced_tokens = spaced_tokens(vocabs)  # tokens may hold a space (Vietnamese)
        self.joined = frozenset(vocabs.get(JOINED, ()))  # words with a space it joins (tagger.tokenization.joined)
        self.known = frozenset(vocabs["chars"])  # the characters seen in training (stream.unseen_share)
        self.char_embedding = nn.Embedding(len(self.chars), config.char_dim, padding_idx=0)
        self.category_embedding = nn.Embedding(len(CATEGORIES_WITH_SCRIPTS if config.scripts else CATEGORIES),
                                               config.category_dim, padding_idx=0)
        size = config.char_dim + config.category_dim
        if config.recurrent == "torch":
            self.rnn: nn.Module = nn.LSTM(size, config.hidden, config.layers, bidirectional=True,
                                          dropout=config.dropout if config.layers > 1 else 0.0)
        else:
            self.rnn = StackedBiRNN(size, config.hidden, config.layers, CellSpec("lstm", "none"),
                                    dropouts=(config.dropout,) * config.layers, init_scale=1.0)
        self.dropout = nn.Dropout(config.dropout)
        self.output = nn.Linear(2 * config.hidden, len(LABELS))
        #: character -> id × N_CATEGORIES + category (filled as characters are met)
        self._codes: dict[str, int] = {PAD_CHAR: 0}
        #: code of every character of the Basic Multilingual Plane (None until :meth:`encode_text`)
        self._table: torch.Tensor | None = None

    # ----------------------------------------------------------------------------- declared
    @property
    def output_columns(self) -> list[str]:
        """None: it makes the sentences and their words (CoNLL-U blocks), which later models fill."""
        return []

    @property
    def distribution_labels(self) -> list[str]:
        return list(LABELS)

    @staticmethod
    def required_columns(config: TokenizerConfig) -> list[str]:
        return [BOUNDARY]

    @classmethod
    def pos_column(cls, config: TokenizerConfig) -> str | None:
        return None

    @classmethod
    def pos_columns(cls, config: TokenizerConfig) -> list[str]:
        return []

    # ----------------------------------------------------------------------------- data
    @classmethod
    def training_units(cls, config: TokenizerConfig, sentences: Sequence[Sentence]) -> list[Sentence]:
        """CoNLL-U ``sentences`` as one running text (:func:`tagger.tokenization.labels.labelled_text`)
        cut into windows (see the module text); a one-line error for sentences not read from CoNLL-U."""
        if not sentences:
            return []
        labelled = labelled_text(tightened((text_sentence(s) for s in sentences), config.tight_punctuation))
        norm = normalise(labelled.text)
        size, context, window = config.segment, config.context, config.window
        count = -(-len(norm) // size)
        tail = count * size - len(norm) + context
        chars = [PAD_CHAR] * context + list(norm) + [PAD_CHAR] * tail
        labels = ["_"] * context + [LABELS[i] for i in labelled.labels] + ["_"] * tail
        expansions = ["_"] * len(chars)
        for at, (form, words) in labelled.expansions.items():
            expansions[context + at] = f"{form}\t{' '.join(words)}"
        source = sentences[0].source
        units = []
        for i in range(count):
            start = i * size
            unit_labels = ["_"] * context + labels[start + context : start + context + size] + ["_"] * context
            units.append(Sentence(chars[start : start + window], {BOUNDARY: unit_labels,
                                                                   EXPANSION: expansions[start : start + window]},
                                  source=source, line=0))
        return units

    @classmethod
    def training_meta(cls, config: TokenizerConfig, sentences: Sequence[Sentence]) -> tuple[dict[str, Any], list[str]]:
        """The characters learned from and the windows they make (``train_tokens`` counts the
        windows' characters, context included)."""
        chars = sum(1 for unit in sentences for label in unit.columns[BOUNDARY] if label != "_")
        return {"train_characters": chars, "train_windows": len(sentences)}, []

    @classmethod
    def vocabs_from(cls, config: TokenizerConfig, sentences: Sequence[Sentence]) -> dict[str, list[str]]:
        """Characters of the training units seen ``min_char_count`` times (after padding, the
        unknown character and the paragraph break), and the multiword lexicon, rules and token
        counts (:func:`tagger.tokenization.multiword.vocabs`)."""
        counts: Counter = Counter()
        pairs, spaced = [], False
        for unit in sentences:
            spaced = spaced or _holds_spaced_token(unit)
            counts.update("".join(c for c, label in zip(unit.words, unit.columns[BOUNDARY]) if label != "_"))
            for labelled, expansion in zip(unit.columns[BOUNDARY], unit.columns[EXPANSION]):
                if expansion != "_" and labelled != "_":
                    form, _, words = expansion.partition("\t")
                    pairs.append((form, words.split(" ")))
        counts.pop(PAR, None)
        vocabs = {"chars": Vocab.build(counts, config.min_char_count, specials=(PAD, UNK, PAR)).to_list(),
                  **multiword_vocabs(pairs, ((unit.words, unit.columns[BOUNDARY]) for unit in sentences))}
        if spaced:
            vocabs[SPACED] = ["yes"]
            vocabs[JOINED] = learn_joined((unit.words, unit.columns[BOUNDARY]) for unit in sentences)
        return vocabs

    def _code(self, char: str) -> int:
        """``char`` as ``id × N_CATEGORIES + category`` (:func:`~tagger.tokenization.labels.char_code`; remembered)."""
        if char == PAD_CHAR:
            return 0
        code = self._codes[char] = char_code(char, self.chars.stoi, self.chars.unk_index, self.config.scripts)
        return code

    def encode(self, chars: Sequence[str]) -> list[int]:
        """Codes (:meth:`_code`) of ``chars`` (a normalised text, or a unit's characters)."""
        get, code = self._codes.get, self._code
        return [get(c) or code(c) for c in chars]  # only padding's code is 0 (and _code gives it)

    def encode_text(self, norm: str) -> torch.Tensor:
        """Codes of a normalised text ``[N]``: the characters of the Basic Multilingual Plane
        through one table (:attr:`_table`, made on first use), the others one by one."""
        if self._table is None:
            self._table = torch.tensor(self.encode([chr(c) if not 0xD800 <= c < 0xE000 else "\ufffd"
                                                     for c in range(0x10000)]))
        points = torch.frombuffer(bytearray(norm.encode("utf-32-le")), dtype=torch.int32).long()
        wide = points >= 0x10000
        codes = self._table[points.clamp(max=0xFFFF)]
        if bool(wide.any()):
            at = wide.nonzero().flatten()
            codes[at] = torch.tensor(self.encode([norm[i] for i in at.tolist()]))
        return codes

    def collate(self, sentences: Sequence[Sentence], with_gold: bool = True) -> TokenizerBatch:
        """Windows (training units) as a batch; gold labels only ``with_gold``."""
        steps = max(len(s) for s in sentences)
        codes = torch.tensor([self.encode(s.words) + [0] * (steps - len(s)) for s in sentences])
        labels = None
        if with_gold:
            labels = torch.tensor([[_LABEL.get(label, -100) for label in s.columns[BOUNDARY]] + [-100] * (steps - len(s))
                                   for s in sentences])
        return TokenizerBatch(codes // N_CATEGORIES, codes % N_CATEGORIES, torch.tensor([len(s) for s in sentences]),
                              labels)

    # ----------------------------------------------------------------------------- the network
    def forward(self, batch: TokenizerBatch) -> torch.Tensor:
        """Label scores [B, T, 5]."""
        chars = batch.chars
        if self.training and self.config.char_dropout > 0:
            drop = (torch.rand(chars.shape, device=chars.device) < self.config.char_dropout) & (chars > 2)
            chars = chars.masked_fill(drop, self.chars.unk_index)
        x = torch.cat([self.char_embedding(chars), self.category_embedding(batch.categories)], -1)
        x = self.dropout(x).transpose(0, 1)  # [T, B, D]
        if self.config.recurrent == "torch":
            hidden = self.rnn(x)[0]
        else:
            hidden = self.rnn(x, batch.lengths)
        return self.output(self.dropout(hidden)).transpose(0, 1)

    def loss(self, scores: torch.Tensor, batch: TokenizerBatch) -> torch.Tensor:
        return F.cross_entropy(scores.flatten(0, 1), batch.labels.flatten(), ignore_index=-100)

    @torch.no_grad()
    def decode(self, batch: TokenizerBatch) -> list[list[str]]:
        """Each window's label per character."""
        best = self(batch).argmax(-1).tolist()
        return [[LABELS[i] for i in row[:n]] for row, n in zip(best, batch.lengths.tolist())]

    def distribution(self, batch: TokenizerBatch) -> torch.Tensor:
        raise TaggerError("a tokenizer gives no tag distribution (--top-k/--beta are for taggers)")

    @torch.inference_mode()
    def label(self, norm: str) -> bytes:
        """One label per character of a normalised text (:func:`tagger.tokenization.labels.normalise`),
        read in windows as in training, :data:`MAX_WINDOWS` at a time."""
        n = len(norm)
        if not n:
            return b""
        size, context, window = self.config.segment, self.config.context, self.config.window
        count = -(-n // size)
        device = self.output.weight.device
        padded = torch.zeros(count * size + 2 * context, dtype=torch.long)
        padded[context : context + n] = self.encode_text(norm)
        windows = padded.unfold(0, window, size)  # [count, window]
        out = []
        for start in range(0, count, MAX_WINDOWS):
            codes = windows[start : start + MAX_WINDOWS].to(device)
            batch = TokenizerBatch(codes // N_CATEGORIES, codes % N_CATEGORIES,
                                   torch.full((codes.shape[0],), window, dtype=torch.long))
            out.append(self(batch)[:, context : context + size].argmax(-1).flatten())
        return torch.cat(out)[:n].to(torch.uint8).cpu().numpy().tobytes()

    # ----------------------------------------------------------------------------- results
    def annotate(self, sentence: Sentence, prediction: list[str]) -> None:
        sentence.columns[BOUNDARY] = prediction

    def metric(self, sentences: Sequence[Sentence], predictions: Sequence[Any]) -> BoundaryMetric:
        """Token, sentence and multiword F1 over the windows' labelled characters, in order."""
        chars, gold, pred = [], [], []
        for unit, predicted in zip(sentences, predictions):
            for char, g, p in zip(unit.words, unit.columns[BOUNDARY], predicted):
                if g != "_":
                    chars.append(char)
                    gold.append(_LABEL[g])
                    pred.append(_LABEL[p])
        metric = BoundaryMetric(self.spaced_tokens)
        metric.update("".join(chars), gold, pred)
        return metric

    def load_embeddings(self, words: list[str], vectors: torch.Tensor) -> int:
        raise TaggerError("a tokenizer reads characters: it takes no word vectors (--embeddings)")

    def bootstrap(self, source: Any, gates: list[str] | None = None) -> None:
        raise TaggerError(f"model {self.name} cannot be bootstrapped")

    @classmethod
    def with_encoder(cls, config: TokenizerConfig, vocabs: dict[str, list[str]], source: Any) -> "Tokenizer":
        raise TaggerError(f"model {cls.name} takes no encoder from another model")

    def set_precision(self, dtype: torch.dtype | None, in_place: bool = False) -> None:
        if dtype is not None:
            raise TaggerError("a tokenizer runs in float32 only")
