"""Metric objects shared by ``tagger evaluate`` and the trainer's model selection.

Each metric starts empty, takes one sentence at a time with ``update(...)``, combines with
``+`` (a new object; the operands are left unchanged), and orders by :attr:`Metric.score`, the
single number in 0..1 used to pick the best checkpoint (``if dev_metric > best: ...``).
``to_dict()`` gives plain JSON-able counts and percentages (0..100).

Conventions (``BENCHMARKS.md``): gold tokenisation, so a predicted word is compared with the gold
word at the same position; UAS/LAS are given over all words (the CoNLL 2018 shared task
convention: dependency labels compared without their ``:subtype``) and with punctuation
excluded (:func:`punct_flags`: UD ``PUNCT`` where the UPOS column holds UD's tags, else the PTB
tags ``` `` '' , . : ``` where XPOS holds PTB tags, else, as the CoNLL-X shared task's
``eval.pl``, a word of Unicode punctuation characters only). Attachment also counts the
non-projective arcs (:class:`NonprojectiveCounts`).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Collection, Mapping, Sequence

from tagger.corpus.features import canonical, unmarked
from tagger.transitions.pseudo_projective import nonprojective_arcs

if TYPE_CHECKING:
    from tagger.corpus.records import Sentence

#: PTB punctuation tags excluded from the "no punctuation" attachment scores (Chen & Manning).
PTB_PUNCT_TAGS = frozenset({"``", "''", ",", ".", ":"})

#: UD's 17 UPOS tags (and ``CONJ``, UD v1's name for ``CCONJ``): a UPOS column of these alone is
#: UD's, whose ``PUNCT`` says what punctuation is.
UD_UPOS_TAGS = frozenset({"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
                          "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X", "CONJ"})

#: The Penn Treebank's POS tags, with the bracket and empty-element tags and those OntoNotes and
#: UD English add (``HYPH NFP ADD AFX GW XX``): an XPOS column of these alone is PTB's, whose
#: :data:`PTB_PUNCT_TAGS` say what punctuation is.
PTB_TAGS = frozenset({
    "CC", "CD", "DT", "EX", "FW", "IN", "JJ", "JJR", "JJS", "LS", "MD", "NN", "NNS", "NNP", "NNPS", "PDT", "POS",
    "PRP", "PRP$", "RB", "RBR", "RBS", "RP", "SYM", "TO", "UH", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "WDT",
    "WP", "WP$", "WRB", "#", "$", "-LRB-", "-RRB-", "-LCB-", "-RCB-", "-LSB-", "-RSB-", "(", ")", "-NONE-",
    "HYPH", "NFP", "ADD", "AFX", "GW", "XX",
}) | PTB_PUNCT_TAGS

#: How a missing value (CoNLL ``_``) appears in string columns.
MISSING = "_"


def _missing(value: str | None) -> bool:
    return value in (None, "", MISSING)


def is_punct_form(form: str) -> bool:
    """True for a word of Unicode punctuation characters only (categories ``P*``), as the CoNLL-X
    shared task's ``eval.pl`` excludes punctuation (``/^\\p{Punctuation}+$/``): ``.``, ``--``,
    ``«``, ``。``, also ``%``, ``&``, ``#``, ``/`` (``Po``), but not the symbols ``$``, ``+``,
    ``<``, ``~`` (``S*``) nor a word with a letter or digit.

    >>> is_punct_form("."), is_punct_form("--"), is_punct_form("«"), is_punct_form("$"), is_punct_form("a.")
    (True, True, True, False, False)
    """
    return bool(form) and all(unicodedata.category(char).startswith("P") for char in form)


def is_punct(upos: str | None, xpos: str | None, form: str | None = None) -> bool:
    """True for punctuation, one word on its own: by its UPOS where that is one of UD's tags
    (``PUNCT``), else by its XPOS where that is a PTB tag (:data:`PTB_PUNCT_TAGS`), else (given
    ``form``) by its form (:func:`is_punct_form`). :func:`punct_flags` decides for a whole
    sentence, which is what the scores use.

    >>> is_punct("PUNCT", "."), is_punct("_", ","), is_punct("_", "NN"), is_punct("NOUN", ",")
    (True, True, False, False)
    >>> is_punct("Punc", "."), is_punct("Punc", "HYPH", "-"), is_punct("Punc", "Punc", "-")
    (True, False, True)
    """
    if upos in UD_UPOS_TAGS:
        return upos == "PUNCT"
    if xpos in PTB_TAGS:
        return xpos in PTB_PUNCT_TAGS
    return form is not None and is_punct_form(form)


def punct_rule(upos: Sequence[str], xpos: Sequence[str]) -> str:
    """Which column decides punctuation in a sentence with these UPOS and XPOS values: ``upos``
    where every UPOS given is one of UD's tags (:data:`UD_UPOS_TAGS`), else ``xpos`` where
    every XPOS given is a PTB tag (:data:`PTB_TAGS`), else ``form`` (``_`` values aside; a
    column of ``_`` alone gives nothing). CoNLL-X's CPOSTAG is read as UPOS: a coarse tag set of
    its own (``N V Punc``) or PTB's tags there (Penn2Malt) is not UD's."""
    given = [u for u in upos if not _missing(u)]
    if given and all(u in UD_UPOS_TAGS for u in given):
        return "upos"
    given = [x for x in xpos if not _missing(x)]
    if given and all(x in PTB_TAGS for x in given):
        return "xpos"
    return "form"


def punct_flags(sentence: Sentence) -> list[bool]:
    """Which words of ``sentence`` are punctuation, by one rule for the whole sentence
    (:func:`punct_rule`): where its UPOS are UD's, UPOS ``PUNCT`` (a word without UPOS: a PTB
    punctuation XPOS); else, where its XPOS are PTB's, the PTB punctuation tags ``` `` '' , . : ```;
    else, as the CoNLL-X shared task's ``eval.pl``, a form of Unicode punctuation only
    (:func:`is_punct_form`). The one rule of the "no punctuation" attachment scores, in
    ``tagger evaluate`` and in a parser's dev score alike (both decide it from the gold sentence)."""
    n = len(sentence)
    upos = sentence.columns.get("upos") or [MISSING] * n
    xpos = sentence.columns.get("xpos") or [MISSING] * n
    rule = punct_rule(upos, xpos)
    if rule == "upos":
        return [u == "PUNCT" if not _missing(u) else x in PTB_PUNCT_TAGS for u, x in zip(upos, xpos)]
    if rule == "xpos":
        return [x in PTB_PUNCT_TAGS for x in xpos]
    return [is_punct_form(w) for w in sentence.words]


