"""``tagger evaluate``: score predicted files against gold ones, or a model on a data file.

Thin over :mod:`tagger.scoring`: the options build a :class:`~tagger.scoring.ScoreRequest` (as
:func:`tagger.score` does), whose :func:`~tagger.scoring.evaluate_files` or
:func:`~tagger.scoring.evaluate_model` decides what is scored; this prints rich tables, one JSON
object, or (``--evalb``, constituency trees) EVALB's own report.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

import click

from tagger.formats.supertags import SUPERTAG_IN

from tagger import formats
from tagger.progress import make_console
from tagger.errors import TaggerError
from tagger.evaluation.evalb import render_errors, render_evalb
from tagger.evaluation.report import render_table
from tagger.scoring import SCORING_TASKS, EvaluationResult, ScoreRequest

FORMAT_NAMES = ["auto", *sorted(formats.FORMATS)]  # input formats: auto detects


TITLES = {"tagging": "tagging ({column})", "multitag": "multi-tagging ({column})", "parsing": "attachment",
          "const": "brackets (EVALB)", "aligned": "system tokenisation: CoNLL 2018 shared task scores"}


def _emit(header: dict[str, str | None], result: EvaluationResult, as_json: bool, top: int, punct: bool,
          evalb: bool) -> None:
    """Print the result: EVALB's report (stdout) and its error lines (stderr), or one JSON object
    (header fields, the column, each metric's dict), or tables."""
    if evalb:
        if result.const is None:
            raise TaggerError("--evalb: no trees were scored (it prints EVALB's report of constituency trees)",
                              header.get("pred") or header.get("model"))
        click.echo(render_evalb(result.const), nl=False)
        sys.stdout.flush()
        click.echo(render_errors(result.const), nl=False, err=True)
        return
    if result.const is None:
        header = {k: v for k, v in header.items() if k != "evalb_params"}
    if as_json:
        click.echo(json.dumps({**header, **result.to_dict()}, ensure_ascii=False))
        return
    console = make_console()
    fields = {**header, "column": result.column}
    console.print("  ".join(f"{k}: {v}" for k, v in fields.items() if v is not None), highlight=False, soft_wrap=True)
    for name, metric in result.metrics.items():
        column = result.columns[0] if name == "multitag" else result.column  # multi-tagging: the first column
        render_table(metric, console, title=TITLES.get(name, name).format(column=column), top=top, punct=punct)


EPILOG = """\b
Examples:
  tagger evaluate --gold dev.conllu --pred dev.pred.conllu
  tagger evaluate --gold dev.conllu --pred dev.pred.conllu --train train.conllu --json
  tagger evaluate --gold wsj_23.auto --pred out.pipe --pred-format pipe --task ccg
  tagger tag --model pos.tagger < dev.txt | tagger evaluate --gold dev.conllu --pred -
  tagger evaluate --model pos.tagger test.conllu
  tagger evaluate --gold dev.conllu --pred dev.pred.conllu --column upos,xpos,feats
  tagger tag --model tok.model < dev.txt | tagger evaluate --gold dev.conllu --pred -   (own tokens: aligned)
  tagger evaluate --gold wsj_23.mrg --pred parsed.trees               (EVALB, COLLINS.prm)
  tagger evaluate --gold gold.trees --pred test.trees --evalb-params my.prm --evalb
"""


#: The options of ``tagger evaluate``.
OPTIONS = (
    click.argument("data", required=False),
    click.option("--model", "-m", "model_path", metavar="MODEL", help="Model file to evaluate on DATA."),
    click.option("--gold", "-g", "gold_path", metavar="FILE", help="Gold file (with --pred; no model)."),
    click.option("--pred", "-p", "pred_path", metavar="FILE", help="Predicted file, '-' for stdin (with --gold)."),
    click.option(
        "--format", "-f", "gold_format", type=click.Choice(FORMAT_NAMES), default="auto", show_default=True,
        help="Format of the gold file (or DATA); 'auto' detects it (CCGbank AUTO files included).",
    ),
    click.option(
        "--pred-format", type=click.Choice(FORMAT_NAMES),
        help="Format of the predicted file [default: as --format].",
    ),
    click.option(
        "--columns", "columns_spec", metavar="SPEC",
        help="Column layout for the 'columns' format, e.g. form=2,tag=6.",
    ),
    click.option(
        "--column", metavar="NAME",
        help="Tag column to score: upos, xpos, feats, supertag, tag or a --columns name, or several joined by commas "
        "(upos,xpos,feats: each one's accuracy, all of them at once and their mean) [default: upos, else xpos, else "
        "supertag, else tag]. With --model: columns the model predicts [default: every one].",
    ),
    click.option(
        "--task", type=click.Choice(SCORING_TASKS), default="auto", show_default=True,
        help="What to score; 'auto': trees if both files have them (.mrg, .trees: EVALB's bracket scores), "
        "else the tag column and heads present in both files.",
    ),
    click.option("--evalb-params", "evalb_params", metavar="FILE", type=click.Path(dir_okay=False),
                 help="EVALB parameter file for the bracket scores [default: COLLINS.prm, built in]."),
    click.option("--evalb", "evalb_report", is_flag=True,
                 help="Print EVALB's own report (per-sentence rows and both summaries, as the evalb program "
                      "prints them; its error lines on stderr) instead of tables."),
    click.option("--aligned/--gold-tokens", default=None,
                 help="Score as the CoNLL 2018 shared task (F1 of tokens, sentences, words, and of tags and attachment "
                      "over aligned words; both files must hold the same text) or as gold tokenisation (the same words "
                      "in both files) [default: aligned when the files' words differ]."),
    click.option("--train", "train", metavar="FILE", help="Training file, for accuracy on unseen words."),
    click.option(
        "--train-format", type=click.Choice(FORMAT_NAMES), default="auto", show_default=True,
        help="Format of --train.",
    ),
    click.option(
        "--punct/--no-punct", default=False, show_default=True,
        help="Highlight attachment scores over all words (CoNLL 2018) or without punctuation (the papers'); "
        "both are always computed.",
    ),
    click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables."),
    click.option(
        "--top", type=click.IntRange(min=0), default=20, show_default=True,
        help="Rows in the per-tag/per-label tables, and (up to 10) most-confused pairs (0: none).",
    ),
    click.option(
        "--beta", type=click.FloatRange(0.0, 1.0),
        help="With --model: CCG multi-tagging, keep tags with p >= beta * p_best.",
    ),
    click.option("--beam", type=click.IntRange(1), help="With --model: a constituency parser's beam width (1: greedy) [default: the model's]."),
    click.option("--constrained/--unconstrained", default=None,
                 help="With --model: a constituency parser decodes only well-formed trees, or any output then repaired "
                      "[default: the model's]."),
    click.option("--device", default="auto", show_default=True, help="With --model: auto (GPU if present), cpu, cuda, cuda:N, or mps where torch has it."),
    click.option("--split", type=click.Choice(["wsj", "sample"]), help="With --model: DATA is a folder of wsj_SSNN files; score its test part (wsj: the test sections of the model's task, or of --task)."),
    click.option("--threads", type=int, help="With --model: CPU threads for torch."),
    click.option("--precision", type=click.Choice(("auto", "fp32", "bf16")), default="auto", show_default=True,
                 help="With --model: inference matrix products in bf16 (inputs rounded to bfloat16, sums in float32) "
                      "or fp32; auto: bf16 where the CPU multiplies it natively (avx512_bf16/amx), else fp32. Taggers "
                      "only: parsers score in fp32 here (tagger tag computes them in bf16 on such a CPU, a few heads in "
                      "10,000 otherwise; --precision fp32 there gives these scores)."),
    click.option("--supertag-in", type=click.Choice(SUPERTAG_IN), default="misc", show_default=True,
                 help="Where the predicted CoNLL file carries CCG supertags: MISC (supertag=CAT) or XPOS, as tagger tag "
                      "--supertag-in wrote them (with --gold/--pred; score them with --column supertag)."),
    click.option("--preterminals", type=click.Choice(("auto", "gold", "predicted")), default="auto", show_default=True,
                 help="Trees: score the predicted trees with the gold trees' part-of-speech tags or their own; auto: the "
                      "gold ones where the predicted are of another tagset (a parser's XX, UPOS), with a note."),
    click.option("--allow-missing-columns", is_flag=True,
                 help="With --model: run a parser on DATA without the UPOS/FEATS it reads instead of refusing."),
)


def _options(command: Callable) -> Callable:
    """The command's options, in the order ``--help`` lists them."""
    for option in reversed(OPTIONS):
        command = option(command)
    return command


@click.command("evaluate", epilog=EPILOG)
@_options
def command(data: str | None, model_path: str | None, gold_path: str | None, pred_path: str | None,
            evalb_report: bool, as_json: bool, top: int, punct: bool, beta: float | None, beam: int | None,
            constrained: bool | None, device: str, split: str | None, threads: int | None, precision: str,
            allow_missing_columns: bool, columns_spec: str | None = None, gold_format: str = "auto",
            **options: Any) -> None:
    """Score predictions against gold annotation: accuracy table, or --json.

    Either --gold G --pred P (no model), or --model M DATA. Files whose words differ (a system's
    own tokenisation, raw text in) are scored as the CoNLL 2018 shared task scores them: F1 of
    tokens, sentences and words, and of UPOS, XPOS, UFeats, AllTags, Lemmas, UAS, LAS, CLAS, MLAS
    and BLEX over aligned words.
    Tagging: token, unseen-word and sentence accuracy, per-tag P/R/F1, most confused pairs; for
    several columns (a tagger of upos,xpos,feats), each one's, all of them at once and their mean.
    Parsing: UAS, LAS and label accuracy over all words and without punctuation, per label.
    Trees: EVALB's bracket recall, precision, F1, crossing brackets and tagging accuracy, over all
    sentences and those of at most 40 words (COLLINS.prm, or --evalb-params).
    """
    with_model = _check_usage(data, model_path, gold_path, pred_path, beta, beam, constrained, options["aligned"])
    if evalb_report and as_json:
        raise click.UsageError("--evalb and --json are two ways of printing: choose one")
    request = ScoreRequest(format=gold_format, columns=columns_spec, **options)
    header = {"evalb_params": options["evalb_params"] or "COLLINS.prm (built in)"}
    if with_model:
        result = request.model(model_path, data, beta=beta, device=device, threads=threads, precision=precision,
                               allow_missing_columns=allow_missing_columns, split=split, beam=beam,
                               constrained=constrained)
        _emit({"model": model_path, "data": data, **header}, result, as_json, top, punct, evalb_report)
    else:
        result = request.files(gold_path, pred_path)
        _emit({"gold": gold_path, "pred": pred_path, **header}, result, as_json, top, punct, evalb_report)


def _check_usage(data: str | None, model_path: str | None, gold_path: str | None, pred_path: str | None,
                 beta: float | None, beam: int | None = None, constrained: bool | None = None,
                 aligned: bool | None = None) -> bool:
    """True for --model MODEL DATA, False for --gold FILE --pred FILE; a usage error for anything else."""
    if model_path is not None or data is not None:
        if gold_path is not None or pred_path is not None:
            raise click.UsageError("use either --model MODEL DATA or --gold FILE --pred FILE, not both")
        if model_path is None or data is None:
            raise click.UsageError("--model MODEL and a DATA file go together")
        if aligned is not None:
            raise click.UsageError("--aligned/--gold-tokens go with --gold and --pred (a model tags the gold words)")
        return True
    if gold_path is None or pred_path is None:
        raise click.UsageError("give --gold FILE and --pred FILE (or --model MODEL DATA)")
    if beta is not None:
        raise click.UsageError("--beta needs --model (multi-tagging uses the model's probabilities)")
    if beam is not None or constrained is not None:
        raise click.UsageError("--beam and --constrained/--unconstrained need --model (they set how it decodes)")
    return False
