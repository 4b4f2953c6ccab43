"""``tagger evaluate``: score predicted files against gold ones, or a model on a data file.

Thin over :mod:`tagger.evaluation`: reads both files with :func:`tagger.formats.read`, decides
what can be scored (a tag column present in both; heads present in both), and prints rich
tables or one JSON object.
"""

from __future__ import annotations

import json
import sys

import click

from tagger import formats
from tagger.cli.progress import make_console
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.evaluation.metrics import Metric
from tagger.evaluation.report import render_table, score
from tagger.formats.columns import parse_column_spec
from tagger.formats.supertags import supertags_from_conll

FORMAT_NAMES = ["auto", *sorted(formats.FORMATS)]  # input formats: auto detects

#: Tag columns in the order ``--column`` falls back through when not given.
TAG_COLUMNS = ("upos", "xpos", "supertag", "tag")


def read_sentences(path: str, fmt: str, columns_spec: str | None) -> list[Sentence]:
    """All sentences of ``path`` (``-`` for stdin) in format ``fmt`` (``auto`` detects it).

    ``columns_spec`` (e.g. ``form=2,tag=6``) is required for, and only used with, the
    ``columns`` format.
    """
    source = sys.stdin if path == "-" else path
    if fmt == "columns":
        if not columns_spec:
            raise TaggerError("the 'columns' format needs --columns, e.g. --columns form=2,tag=6", path)
        sentences = formats.read(source, fmt, columns=parse_column_spec(columns_spec))
    else:
        sentences = formats.read(source, fmt)
    # CoNLL files carry CCG supertags in MISC (``supertag=CAT``, as ``tagger convert`` writes them).
    return [supertags_from_conll(sentence, "misc") for sentence in sentences]


def training_words(path: str, fmt: str, columns_spec: str | None) -> set[str]:
    """The word forms of a training file (for unseen-word accuracy)."""
    return {word for sentence in read_sentences(path, fmt, columns_spec) for word in sentence.words}


def has_column(sentences: list[Sentence], name: str) -> bool:
    """True if any sentence has column ``name`` annotated (not all ``_``/-1)."""
    return any(sentence.has(name) for sentence in sentences)


def missing_column(which: str, name: str, sentences: list[Sentence]) -> str:
    """The message for a ``--column`` that a file lacks, naming the tag columns it has."""
    present = sorted({c for s in sentences[:100] for c in s.columns if c not in ("head", "deprel") and s.has(c)})
    return f"{which} has no '{name}' column to score (it has: {', '.join(present) or 'none'})"


def choose_column(
    task: str,
    column: str | None,
    gold: list[Sentence],
    pred: list[Sentence],
    gold_path: str,
    pred_path: str,
) -> str | None:
    """The tag column to score, or ``None`` for no tagging scores.

    An explicit ``--column`` (or ``--task ccg``, meaning ``supertag``) must be present in both
    files; otherwise the first of :data:`TAG_COLUMNS` present in both is used (for ``--task
    pos`` one must exist; for ``auto`` tagging is simply left out).
    """
    if task == "dep" and column is None:
        return None
    wanted = column or ("supertag" if task == "ccg" else None)
    if wanted is not None:
        if not has_column(gold, wanted):
            raise TaggerError(missing_column("gold file", wanted, gold), gold_path)
        if not has_column(pred, wanted):
            raise TaggerError(missing_column("predicted file", wanted, pred), pred_path)
        return wanted
    candidates = TAG_COLUMNS[:2] if task == "pos" else TAG_COLUMNS
    for name in candidates:
        if has_column(gold, name) and has_column(pred, name):
            return name
    if task == "pos":
        raise TaggerError("no POS column (upos or xpos) present in both gold and predicted files", pred_path)
    return None


