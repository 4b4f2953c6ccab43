"""The ``tagger`` command group: wires the thin command modules together.

Every :class:`~tagger.errors.TaggerError` becomes one line on stderr and exit status 1, and so
does a failed write to stdout (a full disk: ``error: stdout: cannot write: ...``); a closed stdout
(``tagger tag ... | head``) ends quietly, with status 0 (:mod:`tagger.cli.guard`).
"""

from __future__ import annotations

import importlib

import click

from tagger.cli.guard import guarded
from tagger.version import __version__


#: Command name -> module; imported only when the command runs (torch loads only where needed).
COMMANDS = {
    "train": "tagger.cli.train",
    "distill": "tagger.cli.distill",
    "ensemble": "tagger.cli.ensemble",
    "evaluate": "tagger.cli.evaluate",
    "tag": "tagger.cli.tag",
    "convert": "tagger.cli.convert",
    "info": "tagger.cli.info",
    "presets": "tagger.cli.presets",
    "ablate": "tagger.cli.ablate",
}
SUMMARIES = {
    "train": "Train a tagger or parser; keep the best model on --dev.",
    "distill": "Train a (smaller) tagger on trained taggers' averaged distributions.",
    "ensemble": "Combine trained parsers into one model that parses with all of them.",
    "evaluate": "Score a model on data, or a predicted file against gold.",
    "tag": "Tag or parse text: stdin or files in, stdout out, streaming.",
    "convert": "Convert a corpus between formats.",
    "info": "Print a model file's config, vocabularies and scores.",
    "presets": "List the named presets, and the paper table rows they are.",
    "ablate": "Train every row of a paper's table; print ours beside the paper's.",
}


class TaggerGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        return importlib.import_module(COMMANDS[name]).command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, SUMMARIES[name]) for name in COMMANDS])

    def invoke(self, ctx: click.Context):
        """Run the command under :func:`tagger.cli.guard.guarded` (errors as one line, stdout
        guarded and flushed)."""
        with guarded():
            return super().invoke(ctx)


@click.group(cls=TaggerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tagger")
def cli() -> None:
    """Train, evaluate and apply neural taggers, dependency parsers and constituency parsers.

    \b
    Examples:
      tagger train --task pos --train train.conllu --dev dev.conllu --out pos.tagger
      tagger evaluate --model pos.tagger test.conllu
      tagger evaluate --gold gold.conllu --pred pred.conllu --json
      tagger tag --model pos.tagger < tokens.txt > output.conllu   (one sentence a line, split at spaces)
      tagger train --task tokenize --train train.conllu --dev dev.conllu --out tok.model
      tagger tag --model tok.model --model pos.tagger < raw.txt > output.conllu
      tagger tag --model const.model < input.txt > trees.txt
      tagger convert --from auto --to conllu wsj_0001.auto
      tagger presets --table wu2017-t2
      tagger ablate --table wu2017-t2 --train T --dev D --test E --budget-minutes 30 --out-dir zoo
    """


def main() -> None:
    cli(prog_name="tagger")


if __name__ == "__main__":
    main()
