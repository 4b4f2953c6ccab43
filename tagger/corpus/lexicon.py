"""A tag dictionary for decoding (torch-free): a word seen often enough in training is given only
the labels it was seen with there.

A BiLSTM tagger that has seen a word once or twice often gives it a label it never had, and on a
small corpus the word's most frequent label is right far more often (docs/tagger.md, "The tag
dictionary"). MorphoDiTa, UDPipe 1's tagger, restricts known words to their dictionary's tags;
the C&C supertagger restricts words seen at least 20 times to the categories they were seen with
(Clark & Curran 2007). A tagger strong enough to give a frequent word a label it was never seen
with, rightly, loses by it: so the count from which words are restricted is chosen on the dev
data after training (:func:`choose`), and can be none.

In a model file, per column, one string per row of the word vocabulary (:func:`build`): the word's
training count and the ids of the labels it was seen with, space-separated, or ``""`` (any
label). :class:`TagLexicon` reads it at a least count and corrects a best label that is not
allowed to the best allowed one (:meth:`TagLexicon.fix`), the same for the torch model and the
torch-free runtime.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from tagger.corpus.vocab import Vocab

#: A tag dictionary's key in a model's vocabularies: this, then its labels' key (``lexicon:tags``).
LEXICON = "lexicon:"
#: ... and the least count from which it restricts words, chosen on dev (``["0"]``: off).
LEXICON_MIN = "lexicon_min:"
#: The least counts :func:`choose` tries (0: none restricted).
CHOICES = (0, 1, 2, 3, 5, 10, 20, 50)


def build(pairs: Counter, words: Vocab, labels: Vocab) -> list[str]:
    """The tag dictionary of one column, one string per row of ``words``, from ``pairs`` (the
    training counts of (word vocabulary form, label) pairs): the word's count, then the ids in
    ``labels`` of its labels; ``""`` for PAD, UNK, a word not in ``pairs``, and a word with a
    label that ``labels`` lacks (a rare one, which is not output)."""
    seen: dict[str, list[str]] = {}
    counts: Counter = Counter()
    for (word, label), n in pairs.items():
        seen.setdefault(word, []).append(label)
        counts[word] += n
    out = []
    for word in words.itos:
        names = seen.get(word)
        if names is None or any(name not in labels.stoi for name in names):
            out.append("")
            continue
        out.append(" ".join(map(str, [counts[word], *sorted(labels.stoi[name] for name in names)])))
    return out


class TagLexicon:
    """A column's tag dictionary (:func:`build`'s strings) over ``size`` labels, restricting the
    words seen at least ``least`` times: ``set_of_word`` [V] the label set of each word row (0: any
    label), ``allowed`` [K, size] the sets."""

    def __init__(self, entries: Sequence[str], size: int, least: int = 1):
        index: dict[str, int] = {"": 0}
        if least <= 1:  # every word with a set (its count is at least 1): no count read (a model's first line)
            sets = [index.setdefault(entry.partition(" ")[2], len(index)) for entry in entries]
        else:
            sets = []
            for entry in entries:
                count, _, ids = entry.partition(" ")
                sets.append(index.setdefault(ids, len(index)) if ids and int(count) >= least else 0)
        self.least = least
        self.set_of_word = np.array(sets, dtype=np.intp)
        self.allowed = np.zeros((len(index), size), dtype=bool)
        self.allowed[0] = True
        for ids, k in index.items():
            if k:
                numbers = [int(i) for i in ids.split()]
                if max(numbers) >= size:
                    raise ValueError("the tag dictionary names a label the model does not have")
                self.allowed[k, numbers] = True

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TagLexicon) and self.least == other.least
                and np.array_equal(self.set_of_word, other.set_of_word) and np.array_equal(self.allowed, other.allowed))

    def __len__(self) -> int:
        """The words it restricts."""
        return int((self.set_of_word > 0).sum())

    def sets(self, words: np.ndarray) -> np.ndarray:
        """The label set of each word row of ``words`` [N] (0, any label, past the vocabulary): [N];
        ``allowed[sets(words)]`` [N, size] are the labels each may have."""
        sets = np.zeros(len(words), dtype=np.intp)
        inside = words < len(self.set_of_word)
        sets[inside] = self.set_of_word[words[inside]]
        return sets

    def fix(self, scores: np.ndarray, best: np.ndarray, words: np.ndarray) -> np.ndarray:
        """``best`` [N] (the argmax of ``scores`` [N, size]) with each label its word (``words``
        [N], rows of the word vocabulary; a row past it: any label) may not have replaced by the
        best-scoring one it may; ``best`` itself, changed in place."""
        sets = self.sets(words)
        wrong = np.flatnonzero(~self.allowed[sets, best])
        if len(wrong):
            picked = np.where(self.allowed[sets[wrong]], scores[wrong], -np.inf)
            best[wrong] = picked.argmax(-1)
        return best


def choose(entries: Sequence[str], scores: np.ndarray, words: np.ndarray, gold: np.ndarray) -> tuple[int, dict[int, int]]:
    """The least count (of :data:`CHOICES`) from which the tag dictionary ``entries`` best corrects
    a tagger's labels of dev tokens, from their ``scores`` [N, size], word rows [N] and gold label
    ids [N] (-1: a label the model lacks); ties go to the larger count (fewer words restricted),
    and 0 (none) is chosen unless restricting gains. Also, per choice, the tokens right."""
    right = {}
    for least in CHOICES:
        best = scores.argmax(-1)
        if least:
            TagLexicon(entries, scores.shape[1], least).fix(scores, best, words)
        right[least] = int((best == gold).sum())
    top = max(right.values())
    chosen = 0 if right[0] == top else max(least for least, n in right.items() if n == top)
    return chosen, right