def choose_parsing(
    task: str, gold: list[Sentence], pred: list[Sentence], gold_path: str, pred_path: str
) -> bool:
    """Whether to score attachment: both files have heads (required for ``--task dep``)."""
    if task in ("pos", "ccg"):
        return False
    gold_heads, pred_heads = has_column(gold, "head"), has_column(pred, "head")
    if task == "dep":
        if not gold_heads:
            raise TaggerError("gold file has no heads to score", gold_path)
        if not pred_heads:
            raise TaggerError("predicted file has no heads to score", pred_path)
    return gold_heads and pred_heads


def evaluate_files(
    gold_path: str,
    pred_path: str,
    gold_format: str,
    pred_format: str,
    columns_spec: str | None,
    task: str,
    column: str | None,
    train_words: set[str] | None,
) -> tuple[str | None, dict[str, Metric]]:
    """Score ``pred_path`` against ``gold_path``.

    Returns the tag column scored (``None`` if none) and the metrics, under the keys
    ``"tagging"`` (:class:`TagMetric`) and ``"parsing"`` (:class:`AttachmentMetric`) as present.
    """
    gold = read_sentences(gold_path, gold_format, columns_spec)
    pred = read_sentences(pred_path, pred_format, columns_spec)
    if not gold:
        raise TaggerError("no sentences in gold file", gold_path)
    if not pred:
        raise TaggerError("no sentences in predicted file", pred_path)
    chosen = choose_column(task, column, gold, pred, gold_path, pred_path)
    parse = choose_parsing(task, gold, pred, gold_path, pred_path)
    if chosen is None and not parse:
        raise TaggerError(
            "nothing to score: no tag column or heads present in both gold and predicted files", pred_path
        )
    return chosen, scored(gold, pred, chosen, parse, train_words)


def scored(gold: list[Sentence], pred: list[Sentence], column: str | None, parse: bool,
           train_words: set[str] | None) -> dict[str, Metric]:
    """The metrics of ``pred`` against ``gold`` under ``"tagging"`` and/or ``"parsing"``."""
    tagging, parsing = score(gold, pred, column, parse, train_words)
    results: dict[str, Metric] = {}
    if tagging is not None:
        results["tagging"] = tagging
    if parsing is not None:
        results["parsing"] = parsing
    return results


def evaluate_model(
    model_path: str,
    data_path: str,
    data_format: str,
    columns_spec: str | None,
    beta: float | None,
    device: str,
    train_words: set[str] | None,
    precision: str = "fp32",
    column: str | None = None,
    allow_missing_columns: bool = False,
) -> tuple[str | None, dict[str, Metric]]:
    """Tag/parse ``data_path`` with the model at ``model_path`` and score it against its gold columns.

    Returns what :func:`evaluate_files` does: the tag column scored and the metrics under
    ``"tagging"``/``"parsing"``, plus ``"multitag"`` (:class:`MultiTagMetric`) when ``beta``
    is given. Unseen-word accuracy uses ``train_words``, or else the model's own training file
    when it is still where it was. A parser refuses DATA without the POS/FEATS it reads
    (:class:`tagger.inference.InputCheck`) unless ``allow_missing_columns``.
    """
    import copy
    import os

    from tagger import model_file
    from tagger.evaluation.metrics import MultiTagMetric
    from tagger.inference import InputCheck, predict
    from tagger.devices import resolve_device
    from tagger.modules.precision import apply
    from tagger.tagging import multitag_decoder

    model, meta = model_file.load(model_path, resolve_device(device))
    apply(model, precision, in_place=True)
    gold = read_sentences(data_path, data_format, columns_spec)
    if not gold:
        raise TaggerError("no sentences to evaluate", data_path)
    InputCheck(model, allow_missing_columns, meta)(gold)
    if train_words is None and meta.get("train") and os.path.exists(meta["train"]):
        train_words = training_words(meta["train"], "auto", None)
    outputs = model.output_columns
    predicted_column = next((c for c in outputs if c not in ("head", "deprel")), None)
    if column is not None and column != predicted_column:
        raise TaggerError(f"--column {column}: this model predicts {predicted_column or 'no tag column'}, "
                          f"not {column}", model_path)
    column, parse = predicted_column, "head" in outputs
    if column is not None and not has_column(gold, column):
        raise TaggerError(f"no gold '{column}' column to score the model's tags against", data_path)
    if parse and not has_column(gold, "head"):
        raise TaggerError("no gold heads to score the parser against", data_path)
    # With --beta one pass gives both: each token's kept tags, best first, and so the 1-best tag.
    multitags = predict(model, gold, decode=multitag_decoder(model, None, beta)) if beta is not None else None
    predictions = [[tags[0][0] for tags in sentence] for sentence in multitags] if multitags else predict(model, gold)
    pred = [copy.copy(sentence) for sentence in gold]
    for sentence, predicted in zip(pred, predictions):
        sentence.columns = dict(sentence.columns)
        model.annotate(sentence, predicted)
    results = scored(gold, pred, column, parse, train_words)
    if multitags is not None and column is not None:
        multitag = MultiTagMetric()
        for sentence, tags in zip(gold, multitags):
            multitag.update(sentence.column(column), [{tag for tag, _ in token} for token in tags])
        results["multitag"] = multitag
    return column, results


