"""``tagger convert``: read one corpus format, write another.

Thin over :func:`tagger.formats.read` and :func:`tagger.formats.write`; the only logic here is
:func:`map_columns`, which moves CCG supertags in and out of CoNLL files (CoNLL has no
supertag column): by default a supertag travels in MISC as ``supertag=CAT`` and the POS tag
stays in XPOS; with ``--supertag-in xpos`` the supertag takes XPOS and the POS tag moves to
MISC as ``xpos=TAG`` (CoNLL-X, without MISC: to CPOSTAG), so that converting back restores both.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import click

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats import FORMATS, OUTPUT_ALIASES, read, sniff, write
from tagger.formats.base import Source, open_output
from tagger.formats.columns import parse_column_spec

#: Formats whose files are CoNLL-style ten-column tables (no supertag column of their own).
CONLL_FORMATS = ("conllu", "conllx")

#: MISC keys used to carry a supertag, or the POS tag it displaced from XPOS.
SUPERTAG_KEY = "supertag"
POS_KEY = "xpos"

MISSING = "_"


def _misc_items(misc: str) -> list[tuple[str, str]]:
    """``A=1|B=2`` -> ``[("A", "1"), ("B", "2")]``; ``_`` -> ``[]`` (bare flags keep an empty value)."""
    if misc in ("", MISSING):
        return []
    items = []
    for part in misc.split("|"):
        key, _, value = part.partition("=")
        items.append((key, value))
    return items


def _misc_text(items: list[tuple[str, str]]) -> str:
    return "|".join(f"{k}={v}" if v else k for k, v in items) or MISSING


def misc_set(misc: str, key: str, value: str) -> str:
    """MISC with ``key=value`` set (replacing an earlier value; ``_`` as the value removes it)."""
    items = [(k, v) for k, v in _misc_items(misc) if k != key]
    if value != MISSING:
        items.append((key, value))
    return _misc_text(items)


def misc_get(misc: str, key: str) -> str:
    """The value of ``key`` in MISC, ``_`` if absent."""
    return next((v for k, v in _misc_items(misc) if k == key), MISSING)


def supertags_into_conll(sentence: Sentence, supertag_in: str, dialect: str = "conllu") -> Sentence:
    """Move the ``supertag`` column into MISC (default) or XPOS, for a CoNLL writer.

    With ``xpos`` the POS tag it displaces goes to MISC ``xpos=TAG`` (CoNLL-U) or, CoNLL-X having
    no MISC, to CPOSTAG where that is empty. CoNLL-X cannot carry supertags in MISC.
    """
    columns = dict(sentence.columns)
    supertags = columns.pop(SUPERTAG_KEY, None)
    if supertags is None or not sentence.has(SUPERTAG_KEY):
        return replace(sentence, columns=columns)
    n = len(sentence)
    misc = list(columns.get("misc") or [MISSING] * n)
    if supertag_in == "xpos":
        pos = list(columns.get("xpos") or [MISSING] * n)
        if dialect == "conllx":
            upos = columns.get("upos") or [MISSING] * n
            columns["upos"] = [u if u != MISSING else p for u, p in zip(upos, pos)]
        else:
            columns["misc"] = [misc_set(m, POS_KEY, p) for m, p in zip(misc, pos)]
        columns["xpos"] = list(supertags)
    elif dialect == "conllx":
        raise TaggerError(
            "CoNLL-X has no MISC column for supertags: use --supertag-in xpos", sentence.source, sentence.line
        )
    else:
        columns["misc"] = [misc_set(m, SUPERTAG_KEY, t) for m, t in zip(misc, supertags)]
    return replace(sentence, columns=columns)


def supertags_from_conll(sentence: Sentence, supertag_in: str, dialect: str = "conllu") -> Sentence:
    """The inverse of :func:`supertags_into_conll`: a ``supertag`` column from MISC or XPOS.

    A sentence that already has supertags, or has none where they are looked for, is returned
    unchanged.
    """
    if sentence.has(SUPERTAG_KEY):
        return sentence
    columns = dict(sentence.columns)
    n = len(sentence)
    misc = list(columns.get("misc") or [MISSING] * n)
    if supertag_in == "xpos":
        if not sentence.has("xpos"):
            return sentence
        columns[SUPERTAG_KEY] = list(columns["xpos"])
        if dialect == "conllx":
            columns["xpos"] = list(columns.get("upos") or [MISSING] * n)
            columns["upos"] = [MISSING] * n
        else:
            columns["xpos"] = [misc_get(m, POS_KEY) for m in misc]
            columns["misc"] = [misc_set(m, POS_KEY, MISSING) for m in misc]
    else:
        tags = [misc_get(m, SUPERTAG_KEY) for m in misc]
        if all(t == MISSING for t in tags):
            return sentence
        columns[SUPERTAG_KEY] = tags
        columns["misc"] = [misc_set(m, SUPERTAG_KEY, MISSING) for m in misc]
    return replace(sentence, columns=columns)


def map_columns(sentence: Sentence, source_format: str, target_format: str, supertag_in: str) -> Sentence:
    """Adapt a sentence read as ``source_format`` to what ``target_format``'s writer expects.

    - CoNLL -> CoNLL: unchanged (the same dialect keeps its original lines).
    - into CoNLL: supertags go to MISC or XPOS (:func:`supertags_into_conll`).
    - out of CoNLL: supertags come back from MISC or XPOS (:func:`supertags_from_conll`);
      formats with one POS column (tagged, pos, pipe, ...) get UPOS where XPOS is empty.
    The format-specific ``raw`` payload is kept only when the format does not change.
    """
    source_conll, target_conll = source_format in CONLL_FORMATS, target_format in CONLL_FORMATS
    if source_format != target_format:
        sentence = replace(sentence, raw=None)
    if source_conll and target_conll:
        return sentence
    if target_conll:
        return supertags_into_conll(sentence, supertag_in, target_format)
    if source_conll:
        sentence = supertags_from_conll(sentence, supertag_in, source_format)
    if not sentence.has("xpos") and sentence.has("upos"):
        sentence = replace(sentence, columns={**sentence.columns, "xpos": list(sentence.columns["upos"])})
    return sentence


def resolve_format(source: Source, fmt: str, columns_given: bool = False) -> tuple[str, Source]:
    """The concrete format of ``source`` and a source to read instead (stdin is replayed).

    ``auto`` detects it as :func:`tagger.formats.read` does (CCGbank AUTO files included),
    with a ``note:`` on stderr where the guess is unsure (see :func:`tagger.formats.sniff`).
    """
    if fmt != "auto":
        return fmt, source
    return sniff(source, columns_given)


EPILOG = """\b
Examples:
  tagger convert --to conllu wsj_0001.auto > wsj_0001.conllu        # supertag in MISC
  tagger convert --to conllu --supertag-in xpos wsj_0001.auto       # supertag in XPOS
  tagger convert --to pipe wsj_0001.conllu                          # and back
  tagger convert --from mrg --to tagged wsj_0001.mrg -o wsj_0001.tagged
  tagger convert --from columns --columns form=2,xpos=5 --to conllu data.tsv
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
              help="Output format ('ccgbank' is CCGbank AUTO: only sentences read from AUTO, unchanged).")
