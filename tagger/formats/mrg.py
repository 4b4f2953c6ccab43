"""Penn Treebank bracketed trees (``.mrg``): ``( (S (NP-SBJ (NNP Pierre) ...) ...) )``.

Trees may span many lines and several may share one. Leaves are ``(TAG word)``; the words of a
sentence are its leaves except ``-NONE-`` empty elements (traces), their tags the ``xpos``
column. The whole tree, traces included, is kept in :attr:`Sentence.tree` (a plain
:class:`~tagger.corpus.trees.Tree`, a leaf ``(TAG word)`` a tree over one word; the unlabelled
outer bracket of the WSJ files is labelled ``""``), which :func:`write` writes back, laid out as
the WSJ files are (the ``trees`` format writes one tree a line).

Words are read with the Penn Treebank's ``\\/`` as ``/`` (``(CD 50\\/50)`` is the word
``50/50``, in :attr:`Sentence.words` and in the tree alike, as the ``.pos`` and tagged readers
read it) and written with ``/`` as ``\\/`` again, as the PTB gold files that EVALB compares
them with spell them; a word that the file spelled with a bare ``/`` (a treebank that does not
escape it) is written back as it was. See :mod:`tagger.formats.ptb` for why.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Iterator, TextIO

from tagger.corpus.records import Sentence
from tagger.corpus.trees import Tree, escaped
from tagger.errors import TaggerError
from tagger.formats.base import Source, iter_lines, source_name
from tagger.corpus.spaces import TREE_TOKEN
from tagger.formats.ptb import read_words, spelled_words

NAME = "mrg"
EXTENSIONS = (".mrg",)

_TOKEN = TREE_TOKEN  # (tagger.corpus.spaces: no-break spaces stay in a word)
TRACE = "-NONE-"


def read(source: Source) -> Iterator[Sentence]:
    """Yield one sentence per top-level bracketed tree."""
    name = source_name(source)
    for tree, start, _ in trees(source, name):
        yield sentence(tree, name, start)


def trees(source: Source, name: str) -> Iterator[tuple[Tree, int, int]]:
    """Yield each top-level bracketed tree of ``source`` with the lines it starts and ends on
    (words as the file spells them). Unbalanced brackets are an error at the line the layout
    points to (:class:`_Layout`)."""
    stack: list[list] = []  # open brackets: [label or None, children, line]
    layout = _Layout()
    for number, text in iter_lines(source, name):
        layout.line(text, len(stack), number)
        for token in _TOKEN.findall(text):
            if token == "(":
                stack.append([None, [], number])
            elif token == ")":
                if not stack:
                    raise layout.error(-1, "')' closes no tree", name, number)
                label, children, start = stack.pop()
                node = _node(label, children, name, start)
                if stack:
                    stack[-1][1].append(node)
                else:
                    yield node, start, number
            elif not stack:
                raise TaggerError(f"text '{token}' outside a tree", name, number)
            elif stack[-1][0] is None and not stack[-1][1]:
                stack[-1][0] = token
            else:
                stack[-1][1].append(token)
    if stack:
        raise layout.error(1, "the tree starting here is not closed", name, stack[0][2])


class _Layout:
    """Which line of a tree laid out over many lines has a ``)`` too many or too few, by the
    indentation. The reader finds out only where the brackets run out (a ``)`` left over at the
    tree's end, a tree still open at the end of the file), often many lines later. But in the WSJ
    layout (:func:`pretty`, and the hand-made layouts of the sample files alike) a line that
    starts with a bracket inside a tree is as deep in it as its indentation says: lines indented
    alike start at the same depth. The first line that starts shallower (deeper) than an earlier
    line of the tree indented as it follows the line with the extra (missing) ``)``: that line is
    the one the error names. (One-line trees, a ``.trees`` file's, have nothing to compare.)"""

    def __init__(self) -> None:
        self.depths: dict[int, int] = {}  # indentation -> depth, for the lines of the current tree
        self.off: tuple[int, int] | None = None  # (line before the first line off the layout, its sign)
        self.previous = 0  # the last line with text

    def line(self, text: str, depth: int, number: int) -> None:
        """Note the line ``number``, which starts with ``depth`` brackets open."""
        stripped = text.lstrip()
        if not stripped:
            return
        indent = len(text) - len(stripped)
        if depth == 0 and indent == 0:  # a tree starts at the margin: a new layout
            self.depths, self.off = {0: 0}, None
        elif stripped.startswith("(") and self.previous and self.off is None:
            expected = self.depths.setdefault(indent, depth)
            if expected != depth:
                self.off = (self.previous, 1 if depth > expected else -1)
        self.previous = number

    def error(self, sign: int, message: str, name: str, number: int) -> TaggerError:
        """The unbalanced-brackets error ``message``, at ``number``; but where the layout says
        one ``)`` too many (``sign`` -1) or one missing (1), at the line before the first line
        off the layout, which the message names."""
        if self.off is None or self.off[1] != sign:
            return TaggerError(f"unbalanced brackets: {message}", name, number)
        what, where = ("one ')' too many", "shallower") if sign < 0 else ("a ')' missing", "deeper")
        return TaggerError(f"unbalanced brackets: {what} on this line (the next line starts {where} in the tree "
                           f"than the lines indented as it; line {number}: {message})", name, self.off[0])


def _node(label: str | None, children: list, name: str, line: int) -> Tree:
    words = [c for c in children if isinstance(c, str)]
    if not children:
        raise TaggerError(f"empty constituent '({label or ''})' (a bracket in a tag or word is written -LRB- or "
                          "-RRB-, as the Penn Treebank does; STTS's '$(' is '$*LRB*' in the SPMRL files)", name, line)
    if label and len(words) == len(children) > 1:
        shown = " ".join(words[:5]) + (" ..." if len(words) > 5 else "")
        raise TaggerError(f"leaf ({label} {shown}) has {len(words)} words; a leaf is (TAG word)", name, line)
    if words and (len(children) > 1 or not label):
        raise TaggerError(f"word '{words[0]}' outside a (TAG word) leaf", name, line)
    return Tree(label or "", tuple(children))


def leaves(tree: Tree) -> list[tuple[str, str]]:
    """The ``(tag, word)`` leaves of ``tree`` in order, traces included."""
    return tree.leaves()


def sentence(tree: Tree, name: str, line: int) -> Sentence:
    """The sentence of ``tree``: its leaves but the empty elements, their tags as ``xpos``; the
    words, in the sentence and in its tree, with the PTB's ``\\/`` as ``/`` (the spellings kept
    where the file has bare slashes: :func:`tagger.formats.ptb.read_words`)."""
    pairs = [(tag, word) for tag, word in tree.leaves() if tag != TRACE]
    if not pairs:
        raise TaggerError("tree has no words (only empty elements)", name, line)
    spelled = [word for _, word in pairs]
    words, spelling = read_words(spelled)
    if words != spelled:
        tree = _retag(tree, words, None)
    return Sentence(words, {"xpos": [tag for tag, _ in pairs]}, source=name, line=line, raw=spelling, tree=tree)


def pretty(tree: Tree) -> str:
    """``tree`` laid out as the WSJ ``.mrg`` files are (no final newline)::

        ( (S
            (NP-SBJ (NNP Mr.) (NNP Vinken) )
            (VP (VBZ is) ...

    A leaf ``(TAG word)`` and a space follow the leaves before it on their line; a phrase
    starts a new line, indented two spaces past its parent's bracket, and so does a leaf after a
    phrase; the root's first child stays on the root's line. Words and labels as
    :func:`~tagger.corpus.trees.escaped`."""
    out: list[str] = []

    def leaf(node: Tree | str) -> str:
        if isinstance(node, str):
            return escaped(node)
        return f"({escaped(node.label)} {escaped(node.children[0])})"  # type: ignore[arg-type]

    def phrase(node: Tree, column: int, root: bool) -> None:
        """Write ``node``, whose bracket is at ``column`` of the current line."""
        if node.is_preterminal:
            out.append(leaf(node))
            return
        label = escaped(node.label)
        out.append(f"({label} ")
        after_phrase = False
        for k, child in enumerate(node.children):
            if isinstance(child, str) or child.is_preterminal:
                if after_phrase:
                    out.append("\n" + " " * (column + 2))
                out.append(leaf(child) + " ")
                after_phrase = False
                continue
            if k == 0 and root:
                phrase(child, column + len(label) + 2, False)
            else:
                out.append("\n" + " " * (column + 2))
                phrase(child, column + 2, False)
            after_phrase = True
        out.append(")")

    phrase(tree, 0, True)
    return "".join(out)


def _retag(tree: Tree, words: list[str], tags: list[str] | None) -> Tree:
    """A copy of ``tree`` with its non-trace leaves' words and tags replaced, in order (no
    recursion: a parser's trees may be nested thousands deep)."""
    position = 0

    def leaf(node: Tree) -> Tree:
        nonlocal position
        if node.label == TRACE:
            return node
        position += 1
        return Tree(tags[position - 1] if tags else node.label, (words[position - 1],))

    if tree.is_preterminal:
        return leaf(tree)
    stack: list[tuple[Tree, list[Tree | str]]] = [(tree, [])]  # phrases open, with their children so far
    while True:
        node, done = stack[-1]
        if len(done) < len(node.children):
            child = node.children[len(done)]
            if isinstance(child, Tree) and not child.is_preterminal:
                stack.append((child, []))
            else:
                done.append(leaf(child) if isinstance(child, Tree) else child)
            continue
        stack.pop()
        copy = Tree(node.label, tuple(done))
        if not stack:
            return copy
        stack[-1][1].append(copy)


def write_trees(sentences: Iterable[Sentence], stream: TextIO, layout: Callable[[Tree], str], fmt: str) -> None:
    """Write each sentence's tree laid out by ``layout``, one after another (``fmt`` names the
    format in errors): the tree it was read with (``.mrg``, ``.trees``) or a parser gave it, with
    the words and ``xpos`` tags of the record. A sentence without one (or whose words no longer
    fit its tree) is a :class:`TaggerError`: a phrase-structure tree cannot be made up from tags,
    and a flat ``(X ...)`` tree would pass for one; so is a word with white space in it."""
    for sentence in sentences:
        stream.write(written(sentence, layout, fmt) + "\n")


def written(sentence: Sentence, layout: Callable[[Tree], str], fmt: str) -> str:
    """``sentence``'s tree as :func:`write_trees` writes it: with the record's words, spelled as
    its file spelled them (else escaped), and ``xpos`` tags, laid out by ``layout``."""
    tags = sentence.columns.get("xpos") if sentence.has("xpos") else None
    tree = sentence.tree
    if tree is None or sum(tag != TRACE for tag, _ in tree.leaves()) != len(sentence.words):
        raise TaggerError(f"cannot write {fmt}: the sentence has no bracketed tree (only sentences read from "
                          ".mrg or .trees files, or parsed, have one; write tagged or conllu instead)",
                          sentence.source, sentence.line)
    tree = _retag(tree, spelled_words(sentence), tags)
    try:
        return layout(tree)
    except RecursionError:
        raise TaggerError("tree too deeply nested to write", sentence.source, sentence.line) from None
    except ValueError as e:  # white space in a word (escaped)
        raise TaggerError(f"cannot write {fmt}: {e}", sentence.source, sentence.line) from None


def write(sentences: Iterable[Sentence], stream: TextIO) -> None:
    """Write each tree laid out as in the WSJ files (:func:`pretty`); see :func:`write_trees`."""
    write_trees(sentences, stream, pretty, "MRG")
