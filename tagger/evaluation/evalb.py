"""Bracket scoring as the EVALB program does it (Sekine & Collins 1997, with D. Ellis's 2006
fixes): the scorer every published Penn Treebank parsing figure comes from. Plain Python, no torch.

EVALB's rules, as its C source applies them (``README`` sections [6] and [7]):

- Its input is one sentence per line: the brackets on the line, in order (a line may hold
  several top-level trees, or none: an empty test line is a *skipped* sentence).
- A leaf ``(TAG word)`` whose tag is a ``DELETE_LABEL`` (exactly, as written) is dropped, word
  and all, before anything else is counted; every other leaf is a word with its tag. The
  sentence *length* (the ``Len`` column, and the ``CUTOFF_LEN`` summary) is the gold line's
  leaves whose tag is not a ``DELETE_LABEL_FOR_LENGTH``, dropped ones included.
- Every other bracket is a constituent over the words inside it. Constituents over no word (all
  their leaves dropped) are deleted; a label is cut at its first ``-`` or ``=`` (``NP-SBJ-1`` ->
  ``NP``), and a label equal to a ``DELETE_LABEL`` (``EQ_LABEL`` pairs count as equal) deletes
  the bracket but not its children.
- Lengths differ: the Ellis fix puts back a ``QUOTE_LABEL`` leaf (a quote word ``'``, ``"`` or
  ``/``) that one side dropped and the other kept as a word; if they still differ the sentence
  is an *error* (``Length unmatch``), as is one whose words differ (``Words unmatch``;
  ``EQ_WORD`` pairs count as equal). Errors and skipped sentences count in no figure but the
  sentence counts.
- Each gold constituent matches the first unmatched test constituent with the same span and
  (with ``LABELED 1``) an equal label; a test constituent *crosses* when some gold one overlaps
  it without nesting. Tags are compared word by word (``EQ_LABEL`` applies).

Trees here are :class:`~tagger.corpus.trees.Tree` values. One thing is not EVALB's text reading:
an *unlabelled outer bracket* (a root labelled ``""``, the WSJ ``.mrg`` files' ``( (S ...) )``)
is a wrapper, not a constituent: its children are the sentence's top-level trees, as if written
bare on one line. So ``( (S ...) )`` scores as EVALB scores ``(S ...)``, which under
:data:`COLLINS` (``DELETE_LABEL TOP``) is what it scores for the ``(TOP (S ...))`` lines of the
standard gold files. (EVALB fed ``( (S ...) )`` literally would count one more bracket per
sentence, labelled ``""``, always matched.) Leaves that are bare words outside a ``(TAG word)``
(which the ``.mrg`` reader never makes) are ignored. EVALB's fixed array sizes (200 words or
brackets a sentence, 5000 characters a line) are not limits here.

Use::

    metric = BracketMetric(COLLINS)
    for gold, test in zip(gold_trees, test_trees):
        metric.update(gold, test)
    metric.score                 # all-sentence bracket F1, 0..1
    print(render_evalb(metric))  # EVALB's own report, byte for byte
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field, replace
from typing import Sequence, Union

from tagger.corpus.trees import Tree
from tagger.errors import TaggerError
from tagger.evaluation.metrics import Metric

# --- parameters ------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalbParams:
    """What an EVALB parameter file sets; the defaults are EVALB's own without ``-p``."""

    debug: int = 0  # read and kept; this module prints no debugging output
    max_error: int = 10  # EVALB stops (no summary) at the error after this many
    cutoff_len: int = 40  # the second summary: sentences of at most this many words
    labeled: bool = True  # labels must match (LABELED 1), or spans only (LABELED 0)
    delete_labels: tuple[str, ...] = ()
    delete_labels_for_length: tuple[str, ...] = ()
    quote_labels: tuple[str, ...] = ()
    eq_labels: tuple[tuple[str, str], ...] = ()
    eq_words: tuple[tuple[str, str], ...] = ()


