"""Scores of system-tokenised output, as the CoNLL 2018 shared task defines them (no torch).

Both files must hold the same text: the concatenation of their tokens' forms, white space
(Unicode ``Zs``) taken out. Over that text:

- a *token* is a multiword token's range line (``3-4 du``) or a word outside any range, a
  character span ``[start, end)``; a *sentence* is the span of its tokens;
- a *word* is a word line; a word inside a multiword token has the span of the whole token.

Tokens and Sentences are scored by identical spans. Words are aligned: outside multiword tokens
two words align when their spans are identical; around multiword tokens the smallest stretch
of text that holds whole multiword tokens on both sides (a *multiword region*) is found, and its
words are aligned by the longest common subsequence of their lower-cased forms. Every other
score is F1 over aligned words: a word counts when it is aligned and its column (UPOS, XPOS,
universal FEATS, all three, LEMMA) agrees; UAS when its head is the word aligned with the gold
head (or both are the root), LAS also its universal relation; CLAS, MLAS and BLEX are LAS over
content relations only, MLAS also requiring UPOS, universal FEATS and the function-word children
(relation, UPOS, FEATS, head) to agree, BLEX the lemma. Precision is over the system's words,
recall over the gold ones.

:func:`score_aligned` gives an :class:`AlignedMetric` (one :class:`F1Metric` per score).
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.evaluation.metrics import Metric, universal_label

#: The universal features of UD v2 (the shared task's UFeats compares only these).
UNIVERSAL_FEATURES = frozenset({
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy", "Number", "Case", "Definite",
    "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice", "Evident", "Polarity", "Person", "Polite"})
#: Relations of content words (CLAS, MLAS and BLEX count only words attached by these).
CONTENT_RELATIONS = frozenset({
    "nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl", "dislocated", "advcl", "advmod",
    "discourse", "nmod", "appos", "nummod", "acl", "amod", "conj", "fixed", "flat", "compound", "list", "parataxis",
    "orphan", "goeswith", "reparandum", "root", "dep"})
#: Relations of function words (their attachment is part of their head's MLAS).
FUNCTION_RELATIONS = frozenset({"aux", "cop", "mark", "det", "clf", "case", "cc"})

#: Score names per tag column (other columns are scored under their own name).
COLUMN_SCORES = {"upos": "UPOS", "xpos": "XPOS", "feats": "UFeats", "lemma": "Lemmas"}
#: The columns scored by default, in the shared task's order.
UD_COLUMNS = tuple(COLUMN_SCORES)
#: Every score, in the shared task's order (those of other tag columns go after the tag scores).
SCORE_ORDER = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS", "CLAS",
               "MLAS", "BLEX")

#: Head values: the root, a missing head, and a system head whose word is aligned to no gold word.
ROOT, MISSING, UNALIGNED = -1, -2, -3


class F1Metric(Metric):
    """One score: ``correct`` of ``gold`` gold items and ``predicted`` system items; ``aligned``
    the aligned words it was counted over (``None`` for Tokens, Sentences, Words). ``score`` is F1."""

    score_name = "F1"

    def __init__(self, gold: int = 0, predicted: int = 0, correct: int = 0, aligned: int | None = None) -> None:
        self.gold, self.predicted, self.correct, self.aligned = gold, predicted, correct, aligned

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        total = self.gold + self.predicted
        return 2 * self.correct / total if total else 0.0

    @property
    def aligned_accuracy(self) -> float | None:
        """``correct`` over the aligned words, 0..1 (``None`` where not counted over aligned words)."""
        return self.correct / self.aligned if self.aligned else None

    @property
    def score(self) -> float:
        return self.f1

    def __add__(self, other: "F1Metric") -> "F1Metric":
        if not isinstance(other, F1Metric):
            return NotImplemented
        aligned = None if self.aligned is None and other.aligned is None else (self.aligned or 0) + (other.aligned or 0)
        return F1Metric(self.gold + other.gold, self.predicted + other.predicted, self.correct + other.correct, aligned)

    def to_dict(self) -> dict:
        """The counts and the scores in percent as the official scorer computes them: ``100 * (c / n)``
        (``100.0 * c / n`` rounds otherwise at an exact half: 23/160 is 14.37 there), 0 where
        nothing was predicted or gold (not ``None``), the aligned accuracy ``None`` where not counted."""
        accuracy = self.aligned_accuracy
        return {"gold": self.gold, "predicted": self.predicted, "correct": self.correct, "aligned": self.aligned,
                "precision": 100 * self.precision, "recall": 100 * self.recall, "f1": 100 * self.f1,
                "aligned_accuracy": None if self.aligned is None else 100 * (accuracy or 0.0)}


class AlignedMetric(Metric):
    """The shared task's scores of one system file, by name (:data:`SCORE_ORDER`): always Tokens,
    Sentences and Words, then those of the tag columns and attachment that were scored.
    ``score`` is the F1 of :attr:`main`: LAS if attachment was scored, else the first tag score,
    else Words."""

    def __init__(self, scores: dict[str, F1Metric] | None = None) -> None:
        self.scores: dict[str, F1Metric] = dict(scores or {})

    @property
    def main(self) -> str:
        if "LAS" in self.scores:
            return "LAS"
        return next((name for name in self.scores if name not in ("Tokens", "Sentences", "Words")), "Words")

    @property
    def score_name(self) -> str:  # type: ignore[override]
        return f"{self.main} F1"

    @property
    def score(self) -> float:
        metric = self.scores.get(self.main)
        return metric.f1 if metric is not None else 0.0

    def __getitem__(self, name: str) -> F1Metric:
        return self.scores[name]

    def __add__(self, other: "AlignedMetric") -> "AlignedMetric":
        if not isinstance(other, AlignedMetric):
            return NotImplemented
        names = dict.fromkeys([*self.scores, *other.scores])
        return AlignedMetric({name: self.scores.get(name, F1Metric()) + other.scores.get(name, F1Metric())
                              for name in names})

    def to_dict(self) -> dict:
        """Each score's counts and percentages, by name, and ``main``: the score :attr:`score` is."""
        return {"main": self.main, **{name: metric.to_dict() for name, metric in self.scores.items()}}


