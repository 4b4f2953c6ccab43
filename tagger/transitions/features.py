"""The 48 Chen & Manning (2014) features of an arc-standard configuration.

18 token slots give 18 word and 18 tag features; the 12 child slots (6..17) also give 12 label
features. Slot order (also :data:`TOKEN_SLOTS`):

====  ==============  ====  ==============  ====  ==============
 0    s0               6    lc1(s0)         12    lc1(s1)
 1    s1               7    rc1(s0)         13    rc1(s1)
 2    s2               8    lc2(s0)         14    lc2(s1)
 3    b0               9    rc2(s0)         15    rc2(s1)
 4    b1              10    lc1(lc1(s0))    16    lc1(lc1(s1))
 5    b2              11    rc1(rc1(s0))    17    rc1(rc1(s1))
====  ==============  ====  ==============  ====  ==============

Label feature ``j`` (0..11) is the arc label of token slot ``6 + j`` (:data:`FIRST_CHILD_SLOT`).
``lc1``/``lc2`` are the leftmost/second leftmost left children and ``rc1``/``rc2`` the
rightmost/second rightmost right children. :func:`token_slots` gives the positions in the slots
(-1 for an empty slot); the parser looks their words, tags and labels up itself (a slot with no
token reads NULL, ROOT reads the ROOT entries). ROOT is never a child, so it never has a label.
"""

from __future__ import annotations

from tagger.transitions.arc_standard import State

TOKEN_SLOTS = (
    "s0", "s1", "s2", "b0", "b1", "b2",
    "lc1(s0)", "rc1(s0)", "lc2(s0)", "rc2(s0)", "lc1(lc1(s0))", "rc1(rc1(s0))",
    "lc1(s1)", "rc1(s1)", "lc2(s1)", "rc2(s1)", "lc1(lc1(s1))", "rc1(rc1(s1))",
)  # fmt: skip
N_WORD_FEATURES = N_TAG_FEATURES = len(TOKEN_SLOTS)  # 18
#: Slots from here on are children: they also give a label feature.
FIRST_CHILD_SLOT = 6
N_LABEL_FEATURES = len(TOKEN_SLOTS) - FIRST_CHILD_SLOT  # 12
N_FEATURES = N_WORD_FEATURES + N_TAG_FEATURES + N_LABEL_FEATURES  # 48
#: Names of the 48 features in the order ``words + tags + labels``.
FEATURE_NAMES = (
    tuple(f"{slot}.w" for slot in TOKEN_SLOTS)
    + tuple(f"{slot}.t" for slot in TOKEN_SLOTS)
    + tuple(f"{slot}.l" for slot in TOKEN_SLOTS[FIRST_CHILD_SLOT:])
)


def token_slots(state: State) -> list[int]:
    """The positions in the 18 token slots (see the module docstring), -1 where empty."""
    stack = state.stack
    depth = len(stack)
    s0 = stack[-1]
    s1 = stack[-2] if depth > 1 else -1
    s2 = stack[-3] if depth > 2 else -1
    i, n = state.i, state.n
    lc1, lc2, rc1, rc2 = state.lc1, state.lc2, state.rc1, state.rc2
    # Index -1 is the always -1 sentinel slot of the child arrays, so chains need no checks.
    l0, r0, l1, r1 = lc1[s0], rc1[s0], lc1[s1], rc1[s1]
    return [
        s0, s1, s2,
        i if i <= n else -1, i + 1 if i < n else -1, i + 2 if i + 1 < n else -1,
        l0, r0, lc2[s0], rc2[s0], lc1[l0], rc1[r0],
        l1, r1, lc2[s1], rc2[s1], lc1[l1], rc1[r1],
    ]  # fmt: skip
