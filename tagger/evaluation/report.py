"""Scoring predicted sentences against gold ones, and showing the result (rich tables, JSON).

Gold and predicted sentences are paired in order; a pair whose words differ is an error that
names the predicted file and line (gold tokenisation is assumed here, as in ``BENCHMARKS.md``;
a system's own tokenisation is scored by :mod:`tagger.evaluation.aligned`), and so is a file
with more sentences than the other.
"""

from __future__ import annotations

import json
from typing import Callable, Iterable, Iterator

from rich.console import Console
from rich.table import Table

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.evaluation.aligned import AlignedMetric
from tagger.evaluation.evalb import BracketMetric, EvalbTotals
from tagger.evaluation.metrics import (
    MISSING,
    PRF,
    AttachmentMetric,
    ColumnsMetric,
    Metric,
    MultiTagMetric,
    TagMetric,
    punct_flags,
)


def paired(gold: Iterable[Sentence], pred: Iterable[Sentence]) -> Iterator[tuple[Sentence, Sentence]]:
    """Yield ``(gold, pred)`` sentence pairs, checking that they have the same words.

    Raises :class:`TaggerError` at the predicted sentence (file and line) when the word counts
    or forms differ, and when one side runs out of sentences before the other.
    """
    gold_it, pred_it = iter(gold), iter(pred)
    count = 0
    last_gold: Sentence | None = None
    last_pred: Sentence | None = None
    while True:
        g = next(gold_it, None)
        p = next(pred_it, None)
        if g is None and p is None:
            return
        if g is None:
            assert p is not None
            gold_name = f"gold file {last_gold.source}" if last_gold is not None else "gold file"
            raise TaggerError(
                f"predicted file has more sentences than the {gold_name} ({count})", p.source, p.line
            )
        if p is None:
            where = f"after {count} sentence{'s' * (count != 1)}" if count else "with no sentences"
            raise TaggerError(
                f"predicted file ends {where}, but the gold file has more (next at {g.source}:{g.line})",
                last_pred.source if last_pred is not None else None,
                last_pred.line if last_pred is not None else None,
            )
        _check_same_words(g, p)
        count += 1
        last_gold, last_pred = g, p
        yield g, p


def _check_same_words(gold: Sentence, pred: Sentence) -> None:
    if gold.words == pred.words:
        return
    first = next(
        (i for i, (g, p) in enumerate(zip(gold.words, pred.words)) if g != p),
        min(len(gold.words), len(pred.words)),
    )
    here = f"'{pred.words[first]}'" if first < len(pred.words) else "the end of the sentence"
    there = f"'{gold.words[first]}'" if first < len(gold.words) else "the end of the sentence"
    counts = ""
    if len(gold.words) != len(pred.words):
        counts = f"sentence has {len(pred.words)} word{'s' * (len(pred.words) != 1)}, gold has {len(gold.words)}; "
    raise TaggerError(
        f"{counts}word {first + 1} is {here} but {there} in the gold file {gold.source}:{gold.line}",
        pred.source,
        pred.line,
    )


def tag_values(sentence: Sentence, column: str) -> list[str]:
    """The sentence's values of a tag column, ``_`` for every word if it lacks the column."""
    values = sentence.columns.get(column)
    return list(values) if values is not None else [MISSING] * len(sentence)


def head_values(sentence: Sentence) -> list[int]:
    """The sentence's heads, ``-1`` (missing) for every word if it lacks them."""
    values = sentence.columns.get("head")
    return list(values) if values is not None else [-1] * len(sentence)


def score(
    gold: Iterable[Sentence],
    pred: Iterable[Sentence],
    column: str | None,
    parse: bool,
    train_words: set[str] | None = None,
) -> tuple[TagMetric | ColumnsMetric | None, AttachmentMetric | None]:
    """Score tagging of ``column`` (unless ``None``; several joined by commas give a
    :class:`ColumnsMetric`) and attachment (if ``parse``) in one pass.

    Punctuation for the attachment scores is decided from the gold sentence's tags.
    """
    names = column.split(",") if column else []
    columns = ColumnsMetric(names) if len(names) > 1 else None
    tagging = columns or (TagMetric() if column is not None else None)
    parsing = AttachmentMetric() if parse else None
    for g, p in paired(gold, pred):
        if columns is not None:
            columns.update(g.words, {n: tag_values(g, n) for n in names}, {n: tag_values(p, n) for n in names}, train_words)
        elif tagging is not None and column is not None:
            tagging.update(g.words, tag_values(g, column), tag_values(p, column), train_words)
        if parsing is not None:
            parsing.update(
                head_values(g),
                tag_values(g, "deprel"),
                head_values(p),
                tag_values(p, "deprel"),
                punct_flags(g),
            )
    return tagging, parsing


