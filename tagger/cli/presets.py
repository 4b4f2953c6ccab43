"""``tagger presets``: the named presets of every model family; thin over :func:`tagger.ablation.list_presets`."""

from __future__ import annotations

import json

import click
from rich.table import Table
from rich.text import Text

from tagger.ablation import list_presets
from tagger.progress import make_console
from tagger.models import MODELS

#: The columns shown, in order: (header, key of a preset's record).
SHOWN = (("name", "name"), ("family", "family"), ("paper · table · row", "source"), ("scan", "scan"),
         ("description", "description"))


def plain_lines(presets: list[dict]) -> list[str]:
    """The presets as plain text, one a line, columns aligned (the last one, the description, not padded)."""
    rows = [[header for header, _ in SHOWN]] + [[p[key] or "-" for _, key in SHOWN] for p in presets]
    widths = [max(len(row[i]) for row in rows) for i in range(len(SHOWN) - 1)]
    return ["  ".join([cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]).rstrip() for row in rows]


@click.command("presets")
@click.option("--model", "family", type=click.Choice(sorted(MODELS)), help="Only this model family's presets.")
@click.option("--table", help="Only the rows of this paper table (e.g. wu2017-t2).")
@click.option("--names", is_flag=True, help="Print the names alone, one a line.")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON list: name, family, table, case, row, paper_dev, paper_test, description, scan, "
                   "paper_vectors (what the paper trained with), model and training (the values after based_on).")
def command(family: str | None, table: str | None, names: bool, as_json: bool) -> None:
    """List the named presets (--preset NAME of tagger train), the skip-LSTM tagger's first.

    A preset that is a row of one of the papers' tables (Wu, Zhang & Zong 2016, 2017) says which:
    `tagger ablate --table TABLE` trains them all.

    \b
    Examples:
      tagger presets
      tagger presets --table wu2017-t2
      tagger presets --model transition_parser --names
      tagger presets --json | jq '.[] | select(.table) | .name'
    """
    if names and as_json:
        raise click.UsageError("--names and --json are two ways of printing: choose one")
    presets = list_presets(family, table)
    if as_json:
        keys = ("name", "family", "table", "case", "row", "paper_dev", "paper_test", "description", "scan",
                "paper_vectors", "model", "training")
        click.echo(json.dumps([{key: p[key] for key in keys} for p in presets], ensure_ascii=False))
        return
    if names:
        for preset in presets:
            click.echo(preset["name"])
        return
    presets = [{**p, "description": p["description"] + (f" (the paper trained with {p['paper_vectors']})"
                                                         if p["paper_vectors"] else "")} for p in presets]
    console = make_console()
    if not console.is_terminal:
        for line in plain_lines(presets):
            click.echo(line)
        return
    view = Table(*(header for header, _ in SHOWN), highlight=False)
    for preset in presets:
        view.add_row(*(Text(preset[key] or "-") for _, key in SHOWN))
    console.print(view)
