"""The arc-standard system, its oracle and the Chen & Manning features (no torch needed)."""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tagger.transitions import (
    FEATURE_NAMES,
    FIRST_CHILD_SLOT,
    LEFT,
    N_FEATURES,
    RIGHT,
    SHIFT,
    State,
    action_name,
    apply,
    decode,
    encode,
    first_legal,
    is_final,
    is_projective,
    legal_code,
    mask_templates,
    n_actions,
    oracle,
    root_label,
    token_slots,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EWT_TRAIN = DATA / "ud-english-ewt" / "en_ewt-ud-train.conllu"

S = 0


def L(k: int) -> int:
    return encode(LEFT, k)


def R(k: int) -> int:
    return encode(RIGHT, k)


def run(n: int, actions: list[int]) -> State:
    state = State(n)
    for a in actions:
        apply(state, a)
    return state


# Hand-made trees: (heads, labels, expected oracle).
CHAIN_LEFT = ([2, 3, 0], [0, 0, 1], [S, S, L(0), S, L(0), R(1)])
CHAIN_RIGHT = ([0, 1, 2], [1, 2, 2], [S, S, S, R(2), R(2), R(1)])
# She ate fish quickly .   (nsubj=0 root=1 obj=2 advmod=3 punct=4)
BOTH_SIDES = ([2, 0, 2, 2, 2], [0, 1, 2, 3, 4], [S, S, L(0), S, R(2), S, R(3), S, R(4), R(1)])
SINGLE = ([0], [1], [S, R(1)])
# A hearing is scheduled on the issue today: "on the issue" hangs off "hearing" across "scheduled".
NONPROJ = [2, 4, 4, 0, 2, 7, 5, 4]


# -- actions ------------------------------------------------------------------------------


def test_encode_decode_roundtrip():
    assert n_actions(50) == 101
    assert encode(SHIFT) == 0 and decode(0) == (SHIFT, -1)
    assert encode(LEFT, 0) == 1 and encode(RIGHT, 0) == 2 and encode(LEFT, 3) == 7
    for a in range(n_actions(50)):
        assert encode(*decode(a)) == a
    assert action_name(R(1), ["a", "b"]) == "RIGHT-ARC(b)" and action_name(0) == "SHIFT"
    with pytest.raises(ValueError):
        encode(LEFT, -1)


# -- oracle on hand-made trees ------------------------------------------------------------


@pytest.mark.parametrize("heads, labels, expected", [CHAIN_LEFT, CHAIN_RIGHT, BOTH_SIDES, SINGLE])
def test_oracle_hand_trees(heads, labels, expected):
    actions = oracle(heads, labels)
    assert actions == expected
    state = run(len(heads), actions)
    assert is_final(state)
    assert state.tree() == (heads, labels)


def test_oracle_empty_sentence():
    assert oracle([], []) == []
    assert is_final(State(0))


def test_oracle_refuses_what_arc_standard_cannot_build():
    with pytest.raises(ValueError, match="non-projective"):
        oracle(NONPROJ, [0] * len(NONPROJ))
    with pytest.raises(ValueError):
        oracle([0, 0], [0, 0])  # two root words: projective, but not single-rooted
    with pytest.raises(ValueError):
        oracle([2, 1], [0, 0])  # a cycle, no root
    with pytest.raises(ValueError):
        oracle([0, 5], [0, 0])  # head out of range
    with pytest.raises(ValueError):
        oracle([0], [0, 1])  # lengths differ


def test_is_projective_hand_cases():
    for heads, _, _ in (CHAIN_LEFT, CHAIN_RIGHT, BOTH_SIDES, SINGLE):
        assert is_projective(heads)
    assert is_projective([])
    assert is_projective([0, 0])
    assert not is_projective(NONPROJ)
    assert not is_projective([3, 4, 0, 3])  # 1<-3 and 2<-4 cross
    assert not is_projective([0, 4, 1, 1])  # 2<-4 crosses 1->3
    assert not is_projective([2, 0, 1])  # 1->3 passes over the root word 2 (crosses ROOT->2)
    assert is_projective([2, 0, 2])
    with pytest.raises(ValueError):
        is_projective([1])  # self-loop


# -- legality ------------------------------------------------------------------------------


def legal(state: State, n_labels: int, root: int | None = None) -> bytes:
    """The legal actions, as the parser finds them: the template of the state's legal code."""
    return mask_templates(n_labels, root)[legal_code(state)]


def test_legality_hand_cases():
    state = State(2)
    assert legal_code(state) == 1  # SHIFT only
    apply(state, S)  # [0, 1]
    assert legal_code(state) == 1  # ROOT -> 1 must wait for the buffer
    with pytest.raises(ValueError):
        apply(state, R(0))
    with pytest.raises(ValueError):
        apply(state, L(0))
    apply(state, S)  # [0, 1, 2]
    assert legal_code(state) == 6 and legal(state, 2) == bytes([0, 1, 1, 1, 1])
    with pytest.raises(ValueError):
        apply(state, S)
    apply(state, R(0))  # [0, 1]
    assert legal_code(state) == 4 and legal(state, 2) == bytes([0, 0, 1, 0, 1])
    apply(state, R(1))
    assert is_final(state) and legal_code(state) == 0
    assert legal(state, 3) == bytes(7) and legal(state, 3, root=1) == bytes(7) and first_legal(state, 3) == -1


def test_root_label_rule():
    """UD: the one arc from ROOT is labelled root, and no other arc is."""
    assert root_label(["punct", "nsubj", "root"]) == 2 and root_label(["_", "dep"]) is None
    assert root_label(["root"]) is None  # no other label for the other arcs: no rule
    state = run(3, [S, S, S, R(0)])  # [0, 1, 2], buffer empty: arcs between words only
    assert legal(state, 3) == bytes([0, 1, 1, 1, 1, 1, 1])
    assert legal(state, 3, root=1) == bytes([0, 1, 1, 0, 0, 1, 1])  # L(1), R(1) carry the root label
    assert first_legal(state, 3, root=0) == L(1)
    apply(state, L(2))  # [0, 2]: only ROOT -> 2 is left
    assert legal(state, 3) == bytes([0, 0, 1, 0, 1, 0, 1])
    assert legal(state, 3, root=1) == bytes([0, 0, 0, 0, 1, 0, 0])  # R(root) and nothing else
    assert first_legal(state, 3, root=1) == R(1) and first_legal(state, 3) == R(0)
    assert legal(run(2, [S]), 3, root=1) == bytes([1, 0, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError):
        mask_templates(3, 3)
    with pytest.raises(ValueError):  # some action must stay legal in every non-final state
        mask_templates(1, 0)


def check_legality(state: State, n_labels: int, root: int | None) -> None:
    """The mask agrees with apply: each action it allows applies, each kind it refuses raises;
    an action it refuses that applies breaks the root-label rule."""
    mask = legal(state, n_labels, root)
    assert len(mask) == n_actions(n_labels)
    assert any(mask) != is_final(state)
    assert first_legal(state, n_labels, root) == (mask.index(1) if any(mask) else -1)
    for action in range(n_actions(n_labels)):
        try:
            apply(state.copy(), action)
            applies = True
        except ValueError:
            applies = False
        kind, label = decode(action)
        from_root = kind == RIGHT and len(state.stack) == 2  # s1 is ROOT
        if mask[action]:
            assert applies and (root is None or kind == SHIFT or (label == root) == from_root)
        else:
            assert not applies or (root is not None and kind != SHIFT and (label == root) != from_root)


def greedy(n: int, n_labels: int, rng: random.Random, check: bool = False, root: int | None = None) -> State:
    """Greedy decoding with random scores and illegal actions masked."""
    state = State(n)
    while not is_final(state):
        if check:
            check_legality(state, n_labels, root)
        mask = legal(state, n_labels, root)
        scores = [rng.gauss(0, 1) for _ in mask]
        action = max((a for a, ok in enumerate(mask) if ok), key=scores.__getitem__)
        apply(state, action)
    if check:
        check_legality(state, n_labels, root)
    return state


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 30), n_labels=st.integers(1, 5), seed=st.integers(0, 2**32 - 1),
       root=st.one_of(st.none(), st.integers(0, 4)))
