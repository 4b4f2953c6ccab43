"""The tagger's input layer (SPEC §3): word, capitalisation and first/last-character features,
combined over a context window with logistic gates.

``f_t = [E_w(w_t); E_a(a_t); E_c(chars_t)]`` and, for a window of d=3,
``x_t = [r_{-1} f_{t-1}; r_0 f_t; r_{+1} f_{t+1}]`` with ``r = σ(W_r [f_{t-1}; f_t; f_{t+1}] + b_r)``.
"""

from __future__ import annotations

import re

import torch
from torch import nn
from torch.nn import functional as F

from tagger.corpus.vocab import Vocab
from tagger.modules.init import scaled_normal_

_DIGIT = re.compile(r"\d")

# Capitalisation classes; 0 is padding.
CAPS_LOWER, CAPS_FIRST, CAPS_UPPER, CAPS_MIXED, CAPS_NONE = 1, 2, 3, 4, 5
CHAR_PAD_WORD = "\x00"  # fills the first/last-l slots of words shorter than l (one special symbol)


def normalize(word: str) -> str:
    """Lowercase and map every digit to 9."""
    return _DIGIT.sub("9", word.lower())


def caps_class(word: str) -> int:
    """All lower, first upper, all upper, mixed, or no letters."""
    if not any(ch.isalpha() for ch in word):
        return CAPS_NONE
    if word.islower():
        return CAPS_LOWER
    if word.isupper():
        return CAPS_UPPER
    if word[0].isupper() and (len(word) == 1 or word[1:].islower()):
        return CAPS_FIRST
    return CAPS_MIXED


def char_slots(word: str, length: int) -> list[str]:
    """The first ``length`` and the last ``length`` characters, padded with one special symbol."""
    pad = [CHAR_PAD_WORD] * length
    first = (list(word[:length]) + pad)[:length]
    last = (pad + list(word[-length:]))[-length:]
    return first + last


class InputFeaturizer:
    """Turns words into the integer features :class:`InputLayer` reads (via Vocabs, plain Python)."""

    def __init__(self, words: Vocab, chars: Vocab, char_length: int):
        self.words, self.chars, self.char_length = words, chars, char_length
        self._cache: dict[str, tuple[int, int, list[int]]] = {}

    def token(self, word: str) -> tuple[int, int, list[int]]:
        """(word id, caps class, 2·l char ids) for one token; memoised, the hot path of tagging."""
        hit = self._cache.get(word)
        if hit is None:
            hit = (self.words.index(normalize(word)), caps_class(word), self.chars.indices(char_slots(word, self.char_length)))
            if len(self._cache) < 100_000:  # bounded: open-vocabulary streams must not grow memory
                self._cache[word] = hit
        return hit


