"""Bracketed trees one a line (``.trees``): what EVALB and most parsers read and write.

``( (S (NP-SBJ (NNP Pierre) (NNP Vinken) ) (VP (MD will) ...) (. .) ) )`` on one line; the
trees are those of :mod:`tagger.formats.mrg` (same leaves, same :attr:`Sentence.tree`), only
laid out one a line. Reading is line by line, as EVALB reads: a line is one sentence; a line
holding several top-level trees is one sentence whose tree is an unlabelled bracket over them
(which :mod:`tagger.evaluation.evalb` scores as EVALB scores the bare line); a tree left open
at the end of a line goes on over the next lines. A blank line is skipped, or with
``blank_lines`` an empty sentence (no words, no tree: what EVALB counts as a skipped
sentence; ``tagger evaluate`` reads files so), except after the last tree. Slashes in words are
read and written as the ``.mrg`` format does (``\\/`` read as ``/``, written as ``\\/`` unless
the file spelled the word with a bare ``/``): a parser's trees over words read from PTB files
(``.pos``, ``.mrg``, tagged) match the gold ``.mrg`` words as EVALB compares them.
"""

from __future__ import annotations

from typing import Iterable, Iterator, TextIO

from tagger.corpus.records import Sentence
from tagger.corpus.trees import Tree
from tagger.formats import mrg
from tagger.formats.base import Source, source_name

NAME = "trees"
EXTENSIONS = (".trees",)


def read(source: Source, *, blank_lines: bool = False) -> Iterator[Sentence]:
    """Yield one sentence per line (see the module's docstring)."""
    name = source_name(source)
    group: list[Tree] = []
    start = end = 0  # the lines of the group's first tree and of its last tree's end
    for tree, first, last in mrg.trees(source, name):
        if group and first == end:
            group.append(tree)
            end = last
            continue
        if group:
            yield _sentence(group, name, start)
        if blank_lines:
            for number in range(end + 1, first):
                yield Sentence([], {}, source=name, line=number)
        group, start, end = [tree], first, last
    if group:
        yield _sentence(group, name, start)


def _sentence(group: list[Tree], name: str, line: int) -> Sentence:
    return mrg.sentence(group[0] if len(group) == 1 else Tree("", tuple(group)), name, line)


def write(sentences: Iterable[Sentence], stream: TextIO) -> None:
    """Write each tree on one line (see :func:`tagger.formats.mrg.write_trees`)."""
    mrg.write_trees(sentences, stream, Tree.bracketed, "trees")
