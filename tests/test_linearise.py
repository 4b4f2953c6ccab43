"""Tree normalisation, linearisation and the repair of model output (no torch needed)."""

from __future__ import annotations

import io
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tagger.corpus.trees import Tree
from tagger.formats import read
from tagger.transitions.linearise import (
    LEAF,
    delinearise,
    linearise,
    normalise,
    phrase_label,
    root_label_of,
    symbols_of,
)

WSJ = Path(__file__).resolve().parents[2] / "shared" / "data" / "ptb-wsj-sample" / "combined"


def T(text: str) -> Tree:
    """A tree from its bracketed form (read as an .mrg file)."""
    (sentence,) = read(io.StringIO(text), fmt="mrg")
    return sentence.tree


def words_of(tree: Tree) -> list[str]:
    return [word for _, word in tree.leaves()]


JOHN = T("(S (NP (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .))")
JOHN_SYMBOLS = ["(S", "(NP", "XX", ")NP", "(VP", "XX", "(NP", "XX", "XX", ")NP", ")VP", "XX", ")S"]


def test_linearise_example():
    assert linearise(JOHN) == JOHN_SYMBOLS
    words = ["John", "has", "a", "dog", "."]
    assert delinearise(JOHN_SYMBOLS, words, ["NNP", "VBZ", "DT", "NN", "."], "S") == (JOHN, False)
    untagged, repaired = delinearise(JOHN_SYMBOLS, words, None, "S")
    assert not repaired
    assert untagged == T("(S (NP (XX John)) (VP (XX has) (NP (XX a) (XX dog))) (XX .))")


def test_linearise_refuses_words_outside_leaves():
    with pytest.raises(ValueError, match="outside"):
        linearise(Tree("S", ("John", Tree("VBZ", ("sleeps",)))))


# --- normalise ---------------------------------------------------------------------------------


@pytest.mark.parametrize("label, expected", [
    ("NP-SBJ-1", "NP"), ("NP=2", "NP"), ("NP-SBJ=1-3", "NP"), ("PRT|ADVP", "PRT"), ("ADVP|PRT", "ADVP"),
    ("S", "S"), ("-LRB-", "-LRB-"), ("-NONE-", "-NONE-"), ("IP-HLN", "IP"), ("VROOT", "VROOT"), ("=", "="),
])
def test_phrase_label(label, expected):
    assert phrase_label(label) == expected


def test_normalise_wsj_tree():
    tree = T("( (S (NP-SBJ-1 (NNP John)) (VP (VBZ wants) (S (NP-SBJ (-NONE- *-1)) (VP (TO to) "
             "(VP (VB give) (PRT|ADVP (RP up)) (NP=2 (-LRB- -LRB-) (NN it) (-RRB- -RRB-)))))) (. .)) )")
    assert normalise(tree) == T("(S (NP (NNP John)) (VP (VBZ wants) (S (VP (TO to) (VP (VB give) "
                                "(PRT (RP up)) (NP (-LRB- -LRB-) (NN it) (-RRB- -RRB-)))))) (. .))")


def test_normalise_removes_constituents_left_empty():
    tree = T("( (S (NP-SBJ (NNS people)) (VP (VBD said) (SBAR (-NONE- 0) (S (NP-SBJ (-NONE- *T*-1)) "
             "(VP (-NONE- *?*))))) (. .)) )")
    assert normalise(tree) == T("(S (NP (NNS people)) (VP (VBD said)) (. .))")


def test_normalise_keeps_preterminal_tags_whole():
    tree = T("(S-1 (VBD-PAST went) (NP=1 (PRP$ his) (NN way)) (-NONE- *))")
    assert normalise(tree) == T("(S (VBD-PAST went) (NP (PRP$ his) (NN way)))")


def test_normalise_outer_bracket():
    assert normalise(T("( (FRAG (NN Hello)) )")) == T("(FRAG (NN Hello))")
    assert normalise(T("(ROOT (S (NN Hello)))")) == T("(ROOT (S (NN Hello)))")  # labelled: kept
    # Over a preterminal (no phrase) the unlabelled bracket stays, so the tree round-trips.
    one_word = normalise(T("( (UH Hello) )"))
    assert one_word == Tree("", (Tree("UH", ("Hello",)),))
    assert delinearise(linearise(one_word), ["Hello"], ["UH"], "S") == (one_word, False)


