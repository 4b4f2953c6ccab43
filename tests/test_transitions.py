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
    LEFT,
    RIGHT,
    SHIFT,
    State,
    action_name,
    apply,
    decode,
    encode,
    extract,
    is_final,
    is_legal,
    is_projective,
    legal_actions_mask,
    legal_code,
    legal_kinds,
    n_actions,
    oracle,
)
from tagger.transitions.features import FEATURE_NAMES, N_FEATURES

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


def test_legality_hand_cases():
    state = State(2)
    assert legal_kinds(state) == (True, False, False)
    apply(state, S)  # [0, 1]
    assert legal_kinds(state) == (True, False, False)  # ROOT -> 1 must wait for the buffer
    with pytest.raises(ValueError):
        apply(state, R(0))
    with pytest.raises(ValueError):
        apply(state, L(0))
    apply(state, S)  # [0, 1, 2]
    assert legal_kinds(state) == (False, True, True)
    with pytest.raises(ValueError):
        apply(state, S)
    apply(state, R(0))  # [0, 1]
    assert legal_kinds(state) == (False, False, True)
    apply(state, R(1))
    assert is_final(state) and legal_kinds(state) == (False, False, False)
    assert legal_actions_mask(state, 3) == bytes(7)


def check_legality(state: State, n_labels: int) -> None:
    """The mask, the kinds, the code and is_legal agree, and apply refuses what is illegal."""
    mask = legal_actions_mask(state, n_labels)
    assert len(mask) == n_actions(n_labels)
    legal = [is_legal(state, a) for a in range(n_actions(n_labels))]
    assert list(mask) == [int(x) for x in legal]
    can_shift, can_left, can_right = legal_kinds(state)
    assert legal_code(state) == can_shift | can_left << 1 | can_right << 2
    assert legal[0] == can_shift and legal[1] == can_left and legal[2] == can_right
    assert any(legal) != is_final(state)
    for a in (0, 1, 2):
        if not legal[a]:
            with pytest.raises(ValueError):
                apply(state.copy(), a)


def greedy(n: int, n_labels: int, rng: random.Random, check: bool = False) -> State:
    """Greedy decoding with random scores and illegal actions masked."""
    state = State(n)
    while not is_final(state):
        if check:
            check_legality(state, n_labels)
        mask = legal_actions_mask(state, n_labels)
        scores = [rng.gauss(0, 1) for _ in mask]
        action = max((a for a, ok in enumerate(mask) if ok), key=scores.__getitem__)
        apply(state, action)
    if check:
        check_legality(state, n_labels)
    return state


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 30), n_labels=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_greedy_decoding_yields_a_single_rooted_projective_tree(n, n_labels, seed):
    state = greedy(n, n_labels, random.Random(seed), check=True)
    heads, labels = state.tree()
    assert heads.count(0) == (1 if n else 0)
    assert all(0 <= h <= n for h in heads) and all(0 <= lab < n_labels for lab in labels)
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

NULL_W, NULL_T, NULL_L = 0, 0, 0
ROOT_W, ROOT_T = 1, 2


def ids(n: int) -> tuple[list[int], list[int]]:
    """Word ids 10+p and tag ids 20+p for position p, ROOT ids at 0."""
    positions = range(1, n + 1)
    return [ROOT_W] + [10 + p for p in positions], [ROOT_T] + [20 + p for p in positions]


def feats(state: State):
    words, tags = ids(state.n)
    return extract(
        state, words, tags, null_word=NULL_W, null_tag=NULL_T, null_label=NULL_L, label_offset=1
    )


def test_features_children_of_s1():
    heads, labels, actions = BOTH_SIDES  # She ate fish quickly .
    state = run(5, actions[:6])  # stack [0, ate, quickly], buffer [.]
    assert state.stack == [0, 2, 4] and state.i == 5
    words, tags, labs = feats(state)
    # s0 s1 s2 b0 b1 b2 | s0 has no children | lc1(s1)=She rc1(s1)=fish
    assert words == [14, 12, ROOT_W, 15, 0, 0] + [0] * 6 + [11, 13, 0, 0, 0, 0]
    assert tags == [24, 22, ROOT_T, 25, 0, 0] + [0] * 6 + [21, 23, 0, 0, 0, 0]
    assert labs == [0, 0, 0, 0, 0, 0, 1 + 0, 1 + 2, 0, 0, 0, 0]  # nsubj, obj (+ offset 1)