def universal_label(deprel: str) -> str:
    """The universal part of a dependency label: ``nmod:poss`` -> ``nmod`` (CoNLL 2018)."""
    return deprel.split(":", 1)[0]


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def _percent(numerator: int, denominator: int) -> float | None:
    """``100 * numerator / denominator``, or ``None`` (JSON ``null``) when nothing was counted."""
    return 100.0 * numerator / denominator if denominator else None


def _check_lengths(**sequences: Sequence) -> None:
    lengths = {name: len(values) for name, values in sequences.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"sequences of different lengths: {lengths}")


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 (0..1) of one class, with the counts they come from."""

    correct: int
    predicted: int
    gold: int

    @property
    def precision(self) -> float:
        return _ratio(self.correct, self.predicted)

    @property
    def recall(self) -> float:
        return _ratio(self.correct, self.gold)

    @property
    def f1(self) -> float:
        return _ratio(2 * self.correct, self.predicted + self.gold)

    def to_dict(self) -> dict:
        return {
            "gold": self.gold,
            "predicted": self.predicted,
            "correct": self.correct,
            "precision": 100.0 * self.precision,
            "recall": 100.0 * self.recall,
            "f1": 100.0 * self.f1,
        }


def _per_class(correct: Counter, predicted: Counter, gold: Counter) -> dict[str, PRF]:
    """P/R/F1 for every class seen in gold or predictions, most frequent in gold first."""
    classes = set(gold) | set(predicted)
    ordered = sorted(classes, key=lambda c: (-gold[c], -predicted[c], c))
    return {c: PRF(correct[c], predicted[c], gold[c]) for c in ordered}


class Metric:
    """Base class: ordering by :attr:`score` (equality stays identity, so metrics hash normally)."""

    #: What :attr:`score` is, for the lines and JSON that show it.
    score_name = "score"

    @property
    def score(self) -> float:
        raise NotImplementedError

    def parts(self) -> dict[str, float]:
        """The scores :attr:`score` is made of, by name (0..1), where it is made of several (the
        columns of a :class:`ColumnsMetric`); empty for most."""
        return {}

    def _comparable(self, other: object) -> bool:
        return isinstance(other, Metric) and type(other) is type(self)

    def __lt__(self, other: object) -> bool:
        if not self._comparable(other):
            return NotImplemented
        return self.score < other.score  # type: ignore[attr-defined]

    def __le__(self, other: object) -> bool:
        if not self._comparable(other):
            return NotImplemented
        return self.score <= other.score  # type: ignore[attr-defined]

    def __gt__(self, other: object) -> bool:
        if not self._comparable(other):
            return NotImplemented
        return self.score > other.score  # type: ignore[attr-defined]

    def __ge__(self, other: object) -> bool:
        if not self._comparable(other):
            return NotImplemented
        return self.score >= other.score  # type: ignore[attr-defined]

    def __radd__(self, other: object):
        """Let ``sum(metrics)`` work: ``0 + metric`` is a copy of the metric."""
        if other == 0:
            return self + type(self)()
        return NotImplemented

    def to_dict(self) -> dict:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(score={self.score:.4f})"


def _seen_as(word: str, train_words: Collection[str]) -> bool:
    """Whether a word not in ``train_words`` as written is there as the taggers read it."""
    if word.isascii():
        return False
    form = canonical(word)
    return form in train_words or unmarked(form) in train_words


class TagMetric(Metric):
    """Tagging accuracy: per token, per unseen token, per sentence; per-tag P/R/F1; confusions.

    ``score`` is token accuracy. Unseen-word accuracy is counted only for updates given
    ``train_words`` (a word is unseen when its form is not in that set, as the taggers look it
    up: composed, NFC, and without invisible marks where it was not seen with them).
    """

    score_name = "accuracy"

    def __init__(self) -> None:
        self.tokens = 0
        self.correct = 0
        self.sentences = 0
        self.sentences_correct = 0
        self.unseen_tokens = 0
        self.unseen_correct = 0
        self.tracks_unseen = False
        self.tag_correct: Counter = Counter()
        self.tag_predicted: Counter = Counter()
        self.tag_gold: Counter = Counter()
        #: ``(gold, predicted) -> count`` over wrongly tagged tokens.
        self.confusions: Counter = Counter()

    def update(
        self,
        words: Sequence[str],
        gold: Sequence[str],
        pred: Sequence[str],
        train_words: Collection[str] | None = None,
    ) -> None:
        """Count one sentence: its words, gold tags and predicted tags (same lengths)."""
        _check_lengths(words=words, gold=gold, pred=pred)
        all_right = True
        for word, g, p in zip(words, gold, pred):
            right = g == p
            self.tokens += 1
            self.correct += right
            self.tag_gold[g] += 1
            self.tag_predicted[p] += 1
            if right:
                self.tag_correct[g] += 1
            else:
                all_right = False
                self.confusions[(g, p)] += 1
            if train_words is not None and word not in train_words and not _seen_as(word, train_words):
                self.unseen_tokens += 1
                self.unseen_correct += right
        if train_words is not None:
            self.tracks_unseen = True
        self.sentences += 1
        self.sentences_correct += all_right

    def __add__(self, other: "TagMetric") -> "TagMetric":
        if not isinstance(other, TagMetric):
            return NotImplemented
        total = TagMetric()
        for name in ("tokens", "correct", "sentences", "sentences_correct", "unseen_tokens", "unseen_correct"):
            setattr(total, name, getattr(self, name) + getattr(other, name))
        total.tracks_unseen = self.tracks_unseen or other.tracks_unseen
        for name in ("tag_correct", "tag_predicted", "tag_gold", "confusions"):
            setattr(total, name, getattr(self, name) + getattr(other, name))
        return total

    @property
    def accuracy(self) -> float:
        """Token accuracy, 0..1."""
        return _ratio(self.correct, self.tokens)

    @property
    def unseen_accuracy(self) -> float | None:
        """Accuracy on words not seen in training, 0..1; ``None`` if not tracked or none seen."""
        if not self.tracks_unseen or not self.unseen_tokens:
            return None
        return self.unseen_correct / self.unseen_tokens

    @property
    def sentence_accuracy(self) -> float:
        """Share of sentences with every token right, 0..1."""
        return _ratio(self.sentences_correct, self.sentences)

    @property
    def score(self) -> float:
        return self.accuracy

    def per_tag(self) -> dict[str, PRF]:
        """P/R/F1 per tag, the most frequent gold tags first."""
        return _per_class(self.tag_correct, self.tag_predicted, self.tag_gold)

    def most_confused(self, n: int = 10) -> list[tuple[str, str, int]]:
        """The ``n`` most frequent ``(gold, predicted, count)`` errors (ties alphabetical)."""
        ranked = sorted(self.confusions.items(), key=lambda item: (-item[1], item[0]))
        return [(g, p, count) for (g, p), count in ranked[:n]]

    def to_dict(self, top: int | None = None) -> dict:
        """Counts and percentages; ``top`` limits the per-tag list (all tags by default)."""
        per_tag = list(self.per_tag().items())
        if top is not None:
            per_tag = per_tag[:top]
        return {
            "tokens": self.tokens,
            "correct": self.correct,
            "accuracy": _percent(self.correct, self.tokens),
            "unseen": {
                "tokens": self.unseen_tokens,
                "correct": self.unseen_correct,
                "accuracy": _percent(self.unseen_correct, self.unseen_tokens),
            }
            if self.tracks_unseen
            else None,
            "sentences": self.sentences,
            "sentences_correct": self.sentences_correct,
            "sentence_accuracy": _percent(self.sentences_correct, self.sentences),
            "per_tag": {tag: prf.to_dict() for tag, prf in per_tag},
            "confusions": [
                {"gold": g, "pred": p, "count": count} for g, p, count in self.most_confused(10)
            ],
        }


class ColumnsMetric(Metric):
    """Tagging accuracy of several columns at once (a tagger of ``upos,xpos,feats``): a
    :class:`TagMetric` per column, and one of all of them together ("all tags": a word counts as
    right when every column is, as the CoNLL 2018 scorer's AllTags; its tags are the columns'
    values joined by spaces). ``score`` is the mean of the columns' token accuracies.
    """

    score_name = "mean accuracy"

    def __init__(self, columns: Sequence[str] = ()) -> None:
        self.columns: dict[str, TagMetric] = {name: TagMetric() for name in columns}
        self.all_tags = TagMetric()

    def update(
        self,
        words: Sequence[str],
        gold: Mapping[str, Sequence[str]],
        pred: Mapping[str, Sequence[str]],
        train_words: Collection[str] | None = None,
    ) -> None:
        """Count one sentence: its words, and per column its gold and predicted tags."""
        for name, metric in self.columns.items():
            metric.update(words, gold[name], pred[name], train_words)
        joined = [[" ".join(tags) for tags in zip(*(side[name] for name in self.columns))] for side in (gold, pred)]
        self.all_tags.update(words, joined[0], joined[1], train_words)

    def __add__(self, other: "ColumnsMetric") -> "ColumnsMetric":
        if not isinstance(other, ColumnsMetric):
            return NotImplemented
        total = ColumnsMetric()
        for name in dict.fromkeys([*self.columns, *other.columns]):
            total.columns[name] = self.columns.get(name, TagMetric()) + other.columns.get(name, TagMetric())
        total.all_tags = self.all_tags + other.all_tags
        return total

    @property
    def accuracy(self) -> float:
        """The mean of the columns' token accuracies, 0..1."""
        return _ratio(sum(m.accuracy for m in self.columns.values()), len(self.columns))

    @property
    def score(self) -> float:
        return self.accuracy

    def parts(self) -> dict[str, float]:
        return {name: metric.accuracy for name, metric in self.columns.items()}

    def to_dict(self) -> dict:
        """The mean accuracy (percent), each column's :meth:`TagMetric.to_dict`, and the all-tags
        counts (without a per-tag list: its tags are combinations)."""
        all_tags = self.all_tags.to_dict()
        del all_tags["per_tag"]
        return {
            "accuracy": 100.0 * self.accuracy if self.columns and self.all_tags.tokens else None,
            "columns": {name: metric.to_dict() for name, metric in self.columns.items()},
            "all_tags": all_tags,
        }


