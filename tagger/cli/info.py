"""``tagger info``: what a model file holds, without building the model."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.table import Table

from tagger.cli.progress import make_console
from tagger.model_file import configs_of, read_archive
from tagger.tasks import TASKS


def dev_metric(meta: dict[str, Any]) -> str:
    """What a model's dev score is; files written before the name was stored get it from the task."""
    task = TASKS.get(meta.get("task", ""))
    return meta.get("dev_metric") or (task.metric if task else "accuracy")


def shown_meta(meta: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``meta`` and its history as shown: scores in percent (model files store fractions), each
    with its metric's name beside it."""
    shown = {k: v for k, v in meta.items() if k != "history"}
    metric = dev_metric(meta)
    if isinstance(shown.get("dev_score"), (int, float)):
        shown["dev_score"] = 100.0 * shown["dev_score"]
        shown["dev_metric"] = metric
    history = []
    for record in meta.get("history", []):
        record = dict(record)
        if isinstance(record.get("dev"), (int, float)):
            record["dev"] = 100.0 * record["dev"]
            record["metric"] = record.get("metric") or metric
        history.append(record)
    return shown, history
#: Entries of ``vocabs`` that hold a number, not a vocabulary: where the words seen once start,
#: where a lifting parser's lifted labels start, and (in model files of older versions) the count
#: of non-projective training trees, which the meta's ``nonprojective_skipped`` shows.
NOT_VOCABULARIES = ("rare_word_from", "plain_labels", "nonprojective")


def describe(path: str) -> dict:
    """A plain summary of a model file: versions, model, its model config and training config
    (None where the file does not record it), vocab sizes, training data and dev score (percent,
    as everywhere). Files of format 1, whose one config held both, show them split."""
    archive = read_archive(path)
    state = archive["state_dict"]
    meta, history = shown_meta(archive.get("meta", {}))
    config, training = configs_of(archive)
    return {
        "file": path,
        "format_version": archive["format_version"],
        "tagger_version": archive.get("tagger_version"),
        "model": archive.get("name"),
        "parameters": sum(t.numel() for t in state.values()),
        "vocab_sizes": {k: len(v) for k, v in archive.get("vocabs", {}).items() if k not in NOT_VOCABULARIES},
        "config": config,
        "training": training,
        "meta": meta,
        "history": history,
    }


@click.command("info")
@click.argument("model_path", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (scores in percent, as everywhere).")
def command(model_path: str, as_json: bool) -> None:
    """Print a model file's model and training configs, vocabulary sizes, training data and dev score.

    \b
    Example:
      tagger info pos.tagger
    """
    info = describe(model_path)
    if as_json:
        click.echo(json.dumps(info, default=str))
        return
    console = make_console()
    table = Table(title=f"{model_path}: {info['model']} ({info['parameters']:,} parameters)", show_header=False)
    table.add_row("format", f"{info['format_version']} (tagger {info['tagger_version']})")
    for key, value in info["meta"].items():
        table.add_row(key, f"{value:.2f} %" if key == "dev_score" else str(value))
    table.add_row("vocabularies", ", ".join(f"{k} {v:,}" for k, v in info["vocab_sizes"].items()))
    table.add_section()
    table.add_row("model config", "" if info["config"] else "(none)")
    for key, value in info["config"].items():
        table.add_row(key, str(value))
    table.add_section()
    table.add_row("training config", "" if info["training"] else "(not recorded)")
    for key, value in (info["training"] or {}).items():
        table.add_row(key, str(value))
    console.print(table)
