"""``tagger distill``: thin over :func:`tagger.training.dispatch.distill`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import torch

from tagger.progress import RichReporter, make_console
from tagger.cli.train import run_options, summary_line
from tagger.config import option_type
from tagger.training.dispatch import distill
from tagger.training.distill import DEFAULT_GOLD_WEIGHT, DEFAULT_PRESET, DEFAULT_TOP_K, DistillRequest
from tagger.training.request import DataSpec, RunOptions
from tagger.training.trainer import Interrupted


@click.command("distill")
@click.option("--teacher", "teacher_paths", multiple=True, required=True, type=click.Path(dir_okay=False),
              help="A trained tagger to learn from (repeatable; further teachers may follow as arguments).")
@click.argument("more_teachers", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--train", "train_path", required=True, help="Training data (with the gold column): a file or a folder of files.")
@click.option("--dev", "dev_path", help="Development data (gold), for model selection and lr halving. Default: every "
              "20th sentence of --train (5%, at least one) is held out as dev and not trained on.")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Where to write the student's model file (missing parent folders are created).")
@click.option("--format", "-f", "fmt", default="auto", show_default=True, help="Input format of --train/--dev (auto detects).")
@click.option("--columns", help="For --format columns: NAME=N pairs, e.g. form=2,tag=6.")
@click.option("--column", help="The columns the student learns, e.g. upos or upos,xpos. Default: every column all its "
              "teachers predict.")
@click.option("--preset", default=DEFAULT_PRESET, show_default=True, help="The student's named configuration.")
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False), help="The student's JSON config file.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override one value of the student's config (repeatable).")
@click.option("--temperature", type=float, default=1.0, show_default=True,
              help="Soften the teachers' and the student's distributions: softmax(scores / T); the soft loss is scaled by T².")
@click.option("--gold-weight", type=float, default=DEFAULT_GOLD_WEIGHT, show_default=True,
              help="The gold tags' share of the loss (0: the teachers' distributions alone).")
@click.option("--top-k", type=click.IntRange(min=1), default=DEFAULT_TOP_K, show_default=True,
              help="Labels kept per token of the teachers' averaged distribution (renormalised).")
@click.option("--unlabeled", "unlabeled_path", help="More text to learn from, without annotation (a file or a folder, "
              "any format --train takes; only its words are read): the teachers label it, the student learns their "
              "distributions there too.")
@click.option("--embeddings", type=click.Path(), help="The student's pretrained word vectors, as tagger train takes "
              "them: a file or an installed package by name (glove-6b-50d).")
@click.option("--max-epochs", type=option_type("max_epochs"), help="Same as --set max_epochs=N.")
@click.option("--batch-size", type=option_type("batch_size"), help="Sentences per update; same as --set batch_size=N.")
@run_options
@click.option("--threads", type=option_type("threads"), help="CPU threads for torch.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the final summary lines (and warnings and errors).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object (scores in percent, as everywhere).")
def command(teacher_paths, more_teachers, train_path, dev_path, out, fmt, columns, column, preset, config_file, overrides,
            temperature, gold_weight, top_k, unlabeled_path, embeddings, max_epochs, batch_size, patience, max_minutes, max_sentences, seed, device,
            threads, quiet, as_json) -> None:
    """Train a (smaller) tagger on the averaged tag distributions of trained taggers.

    The teachers must predict the student's columns (by default every column they all predict),
    each with the same tags; the student learns each from their averaged distributions (mixed
    with the gold tags by --gold-weight) and is scored on gold --dev as in tagger train. It is an ordinary model file: tagger tag, evaluate and info
    take it as they take any tagger.

    \b
    Examples:
      tagger distill --teacher a.tagger b.tagger --train train.conllu --dev dev.conllu --out small.tagger
      tagger distill --teacher a.tagger --teacher b.tagger --preset small --gold-weight 0 --train T --dev D --out S
      tagger distill --teacher upos-xpos-feats.tagger --column upos,xpos --preset fast --train T --dev D --out S
      tagger distill --teacher big.tagger --preset fast --embeddings glove-6b-50d --unlabeled more.txt --train T --dev D --out S
    """
    if threads:
        torch.set_num_threads(threads)
    request = DistillRequest(
        teachers=tuple(teacher_paths) + tuple(more_teachers),
        train=DataSpec(train_path, fmt, columns, max_sentences),
        dev=DataSpec(dev_path, fmt, columns) if dev_path else None,
        out=out, preset=preset, column=column, config_file=config_file, overrides=tuple(overrides),
        max_epochs=max_epochs, batch_size=batch_size, patience=patience,
        temperature=temperature, gold_weight=gold_weight, top_k=top_k, embeddings=embeddings,
        unlabeled=DataSpec(unlabeled_path, fmt, columns) if unlabeled_path else None,
        options=RunOptions(seed=seed, device=device, max_minutes=max_minutes),
    )
    console = make_console(stderr=True)

    def say(line: str) -> None:
        if not quiet or line.startswith("warning:"):
            console.print(line, markup=False, highlight=False)

    reporter = RichReporter(console, "dev", bar=not quiet and console.is_terminal, quiet=quiet or as_json)
    try:
        summary = distill(request, reporter, say)
    except Interrupted as stop:
        best = f"; best model so far in {out}" if Path(out).exists() else ""
        console.print(f"interrupted at epoch {stop.epoch}, batch {stop.batch}{best}", markup=False, highlight=False)
        sys.exit(130)
    if as_json:
        click.echo(json.dumps(summary))
        return
    console.print(summary_line(summary), markup=False, highlight=False)
    console.print(teachers_line(summary), markup=False, highlight=False)


def teachers_line(summary: dict) -> str:
    """The teachers' dev accuracies beside the student's (percent)."""
    each = ", ".join(f"{t['dev']:.2f}" for t in summary["teachers"])
    return (f"teachers' dev accuracy {each}; their average distribution {summary['ensemble_dev']:.2f}; "
            f"the student {summary['best_dev']:.2f} ({summary['best_dev'] - summary['ensemble_dev']:+.2f})")
