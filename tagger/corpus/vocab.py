"""Vocab: the one place where strings become integers."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

PAD = "<pad>"
UNK = "<unk>"


class Vocab:
    """A list of strings and its inverse. Index 0 is padding, 1 unknown (when present).

    Stored in model files as a plain list (:meth:`to_list`); rebuilt with :meth:`from_list`.
    """

    def __init__(self, items: Iterable[str], specials: tuple[str, ...] = (PAD, UNK)):
        self.itos: list[str] = list(specials)
        seen = set(self.itos)
        for item in items:
            if item not in seen:
                seen.add(item)
                self.itos.append(item)
        self.stoi: dict[str, int] = {s: i for i, s in enumerate(self.itos)}
        self.unk_index = self.stoi.get(UNK, -1)

    @classmethod
    def build(
        cls,
        counts: Counter,
        min_count: int = 1,
        specials: tuple[str, ...] = (PAD, UNK),
    ) -> "Vocab":
        """Items seen at least ``min_count`` times, most frequent first (ties alphabetical)."""
        kept = sorted((k for k, c in counts.items() if c >= min_count), key=lambda k: (-counts[k], k))
        return cls(kept, specials)

    @classmethod
    def from_list(cls, itos: list[str]) -> "Vocab":
        vocab = cls([], specials=())
        vocab.itos = list(itos)
        vocab.stoi = dict(zip(vocab.itos, range(len(vocab.itos))))
        vocab.unk_index = vocab.stoi.get(UNK, -1)
        return vocab

    def to_list(self) -> list[str]:
        return list(self.itos)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, item: str) -> bool:
        return item in self.stoi

    def index(self, item: str) -> int:
        """The index of ``item``, or of UNK; KeyError if the vocab has no UNK."""
        i = self.stoi.get(item, self.unk_index)
        if i < 0:
            raise KeyError(item)
        return i

    def indices(self, items: Iterable[str]) -> list[int]:
        get, unk = self.stoi.get, self.unk_index
        return [get(item, unk) for item in items]

    def __getitem__(self, i: int) -> str:
        return self.itos[i]
