"""Batched greedy decoding: all sentences of a batch advance together, one transition per step
(a sentence of n words takes exactly 2n), with the illegal actions of each masked (the rules of
:mod:`tagger.transitions`, the UD root-label rule included), so each result is a single-rooted
projective tree; a model that learnt lifted labels (pseudo-projective parsing) then moves those
arcs back (:func:`tagger.transitions.pseudo_projective.deprojectivise`).

The hidden layer's input at a step comes either from the Chen & Manning precomputed rows
(:class:`RowInputs`, one ``embedding_bag`` sum; with an encoder :class:`TokenInputs`, rows made
per batch from the token vectors) or from the embeddings (:class:`EmbeddingInputs`); both give
the same trees (the rows only change the speed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import torch
from torch.nn import functional as F

from tagger.models.transition_parser.batch import ParserBatch
from tagger.models.transition_parser.encoder import label_rows
from tagger.models.transition_parser.ids import FIRST_CHILD, LABEL_OFFSET, N_CHILD, N_SLOTS, NULL_ID, SCRATCH, SENTINEL
from tagger.modules.cells import step
from tagger.transitions.arc_standard import State, apply, first_legal, legal_code, root_label
from tagger.transitions.features import token_slots
from tagger.transitions.pseudo_projective import deprojectivise

if TYPE_CHECKING:
    from tagger.models.transition_parser.model import TransitionParser


class RowInputs:
    """``W x + b`` of a step as one sum of 48 precomputed rows. Per global position: the first
    row of its word and tag, and (updated as arcs are made) of its label; slot s adds s."""

    def __init__(self, model: TransitionParser, batch: ParserBatch):
        rows = model.row_table()
        ext = rows.batch_words(model, batch.words)
        device = ext.device
        self.table = rows.table
        self.l0 = rows.l0
        self.word_tag_rows = torch.stack([rows.w0 + ext * N_SLOTS, rows.t0 + batch.tags * N_SLOTS], 1)
        self.label_rows = torch.full_like(ext, rows.l0 + NULL_ID * N_SLOTS)
        self.slot = torch.arange(N_SLOTS, device=device).unsqueeze(1)
        self.child_slot = torch.arange(FIRST_CHILD, N_SLOTS, device=device)

    def pre(self, pos: torch.Tensor) -> torch.Tensor:
        """[B, G·H] for the global positions ``pos`` [B, 18] of the token slots."""
        index = torch.cat([(self.word_tag_rows[pos] + self.slot).view(len(pos), 2 * N_SLOTS),
                           self.label_rows[pos[:, FIRST_CHILD:]] + self.child_slot], 1)
        return F.embedding_bag(index, self.table, mode="sum")

    def attach(self, dependent: torch.Tensor, label: torch.Tensor) -> None:
        """Positions ``dependent`` got arcs labelled ``label`` (transition label indices)."""
        self.label_rows[dependent] = self.l0 + (label + LABEL_OFFSET) * N_SLOTS


class TokenInputs:
    """With an encoder: ``W x + b`` of a step as sums of rows made for this batch: per global
    position g and each of the first k = ``encoder_slots`` token slots s, the row ``W_s · v_g``
    of its encoder vector (row k g + s). With ``features`` ``beside`` they are added to
    :class:`RowInputs`' sum; with ``replace`` the label rows ``W_c · e_l`` (per label and child
    slot c, updated as arcs are made) follow them in one table, and the bias is folded into slot
    s0's rows (s0 is never empty)."""

    def __init__(self, model: TransitionParser, batch: ParserBatch):
        self.k = k = model.config.encoder_slots
        self.base = RowInputs(model, batch) if model.config.reads_static else None
        vectors = model.token_vectors(batch)  # [G, 2H]
        labels = None if self.base is not None else label_rows(model.label_emb.weight, model.hidden.weight)
        self.l0 = len(vectors) * k
        width = model.slot_weight.shape[-1]
        self.table = vectors.new_empty(self.l0 + (0 if labels is None else len(labels)), width)
        torch.mm(vectors, model.slot_weight.view(len(model.slot_weight), -1), out=self.table[: self.l0].view(len(vectors), -1))
        self.slot = torch.arange(k, device=vectors.device)
        if labels is None:
            return
        self.table[: self.l0].view(-1, k, width)[:, 0] += model.hidden.bias
        self.table[self.l0 :] = labels
        self.label_rows = torch.full_like(batch.words, self.l0 + NULL_ID * N_CHILD)
        self.child_slot = torch.arange(N_CHILD, device=vectors.device)

    def pre(self, pos: torch.Tensor) -> torch.Tensor:
        """[B, G·H] for the global positions ``pos`` [B, 18] of the token slots."""
        index = pos[:, : self.k] * self.k + self.slot
        if self.base is not None:
            return self.base.pre(pos) + F.embedding_bag(index, self.table, mode="sum")
        index = torch.cat([index, self.label_rows[pos[:, FIRST_CHILD:]] + self.child_slot], 1)
        return F.embedding_bag(index, self.table, mode="sum")

    def attach(self, dependent: torch.Tensor, label: torch.Tensor) -> None:
        """Positions ``dependent`` got arcs labelled ``label`` (transition label indices)."""
        if self.base is not None:
            self.base.attach(dependent, label)
        else:
            self.label_rows[dependent] = self.l0 + (label + LABEL_OFFSET) * N_CHILD


