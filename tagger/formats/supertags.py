"""CCG supertags in CoNLL files, which have no supertag column of their own.

By default a supertag travels in MISC as ``supertag=CAT`` and the POS tag stays in XPOS; with
``supertag_in="xpos"`` the supertag takes XPOS and the POS tag moves to MISC as ``xpos=TAG``
(CoNLL-X, without MISC: to CPOSTAG), so that reading back restores both. Plain format logic,
no torch: used by ``tagger convert``, ``tagger tag``, training and evaluation.
"""

from __future__ import annotations

from dataclasses import replace

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError

#: Formats whose files are CoNLL-style ten-column tables (no supertag column of their own).
CONLL_FORMATS = ("conllu", "conllx")

#: Where a CoNLL file may carry supertags (``--supertag-in``).
SUPERTAG_IN = ("misc", "xpos")

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
    if value != MISSING and value and "|" not in misc and misc.partition("=")[0] != key:  # most words: no parsing
        return f"{key}={value}" if misc in ("", MISSING) else f"{misc}|{key}={value}"
    items = [(k, v) for k, v in _misc_items(misc) if k != key]
    if value != MISSING:
        items.append((key, value))
    return _misc_text(items)


def misc_get(misc: str, key: str) -> str:
    """The value of ``key`` in MISC, ``_`` if absent."""
    return next((v for k, v in _misc_items(misc) if k == key), MISSING)


def supertags_into_conll(sentence: Sentence, supertag_in: str, dialect: str = "conllu") -> Sentence:
    """Move the ``supertag`` column into MISC (default; replacing a ``supertag=`` already there)
    or XPOS, for a CoNLL writer.

    With ``xpos`` the POS tag it displaces goes to MISC ``xpos=TAG`` (CoNLL-U; an older
    ``supertag=`` there is dropped) or, CoNLL-X having no MISC, to CPOSTAG where that is empty.
    CoNLL-X cannot carry supertags in MISC.
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
            columns["misc"] = [misc_set(misc_set(m, SUPERTAG_KEY, MISSING), POS_KEY, p) for m, p in zip(misc, pos)]
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