#: ``COLLINS.prm``, the parameters behind the usual WSJ figures: labelled brackets; the TOP
#: bracket, traces (``-NONE-``) and the punctuation tags ``, : `` '' .`` deleted; traces not
#: counted in the length; ADVP and PRT the same label; figures also for sentences of <= 40 words.
COLLINS = EvalbParams(
    max_error=10,
    cutoff_len=40,
    labeled=True,
    delete_labels=("TOP", "-NONE-", ",", ":", "``", "''", "."),
    delete_labels_for_length=("-NONE-",),
    eq_labels=(("ADVP", "PRT"),),
)

_INTEGER = re.compile(r"\s*([+-]?\d+)")
_INT_KEYS = {"DEBUG": "debug", "MAX_ERROR": "max_error", "CUTOFF_LEN": "cutoff_len", "LABELED": "labeled"}
_LIST_KEYS = {"DELETE_LABEL": "delete_labels", "DELETE_LABEL_FOR_LENGTH": "delete_labels_for_length",
              "QUOTE_LABEL": "quote_labels"}
_PAIR_KEYS = {"EQ_LABEL": "eq_labels", "EQ_WORD": "eq_words"}


def read_params(path: str | os.PathLike) -> EvalbParams:
    """The parameters in an EVALB parameter file (``.prm``), read as EVALB reads them: a line
    starting with ``#`` or shorter than 3 characters is skipped; otherwise its first word is the
    key and the rest (trailing blanks cut) the value. Integer keys read a leading integer as C's
    ``atoi`` does (``LABELED`` 0 or not); ``DELETE_LABEL``, ``DELETE_LABEL_FOR_LENGTH`` and
    ``QUOTE_LABEL`` add their value; ``EQ_LABEL`` and ``EQ_WORD`` add a pair. Where EVALB would
    only warn and go on (an unknown key, an empty value, an ``EQ_`` line without two values,
    and, silently, an integer key without an integer) this is a :class:`TaggerError` naming the
    file and line."""
    name = os.fspath(path)
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        raise TaggerError("no such file", name) from None
    except OSError as e:
        raise TaggerError(f"cannot read the EVALB parameter file: {e.strerror}", name) from None
    values: dict[str, object] = {}
    lists: dict[str, list] = {key: [] for key in (*_LIST_KEYS.values(), *_PAIR_KEYS.values())}
    for number, line in enumerate(lines, 1):
        line = line.rstrip()
        if line.startswith("#") or len(line) < 3:
            continue
        parts = re.match(r"(\S*)\s*(.*)", line)
        assert parts is not None
        key, value = parts.group(1), parts.group(2)
        if key in _INT_KEYS:
            found = _INTEGER.match(value)
            if not found:
                raise TaggerError(f"{key} needs an integer value, not '{value}'", name, number)
            values[_INT_KEYS[key]] = int(found.group(1))
        elif key in _LIST_KEYS:
            if not value:
                raise TaggerError(f"{key} has no value", name, number)
            lists[_LIST_KEYS[key]].append(value)
        elif key in _PAIR_KEYS:
            pair = value.split()
            if len(pair) != 2:
                raise TaggerError(f"{key} needs two values, not '{value}'", name, number)
            lists[_PAIR_KEYS[key]].append((pair[0], pair[1]))
        else:
            known = ", ".join([*_INT_KEYS, *_LIST_KEYS, *_PAIR_KEYS])
            raise TaggerError(f"unknown EVALB parameter '{key}' (known: {known})", name, number)
    if "labeled" in values:
        values["labeled"] = values["labeled"] != 0
    return EvalbParams(**values, **{key: tuple(items) for key, items in lists.items()})  # type: ignore[arg-type]


# --- one sentence ----------------------------------------------------------------------------

#: A sentence as EVALB sees a line: a tree, the top-level trees of a line, or nothing (``None``
#: or an empty sequence: an empty line).
Forest = Union[Tree, Sequence[Tree], None]