class EmbeddingInputs:
    """``W x + b`` of a step from the embeddings of the 48 features (with an encoder: from the
    token vectors and the label embeddings)."""

    def __init__(self, model: TransitionParser, batch: ParserBatch):
        self.model = model
        self.words = model.word_rows(batch.words) if model.word_emb is not None else None  # [G, word_dim]
        self.tags = batch.tags
        self.labels = torch.full_like(batch.words, NULL_ID)
        self.vectors = model.token_vectors(batch) if model.encoder is not None else None

    def pre(self, pos: torch.Tensor) -> torch.Tensor:
        pre = self.model.hidden(self.model.embed(pos, self.words, self.tags, self.labels))
        if self.vectors is not None:
            pre = pre + self.model.plain_encoded(pos, self.vectors)
        return pre

    def attach(self, dependent: torch.Tensor, label: torch.Tensor) -> None:
        self.labels[dependent] = label + LABEL_OFFSET


@torch.inference_mode()
def decode(model: TransitionParser, batch: ParserBatch) -> list[tuple[list[int], list[str]]]:
    """Greedy parse of every sentence of ``batch``: ``(heads, deprels)`` per sentence, in order."""
    return decode_together([model], [batch])


@torch.inference_mode()
def decode_together(models: Sequence[TransitionParser], batches: Sequence[ParserBatch]) -> list[tuple[list[int], list[str]]]:
    """Greedy parse of the same sentences by several parsers at once (an ensemble,
    :class:`.ensemble.ParserEnsemble`): ``batches[k]`` is the sentences as ``models[k]`` numbers
    them. At each step every model scores the same configuration and the transition with the
    highest sum of the models' log-probabilities is taken (one model: its highest score). The
    models must share their transition labels (:func:`.ensemble.check_members`)."""
    model, batch = models[0], batches[0]
    lengths = batch.lengths.tolist()
    n_sent = len(lengths)
    if n_sent == 0:
        return []
    order = sorted(range(n_sent), key=lambda b: -lengths[b])
    states = [State(lengths[b]) for b in order]
    index = torch.tensor(order, device=batch.words.device)
    members = [_Member(m, b, b.bases[index].unsqueeze(1), n_sent) for m, b in zip(models, batches)]
    _greedy(members, states, [2 * lengths[b] for b in order], model.n_labels, root_label(model.label_names))
    results: list = [None] * n_sent
    names, lifted_from = model.plain_labels, model.lifted_from
    for b, state in zip(order, states):
        heads, labels = state.tree()
        rels = [names[k] for k in labels]
        if model.lifts:
            heads = deprojectivise(heads, rels, [lifted_from[k] for k in labels])
        results[b] = (heads, rels)
    return results


