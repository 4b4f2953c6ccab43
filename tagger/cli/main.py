"""The ``tagger`` command group: wires the thin command modules together.

Every :class:`~tagger.errors.TaggerError` becomes one line on stderr and exit status 1; a
closed stdout (``tagger tag ... | head``) ends quietly.
"""

from __future__ import annotations

import os
import sys

import click

from tagger import __version__
from tagger.errors import TaggerError


class TaggerGroup(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except TaggerError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(1)
        except BrokenPipeError:
            _quiet_broken_pipe()
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)


def _quiet_broken_pipe() -> None:
    # Point stdout at devnull so the interpreter's final flush does not complain again.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(0)


@click.group(cls=TaggerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tagger")
def cli() -> None:
    """Train, evaluate and apply neural taggers and dependency parsers.

    \b
    Examples:
      tagger train --task pos --train train.conllu --dev dev.conllu --out pos.tagger
      tagger evaluate --model pos.tagger test.conllu
      tagger evaluate --gold gold.conllu --pred pred.conllu --json
      tagger tag --model pos.tagger < input.txt > output.conllu
      tagger convert --from auto --to conllu wsj_0001.auto
    """


def _register() -> None:
    from tagger.cli import convert, evaluate, info, tag, train

    for module in (train, evaluate, tag, convert, info):
        cli.add_command(module.command)


_register()


def main() -> None:
    cli(prog_name="tagger")


if __name__ == "__main__":
    main()
