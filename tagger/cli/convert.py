"""``tagger convert``: read one corpus format, write another.

Thin over :func:`tagger.formats.conversion.convert`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from tagger.formats import FORMATS, OUTPUT_ALIASES
from tagger.formats.base import Source
from tagger.formats.conversion import convert
from tagger.formats.supertags import SUPERTAG_IN


EPILOG = """\b
Examples:
  tagger convert --to conllu wsj_0001.auto > wsj_0001.conllu        # supertag in MISC
  tagger convert --to conllu --supertag-in xpos wsj_0001.auto       # supertag in XPOS
  tagger convert --to pipe wsj_0001.conllu                          # and back
  tagger convert --from mrg --to tagged wsj_0001.mrg -o wsj_0001.tagged
  tagger convert --from columns --columns form=2,xpos=5 --to conllu data.tsv
  tagger convert --columns form=1,tag=2 --to conllu data.tsv        # tag in XPOS
"""

FORMAT_NAMES = sorted(FORMATS)


class OutputFormat(click.Choice):
    """The format names, and old names still taken but not listed (``auto``: CCGbank AUTO)."""

    def convert(self, value, param, ctx):
        return super().convert(OUTPUT_ALIASES.get(value, value), param, ctx)


@click.command("convert", epilog=EPILOG)
@click.argument("input_path", metavar="INPUT", default="-")
@click.option("--from", "source_format", type=click.Choice(["auto", *FORMAT_NAMES]), default="auto",
              show_default=True, help="Input format; 'auto' detects it (CCGbank AUTO files included).")
@click.option("--to", "target_format", type=OutputFormat(FORMAT_NAMES), required=True,
              help="Output format ('ccgbank' is CCGbank AUTO, 'mrg' bracketed trees: only sentences read from "
              "such files, with their derivation or tree).")
@click.option("--columns", "columns_spec", metavar="SPEC",
              help="Column layout for the 'columns' format (input or output), e.g. form=2,xpos=5.")
@click.option("--supertag-in", type=click.Choice(SUPERTAG_IN), default="misc", show_default=True,
              help="Where CoNLL files carry CCG supertags: MISC 'supertag=CAT', or XPOS (the POS tag then "
              "moves to MISC 'xpos=TAG').")
@click.option("--column", metavar="NAME", help="The tag column that a format of one tag a word (tagged, pos, dp) "
              "writes, e.g. supertag [default: xpos, else upos; a note names the columns left out].")
@click.option("--output", "-o", "output_path", metavar="FILE", help="Output file [default: stdout]; missing parent folders are created. "
              "Written to a temporary file that replaces it at the end: a run that fails before any output leaves it "
              "as it was.")
def command(
    input_path: str,
    source_format: str,
    target_format: str,
    columns_spec: str | None,
    supertag_in: str,
    column: str | None,
    output_path: str | None,
) -> None:
    """Convert INPUT (a file, a folder of files of one format, or '-' for stdin) from one corpus
    format to another."""
    if columns_spec is None and target_format == "columns":
        raise click.UsageError("--to columns needs --columns, e.g. --columns form=1,xpos=2")
    source: Source = sys.stdin if input_path == "-" else input_path
    if source_format == "auto" and input_path != "-" and os.path.isdir(input_path):
        source_format = folder_format(input_path, columns_spec is not None)
    convert(source, output_path, target_format, source_format=source_format, columns=columns_spec,
            supertag_in=supertag_in, column=column)


def folder_format(folder: str, columns_given: bool) -> str:
    """The format of the files of ``folder`` that ``--from auto`` reads, as
    :func:`tagger.formats.read` finds them (by extension, all of one format)."""
    from tagger.formats import _files

    return _files(Path(folder), "auto", columns_given)[0][1]