def test_greedy_decoding_yields_a_single_rooted_projective_tree(n, n_labels, seed, root):
    root = None if root is None or n_labels < 2 else root % n_labels
    state = greedy(n, n_labels, random.Random(seed), check=True, root=root)
    heads, labels = state.tree()
    assert heads.count(0) == (1 if n else 0)
    assert all(0 <= h <= n for h in heads) and all(0 <= lab < n_labels for lab in labels)
    if root is not None:  # the root label on the arc from ROOT, and only there
        assert [lab == root for lab in labels] == [h == 0 for h in heads]
    for j in range(1, n + 1):  # every word reaches ROOT: no cycles
        seen, h = set(), j
        while h != 0:
            assert h not in seen
            seen.add(h)
            h = heads[h - 1]
    assert is_projective(heads)
    # ...and the oracle rebuilds it (maybe by another sequence: arc-standard is ambiguous).
    rebuilt = run(n, oracle(heads, labels))
    assert rebuilt.tree() == (heads, labels)
    check_children(rebuilt)


def check_children(state: State) -> None:
    """lc1/lc2/rc1/rc2 agree with the heads."""
    n = state.n
    for p in range(n + 1):
        left = sorted(j for j in range(1, n + 1) if state.heads[j] == p and j < p)
        right = sorted(j for j in range(1, n + 1) if state.heads[j] == p and j > p)
        assert state.lc1[p] == (left[0] if left else -1)
        assert state.lc2[p] == (left[1] if len(left) > 1 else -1)
        assert state.rc1[p] == (right[-1] if right else -1)
        assert state.rc2[p] == (right[-2] if len(right) > 1 else -1)
    assert state.lc1[-1] == state.rc1[-1] == -1  # the sentinel slot


