"""CCGbank AUTO derivations (format name ``ccgbank``; ``auto`` names format detection, and is
kept as an output-only alias of ``ccgbank``): an ``ID=wsj_0001.1 PARSER=GOLD NUMPARSE=1`` line, then the
derivation on one line, built from

* internal nodes ``(<T CAT HEAD NCHILD> child [child] )`` and
* leaves ``(<L CAT MODPOS ORIGPOS WORD PREDARGCAT>)``.

Categories contain brackets of their own (``(S[dcl]\\NP)/NP``), so nodes are recognised by
their ``(<T``/``(<L`` openers and ``>``/``>)`` closers, never by counting parentheses. Each
leaf gives a word, its POS (ORIGPOS, column ``xpos``) and its supertag (CAT, ``supertag``).

``raw`` is ``{"format": "ccgbank", "id": ..., "header": the ID line, "derivation": the line}``;
derivations cannot be rebuilt from tags, so :func:`write` only writes sentences that carry one.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, TextIO

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats.base import Source, iter_lines, source_name

NAME = "ccgbank"
EXTENSIONS = (".auto",)


#: A leaf: five fields separated by spaces, the last closed by ``>)`` (the fields themselves
#: hold no spaces; the word may hold ``>)``).
_LEAF = re.compile(r"\(<L\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+?)>\)(?=\s|\)|$)")


def parse_derivation(text: str, name: str = "<string>", line: int | None = None) -> list[list[str]]:
    """The leaves of a derivation, each ``[CAT, MODPOS, ORIGPOS, WORD, PREDARGCAT]``.

    Checks the whole structure: balanced nodes, 3 header fields per internal node with as
    many children as it announces, 5 fields per leaf, nothing after the root.
    """
    leaves: list[list[str]] = []
    open_nodes: list[list[int]] = []  # [announced children, children seen] per open <T> node
    position, done = 0, False

    def fail(message: str, at: int) -> TaggerError:
        return TaggerError(f"{message} (column {at + 1})", name, line)

    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            break
        if done:
            raise fail("text after the end of the derivation", position)
        if text.startswith("(<L", position):
            leaf = _LEAF.match(text, position)  # a word may hold '>)' (an emoticon, ':>)'): fields by spaces
            if leaf is None:
                end = text.find(">)", position)
                if end < 0:
                    raise fail("leaf not closed by '>)'", position)
                fields = text[position + 3 : end].split()
                raise fail(f"leaf has {len(fields)} fields, expected 5 (CAT MODPOS ORIGPOS WORD PREDARG)", position)
            leaves.append(list(leaf.groups()))
            position = leaf.end()
            completed = True
        elif text.startswith("(<T", position):
            end = text.find(">", position)
            fields = text[position + 3 : end].split() if end >= 0 else []
            if len(fields) != 3 or fields[2] not in ("1", "2"):
                raise fail("node header should be '<T CAT HEAD NCHILD>' with NCHILD 1 or 2", position)
            open_nodes.append([int(fields[2]), 0])
            position = end + 1
            completed = False
        elif text[position] == ")":
            if not open_nodes:
                raise fail("unbalanced brackets: ')' closes no node", position)
            announced, seen = open_nodes.pop()
            if announced != seen:
                raise fail(f"node has {seen} children, its header says {announced}", position)
            position += 1
            completed = True
        else:
            raise fail(f"expected '(<T', '(<L' or ')', found '{text[position:position + 10]}'", position)
        if completed:
            if open_nodes:
                open_nodes[-1][1] += 1
            else:
                done = True
    if open_nodes:
        raise TaggerError(f"unbalanced brackets: {len(open_nodes)} node(s) not closed", name, line)
    if not leaves:
        raise TaggerError("derivation has no leaves", name, line)
    return leaves


def read(source: Source) -> Iterator[Sentence]:
    """Yield one sentence per derivation (words, ``xpos`` and ``supertag`` columns)."""
    name = source_name(source)
    header: tuple[int, str] | None = None
    for number, text in iter_lines(source, name):
        if not text.strip():
            continue
        if text.startswith("ID="):
            if header is not None:
                raise TaggerError("ID line without a derivation", name, header[0])
            header = (number, text)
            continue
        leaves = parse_derivation(text, name, number)
        ident = header[1].split()[0][3:] if header else None
        raw = {"format": NAME, "id": ident, "header": header[1] if header else None, "derivation": text}
        columns = {"xpos": [leaf[2] for leaf in leaves], "supertag": [leaf[0] for leaf in leaves]}
        yield Sentence([leaf[3] for leaf in leaves], columns, source=name,
                       line=header[0] if header else number, raw=raw)
        header = None
    if header is not None:
        raise TaggerError("ID line without a derivation", name, header[0])


def write(sentences: Iterable[Sentence], stream: TextIO) -> None:
    """Write each sentence's own derivation (ID line, then derivation). A sentence without one,
    or whose words, POS or supertags no longer match it, is a :class:`TaggerError`: a derivation
    cannot be rebuilt from tags (write the ``pipe`` format instead)."""
    for sentence in sentences:
        raw = sentence.raw if isinstance(sentence.raw, dict) else {}
        if raw.get("format") != NAME:
            raise TaggerError("cannot write AUTO: the sentence has no CCG derivation (use the pipe format)",
                              sentence.source, sentence.line)
        leaves = parse_derivation(raw["derivation"], sentence.source, sentence.line)
        expected = {"xpos": [leaf[2] for leaf in leaves], "supertag": [leaf[0] for leaf in leaves]}
        changed = [leaf[3] for leaf in leaves] != sentence.words or any(
            sentence.columns.get(column, values) != values for column, values in expected.items())
        if changed:
            raise TaggerError("cannot write AUTO: words or tags differ from the sentence's derivation "
                              "(use the pipe format)", sentence.source, sentence.line)
        if raw.get("header"):
            stream.write(raw["header"] + "\n")
        stream.write(raw["derivation"] + "\n")
