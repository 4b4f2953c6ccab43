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
        """The tree on one line, ``(S (NP (NNP Pierre)) (VBZ sleeps))`` (no recursion)."""
        parts: list[str] = []
        stack: list[Tree | str] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                parts.append(node)
                continue
            parts.append(f"({node.label} ")
            stack.append(")")  # plain strings on the stack are text: words, spaces, brackets
            for i, child in enumerate(reversed(node.children)):
                stack.append(child)
                if i < len(node.children) - 1:
                    stack.append(" ")
        return "".join(parts)


__all__ = ["Tree"]
