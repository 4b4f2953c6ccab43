"""Sentences numbered for the parser (:class:`ParserBatch`), and for training the static oracle
replayed on each gold tree (projectivised first when it is not projective and the parser lifts:
:func:`lifted_tree`): the token slots of every configuration it passes through."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import torch

from tagger.corpus.records import Sentence
from tagger.models.transition_parser.ids import LABEL_OFFSET, N_SLOTS, NULL_ID, ROOT_ID, SENTINEL, UNK_ID
from tagger.transitions.arc_standard import State, apply, oracle
from tagger.transitions.features import token_slots
from tagger.transitions.pseudo_projective import projectivise


def tag_column_values(sentence: Sentence, column: str) -> list[str] | None:
    """The tags the parser reads: one column (``upos``), or several joined with ``+``
    (``upos+feats`` gives ``NOUN+Number=Sing``: one tag per combination, as UDPipe 1 also reads
    FEATS). ``None`` when the sentence has none of them."""
    if "+" not in column:
        return sentence.columns.get(column)
    parts = [sentence.columns.get(name) for name in column.split("+")]
    if all(part is None for part in parts):
        return None
    blank = ["_"] * len(sentence)
    return ["+".join(values) for values in zip(*(part or blank for part in parts))]


@dataclass
class ParserBatch:
    """Sentences numbered for the parser. ``G`` global positions: 0 = NULL sentinel, 1 = scratch,
    then per sentence its ROOT and words (sentence ``b`` starts at ``bases[b]``)."""

    words: torch.Tensor  # [G] word id per global position
    tags: torch.Tensor  # [G] tag id per global position
    lengths: torch.Tensor  # [B] words per sentence
    bases: torch.Tensor  # [B] global position of each sentence's ROOT
    labels: torch.Tensor | None = None  # [G] gold label-embedding id (training)
    positions: torch.Tensor | None = None  # [B, T, 18] global positions of the token slots, per oracle step
    actions: torch.Tensor | None = None  # [B, T] oracle actions, -100 after the sentence's 2n steps
    kept: list[int] | None = None  # indices (into the collated list) of the sentences in the batch
    encoder: Any = None  # with an encoder: what it reads (:class:`.encoder.EncoderBatch`), else None

    def to(self, device: torch.device) -> "ParserBatch":
        move = lambda t: None if t is None else t.to(device, non_blocking=True)  # noqa: E731
        return ParserBatch(move(self.words), move(self.tags), move(self.lengths), move(self.bases),
                           move(self.labels), move(self.positions), move(self.actions), self.kept,
                           move(self.encoder))

    @property
    def n_tokens(self) -> int:
        return int(self.lengths.sum())

    @property
    def valid(self) -> torch.Tensor:
        """[B, T] true for real transitions (sentence b has exactly 2·n_b)."""
        steps = self.actions.shape[1] if self.actions is not None else int(2 * self.lengths.max())
        return torch.arange(steps, device=self.lengths.device) < 2 * self.lengths.unsqueeze(1)


def lifted_tree(heads: Sequence[int], rels: Sequence[str]) -> tuple[list[int], list[str]] | None:
    """The projectivised tree of a gold tree arc-standard cannot build as it is (its lifted arcs
    labelled ``d↑h``: :func:`tagger.transitions.pseudo_projective.projectivise`), or ``None``
    when it cannot build that either (several root words, missing heads, a cycle)."""
    try:
        new_heads, new_rels = projectivise(heads, rels)
        oracle(new_heads, [0] * len(new_heads))
    except ValueError:
        return None
    return new_heads, new_rels


def collate(sentences: Sequence[Sentence], with_gold: bool, word_id: Callable[[str], int],
            tag_ids: Mapping[str, int], tag_column: str, label_index: Mapping[str, int],
            lift: bool = False) -> ParserBatch:
    """Number ``sentences`` (words by ``word_id``, tags of ``tag_column`` by ``tag_ids``); with
    gold, also replay the static oracle on each tree (labels numbered by ``label_index``).

    With gold, sentences whose tree arc-standard cannot build (non-projective, a cycle, several
    roots, missing heads) or that use a label unseen in training are left out of the batch
    (``batch.kept`` lists the ones in it). With ``lift``, a non-projective tree is projectivised
    instead (:func:`lifted_tree`; a lifted label missing from ``label_index``, one too rare to be
    learnt, counts as its plain label): only trees with a cycle, several roots or missing heads are
    left out.
    """
    if with_gold:
        kept, oracles = _oracles(sentences, label_index, lift)
    else:
        kept, oracles = list(range(len(sentences))), []
    words, tags, lengths, bases = _number([sentences[k] for k in kept], word_id, tag_ids, tag_column)
    batch = ParserBatch(torch.tensor(words), torch.tensor(tags), torch.tensor(lengths, dtype=torch.long),
                        torch.tensor(bases, dtype=torch.long), kept=kept)
    if with_gold:
        _replay(batch, oracles, lengths, bases)
    return batch


def _oracles(sentences: Sequence[Sentence], label_index: Mapping[str, int], lift: bool
             ) -> tuple[list[int], list[tuple]]:
    """The sentences arc-standard can build (lifted, with ``lift``) with known labels, and
    ``(actions, labels)`` of each."""
    kept, oracles = [], []
    for k, sentence in enumerate(sentences):
        heads = sentence.columns.get("head")
        rels = sentence.columns.get("deprel") or ["_"] * len(sentence)
        if heads is None:
            continue
        try:
            labels = [label_index[r] for r in rels]
        except KeyError:
            continue
        try:
            oracles.append((oracle(heads, labels), labels))
        except ValueError:
            tree = lifted_tree(heads, rels) if lift else None
            if tree is None:
                continue
            lifted_heads, lifted_rels = tree  # decoration only: oracle() raises for nothing else now
            labels = [label_index.get(name, label) for name, label in zip(lifted_rels, labels)]
            oracles.append((oracle(lifted_heads, labels), labels))
        kept.append(k)
    return kept, oracles


def _number(sentences: Sequence[Sentence], word_id: Callable[[str], int], tag_ids: Mapping[str, int],
            column: str) -> tuple[list[int], list[int], list[int], list[int]]:
    """Word and tag ids per global position, and each sentence's length and base position."""
    words, tags, lengths, bases = [NULL_ID, NULL_ID], [NULL_ID, NULL_ID], [], []
    for sentence in sentences:
        n = len(sentence)
        bases.append(len(words))
        lengths.append(n)
        words.append(ROOT_ID)
        words.extend(word_id(w) for w in sentence.words)
        tags.append(ROOT_ID)
        tag_values = tag_column_values(sentence, column)
        if tag_values is None:
            tags.extend([UNK_ID] * n)
        else:
            tags.extend(tag_ids.get(t, UNK_ID) for t in tag_values)
    return words, tags, lengths, bases