def test_copy_is_independent():
    state = run(3, [S, S])
    twin = state.copy()
    apply(twin, S)
    apply(twin, L(0))
    assert state.stack == [0, 1, 2] and state.heads == [-1] * 4 and state.lc1 == [-1] * 5
    assert twin.stack == [0, 1, 3] and twin.heads[2] == 3 and twin.lc1[3] == 2


# -- features --------------------------------------------------------------------------------


def slot_labels(state: State) -> list[int]:
    """The label features: the arc label of each child slot, -1 where empty."""
    return [state.labels[p] if p >= 0 else -1 for p in token_slots(state)[FIRST_CHILD_SLOT:]]


def test_features_children_of_s1():
    heads, labels, actions = BOTH_SIDES  # She ate fish quickly .
    state = run(5, actions[:6])  # stack [0, ate, quickly], buffer [.]
    assert state.stack == [0, 2, 4] and state.i == 5
    # s0 s1 s2 b0 b1 b2 | s0 has no children | lc1(s1)=She rc1(s1)=fish
    assert token_slots(state) == [4, 2, 0, 5, -1, -1] + [-1] * 6 + [1, 3, -1, -1, -1, -1]
    assert slot_labels(state) == [-1] * 6 + [0, 2, -1, -1, -1, -1]  # nsubj, obj


def test_features_deep_children_of_s0():
    # 1 <- 2 <- 4 -> 6 -> 7;  3 <- 4 -> 5;  ROOT -> 4. Labels: word j has label j + 10.
    heads = [2, 4, 4, 0, 4, 4, 6]
    labels = [j + 10 for j in range(1, 8)]
    actions = oracle(heads, labels)
    state = run(7, actions[:-1])  # everything but ROOT -> 4
    assert state.stack == [0, 4] and state.i == 8
    # s0=4 s1=ROOT, no s2 or buffer; lc1(s0)=2 rc1(s0)=6 lc2(s0)=3 rc2(s0)=5 lc1(lc1)=1 rc1(rc1)=7
    assert token_slots(state) == [4, 0, -1, -1, -1, -1, 2, 6, 3, 5, 1, 7] + [-1] * 6
    assert slot_labels(state) == [12, 16, 13, 15, 11, 17] + [-1] * 6
    assert 2 * len(token_slots(state)) + len(slot_labels(state)) == N_FEATURES == len(FEATURE_NAMES) == 48