@dataclass
class _Quote:
    """A ``QUOTE_LABEL`` leaf as read: where it is (or would be) among the words, how many
    brackets were opened before it and which were open around it."""

    word: str
    tag: str
    index: int
    bracket: int
    open: tuple[int, ...]


@dataclass
class _Bracket:
    start: int
    end: int
    label: str
    deleted: bool = False
    matched: bool = False


@dataclass
class _Reading:
    """One side of a sentence as EVALB reads it: the words kept (with tags), the brackets, the
    quote leaves and the length."""

    words: list[tuple[str, str]] = field(default_factory=list)
    brackets: list[_Bracket] = field(default_factory=list)
    quotes: list[_Quote] = field(default_factory=list)
    length: int = 0


def _top_level(forest: Forest) -> list[Tree]:
    if forest is None:
        return []
    if isinstance(forest, Tree):
        if forest.label == "" and not forest.is_preterminal:
            return [child for child in forest.children if isinstance(child, Tree)]  # the wrapper
        return [forest]
    return list(forest)


def _read(forest: Forest, params: EvalbParams) -> _Reading:
    """EVALB's ``read_line`` over trees: leaves and brackets in text order (no recursion)."""
    reading = _Reading()
    open_brackets: list[int] = []
    # Items: a tree to visit, or an int: the bracket to close.
    stack: list[Union[Tree, str, int]] = list(reversed(_top_level(forest)))
    while stack:
        node = stack.pop()
        if isinstance(node, int):
            reading.brackets[node].end = len(reading.words)
            open_brackets.pop()
        elif isinstance(node, str):
            continue  # a bare word outside (TAG word): not EVALB input, ignored
        elif node.is_preterminal:
            tag, word = node.label, node.children[0]
            assert isinstance(word, str)
            if tag not in params.delete_labels_for_length:
                reading.length += 1
            if tag in params.quote_labels and word in ("'", '"', "/"):
                reading.quotes.append(_Quote(word, tag, len(reading.words), len(reading.brackets),
                                             tuple(open_brackets)))
            if tag not in params.delete_labels:
                reading.words.append((word, tag))
        else:
            index = len(reading.brackets)
            reading.brackets.append(_Bracket(len(reading.words), -1, node.label))
            open_brackets.append(index)
            stack.append(index)
            stack.extend(reversed(node.children))
    return reading


@dataclass(frozen=True)
class _Rules:
    """The parameters as sets to look up: the ``EQ_LABEL`` and ``EQ_WORD`` pairs both ways, and
    the labels that delete a bracket (a ``DELETE_LABEL``, or one ``EQ_LABEL`` makes equal to one)."""

    labels: frozenset[tuple[str, str]]
    words: frozenset[tuple[str, str]]
    deleted: frozenset[str]

    def same_label(self, a: str, b: str) -> bool:
        return a == b or (a, b) in self.labels

    def same_word(self, a: str, b: str) -> bool:
        return a == b or (a, b) in self.words


@functools.lru_cache(maxsize=8)
def _rules(params: EvalbParams) -> _Rules:
    labels = frozenset(params.eq_labels) | {(b, a) for a, b in params.eq_labels}
    words = frozenset(params.eq_words) | {(b, a) for a, b in params.eq_words}
    deleted = frozenset(params.delete_labels) | {a for a, b in labels if b in params.delete_labels}
    return _Rules(labels, words, deleted)


def _reinsert(quote: _Quote, reading: _Reading) -> None:
    """Put a dropped quote leaf back among the words, widening the brackets around it."""
    reading.words.insert(quote.index, (quote.word, quote.tag))
    for k, bracket in enumerate(reading.brackets):
        if k >= quote.bracket:
            bracket.start += 1
            bracket.end += 1
    for k in quote.open:
        reading.brackets[k].end += 1