class InputLayer(nn.Module):
    """Embeds word, caps and char features and applies the gated context window.

    Any feature can be switched off by a zero dimension; ``window`` is odd (1 = no context).
    """

    def __init__(self, n_words: int, n_chars: int, word_dim: int, caps_dim: int, char_dim: int, char_length: int, window: int, window_gates: bool, init_scale: float = 0.1):
        super().__init__()
        if window < 1 or window % 2 == 0:
            raise ValueError(f"window must be an odd number ≥ 1, not {window}")
        self.word = nn.Embedding(n_words, word_dim, padding_idx=0) if word_dim else None
        self.caps = nn.Embedding(6, caps_dim, padding_idx=0) if caps_dim else None
        self.char = nn.Embedding(n_chars, char_dim, padding_idx=0) if char_dim and char_length else None
        self.feature_size = word_dim + caps_dim + (char_dim * 2 * char_length if self.char is not None else 0)
        if self.feature_size == 0:
            raise ValueError("every input feature is switched off")
        self.window = window
        self.gates = nn.Linear(window * self.feature_size, window) if window > 1 and window_gates else None
        for emb in (self.word, self.caps, self.char):
            if emb is not None:
                nn.init.normal_(emb.weight, 0.0, init_scale)
                emb.weight.data[0].zero_()
        if self.gates is not None:
            scaled_normal_(self.gates.weight, self.gates.in_features, init_scale)
            nn.init.zeros_(self.gates.bias)

    @property
    def output_size(self) -> int:
        return self.window * self.feature_size

    def load_vectors(self, vectors: torch.Tensor, rows: torch.Tensor) -> None:
        """Copy pretrained ``vectors`` [N, word_dim] into the word embedding rows ``rows`` [N]."""
        assert self.word is not None
        with torch.no_grad():
            self.word.weight[rows] = vectors

    def forward(self, words: torch.Tensor, caps: torch.Tensor, chars: torch.Tensor) -> torch.Tensor:
        """words, caps: [T, B]; chars: [T, B, 2l] (time-major) → [T, B, window · feature_size]."""
        f = self.features(words, caps, chars)
        if self.window == 1:
            return f
        half = self.window // 2
        padded = F.pad(f, (0, 0, 0, 0, half, half))  # zero vectors beyond the sentence edges
        steps = f.shape[0]
        context = torch.cat([padded[j : j + steps] for j in range(self.window)], -1)  # [T, B, d·F]
        if self.gates is None:
            return context
        r = torch.sigmoid(self.gates(context))  # [T, B, d]
        return (context.view(*context.shape[:2], self.window, -1) * r.unsqueeze(-1)).flatten(2)

    def project_by_type(self, words: torch.Tensor, caps: torch.Tensor, chars: torch.Tensor, types: torch.Tensor,
                        weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        """``x_t · weight[d] + bias[d]`` for both directions, in scan order, without building x_t.

        With ``x_t = [r_j f_{t+j}]_j``, ``x_t W = Σ_j r_j(t) (f_{t+j} W_j)``, and the gates'
        pre-activation is ``b_r + Σ_j f_{t+j} W_{r,j}``: every product is a function of one word,
        so it is computed once per distinct word of the batch and gathered (Chen & Manning's
        precomputation, applied to the tagger's first layer). No dropout: inference only.

        words, caps: [U+1]; chars: [U+1, 2l] for the batch's distinct words (row 0: padding);
        types: [T, B] rows of each token; weight: [2, d·F, G]; bias: [2, 1, G] → [2, T, B, G],
        direction 1 reversed in time (what :class:`~tagger.modules.recurrent.BiLayer` scans).
        """
        f = self.features(words, caps, chars)  # [U+1, F], row 0 is zero
        d, size, width = self.window, self.feature_size, weight.shape[-1]
        steps, batch = types.shape
        tables = torch.matmul(f, weight.view(2, d, size, width).transpose(0, 1))  # [slot, direction, U+1, G]
        half = d // 2
        padded = F.pad(types, (0, 0, half, half))  # beyond the edges: row 0, the zero vector
        slots = [padded[j : j + steps] for j in range(d)]  # [T, B] rows of the word in slot j
        if self.gates is not None:
            gate_in = (f @ self.gates.weight.view(d, d, size).permute(2, 1, 0).reshape(size, d * d)).view(-1, d, d)
            r = torch.sigmoid(self.gates.bias + sum(gate_in[slots[j], j] for j in range(d)))  # [T, B, d]
        else:
            r = f.new_ones(steps, batch, d)
        out = f.new_empty(2, steps, batch, width)
        for direction in range(2):
            rows = slots if direction == 0 else [slot.flip(0) for slot in slots]
            gates = r if direction == 0 else r.flip(0)
            acc = out[direction]
            acc.copy_(bias[direction].expand(steps, batch, width))
            for j in range(d):
                acc.addcmul_(gates[..., j : j + 1], F.embedding(rows[j], tables[j, direction]))
        return out

    def features(self, words: torch.Tensor, caps: torch.Tensor, chars: torch.Tensor) -> torch.Tensor:
        """f = [E_w(w); E_a(a); E_c(chars)]: [..., feature_size] for ids of any leading shape."""
        parts = []
        if self.word is not None:
            parts.append(self.word(words))
        if self.caps is not None:
            parts.append(self.caps(caps))
        if self.char is not None:
            parts.append(self.char(chars).flatten(-2))
        return torch.cat(parts, -1) if len(parts) > 1 else parts[0]