def _inputs(model: TransitionParser, batch: ParserBatch) -> RowInputs | TokenInputs | EmbeddingInputs:
    """How the steps get ``W x + b``: precomputed rows unless ``precompute`` is 0."""
    if model.config.precompute <= 0:
        return EmbeddingInputs(model, batch)
    return TokenInputs(model, batch) if model.encoder is not None else RowInputs(model, batch)


class _Member:
    """One model's part of a greedy parse: its inputs, its sentences' ROOT positions ``base``
    [B, 1], and its recurrent state (None for an FFN)."""

    def __init__(self, model: TransitionParser, batch: ParserBatch, base: torch.Tensor, n_sent: int):
        self.model, self.base = model, base
        self.inputs = _inputs(model, batch)
        self.arch, self.w_h, self.forget_bias = model.config.arch, model.recurrent, model.config.forget_bias
        self.h = self.c = None
        if self.arch != "ffn":
            self.h = torch.zeros(n_sent, model.config.hidden, device=base.device)
            self.c = torch.zeros_like(self.h) if self.arch == "lstm" else None
        self.w_out = model.output.weight.t()
        self.pos = base  # the last step's slot positions [active, 18] (set by each :meth:`scores`)

    def scores(self, raw: torch.Tensor, codes: torch.Tensor) -> torch.Tensor:
        """[active, A] action scores (illegal ones -inf) of the configurations whose token slots
        hold the sentence positions ``raw`` [active, 18] (-1: empty); ``codes`` [active] their
        legal-action codes."""
        active = len(raw)
        self.pos = pos = torch.where(raw >= 0, raw + self.base[:active], SENTINEL)
        pre = self.inputs.pre(pos)
        if self.arch == "ffn":
            hid = F.relu(pre)
        else:
            hid, self.c = step(self.arch, pre, self.h[:active], self.c[:active] if self.c is not None else None,
                               self.w_h, self.forget_bias)
            self.h = hid
        return hid @ self.w_out + self.model.mask_bias[codes]

    def attach(self, best: torch.Tensor) -> None:
        """The actions ``best`` [active] were taken: the label feature of each new dependent
        (s1 for LEFT-ARC, odd; s0 for RIGHT-ARC)."""
        pos = self.pos
        dependent = torch.where(best > 0, torch.where(best % 2 == 1, pos[:, 1], pos[:, 0]), SCRATCH)
        self.inputs.attach(dependent, (best - 1).clamp(min=0) // 2)


def _greedy(members: list[_Member], states: list[State], steps: list[int], n_labels: int, root: int) -> None:
    """Run ``states`` (longest first; ``steps`` transitions each) to the end."""
    device = members[0].base.device
    n_sent = len(states)
    active = n_sent
    for t in range(steps[0]):
        while steps[active - 1] <= t:
            active -= 1
        live = states[:active] if active < n_sent else states
        flat: list[int] = []
        codes: list[int] = []
        for state in live:
            flat += token_slots(state)
            codes.append(legal_code(state))
        raw = torch.tensor(flat, dtype=torch.long, device=device).view(active, N_SLOTS)
        code = torch.tensor(codes, device=device)
        if len(members) == 1:
            best = members[0].scores(raw, code).argmax(1)
        else:
            best = sum(F.log_softmax(member.scores(raw, code), 1) for member in members).argmax(1)
        for member in members:
            member.attach(best)
        for state, action in zip(live, best.tolist()):
            try:
                apply(state, action)
            except ValueError:  # only reachable with NaN scores: take any legal action
                apply(state, first_legal(state, n_labels, root))