def _fix_quotes(gold: _Reading, test: _Reading, params: EvalbParams) -> None:
    """The Ellis fix: where one side dropped a quote leaf (a ``DELETE_LABEL`` tag) that the other
    kept at the same place under another tag, put it back (EVALB's ``fix_quote``, quirks kept)."""
    deleted = params.delete_labels
    for i, test_quote in enumerate(test.quotes):
        index = test_quote.index
        for j, gold_quote in enumerate(gold.quotes):
            if gold_quote.index != index or gold_quote.tag == test_quote.tag:
                continue
            if gold_quote.tag in deleted and test_quote.tag not in deleted:
                _reinsert(gold_quote, gold)
                for later in gold.quotes[j:]:
                    later.index += 1
            elif test_quote.tag in deleted and gold_quote.tag not in deleted:
                _reinsert(test_quote, test)
                for later in test.quotes[i:]:
                    later.index += 1


def _strip_function(label: str) -> str:
    """``NP-SBJ-1`` -> ``NP``, ``NP=2`` -> ``NP``: the label up to its first ``-`` or ``=``."""
    return label.split("-", 1)[0].split("=", 1)[0]


def _massage(reading: _Reading, rules: _Rules) -> int:
    """Delete empty and ``DELETE_LABEL`` brackets, cut function tags; the brackets left."""
    for bracket in reading.brackets:
        if bracket.start == bracket.end:
            bracket.deleted = True
            continue
        bracket.label = _strip_function(bracket.label)
        bracket.deleted = bracket.label in rules.deleted
    return sum(not b.deleted for b in reading.brackets)


#: Sentence status, as EVALB's ``Stat`` column: scored, an error, skipped (empty test line).
OK, ERROR, SKIP = 0, 1, 2


@dataclass(frozen=True)
class SentenceResult:
    """One row of EVALB's report. ``length`` is the gold length (``Len``, also what
    ``CUTOFF_LEN`` compares); ``status`` :data:`OK`, :data:`ERROR` or :data:`SKIP` (the counts
    are then 0); ``crossing`` the test brackets crossing a gold one; ``words`` and
    ``correct_tags`` the words scored and those with the gold tag; ``error`` EVALB's message."""

    id: int
    length: int
    status: int = OK
    matched: int = 0
    gold: int = 0
    test: int = 0
    crossing: int = 0
    words: int = 0
    correct_tags: int = 0
    error: str | None = None

    @property
    def recall(self) -> float:
        """Percent of gold brackets matched (0 where there are none), as EVALB prints it."""
        return 100.0 * self.matched / self.gold if self.gold else 0.0

    @property
    def precision(self) -> float:
        return 100.0 * self.matched / self.test if self.test else 0.0

    @property
    def tag_accuracy(self) -> float:
        return 100.0 * self.correct_tags / self.words if self.words else 0.0


def score_sentence(gold: Forest, test: Forest, params: EvalbParams = COLLINS, id: int = 1) -> SentenceResult:
    """EVALB's row for one sentence: the ``gold`` tree against the ``test`` one (each a tree,
    the top-level trees of an EVALB line, or ``None`` for an empty line); ``id`` its number."""
    g, t, rules = _read(gold, params), _read(test, params), _rules(params)
    if not t.words:
        return SentenceResult(id, g.length, SKIP)
    if len(g.words) != len(t.words):
        _fix_quotes(g, t, params)
        if len(g.words) != len(t.words):
            return SentenceResult(id, g.length, ERROR, error=f"Length unmatch ({len(g.words)}|{len(t.words)})")
    for (gold_word, _), (test_word, _) in zip(g.words, t.words):
        if not rules.same_word(gold_word, test_word):
            return SentenceResult(id, g.length, ERROR, error=f"Words unmatch ({gold_word}|{test_word})")
    gold_count, test_count = _massage(g, rules), _massage(t, rules)
    by_span: dict[tuple[int, int], list[_Bracket]] = {}  # the test brackets of each span, in order
    for b in t.brackets:
        if not b.deleted:
            by_span.setdefault((b.start, b.end), []).append(b)
    matched = 0
    for a in g.brackets:
        if a.deleted:
            continue
        for b in by_span.get((a.start, a.end), ()):
            if not b.matched and (not params.labeled or rules.same_label(a.label, b.label)):
                a.matched = b.matched = True
                matched += 1
                break
    spans = {(a.start, a.end) for a in g.brackets if not a.deleted}
    crossing = sum(
        any((i < j < k < l) or (j < i < l < k) for i, k in spans)
        for j, l in ((b.start, b.end) for b in t.brackets if not b.deleted))
    correct = sum(rules.same_label(gold_tag, test_tag) for (_, gold_tag), (_, test_tag) in zip(g.words, t.words))
    return SentenceResult(id, g.length, OK, matched, gold_count, test_count, crossing, len(g.words), correct)


