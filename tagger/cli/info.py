"""``tagger info``: what a model file holds, without building the model."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.table import Table

from tagger.model_file import read_archive


#: Entries of ``vocabs`` that hold a number, not a vocabulary: where the words seen once start, and
#: (in model files of older versions) the count of non-projective training trees, which the meta's
#: ``nonprojective_skipped`` shows.
NOT_VOCABULARIES = ("rare_word_from", "nonprojective")


def describe(path: str) -> dict:
    """A plain summary of a model file: versions, model, config, vocab sizes, training data, score."""
    archive = read_archive(path)
    state = archive["state_dict"]
    return {
        "file": path,
        "format_version": archive["format_version"],
        "tagger_version": archive.get("tagger_version"),
        "model": archive.get("name"),
        "parameters": sum(t.numel() for t in state.values()),
        "vocab_sizes": {k: len(v) for k, v in archive.get("vocabs", {}).items() if k not in NOT_VOCABULARIES},
        "config": archive.get("config", {}),
        "meta": {k: v for k, v in archive.get("meta", {}).items() if k != "history"},
        "history": archive.get("meta", {}).get("history", []),
    }


@click.command("info")
@click.argument("model_path", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def command(model_path: str, as_json: bool) -> None:
    """Print a model file's config, vocabulary sizes, training data and dev score.

    \b
    Example:
      tagger info pos.tagger
    """
    info = describe(model_path)
    if as_json:
        click.echo(json.dumps(info, default=str))
        return
    console = Console()
    table = Table(title=f"{model_path}: {info['model']} ({info['parameters']:,} parameters)", show_header=False)
    table.add_row("format", f"{info['format_version']} (tagger {info['tagger_version']})")
    for key, value in info["meta"].items():
        table.add_row(key, f"{100 * value:.2f}" if key == "dev_score" else str(value))
    table.add_row("vocabularies", ", ".join(f"{k} {v:,}" for k, v in info["vocab_sizes"].items()))
    for key, value in info["config"].items():
        table.add_row(key, str(value))
    console.print(table)
