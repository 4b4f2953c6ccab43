"""The transition parser (:class:`tagger.models.transition_parser.TransitionParser`) applied
without torch, for the configurations :func:`tagger.models.transition_parser.export.supported`
names (a BiLSTM encoder whose vectors alone the token slots read, a feed-forward hidden layer:
the shipped English model's parser; the encoder may read the POS tags too, ``bilstm-tags``).

What it computes is the torch decoder's (:mod:`tagger.models.transition_parser.decoder`, greedy
with :class:`~tagger.models.transition_parser.decoder.TokenInputs`):

- the encoder is the skip-LSTM tagger's network, run by the tagger's runtime
  (:class:`tagger.runtime.skip_lstm.NumpyTagger`, its C kernels included) with the token-slot
  product as its output layer, so each word's k slot rows ``W_s · v + [s = 0] b`` come out of one
  product;
- each transition of a batch's sentences (longest first, a sentence of n words takes 2n) then sums
  the rows of the slots' tokens (``null`` where empty) and of their children's labels, a ReLU, the
  output product, the illegal actions masked (:mod:`tagger.transitions`), the best one taken;
- lifted labels are moved back at the end (pseudo-projective parsing).

Its trees are the torch model's in fp32 (tested on EWT dev sentences): the same sums, in another
order, so a near tie could in principle go the other way.
"""

from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from tagger.models.transition_parser.export import ParserArrays, config_of, export, supported
from tagger.models.transition_parser.ids import FIRST_CHILD, LABEL_OFFSET, N_CHILD, N_SLOTS, NULL_ID, UNK_ID
from tagger.modules.fused import _fastscan
from tagger.runtime.kernels import NUMPY, Kernel
from tagger.runtime.skip_lstm import FORMAT_VERSIONS, NumpyTagger, Tagging, length_batches
from tagger.transitions.arc_standard import State, apply, first_legal, legal_code, root_label
from tagger.transitions.features import token_slots
from tagger.transitions.pseudo_projective import deprojectivise

if TYPE_CHECKING:
    from tagger.runtime.pool import Pool

#: Padded tokens per batch, at most: each holds k rows of the hidden layer's width per token
#: (6 × 256 floats for ``bilstm-words``, 12 MB at 2048).
MAX_TOKENS = 2048
#: Whether :meth:`NumpyParser.decode` keeps the states in C where the C steps are built (tests
#: turn it off to check the Python states against them).
C_STATES = True
#: The name of a parser's model file (and pipeline stage).
NAME = "transition_parser"

Tree = tuple[list[int], list[str]]


def runs(header: dict[str, Any] | None) -> bool:
    """Whether :class:`NumpyParser` computes the parser of a model file's plain data (tensors
    need not be read)."""
    if header is None or header.get("name") != NAME or header.get("format_version") not in FORMAT_VERSIONS:
        return False
    config = config_of(header.get("config"))
    return config is not None and supported(config)


def input_columns(header: dict[str, Any]) -> list[str]:
    """The columns a parser that :func:`runs` reads besides the words (``upos``, ``feats``
    where its encoder reads ``upos+feats`` tags; none for ``bilstm-words``)."""
    config = config_of(header.get("config"))
    return config.tag_column.split("+") if config is not None and config.encoder_tag_dim else []


def from_archive(plain: dict[str, Any], kernel: Kernel = NUMPY) -> "NumpyParser | None":
    """The parser of a model file's (or pipeline stage's) plain data, or None where it is not one
    computed here."""
    if not runs(plain):
        return None
    try:
        return NumpyParser(export(config_of(plain["config"]), plain["vocabs"], plain["state_dict"]), kernel)
    except (KeyError, ValueError, TypeError):
        return None