# --- another tagset: the gold file's preterminals ------------------------------------------

#: The tags of empty elements (the Penn Treebank's traces): leaves of gold trees that a parser's
#: input never has.
EMPTY_TAGS = ("-NONE-",)


def _as_tree(forest: Forest) -> Tree | None:
    if forest is None or isinstance(forest, Tree):
        return forest
    return Tree("", tuple(forest))  # the top-level trees of a line, under the wrapper _top_level takes off


def _retagged(tree: Tree, tags: Sequence[str]) -> Tree:
    """``tree`` with its preterminals labelled ``tags``, in order (no recursion)."""
    next_tag = iter(tags).__next__
    built: list[list[Union[Tree, str]]] = [[]]  # the children made so far of each open node
    stack: list[tuple[Union[Tree, str], bool]] = [(tree, False)]
    while stack:
        node, closing = stack.pop()
        if isinstance(node, str):
            built[-1].append(node)
        elif closing:
            children = built.pop()
            built[-1].append(Tree(node.label, tuple(children)))
        elif node.is_preterminal:
            built[-1].append(Tree(next_tag(), node.children))
        else:
            stack.append((node, True))
            built.append([])
            stack.extend((child, False) for child in reversed(node.children))
    return built[0][0]  # type: ignore[return-value]


def with_gold_preterminals(gold: Forest, test: Forest) -> Forest:
    """``test`` with the part-of-speech tags of ``gold`` on its preterminals, where the two have
    the same words in the same order (the gold's empty elements, :data:`EMPTY_TAGS`, aside);
    ``test`` unchanged otherwise (EVALB then reports the sentence as it would)."""
    gold_tree, test_tree = _as_tree(gold), _as_tree(test)
    if gold_tree is None or test_tree is None:
        return test
    words = [word for _, word in test_tree.leaves()]
    leaves = gold_tree.leaves()
    for candidate in (leaves, [(tag, word) for tag, word in leaves if tag not in EMPTY_TAGS]):
        if [word for _, word in candidate] == words:
            return _retagged(test_tree, [tag for tag, _ in candidate])
    return test


def foreign_tags(gold: Sequence[Forest], test: Sequence[Forest]) -> list[str] | None:
    """The predicted preterminals' tags, most frequent first, when they are not of the gold's
    tagset: fewer than half of the predicted preterminals carry a tag the gold trees use (a
    parser's ``XX``, UPOS tags against PTB ones); ``None`` when they are of it (a tagger's
    errors do not make another tagset). EVALB's ``DELETE_LABEL`` punctuation goes by the tag, so
    trees in another tagset keep the punctuation the gold trees drop: every sentence is a
    ``Length unmatch``."""
    gold_tags = {tag for forest in gold if (tree := _as_tree(forest)) is not None for tag, _ in tree.leaves()}
    counts: dict[str, int] = {}
    for forest in test:
        tree = _as_tree(forest)
        for tag, _ in tree.leaves() if tree is not None else ():
            counts[tag] = counts.get(tag, 0) + 1
    inside = sum(n for tag, n in counts.items() if tag in gold_tags)
    if not counts or 2 * inside >= sum(counts.values()):
        return None
    return sorted(counts, key=lambda tag: -counts[tag])


# --- totals ----------------------------------------------------------------------------------