class MultiTagMetric(Metric):
    """Multi-tagging (C&C/EasyCCG β-thresholded supertags): is the gold tag in the kept set?

    ``score`` is that accuracy; :attr:`tags_per_word` is the mean size of the kept sets;
    ``beta`` the threshold the sets were kept by (None if not known).
    """

    score_name = "multi-tag accuracy"

    def __init__(self, beta: float | None = None) -> None:
        self.beta = beta
        self.tokens = 0
        self.correct = 0
        self.tags = 0
        self.sentences = 0
        self.sentences_correct = 0

    def update(self, gold: Sequence[str], tag_sets: Sequence[Collection[str]]) -> None:
        """Count one sentence: gold tags and, per word, the set of tags kept for it."""
        _check_lengths(gold=gold, tag_sets=tag_sets)
        all_right = True
        for g, kept in zip(gold, tag_sets):
            right = g in kept
            self.tokens += 1
            self.correct += right
            self.tags += len(kept)
            all_right = all_right and right
        self.sentences += 1
        self.sentences_correct += all_right

    def __add__(self, other: "MultiTagMetric") -> "MultiTagMetric":
        if not isinstance(other, MultiTagMetric):
            return NotImplemented
        if self.beta != other.beta:
            raise ValueError(f"multi-tagging at beta {self.beta} and {other.beta} do not add up")
        total = MultiTagMetric(self.beta)
        for name in ("tokens", "correct", "tags", "sentences", "sentences_correct"):
            setattr(total, name, getattr(self, name) + getattr(other, name))
        return total

    @property
    def accuracy(self) -> float:
        return _ratio(self.correct, self.tokens)

    @property
    def tags_per_word(self) -> float:
        return _ratio(self.tags, self.tokens)

    @property
    def sentence_accuracy(self) -> float:
        return _ratio(self.sentences_correct, self.sentences)

    @property
    def score(self) -> float:
        return self.accuracy

    def to_dict(self) -> dict:
        return {
            "beta": self.beta,
            "tokens": self.tokens,
            "correct": self.correct,
            "accuracy": _percent(self.correct, self.tokens),
            "tags": self.tags,
            "tags_per_word": self.tags_per_word if self.tokens else None,
            "sentences": self.sentences,
            "sentences_correct": self.sentences_correct,
            "sentence_accuracy": _percent(self.sentences_correct, self.sentences),
        }


