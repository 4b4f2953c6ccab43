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

Models trained from session 23 on keep two more lists, and use them:

- prefix rules, for contractions whose last word ends the surface (Portuguese ``d|essas`` ->
  ``de essas``, ``n|ela`` -> ``em ela``): the part before it maps to the words before it;
- the training tokens (lower-cased) with how often each was one word and how often a multiword
  token (:data:`TOKENS`). An unseen form then takes, of every suffix and prefix rule it matches
  (seen once is enough), the one whose words are most often training words, then the one that
  matches more of it, then the one seen more often: ``dessas`` -> ``de essas`` rather than
  ``desse as`` by the rule of ``das``. And a form seen at least :data:`DECIDE_MIN_COUNT` times is
  a multiword token where training had it so at least :data:`DECIDE_SHARE` of the time (``Pelo``
  -> ``Por o`` where the model, at a capital, did not mark it), one word where it was so as
  often (:meth:`Expander.is_multiword`). On Portuguese Bosque test (996 training sentences) the
  unseen multiword forms expanded right go from 79 to 100 of 106 (docs/tokenizer.md).
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping, Sequence

from tagger.tokenization.labels import END, INSIDE, LABELS, MWT_END, MWT_SENTENCE_END, SENTENCE_END, is_space

#: A suffix rule is used for unseen forms only if training showed it this many times.
MIN_RULE_COUNT = 2
#: Rules are learned for suffixes (and prefixes) up to this long.
MAX_SUFFIX = 8
#: The tokenizer vocabularies: the lexicon, the suffix rules, and (from session 23) the prefix
#: rules and the training tokens with their counts.
LEXICON, RULES, PREFIX_RULES, TOKENS = "mwt", "mwt_rules", "mwt_prefix_rules", "mwt_tokens"
#: At most this many training tokens are kept (the most frequent).
MAX_TOKENS = 50_000
#: :meth:`Expander.is_multiword` overrules the model on forms seen this many times ...
DECIDE_MIN_COUNT = 2
#: ... that were multiword tokens (or single words) at least this share of the time.
DECIDE_SHARE = 0.9
_ENDS = {LABELS[END]: False, LABELS[SENTENCE_END]: False, LABELS[MWT_END]: True, LABELS[MWT_SENTENCE_END]: True}


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


def learn_prefixes(pairs: Iterable[tuple[str, list[str]]]) -> list[str]:
    """The prefix rules of training multiword tokens whose last word (lower-cased) ends the
    surface: ``prefix<TAB>word word ...<TAB>count``, the words before it, most frequent first."""
    rules: dict[str, Counter] = {}
    for surface, words in pairs:
        if len(words) < 2 or any(not w or " " in w or "\t" in w for w in words) or "\t" in surface:
            continue
        low, lowered = surface.lower(), [w.lower() for w in words]
        cut = len(low) - len(lowered[-1])
        if low.endswith(lowered[-1]) and 0 < cut <= MAX_SUFFIX:
            rules.setdefault(low[:cut], Counter())[" ".join(lowered[:-1])] += 1
    return [f"{prefix}\t{counts.most_common(1)[0][0]}\t{sum(counts.values())}"
            for prefix, counts in sorted(rules.items())]


def count_tokens(windows: Iterable[tuple[Sequence[str], Sequence[str]]]) -> list[str]:
    """The training tokens, lower-cased, as ``form<TAB>one word<TAB>multiword``: how many times
    each was a token of one word and a multiword token, from the tokenizer's training windows
    (characters and labels, ``_`` on the context) ; each window's first token is left out (its
    start may lie in the context). The :data:`MAX_TOKENS` most frequent, sorted."""
    counts: dict[str, list[int]] = {}
    for chars, labels in windows:
        current, started = "", False
        for char, label in zip(chars, labels):
            if is_space(char):
                current, started = "", started or label != "_"
                continue
            current += char
            multiword = _ENDS.get(label)
            if multiword is None:
                continue
            if started and " " not in current:
                counts.setdefault(current.lower(), [0, 0])[multiword] += 1
            current, started = "", True
    kept = sorted(counts.items(), key=lambda item: -sum(item[1]))[:MAX_TOKENS]
    return sorted(f"{form}\t{one}\t{multi}" for form, (one, multi) in kept)