def _percent(numerator: int, denominator: int) -> float:
    return 100.0 * numerator / denominator if denominator else 0.0


@dataclass
class EvalbTotals:
    """One of EVALB's summaries: the sentences counted and, over the valid ones (neither error
    nor skipped), the bracket, crossing and tag counts."""

    sentences: int = 0
    errors: int = 0
    skipped: int = 0
    gold: int = 0
    test: int = 0
    matched: int = 0
    complete: int = 0  # valid sentences with every bracket matched (recall = precision = 100)
    crossing: int = 0
    no_crossing: int = 0
    two_or_less: int = 0
    words: int = 0
    correct_tags: int = 0

    def count(self, row: SentenceResult) -> None:
        self.sentences += 1
        if row.status == ERROR:
            self.errors += 1
            return
        if row.status == SKIP:
            self.skipped += 1
            return
        self.gold += row.gold
        self.test += row.test
        self.matched += row.matched
        self.complete += row.gold == row.test == row.matched
        self.crossing += row.crossing
        self.no_crossing += row.crossing == 0
        self.two_or_less += row.crossing <= 2
        self.words += row.words
        self.correct_tags += row.correct_tags

    def __add__(self, other: "EvalbTotals") -> "EvalbTotals":
        return EvalbTotals(*(getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__))

    @property
    def valid(self) -> int:
        return self.sentences - self.errors - self.skipped

    @property
    def recall(self) -> float:
        """Bracketing recall, percent (0 where nothing was counted, as EVALB)."""
        return _percent(self.matched, self.gold)

    @property
    def precision(self) -> float:
        return _percent(self.matched, self.test)

    @property
    def fmeasure(self) -> float:
        """``2PR/(P+R)`` in percent, from the unrounded P and R as EVALB computes it; 0 where P
        and R are both 0 (EVALB prints ``-nan`` there)."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def complete_match(self) -> float:
        return _percent(self.complete, self.valid)

    @property
    def average_crossing(self) -> float:
        return 1.0 * self.crossing / self.valid if self.valid else 0.0

    @property
    def no_crossing_rate(self) -> float:
        return _percent(self.no_crossing, self.valid)

    @property
    def two_or_less_rate(self) -> float:
        return _percent(self.two_or_less, self.valid)

    @property
    def tagging_accuracy(self) -> float:
        return _percent(self.correct_tags, self.words)

    def to_dict(self) -> dict:
        """Counts, and EVALB's figures in percent (average crossing: brackets a sentence)."""
        return {
            "sentences": self.sentences,
            "error_sentences": self.errors,
            "skip_sentences": self.skipped,
            "valid_sentences": self.valid,
            "gold_brackets": self.gold,
            "test_brackets": self.test,
            "matched_brackets": self.matched,
            "recall": self.recall,
            "precision": self.precision,
            "f1": self.fmeasure,
            "complete_match": self.complete_match,
            "average_crossing": self.average_crossing,
            "no_crossing": self.no_crossing_rate,
            "two_or_less_crossing": self.two_or_less_rate,
            "words": self.words,
            "correct_tags": self.correct_tags,
            "tagging_accuracy": self.tagging_accuracy,
        }