@dataclass
class AttachmentCounts:
    """Word counts behind UAS, LAS and label accuracy for one set of words."""

    words: int = 0
    heads: int = 0  # right head
    labels: int = 0  # right universal label
    both: int = 0  # right head and right universal label

    def count(self, head_right: bool, label_right: bool) -> None:
        """Count one word."""
        self.words += 1
        self.heads += head_right
        self.labels += label_right
        self.both += head_right and label_right

    def __add__(self, other: "AttachmentCounts") -> "AttachmentCounts":
        return AttachmentCounts(
            self.words + other.words,
            self.heads + other.heads,
            self.labels + other.labels,
            self.both + other.both,
        )

    @property
    def uas(self) -> float:
        return _ratio(self.heads, self.words)

    @property
    def las(self) -> float:
        return _ratio(self.both, self.words)

    @property
    def label_accuracy(self) -> float:
        return _ratio(self.labels, self.words)

    def to_dict(self) -> dict:
        return {
            "words": self.words,
            "uas_correct": self.heads,
            "las_correct": self.both,
            "label_correct": self.labels,
            "uas": _percent(self.heads, self.words),
            "las": _percent(self.both, self.words),
            "label_accuracy": _percent(self.labels, self.words),
        }


@dataclass
class NonprojectiveCounts:
    """Non-projective arcs (:func:`tagger.transitions.pseudo_projective.nonprojective_arcs`: some
    word between the two ends is not below the head), all words: recall over the gold ones,
    precision over the predicted ones (a predicted non-projective arc is correct when the word's
    gold head is the same, whether or not that gold arc is non-projective)."""

    gold: int = 0  # non-projective gold arcs
    gold_heads: int = 0  # of those, the word's head predicted right
    gold_both: int = 0  # ... and its universal label
    predicted: int = 0  # non-projective predicted arcs
    predicted_heads: int = 0  # of those, the head right

    def count(self, gold_nonprojective: bool, predicted_nonprojective: bool, head_right: bool, label_right: bool) -> None:
        """Count one word."""
        if gold_nonprojective:
            self.gold += 1
            self.gold_heads += head_right
            self.gold_both += head_right and label_right
        if predicted_nonprojective:
            self.predicted += 1
            self.predicted_heads += head_right

    def __add__(self, other: "NonprojectiveCounts") -> "NonprojectiveCounts":
        return NonprojectiveCounts(self.gold + other.gold, self.gold_heads + other.gold_heads,
                                   self.gold_both + other.gold_both, self.predicted + other.predicted,
                                   self.predicted_heads + other.predicted_heads)

    @property
    def recall(self) -> float:
        """Gold non-projective arcs whose head was found, 0..1."""
        return _ratio(self.gold_heads, self.gold)

    @property
    def labelled_recall(self) -> float:
        """Gold non-projective arcs whose head and universal label were found, 0..1."""
        return _ratio(self.gold_both, self.gold)

    @property
    def precision(self) -> float:
        """Predicted non-projective arcs with the right head, 0..1."""
        return _ratio(self.predicted_heads, self.predicted)

    def to_dict(self) -> dict:
        return {
            "gold": self.gold,
            "predicted": self.predicted,
            "recall_correct": self.gold_heads,
            "labelled_recall_correct": self.gold_both,
            "precision_correct": self.predicted_heads,
            "recall": _percent(self.gold_heads, self.gold),
            "labelled_recall": _percent(self.gold_both, self.gold),
            "precision": _percent(self.predicted_heads, self.predicted),
        }