def test_features_initial_state():
    assert token_slots(State(2)) == [0, -1, -1, 1, 2, -1] + [-1] * 12
    assert slot_labels(State(2)) == [-1] * 12


def test_decoder_step_work_is_cheap_and_never_forbids_a_gold_action():
    """What the decoder does per transition in Python (token_slots, legal_code, apply): the
    oracle of every tree that keeps the root-label rule passes the masks, rebuilds its tree, and
    costs microseconds per transition (bound 50 us, some 30 times what it takes; the median over
    trees, robust to the process being descheduled mid-tree on a busy machine)."""
    rng = random.Random(0)
    n, n_labels, root = 30, 40, 3
    templates = mask_templates(n_labels, root)
    transitions, per_tree = 0, []
    for _ in range(200):
        heads, labels = greedy(n, n_labels, rng, root=root).tree()
        actions = oracle(heads, labels)
        state = State(n)
        start = time.perf_counter()
        for action in actions:
            token_slots(state)
            assert templates[legal_code(state)][action]
            apply(state, action)
        per_tree.append((time.perf_counter() - start) / len(actions))
        transitions += len(actions)
        assert state.tree() == (heads, labels)
    assert transitions == 200 * 2 * n
    assert statistics.median(per_tree) < 50e-6, f"{1e6 * statistics.median(per_tree):.1f} us per transition"


# -- the whole EWT training set -----------------------------------------------------------------


def read_trees(path: Path):
    """(heads, deprels) per sentence; multiword-token and empty-node lines skipped."""
    heads: list[int] = []
    rels: list[str] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if heads:
                    yield heads, rels
                heads, rels = [], []
                continue
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if "-" in cols[0] or "." in cols[0]:
                continue
            heads.append(int(cols[6]))
            rels.append(cols[7])
    if heads:
        yield heads, rels


@pytest.mark.skipif(not EWT_TRAIN.exists(), reason="EWT data not available")
def test_oracle_rebuilds_every_projective_ewt_tree():
    label_index: dict[str, int] = {"root": 0}
    templates = mask_templates(60, root_label(label_index))  # EWT has 50 labels
    total = nonprojective = 0
    for heads, rels in read_trees(EWT_TRAIN):
        total += 1
        labels = [label_index.setdefault(r, len(label_index)) for r in rels]
        if not is_projective(heads):
            nonprojective += 1
            with pytest.raises(ValueError):
                oracle(heads, labels)
            continue
        state = State(len(heads))
        for a in oracle(heads, labels):
            assert templates[legal_code(state)][a]  # the root-label rule never forbids a gold arc
            apply(state, a)
        assert is_final(state)
        assert state.tree() == (heads, labels)
        if total % 50 == 0:
            check_children(state)
    assert total == 12544 and len(label_index) <= 60
    assert 0 < nonprojective < 0.1 * total
    assert (nonprojective, len(label_index)) == (288, 51)  # UD English EWT 2.x train: 2.30% non-projective


def test_import_does_not_pull_in_torch():
    code = "import sys, tagger.transitions; assert 'torch' not in sys.modules, 'torch imported'"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_several_root_words_hang_from_the_main_one_for_training():
    """CoNLL-X treebanks hang punctuation and fragments from ROOT: such a tree is learnt with its
    other root words on the root word whose subtree is largest, labels kept; nothing to do for
    one root, a missing head or a cycle; none where another root word carries UD's 'root'."""
    from tagger.transitions.arc_standard import single_root, tree_problem

    heads = [0, 1, 1, 0]  # "Ik ga weg ." with the period on ROOT
    fixed = single_root(heads, ["ROOT", "su", "obj", "punct"])
    assert fixed == [0, 1, 1, 1] and tree_problem(fixed) is None and tree_problem(heads) == "several roots"
    assert single_root([0, 3, 0, 3], ["p", "a", "ROOT", "b"]) == [3, 3, 0, 3]  # the larger subtree wins
    assert single_root([0, 1], ["root", "x"]) is None  # one root
    assert single_root([0, 1, 0], ["root", "x", "root"]) is None  # UD's rule: another 'root' arc is no tree to learn
    assert single_root([0, 3, 2, 0], ["a", "b", "c", "d"]) is None  # a cycle stays a cycle