class BracketMetric(Metric):
    """EVALB's scores of a test set: the per-sentence rows and the two summaries, ``all`` and
    ``short`` (sentences of at most ``params.cutoff_len`` words). ``score`` is the all-sentence
    bracket F-measure, 0..1 (what a constituency parser's dev score is). ``preterminals`` says
    whose part-of-speech tags the test trees were scored with: ``"predicted"`` (their own) or
    ``"gold"`` (the gold trees', put in for a parser's ``XX`` or another tagset:
    :func:`with_gold_preterminals`; the tagging accuracy is then 100 by construction; ``"mixed"`` for a sum of both)."""

    score_name = "bracket F1"

    def __init__(self, params: EvalbParams = COLLINS, preterminals: str = "predicted") -> None:
        self.params = params
        self.preterminals = preterminals
        self.rows: list[SentenceResult] = []
        self.all = EvalbTotals()
        self.short = EvalbTotals()

    def add(self, row: SentenceResult) -> None:
        """Count a row :func:`score_sentence` gave (numbered as the next sentence)."""
        row = replace(row, id=len(self.rows) + 1)
        self.rows.append(row)
        self.all.count(row)
        if row.length <= self.params.cutoff_len:
            self.short.count(row)

    def update(self, gold: Forest, test: Forest) -> SentenceResult:
        """Score one sentence (see :func:`score_sentence`) and count it; its row."""
        self.add(score_sentence(gold, test, self.params, len(self.rows) + 1))
        return self.rows[-1]

    def __add__(self, other: "BracketMetric") -> "BracketMetric":
        if not isinstance(other, BracketMetric):
            return NotImplemented
        if self.rows and other.rows and self.params != other.params:
            raise ValueError("cannot add EVALB scores made with different parameters")
        first = self if self.rows or not other.rows else other
        kinds = {m.preterminals for m in (self, other) if m.rows} or {first.preterminals}
        total = BracketMetric(first.params, kinds.pop() if len(kinds) == 1 else "mixed")
        for row in [*self.rows, *other.rows]:
            total.add(row)
        return total

    @property
    def errors(self) -> list[SentenceResult]:
        """The error rows (those with an EVALB message)."""
        return [row for row in self.rows if row.error is not None]

    @property
    def score(self) -> float:
        return self.all.fmeasure / 100.0

    def to_dict(self) -> dict:
        """Both summaries (percentages 0..100), and the cut-off length."""
        return {"cutoff_len": self.params.cutoff_len, "preterminals": self.preterminals, "all": self.all.to_dict(),
                "short": self.short.to_dict()}


def score_trees(gold: Sequence[Forest], test: Sequence[Forest], params: EvalbParams = COLLINS,
                test_name: str | None = None, test_lines: Sequence[int] | None = None,
                preterminals: str = "predicted") -> BracketMetric:
    """Score a test set as EVALB does, sentence by sentence, and stop where it would: at the
    error after ``params.max_error`` errors (a :class:`TaggerError` naming ``test_name`` and
    the sentence's line in ``test_lines``, as EVALB then prints no summary). The two sides must
    have as many sentences (EVALB reads line against line). ``preterminals="gold"`` scores each
    test tree with the gold tree's tags (:func:`with_gold_preterminals`)."""
    if len(gold) != len(test):
        raise TaggerError(f"the predicted file has {len(test)} tree{'' if len(test) == 1 else 's'}, the gold one {len(gold)}", test_name)
    if preterminals == "gold":
        test = [with_gold_preterminals(g, t) for g, t in zip(gold, test)]
    metric = BracketMetric(params, preterminals)
    errors = 0
    for i, (g, t) in enumerate(zip(gold, test)):
        row = score_sentence(g, t, params, i + 1)
        if row.error is not None:
            errors += 1
            if errors > params.max_error + 1:
                line = test_lines[i] if test_lines is not None else None
                why = _length_hint(g, t, params, preterminals) if row.error.startswith("Length unmatch") else ""
                raise TaggerError(f"sentence {i + 1}: {row.error}: error {errors}, where EVALB stops (MAX_ERROR "
                                  f"{params.max_error}; a parameter file can allow more){why}", test_name, line)
        metric.add(row)
    return metric