def test_features_deep_children_of_s0():
    # 1 <- 2 <- 4 -> 6 -> 7;  3 <- 4 -> 5;  ROOT -> 4. Labels: word j has label j + 10.
    heads = [2, 4, 4, 0, 4, 4, 6]
    labels = [j + 10 for j in range(1, 8)]
    actions = oracle(heads, labels)
    state = run(7, actions[:-1])  # everything but ROOT -> 4
    assert state.stack == [0, 4] and state.i == 8
    words, tags, labs = feats(state)
    # s0=4 s1=ROOT, no s2 or buffer; lc1(s0)=2 rc1(s0)=6 lc2(s0)=3 rc2(s0)=5 lc1(lc1)=1 rc1(rc1)=7
    assert words == [14, ROOT_W, 0, 0, 0, 0, 12, 16, 13, 15, 11, 17] + [0] * 6
    assert tags == [24, ROOT_T, 0, 0, 0, 0, 22, 26, 23, 25, 21, 27] + [0] * 6
    assert labs == [1 + 12, 1 + 16, 1 + 13, 1 + 15, 1 + 11, 1 + 17] + [0] * 6
    assert len(words) + len(tags) + len(labs) == N_FEATURES == len(FEATURE_NAMES) == 48


def test_features_initial_state():
    words, tags, labs = feats(State(2))
    assert words == [ROOT_W, 0, 0, 11, 12, 0] + [0] * 12
    assert tags == [ROOT_T, 0, 0, 21, 22, 0] + [0] * 12
    assert labs == [0] * 12


def test_speed_of_apply_and_extract():
    """Oracle steps on 200 random 30-word trees, each call timed: per tree, extract, the legal-action
    mask and apply take a few microseconds a call (medians over the trees measured on a busy
    machine: 5.3, 0.6 and 0.6). The median over trees is robust to the process being descheduled
    mid-call, which inflates a few trees by 100 times; the bound, 100 us, catches a slow path."""
    rng = random.Random(0)
    n, n_labels = 30, 40
    words, tags = ids(n)
    per_tree: dict[str, list[float]] = {"extract": [], "mask": [], "apply": []}
    for _ in range(200):
        actions = oracle(*greedy(n, n_labels, rng).tree())
        state = State(n)
        t_extract = t_mask = t_apply = 0.0
        for a in actions:
            t0 = time.perf_counter()
            extract(state, words, tags, null_word=0, null_tag=0, null_label=0)
            t1 = time.perf_counter()
            legal_actions_mask(state, n_labels)
            t2 = time.perf_counter()
            apply(state, a)
            t3 = time.perf_counter()
            t_extract += t1 - t0
            t_mask += t2 - t1
            t_apply += t3 - t2
        assert len(actions) == 2 * n and is_final(state)
        for name, total in (("extract", t_extract), ("mask", t_mask), ("apply", t_apply)):
            per_tree[name].append(1e6 * total / len(actions))
    medians = {name: statistics.median(values) for name, values in per_tree.items()}
    assert all(value < 100 for value in medians.values()), medians


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
    label_index: dict[str, int] = {}
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
            apply(state, a)
        assert is_final(state)
        assert state.tree() == (heads, labels)
        if total % 50 == 0:
            check_children(state)
    assert total == 12544
    assert 0 < nonprojective < 0.1 * total
    assert (nonprojective, len(label_index)) == (288, 51)  # UD English EWT 2.x train: 2.30% non-projective


def test_import_does_not_pull_in_torch():
    code = "import sys, tagger.transitions; assert 'torch' not in sys.modules, 'torch imported'"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
