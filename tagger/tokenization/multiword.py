"""Multiword tokens: the words of a token the model marks as multiword (French ``du`` ->
``de le``, German ``zum`` -> ``zu dem``, English ``don't`` -> ``do n't``).

Learned from the training data's multiword tokens:

- a lexicon: lower-cased surface form -> its most frequent words (lower-cased);
- suffix rules for forms not in the lexicon: for each training multiword token, the part of its
  surface after the longest prefix it shares with its first word (``n't`` of ``don't`` ->
  ``do n't``; ``m`` of ``zum`` -> ``zu dem``) maps to what that first word adds after the prefix
  and the following words; an unseen form takes the rule of the longest such suffix it ends
  with (``shouldn't`` -> ``should n't``), if that rule was seen at least :data:`MIN_RULE_COUNT`
  times and leaves a non-empty prefix.

Case follows the surface: where the words joined are the lower-cased surface, the surface itself
is cut at the same places (``McDonald's`` -> ``McDonald 's``); otherwise an upper-case surface
gives upper-case words, and a capitalised one a capitalised first word. A form with neither a
lexicon entry nor a rule stays one word (:attr:`Expander.unknown` counts them).
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

#: A suffix rule is used for unseen forms only if training showed it this many times.
MIN_RULE_COUNT = 2
#: Rules are learned for suffixes up to this long.
MAX_SUFFIX = 8


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def learn(pairs: Iterable[tuple[str, list[str]]]) -> tuple[list[str], list[str]]:
    """The lexicon and the suffix rules of training multiword tokens ``(surface, words)``, as the
    plain lists a model file keeps: lexicon entries ``surface<TAB>word word ...`` and rules
    ``suffix<TAB>added<TAB>word word ...<TAB>count``."""
    analyses: dict[str, Counter] = {}
    rules: dict[str, Counter] = {}
    for surface, words in pairs:
        if not words or any(not w or " " in w or "\t" in w for w in words) or "\t" in surface:
            continue
        low = surface.lower()
        lowered = tuple(w.lower() for w in words)
        analyses.setdefault(low, Counter())[lowered] += 1
        prefix = _common_prefix(low, lowered[0])
        if 0 < prefix < len(low) and len(low) - prefix <= MAX_SUFFIX:
            rules.setdefault(low[prefix:], Counter())[(lowered[0][prefix:], lowered[1:])] += 1
    lexicon = [f"{low}\t{' '.join(counts.most_common(1)[0][0])}" for low, counts in sorted(analyses.items())]
    rule_list = []
    for suffix, counts in sorted(rules.items()):
        (added, tail), count = counts.most_common(1)[0]
        rule_list.append(f"{suffix}\t{added}\t{' '.join(tail)}\t{sum(counts.values())}")
    return lexicon, rule_list


class Expander:
    """Expands multiword surface forms with a learned lexicon and rules (:func:`learn`)."""

    def __init__(self, lexicon: list[str], rules: list[str]):
        self.lexicon: dict[str, list[str]] = {}
        for entry in lexicon:
            surface, _, words = entry.partition("\t")
            self.lexicon[surface] = words.split(" ")
        self.rules: dict[str, tuple[str, list[str]]] = {}
        for entry in rules:
            suffix, added, tail, count = entry.split("\t")
            if int(count) >= MIN_RULE_COUNT and tail:
                self.rules[suffix] = (added, tail.split(" "))
        self.longest = max(map(len, self.rules), default=0)
        self.unknown = 0  #: forms marked multiword that neither the lexicon nor a rule could expand

    def expand(self, surface: str) -> list[str]:
        """The words of ``surface`` (itself alone when it cannot be expanded)."""
        low = surface.lower()
        words = self.lexicon.get(low)
        if words is None:
            words = self._by_rule(low)
            if words is None:
                self.unknown += 1
                return [surface]
        return _cased(surface, low, words)

    def _by_rule(self, low: str) -> list[str] | None:
        for size in range(min(self.longest, len(low) - 1), 0, -1):
            rule = self.rules.get(low[-size:])
            if rule is not None:
                added, tail = rule
                return [low[:-size] + added] + tail
        return None


def _cased(surface: str, low: str, words: list[str]) -> list[str]:
    """``words`` (lower-cased) in the case of ``surface`` (see the module text)."""
    if "".join(words) == low and len(low) == len(surface):
        out, at = [], 0
        for word in words:
            out.append(surface[at : at + len(word)])
            at += len(word)
        return out
    if surface == low:
        return list(words)
    if surface.isupper() and len(surface) > 1:
        return [w.upper() for w in words]
    if surface[:1].isupper():
        return [words[0][:1].upper() + words[0][1:]] + words[1:]
    return list(words)