@click.option("--columns", "columns_spec", metavar="SPEC",
              help="Column layout for the 'columns' format (input or output), e.g. form=2,xpos=5.")
@click.option("--supertag-in", type=click.Choice(["misc", "xpos"]), default="misc", show_default=True,
              help="Where CoNLL files carry CCG supertags: MISC 'supertag=CAT', or XPOS (the POS tag then "
              "moves to MISC 'xpos=TAG').")
@click.option("--output", "-o", "output_path", metavar="FILE", help="Output file [default: stdout].")
def command(
    input_path: str,
    source_format: str,
    target_format: str,
    columns_spec: str | None,
    supertag_in: str,
    output_path: str | None,
) -> None:
    """Convert INPUT (a file, or '-' for stdin) from one corpus format to another."""
    if columns_spec is None and target_format == "columns":
        raise click.UsageError("--to columns needs --columns, e.g. --columns form=1,xpos=2")
    source: Source = sys.stdin if input_path == "-" else input_path
    # Columns without --columns are refused below, so a sniffed layout is never guessed here.
    resolved, source = resolve_format(source, source_format, columns_given=True)
    if resolved == "columns":
        if columns_spec is None:
            raise TaggerError("reading the 'columns' format needs --columns, e.g. --columns form=2,xpos=5",
                              input_path)
        sentences = read(source, "columns", columns=parse_column_spec(columns_spec))
    else:
        sentences = read(source, resolved)
    mapped = (map_columns(s, resolved, target_format, supertag_in) for s in sentences)
    stream = open_output(output_path)
    try:
        if target_format == "columns":
            assert columns_spec is not None
            write(mapped, stream, "columns", columns=parse_column_spec(columns_spec))
        else:
            write(mapped, stream, target_format)
    finally:
        if stream is not sys.stdout:
            stream.close()