class NumpyParser:
    """Greedy parsing of word sequences (module text)."""

    output_columns = ["head", "deprel"]

    def __init__(self, arrays: ParserArrays, kernel: Kernel = NUMPY):
        self.encoder = NumpyTagger(arrays.encoder_config, arrays.encoder_vocabs, arrays.encoder_state, kernel,
                                   output=arrays.slot_output)
        self.k, self.width = arrays.slots, arrays.null_rows.shape[1]
        self.specials = np.concatenate([arrays.null_rows, arrays.root_rows])  # positions 0 (empty slot) and 1 (ROOT)
        self.label_rows, self.w_out, self.masks = arrays.label_rows, arrays.w_out, arrays.masks
        self.n_labels = len(arrays.label_names)
        self.root = root_label(arrays.label_names)
        self.plain_labels, self.lifted_from = arrays.plain_labels, arrays.lifted_from
        self.lifts = any(head is not None for head in self.lifted_from)
        #: an encoder reading the POS tags: their rows [tags + 1, 2, G] (the last zero), ids, columns
        self.tag_rows = arrays.tag_rows
        self.tag_ids = {tag: i for i, tag in enumerate(arrays.tag_names or [])}
        self.input_columns = arrays.tag_column.split("+") if arrays.tag_rows is not None else []

    def start(self, sentences: Sequence[Sequence[str]], pool: Pool | None = None,
              columns: Sequence[dict[str, list]] | None = None) -> Tagging:
        """Begins parsing ``sentences`` as :meth:`NumpyTagger.start` begins tagging them (their
        batches handed to ``pool`` if one is given); the trees come from :meth:`finish`.
        ``columns``: per sentence, the labels of its :attr:`input_columns` (an encoder reading
        the POS tags; a ValueError where one is missing)."""
        batches = length_batches(sentences, MAX_TOKENS)
        words = None
        if _fastscan is not None:
            words = self.encoder.word_rows(list(dict.fromkeys(chain.from_iterable(sentences))), pool)
        tags = self.tag_numbers(sentences, columns) if self.input_columns else None
        run = lambda batch: self.parse([sentences[i] for i in batch], words,  # noqa: E731
                                       None if tags is None else [tags[i] for i in batch])
        trees = [pool.submit(run, batch) for batch in batches] if pool is not None and words is not None else None
        return Tagging(sentences, batches, run, trees)

    def finish(self, parsing: Tagging) -> list[dict[str, list]]:
        """``{"head": heads, "deprel": labels}`` per sentence of a chunk begun by :meth:`start`."""
        out: list[dict[str, list]] = [{"head": [], "deprel": []} for _ in parsing.sentences]
        results = (f.result() for f in parsing.scores) if parsing.scores is not None else map(parsing.run, parsing.batches)
        for batch, trees in zip(parsing.batches, results):
            for i, (heads, rels) in zip(batch, trees):
                out[i] = {"head": heads, "deprel": rels}
        return out

    def tag(self, sentences: Sequence[Sequence[str]], columns: Sequence[dict[str, list]] | None = None
            ) -> list[dict[str, list]]:
        """Heads and labels of ``sentences`` (word sequences; ``columns``: their tags where the
        parser reads them), one thread."""
        return self.finish(self.start(sentences, columns=columns))

    def tag_numbers(self, sentences: Sequence[Sequence[str]], columns: Sequence[dict[str, list]] | None) -> list[list[int]]:
        """Each word's tag id: its :attr:`input_columns` labels joined by ``+`` as the torch
        parser reads them (:func:`~tagger.models.transition_parser.batch.tag_column_values`), an
        unknown tag as ``<unk>``."""
        if columns is None or len(columns) != len(sentences) or any(
                any(len(c.get(name) or ()) != len(s) for name in self.input_columns) for s, c in zip(sentences, columns)):
            raise ValueError(f"the parser reads {'+'.join(self.input_columns)}: every word needs them")
        get = self.tag_ids.get
        return [[get(tag, UNK_ID) for tag in map("+".join, zip(*(c[name] for name in self.input_columns)))]
                for c in columns]

    def parse(self, sentences: Sequence[Sequence[str]], words: Any = None,
              tags: Sequence[list[int]] | None = None) -> list[Tree]:
        """The trees of B non-empty sentences: the encoder's slot rows (its first layer given
        the rows of the sentences' ``tags`` where it reads them), then greedy decoding."""
        extra = None
        if self.tag_rows is not None:
            if tags is None:
                raise ValueError(f"the parser reads {'+'.join(self.input_columns)}: no tags given")
            ids = np.full((max(map(len, sentences)), len(sentences)), len(self.tag_rows) - 1, dtype=np.intp)
            for b, numbers in enumerate(tags):
                ids[: len(numbers), b] = numbers
            extra = self.tag_rows[ids]  # [T, B, 2, G]
        rows = self.encoder.scores(sentences, words, extra)  # [T, B, k·G·H]
        return self.decode(rows, [len(s) for s in sentences])

    def decode(self, rows: np.ndarray, lengths: list[int]) -> list[Tree]:
        """Greedy decoding of B sentences of ``lengths`` from their slot rows ``rows`` [T, B, k·G·H]:
        ``(heads, labels)`` per sentence, in order: the states kept in C where the C steps are
        built (:meth:`decode_c`), else in Python (:meth:`decode_python`); the same trees."""
        if _fastscan is not None and C_STATES:
            return self.decode_c(rows, lengths)
        return self.decode_python(rows, lengths)

    def decode_c(self, rows: np.ndarray, lengths: list[int]) -> list[Tree]:
        """:meth:`decode` with the states in int64 arrays that ``_fastscan.arc_features`` and
        ``arc_apply`` read and change (the rules of :mod:`tagger.transitions`, in C)."""
        _, batch, _ = rows.shape
        k, width = self.k, self.width
        table = np.concatenate([self.specials, rows.reshape(-1, width), self.label_rows])
        l0 = len(table) - len(self.label_rows)
        order = sorted(range(batch), key=lambda b: -lengths[b])
        steps = [2 * lengths[b] for b in order]
        room = max(lengths) + 2
        stack = np.zeros((batch, room), dtype=np.int64)  # ROOT at the bottom
        counts = np.array([(1, 1, lengths[b]) for b in order], dtype=np.int64)  # depth, buffer front, n
        heads, labels = np.full((batch, room), -1, dtype=np.int64), np.full((batch, room), -1, dtype=np.int64)
        children = np.full((4, batch, room + 1), -1, dtype=np.int64)
        states = (batch, room, stack.ctypes.data, counts.ctypes.data, heads.ctypes.data, labels.ctypes.data,
                  children.ctypes.data)
        column = np.array(order, dtype=np.int64)
        index = np.empty((batch, k + N_CHILD), dtype=np.int64)
        codes = np.empty(batch, dtype=np.int64)
        pre = np.empty((batch, width), dtype=np.float32)
        active = batch
        for t in range(steps[0]):
            while steps[active - 1] <= t:
                active -= 1
            _fastscan.arc_features(active, *states, (k, l0, NULL_ID, LABEL_OFFSET, column.ctypes.data,
                                                     index.ctypes.data, codes.ctypes.data))
            hidden = self.hidden(table, index[:active], pre[:active])
            best = (hidden @ self.w_out + self.masks[codes[:active]]).argmax(1)
            _fastscan.arc_apply(active, *states, (best.ctypes.data, self.masks.ctypes.data, codes.ctypes.data,
                                                  self.masks.shape[1]))
        trees: list[Tree] = [([], [])] * batch
        for j, b in enumerate(order):
            n = lengths[b]
            self.tree_into(trees, b, heads[j, 1 : n + 1].tolist(), labels[j, 1 : n + 1].tolist())
        return trees

    def decode_python(self, rows: np.ndarray, lengths: list[int]) -> list[Tree]:
        """:meth:`decode` with the states of :class:`tagger.transitions.arc_standard.State`."""
        _, batch, _ = rows.shape
        k, width = self.k, self.width
        # rows: positions 0 (empty) and 1 (ROOT), then word t of sentence b at 2 + t·B + b (k rows
        # each), then the label rows from l0 on
        table = np.concatenate([self.specials, rows.reshape(-1, width), self.label_rows])
        l0 = len(table) - len(self.label_rows)
        labels = np.full(l0 // k, l0 + NULL_ID * N_CHILD, dtype=np.int64)  # each position's first label row
        order = sorted(range(batch), key=lambda b: -lengths[b])
        states = [State(lengths[b]) for b in order]
        steps = [2 * lengths[b] for b in order]
        column = np.array(order, dtype=np.int64)[:, None]
        slot, child = np.arange(k), np.arange(N_CHILD)
        index = np.empty((batch, k + N_CHILD), dtype=np.int64)
        pre = np.empty((batch, width), dtype=np.float32)
        active = batch
        for t in range(steps[0]):
            while steps[active - 1] <= t:
                active -= 1
            live = states[:active]
            raw = np.array([token_slots(state) for state in live], dtype=np.int64).reshape(active, N_SLOTS)
            codes = np.fromiter(map(legal_code, live), dtype=np.intp, count=active)
            pos = np.where(raw > 0, 2 + (raw - 1) * batch + column[:active], raw + 1)  # -1 → 0, ROOT → 1
            np.add(pos[:, :k] * k, slot, out=index[:active, :k])
            np.add(labels[pos[:, FIRST_CHILD:]], child, out=index[:active, k:])
            hidden = self.hidden(table, index[:active], pre[:active])
            best = (hidden @ self.w_out + self.masks[codes]).argmax(1)
            arcs = best > 0  # the new dependent: s1 for LEFT-ARC (odd), s0 for RIGHT-ARC
            dependent = np.where(best % 2 == 1, pos[:, 1], pos[:, 0])[arcs]
            labels[dependent] = l0 + ((best[arcs] - 1) // 2 + LABEL_OFFSET) * N_CHILD
            for state, action in zip(live, best.tolist()):
                try:
                    apply(state, action)
                except ValueError:  # only reachable with NaN scores: take any legal action
                    apply(state, first_legal(state, self.n_labels, self.root))
        return self.trees(order, states)

    @staticmethod
    def hidden(table: np.ndarray, index: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``max(Σ_j table[index[:, j]], 0)`` into ``out`` [n, G·H]: by the C loop where it is
        built, else by numpy."""
        if _fastscan is not None:
            _fastscan.bag_sum(len(index), index.shape[1], table.shape[1], len(table), table.ctypes.data,
                              index.ctypes.data, 1, out.ctypes.data)
            return out
        np.sum(table[index], axis=1, out=out)
        return np.maximum(out, 0, out=out)

    def trees(self, order: list[int], states: list[State]) -> list[Tree]:
        """``(heads, labels)`` of the final ``states`` of sentences ``order``, in sentence order."""
        trees: list[Tree] = [([], [])] * len(order)
        for b, state in zip(order, states):
            self.tree_into(trees, b, *state.tree())
        return trees

    def tree_into(self, trees: list[Tree], b: int, heads: list[int], ids: list[int]) -> None:
        """``trees[b]`` = the tree of ``heads`` and label indices ``ids``: labels written plain,
        lifted arcs moved back."""
        rels = [self.plain_labels[i] for i in ids]
        if self.lifts:
            heads = deprojectivise(heads, rels, [self.lifted_from[i] for i in ids])
        trees[b] = (heads, rels)
