"""Constituency trees as symbol sequences, and back (Vinyals et al. 2015, "Grammar as a Foreign
Language"): what the sequence-to-sequence parser learns to write, and the repair of what it wrote.

**Normalising.** The parser learns :func:`normalise`'d trees: ``-NONE-`` empty elements are
removed, and so are the constituents left without children by that; phrase labels lose their
function tags and co-indices (the label is cut at its first ``-``, ``=`` or ``|`` after the first
character: ``NP-SBJ-1``, ``NP=2`` and ``NP-SBJ=1-3`` become ``NP``, ``PRT|ADVP`` becomes ``PRT``;
labels starting with ``-``, such as ``-LRB-``, are kept whole); the unlabelled outer bracket of
the WSJ files (label ``""``) is removed when its one child is a phrase. Preterminal tags (the
part-of-speech tags) are kept as they are: the parser does not predict them, they come from the
input.

**Linearising.** :func:`linearise` writes a tree depth-first: a phrase ``L`` as ``(L``, its
children, then ``)L``; a preterminal (one word) as ``XX``::

    (S (NP (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .))
    (S (NP XX )NP (VP XX (NP XX XX )NP )VP XX )S

**Delinearising and repair.** :func:`delinearise` turns any sequence of symbols back into a
well-formed tree over the sentence's words, with exactly one preterminal per word, in order:
``(tag word)`` with the given tags, or ``(XX word)`` without them. It reads the symbols left to
right, keeping a stack of open constituents, and repairs what does not fit:

1. ``XX`` puts the next word into the innermost open constituent (at the top level when none is
   open). An ``XX`` when every word is placed already is dropped.
2. ``(L`` opens a constituent labelled ``L``.
3. ``)L`` closes the innermost open constituent, even when its label is not ``L`` (a repair).
   A ``)L`` with nothing open is dropped.
4. Any other symbol is dropped: one that is not ``XX``, ``(L`` or ``)L`` with a label ``L``
   free of spaces and brackets (``L`` may be empty: the unlabelled bracket that
   :func:`normalise` keeps over a one-word tree).
5. When the symbols run out, the words not placed yet go, in order, into the innermost
   constituent still open; when none is, to the root of the result (the one top-level phrase,
   or the ``root_label`` constituent of rule 7).
6. Constituents still open are then closed, innermost first.
7. A constituent closed (by rule 3 or 6) without any word in it is dropped. If the top level
   then holds anything but one phrase (several constituents, or words outside any), it is all
   wrapped in one constituent labelled ``root_label`` (the parser passes the most frequent root
   label of its training trees, :func:`root_label_of`).

``repaired`` is True when any rule changed something: a symbol dropped (1, 3, 4), a mismatched
label (3), a word placed by rule 5, a constituent closed by rule 6, dropped or wrapped by rule 7.
A well-formed sequence (balanced, matching labels, no empty constituent, one top-level phrase)
with one ``XX`` per word gives the exact tree it was written from, and ``repaired`` False.

Plain Python, no torch, and no recursion: trees thousands of levels deep are fine.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

from tagger.corpus.trees import Tree

#: The symbol of a preterminal (a word) in a linearised tree.
LEAF = "XX"
#: The tag of the empty elements that :func:`normalise` removes.
TRACE = "-NONE-"

_LABEL_CUTS = "-=|"
_BAD_LABEL_CHARS = frozenset("() \t\n\r\f\v")


def phrase_label(label: str) -> str:
    """``label`` without function tags and co-indices: cut at the first ``-``, ``=`` or ``|``
    after the first character (``NP-SBJ-1`` → ``NP``, ``PRT|ADVP`` → ``PRT``); a label that
    starts with ``-`` (``-LRB-``, ``-NONE-``) is kept whole."""
    if label.startswith("-"):
        return label
    for i in range(1, len(label)):
        if label[i] in _LABEL_CUTS:
            return label[:i]
    return label


def normalise(tree: Tree) -> Tree:
    """``tree`` as the parser learns it (see the module docstring): no ``-NONE-`` empty elements
    and no constituents left empty by removing them, phrase labels without function tags or
    co-indices, no unlabelled outer bracket over one phrase. Preterminals are kept as they are.
    Raises ``ValueError`` for a tree without words (only empty elements)."""
    result = _drop_empties(tree)
    if result is None:
        raise ValueError("the tree has no words (only empty elements)")
    while result.label == "" and len(result.children) == 1 and _is_phrase(result.children[0]):
        result = result.children[0]  # type: ignore[assignment]
    return result


def _is_phrase(node: Tree | str) -> bool:
    return isinstance(node, Tree) and not node.is_preterminal


def _drop_empties(tree: Tree) -> Tree | None:
    """The post-order rebuild of :func:`normalise`, with an explicit stack."""
    if tree.label == TRACE:
        return None
    if not _is_phrase(tree):
        return tree
    # Frames: a phrase and the results for its children so far (None: dropped).
    stack: list[tuple[Tree, list[Tree | str | None]]] = [(tree, [])]
    while True:
        node, done = stack[-1]
        if len(done) < len(node.children):
            child = node.children[len(done)]
            if isinstance(child, Tree) and child.label == TRACE:
                done.append(None)
            elif _is_phrase(child):
                stack.append((child, []))  # type: ignore[arg-type]
            else:
                done.append(child)
            continue
        stack.pop()
        kept = tuple(c for c in done if c is not None)
        out = Tree(phrase_label(node.label), kept) if kept else None
        if not stack:
            return out
        stack[-1][1].append(out)


def linearise(tree: Tree) -> list[str]:
    """The symbols of a :func:`normalise`'d tree, depth-first: ``(L`` … ``)L`` for a phrase,
    ``XX`` for a preterminal. Raises ``ValueError`` for a word outside a ``(TAG word)`` leaf."""
    out: list[str] = []
    stack: list[Tree | str] = [tree]  # trees to write, and closing symbols (str)
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            out.append(node)
        elif node.is_preterminal:
            out.append(LEAF)
        else:
            if any(isinstance(child, str) for child in node.children):
                raise ValueError(f"a word outside a (TAG word) leaf under ({node.label} ...)")
            out.append("(" + node.label)
            stack.append(")" + node.label)
            stack.extend(reversed(node.children))
    return out


def _label(symbol: str) -> str | None:
    """The label of a bracket symbol's tail, or None when it has spaces or brackets."""
    label = symbol[1:]
    return None if any(c in _BAD_LABEL_CHARS for c in label) else label