def vocabs(pairs: Sequence[tuple[str, list[str]]], windows: Iterable[tuple[Sequence[str], Sequence[str]]]
           ) -> dict[str, list[str]]:
    """Every multiword vocabulary of a tokenizer (:data:`LEXICON`, :data:`RULES`,
    :data:`PREFIX_RULES`, :data:`TOKENS`) from the training multiword tokens ``pairs`` and the
    training windows; the last two empty where training has no multiword token."""
    lexicon, rules = learn(pairs)
    return {LEXICON: lexicon, RULES: rules, PREFIX_RULES: learn_prefixes(pairs),
            TOKENS: count_tokens(windows) if pairs else []}


class Expander:
    """Expands multiword surface forms with a learned lexicon and rules (:func:`learn`)."""

    def __init__(self, lexicon: list[str], rules: list[str], prefix_rules: Sequence[str] = (),
                 tokens: Sequence[str] = ()):
        self.lexicon: dict[str, list[str]] = {}
        for entry in lexicon:
            surface, _, words = entry.partition("\t")
            self.lexicon[surface] = words.split(" ")
        #: form -> (times one word, times a multiword token) in training; empty for older models
        self.tokens: dict[str, tuple[int, int]] = {}
        #: the forms training decides (:meth:`is_multiword`): multiword or not
        self.decided: dict[str, bool] = {}
        for entry in tokens:
            form, one, multi = entry.split("\t")
            counts = self.tokens[form] = (int(one), int(multi))
            if sum(counts) >= DECIDE_MIN_COUNT:
                share = counts[1] / sum(counts)
                if share >= DECIDE_SHARE or share <= 1 - DECIDE_SHARE:
                    self.decided[form] = share >= DECIDE_SHARE
        least = 1 if self.tokens else MIN_RULE_COUNT
        self.rules: dict[str, tuple[str, list[str], int]] = {}
        for entry in rules:
            suffix, added, tail, count = entry.split("\t")
            if int(count) >= least and tail:
                self.rules[suffix] = (added, tail.split(" "), int(count))
        self.prefix_rules: dict[str, tuple[list[str], int]] = {}
        for entry in prefix_rules:
            prefix, head, count = entry.split("\t")
            self.prefix_rules[prefix] = (head.split(" "), int(count))
        #: training words (lower-cased): tokens of one word and the words of multiword ones
        self.known = {form for form, (one, _) in self.tokens.items() if one}
        self.known.update(word for words in self.lexicon.values() for word in words)
        self.longest = max(map(len, self.rules), default=0)
        self.unknown = 0  #: forms marked multiword that neither the lexicon nor a rule could expand

    @classmethod
    def from_vocabs(cls, vocabs: Mapping[str, list[str]]) -> "Expander":
        """The expander of a tokenizer's vocabularies (:func:`vocabs`; older models lack some)."""
        return cls(vocabs.get(LEXICON, []), vocabs.get(RULES, []), vocabs.get(PREFIX_RULES, []), vocabs.get(TOKENS, []))

    def is_multiword(self, form: str, marked: bool) -> bool:
        """Whether the token ``form`` is a multiword token: as training had it where it saw the
        form at least :data:`DECIDE_MIN_COUNT` times, one way at least :data:`DECIDE_SHARE` of
        them; else ``marked``, the model's decision."""
        return self.decided.get(form.lower(), marked) if self.decided else marked

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
        if self.tokens:
            return self._best_rule(low)
        for size in range(min(self.longest, len(low) - 1), 0, -1):
            rule = self.rules.get(low[-size:])
            if rule is not None:
                added, tail, _ = rule
                return [low[:-size] + added] + tail
        return None

    def _best_rule(self, low: str) -> list[str] | None:
        """Of the words every matching suffix and prefix rule gives, those with the most training
        words, then matching the most of ``low``, then of the rule seen most often (a prefix rule
        only where the rest of ``low`` is a training word)."""
        best: tuple[int, int, int] | None = None
        words: list[str] | None = None
        for size in range(1, min(len(low), MAX_SUFFIX + 1)):
            candidates = []
            suffix = self.rules.get(low[-size:])
            if suffix is not None:
                candidates.append(([low[:-size] + suffix[0]] + suffix[1], suffix[2]))
            prefix = self.prefix_rules.get(low[:size])
            if prefix is not None and low[size:] in self.known:
                candidates.append((prefix[0] + [low[size:]], prefix[1]))
            for candidate, count in candidates:
                score = (sum(word in self.known for word in candidate), size, count)
                if best is None or score > best:
                    best, words = score, candidate
        return words


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
