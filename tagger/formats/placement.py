"""Where each column of a sentence lands in each output format, for ``tagger tag`` and
``tagger convert`` alike (plain format logic, no torch).

Writers read fixed columns: CoNLL its ten fields (and MISC), ``tagged``/``pos``/``mrg``/``dp``
one POS tag (the ``xpos`` column), ``pipe`` a POS tag (``xpos``) and a ``supertag``.
:func:`place` moves the other columns to where the target format's writer reads them:

- **CoNLL-U / CoNLL-X**: the standard columns stay in their fields (a tagger of several columns,
  ``upos,xpos,feats``, has each rewritten in its own field); a ``supertag`` goes to MISC
  ``supertag=CAT`` or to XPOS (``supertag_in``, see :mod:`tagger.formats.supertags`); a generic
  column (any other name, e.g. ``tag`` from ``--columns form=1,tag=2``) goes to XPOS if that is
  free, and the others to MISC as ``NAME=VALUE`` (CoNLL-X, without MISC, refuses them).
- **one POS tag** (tagged, pos, pipe, mrg, dp, columns): the POS tag is the predicted column
  (``shown``; the first of several, e.g. UPOS of ``upos,xpos,feats``; for pipe other than the
  supertag, which has its own field), else XPOS, else UPOS, else the first generic column.

``shown`` names the columns that must be visible (what a model predicts): they win the POS
slot over what the input already had. :func:`check_output` refuses up front what a format
cannot hold (a tree in a format of tags, supertags in CoNLL-X's missing MISC);
:func:`write_chunk` writes a model's output with them.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Sequence, TextIO

from tagger.corpus.records import STANDARD_COLUMNS, TREE, Sentence
from tagger import formats
from tagger.errors import TaggerError
from tagger.formats.conll import FIELDS
from tagger.formats.supertags import (CONLL_FORMATS, MISSING, SUPERTAG_IN, SUPERTAG_KEY, misc_get, misc_set,
                                      supertags_from_conll, supertags_into_conll)

#: Output formats that hold a dependency tree (heads and labels). ``jsonl`` holds any column.
HOLDS_TREE = ("conllu", "conllx", "jsonl", "dp", "columns")
#: Output formats that hold a constituency tree (:attr:`Sentence.tree`).
HOLDS_PHRASES = ("trees", "mrg", "jsonl")
#: The bracketed-tree formats: one's ``raw`` payload (words' spellings) is the other's.
TREE_FORMATS = frozenset({"trees", "mrg"})
#: Output formats that keep the columns as they are (no POS slot to fill).
AS_IS = ("jsonl", "msuper", "text", "ccgbank")


def check_output(columns: Sequence[str], fmt: str, supertag_in: str = "misc") -> None:
    """A :class:`TaggerError` with the reason if format ``fmt`` cannot show ``columns`` (a
    model's output columns) as :func:`place` would place them."""
    if supertag_in not in SUPERTAG_IN:
        raise TaggerError(f"--supertag-in must be one of {', '.join(SUPERTAG_IN)}")
    if "head" in columns and TREE in columns and fmt != "jsonl":  # (HOLDS_TREE & HOLDS_PHRASES)
        raise TaggerError(f"the {fmt} format has no place for both the dependency tree (head, deprel) and the "
                          f"constituency tree these models predict: use --output-format jsonl")
    if "head" in columns and fmt not in HOLDS_TREE:
        raise TaggerError(f"the {fmt} format has no place for the dependency tree this model predicts "
                          f"(head, deprel): use --output-format conllu, conllx or jsonl")
    if TREE in columns and fmt not in HOLDS_PHRASES:
        raise TaggerError(f"the {fmt} format has no place for the constituency tree this model predicts: "
                          f"use --output-format trees (one per line), mrg (indented) or jsonl")
    if fmt == "conllx" and SUPERTAG_KEY in columns and supertag_in == "misc":
        raise TaggerError("CoNLL-X has no MISC column for supertags: use --supertag-in xpos or --output-format conllu")
    generic = [c for c in columns if c not in STANDARD_COLUMNS]
    if fmt == "conllx" and len(generic) > 1:
        raise TaggerError(f"CoNLL-X has room for one generic column (in XPOS), not {', '.join(generic)}: "
                          f"use --output-format conllu")


def generic_columns(sentence: Sentence, shown: Sequence[str] = ()) -> list[str]:
    """The sentence's columns with no fixed place in a format (names outside
    :data:`STANDARD_COLUMNS`): those in ``shown`` first, then the annotated others."""
    first = [c for c in shown if c not in STANDARD_COLUMNS and c in sentence.columns]
    return first + [c for c in sentence.columns if c not in STANDARD_COLUMNS and c not in first and sentence.has(c)]


def place(sentence: Sentence, fmt: str, supertag_in: str = "misc",
          shown: Sequence[str] = ()) -> tuple[Sentence, set[str]]:
    """``sentence`` with its columns where format ``fmt``'s writer reads them (see the module
    text), and, for CoNLL, the fields that now hold the ``shown`` columns (the CoNLL writers
    rewrite only those fields of lines read from CoNLL); an empty set for other formats."""
    if fmt in CONLL_FORMATS:
        return _into_conll(sentence, fmt, supertag_in, shown)
    if fmt in AS_IS:
        return sentence, set()
    return _pos_slot(sentence, fmt, shown), set()


def _pos_slot(sentence: Sentence, fmt: str, shown: Sequence[str]) -> Sentence:
    """``xpos`` (the one POS tag that tagged, pos, pipe, mrg, dp and columns read) set to the
    first ``shown`` tag column (a tree, head and deprel, is none), else kept, else UPOS, else the
    first generic column."""
    tags = [] if "head" in shown or TREE in shown else [c for c in shown if not (fmt == "pipe" and c == SUPERTAG_KEY)]
    source = next(iter(tags), None)
    if source is None and not sentence.has("xpos"):
        source = "upos" if sentence.has("upos") else next(iter(generic_columns(sentence)), None)
    if source is None or source == "xpos" or source not in sentence.columns:
        return sentence
    return replace(sentence, columns={**sentence.columns, "xpos": list(sentence.columns[source])})


def _into_conll(sentence: Sentence, dialect: str, supertag_in: str, shown: Sequence[str]) -> tuple[Sentence, set[str]]:
    """:func:`place` for CoNLL-U and CoNLL-X."""
    written = {c for c in shown if c in FIELDS[dialect]}
    supertag_in_xpos = supertag_in == "xpos" and sentence.has(SUPERTAG_KEY)
    if SUPERTAG_KEY in shown:
        written |= {"xpos", "misc" if dialect == "conllu" else "upos"} if supertag_in == "xpos" else {"misc"}
    if SUPERTAG_KEY in sentence.columns:
        sentence = supertags_into_conll(sentence, supertag_in, dialect)
    generic = generic_columns(sentence, shown)
    if not generic:
        return sentence, written
    xpos_taken = supertag_in_xpos or "xpos" in shown or (sentence.has("xpos") and generic[0] not in shown)
    columns = dict(sentence.columns)
    misc = list(columns.get("misc") or [MISSING] * len(sentence))
    in_misc = False
    for i, name in enumerate(generic):
        values = columns.pop(name)
        if i == 0 and not xpos_taken:
            columns["xpos"], field = list(values), "xpos"
        elif dialect == "conllx":
            raise TaggerError(f"CoNLL-X has no MISC column for the '{name}' column (XPOS holds "
                              f"{'another' if i else 'the POS tag'}): use conllu", sentence.source, sentence.line)
        else:
            misc = [misc_set(m, name, _misc_value(v, name, sentence)) for m, v in zip(misc, values)]
            field, in_misc = "misc", True
        if name in shown:
            written.add(field)
    if in_misc:
        columns["misc"] = misc
    return replace(sentence, columns=columns), written


def _misc_value(value: object, name: str, sentence: Sentence) -> str:
    """``value`` as a MISC value; a :class:`TaggerError` if it holds ``|``, MISC's separator."""
    text = str(value)
    if "|" in text:
        raise TaggerError(f"column '{name}' value '{text}' holds '|', which MISC cannot carry", sentence.source,
                          sentence.line)
    return text


def generic_from_conll(sentence: Sentence, names: Sequence[str]) -> Sentence:
    """The inverse of :func:`place` into CoNLL, for a ``columns`` spec's ``names``: generic
    columns the sentence lacks come from MISC ``NAME=VALUE``; then one left comes from XPOS,
    if the spec does not write XPOS itself."""
    wanted = [n for n in names if n != "form" and n not in STANDARD_COLUMNS and not sentence.has(n)]
    if not wanted:
        return sentence
    columns = dict(sentence.columns)
    misc = columns.get("misc") or [MISSING] * len(sentence)
    left = []
    for name in wanted:
        values = [misc_get(m, name) for m in misc]
        if any(v != MISSING for v in values):
            columns[name] = values
            columns["misc"] = misc = [misc_set(m, name, MISSING) for m in misc]
        else:
            left.append(name)
    if len(left) == 1 and "xpos" not in names and sentence.has("xpos"):
        columns[left[0]] = list(columns["xpos"])
    return replace(sentence, columns=columns)


def map_columns(sentence: Sentence, source_format: str, target_format: str, supertag_in: str,
                names: Sequence[str] = (), column: str | None = None) -> Sentence:
    """Adapt a sentence read as ``source_format`` to what ``target_format``'s writer expects
    (``tagger convert``; ``names``: the column spec's names when writing the columns format;
    ``column``: the tag a format of one tag a word shows, default XPOS, else UPOS).

    - CoNLL -> CoNLL: unchanged (the same dialect keeps its original lines).
    - into CoNLL: supertags go to MISC or XPOS, generic columns to XPOS or MISC (:func:`place`).
    - out of CoNLL: supertags come back from MISC or XPOS (:func:`supertags_from_conll`), a
      columns spec's generic columns from MISC or XPOS (:func:`generic_from_conll`); formats
      with one POS column (tagged, pos, pipe, ...) get UPOS, or a generic column, where XPOS is empty.
    The format-specific ``raw`` payload is kept only when the format does not change, or goes
    from one bracketed-tree format to the other (the words' spellings: :class:`~tagger.formats.ptb.Spelling`).
    """
    source_conll, target_conll = source_format in CONLL_FORMATS, target_format in CONLL_FORMATS
    if source_format != target_format and not {source_format, target_format} <= TREE_FORMATS:
        sentence = replace(sentence, raw=None)
    if source_conll and target_conll:
        return sentence
    if source_conll:
        sentence = generic_from_conll(supertags_from_conll(sentence, supertag_in, source_format), names)
    if column is not None and not target_conll:
        return _pos_slot(sentence, target_format, [column])
    return place(sentence, target_format, supertag_in)[0]


#: Output formats whose writer rewrites the lines of a sentence read from CoNLL: told the fields
#: that hold the model's output columns (``place``), it writes only those (and FORM) into them and
#: leaves the rest of each line as it was, rather than formatting every column of every word again.
REWRITING_FORMATS = ("conllu", "conllx")


def output_value(sentence: Sentence, name: str) -> Any:
    """What a jsonl record or the Python API gives of column ``name``: its values; for the tree
    the line the ``trees`` format writes (words spelled as there, ``\\/`` for a slash), None
    where the sentence has none."""
    if name != TREE:
        return sentence.output(name)
    if sentence.tree is None:
        return None
    from tagger.corpus.trees import Tree
    from tagger.formats import mrg

    return mrg.written(sentence, Tree.bracketed, "the tree")


def write_chunk(sentences: list[Sentence], extra: list | None, model: Any, stream: TextIO, fmt: str,
                supertag_in: str = "misc") -> None:
    """Write tagged sentences (``tagger tag``; ``model``: anything with ``output_columns``, the
    columns it filled); ``extra`` holds per-token multi-tags when multi-tagging. The
    predicted columns go where ``fmt`` shows them (:func:`tagger.formats.placement.place`:
    every one in its CoNLL field, supertags in CoNLL MISC or, with ``supertag_in="xpos"``, XPOS;
    the POS field of tagged and pipe is the predicted tag, the first column of a model of
    several; jsonl has every column)."""
    if fmt == "jsonl":
        columns = model.output_columns
        for i, sentence in enumerate(sentences):
            record: dict[str, Any] = {"words": sentence.words}
            for name in columns:
                record[name] = output_value(sentence, name)
            if extra is not None:
                record["multitags"] = extra[i]
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    elif fmt == "msuper":  # C&C multi-tagger style: word, tag count, then tag/probability pairs
        for i, sentence in enumerate(sentences):
            for t, word in enumerate(sentence.words):
                tags = extra[i][t]  # (tag, probability), best first: tagger.tagging.tag asks for one at least
                stream.write("\t".join([word, str(len(tags))] + [f"{tag}\t{p:.6g}" for tag, p in tags]) + "\n")
            stream.write("\n")
    else:
        placed = [place(sentence, fmt, supertag_in, model.output_columns) for sentence in sentences]
        options = {}
        if fmt in REWRITING_FORMATS:
            options["columns"] = sorted(set().union(*(fields for _, fields in placed)))
        formats.write([sentence for sentence, _ in placed], stream, fmt, **options)
    stream.flush()