TITLES = {"tagging": "tagging ({column})", "multitag": "multi-tagging ({column})", "parsing": "attachment"}


def _emit(
    header: dict[str, str | None],
    results: dict[str, Metric],
    as_json: bool,
    top: int,
    punct: bool,
) -> None:
    """Print the results: one JSON object (header fields plus each metric's dict), or tables."""
    if as_json:
        payload: dict = dict(header)
        payload.update({name: metric.to_dict() for name, metric in results.items()})
        click.echo(json.dumps(payload, ensure_ascii=False))
        return
    console = make_console()
    heading = "  ".join(f"{k}: {v}" for k, v in header.items() if v is not None)
    console.print(heading, highlight=False, soft_wrap=True)
    for name, metric in results.items():
        title = TITLES.get(name, name).format(column=header.get("column"))
        render_table(metric, console, title=title, top=top, punct=punct)


EPILOG = """\b
Examples:
  tagger evaluate --gold dev.conllu --pred dev.pred.conllu
  tagger evaluate --gold dev.conllu --pred dev.pred.conllu --train train.conllu --json
  tagger evaluate --gold wsj_23.auto --pred out.pipe --pred-format pipe --task ccg
  tagger tag --model pos.tagger < dev.txt | tagger evaluate --gold dev.conllu --pred -
  tagger evaluate --model pos.tagger test.conllu
"""


