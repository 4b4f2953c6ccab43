"""Converting a corpus from one format to another: what ``tagger convert`` does.

Reads with :func:`tagger.formats.read`, writes with :func:`tagger.formats.write`, and between
them :func:`tagger.formats.placement.map_columns` moves CCG supertags in and out of CoNLL files
(CoNLL has no supertag column; see :mod:`tagger.formats.supertags`) and puts generic columns
(``columns="form=1,tag=2"``) where the target format shows them.
"""

from __future__ import annotations

import os
import sys
from typing import Iterator, Mapping, TextIO

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats import OUTPUT_ALIASES, column_layout, read, sniff, write
from tagger.formats import columns as columns_format
from tagger.formats.base import Source, open_output, peek, read_once, source_name
from tagger.formats.placement import map_columns
from tagger.formats.supertags import CONLL_FORMATS, supertags_from_conll


#: Formats of one tag a word: a source's other tag columns are left out (``--column`` chooses).
ONE_TAG_FORMATS = ("tagged", "pos", "dp")

#: Tag columns that a one-tag format could write, in the order a note names them.
TAG_COLUMNS = ("upos", "xpos", "feats", "supertag")


def converted(source: Source, target_format: str, *, source_format: str = "auto",
              columns: Mapping[str, int] | str | None = None, supertag_in: str = "misc",
              dropped: list[int] | None = None, column: str | None = None) -> Iterator[Sentence]:
    """The sentences of ``source`` (a file or a stream) made ready for ``target_format``'s writer.

    What can be refused before anything is read is refused here, at the call: ``auto``
    detects the input's format (CCGbank AUTO files included, with a ``note:`` on stderr where
    the guess is unsure); ``columns``, the layout of a ``columns`` file, is needed to read one
    and to write one (a layout is never guessed here; a column file's header may name it);
    ``supertag_in``: where CoNLL files carry
    CCG supertags (``misc`` or ``xpos``). ``dropped[0]`` counts the multiword-token lines that a
    CoNLL-X target leaves out (:func:`_counting_ranges`), ``dropped[1]`` the empty-node lines. ``column``: the tag column that a format
    of one tag a word (:data:`ONE_TAG_FORMATS`) writes (default: XPOS, else UPOS; a ``note:`` names
    the tag columns left out)."""
    target_format = OUTPUT_ALIASES.get(target_format, target_format)
    if column is not None and target_format not in ONE_TAG_FORMATS:
        raise TaggerError(f"--column chooses the one tag of {', '.join(ONE_TAG_FORMATS)}: --to {target_format} "
                          "writes every column it has a place for")
    layout = column_layout(columns)
    if layout is None and target_format == "columns":
        raise TaggerError("writing the 'columns' format needs --columns, e.g. --columns form=1,xpos=2")
    name = source_name(source)
    resolved, source = (source_format, source) if source_format != "auto" else sniff(source, columns_given=True)
    if resolved == "columns" and layout is None:  # the file's own header may name it (formats.columns.header_layout)
        lines, source = peek(source)
        if columns_format.header_layout(lines, name) is None:
            raise TaggerError(f"{columns_format.NEEDS_LAYOUT} (or a '# --columns SPEC' header line)", name)
    untagged = {"check_tokens": False} if resolved == "text" else {}  # tokens tagged poorly: not converted poorly
    sentences = read(source, resolved, columns=layout if resolved == "columns" else None, **untagged)
    if dropped is not None and target_format == "conllx":
        sentences = _counting_ranges(sentences, dropped)
    names = list(layout) if target_format == "columns" and layout else []
    if target_format in ONE_TAG_FORMATS:
        if resolved in CONLL_FORMATS:  # supertags out of MISC (or XPOS) first: a column like any other
            sentences = (supertags_from_conll(s, supertag_in, resolved) for s in sentences)
        sentences = _one_tag(sentences, column, name)
    return (map_columns(s, resolved, target_format, supertag_in, names, column) for s in sentences)


def _one_tag(sentences: Iterator[Sentence], column: str | None, name: str) -> Iterator[Sentence]:
    """``sentences`` for a format of one tag a word: ``column`` must be in the first one that has
    words; without it, a ``note:`` names the tag columns that are not written."""
    checked = False
    for sentence in sentences:
        if not checked and len(sentence):
            checked = True
            present = [c for c in TAG_COLUMNS if sentence.has(c)] + [
                c for c in sentence.columns if c not in TAG_COLUMNS and c not in ("head", "deprel", "lemma", "misc",
                                                                                   "deps") and sentence.has(c)]
            if column is not None and column not in present:
                raise TaggerError(f"--column {column}: the input has no such column (it has: "
                                  f"{', '.join(present) or 'none'})", sentence.source or name, sentence.line)
            written = column or next((c for c in ("xpos", "upos") if c in present), present[0] if present else None)
            left = [c for c in present if c != written]
            if column is None and written is not None and left:
                print(f"note: {name}: one tag a word is written, its {written}; its {' and '.join(left)} "
                      f"{'is' if len(left) == 1 else 'are'} left out (--column {left[0]} writes that)",
                      file=sys.stderr, flush=True)
        yield sentence


def convert(source: Source, output: str | os.PathLike | TextIO | None, target_format: str, *,
            source_format: str = "auto", columns: Mapping[str, int] | str | None = None,
            supertag_in: str = "misc", column: str | None = None) -> None:
    """Write the sentences of ``source`` to ``output`` (a path, created with its folders; a text
    stream; ``None``/``-``: stdout) in ``target_format``; see :func:`converted`. Input that is
    refused before reading leaves ``output`` untouched."""
    with read_once(source) as source:  # a pipe (<(command)) is read once: sniffed and read
        dropped = [0, 0]  # multiword-token and empty-node lines, which CoNLL-X cannot hold (a note says how many)
        sentences = converted(source, target_format, source_format=source_format, columns=columns,
                              supertag_in=supertag_in, dropped=dropped, column=column)
        target_format = OUTPUT_ALIASES.get(target_format, target_format)
        stream = open_output(output) if output is None or isinstance(output, (str, os.PathLike)) else output
        try:
            if target_format == "columns":
                write(sentences, stream, "columns", columns=column_layout(columns))
            else:
                write(sentences, stream, target_format)
        finally:
            if stream is not sys.stdout and stream is not output:
                stream.close()
        if dropped[0]:
            print(f"note: {source_name(source)}: CoNLL-X has no multiword tokens: their {dropped[0]} lines "
                  f"(IDs such as 3-4) are left out, their words kept", file=sys.stderr, flush=True)
        if dropped[1]:
            print(f"note: {source_name(source)}: CoNLL-X has no empty nodes: their {dropped[1]} lines (IDs such as "
                  f"8.1, with the enhanced graph in DEPS) are left out", file=sys.stderr, flush=True)


def _counting_ranges(sentences: Iterator[Sentence], dropped: list[int]) -> Iterator[Sentence]:
    """``sentences``, counting in ``dropped`` the multiword-token range lines and the empty-node
    lines of CoNLL-U ones."""
    for sentence in sentences:
        raw = sentence.raw if isinstance(sentence.raw, dict) else {}
        if raw.get("format") == "conllu":
            ids = [line.split("\t", 1)[0] for line in raw["lines"] if not line.startswith("#")]
            dropped[0] += sum("-" in i for i in ids)
            dropped[1] += sum("." in i for i in ids)
        yield sentence


__all__ = ["convert", "converted"]
