"""Constituency trees as plain data (no torch): what :attr:`Sentence.tree` holds.

A :class:`Tree` is a label and its children in order, each a :class:`Tree` or a word (``str``).
A preterminal is a tree over one word: its label is the word's tag. Empty elements (the Penn
Treebank's ``-NONE-`` traces) are preterminals like any other; the unlabelled outer bracket of
the WSJ ``.mrg`` files is a tree labelled ``""``::

    (S (NP (NNP Pierre)) (VBZ sleeps))
    Tree("S", (Tree("NP", (Tree("NNP", ("Pierre",)),)), Tree("VBZ", ("sleeps",))))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from tagger.corpus.spaces import is_separator


@dataclass(frozen=True)
class Tree:
    """A constituent: ``label`` over ``children`` (trees and words, in order)."""

    label: str
    children: tuple[Union["Tree", str], ...]

    @property
    def is_preterminal(self) -> bool:
        """True for ``(TAG word)``: one child, a word."""
        return len(self.children) == 1 and isinstance(self.children[0], str)

    def leaves(self) -> list[tuple[str, str]]:
        """The ``(tag, word)`` pairs of the preterminals in order, empty elements included
        (no recursion: deep trees are fine)."""
        out: list[tuple[str, str]] = []
        stack: list[Tree | str] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                continue  # a word outside a preterminal (not made by the .mrg reader)
            if node.is_preterminal:
                out.append((node.label, node.children[0]))  # type: ignore[arg-type]
            else:
                stack.extend(reversed(node.children))
        return out

    def bracketed(self) -> str:
        """The tree on one line, ``(S (NP (NNP Pierre)) (VBZ sleeps))`` (no recursion); words
        and labels as :func:`escaped`."""
        parts: list[str] = []
        stack: list[Tree | str] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                parts.append(node)
                continue
            parts.append(f"({escaped(node.label)} ")
            stack.append(")")  # plain strings on the stack are text: words (escaped), spaces, brackets
            for i, child in enumerate(reversed(node.children)):
                stack.append(escaped(child) if isinstance(child, str) else child)
                if i < len(node.children) - 1:
                    stack.append(" ")
        return "".join(parts)


#: How a bracket in a word or a label is written in a bracketed tree, as in the Penn Treebank (a
#: bare one would open or close a constituent): what the .mrg and .trees readers read back.
ESCAPES = {"(": "-LRB-", ")": "-RRB-"}


def escaped(text: str) -> str:
    """A word or label as it can stand in a bracketed tree: its ``(`` and ``)`` as ``-LRB-`` and
    ``-RRB-`` (:data:`ESCAPES`). A ``ValueError`` for white space in it, which no bracketed tree
    can hold (the word would read back as two)."""
    if any(map(is_separator, text)):
        raise ValueError(f"'{text}' holds white space, which a bracketed tree cannot hold")
    if "(" in text or ")" in text:
        for bracket, escape in ESCAPES.items():
            text = text.replace(bracket, escape)
    return text


__all__ = ["ESCAPES", "Tree", "escaped"]