def test_normalise_is_idempotent_and_refuses_trees_without_words():
    tree = T("( (S (NP-SBJ (-NONE- *)) (VP (VB Go)) (. !)) )")
    once = normalise(tree)
    assert normalise(once) == once == T("(S (VP (VB Go)) (. !))")
    with pytest.raises(ValueError, match="no words"):
        normalise(Tree("S", (Tree("NP", (Tree("-NONE-", ("*",)),)),)))


# --- repair ------------------------------------------------------------------------------------

W3 = ["a", "b", "c"]
TAGS3 = ["A", "B", "C"]


@pytest.mark.parametrize("symbols, expected", [
    # Well-formed: nothing to repair.
    (["(S", "(NP", "XX", "XX", ")NP", "XX", ")S"], None),
    (["(S", "(S", "XX", "XX", "XX", ")S", ")S"], None),
    # Too many XX: the extra ones are dropped.
    (["(S", "XX", "XX", "XX", "XX", "XX", ")S"], "(S (A a) (B b) (C c))"),
    # A closing bracket with nothing open is dropped.
    ([")NP", "(S", "XX", "XX", "XX", ")S", ")S"], "(S (A a) (B b) (C c))"),
    # A closing label that does not match closes the innermost constituent anyway.
    (["(S", "(NP", "XX", "XX", ")VP", "XX", ")NP"], "(S (NP (A a) (B b)) (C c))"),
    # Unknown symbols are dropped.
    (["(S", "XX", "dog", "XX", "", "((", "XX", ")N)", "(A B", ")S"], "(S (A a) (B b) (C c))"),
    # Brackets still open at the end are closed.
    (["(S", "(NP", "XX", ")NP", "(VP", "XX", "XX"], "(S (NP (A a)) (VP (B b) (C c)))"),
    # Too few XX: the missing words go into the innermost constituent open at the end ...
    (["(S", "(NP", "XX", ")NP", "(VP", "XX"], "(S (NP (A a)) (VP (B b) (C c)))"),
    # ... or, when none is open, to the root.
    (["(S", "(NP", "XX", ")NP", ")S"], "(S (NP (A a)) (B b) (C c))"),
    ([], "(S (A a) (B b) (C c))"),
    (["(X", ")X"], "(S (A a) (B b) (C c))"),
    # Constituents without a word are dropped, however deep.
    (["(S", "(NP", ")NP", "XX", "(VP", "(PP", ")PP", ")VP", "XX", "XX", ")S"], "(S (A a) (B b) (C c))"),
    (["(S", "XX", "XX", "XX", "(VP", "(NP"], "(S (A a) (B b) (C c))"),
    # Several top-level pieces, or words at the top, are wrapped in one root_label constituent.
    (["(NP", "XX", ")NP", "(VP", "XX", "XX", ")VP"], "(S (NP (A a)) (VP (B b) (C c)))"),
    (["XX", "(NP", "XX", "XX", ")NP"], "(S (A a) (NP (B b) (C c)))"),
    (["XX", "XX", "XX"], "(S (A a) (B b) (C c))"),
    # Words missing after several pieces go to the wrapping root.
    (["(NP", "XX", ")NP", "(VP", "XX", ")VP"], "(S (NP (A a)) (VP (B b)) (C c))"),
    # The root_label constituent is added even when one piece already has that label.
    (["(S", "XX", ")S", "(S", "XX", "XX", ")S"], "(S (S (A a)) (S (B b) (C c)))"),
])
def test_repair(symbols, expected):
    tree, repaired = delinearise(symbols, W3, TAGS3, "S")
    if expected is None:
        assert not repaired
        assert linearise(tree) == symbols
    else:
        assert repaired
        assert tree == T(expected)
    assert delinearise(symbols, W3, TAGS3, "S") == (tree, repaired)  # deterministic


def test_delinearise_refuses_bad_words_and_tags():
    with pytest.raises(ValueError, match="word"):
        delinearise(["(S", "XX", ")S"], [], None, "S")
    with pytest.raises(ValueError, match="tags"):
        delinearise(["(S", "XX", ")S"], ["a"], ["A", "B"], "S")