class AttachmentMetric(Metric):
    """Unlabelled/labelled attachment scores, over all words and without punctuation.

    Labels are compared by their universal part (before ``:``), as the CoNLL 2018 scorer does;
    with gold tokenisation its UAS/LAS equal :attr:`uas`/:attr:`las` here (all words).
    ``score`` is LAS without punctuation (the papers' convention). Per-label scores count a
    word as correct for its label when both head and label are right (so precision = correct /
    predicted with that label, recall = correct / gold with that label). :attr:`nonprojective`
    counts the non-projective arcs, gold and predicted, over all words.
    """

    score_name = "LAS (no punct)"

    def __init__(self) -> None:
        self.all = AttachmentCounts()
        self.no_punct = AttachmentCounts()
        self.sentences = 0
        self.label_correct: Counter = Counter()
        self.label_predicted: Counter = Counter()
        self.label_gold: Counter = Counter()
        self.nonprojective = NonprojectiveCounts()

    def update(
        self,
        gold_heads: Sequence[int],
        gold_rels: Sequence[str],
        pred_heads: Sequence[int],
        pred_rels: Sequence[str],
        punct: Sequence[bool] | None = None,
    ) -> None:
        """Count one sentence. Heads are 1-based word indices, 0 for the root.

        ``punct`` marks punctuation words (see :func:`is_punct`); ``None`` means none.
        """
        if punct is None:
            punct = [False] * len(gold_heads)
        _check_lengths(
            gold_heads=gold_heads, gold_rels=gold_rels, pred_heads=pred_heads, pred_rels=pred_rels, punct=punct
        )
        gold_np, pred_np = nonprojective_arcs(gold_heads), nonprojective_arcs(pred_heads)
        for gh, gr, ph, pr, is_p, g_np, p_np in zip(gold_heads, gold_rels, pred_heads, pred_rels, punct, gold_np, pred_np):
            gold_label, pred_label = universal_label(gr), universal_label(pr)
            head_right = gh == ph
            label_right = gold_label == pred_label
            self.all.count(head_right, label_right)
            if g_np or p_np:
                self.nonprojective.count(g_np, p_np, head_right, label_right)
            if not is_p:
                self.no_punct.count(head_right, label_right)
            self.label_gold[gold_label] += 1
            self.label_predicted[pred_label] += 1
            if head_right and label_right:
                self.label_correct[gold_label] += 1
        self.sentences += 1

    def __add__(self, other: "AttachmentMetric") -> "AttachmentMetric":
        if not isinstance(other, AttachmentMetric):
            return NotImplemented
        total = AttachmentMetric()
        total.all = self.all + other.all
        total.no_punct = self.no_punct + other.no_punct
        total.sentences = self.sentences + other.sentences
        total.label_correct = self.label_correct + other.label_correct
        total.label_predicted = self.label_predicted + other.label_predicted
        total.label_gold = self.label_gold + other.label_gold
        total.nonprojective = self.nonprojective + other.nonprojective
        return total

    @property
    def uas(self) -> float:
        """UAS over all words (CoNLL 2018), 0..1."""
        return self.all.uas

    @property
    def las(self) -> float:
        """LAS over all words (CoNLL 2018), 0..1."""
        return self.all.las

    @property
    def label_accuracy(self) -> float:
        return self.all.label_accuracy

    @property
    def uas_no_punct(self) -> float:
        return self.no_punct.uas

    @property
    def las_no_punct(self) -> float:
        return self.no_punct.las

    @property
    def score(self) -> float:
        return self.no_punct.las

    def per_label(self) -> dict[str, PRF]:
        """P/R/F1 per universal label, the most frequent gold labels first."""
        return _per_class(self.label_correct, self.label_predicted, self.label_gold)

    def to_dict(self, top: int | None = None) -> dict:
        """Counts and percentages; ``top`` limits the per-label list (all labels by default)."""
        per_label = list(self.per_label().items())
        if top is not None:
            per_label = per_label[:top]
        return {
            "sentences": self.sentences,
            "all_words": self.all.to_dict(),
            "no_punct": self.no_punct.to_dict(),
            "per_label": {label: prf.to_dict() for label, prf in per_label},
            "nonprojective": self.nonprojective.to_dict(),
        }


