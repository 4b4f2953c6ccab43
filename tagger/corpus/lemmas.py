"""Lemmas as edit rules, so that a tagger learns them as it learns tags (the way UDPipe's
lemmatizer does: Straka et al. 2016).

A rule says how a word's lemma is made from the word: what to cut off its start and its end and
what to put there instead, found around the longest stretch the two share (``gemacht`` →
``machen``: cut ``ge`` and ``t``, add ``en``), and how the lemma is cased: lower case (``l``:
``The`` → ``the``, ``Running`` → ``run``: the same rule as for ``running``), the word's own
case kept in the shared stretch (``k``: ``Paris``, ``iPhone``), all upper case (``u``), or
title case (``t``). A pair no rule of these fits is kept whole (``x``: the lemma itself, as
``rule`` gives it). Edits are found on the lower-cased word, so that a rule learnt from one
casing serves another.

:func:`rule` turns (word, lemma) into a rule, :func:`apply` a rule and a word into the lemma;
``apply(word, rule(word, lemma)) == lemma`` for every pair (tested on the treebanks). A rule cut
for another word (its cut strings are not at the word's ends) gives the word itself. A lemma
``_`` (not annotated) is the rule ``_``, which gives ``_``. Words are read in their composed
Unicode form, as the taggers look them up. Plain strings, no torch.
"""

from __future__ import annotations

from functools import lru_cache

from tagger.corpus.features import canonical

#: The column whose values a tagger learns as rules.
LEMMA = "lemma"
#: The rule of an unannotated lemma (``_``).
UNANNOTATED = "_"
#: Separates a rule's parts: a character no word of a corpus holds.
SEP = "\x1f"
#: Words longer than this are given their lemma whole (the search is quadratic in length).
LONGEST = 64


def _lower(word: str) -> str:
    """``word`` in lower case, where that keeps its length (else as it is: the case rules align
    the two character by character)."""
    lowered = word.lower()
    return lowered if len(lowered) == len(word) else word


def _shared(a: str, b: str) -> tuple[int, int, int]:
    """The longest stretch ``a`` and ``b`` share: (its start in ``a``, in ``b``, its length);
    of equal ones the first in ``a``."""
    best = (0, 0, 0)
    previous = [0] * (len(b) + 1)
    for i, x in enumerate(a, 1):
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            if x == y:
                current[j] = previous[j - 1] + 1
                if current[j] > best[2]:
                    best = (i - current[j], j - current[j], current[j])
        previous = current
    return best


@lru_cache(maxsize=1 << 16)
def rule(word: str, lemma: str) -> str:
    """The rule that makes ``lemma`` of ``word`` (see the module text)."""
    form = canonical(word)
    if lemma == UNANNOTATED and form != UNANNOTATED:
        return UNANNOTATED
    lemma = canonical(lemma)
    lower, lemma_lower = _lower(form), _lower(lemma)
    if len(form) > LONGEST or len(lemma) > LONGEST or SEP in form + lemma:
        return "x" + SEP + lemma
    i, j, n = _shared(lower, lemma_lower)
    edit = (lower[:i], lemma_lower[:j], lower[i + n :], lemma_lower[j + n :])
    for case in "lkut":
        candidate = SEP.join((case, *edit))
        if _made(form, candidate) == lemma:
            return candidate
    return "x" + SEP + lemma


def _made(form: str, rule: str) -> str | None:
    """The lemma ``rule`` makes of ``form`` (composed already); None where its cut strings are
    not at the word's ends."""
    if rule.startswith("x" + SEP):
        return rule[2:]
    case, cut_start, add_start, cut_end, add_end = rule.split(SEP)
    lower = _lower(form)
    if not (lower.startswith(cut_start) and lower.endswith(cut_end) and len(cut_start) + len(cut_end) <= len(lower)):
        return None
    stop = len(lower) - len(cut_end)
    lemma = add_start + (form if case == "k" else lower)[len(cut_start) : stop] + add_end
    if case == "u":
        return lemma.upper()
    if case == "t":
        return lemma[:1].upper() + lemma[1:]
    return lemma


def apply(word: str, rule: str) -> str:
    """The lemma ``rule`` makes of ``word``: ``word`` itself where the rule does not fit it."""
    if rule == UNANNOTATED:
        return UNANNOTATED
    form = canonical(word)
    made = _made(form, rule) if SEP in rule else None
    return form if made is None else made


def rules(words: list[str], lemmas: list[str]) -> list[str]:
    """The rule of each word's lemma."""
    return [rule(word, lemma) for word, lemma in zip(words, lemmas)]


def lemmas(words: list[str], rules_: list[str]) -> list[str]:
    """The lemma each rule makes of its word."""
    return [apply(word, r) for word, r in zip(words, rules_)]


def output_values(words: list[str], column: str, labels: list[str]) -> list[str]:
    """What a tagger's predicted ``labels`` of ``column`` write for ``words``: the labels
    themselves, but for :data:`LEMMA` the lemmas their rules make (one place for the torch
    model's output and the runtime's)."""
    return lemmas(words, labels) if column == LEMMA else labels