@dataclass(slots=True)
class Word:
    """One word of a file: its span in the text (the whole token's, inside a multiword token),
    its lower-cased form (for the alignment of multiword regions), tag columns (FEATS reduced to
    the universal features), its head (index of the head word in the file, :data:`ROOT` or
    :data:`MISSING`) and universal relation."""

    start: int
    end: int
    multiword: bool
    form: str
    tags: dict[str, str]
    head: int
    relation: str
    children: list[int] = field(default_factory=list)  # function-word dependents, in order


@dataclass
class Document:
    """A file as the shared task sees it: its text without white space, its tokens and sentences
    as spans of it (and the line each starts on), its words."""

    name: str
    text: str = ""
    tokens: list[tuple[int, int]] = field(default_factory=list)
    token_lines: list[int] = field(default_factory=list)
    sentences: list[tuple[int, int]] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)


def _without_spaces(form: str) -> str:
    """``form`` with its white space (Unicode category ``Zs``) taken out."""
    if form.isascii():
        return form.replace(" ", "")
    return "".join(c for c in form if unicodedata.category(c) != "Zs")


def universal_features(feats: str) -> str:
    """FEATS reduced to the universal features, sorted: ``Foo=X|Number=Sing`` -> ``Number=Sing``;
    ``_`` -> ``""``."""
    return "|".join(sorted(f for f in feats.split("|") if f.split("=", 1)[0] in UNIVERSAL_FEATURES))


def _ranges(sentence: Sentence) -> tuple[dict[int, tuple[int, str, int]], list[int]]:
    """The multiword tokens of a CoNLL sentence, ``{first word: (last word, form, line)}``, and
    each word's line; from the lines the reader kept (none for other formats)."""
    raw = sentence.raw if isinstance(sentence.raw, dict) else {}
    lines = raw.get("lines") if raw.get("format") in ("conllu", "conllx") else None
    if not lines:
        return {}, [sentence.line] * len(sentence)
    ranges, word_lines = {}, []
    for offset, line in enumerate(lines):
        if line.startswith("#"):
            continue
        wid, _, rest = line.partition("\t")
        if "-" in wid:
            first, last = wid.split("-", 1)
            ranges[int(first)] = (int(last), rest.split("\t", 1)[0], sentence.line + offset)
        elif "." not in wid:
            word_lines.append(sentence.line + offset)
    return ranges, word_lines