def _length_hint(gold: Forest, test: Forest, params: EvalbParams, preterminals: str) -> str:
    """Why a sentence's two lengths differ, where that can be told: the gold tree's empty
    elements that the parameter file does not delete, or leaves whose tag the file deletes on one
    side only (punctuation tagged otherwise by the parser's input)."""
    def tags(forest: Forest) -> list[str]:
        tree = _as_tree(forest)
        return [tag for tag, _ in tree.leaves()] if tree is not None else []

    gold_tags, test_tags = tags(gold), tags(test)
    empty = sorted({tag for tag in gold_tags if tag in EMPTY_TAGS and tag not in params.delete_labels})
    if empty and not any(tag in EMPTY_TAGS for tag in test_tags):
        return (f"; the gold trees have empty elements ({', '.join(empty)}) that the parameter file does not delete "
                f"(DELETE_LABEL {empty[0]})")
    deleted = set(params.delete_labels)
    if preterminals != "gold" and sum(t in deleted for t in gold_tags) != sum(t in deleted for t in test_tags):
        return ("; words whose tag the parameter file deletes (punctuation: DELETE_LABEL " +
                " ".join(sorted(deleted & set(gold_tags + test_tags))[:6]) + ") are on one side only: --preterminals "
                "gold scores with the gold tags")
    return ""


# --- EVALB's report ----------------------------------------------------------------------------

_RULE = "=" * 76


def _f(value: float) -> str:
    return f"{value:6.2f}"


def _row(row: SentenceResult) -> str:
    return (f"{row.id:4d}  {row.length:3d}    {row.status:d}  "
            f"{_f(row.recall)} {_f(row.precision)}   {row.matched:3d}    {row.gold:3d}  {row.test:3d}    "
            f"{row.crossing:3d}   {row.words:4d}  {row.correct_tags:4d}   {_f(row.tag_accuracy)}")


def _summary(title: str, totals: EvalbTotals) -> list[str]:
    p, r = totals.precision, totals.recall
    fmeasure = _f(totals.fmeasure) if p + r else "  -nan"  # EVALB divides 0 by 0 (x86's NaN is negative)
    return [
        "",
        f"-- {title} --",
        f"Number of sentence        = {totals.sentences:6d}",
        f"Number of Error sentence  = {totals.errors:6d}",
        f"Number of Skip  sentence  = {totals.skipped:6d}",
        f"Number of Valid sentence  = {totals.valid:6d}",
        f"Bracketing Recall         = {_f(r)}",
        f"Bracketing Precision      = {_f(p)}",
        f"Bracketing FMeasure       = {fmeasure}",
        f"Complete match            = {_f(totals.complete_match)}",
        f"Average crossing          = {_f(totals.average_crossing)}",
        f"No crossing               = {_f(totals.no_crossing_rate)}",
        f"2 or less crossing        = {_f(totals.two_or_less_rate)}",
        f"Tagging accuracy          = {_f(totals.tagging_accuracy)}",
    ]


def render_evalb(metric: BracketMetric) -> str:
    """EVALB's standard output for these scores, exactly: the header, one row a sentence, the
    totals line and the two summaries."""
    total = metric.all
    lines = [
        "  Sent.                        Matched  Bracket   Cross        Correct Tag",
        " ID  Len.  Stat. Recal  Prec.  Bracket gold test Bracket Words  Tags Accracy",
        _RULE,
        *(_row(row) for row in metric.rows),
        _RULE,
    ]
    brackets = ""
    if total.gold > 0 and total.test > 0:
        brackets = (f"                {_f(total.recall)} {_f(total.precision)} {total.matched:6d} {total.gold:5d} "
                    f"{total.test:5d}  {total.crossing:5d}")
    lines.append(f"{brackets}  {total.words:5d} {total.correct_tags:5d}   {_f(total.tagging_accuracy)}")
    lines.append("=== Summary ===")
    lines += _summary("All", metric.all)
    lines += _summary(f"len<={metric.params.cutoff_len}", metric.short)
    return "\n".join(lines) + "\n"


def render_errors(metric: BracketMetric) -> str:
    """EVALB's standard error for these scores: ``ID : message`` for each error sentence."""
    return "".join(f"{row.id} : {row.error}\n" for row in metric.errors)


__all__ = ["COLLINS", "EMPTY_TAGS", "ERROR", "OK", "SKIP", "BracketMetric", "EvalbParams", "EvalbTotals", "Forest",
           "SentenceResult", "foreign_tags", "read_params", "render_errors", "render_evalb", "score_sentence",
           "score_trees", "with_gold_preterminals"]