@click.command("evaluate", epilog=EPILOG)
@click.argument("data", required=False)
@click.option("--model", "-m", "model_path", metavar="MODEL", help="Model file to evaluate on DATA.")
@click.option("--gold", "-g", "gold_path", metavar="FILE", help="Gold file (with --pred; no model).")
@click.option("--pred", "-p", "pred_path", metavar="FILE", help="Predicted file, '-' for stdin (with --gold).")
@click.option(
    "--format", "-f", "gold_format", type=click.Choice(FORMAT_NAMES), default="auto", show_default=True,
    help="Format of the gold file (or DATA); 'auto' detects it (CCGbank AUTO files included).",
)
@click.option(
    "--pred-format", type=click.Choice(FORMAT_NAMES),
    help="Format of the predicted file [default: as --format].",
)
@click.option(
    "--columns", "columns_spec", metavar="SPEC",
    help="Column layout for the 'columns' format, e.g. form=2,tag=6.",
)
@click.option(
    "--column", metavar="NAME",
    help="Tag column to score: upos, xpos, supertag, tag or a --columns name [default: upos, else xpos, "
    "else supertag, else tag]. With --model: must be the column the model predicts.",
)
@click.option(
    "--task", type=click.Choice(["auto", "pos", "dep", "ccg"]), default="auto", show_default=True,
    help="What to score; 'auto': the tag column and heads present in both files.",
)
@click.option("--train", "train_path", metavar="FILE", help="Training file, for accuracy on unseen words.")
@click.option(
    "--train-format", type=click.Choice(FORMAT_NAMES), default="auto", show_default=True,
    help="Format of --train.",
)
@click.option(
    "--punct/--no-punct", default=False, show_default=True,
    help="Highlight attachment scores over all words (CoNLL 2018) or without punctuation (the papers'); "
    "both are always computed.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
@click.option(
    "--top", type=click.IntRange(min=0), default=20, show_default=True,
    help="Rows in the per-tag/per-label tables, and (up to 10) most-confused pairs (0: none).",
)
@click.option(
    "--beta", type=click.FloatRange(0.0, 1.0),
    help="With --model: CCG multi-tagging, keep tags with p >= beta * p_best.",
)
@click.option("--device", default="auto", show_default=True, help="With --model: auto (GPU if present), cpu, cuda, cuda:N, or mps where torch has it.")
@click.option("--split", type=click.Choice(["wsj", "sample"]), help="With --model: DATA is a folder of wsj_SSNN files; score its test part.")
@click.option("--threads", type=int, help="With --model: CPU threads for torch.")
@click.option("--precision", type=click.Choice(("auto", "fp32", "bf16")), default="auto", show_default=True,
              help="With --model: inference matrix products in bf16 (inputs rounded to bfloat16, sums in float32) "
                   "or fp32; auto: bf16 where the CPU multiplies it natively (avx512_bf16/amx), else fp32.")
@click.option("--allow-missing-columns", is_flag=True,
              help="With --model: run a parser on DATA without the UPOS/FEATS it reads instead of refusing.")
def command(
    data: str | None,
    model_path: str | None,
    gold_path: str | None,
    pred_path: str | None,
    gold_format: str,
    pred_format: str | None,
    columns_spec: str | None,
    column: str | None,
    task: str,
    train_path: str | None,
    train_format: str,
    punct: bool,
    as_json: bool,
    top: int,
    beta: float | None,
    device: str,
    split: str | None,
    threads: int | None,
    precision: str,
    allow_missing_columns: bool,
) -> None:
    """Score predictions against gold annotation: accuracy table, or --json.

    Either --gold G --pred P (two files with the same words, no model), or --model M DATA.
    Tagging: token, unseen-word and sentence accuracy, per-tag P/R/F1, most confused pairs.
    Parsing: UAS, LAS and label accuracy over all words and without punctuation, per label.
    """
    if model_path is not None or data is not None:
        if gold_path is not None or pred_path is not None:
            raise click.UsageError("use either --model MODEL DATA or --gold FILE --pred FILE, not both")
        if model_path is None or data is None:
            raise click.UsageError("--model MODEL and a DATA file go together")
        train_words = training_words(train_path, train_format, columns_spec) if train_path else None
        source = data
        if threads:
            import torch

            torch.set_num_threads(threads)
        if split:
            from tagger.training.run import split_files

            source = split_files(data, split, "pos" if task == "auto" else task)["test"]
        chosen, results = evaluate_model(model_path, source, gold_format, columns_spec, beta, device, train_words, precision,
                                         column, allow_missing_columns)
        _emit({"model": model_path, "data": data, "column": chosen}, results, as_json, top, punct)
        return
    if gold_path is None or pred_path is None:
        raise click.UsageError("give --gold FILE and --pred FILE (or --model MODEL DATA)")
    if beta is not None:
        raise click.UsageError("--beta needs --model (multi-tagging uses the model's probabilities)")
    train_words = training_words(train_path, train_format, columns_spec) if train_path else None
    chosen, results = evaluate_files(
        gold_path, pred_path, gold_format, pred_format or gold_format, columns_spec, task, column, train_words
    )
    _emit({"gold": gold_path, "pred": pred_path, "column": chosen}, results, as_json, top, punct)