def document(sentences: Iterable[Sentence], name: str, columns: Sequence[str] = UD_COLUMNS) -> Document:
    """The :class:`Document` of a file's sentences (empty ones skipped), with the tag ``columns``
    kept on each word; a one-line :class:`TaggerError` for a form that is only white space."""
    doc = Document(name)
    text: list[str] = []
    position = 0
    for sentence in sentences:
        n = len(sentence)
        if not n:
            continue
        ranges, word_lines = _ranges(sentence)
        values = {column: sentence.columns.get(column) or ["_"] * n for column in columns}
        heads = sentence.columns.get("head") or [-1] * n
        relations = sentence.columns.get("deprel") or ["_"] * n
        base, sentence_start, last = len(doc.words), position, 0
        for k, form in enumerate(sentence.words):
            wid = k + 1
            if wid in ranges:  # a multiword token starts here
                last, token_form, line = ranges[wid]
            elif wid > last:
                token_form, line = form, word_lines[k]
            if wid in ranges or wid > last:
                token = _without_spaces(token_form)
                if not token:
                    raise TaggerError("a token's form is only white space", name, line)
                doc.tokens.append((position, position + len(token)))
                doc.token_lines.append(line)
                text.append(token)
                position += len(token)
            multiword = wid <= last
            tags = {column: values[column][k] for column in columns}
            if "feats" in tags:
                tags["feats"] = universal_features(tags["feats"])
            head = heads[k]
            doc.words.append(Word(doc.tokens[-1][0], position, multiword, (form if multiword else token).lower(), tags,
                                  ROOT if head == 0 else MISSING if head < 0 else base + head - 1,
                                  universal_label(relations[k])))
        doc.sentences.append((sentence_start, position))
    doc.text = "".join(text)
    for index, word in enumerate(doc.words):
        if word.head >= 0 and word.relation in FUNCTION_RELATIONS:
            doc.words[word.head].children.append(index)
    return doc


def check_same_text(gold: Document, system: Document) -> None:
    """A one-line :class:`TaggerError` at the system token where the two texts (tokens without
    spaces) first differ, naming the gold token's line and showing the next 20 characters of each,
    or saying which file ends first."""
    if gold.text == system.text:
        return
    low, high = 0, min(len(gold.text), len(system.text))  # the longest common prefix, by halves
    while low < high:
        middle = (low + high + 1) // 2
        if gold.text[:middle] == system.text[:middle]:
            low = middle
        else:
            high = middle - 1
    at_gold, at_system = _token_at(gold, low), _token_at(system, low)
    gold_line = f"{gold.name}:{gold.token_lines[at_gold]}"
    if low == len(system.text):
        count = len(system.sentences)
        message = (f"the predicted file ends after {count} sentence{'s' * (count != 1)}, at character {low + 1} of the "
                   f"text, but the gold file goes on: {_shown(gold.text[low:low + 20])} at {gold_line}")
    elif low == len(gold.text):
        count = len(gold.sentences)
        message = (f"the predicted file goes on after the end of the gold file's text (character {low + 1}, after "
                   f"{count} sentence{'s' * (count != 1)} in {gold.name}): {_shown(system.text[low:low + 20])}")
    else:
        message = (f"the text (tokens without spaces) differs from the gold file's at character {low + 1}, in the "
                   f"token {_shown(_token(system, at_system))} ({_shown(_token(gold, at_gold))} at {gold_line}): "
                   f"{_shown(system.text[low:low + 20])} here, {_shown(gold.text[low:low + 20])} in the gold file")
        if unicodedata.normalize("NFC", system.text) == unicodedata.normalize("NFC", gold.text):
            message += (" (the same characters in another Unicode form: composed NFC, decomposed NFD; normalise "
                        "both files to NFC, as UD writes them)")
    raise TaggerError(message, system.name, system.token_lines[at_system] if system.tokens else None)


