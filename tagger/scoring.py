"""Scoring as plain functions: what ``tagger evaluate`` does, for the CLI and for Python callers.

- :func:`evaluate_files`: a predicted file against a gold one (no model);
- :func:`evaluate_model`: a model tags or parses a data file, scored against its gold columns;
- :func:`evaluate_sentences`: the same policy for sentences already read.

Each returns an :class:`EvaluationResult`: the tag column scored and the metric objects of
:mod:`tagger.evaluation` (``tagging``, ``parsing``, ``multitag``, ``const``). Here is all the
policy of what is scored: which tag column (given, a task's, or the first present in both files;
with a model, those the model predicts) or columns (``upos,xpos,feats``: each one's accuracy,
their mean and all of them at once, :class:`~tagger.evaluation.metrics.ColumnsMetric`),
whether attachment is, whether constituency trees are
(EVALB's bracket scores, :mod:`tagger.evaluation.evalb`, of sentences whose :attr:`Sentence.tree`
is set), and the one-line errors when something asked for cannot be scored. Files are read with
:func:`tagger.formats.read_corpus`; ``trees`` files keep their blank lines, which EVALB counts
as skipped sentences.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from tagger import formats, resources
from tagger.corpus.records import TREE, Sentence
from tagger.errors import TaggerError
from tagger.evaluation.aligned import UD_COLUMNS, AlignedMetric, score_aligned
from tagger.evaluation.evalb import COLLINS, BracketMetric, EvalbParams, foreign_tags, score_trees
from tagger.evaluation.metrics import AttachmentMetric, ColumnsMetric, Metric, MultiTagMetric, TagMetric
from tagger.evaluation.report import score
from tagger.formats import read_corpus
from tagger.formats.base import read_once
from tagger.formats.supertags import SUPERTAG_IN
from tagger.tasks import TASKS

#: The tag columns each task scores, in the order a missing ``--column`` falls back through:
#: the task registry's columns (:data:`tagger.tasks.TASKS`), the same order ``tagger train``
#: takes; a task whose column is not learned from the data (``dep``) scores no tag column.
TASK_COLUMNS: dict[str, tuple[str, ...]] = {
    name: (task.columns if task.column_from_data else ()) for name, task in TASKS.items()}

#: ``--task auto``: every task's tag columns in turn, then the ``columns`` format's generic ``tag``.
AUTO_COLUMNS: tuple[str, ...] = tuple(dict.fromkeys([c for names in TASK_COLUMNS.values() for c in names] + ["tag"]))

#: The columns of a dependency tree: scored as attachment, never as a tag column.
TREE_COLUMNS = ("head", "deprel")

#: The task that scores constituency trees (EVALB). A model that predicts them declares the
#: output column :data:`~tagger.corpus.records.TREE` (its predictions fill :attr:`Sentence.tree`).
CONST = "const"

#: Whose part-of-speech tags predicted trees are scored with (``preterminals``): ``auto`` the
#: gold trees' where the predicted ones are of another tagset (:func:`choose_preterminals`),
#: else their own; ``gold``; ``predicted`` (their own, as EVALB is given them).
PRETERMINALS = ("auto", "gold", "predicted")

#: What ``task`` may be.
SCORING_TASKS = tuple(dict.fromkeys(("auto", *TASK_COLUMNS, CONST)))

ColumnSpec = Mapping[str, int] | str | None


@dataclass
class EvaluationResult:
    """What was scored: the tag column (``None``: no tagging scores; several joined by commas,
    ``upos,xpos,feats``) and the metrics, under ``"tagging"`` (:class:`TagMetric`, or for
    several columns :class:`ColumnsMetric`), ``"parsing"`` (:class:`AttachmentMetric`),
    ``"multitag"`` (:class:`MultiTagMetric`, of the first column) and ``"const"``
    (:class:`BracketMetric`) as present, in that order."""

    column: str | None
    metrics: dict[str, Metric] = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        """The tag columns scored (none, one, or several)."""
        return tag_columns(self.column)

    @property
    def tagging(self) -> TagMetric | ColumnsMetric | None:
        return self.metrics.get("tagging")  # type: ignore[return-value]

    @property
    def parsing(self) -> AttachmentMetric | None:
        return self.metrics.get("parsing")  # type: ignore[return-value]

    @property
    def multitag(self) -> MultiTagMetric | None:
        return self.metrics.get("multitag")  # type: ignore[return-value]

    @property
    def const(self) -> BracketMetric | None:
        return self.metrics.get("const")  # type: ignore[return-value]

    @property
    def aligned(self) -> AlignedMetric | None:
        return self.metrics.get("aligned")  # type: ignore[return-value]

    def to_dict(self) -> dict[str, Any]:
        """``{"column": ..., "tagging": {...}, ...}``: plain JSON-able data, scores in percent."""
        return {"column": self.column, **{name: metric.to_dict() for name, metric in self.metrics.items()}}


def tag_columns(column: str | None) -> list[str]:
    """The tag columns a ``--column`` value names: none, one, or several joined by commas."""
    return [name.strip() for name in column.split(",") if name.strip()] if column else []


def read_scored(path: str | os.PathLike | Sequence[Path], fmt: str = "auto", columns: ColumnSpec = None,
                empty: str = "no sentences in the file", blank_lines: bool = False,
                supertag_in: str = "misc") -> list[Sentence]:
    """The sentences of a file to score (``-``: stdin); ``empty`` is the error for a file without
    any. A file named as ``columns`` needs its layout (``columns``, or its own header's:
    :func:`tagger.formats.columns.header_layout`). With ``blank_lines``, a ``trees`` file's
    blank lines are empty sentences (EVALB's skipped ones)."""
    with read_once(path) as source:  # a pipe (<(command)) is read once: sniffed and read
        sentences = (_read_keeping_blank_lines(source, fmt, columns, supertag_in) if blank_lines
                     else read_corpus(source, fmt, columns, supertag_in=supertag_in))
    if not any(len(sentence) for sentence in sentences):
        raise TaggerError(empty, _name(path))
    return sentences


def _read_keeping_blank_lines(path: Any, fmt: str, columns: ColumnSpec, supertag_in: str = "misc") -> list[Sentence]:
    """:func:`read_corpus`, but a file in (or detected as) the ``trees`` format keeps its blank
    lines as empty sentences."""
    named = isinstance(path, (str, os.PathLike))
    if isinstance(path, (list, tuple)) or named and Path(path).is_dir():
        return read_corpus(path, fmt, columns, supertag_in=supertag_in)
    source: Any = sys.stdin if named and os.fspath(path) == "-" else path
    if fmt == "auto":
        formats.column_layout(columns)  # a bad spec is an error whatever the files are
        fmt, source = formats.sniff(source, columns_given=True)  # (no note of a guessed layout: scoring takes none)
        columns = columns if fmt == "columns" else None  # (the layout of a file detected as columns, no other)
    if fmt == "trees":
        return list(formats.read(source, "trees", blank_lines=True))
    return read_corpus(source, fmt, columns, supertag_in=supertag_in)


def training_words(path: str | os.PathLike, fmt: str = "auto", columns: ColumnSpec = None) -> set[str]:
    """The word forms of a training file (for the accuracy on words unseen in training), as
    written and composed (NFC: :func:`tagger.corpus.features.canonical`)."""
    from tagger.corpus.features import canonical

    words = {word for sentence in read_corpus(path, fmt, columns) for word in sentence.words}
    return words | {canonical(word) for word in words}


def _name(path: Any) -> str:
    return os.fspath(path) if isinstance(path, (str, os.PathLike)) else f"{len(path)} files from {Path(path[0]).parent}"


def has_column(sentences: Sequence[Sentence], name: str) -> bool:
    """True if any sentence has column ``name`` annotated (not all ``_``/-1)."""
    return any(sentence.has(name) for sentence in sentences)


def _missing_column(which: str, name: str, sentences: Sequence[Sentence]) -> str:
    """The message for a column that a file lacks, naming the tag columns it has."""
    present = sorted({c for s in sentences[:100] for c in s.columns if c not in TREE_COLUMNS and s.has(c)})
    hint = "; supertags in XPOS: --supertag-in xpos" if name == "supertag" and "xpos" in present else ""
    return f"{which} has no '{name}' column to score (it has: {', '.join(present) or 'none'}{hint})"


def _check_task(task: str) -> None:
    if task not in SCORING_TASKS:
        raise TaggerError(f"--task must be one of {', '.join(SCORING_TASKS)}, not {task!r}")


def choose_column(task: str, column: str | None, gold: Sequence[Sentence], pred: Sequence[Sentence],
                  gold_name: str, pred_name: str) -> str | None:
    """The tag column to score, or ``None`` for no tagging scores.

    An explicit ``column`` (several joined by commas: each of them), or a task's only column,
    must be present in both; otherwise the first of the task's :data:`TASK_COLUMNS` present in both is scored
    (for ``pos`` one must be), and with ``auto`` the first of :data:`AUTO_COLUMNS` present in
    both, if any (tagging is then simply left out)."""
    if task in ("dep", CONST) and column is None:
        return None
    candidates = TASK_COLUMNS.get(task, AUTO_COLUMNS)
    wanted = column or (candidates[0] if len(candidates) == 1 else None)
    if wanted is not None:
        names = tag_columns(wanted)
        if not names:
            raise TaggerError(f"--column names no column: {wanted!r}")
        for name in names:
            if not has_column(gold, name):
                raise TaggerError(_missing_column("gold file", name, gold), gold_name)
            if not has_column(pred, name):
                raise TaggerError(_missing_column("predicted file", name, pred), pred_name)
        return ",".join(names)
    shared = [name for name in candidates if has_column(gold, name) and has_column(pred, name)]
    if shared:
        return _not_copied(shared, gold, pred, pred_name)
    if task != "auto":
        raise TaggerError(f"no {task.upper()} column ({' or '.join(candidates)}) present in both gold and "
                          f"predicted files", pred_name)
    return None


def _not_copied(shared: list[str], gold: Sequence[Sentence], pred: Sequence[Sentence], pred_name: str) -> str:
    """The first of the tag columns ``shared`` by both files that is not the gold's own word for
    word (copied from the input: a supertagger's pipe output keeps its input's POS), with a
    ``note:`` on stderr when one before it is passed over; the first if all are."""
    copied = [_same_column(gold, pred, name) for name in shared]
    at = copied.index(False) if False in copied else 0
    chosen, passed = shared[at], shared[:at]
    unscored = [name for name in AUTO_COLUMNS if has_column(pred, name) and not has_column(gold, name)]
    if copied[at] and unscored:  # a supertagger's CoNLL-U output against UD gold
        print(f"note: {pred_name}: its {chosen} is the gold's own in every word (copied from the input?); its "
              f"{' and '.join(unscored)} is not in the gold file", file=sys.stderr, flush=True)
    elif passed:
        print(f"note: {pred_name}: its {' and '.join(passed)} is the gold's own in every word (copied from the "
              f"input?), so its {chosen} is scored; --column {passed[0]} scores that", file=sys.stderr, flush=True)
    return chosen


def _note_copied(chosen: str, gold: Sequence[Sentence], pred: Sequence[Sentence], pred_name: str) -> None:
    """A ``note:`` where one side of a file scored for tags and attachment is the gold's own (the
    other predicted): a tagger's CoNLL-U output keeps the input's tree, a parser's its tags."""
    tags = all(_same_column(gold, pred, name) for name in tag_columns(chosen))
    tree = all(_same_column(gold, pred, name) for name in ("head", "deprel"))
    if tree and not tags:
        print(f"note: {pred_name}: its heads and relations are the gold's own in every word (copied from the input "
              "by a tagger?): their 100% attachment says nothing of a parser", file=sys.stderr, flush=True)
    elif tags and not tree:
        print(f"note: {pred_name}: its {chosen} is the gold's own in every word (copied from the input by a "
              "parser?): its 100% says nothing of a tagger", file=sys.stderr, flush=True)


def _same_column(gold: Sequence[Sentence], pred: Sequence[Sentence], name: str) -> bool:
    return all(g.columns.get(name) == p.columns.get(name) for g, p in zip(gold, pred))


def note_other_column(column: str, gold: Sequence[Sentence], pred: Sequence[Sentence], pred_name: str) -> None:
    """A ``note:`` on stderr where the predicted ``column`` agrees with another of the gold's tag
    columns, one the predicted file lacks, more than with its own (a supertagger's tags written
    in XPOS, ``tagger tag --supertag-in xpos``, scored against the gold's XPOS)."""
    others = [name for name in AUTO_COLUMNS if name != column and has_column(gold, name) and not has_column(pred, name)]
    if not others:
        return
    own, (best, other) = _agreement(gold, column, pred, column), max((_agreement(gold, name, pred, column), name)
                                                                     for name in others)
    if best > max(own, 0.5):
        conll = any(isinstance(sentence.raw, dict) for sentence in pred)  # CoNLL names its columns: XPOS is XPOS
        hint = "--supertag-in xpos" if conll and (column, other) == ("xpos", "supertag") else f"--column {other}"
        print(f"note: {pred_name}: its {column} matches the gold's {other} in {100 * best:.2f}% of the words and the "
              f"gold's {column} in {100 * own:.2f}%: are they {other} tags? ({hint})", file=sys.stderr, flush=True)


def _agreement(gold: Sequence[Sentence], gold_column: str, pred: Sequence[Sentence], pred_column: str) -> float:
    """The share of the words (0..1) whose predicted ``pred_column`` is their gold ``gold_column``."""
    same = sum(a == b for g, p in zip(gold, pred) if len(g) == len(p) and g.has(gold_column) and p.has(pred_column)
               for a, b in zip(g.columns[gold_column], p.columns[pred_column]))
    return same / max(1, sum(len(p) for p in pred))


def choose_parsing(task: str, gold: Sequence[Sentence], pred: Sequence[Sentence], gold_name: str,
                   pred_name: str) -> bool:
    """Whether to score attachment: both files have heads (required for ``dep``; never for a
    tagging task)."""
    if task != "auto" and task != "dep":
        return False
    gold_heads, pred_heads = has_column(gold, "head"), has_column(pred, "head")
    if task == "dep":
        if not gold_heads:
            raise TaggerError("gold file has no heads to score", gold_name)
        if not pred_heads:
            raise TaggerError("predicted file has no heads to score", pred_name)
    if gold_heads and pred_heads:  # scored: each must be a tree, as the official scorer requires
        check_trees(gold, gold_name)
        check_trees(pred, pred_name)
    return gold_heads and pred_heads


def check_trees(sentences: Sequence[Sentence], name: str) -> None:
    """A one-line error at the first sentence whose heads are no tree: not one word headed by the
    root, or words whose heads never lead to it (a cycle); the official scorer refuses such a file.
    A sentence with a head missing (``_``) is not checked (its words are scored as unattached).
    A CoNLL-X sentence may have several words on the root (its treebanks do, as the CoNLL-X
    shared task's scorer takes them); UD's have one."""
    for sentence in sentences:
        heads = sentence.columns.get("head") or []
        if not heads or any(head is None or head < 0 for head in heads):
            continue
        roots = sum(head == 0 for head in heads)
        several = roots > 1 and isinstance(sentence.raw, dict) and sentence.raw.get("format") == "conllx"
        problem = (f"{roots} words hang from the root (HEAD 0), where a tree has one" if roots != 1 and not several
                   else _cycle(heads))
        if problem:
            raise TaggerError(problem, sentence.source or name, sentence.line)


def _cycle(heads: Sequence[int]) -> str | None:
    """Which words' heads (1-based, 0 the root) never lead to the root, if some do not."""
    reaches = [True] + [False] * len(heads)
    for start in range(1, len(heads) + 1):
        path, at = [], start
        while not reaches[at]:
            if at in path:
                return f"words {', '.join(map(str, sorted(path[path.index(at):])))} are each other's heads (a cycle)"
            path.append(at)
            at = heads[at - 1]
        for word in path:
            reaches[word] = True
    return None


def choose_const(task: str, gold: Sequence[Sentence], pred: Sequence[Sentence], gold_name: str,
                 pred_name: str) -> bool:
    """Whether to score constituency trees: both sides have them (required for ``const``;
    never for another task)."""
    if task not in ("auto", CONST):
        return False
    gold_trees, pred_trees = has_trees(gold), has_trees(pred)
    if task == CONST:
        if not gold_trees:
            raise TaggerError("gold file has no trees to score (read from .mrg or .trees files)", gold_name)
        if not pred_trees:
            raise TaggerError("predicted file has no trees to score (read from .mrg or .trees files)", pred_name)
    return gold_trees and pred_trees


def has_trees(sentences: Sequence[Sentence]) -> bool:
    """True if any sentence has a constituency tree."""
    return any(sentence.tree is not None for sentence in sentences)


def _check_preterminals(preterminals: str) -> None:
    if preterminals not in PRETERMINALS:
        raise TaggerError(f"--preterminals must be one of {', '.join(PRETERMINALS)}, not {preterminals!r}")


def choose_preterminals(preterminals: str, gold: Sequence[Sentence], pred: Sequence[Sentence],
                        pred_name: str | None = None) -> str:
    """``gold`` or ``predicted``: whose part-of-speech tags the predicted trees are scored with.

    ``auto`` takes the gold trees' where the predicted ones are not of the gold's tagset
    (:func:`~tagger.evaluation.evalb.foreign_tags`: a parser's ``XX`` on plain text, UPOS from a
    UPOS tagger), and says so in a ``note:`` on stderr. That is sound: EVALB scores brackets by
    label and span, never by a preterminal's tag, except that COLLINS.prm deletes punctuation
    by its PTB tag (``, : `` '' .``); with the tags of another tagset the punctuation stays,
    and every sentence is EVALB's ``Length unmatch``. The usual practice for parsers that do not
    tag (Vinyals et al. 2015) is the same: score against the gold tags."""
    _check_preterminals(preterminals)
    if preterminals != "auto":
        return preterminals
    tags = foreign_tags([g.tree for g in gold], [p.tree for p in pred])
    if tags is None:
        return "predicted"
    shown = ", ".join(tags[:3]) + (", ..." if len(tags) > 3 else "")
    print(f"note: {pred_name or 'predicted'}: its trees' part-of-speech tags ({shown}) are not the gold "
          "file's, so they are scored with the gold tags in their place (EVALB's brackets ignore the tags but "
          "for punctuation deletion; its tagging accuracy is then 100 by construction); an XPOS tagger before "
          "the parser gives it PTB tags, --preterminals predicted scores them as they are", file=sys.stderr,
          flush=True)
    return "gold"


def scored(gold: Sequence[Sentence], pred: Sequence[Sentence], column: str | None, parse: bool,
           train_words: set[str] | None, evalb: EvalbParams | None = None,
           pred_name: str | None = None, preterminals: str = "predicted") -> EvaluationResult:
    """The metrics of ``pred`` against ``gold``: tagging of ``column`` (unless ``None``) and
    attachment if ``parse``, over the sentences with words (those need the same words in each
    pair); EVALB's bracket scores of the trees with ``evalb`` parameters, over all the sentences
    (EVALB counts an empty test sentence as skipped and a pair whose words differ as an error;
    ``pred_name`` names the predictions in its errors), the predicted trees with their own tags
    or (``preterminals="gold"``) the gold trees' ones (:func:`choose_preterminals`)."""
    metrics: dict[str, Metric] = {}
    if column is not None or parse:
        tagging, parsing = score([g for g in gold if len(g)], [p for p in pred if len(p)], column, parse, train_words)
        if tagging is not None:
            metrics["tagging"] = tagging
        if parsing is not None:
            metrics["parsing"] = parsing
    if evalb is not None:
        metrics["const"] = score_trees([g.tree for g in gold], [p.tree for p in pred], evalb, pred_name,
                                       [p.line for p in pred], preterminals)
    return EvaluationResult(column, metrics)


def same_words(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> bool:
    """Whether the two files have the same sentences of the same words (gold tokenisation), and,
    where the predicted file writes multiword tokens, the same ones (``3-4 das``: one written
    otherwise, ``dos``, is other text, which the official scorer refuses and the aligned scoring
    says so; a file without any, CoNLL-X's, is scored on its words, and so against a gold file
    of a format without them, AUTO or pipe)."""
    gold, pred = [s for s in gold if len(s)], [s for s in pred if len(s)]
    if len(gold) != len(pred) or any(g.words != p.words for g, p in zip(gold, pred)):
        return False
    if not any(isinstance(g.raw, dict) for g in gold):  # a gold file without multiword tokens (AUTO, pipe, ...)
        return True
    ranges = [_ranges(p) for p in pred]
    return not any(ranges) or all(_ranges(g) == r for g, r in zip(gold, ranges))


def _ranges(sentence: Sentence) -> list[tuple[str, ...]]:
    """The multiword-token lines of a sentence read from CoNLL-U, as (ID, FORM)."""
    raw = sentence.raw if isinstance(sentence.raw, dict) else {}
    return [tuple(line.split("\t", 2)[:2]) for line in raw.get("lines", ()) if "-" in line.split("\t", 1)[0]
            and not line.startswith("#")]


def choose_aligned(task: str, column: str | None, gold: Sequence[Sentence], pred: Sequence[Sentence],
                   gold_name: str, pred_name: str) -> tuple[list[str], bool]:
    """What is scored over aligned words (a system's own tokenisation): the tag columns (``column``;
    by default all four of UPOS, XPOS, FEATS and LEMMA, as the official scorer scores them, ``_``
    against ``_`` counting as right, and so AllTags, MLAS and BLEX with them; none where the
    system file has no tag column at all, a tokenizer's output; a task's own column for ``ccg``;
    none for ``dep``) and whether attachment is (:func:`choose_parsing`). Tokens, Sentences and
    Words are always scored."""
    if column is not None or (task not in ("auto", "pos") and TASK_COLUMNS.get(task)):
        columns = tag_columns(choose_column(task, column, gold, pred, gold_name, pred_name))
    elif task in ("auto", "pos"):
        tagged = any(has_column(pred, name) for name in UD_COLUMNS)
        columns = list(UD_COLUMNS) if tagged else []
        if task == "pos" and not any(name in columns for name in TASK_COLUMNS["pos"]):
            choose_column(task, None, gold, pred, gold_name, pred_name)  # its error: no POS column in both
    else:
        columns = []
    return columns, choose_parsing(task, gold, pred, gold_name, pred_name)


def one_tag_as(pred: Sequence[Sentence], column: str | None, gold: Sequence[Sentence],
               pred_name: str) -> Sequence[Sentence]:
    """``pred`` from a format of one tag a word that does not name it (``word/TAG``: read as
    XPOS) with that tag as the one ``column`` names, where it names one the file lacks (a UPOS
    tagger's or a CCG supertagger's ``tagged`` output against CoNLL-U or AUTO gold), with a
    ``note:`` on stderr; a file that names its columns (CoNLL) is left as it is. Without a
    ``column``, where the gold file has other tag columns, a note says which it is scored as."""
    if not pred or any(isinstance(sentence.raw, dict) for sentence in pred):
        return pred
    present = [name for name in AUTO_COLUMNS if has_column(pred, name)]
    names = tag_columns(column)
    if len(present) != 1:
        return pred
    if not names:
        others = [name for name in AUTO_COLUMNS if name != present[0] and has_column(gold, name)]
        if not others:
            return pred
        agree = {name: _agreement(gold, name, pred, present[0]) for name in [present[0], *others]}
        best = max(others, key=agree.__getitem__)
        if agree[best] <= agree[present[0]]:
            how = (f"is scored as the gold's {present[0]}" if has_column(gold, present[0]) else
                   f"(read as {present[0]}) is not in the gold file")
            print(f"note: {pred_name}: its one tag column {how}; --column {others[0]} scores it as the gold's "
                  f"{others[0]}", file=sys.stderr, flush=True)
            return pred
        names = [best]  # the gold's column that its tags are (a supertagger's word/CATEGORY)
    if len(names) != 1 or has_column(pred, names[0]) or not has_column(gold, names[0]):  # (the gold's lack: an error)
        return pred
    print(f"note: {pred_name}: its one tag column is scored as {names[0]}"
          + ("" if column else f", the gold's column it matches best; --column {present[0]} scores it as the "
                               f"gold's {present[0]}"), file=sys.stderr, flush=True)
    return [replace(sentence, columns={**{key: value for key, value in sentence.columns.items() if key != present[0]},
                                       names[0]: sentence.columns[present[0]]}) for sentence in pred]


def evaluate_sentences(gold: Sequence[Sentence], pred: Sequence[Sentence], *, column: str | None = None,
                       task: str = "auto", train_words: set[str] | None = None, gold_name: str = "gold",
                       pred_name: str = "predicted", evalb_params: EvalbParams | None = None,
                       aligned: bool | None = None, preterminals: str = "auto") -> EvaluationResult:
    """Score ``pred`` against ``gold`` as :func:`evaluate_files` does; ``gold_name``/``pred_name``
    name them in errors."""
    _check_task(task)
    _check_preterminals(preterminals)
    pred = one_tag_as(pred, column, gold, pred_name)
    const = choose_const(task, gold, pred, gold_name, pred_name)
    if const and column is None:  # trees on both sides: EVALB's scores (its tagging accuracy included)
        chosen, parse = None, False
    elif aligned or (aligned is None and not same_words(gold, pred)):  # the system's own tokens
        columns, parse = choose_aligned(task, column, gold, pred, gold_name, pred_name)
        metric = score_aligned(gold, pred, columns, parse, gold_name, pred_name)
        return EvaluationResult(",".join(columns) or None, {"aligned": metric})
    else:
        with_words = [s for s in gold if len(s)], [s for s in pred if len(s)]
        chosen = choose_column(task, column, *with_words, gold_name, pred_name)
        if chosen is not None and "," not in chosen:
            note_other_column(chosen, *with_words, pred_name)
        parse = choose_parsing(task, *with_words, gold_name, pred_name)
        if parse and task == "auto" and chosen is not None:
            _note_copied(chosen, *with_words, pred_name)
    if chosen is None and not parse and not const:
        raise TaggerError("nothing to score: no tag column, heads or trees present in both gold and predicted files",
                          pred_name)
    if not const:
        return scored(gold, pred, chosen, parse, train_words, None, pred_name)
    whose = choose_preterminals(preterminals, gold, pred, pred_name)
    return scored(gold, pred, chosen, parse, train_words, evalb_params or COLLINS, pred_name, whose)


def evaluate_files(gold: str | os.PathLike, pred: str | os.PathLike, *, format: str = "auto",
                   pred_format: str | None = None, columns: ColumnSpec = None, column: str | None = None,
                   task: str = "auto", train_words: set[str] | None = None,
                   evalb_params: EvalbParams | None = None, aligned: bool | None = None,
                   preterminals: str = "auto", supertag_in: str = "misc") -> EvaluationResult:
    """Score the predicted file ``pred`` (``-``: stdin) against the gold file ``gold``.

    ``format`` is the gold file's format (``auto`` detects it), ``pred_format`` the predicted
    one's (default: ``format``); ``columns`` the layout of column files. ``task`` says what to
    score: ``auto`` the trees if both files have them (.mrg, .trees), else the tag column
    (:func:`choose_column`) and the heads present in both, ``pos``/``ccg`` a tag column, ``dep``
    heads, ``const`` trees (as EVALB with ``evalb_params``, default :data:`COLLINS`); ``column``
    names the tag column. Accuracy on words unseen in training needs ``train_words``
    (:func:`training_words`).

    Files whose words differ (a system's own tokenisation: raw text in) are scored as the CoNLL
    2018 shared task scores them (:mod:`tagger.evaluation.aligned`; the result's only metric is
    ``aligned``): F1 of Tokens, Sentences and Words, and over aligned words of the tag columns
    (:func:`choose_aligned`) and attachment; the two files must hold the same text. ``aligned``
    True scores so even files with the same words, False never (words that differ are then an
    error, as for gold tokenisation). ``preterminals`` says whose part-of-speech tags predicted
    trees are scored with (:data:`PRETERMINALS`, :func:`choose_preterminals`): by default the
    gold trees' where the predicted ones are of another tagset (a parser's ``XX``, UPOS), with
    a ``note:`` on stderr. ``supertag_in``: where a predicted CoNLL file carries CCG supertags
    (``misc``, ``xpos``: :data:`tagger.formats.supertags.SUPERTAG_IN`), as ``tagger tag
    --supertag-in`` wrote them (a gold file's are in MISC, as ``tagger convert`` writes them, or its own column)."""
    _check_task(task)
    if supertag_in not in SUPERTAG_IN:
        raise TaggerError(f"--supertag-in must be one of {', '.join(SUPERTAG_IN)}, not {supertag_in!r}")
    gold_sentences = read_scored(gold, format, columns, "no sentences in gold file", blank_lines=True)
    pred_sentences = read_scored(pred, pred_format or format, columns, "no sentences in predicted file",
                                 blank_lines=True, supertag_in=supertag_in)
    return evaluate_sentences(gold_sentences, pred_sentences, column=column, task=task, train_words=train_words,
                              gold_name=os.fspath(gold), pred_name=os.fspath(pred), evalb_params=evalb_params,
                              aligned=aligned, preterminals=preterminals)


def model_targets(model: Any, column: str | None, model_path: str) -> tuple[str | None, bool]:
    """What a model's predictions are scored on, as the model declares it (``output_columns``):
    the tag columns it predicts, joined by commas (``None`` for a parser; ``column``, one or
    several, must be among them and names those to score) and whether it predicts heads."""
    outputs = list(model.output_columns)
    tags = [name for name in outputs if name not in TREE_COLUMNS and name != TREE]
    if column is not None:
        names = tag_columns(column)
        other = next((name for name in names if name not in tags), None)
        if other is not None or not names:
            raise TaggerError(f"--column {column}: this model predicts {' and '.join(tags) or 'no tag column'}, "
                              f"not {other or column}", model_path)
        return ",".join(names), "head" in outputs
    return ",".join(tags) or None, "head" in outputs


def _data_files(data: str | os.PathLike, split: str | None, task: str, meta: dict[str, Any]) -> Any:
    """``data`` itself, or with ``split`` the test files of that folder of WSJ files, split by
    sections of ``task`` (``auto``: the task the model was trained for)."""
    if split is None:
        return data
    from tagger.training.run import split_files

    sections = (meta.get("task") or "pos") if task == "auto" else task
    return split_files(os.fspath(data), split, sections)["test"]


def _predictions(model: Any, gold: Sequence[Sentence], beta: float | None) -> tuple[list[Sentence], list | None]:
    """Copies of ``gold`` annotated with the model's predictions; with ``beta``, also each
    token's kept tags, best first (one pass gives both: the 1-best tag is the first kept)."""
    from tagger.inference import annotate, multitag_decoder

    pred = [replace(sentence, columns=dict(sentence.columns), tree=None) for sentence in gold]  # trees: the model's
    decode = multitag_decoder(model, None, beta) if beta is not None else None
    predictions = annotate(model, pred, 4096, decode)
    return pred, predictions if decode is not None else None


def evaluate_model(model_path: str, data: str | os.PathLike, *, format: str = "auto", columns: ColumnSpec = None,
                   column: str | None = None, beta: float | None = None, device: str = "cpu",
                   precision: str = "fp32", allow_missing_columns: bool = False,
                   train_words: set[str] | None = None, split: str | None = None,
                   task: str = "auto", evalb_params: EvalbParams | None = None,
                   beam: int | None = None, constrained: bool | None = None) -> EvaluationResult:
    """Tag or parse ``data`` with the model at ``model_path`` and score it against its gold columns.

    What is scored is what the model predicts (:func:`model_targets`): its tag columns (each,
    and their mean; ``column`` chooses some), and
    attachment for a parser, the trees (as EVALB with ``evalb_params``, default :data:`COLLINS`)
    for a model that fills :attr:`Sentence.tree` (it declares the output column ``tree``);
    ``data`` must have that gold annotation. ``beta`` adds CCG
    multi-tagging (tags with p >= beta * p_best) of the model's first column. Unseen-word accuracy uses ``train_words``, or
    else the model's training file when it is still where it was. A parser refuses data
    without the POS/FEATS it reads unless ``allow_missing_columns``. With ``split`` (``wsj``,
    ``sample``) ``data`` is a folder of WSJ files and its test part is scored, by the sections
    of ``task`` (``auto``: the model's own task). ``beam``, ``constrained``: a constituency parser's decoding
    (:meth:`~tagger.models.base.Model.set_decoding`)."""
    from tagger import model_file
    from tagger.devices import resolve_device
    from tagger.inference import InputCheck
    from tagger.modules.precision import apply
    from tagger.pipeline import split_raw

    _check_task(task)
    model_path = resources.model_path(model_path)  # a shipped model's name: its file
    model, meta = model_file.load(model_path, resolve_device(device))
    if split_raw(model)[1] is None:
        raise TaggerError("a tokenizer reads raw text and scores nothing on given tokens: score what it writes with "
                          "tagger evaluate --gold GOLD --pred PRED", os.fspath(model_path))
    apply(model, precision, in_place=True)
    model.set_decoding(beam, constrained)
    model_targets(model, column, model_path)  # a --column the model lacks: refused before reading the data
    source = _data_files(data, split, task, meta)
    gold = read_scored(source, format, columns, "no sentences to evaluate")
    InputCheck(model, allow_missing_columns, meta)(gold)
    return score_model(model, meta, model_path, gold, _name(source), column=column, beta=beta,
                       train_words=train_words, evalb_params=evalb_params, columns=columns)


def score_model(model: Any, meta: dict[str, Any], model_path: str, gold: list[Sentence], data_name: str, *,
                column: str | None = None, beta: float | None = None, train_words: set[str] | None = None,
                evalb_params: EvalbParams | None = None, columns: ColumnSpec = None) -> EvaluationResult:
    """:func:`evaluate_model` of a loaded ``model`` (its file's ``meta``) on the ``gold`` sentences
    (read from ``data_name``, checked for what the model reads); the Python API's
    :meth:`tagger.api.Model.evaluate` too. Unseen words are those not in ``train_words``, else
    not in the model's training file where that is still there (read with ``columns``)."""
    chosen, parse = model_targets(model, column, model_path)
    if beta is not None and chosen is not None and tag_columns(chosen)[0] != model.output_columns[0]:
        raise TaggerError(f"--beta: multi-tagging is of the model's first column, {model.output_columns[0]}: "
                          f"score it first (--column {model.output_columns[0]},...) or leave --column out", model_path)
    for name in tag_columns(chosen):
        if not has_column(gold, name):
            raise TaggerError(f"no gold '{name}' column to score the model's tags against", data_name)
    if parse and not has_column(gold, "head"):
        raise TaggerError("no gold heads to score the parser against", data_name)
    const = TREE in model.output_columns
    if const and not has_trees(gold):
        raise TaggerError("no gold trees to score the parser against (read from .mrg or .trees files)", data_name)
    if train_words is None and meta.get("train") and os.path.exists(meta["train"]):
        train_words = training_words(meta["train"], "auto", columns)
    pred, multitags = _predictions(model, gold, beta)
    result = scored(gold, pred, chosen, parse, train_words, (evalb_params or COLLINS) if const else None, data_name)
    if multitags is not None and chosen is not None:
        multitag, first = MultiTagMetric(beta), tag_columns(chosen)[0]
        for sentence, tags in zip(gold, multitags):
            multitag.update(sentence.column(first), [{tag for tag, _ in token} for token in tags])
        result.metrics["multitag"] = multitag
    return result


@dataclass(frozen=True)
class ScoreRequest:
    """What ``tagger evaluate`` scores and how, as its options say, for files and models alike:
    the command, :func:`tagger.score` and the CLI's ``--model`` run build it and call
    :meth:`files` or :meth:`model`. ``train`` (read in ``train_format``): the training file, for
    accuracy on unseen words; ``evalb_params``: an EVALB parameter file (default COLLINS.prm)."""

    format: str = "auto"
    pred_format: str | None = None
    columns: ColumnSpec = None
    column: str | None = None
    task: str = "auto"
    aligned: bool | None = None
    preterminals: str = "auto"
    train: str | os.PathLike | None = None
    train_format: str = "auto"
    evalb_params: str | os.PathLike | None = None
    supertag_in: str = "misc"

    def files(self, gold: str | os.PathLike, pred: str | os.PathLike) -> EvaluationResult:
        """:func:`evaluate_files` of ``pred`` against ``gold``."""
        params, words = self.params(), self.train_words()
        return evaluate_files(gold, pred, format=self.format, pred_format=self.pred_format, columns=self.columns,
                              column=self.column, task=self.task, train_words=words, evalb_params=params,
                              aligned=self.aligned, preterminals=self.preterminals, supertag_in=self.supertag_in)

    def model(self, model_path: str, data: str | os.PathLike, *, beta: float | None = None, device: str = "cpu",
              threads: int | None = None, precision: str = "fp32", allow_missing_columns: bool = False,
              split: str | None = None, beam: int | None = None,
              constrained: bool | None = None) -> EvaluationResult:
        """:func:`evaluate_model` of the model at ``model_path`` on ``data`` (``threads``: torch's)."""
        if self.supertag_in != "misc":
            raise TaggerError("--supertag-in says where predicted files carry supertags: it goes with --gold and "
                              "--pred (a model's own predictions are scored as it makes them)")
        params, words = self.params(), self.train_words()
        if threads:
            import torch

            torch.set_num_threads(threads)
        return evaluate_model(model_path, data, format=self.format, columns=self.columns, column=self.column,
                              beta=beta, device=device, precision=precision,
                              allow_missing_columns=allow_missing_columns, train_words=words,
                              split=split, task=self.task, evalb_params=params, beam=beam,
                              constrained=constrained)

    def train_words(self) -> set[str] | None:
        """The words of ``train`` (None without it)."""
        return training_words(self.train, self.train_format, self.columns) if self.train else None

    def params(self) -> EvalbParams | None:
        """The EVALB parameters of ``evalb_params`` (None: the built-in COLLINS.prm)."""
        from tagger.evaluation.evalb import read_params

        return read_params(self.evalb_params) if self.evalb_params else None


__all__ = ["EvaluationResult", "ScoreRequest", "evaluate_files", "evaluate_model", "evaluate_sentences", "training_words",
           "same_words", "choose_aligned", "choose_preterminals", "model_targets", "tag_columns", "TASK_COLUMNS",
           "AUTO_COLUMNS", "CONST", "PRETERMINALS", "TREE"]