def score_tagging(
    gold: Iterable[Sentence],
    pred: Iterable[Sentence],
    column: str,
    train_words: set[str] | None = None,
) -> TagMetric:
    """Tagging accuracy of ``pred`` against ``gold`` on ``column`` (e.g. ``upos``; ``upos,feats``
    gives a :class:`ColumnsMetric`)."""
    tagging, _ = score(gold, pred, column, parse=False, train_words=train_words)
    assert tagging is not None
    return tagging  # type: ignore[return-value]


def score_parsing(gold: Iterable[Sentence], pred: Iterable[Sentence]) -> AttachmentMetric:
    """UAS/LAS of ``pred`` against ``gold`` (all words, and without punctuation)."""
    _, parsing = score(gold, pred, None, parse=True)
    assert parsing is not None
    return parsing


# --- rendering -------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100.0 * value:.2f}"


def _fraction(correct: int, total: int) -> str:
    return f"{correct:,}/{total:,}"


def _prf_table(title: str, first: str, rows: dict[str, PRF], top: int) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column(first)
    for name in ("gold", "pred", "correct", "P %", "R %", "F1 %"):
        table.add_column(name, justify="right")
    for name, prf in list(rows.items())[:top]:
        table.add_row(
            name,
            f"{prf.gold:,}",
            f"{prf.predicted:,}",
            f"{prf.correct:,}",
            _pct(prf.precision),
            _pct(prf.recall),
            _pct(prf.f1),
        )
    return table


def _render_tagging(metric: TagMetric, console: Console, title: str, top: int) -> None:
    overall = Table(title=title, title_justify="left")
    overall.add_column("metric")
    overall.add_column("%", justify="right")
    overall.add_column("correct/total", justify="right")
    overall.add_row("token accuracy", _pct(metric.accuracy), _fraction(metric.correct, metric.tokens))
    if metric.tracks_unseen:
        overall.add_row(
            "unseen-word accuracy",
            _pct(metric.unseen_accuracy),
            _fraction(metric.unseen_correct, metric.unseen_tokens),
        )
    overall.add_row(
        "sentence accuracy",
        _pct(metric.sentence_accuracy),
        _fraction(metric.sentences_correct, metric.sentences),
    )
    console.print(overall)
    if top > 0 and metric.tokens:
        console.print(_prf_table(f"per tag (top {top} by gold frequency)", "tag", metric.per_tag(), top))
    confused = metric.most_confused(min(10, top)) if top > 0 else []
    if confused:
        table = Table(title="most confused", title_justify="left")
        table.add_column("gold")
        table.add_column("predicted")
        table.add_column("count", justify="right")
        for g, p, count in confused:
            table.add_row(g, p, f"{count:,}")
        console.print(table)


def _render_columns(metric: ColumnsMetric, console: Console, top: int) -> None:
    """Each column's accuracy, all of them at once and their mean; then each column's tables."""
    overall = Table(title=f"tagging ({', '.join(metric.columns)})", title_justify="left")
    overall.add_column("column")
    overall.add_column("token %", justify="right")
    overall.add_column("correct/total", justify="right")
    if metric.all_tags.tracks_unseen:
        overall.add_column("unseen-word %", justify="right")
    overall.add_column("sentence %", justify="right")

    def row(name: str, m: TagMetric) -> None:
        unseen = [_pct(m.unseen_accuracy)] if metric.all_tags.tracks_unseen else []
        overall.add_row(name, _pct(m.accuracy), _fraction(m.correct, m.tokens), *unseen, _pct(m.sentence_accuracy))

    for name, m in metric.columns.items():
        row(name, m)
    row("all tags", metric.all_tags)
    overall.add_row("mean of the columns", _pct(metric.accuracy), "", *([""] if metric.all_tags.tracks_unseen else []), "",
                    style="bold")
    console.print(overall)
    for name, m in metric.columns.items():
        _render_tagging(m, console, f"tagging ({name})", top)


def _render_parsing(metric: AttachmentMetric, console: Console, title: str, top: int, punct: bool) -> None:
    # The convention asked for is bold and starred; the other one is still shown.
    all_style, no_style = ("bold", "") if punct else ("", "bold")
    caption = "* main figures" + ("" if punct else " (--punct: all words)")
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    table.add_column("metric")
    table.add_column("all words %" + (" *" if punct else ""), justify="right", style=all_style)
    table.add_column("no punct %" + ("" if punct else " *"), justify="right", style=no_style)
    table.add_row("UAS", _pct(metric.all.uas), _pct(metric.no_punct.uas))
    table.add_row("LAS", _pct(metric.all.las), _pct(metric.no_punct.las))
    table.add_row("label accuracy", _pct(metric.all.label_accuracy), _pct(metric.no_punct.label_accuracy))
    table.add_row("words", f"{metric.all.words:,}", f"{metric.no_punct.words:,}")
    console.print(table)
    nonprojective = metric.nonprojective
    if nonprojective.gold:
        arcs = Table(title="non-projective arcs (all words)", title_justify="left")
        arcs.add_column("metric")
        arcs.add_column("%", justify="right")
        arcs.add_column("correct/total", justify="right")
        arcs.add_row("recall (head right)", _pct(nonprojective.recall),
                     _fraction(nonprojective.gold_heads, nonprojective.gold))
        arcs.add_row("labelled recall", _pct(nonprojective.labelled_recall),
                     _fraction(nonprojective.gold_both, nonprojective.gold))
        arcs.add_row("precision (head right)", _pct(nonprojective.precision) if nonprojective.predicted else "-",
                     _fraction(nonprojective.predicted_heads, nonprojective.predicted))
        console.print(arcs)
    if top > 0 and metric.all.words:
        title = f"per label (head and label right; top {top} by gold frequency)"
        console.print(_prf_table(title, "label", metric.per_label(), top))