def _token_at(doc: Document, position: int) -> int:
    """The index of the token holding character ``position`` (the last token past the end)."""
    return max(bisect_right([start for start, _ in doc.tokens], position) - 1, 0)


def _shown(text: str) -> str:
    """``text`` in quotes as the file has it (a backslash once, as ``repr`` would not), or its
    ``repr`` where it holds what does not print (a tab, a control character)."""
    return f"'{text}'" if text.isprintable() else repr(text)


def _token(doc: Document, index: int) -> str:
    start, end = doc.tokens[index]
    return doc.text[start:end]


def align(gold: Sequence[Word], system: Sequence[Word]) -> list[tuple[int, int]]:
    """The aligned ``(gold index, system index)`` pairs, in order."""
    pairs: list[tuple[int, int]] = []
    g = s = 0
    while g < len(gold) and s < len(system):
        if gold[g].multiword or system[s].multiword:
            g0, s0, g, s = _multiword_region(gold, system, g, s)
            pairs.extend(_common_subsequence(gold, system, g0, g, s0, s))
        elif gold[g].start == system[s].start and gold[g].end == system[s].end:
            pairs.append((g, s))
            g, s = g + 1, s + 1
        elif gold[g].start <= system[s].start:
            g += 1
        else:
            s += 1
    return pairs


def _within(words: Sequence[Word], i: int, end: int) -> bool:
    """Whether word ``i`` still belongs to a multiword region ending at ``end``: a multiword
    token's word that starts before it, another word that ends by it."""
    if i >= len(words):
        return False
    word = words[i]
    return word.start < end if word.multiword else word.end <= end


def _multiword_region(gold: Sequence[Word], system: Sequence[Word], g: int, s: int) -> tuple[int, int, int, int]:
    """The words of the multiword region starting at gold word ``g``/system word ``s`` (one of
    them in a multiword token): ``(g0, s0, g1, s1)``, the gold words ``g0:g1`` and system
    words ``s0:s1``. It ends where neither side's next word is within it; each multiword token
    met extends it to the token's end. A plain word on the other side that starts before the
    multiword token starts is left out."""
    if gold[g].multiword:
        end = gold[g].end
        if not system[s].multiword and system[s].start < gold[g].start:
            s += 1
    else:
        end = system[s].end
        if not gold[g].multiword and gold[g].start < system[s].start:
            g += 1
    g0, s0 = g, s
    while _within(gold, g, end) or _within(system, s, end):
        if g < len(gold) and (s >= len(system) or gold[g].start <= system[s].start):
            word, g = gold[g], g + 1
        else:
            word, s = system[s], s + 1
        if word.multiword and word.end > end:
            end = word.end
    return g0, s0, g, s


