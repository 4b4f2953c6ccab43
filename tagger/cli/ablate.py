"""``tagger ablate``: train every row of a paper's table, print ours beside the paper's; thin
over :func:`tagger.ablation.run_table` and :func:`tagger.ablation.report_table`."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tagger.ablation import (COLUMNS, ZOO_TASKS, AblationRequest, display_rows, failure, report_table, run_table,
                             settings_line, title_line)
from tagger.progress import make_console
from tagger.config import option_type
from tagger.plots import ablation_drawer


def show(report: dict, console: Console) -> None:
    """The table in the paper's layout, as a rich table, with its title and the run's settings."""
    view = Table(*COLUMNS, title=title_line(report), caption=settings_line(report.get("settings") or {}),
                 highlight=False)
    for index in range(2, 6):
        view.columns[index].justify = "right"
    for cells in display_rows(report):
        view.add_row(*(Text(cell) for cell in cells))
    console.print(view)


EPILOG = """\b
Examples:
  tagger presets --table wu2017-t2                      (the rows)
  tagger ablate --table wu2017-t2 --task pos --column xpos --train T --dev D --test E \\
      --budget-minutes 30 --jobs 2 --out-dir zoo/t2 --plot zoo/t2/table.png
  tagger ablate ... --set layers=4 --set hidden=64      (on top of every row's preset)
  tagger ablate --table wu2017-t2 --out-dir zoo/t2 --report   (the table of what zoo/t2 holds)
  tagger ablate --table elkaref2017-t3 --embeddings glove-6b-50d --train T --dev D --test E \
      --budget-minutes 20 --jobs 2 --out-dir zoo/e3   (random and GloVe rows; bootstrapped rows after their FFN)
"""


@click.command("ablate", epilog=EPILOG)
@click.option("--table", required=True, help="The paper table whose rows to train (tagger presets lists them).")
@click.option("--out-dir", required=True, type=click.Path(file_okay=False),
              help="Where each row writes ROW.model and ROW.json, and the table its table.md and table.json.")
@click.option("--task", type=click.Choice(ZOO_TASKS), help="What to learn [default: the table's: pos, or dep for a "
              "parser's table].")
@click.option("--column", help="Tag column to learn (upos, xpos, supertag, or a --columns name).")
@click.option("--train", "train_path", help="Training data.")
@click.option("--dev", "dev_path", help="Development data: each row keeps its best epoch on it.")
@click.option("--test", "test_path", help="Test data: each row's best model is scored on it, as tagger evaluate does.")
@click.option("--format", "-f", "fmt", default="auto", show_default=True, help="Format of --train/--dev/--test.")
@click.option("--budget-minutes", type=option_type("budget_minutes"), help="Training minutes of each row (--max-minutes of tagger train).")
@click.option("--max-sentences", type=option_type("max_sentences"), help="Train on the first N training sentences only.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override one config value of every row (repeatable), e.g. layers=4 or optimizer=adam.")
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed of every row.")
@click.option("--jobs", type=option_type("jobs"), default=1, show_default=True,
              help="Rows trained at once, each a process.")
@click.option("--threads", type=option_type("threads"),
              help="CPU threads of all jobs together, split between them [default: every core].")
@click.option("--device", default="auto", show_default=True, help="auto (GPU if present), cpu, cuda, cuda:N.")
@click.option("--rows", help="Only these rows (preset names, comma-separated).")
@click.option("--embeddings", help="Pretrained word vectors for every row: a file or a package name (as tagger train takes).")
@click.option("--plot", type=click.Path(dir_okay=False),
              help="Also draw ours beside the paper's figures into this picture (needs matplotlib).")
@click.option("--report", is_flag=True, help="Train nothing: print and rewrite the table of what --out-dir holds.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as one JSON object on stdout.")
def command(table, out_dir, task, column, train_path, dev_path, test_path, fmt, budget_minutes, max_sentences,
            overrides, seed, jobs, threads, device, rows, embeddings, plot, report, as_json) -> None:
    """Train every row of a paper's table (Wu, Zhang & Zong 2016, 2017; Elkaref & Bohnet 2017)
    on the same data, budget and seed, and print our dev and test scores beside the paper's.

    Each row is a preset (tagger presets --table TABLE); --set applies on top of each. Rows run
    --jobs at a time, each in its own process; a bootstrapped row starts once the row it starts
    from is done. --embeddings goes to every row, or, in a table of random against pre-trained
    embeddings, to the pre-trained rows. Run the same command again to continue: rows with
    a result in --out-dir are skipped, a row stopped on the way resumes from its checkpoint.
    """
    draw = ablation_drawer(plot) if plot else None  # before anything trains
    if report:
        result = report_table(table, out_dir)
    else:
        missing = [name for name, value in (("--train", train_path), ("--dev", dev_path), ("--test", test_path),
                                            ("--budget-minutes", budget_minutes)) if value is None]
        if missing:
            raise click.UsageError(f"missing {', '.join(missing)} (or --report, to train nothing)")
        request = AblationRequest(
            table=table, out_dir=out_dir, train=train_path, dev=dev_path, test=test_path,
            budget_minutes=budget_minutes, task=task, column=column, format=fmt, max_sentences=max_sentences,
            overrides=tuple(overrides), seed=seed, jobs=jobs, threads=threads, device=device,
            rows=tuple(name.strip() for name in (rows or "").split(",") if name.strip()), embeddings=embeddings)
        console = make_console(stderr=True)
        result = run_table(request, lambda line: console.print(line, markup=False, highlight=False))
    if draw is not None:
        draw(result, plot)
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False))
    if not as_json or not report:
        show(result, make_console(stderr=not report))
    error = failure(result, out_dir)
    if error is not None:
        raise error
