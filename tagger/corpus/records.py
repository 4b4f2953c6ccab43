"""The plain sentence record every reader yields and every writer takes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tagger.corpus.trees import Tree
from tagger.errors import TaggerError

#: Column names with a fixed meaning across formats. Readers may add others (``columns`` format).
STANDARD_COLUMNS = ("lemma", "upos", "xpos", "feats", "head", "deprel", "supertag", "misc")
#: Columns whose ``_`` is a value rather than a missing annotation (FEATS: no features): a
#: sentence with only ``_`` there still has the column for a model that learns it.
UNDERSCORE_VALUE_COLUMNS = ("feats",)
#: The name under which a sentence's constituency tree (:attr:`Sentence.tree`) counts as an
#: output column: what a constituency parser fills.
TREE = "tree"


@dataclass
class Sentence:
    """One sentence: its words and annotation columns aligned with them.

    ``columns`` maps a column name to one value per word: strings, except ``head`` (ints,
    0 = root, 1-based otherwise). Standard names are in :data:`STANDARD_COLUMNS`; a missing
    value (CoNLL ``_``) is kept as ``"_"`` for strings and ``-1`` for heads.

    ``source`` and ``line`` say where the sentence starts, for error messages. ``raw`` is a
    format-specific payload that the same format's writer may use to reproduce the input
    exactly (CoNLL-U keeps its original lines there); it is never used for learning.

    ``tree`` is the sentence's constituency tree where it has one (read from ``.mrg`` files; see
    :class:`tagger.corpus.trees.Tree`): its leaves other than empty elements are the words with
    their ``xpos`` tags, in order.
    """

    words: list[str]
    columns: dict[str, list[Any]] = field(default_factory=dict)
    source: str = "<stdin>"
    line: int = 0
    raw: Any = None
    tree: Tree | None = None

    def __len__(self) -> int:
        return len(self.words)

    def has(self, name: str) -> bool:
        """True if column ``name`` exists and is not entirely unannotated (``_``/-1); for
        ``tree`` (what a constituency parser fills), True if the sentence has a tree."""
        if name == TREE:
            return self.tree is not None
        values = self.columns.get(name)
        if values is None:
            return False
        missing = -1 if name == "head" else "_"
        return any(v != missing for v in values)

    def output(self, name: str) -> Any:
        """What a model put in column ``name``, as plain data: the values of the column, or for
        ``tree`` the bracketed tree on one line (None where there is nothing)."""
        if name == TREE:
            if self.tree is None:
                return None
            try:
                return self.tree.bracketed()
            except ValueError as e:  # white space in a word
                raise TaggerError(f"cannot write the tree: {e}", self.source, self.line) from None
        return self.columns.get(name)

    def column(self, name: str) -> list[Any]:
        """The values of column ``name``; a :class:`TaggerError` naming file and line if absent."""
        values = self.columns.get(name)
        if values is None or not self.has(name):
            raise TaggerError(f"sentence has no '{name}' column", self.source, self.line)
        return values