def _replay(batch: ParserBatch, oracles: list[tuple], lengths: list[int], bases: list[int]) -> None:
    """Fill the gold labels, the oracle actions and the token-slot positions of every step."""
    gold_labels = [NULL_ID, NULL_ID]
    flat: list[int] = []
    row_base: list[int] = []
    all_actions: list[int] = []
    for j, (actions, labels) in enumerate(oracles):
        gold_labels.append(NULL_ID)
        gold_labels.extend(label + LABEL_OFFSET for label in labels)
        state = State(lengths[j])
        for action in actions:
            flat += token_slots(state)
            apply(state, action)
        row_base += [bases[j]] * len(actions)
        all_actions += actions
    steps = 2 * max(lengths, default=0)
    raw = torch.tensor(flat, dtype=torch.long).view(-1, N_SLOTS)
    raw = torch.where(raw >= 0, raw + torch.tensor(row_base, dtype=torch.long).unsqueeze(1), SENTINEL)
    batch.labels = torch.tensor(gold_labels)
    batch.actions = torch.full((len(oracles), steps), -100, dtype=torch.long)
    valid = batch.valid
    batch.actions[valid] = torch.tensor(all_actions, dtype=torch.long)
    batch.positions = torch.zeros(len(oracles), steps, N_SLOTS, dtype=torch.long)
    batch.positions[valid] = raw