def delinearise(symbols: Sequence[str], words: Sequence[str], tags: Sequence[str] | None,
                root_label: str) -> tuple[Tree, bool]:
    """The tree that ``symbols`` describe over ``words``, repaired into a well-formed one with
    exactly one preterminal per word, in order (``(tags[i] word)``, or ``(XX word)`` when
    ``tags`` is None), and whether anything had to be repaired. The rules are those of the
    module docstring. Raises ``ValueError`` when there are no words or ``tags`` does not have
    one tag per word."""
    n = len(words)
    if n == 0:
        raise ValueError("delinearise needs at least one word")
    if tags is not None and len(tags) != n:
        raise ValueError(f"{n} words but {len(tags)} tags")

    def leaf(i: int) -> Tree:
        return Tree(tags[i] if tags is not None else LEAF, (words[i],))

    repaired = False
    top: list[Tree] = []  # the top level: closed constituents and words outside any
    stack: list[tuple[str, list[Tree]]] = []  # open constituents: label, children so far
    i = 0  # the next word

    def close() -> None:
        nonlocal repaired
        label, children = stack.pop()
        if not children:
            repaired = True  # rule 7: no word in it
            return
        (stack[-1][1] if stack else top).append(Tree(label, tuple(children)))

    for symbol in symbols:
        if symbol == LEAF:
            if i < n:
                (stack[-1][1] if stack else top).append(leaf(i))
                i += 1
            else:
                repaired = True  # rule 1: more XX than words
            continue
        label = _label(symbol) if isinstance(symbol, str) and symbol[:1] in ("(", ")") else None
        if label is None:
            repaired = True  # rule 4: not a symbol
        elif symbol[0] == "(":
            stack.append((label, []))
        elif not stack:
            repaired = True  # rule 3: nothing to close
        else:
            if stack[-1][0] != label:
                repaired = True  # rule 3: closes the innermost anyway
            close()

    if i < n:  # rule 5
        repaired = True
        rest = [leaf(j) for j in range(i, n)]
        if stack:
            stack[-1][1].extend(rest)
        elif len(top) == 1 and _is_phrase(top[0]):
            top[0] = Tree(top[0].label, top[0].children + tuple(rest))
        else:
            top.extend(rest)
    if stack:  # rule 6
        repaired = True
        while stack:
            close()
    if len(top) == 1 and _is_phrase(top[0]):
        return top[0], repaired
    return Tree(root_label, tuple(top)), True  # rule 7: wrapped


def symbols_of(trees: Iterable[Tree]) -> list[str]:
    """The symbols :func:`linearise` writes for ``trees`` (normalised ones), and ``XX``
    always: sorted, so the same trees give the same list (a model's output vocabulary)."""
    seen = {LEAF}
    for tree in trees:
        seen.update(linearise(tree))
    return sorted(seen)


def root_label_of(trees: Iterable[Tree]) -> str:
    """The most frequent root label of ``trees`` (normalised ones); ties go to the label first
    in alphabetical order. The ``root_label`` to give :func:`delinearise`. Raises
    ``ValueError`` when there are no trees."""
    counts = Counter(tree.label for tree in trees)
    if not counts:
        raise ValueError("no trees to take a root label from")
    return min(counts, key=lambda label: (-counts[label], label))


__all__ = ["LEAF", "TRACE", "delinearise", "linearise", "normalise", "phrase_label", "root_label_of", "symbols_of"]
