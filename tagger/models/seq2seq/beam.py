"""Beam search for the seq2seq parser, batched over sentences and beams.

All ``B × K`` hypotheses advance together, one decoder step at a time. At each step every
sentence keeps the ``K`` best continuations that are not ``<eos>`` (out of its ``2K`` best
candidates, which always hold ``K`` such); a candidate ``<eos>`` ranked among the ``K`` best
ends that hypothesis, which joins the sentence's finished ones. A sentence is done when it has
``K`` finished hypotheses, when its best finished one scores at least as well as its best live
one (scores are sums of log-probabilities, so live ones only get worse), or when it reaches its
symbol budget (then, with nothing finished, its best live hypothesis is taken as it stands).
The answer is the finished hypothesis with the highest total log-probability. ``K = 1`` is
greedy decoding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

EOS_ID, BOS_ID = 1, 2


@dataclass
class Encoded:
    """The encoder's output for B sentences (or their B × K beams)."""

    states: torch.Tensor  # [B, S, H] encoder states h_i
    projected: torch.Tensor  # [B, S, A] W1 h_i
    mask: torch.Tensor  # [B, S] True at words
    state: tuple[torch.Tensor, torch.Tensor]  # the decoder's initial (h, c), [layers, B, H] each

    def repeated(self, k: int) -> "Encoded":
        """Each sentence's rows repeated ``k`` times (its beams side by side)."""
        h, c = self.state
        return Encoded(self.states.repeat_interleave(k, 0), self.projected.repeat_interleave(k, 0),
                       self.mask.repeat_interleave(k, 0), (h.repeat_interleave(k, 1), c.repeat_interleave(k, 1)))


@dataclass
class Grammar:
    """What each output symbol does to a linearised tree, for constrained decoding: ``kinds``
    [V] is :data:`LEAF`, :data:`OPEN`, :data:`CLOSE` or :data:`OTHER` (``<eos>``, padding);
    ``closing`` [V] is the closing bracket of each opening one (0 for the others)."""

    kinds: torch.Tensor
    closing: torch.Tensor


class Prefixes:
    """N prefixes of linearised trees under a :class:`Grammar`: how many XX each has emitted
    (``leaves``) of its ``words``, its open brackets (``depth``, and their symbols, ``stack``),
    and its symbol ``budget`` (``<eos>`` included)."""

    def __init__(self, grammar: Grammar, words: torch.Tensor, budget: torch.Tensor):
        self.grammar, self.words, self.budget = grammar, words, budget
        self.leaves, self.depth = torch.zeros_like(words), torch.zeros_like(words)
        self.stack = torch.zeros(len(words), int(budget.max()) + 1, dtype=torch.long, device=words.device)

    def allowed(self, previous: torch.Tensor, step: int) -> torch.Tensor:
        """[N, V]: the symbols that keep each prefix (``previous``: its last symbol; ``step``
        symbols long) on its way to a well-formed tree with one XX per word: an XX inside the
        tree while words are left; an opening bracket first, or inside the tree while words are
        left and the budget can still close it; the closing bracket of the innermost open one,
        unless that was just opened or is the tree itself with words left; ``<eos>`` once the
        tree is closed over every word."""
        kinds, leaves, depth, words = self.grammar.kinds[None, :], self.leaves, self.depth, self.words
        first = step == 0
        left = (leaves < words)[:, None]
        inside = (depth > 0)[:, None]
        fits = (self.budget - step >= words - leaves + depth + 3)[:, None]  # an open, its close, the rest, <eos>
        may_close = ((depth > 1) | ((depth == 1) & (leaves >= words))) & (self.grammar.kinds[previous] != OPEN)
        top = self.stack.gather(1, (depth - 1).clamp(min=0)[:, None]).squeeze(1)
        closes = torch.zeros(len(depth), kinds.shape[1], dtype=torch.bool, device=depth.device)
        closes.scatter_(1, self.grammar.closing[top][:, None], may_close[:, None])
        ends = (depth == 0) & (leaves >= words) & (not first)
        eos = torch.zeros_like(closes)
        eos[:, EOS_ID] = ends
        return ((kinds == LEAF) & left & inside) | ((kinds == OPEN) & left & fits & (inside | first)) | closes | eos

    def advance(self, flat: torch.Tensor, symbols: torch.Tensor) -> None:
        """Each prefix becomes prefix ``flat[n]`` followed by ``symbols[n]``."""
        self.leaves, self.depth, self.stack = self.leaves[flat], self.depth[flat], self.stack[flat]
        self.words, self.budget = self.words[flat], self.budget[flat]
        kinds = self.grammar.kinds[symbols]
        opening = kinds == OPEN
        rows = opening.nonzero().squeeze(1)
        self.stack[rows, self.depth[rows]] = symbols[rows]
        self.leaves = self.leaves + (kinds == LEAF).long()
        self.depth = self.depth + opening.long() - (kinds == CLOSE).long()


#: Symbol kinds of :class:`Grammar`.
OTHER, LEAF, OPEN, CLOSE = 0, 1, 2, 3