def check_well_formed(tree: Tree, words: list[str], tags: list[str] | None) -> None:
    """Fails unless ``tree`` is a phrase whose phrases all have children, and whose
    preterminals are exactly ``(tags[i] words[i])`` in order, with no word outside them."""
    assert isinstance(tree, Tree) and not tree.is_preterminal
    leaves = []
    stack = [tree]
    while stack:
        node = stack.pop()
        assert isinstance(node, Tree)
        assert not any(c in node.label for c in "() ")
        if node.is_preterminal:
            leaves.append((node.label, node.children[0]))
        else:
            assert node.children and all(isinstance(child, Tree) for child in node.children)
            stack.extend(reversed(node.children))
    assert leaves == [(tags[i] if tags else LEAF, word) for i, word in enumerate(words)]


def test_fuzz_garbage_gives_well_formed_trees():
    rng = random.Random(16)
    vocabulary = ["XX"] * 6 + ["(S", ")S", "(NP", ")NP", "(VP", ")VP", "(PP", ")PP",
                               "(", ")", "XY", "", "((", "(A B", "NP", ")-LRB-", "(-LRB-"]
    n_repaired = 0
    for _ in range(3000):
        n = rng.randint(1, 8)
        words = [f"w{i}" for i in range(n)]
        tags = [rng.choice(["DT", "NN", "-LRB-"]) for _ in range(n)] if rng.random() < 0.5 else None
        symbols = [rng.choice(vocabulary) for _ in range(rng.randint(0, 30))]
        tree, repaired = delinearise(symbols, words, tags, "ROOT")
        check_well_formed(tree, words, tags)
        n_repaired += repaired
        if not repaired:  # then the symbols are exactly the tree's
            assert linearise(tree) == symbols
        # The output is well-formed, so it comes back unchanged.
        assert delinearise(linearise(tree), words, tags, "ROOT") == (tree, False)
    assert n_repaired > 2500


def test_deep_trees_need_no_recursion():
    depth = 3000
    raw: Tree = Tree("NN", ("deep",))
    for k in range(depth):
        raw = Tree(f"NP-SBJ-{k}" if k % 2 else "NP=1", (Tree("-NONE-", ("*",)), raw))
    raw = Tree("", (raw,))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(500)  # well below the depth: any recursion over it fails
    try:
        tree = normalise(raw)
        symbols = linearise(tree)
        back, repaired = delinearise(symbols, ["deep"], ["NN"], "S")
        again = linearise(back)
        leaves = back.leaves()
        broken, _ = delinearise(symbols[: depth + 1], ["deep"], ["NN"], "S")  # never closed
        broken_symbols = linearise(broken)
    finally:
        sys.setrecursionlimit(limit)
    assert symbols == ["(NP"] * depth + ["XX"] + [")NP"] * depth
    assert not repaired and again == symbols and leaves == [("NN", "deep")]
    assert broken_symbols == symbols


# --- inventory ---------------------------------------------------------------------------------


def test_symbols_and_root_label():
    trees = [JOHN, T("(NP (DT the) (NN dog))"), T("(S (VP (VB Go)))")]
    assert symbols_of(trees) == ["(NP", "(S", "(VP", ")NP", ")S", ")VP", "XX"]
    assert symbols_of([]) == ["XX"]
    assert root_label_of(trees) == "S"
    assert root_label_of([T("(NP (NN a))"), T("(FRAG (NN b))")]) == "FRAG"  # a tie: alphabetical
    with pytest.raises(ValueError):
        root_label_of([])


def test_wsj_sample_round_trips():
    files = sorted(WSJ.glob("*.mrg"))
    if not files:
        pytest.skip(f"WSJ sample not found at {WSJ}")
    sentences = [sentence for path in files for sentence in read(path, fmt="mrg")]
    trees = [normalise(sentence.tree) for sentence in sentences]
    root = root_label_of(trees)
    assert root == "S"
    for sentence, tree in zip(sentences, trees):
        back, repaired = delinearise(linearise(tree), sentence.words, sentence.columns["xpos"], root)
        assert not repaired and back == tree, " ".join(sentence.words)
    assert len(trees) > 3000
    labels = {symbol[1:] for symbol in symbols_of(trees) if symbol != LEAF}
    assert "-NONE-" not in labels and "NP" in labels and "" not in labels
    assert all(phrase_label(label) == label for label in labels)


def test_import_does_not_pull_in_torch():
    code = "import sys, tagger.transitions.linearise; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
