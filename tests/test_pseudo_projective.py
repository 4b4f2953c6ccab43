"""Pseudo-projective parsing (Nivre & Nilsson 2005) and the finder of non-projective arcs (no torch needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tagger.transitions import (
    SEPARATOR,
    deprojectivise,
    is_projective,
    label_parts,
    lift,
    lifted_label,
    nonprojective_arcs,
    oracle,
    projectivise,
    split_lifted,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EWT_TRAIN = DATA / "ud-english-ewt" / "en_ewt-ud-train.conllu"

# "A hearing is scheduled on the issue today .": "on the issue" belongs to "hearing", across "is scheduled"
HEARING = ([2, 4, 4, 0, 7, 7, 2, 4, 4], "det nsubj:pass aux:pass root case det nmod obl:tmod punct".split())
# 2 -> 4 crosses 1 -> 3 ("a b c d")
CROSSED = ([0, 4, 1, 1], "root dep obj dep".split())


@st.composite
def trees(draw, max_words: int = 30) -> list[int]:
    """A random single-rooted tree of 1..max_words words (mostly non-projective)."""
    n = draw(st.integers(1, max_words))
    order = draw(st.permutations(range(1, n + 1)))
    heads = [0] * n
    for k, word in enumerate(order[1:], 1):
        heads[word - 1] = order[draw(st.integers(0, k - 1))]
    return heads


def ancestors(heads: list[int], j: int) -> list[int]:
    out = []
    while j:
        j = heads[j - 1]
        out.append(j)
    return out


def test_nonprojective_arcs_of_inline_trees():
    assert nonprojective_arcs(HEARING[0]) == [False] * 6 + [True, False, False]
    assert nonprojective_arcs(CROSSED[0]) == [False, True, False, False]  # 1 dominates 2: only 4 -> 2 is
    assert nonprojective_arcs([2, 0, 2]) == [False] * 3
    assert nonprojective_arcs([]) == []
    # any heads at all: missing (-1), out of range, a cycle: words not below ROOT are no witnesses
    assert nonprojective_arcs([-1, 0, 9]) == [False] * 3
    assert nonprojective_arcs([2, 1, 0]) == [False] * 3
    assert nonprojective_arcs([3, 4, 0, 3, 2, -1]) == [False, True, False, False, True, False]
    assert nonprojective_arcs([0, 3, 2, 1]) == [False] * 4  # 2 <-> 3: 1 -> 4 is not crossed by them
    assert nonprojective_arcs([0, 3, 2, 1, 3]) == [False, False, False, False, True]  # 4 is below ROOT, not 3


@settings(max_examples=150, deadline=None)
@given(trees())
def test_nonprojective_arcs_agree_with_is_projective(heads):
    assert any(nonprojective_arcs(heads)) == (not is_projective(heads))


def test_lifting_the_inline_trees():
    heads, labels = projectivise(*HEARING)
    assert heads == [2, 4, 4, 0, 7, 7, 4, 4, 4]  # "issue" lifted from "hearing" to "scheduled"
    assert labels[6] == "nmod↑nsubj:pass" and labels[:6] + labels[7:] == HEARING[1][:6] + HEARING[1][7:]
    assert projectivise(*CROSSED) == ([0, 1, 1, 1], ["root", "dep↑dep", "obj", "dep"])
    assert projectivise([2, 0, 2], ["a", "root", "b"]) == ([2, 0, 2], ["a", "root", "b"])  # projective: as it is
    # two lifts of one arc: 1 -> 4 and 2 -> 4 both cross ROOT -> 3, so 4 climbs from 1 to 2, then to 3;
    # its label names its original head's
    assert projectivise([2, 3, 0, 1], ["a", "b", "root", "c"]) == ([2, 3, 0, 3], ["a", "b", "root", "c↑a"])
    assert deprojectivise([2, 3, 0, 3], ["a", "b", "root", "c"], [None, None, None, "a"]) == [2, 3, 0, 1]


@settings(max_examples=150, deadline=None)
@given(trees())
def test_lifting_gives_a_projective_tree_with_the_same_root(heads):
    labels = [f"l{j}" for j in range(1, len(heads) + 1)]
    lifted, decorated = projectivise(heads, labels)
    assert is_projective(lifted) and lifted.count(0) == 1 and lifted.index(0) == heads.index(0)
    oracle(lifted, [0] * len(lifted))  # arc-standard builds it
    for j, (old, new) in enumerate(zip(heads, lifted), 1):
        if old == new:
            assert decorated[j - 1] == labels[j - 1]
        else:  # lifted: higher up the same path to ROOT, its label naming the original head's
            assert new in ancestors(heads, old)
            assert decorated[j - 1] == lifted_label(labels[j - 1], labels[old - 1])


@settings(max_examples=150, deadline=None)
@given(trees())
def test_deprojectivising_the_lifted_tree_restores_the_gold_tree(heads):
    """With labels that tell the words apart the round trip is exact."""
    labels = [f"l{j}" for j in range(1, len(heads) + 1)]
    lifted, decorated = projectivise(heads, labels)
    head_labels = [split_lifted(d, labels)[0][1] if d not in labels else None for d in decorated]
    assert deprojectivise(lifted, labels, head_labels) == heads


def test_deprojectivising_the_inline_trees():
    heads, labels = HEARING
    lifted = projectivise(heads, labels)[0]
    head_labels = [None] * 6 + ["nsubj:pass", None, None]
    assert deprojectivise(lifted, labels, head_labels) == heads
    assert deprojectivise(lifted, labels, [None] * 9) == lifted
    # no word labelled as asked below the head: the arc stays
    assert deprojectivise(lifted, labels, [None] * 6 + ["iobj", None, None]) == lifted
    # the head sought is never inside the lifted word's own subtree (that would make a cycle)
    assert deprojectivise(lifted, labels, [None] * 6 + ["case", None, None]) == lifted  # "on" is below "issue"
    # a word hanging from ROOT stays there
    assert deprojectivise(lifted, labels, [None, None, None, "nmod", None, None, None, None, None]) == lifted
    # of two words with the label sought, the one nearer the lifted word (breadth-first, then by distance)
    assert deprojectivise([0, 1, 1, 1], ["root", "dep", "obj", "dep"], [None, "dep", None, None]) == [0, 4, 1, 1]
    assert deprojectivise([0, 1, 1, 1], ["root", "dep", "dep", "dep"], [None, "dep", None, None]) == [0, 3, 1, 1]
    with pytest.raises(ValueError, match="cycle"):
        deprojectivise([2, 1, 0], ["a", "b", "root"], ["b", None, None])


def test_label_encoding_with_odd_labels():
    assert SEPARATOR == "\u2191" and lifted_label("nmod", "nsubj:pass") == "nmod↑nsubj:pass"
    assert split_lifted("nmod↑nsubj:pass", {"nmod", "nsubj:pass"}) == [("nmod", "nsubj:pass")]
    assert split_lifted("nmod", {"nmod"}) == []
    assert split_lifted("a↑b", {"a"}) == []  # b is no known label
    # labels that already hold the separator still read one way when only one split is known
    assert split_lifted("x↑y↑z", {"x↑y", "z"}) == [("x↑y", "z")]
    assert split_lifted("a↑b↑c", {"a", "b↑c", "a↑b", "c"}) == [("a", "b↑c"), ("a↑b", "c")]  # ambiguous
    assert label_parts(["root", "x↑y", "z", "x↑y↑z", "z↑root"], 3) == [
        ("root", None), ("x↑y", None), ("z", None), ("x↑y", "z"), ("z", "root")]
    assert label_parts(["a↑b"], 1) == [("a↑b", None)]  # plain: whatever it holds
    with pytest.raises(ValueError, match="does not read"):
        label_parts(["a", "b↑c", "a↑b", "c", "a↑b↑c"], 4)
    with pytest.raises(ValueError, match="does not read"):
        label_parts(["a", "b", "a↑c"], 2)


def test_lift_refuses_what_is_no_tree():
    with pytest.raises(ValueError, match="cycle"):
        lift([2, 1, 0])
    with pytest.raises(ValueError, match="bad head"):
        lift([0, 5])
    with pytest.raises(ValueError, match="labels"):
        projectivise([0, 1], ["root"])
    # several root words: lifting works, to ROOT here (1 -> 4 spans the root word 3); arc-standard
    # cannot build such a tree even so
    assert lift([0, 3, 0, 1]) == [0, 3, 0, 0]
    with pytest.raises(ValueError):
        oracle([0, 3, 0, 0], [0] * 4)


def read_trees(path: Path):
    heads, rels = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if heads:
                    yield heads, rels
                heads, rels = [], []
            elif not line.startswith("#"):
                cols = line.split("\t")
                if "-" not in cols[0] and "." not in cols[0]:
                    heads.append(int(cols[6]))
                    rels.append(cols[7])
    if heads:
        yield heads, rels


@pytest.mark.skipif(not EWT_TRAIN.exists(), reason="EWT data not available")
def test_every_ewt_training_tree_can_be_built_once_lifted():
    trees = lifted = 0
    arcs = restored = 0
    for heads, rels in read_trees(EWT_TRAIN):
        try:
            oracle(heads, [0] * len(heads))
            continue
        except ValueError:
            trees += 1
        new_heads, new_rels = projectivise(heads, rels)
        oracle(new_heads, [0] * len(heads))  # raises if arc-standard cannot build it
        lifted += 1
        moved = [j for j in range(len(heads)) if new_heads[j] != heads[j]]
        arcs += len(moved)
        back = deprojectivise(new_heads, rels, [rels[heads[j] - 1] if j in moved else None for j in range(len(heads))])
        restored += sum(back[j] == heads[j] for j in moved)
    assert (trees, lifted, arcs) == (288, 288, 357)  # UD English EWT 2.x train
    assert restored == 310  # the others: a nearer word with the same label as the gold head
