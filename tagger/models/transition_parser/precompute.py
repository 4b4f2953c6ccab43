"""The Chen & Manning precomputed rows that make decoding fast.

``W x`` is linear in the embeddings, so it is a sum of one ``W_slot · e`` row per feature. Those
rows are computed once (until the weights change) for every tag and label and for the most
frequent words; the other words of a batch get theirs once per batch; each decoding step is then
one ``embedding_bag`` sum over 48 rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from tagger.models.transition_parser.ids import FIRST_CHILD, N_CHILD, N_SLOTS, SPECIALS

if TYPE_CHECKING:
    from tagger.models.transition_parser.model import TransitionParser

#: Rows for this many words not precomputed are allocated at first (grown when a batch needs more).
SPARE_WORDS = 1024


def weights_key(model: TransitionParser) -> tuple:
    """Changes whenever a weight the rows are made of changes (in place or replaced) or moves."""
    params = (model.word_emb.weight, model.tag_emb.weight, model.label_emb.weight, model.hidden.weight,
              model.hidden.bias) + ((model.word_pretrained.project.weight,) if model.word_pretrained is not None else ())
    return tuple(p._version for p in params) + tuple(p.data_ptr() for p in params) + (model.hidden.weight.device,)


def precomputed_words(model: TransitionParser) -> int:
    """How many of the most frequent words get precomputed rows (``precompute``, memory-capped)."""
    config = model.config
    if config.precompute <= 0:
        return 0
    row_bytes = N_SLOTS * model.hidden.out_features * model.hidden.weight.element_size()
    cap = int(config.precompute_mb * 2**20 // row_bytes)
    return max(len(SPECIALS), min(config.precompute, len(model.word_vocab), cap))


def _slot_projection(weight: torch.Tensor, first: int, dim: int, slots: int) -> torch.Tensor:
    """[dim, slots · G·H]: the blocks of ``weight`` (W) that ``slots`` consecutive features of
    ``dim`` dims starting at input column ``first`` are multiplied with, side by side."""
    return slot_blocks(weight, first, dim, slots).reshape(dim, -1)


def slot_blocks(weight: torch.Tensor, first: int, dim: int, slots: int) -> torch.Tensor:
    """[dim, slots, G·H]: :func:`_slot_projection` before its last two axes are joined."""
    blocks = weight[:, first : first + slots * dim].reshape(-1, slots, dim)  # [GH, slots, dim]
    return blocks.permute(2, 1, 0)


@dataclass
class RowTable:
    """The rows, laid out ``[tags | labels | words | words of the batch]``, ``N_SLOTS`` rows per
    entry (row ``s`` = ``W_s · e``; label rows of slots 0-5 are zero). The hidden bias is folded
    into the word rows of slot s0, which is never empty (ROOT stays on the stack)."""

    key: tuple  # weights_key of the weights the rows were made from
    table: torch.Tensor  # [rows, G·H]
    t0: int  # first row of the tags
    l0: int  # first row of the labels
    w0: int  # first row of the words
    n_words: int  # precomputed words (ids below it)
    static_rows: int  # rows after them hold the current batch's other words
    word_projection: torch.Tensor  # [word_dim, N_SLOTS · G·H]

    @classmethod
    def build(cls, model: TransitionParser) -> RowTable:
        """The static rows: tags, labels and the most frequent words."""
        c, weight = model.config, model.hidden.weight
        width = model.hidden.out_features
        tag_rows = model.tag_emb.weight @ _slot_projection(weight, N_SLOTS * c.word_dim, c.tag_dim, N_SLOTS)
        child = model.label_emb.weight @ _slot_projection(weight, N_SLOTS * (c.word_dim + c.tag_dim), c.label_dim,
                                                          N_CHILD)
        label_rows = child.new_zeros(len(child), N_SLOTS, width)
        label_rows[:, FIRST_CHILD:] = child.view(len(child), N_CHILD, width)
        n_words = precomputed_words(model)
        t0, l0, w0 = 0, len(tag_rows) * N_SLOTS, (len(tag_rows) + len(label_rows)) * N_SLOTS
        static = w0 + n_words * N_SLOTS
        table = torch.empty(static + SPARE_WORDS * N_SLOTS, width, device=tag_rows.device, dtype=tag_rows.dtype)
        table[t0:l0] = tag_rows.view(-1, width)
        table[l0:w0] = label_rows.view(-1, width)
        rows = cls(weights_key(model), table, t0, l0, w0, n_words, static,
                   _slot_projection(weight, 0, c.word_dim, N_SLOTS))
        rows._write_words(model, torch.arange(n_words, device=table.device), w0)
        return rows

    def batch_words(self, model: TransitionParser, words: torch.Tensor) -> torch.Tensor:
        """Each global position's word id in the table: the words not precomputed get rows after
        the static ones (written now), numbered from ``n_words`` on."""
        n_words = self.n_words
        rare = words >= n_words
        if not bool(rare.any()):
            return words
        unique, inverse = torch.unique(words[rare], return_inverse=True)
        ext = words.clone()
        ext[rare] = n_words + inverse
        start = self.static_rows
        end = start + len(unique) * N_SLOTS
        if end > len(self.table):  # grow the spare region at the end (rarely)
            grown = self.table.new_empty(start + 2 * (end - start), self.table.shape[1])
            grown[:start] = self.table[:start]
            self.table = grown
        self._write_words(model, unique, start)
        return ext

    def _write_words(self, model: TransitionParser, ids: torch.Tensor, start: int) -> None:
        """Write the rows of words ``ids`` into the table from row ``start`` on."""
        rows = self.table[start : start + len(ids) * N_SLOTS].view(len(ids), -1)
        torch.mm(model.word_rows(ids), self.word_projection, out=rows)
        rows.view(len(ids), N_SLOTS, -1)[:, 0] += model.hidden.bias
