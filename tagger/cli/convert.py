"""``tagger convert``: read one corpus format, write another.

Thin over :func:`tagger.formats.read` and :func:`tagger.formats.write`; the only logic here is
:func:`map_columns`, which moves CCG supertags in and out of CoNLL files (CoNLL has no
supertag column): by default a supertag travels in MISC as ``supertag=CAT`` and the POS tag
stays in XPOS; with ``--supertag-in xpos`` the supertag takes XPOS and the POS tag moves to
MISC as ``xpos=TAG`` (so that converting back restores both).
"""

from __future__ import annotations

import sys
from dataclasses import replace

import click

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError

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


def supertags_into_conll(sentence: Sentence, supertag_in: str) -> Sentence:
    """Move the ``supertag`` column into MISC (default) or XPOS, for a CoNLL writer."""
    columns = dict(sentence.columns)
    supertags = columns.pop(SUPERTAG_KEY, None)
    if supertags is None or not sentence.has(SUPERTAG_KEY):
        return replace(sentence, columns=columns)
    n = len(sentence)
    misc = list(columns.get("misc") or [MISSING] * n)
    if supertag_in == "xpos":
        pos = columns.get("xpos") or [MISSING] * n
        misc = [misc_set(m, POS_KEY, p) for m, p in zip(misc, pos)]
        columns["xpos"] = list(supertags)
    else:
        misc = [misc_set(m, SUPERTAG_KEY, s) for m, s in zip(misc, supertags)]
    columns["misc"] = misc
    return replace(sentence, columns=columns)


def supertags_from_conll(sentence: Sentence, supertag_in: str) -> Sentence:
    """The inverse of :func:`supertags_into_conll`: a ``supertag`` column from MISC or XPOS."""
    columns = dict(sentence.columns)
    if sentence.has(SUPERTAG_KEY):
        return sentence
    n = len(sentence)
    misc = list(columns.get("misc") or [MISSING] * n)
    if supertag_in == "xpos":
        if not sentence.has("xpos"):
            return sentence
        columns[SUPERTAG_KEY] = list(columns["xpos"])
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
        return supertags_into_conll(sentence, supertag_in)
    if source_conll:
        sentence = supertags_from_conll(sentence, supertag_in)
    if not sentence.has("xpos") and sentence.has("upos"):
        sentence = replace(sentence, columns={**sentence.columns, "xpos": list(sentence.columns["upos"])})
    return sentence


def detect_format(path: str) -> str:
    """The format name ``tagger.formats`` detects for ``path`` (for the column mapping)."""
    from tagger import formats

    return formats.detect(path)


EPILOG = """\b
Examples:
  tagger convert --to conllu wsj_0001.auto > wsj_0001.conllu        # supertag in MISC
  tagger convert --to conllu --supertag-in xpos wsj_0001.auto       # supertag in XPOS
  tagger convert --from mrg --to tagged wsj_0001.mrg -o wsj_0001.pos
  tagger convert --to pipe en_ewt-ud-dev.conllu
  tagger convert --from columns --columns form=2,tag=6 --to conllu data.tsv
"""


@click.command("convert", epilog=EPILOG)
@click.argument("input_path", metavar="INPUT", default="-")
@click.option("--from", "source_format", default="auto", show_default=True, metavar="FMT",
              help="Input format (conllu, conllx, tagged, pos, mrg, dp, auto (CCGbank), pipe, text, columns); "
              "'auto' detects it.")
@click.option("--to", "target_format", required=True, metavar="FMT", help="Output format.")
@click.option("--columns", "columns_spec", metavar="SPEC", help="Column layout for the 'columns' format, e.g. form=2,tag=6.")
@click.option("--supertag-in", type=click.Choice(["misc", "xpos"]), default="misc", show_default=True,
              help="Where CoNLL files carry CCG supertags: MISC 'supertag=CAT', or XPOS (POS moves to MISC 'xpos=').")
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
    from tagger import formats
    from tagger.formats.base import open_output

    if target_format not in formats.FORMATS or target_format == "auto" and False:
        raise click.BadParameter(f"unknown format '{target_format}'", param_hint="--to")
    source = sys.stdin if input_path == "-" else input_path
    resolved = source_format if source_format != "auto" else detect_format(input_path)
    if columns_spec is None and "columns" in (resolved, target_format):
        raise TaggerError("the 'columns' format needs --columns, e.g. --columns form=2,tag=6", input_path)
    sentences = formats.read(source, resolved, **({} if resolved != "columns" else {}))
    mapped = (map_columns(s, resolved, target_format, supertag_in) for s in sentences)
    stream = open_output(output_path)
    try:
        formats.write(mapped, stream, target_format)
    finally:
        if stream is not sys.stdout:
            stream.close()
