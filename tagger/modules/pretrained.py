"""A frozen table of pretrained word vectors beside a model's trained word embedding, for the
families whose words are plain embedding rows (the transition parser's static word features, the
seq2seq parser's encoder input); the tagger's input layer keeps its own (``InputLayer.pretrained``).

A word's vector is ``E(w) + P v(w)`` (Dozat & Manning 2017): ``E`` the trained embedding (UNK's
row for a word it does not have), ``v`` the frozen pretrained vector (zero where the source has
none) and ``P`` a trained projection to the embedding's size. The table has a row for each
training word, then rows for as many of the source's other words as a size cap allows, so that
words never seen in training keep what the vectors know of them. At inference ``E(w) + P v(w)``
is a fixed per-word row, which the fast paths read like any other (the parser's precomputed rows
are made from it).
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import nn


def frozen_rows(known: Sequence[str], words: Sequence[str], vectors: torch.Tensor, room: int,
                key: Callable[[str], str], specials: int = 0) -> tuple[list[str], torch.Tensor, list[int]]:
    """The rows of a frozen table for a model whose trained embedding has the rows ``known``:
    the source's ``words`` [N] and ``vectors`` [N, dim] (most frequent first) matched by ``key``
    (the model's own normalisation: lowercase, digits, ...; the first source word of a key wins).
    The first ``specials`` known rows (padding, UNK, ...) get no vector.

    Returns the extra words (keys of source words no known word has, the first ``room`` of them),
    the table [len(known) + len(extra), dim] (float32; zero rows where a known word has no vector)
    and the known rows that found a vector."""
    first: dict[str, int] = {}
    for i, word in enumerate(words):
        first.setdefault(key(word), i)
    known_keys = {key(word) for word in known}
    extra = [form for form in first if form not in known_keys][: max(room, 0)]
    table = torch.zeros(len(known) + len(extra), vectors.shape[1])
    found = [(row, first[key(word)]) for row, word in enumerate(known) if row >= specials and key(word) in first]
    found += [(len(known) + i, first[form]) for i, form in enumerate(extra)]
    if found:
        at, source = zip(*found)
        table[list(at)] = vectors[list(source)].float()
    return extra, table, [row for row, _ in found if row < len(known)]


def room_for(megabytes: float, dim: int, known: int) -> int:
    """How many extra rows a table of ``dim``-wide fp16 rows may have within ``megabytes``,
    the ``known`` rows first."""
    return max(int(megabytes * 2**20) // (2 * dim) - known, 0)


class FrozenVectors(nn.Module):
    """The frozen table ``table`` [R, dim] (fp16, a buffer: saved, never trained) and the trained
    projection ``project`` [dim → size] (no bias)."""

    def __init__(self, rows: int, dim: int, size: int, init_range: float):
        super().__init__()
        self.register_buffer("table", torch.zeros(rows, dim, dtype=torch.float16))
        self.project = nn.Linear(dim, size, bias=False)
        nn.init.uniform_(self.project.weight, -init_range, init_range)

    @classmethod
    def holding(cls, table: torch.Tensor, size: int, init_range: float, device: torch.device) -> "FrozenVectors":
        """One that holds ``table`` [R, dim] (as fp16) with a new projection to ``size``, on ``device``."""
        layer = cls(len(table), table.shape[1], size, init_range).to(device)
        layer.set_table(table)
        return layer

    def set_table(self, table: torch.Tensor) -> None:
        """Take ``table`` [R, dim] (stored as fp16)."""
        assert table.shape == self.table.shape, f"a table of {tuple(self.table.shape)}, not {tuple(table.shape)}"
        self.table.copy_(table.to(self.table))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """``P v(w)`` for row ids of any shape → [..., size]."""
        return self.project(self.table[ids].to(self.project.weight.dtype))

    def start_from(self, embedding: nn.Embedding, rows: list[int]) -> None:
        """Training starts from the pretrained vectors: the trained rows ``rows`` (the words that
        have a vector) are zero, and where the sizes are equal ``P`` is the identity."""
        with torch.no_grad():
            if rows:
                embedding.weight[torch.tensor(rows, device=embedding.weight.device)] = 0.0
            if self.project.weight.shape[0] == self.project.weight.shape[1]:
                self.project.weight.copy_(torch.eye(self.project.weight.shape[0]))