def _common_subsequence(gold: Sequence[Word], system: Sequence[Word], g0: int, g1: int, s0: int,
                        s1: int) -> list[tuple[int, int]]:
    """Gold words ``g0:g1`` and system words ``s0:s1`` aligned by the longest common subsequence
    of their forms (equal forms are taken as they come, else the gold word is skipped where
    that keeps the longest)."""
    a = [w.form for w in gold[g0:g1]]
    b = [w.form for w in system[s0:s1]]
    n, m = len(a), len(b)
    if not n or not m:
        return []
    longest = [[0] * (m + 1) for _ in range(n + 1)]  # longest[i][j]: of a[i:] and b[j:]
    for i in range(n - 1, -1, -1):
        row, below = longest[i], longest[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((g0 + i, s0 + j))
            i, j = i + 1, j + 1
        elif longest[i][j] == longest[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def _spans(gold: list[tuple[int, int]], system: list[tuple[int, int]]) -> F1Metric:
    return F1Metric(len(gold), len(system), len(set(gold) & set(system)))


def score_documents(gold: Document, system: Document, columns: Sequence[str] = UD_COLUMNS,
                    parse: bool = True) -> AlignedMetric:
    """The scores of ``system`` against ``gold``: Tokens, Sentences, Words; each tag column of
    ``columns`` (and AllTags when UPOS, XPOS and FEATS all are); with ``parse`` UAS, LAS, CLAS,
    MLAS (when UPOS and FEATS are scored) and BLEX (when LEMMA is). The texts must be the same
    (:func:`check_same_text`)."""
    check_same_text(gold, system)
    pairs = align(gold.words, system.words)
    to_gold = {s: g for g, s in pairs}
    g_words, s_words = gold.words, system.words

    def aligned_score(same: Callable[[Word, Word], bool], counted: Callable[[Word], bool] | None = None) -> F1Metric:
        if counted is None:
            kept = pairs
            metric = F1Metric(len(g_words), len(s_words), 0, len(pairs))
        else:
            kept = [(g, s) for g, s in pairs if counted(g_words[g])]
            metric = F1Metric(sum(map(counted, g_words)), sum(map(counted, s_words)), 0, len(kept))
        metric.correct = sum(1 for g, s in kept if same(g_words[g], s_words[s]))
        return metric

    def head(word: Word) -> int:  # a system word's head, as the gold word it is aligned with
        return word.head if word.head == ROOT else to_gold.get(word.head, UNALIGNED)

    def attached(g: Word, s: Word) -> bool:
        return g.head == head(s) and g.relation == s.relation

    def lemma(g: Word, s: Word) -> bool:
        return g.tags["lemma"] == "_" or g.tags["lemma"] == s.tags["lemma"]

    def function_words(g: Word, s: Word) -> bool:
        def described(children: list[int], words: list[Word], where: Callable[[int], int]) -> list[tuple]:
            return [(where(c), words[c].relation, words[c].tags["upos"], words[c].tags["feats"]) for c in children]

        return (described(g.children, g_words, lambda c: c)
                == described(s.children, s_words, lambda c: to_gold.get(c, UNALIGNED)))

    scores = {"Tokens": _spans(gold.tokens, system.tokens), "Sentences": _spans(gold.sentences, system.sentences),
              "Words": F1Metric(len(g_words), len(s_words), len(pairs))}
    for column in columns:
        same = lemma if column == "lemma" else (lambda g, s, c=column: g.tags[c] == s.tags[c])
        scores[COLUMN_SCORES.get(column, column)] = aligned_score(same)
    if {"upos", "xpos", "feats"} <= set(columns):
        scores["AllTags"] = aligned_score(lambda g, s: all(g.tags[c] == s.tags[c] for c in ("upos", "xpos", "feats")))
    if parse:
        def content(word: Word) -> bool:
            return word.relation in CONTENT_RELATIONS

        scores["UAS"] = aligned_score(lambda g, s: g.head == head(s))
        scores["LAS"] = aligned_score(attached)
        scores["CLAS"] = aligned_score(attached, content)
        if "upos" in columns and "feats" in columns:
            scores["MLAS"] = aligned_score(
                lambda g, s: (attached(g, s) and g.tags["upos"] == s.tags["upos"] and g.tags["feats"] == s.tags["feats"]
                              and function_words(g, s)), content)
        if "lemma" in columns:
            scores["BLEX"] = aligned_score(lambda g, s: attached(g, s) and lemma(g, s), content)
    order = {name: i for i, name in enumerate(SCORE_ORDER)}
    return AlignedMetric(dict(sorted(scores.items(), key=lambda item: order.get(item[0], order["Lemmas"] + 0.5))))


def score_aligned(gold: Sequence[Sentence], system: Sequence[Sentence], columns: Sequence[str] = UD_COLUMNS,
                  parse: bool = True, gold_name: str = "gold", system_name: str = "predicted") -> AlignedMetric:
    """:func:`score_documents` of two files' sentences (``gold_name``/``system_name`` name them in errors)."""
    return score_documents(document(gold, gold_name, columns), document(system, system_name, columns), columns, parse)


__all__ = ["AlignedMetric", "F1Metric", "Document", "Word", "align", "check_same_text", "document",
           "score_aligned", "score_documents", "universal_features", "UD_COLUMNS", "SCORE_ORDER"]