class BoundaryMetric(Metric):
    """A tokeniser's boundaries against gold, on the same text: F1 of token spans, of sentence
    spans and of multiword-token spans (:mod:`tagger.tokenization.segment` reads both label
    sequences). ``score`` is the mean of the token and sentence F1, and of the multiword F1
    where gold has multiword tokens (French, German: their words depend on it). ``spaced_tokens``:
    tokens may hold a space (a tokenizer trained so; :func:`~tagger.tokenization.segment.segment`)."""

    score_name = "boundary F1"
    PARTS = ("tokens", "sentences", "multiword")

    def __init__(self, spaced_tokens: bool = False) -> None:
        self.counts = {name: PRF(0, 0, 0) for name in self.PARTS}
        self.spaced_tokens = spaced_tokens

    def update(self, norm: str, gold: Sequence[int], pred: Sequence[int]) -> None:
        """Count one normalised text (:func:`tagger.tokenization.labels.normalise`) and its gold
        and predicted labels, one per character."""
        from tagger.tokenization.segment import segment

        _check_lengths(text=norm, gold=gold, pred=pred)
        sides = []
        for labels in (gold, pred):
            spans = segment(norm, labels, spaced_tokens=self.spaced_tokens)
            sides.append({
                "tokens": {(a, b) for span in spans for a, b, _ in span.tokens},
                "sentences": {(span.start, span.stop) for span in spans},
                "multiword": {(a, b) for span in spans for a, b, multi in span.tokens if multi},
            })
        for name in self.PARTS:
            g, p = sides[0][name], sides[1][name]
            old = self.counts[name]
            self.counts[name] = PRF(old.correct + len(g & p), old.predicted + len(p), old.gold + len(g))

    def __add__(self, other: "BoundaryMetric") -> "BoundaryMetric":
        out = BoundaryMetric(self.spaced_tokens)
        out.counts = {name: PRF(*(getattr(self.counts[name], f) + getattr(other.counts[name], f)
                                  for f in ("correct", "predicted", "gold"))) for name in self.PARTS}
        return out

    @property
    def score(self) -> float:
        parts = ("tokens", "sentences", "multiword") if self.counts["multiword"].gold else ("tokens", "sentences")
        return sum(self.counts[name].f1 for name in parts) / len(parts)

    def parts(self) -> dict[str, float]:
        return {name: prf.f1 for name, prf in self.counts.items()}

    def to_dict(self) -> dict:
        return {"score": 100.0 * self.score, **{name: prf.to_dict() for name, prf in self.counts.items()}}