def _render_multitag(metric: MultiTagMetric, console: Console, title: str) -> None:
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("correct/total", justify="right")
    table.add_row("multi-tag accuracy %", _pct(metric.accuracy), _fraction(metric.correct, metric.tokens))
    table.add_row("tags per word", f"{metric.tags_per_word:.3f}", _fraction(metric.tags, metric.tokens))
    table.add_row(
        "sentence accuracy %",
        _pct(metric.sentence_accuracy),
        _fraction(metric.sentences_correct, metric.sentences),
    )
    console.print(table)


def _render_brackets(metric: BracketMetric, console: Console, title: str) -> None:
    """EVALB's two summaries side by side."""
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    table.add_column("all", justify="right", style="bold")
    table.add_column(f"len<={metric.params.cutoff_len}", justify="right")

    def row(name: str, value: Callable[[EvalbTotals], str]) -> None:
        table.add_row(name, value(metric.all), value(metric.short))

    row("bracket recall %", lambda t: f"{t.recall:.2f}")
    row("bracket precision %", lambda t: f"{t.precision:.2f}")
    row("bracket F1 %", lambda t: f"{t.fmeasure:.2f}")
    row("complete match %", lambda t: f"{t.complete_match:.2f}")
    row("average crossing", lambda t: f"{t.average_crossing:.2f}")
    row("no crossing %", lambda t: f"{t.no_crossing_rate:.2f}")
    row("2 or less crossing %", lambda t: f"{t.two_or_less_rate:.2f}")
    gold_tags = " (gold tags)" if metric.preterminals == "gold" else ""  # 100 by construction: say why
    row(f"tagging accuracy %{gold_tags}", lambda t: f"{t.tagging_accuracy:.2f}")
    row("brackets matched/gold/test", lambda t: f"{t.matched:,}/{t.gold:,}/{t.test:,}")
    row("sentences valid/error/skipped", lambda t: f"{t.valid:,}/{t.errors:,}/{t.skipped:,}")
    console.print(table)


def _render_aligned(metric: AlignedMetric, console: Console, title: str) -> None:
    """The shared task's table: precision, recall, F1 and accuracy over the aligned words."""
    caption = (f"* main figure ({metric.main} F1). F1 over words aligned as the CoNLL 2018 shared task aligns them; "
               "aligned %: of the words aligned")
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    table.add_column("metric")
    for name in ("P %", "R %", "F1 %", "aligned %", "correct", "gold", "pred"):
        table.add_column(name, justify="right")
    for name, m in metric.scores.items():
        table.add_row(name + (" *" if name == metric.main else ""), _pct(m.precision), _pct(m.recall), _pct(m.f1),
                      _pct(m.aligned_accuracy), f"{m.correct:,}", f"{m.gold:,}", f"{m.predicted:,}",
                      style="bold" if name == metric.main else None)
    console.print(table)


def render_table(
    metric: Metric,
    console: Console,
    title: str | None = None,
    top: int = 20,
    punct: bool = False,
) -> None:
    """Print ``metric`` as rich tables: overall figures, then per-tag/label and confusions.

    ``top`` limits the per-tag/per-label rows and (to at most 10) the most-confused pairs (0
    hides those tables); ``punct`` says which
    attachment convention to highlight (all words if true, punctuation excluded otherwise).
    """
    if isinstance(metric, TagMetric):
        _render_tagging(metric, console, title or "tagging", top)
    elif isinstance(metric, ColumnsMetric):
        _render_columns(metric, console, top)
    elif isinstance(metric, AttachmentMetric):
        _render_parsing(metric, console, title or "attachment", top, punct)
    elif isinstance(metric, MultiTagMetric):
        beta = "" if metric.beta is None else f", tags with p >= {metric.beta:g} x the best's"
        _render_multitag(metric, console, (title or "multi-tagging") + beta)
    elif isinstance(metric, BracketMetric):
        _render_brackets(metric, console, title or "brackets (EVALB)")
    elif isinstance(metric, AlignedMetric):
        _render_aligned(metric, console, title or "system tokenisation (CoNLL 2018)")
    else:
        raise TypeError(f"no table for {type(metric).__name__}")


def to_json(metric: Metric) -> str:
    """The metric's :meth:`to_dict` as one line of JSON."""
    return json.dumps(metric.to_dict(), ensure_ascii=False)