def search(model: Any, encoded: Encoded, width: int, limits: list[int], with_attention: bool = False,
           grammar: Grammar | None = None, words: torch.Tensor | None = None) -> list[tuple[list[int], torch.Tensor | None]]:
    """The best symbol ids (without ``<eos>``) of each sentence, with its attention rows
    [len + 1, S] when ``with_attention``; ``limits[b]``: the most symbols sentence ``b`` may
    have. ``model.step(symbols, feed, state, encoded)`` advances the decoder one step. With a
    ``grammar`` (and ``words`` [B], the sentences' lengths), only symbols that keep a prefix on
    its way to a well-formed tree are considered (:meth:`Grammar.allowed`)."""
    size, k = encoded.states.shape[0], width
    device = encoded.states.device
    beams = encoded.repeated(k)
    prefixes = None
    if grammar is not None:
        prefixes = Prefixes(grammar, words.to(device).repeat_interleave(k),
                            torch.tensor(limits, device=device).repeat_interleave(k))
    scores = torch.full((size, k), float("-inf"), device=device)
    scores[:, 0] = 0.0  # one live hypothesis per sentence to start with
    symbols = torch.full((size * k,), BOS_ID, dtype=torch.long, device=device)
    feed = beams.states.new_zeros(size * k, beams.states.shape[-1])
    state = beams.state
    origins: list[torch.Tensor] = []  # [B, K] per step: the slot each new hypothesis extends
    emitted: list[torch.Tensor] = []  # [B, K] per step: the symbol it added
    attentions: list[torch.Tensor] = []  # [B, K, S] per step, indexed by the slot that produced it
    finished: list[list[tuple[float, int, int]]] = [[] for _ in range(size)]  # (score, step, slot)
    done = [False] * size
    rows = torch.arange(size, device=device)[:, None] * k
    step = 0
    while not all(done):
        step_scores, feed, state, attention = model.step(symbols, feed, state, beams)
        if with_attention:
            attentions.append(attention.view(size, k, -1))
        vocab = step_scores.shape[-1]
        log_probs = torch.log_softmax(step_scores, -1)
        if prefixes is not None:  # masked after normalising: a dead beam's row is all -inf, never NaN
            log_probs = log_probs.masked_fill(~prefixes.allowed(symbols, step), float("-inf"))
        total = scores[:, :, None] + log_probs.view(size, k, vocab)
        values, index = total.view(size, -1).topk(min(2 * k, k * vocab), -1)
        origin, symbol = index // vocab, index % vocab
        is_eos = symbol == EOS_ID
        for b, rank in (is_eos[:, :k]).nonzero().tolist():
            value = values[b, rank].item()
            if not done[b] and value > float("-inf"):
                finished[b].append((value, step, origin[b, rank].item()))
        live = ~is_eos
        keep = live & (live.cumsum(1) <= k)
        scores = values[keep].view(size, k)
        origin, symbol = origin[keep].view(size, k), symbol[keep].view(size, k)
        origins.append(origin)
        emitted.append(symbol)
        step += 1
        best_live = scores[:, 0].tolist()
        for b in range(size):
            if done[b]:
                continue
            best_finished = max((f[0] for f in finished[b]), default=float("-inf"))
            if len(finished[b]) >= k or best_finished >= best_live[b] or step >= limits[b]:
                done[b] = True
                if not finished[b]:  # out of budget: the best live hypothesis as it stands
                    finished[b].append((best_live[b], step, 0))
        flat = (rows + origin).view(-1)
        state = (state[0][:, flat], state[1][:, flat])
        feed, symbols = feed[flat], symbol.view(-1)
        if prefixes is not None:
            prefixes.advance(flat, symbols)
    return _backtrack(finished, origins, emitted, attentions if with_attention else None)


def _backtrack(finished: list[list[tuple[float, int, int]]], origins: list[torch.Tensor], emitted: list[torch.Tensor],
               attentions: list[torch.Tensor] | None) -> list[tuple[list[int], torch.Tensor | None]]:
    """Each sentence's best finished hypothesis, read back through the per-step pointers. A
    hypothesis (step ``t``, slot ``j``) is the prefix held in slot ``j`` after ``t`` steps (its
    ``<eos>``, if any, came at step ``t`` from that slot)."""
    origin_lists = [o.tolist() for o in origins]
    symbol_lists = [s.tolist() for s in emitted]
    out = []
    for b, candidates in enumerate(finished):
        _, steps, slot = max(candidates, key=lambda f: f[0])
        ids: list[int] = []
        slots: list[int] = []  # the slot that produced each symbol (for its attention row)
        j = slot
        for t in range(steps - 1, -1, -1):
            ids.append(symbol_lists[t][b][j])
            j = origin_lists[t][b][j]
            slots.append(j)
        ids.reverse()
        slots.reverse()
        matrix = None
        if attentions is not None:
            rows = [attentions[t][b, s] for t, s in enumerate(slots)]
            if steps < len(attentions):  # the row that produced <eos>
                rows.append(attentions[steps][b, slot])
            matrix = torch.stack(rows) if rows else None
        out.append((ids, matrix))
    return out
