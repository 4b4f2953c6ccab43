"""``tagger ensemble``: thin over :func:`tagger.ensembling.combine`."""

from __future__ import annotations

import json

import click

from tagger.progress import make_console
from tagger.ensembling import combine


@click.command("ensemble")
@click.argument("models", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Where to write the ensemble (a pipeline file when the first MODEL is a pipeline).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def command(models: tuple[str, ...], out: str, as_json: bool) -> None:
    """Combine trained transition parsers into one model that parses with all of them.

    At each step of its greedy parse every parser scores the same configuration and the
    transition with the highest summed log-probability is taken: one tree per sentence, more
    accurate than each parser alone, at the parsers' summed decoding cost. The parsers must be
    trained on the same treebank (same labels, same POS read), for example with different
    --seed values. A MODEL may be a parser, an ensemble, or a pipeline (its parser is taken;
    the first pipeline's tokenizer and tagger are kept in front of the ensemble).

    \b
    Examples:
      tagger ensemble dep1.model dep2.model dep3.model --out dep.ensemble
      tagger ensemble en1.model en2.model en3.model --out en.model     (pipelines: one tagger, three parsers)
      tagger train --task pipeline --parsers 3 ...                     (trains such a set and combines it)
    """
    summary = combine(list(models), out)
    for note in summary["notes"]:  # a model given twice (tagger.ensembling.repeated_files)
        click.echo(f"note: {note}", err=True)
    if as_json:
        click.echo(json.dumps(summary))
        return
    scores = ", ".join("?" if m["dev_score"] is None else f"{m['dev_score']:.2f}" for m in summary["members"])
    make_console(stderr=True).print(f"{out}: {summary['written']} with an ensemble of {summary['parsers']} parsers "
                                    f"(dev LAS {scores}); {summary['bytes'] / 1e6:.1f} MB",
                                    markup=False, highlight=False)
