"""The arc-standard transition system (Nivre 2004), with ROOT at the bottom of the stack.

Conventions used throughout :mod:`tagger.transitions`:

* Positions: 0 is ROOT, words are 1..n. Gold trees are given as ``heads`` (length n, entry
  ``j - 1`` is the head of word ``j``, 0 = root) and ``labels`` (label indices 0..L-1).
* Actions are ints: ``0`` = SHIFT, ``1 + 2k`` = LEFT-ARC(label k), ``2 + 2k`` = RIGHT-ARC(label k),
  so a model has ``2L + 1`` outputs (:func:`n_actions`).
* LEFT-ARC(k): arc s0 → s1 with label k, pop s1; illegal when s1 is ROOT.
  RIGHT-ARC(k): arc s1 → s0 with label k, pop s0; when s1 is ROOT it is legal only once the
  buffer is empty, so ROOT gets exactly one dependent. SHIFT: legal while the buffer is non-empty.
* Labels (UD): when the labels include ``root`` and others (:func:`root_label`), the arc from
  ROOT must be labelled ``root`` and no other arc may be. Legality is :func:`legal_code` (which kinds of
  action, from the stack and buffer) indexing :func:`mask_templates` (the actions, with labels).
* A state is final when the buffer is empty and the stack is ``[0]``. Some action is legal in
  every non-final state, so greedy decoding with illegal actions masked always ends in a
  single-rooted projective tree (with one ``root`` arc, from ROOT, when the labels have one).

Plain Python, no torch: this module is run once per transition per sentence. The parser
(:mod:`tagger.models.transition_parser`) batches it: per step it collects :func:`legal_code` of
every sentence and indexes a tensor made once from :func:`mask_templates`.
"""

from __future__ import annotations

from typing import Sequence

#: Kinds of action, as returned by :func:`decode`.
SHIFT, LEFT, RIGHT = 0, 1, 2
KIND_NAMES = ("SHIFT", "LEFT-ARC", "RIGHT-ARC")


def n_actions(n_labels: int) -> int:
    """The number of actions for ``n_labels`` labels: ``2 * n_labels + 1``."""
    return 2 * n_labels + 1


def encode(kind: int, label: int = -1) -> int:
    """The action for ``kind`` (:data:`SHIFT`/:data:`LEFT`/:data:`RIGHT`) and label index.

    The label is ignored for SHIFT.
    """
    if kind == SHIFT:
        return 0
    if kind not in (LEFT, RIGHT) or label < 0:
        raise ValueError(f"bad action: kind={kind}, label={label}")
    return 2 * label + kind


def decode(action: int) -> tuple[int, int]:
    """``(kind, label)`` for an action; the label is -1 for SHIFT."""
    if action == 0:
        return SHIFT, -1
    if action < 0:
        raise ValueError(f"bad action: {action}")
    label, odd = divmod(action - 1, 2)
    return (RIGHT if odd else LEFT), label


def action_name(action: int, label_names: Sequence[str] | None = None) -> str:
    """A readable name: ``SHIFT``, ``LEFT-ARC(nsubj)``, ``RIGHT-ARC(3)``."""
    kind, label = decode(action)
    if kind == SHIFT:
        return "SHIFT"
    name = label_names[label] if label_names is not None else str(label)
    return f"{KIND_NAMES[kind]}({name})"


class State:
    """A parser configuration for one sentence of ``n`` words.

    Attributes (read them freely, change them only through :func:`apply`):

    * ``stack``: positions, bottom first; starts ``[0]`` (ROOT), which is never popped.
    * ``i``: the front of the buffer (next word, 1..n); the buffer is empty when ``i > n``.
    * ``heads``, ``labels``: length ``n + 1`` (index 0 unused), -1 until the word is attached.
    * ``lc1``, ``lc2``, ``rc1``, ``rc2``: leftmost, second leftmost, rightmost and second rightmost
      child of each position, -1 for none. They have length ``n + 2``: the extra last slot is
      always -1, so ``lc1[lc1[p]]`` is -1 (not an IndexError) when ``p`` has no left child.

    In arc-standard a word's left children are attached nearest-first and its right children
    leftmost-first, so each new left child is the new leftmost and each new right child the new
    rightmost: keeping the two extreme children per side is O(1) and needs no sorting.
    """

    __slots__ = ("n", "stack", "i", "heads", "labels", "lc1", "lc2", "rc1", "rc2")

    def __init__(self, n: int):
        if n < 0:
            raise ValueError(f"sentence length must be >= 0, got {n}")
        self.n = n
        self.stack = [0]
        self.i = 1
        self.heads = [-1] * (n + 1)
        self.labels = [-1] * (n + 1)
        self.lc1 = [-1] * (n + 2)
        self.lc2 = [-1] * (n + 2)
        self.rc1 = [-1] * (n + 2)
        self.rc2 = [-1] * (n + 2)

    def copy(self) -> State:
        """An independent copy (flat int lists only, so this is cheap)."""
        new = State.__new__(State)
        new.n = self.n
        new.stack = self.stack[:]
        new.i = self.i
        new.heads = self.heads[:]
        new.labels = self.labels[:]
        new.lc1 = self.lc1[:]
        new.lc2 = self.lc2[:]
        new.rc1 = self.rc1[:]
        new.rc2 = self.rc2[:]
        return new

    def tree(self) -> tuple[list[int], list[int]]:
        """``(heads, labels)`` of words 1..n (heads 0 = root; -1 where not attached yet)."""
        return self.heads[1:], self.labels[1:]

    def __repr__(self) -> str:
        return f"State(stack={self.stack}, buffer={list(range(self.i, self.n + 1))})"


def is_final(state: State) -> bool:
    """True when the buffer is empty and only ROOT is left on the stack."""
    return state.i > state.n and len(state.stack) == 1


def legal_code(state: State) -> int:
    """Which kinds of action are legal, packed as ``shift | left << 1 | right << 2`` (0..7).

    SHIFT while the buffer is non-empty; LEFT-ARC when s1 is a word; RIGHT-ARC when s1 is a
    word, or when s1 is ROOT and the buffer is empty (so ROOT gets exactly one dependent). Index
    :func:`mask_templates` with it to get the legal actions.
    """
    depth = len(state.stack)
    if state.i <= state.n:
        return 1 if depth == 1 else (1 if depth == 2 else 7)
    return 0 if depth == 1 else (4 if depth == 2 else 6)


#: The root-label rule's label (UD): the one arc from ROOT has it, no other arc does.
ROOT_LABEL = "root"


def root_label(label_names: Sequence[str]) -> int | None:
    """The index of :data:`ROOT_LABEL` in ``label_names``: the rule's label. ``None`` (no
    root-label rule) without it, or when it is the only label (the other arcs need another)."""
    if len(label_names) < 2:
        return None
    for k, name in enumerate(label_names):
        if name == ROOT_LABEL:
            return k
    return None


_TEMPLATES: dict[tuple[int, int | None], tuple[bytes, ...]] = {}


def mask_templates(n_labels: int, root: int | None = None) -> tuple[bytes, ...]:
    """The 8 possible legal-action masks for ``n_labels`` labels, indexed by :func:`legal_code`.

    Each mask is ``bytes`` of length ``2 * n_labels + 1`` holding 1 where the action is legal
    (cached per label count). With ``root`` (a label index, see :func:`root_label`) the
    root-label rule holds too: RIGHT-ARC from ROOT only with label ``root``, no other arc with it.
    The masks of a batch of states become a tensor with one index:
    ``torch.tensor([list(m) for m in templates])[codes]``.
    """
    if root is not None and not 0 <= root < n_labels:
        raise ValueError(f"root label {root} out of range for {n_labels} labels")
    if root is not None and n_labels < 2:  # the other arcs would have no label left
        raise ValueError("the root-label rule needs a second label")
    templates = _TEMPLATES.get((n_labels, root))
    if templates is None:
        templates = _TEMPLATES[n_labels, root] = tuple(_template(code, n_labels, root) for code in range(8))
    return templates


def _template(code: int, n_labels: int, root: int | None) -> bytes:
    mask = bytearray(2 * n_labels + 1)
    mask[0] = code & 1
    mask[1::2] = bytes([(code >> 1) & 1]) * n_labels
    mask[2::2] = bytes([(code >> 2) & 1]) * n_labels
    if root is not None:
        if code & 4 and not code & 2:  # RIGHT-ARC legal but LEFT-ARC not: s1 is ROOT
            mask[2::2] = bytes(n_labels)
            mask[2 + 2 * root] = 1
        else:
            mask[1 + 2 * root] = mask[2 + 2 * root] = 0
    return bytes(mask)


def first_legal(state: State, n_labels: int, root: int | None = None) -> int:
    """The lowest-numbered legal action (-1 in a final state): a decoder's fallback when its
    scores cannot choose (NaN)."""
    return mask_templates(n_labels, root)[legal_code(state)].find(1)


def apply(state: State, action: int) -> None:
    """Apply ``action`` to ``state`` in place; a ``ValueError`` if it is not legal."""
    stack = state.stack
    if action == 0:
        i = state.i
        if i > state.n:
            raise ValueError("SHIFT with an empty buffer")
        stack.append(i)
        state.i = i + 1
        return
    if action < 0:
        raise ValueError(f"bad action: {action}")
    label, odd = divmod(action - 1, 2)
    depth = len(stack)
    if not odd:  # LEFT-ARC: s0 -> s1, pop s1
        if depth <= 2:
            raise ValueError("LEFT-ARC needs two words on the stack")
        s0 = stack.pop()
        s1 = stack[-1]
        stack[-1] = s0
        state.heads[s1] = s0
        state.labels[s1] = label
        state.lc2[s0] = state.lc1[s0]
        state.lc1[s0] = s1
    else:  # RIGHT-ARC: s1 -> s0, pop s0
        if depth <= 2 and not (depth == 2 and state.i > state.n):
            raise ValueError("RIGHT-ARC from ROOT before the buffer is empty")
        s0 = stack.pop()
        s1 = stack[-1]
        state.heads[s0] = s1
        state.labels[s0] = label
        state.rc2[s1] = state.rc1[s1]
        state.rc1[s1] = s0


def _check_tree(heads: Sequence[int], labels: Sequence[int] | None = None) -> None:
    n = len(heads)
    if labels is not None and len(labels) != n:
        raise ValueError(f"{n} heads but {len(labels)} labels")
    for j, h in enumerate(heads, 1):
        if not 0 <= h <= n or h == j:
            raise ValueError(f"word {j} has a bad head {h}")


def is_projective(heads: Sequence[int]) -> bool:
    """True if no two arcs cross, counting ROOT (position 0) as the leftmost token.

    ``heads``: length n, 0 = root, 1-based. A tree with several root words can be projective
    (:func:`oracle` still refuses it). For every arc, each word strictly inside it must have
    its own head inside it too (otherwise that word's arc crosses it).
    """
    _check_tree(heads)
    for j, h in enumerate(heads, 1):
        lo, hi = (h, j) if h < j else (j, h)
        for k in range(lo + 1, hi):
            hk = heads[k - 1]
            if hk < lo or hk > hi:
                return False
    return True


#: Why arc-standard cannot build a gold tree (:func:`tree_problem`), in the order they are checked.
MISSING_HEADS, CYCLE, SEVERAL_ROOTS, NONPROJECTIVE = "missing heads", "cycle", "several roots", "non-projective"


def single_root(heads: Sequence[int], labels: Sequence[str]) -> list[int] | None:
    """``heads`` with one word on ROOT: a tree with several (CoNLL-X treebanks hang punctuation
    and fragments there) has its other root words attached to the one whose subtree is largest
    (the first of equal ones), their labels kept; None where there is nothing to do (one root, a
    head missing, a cycle) or where another root word is labelled :data:`ROOT_LABEL` (UD's rule
    keeps that label for the arc from ROOT)."""
    n = len(heads)
    roots = [i for i, h in enumerate(heads, 1) if h == 0]
    if len(roots) < 2 or any(not isinstance(h, int) or not 0 <= h <= n for h in heads):
        return None
    size = [0] * (n + 1)
    for start in range(1, n + 1):
        seen, j = set(), start
        while j != 0:
            if j in seen:
                return None  # a cycle
            seen.add(j)
            size[j] += 1
            j = heads[j - 1]
    main = max(roots, key=lambda r: (size[r], -r))
    if any(labels[r - 1] == ROOT_LABEL for r in roots if r != main):
        return None
    return [main if h == 0 and i != main else h for i, h in enumerate(heads, 1)]


def tree_problem(heads: Sequence[int]) -> str | None:
    """Why the static :func:`oracle` cannot build the tree of ``heads``: :data:`MISSING_HEADS` (a
    head that is no position: ``_``, -1, past the end), :data:`CYCLE` (words whose heads never
    lead to ROOT, a word its own head included), :data:`SEVERAL_ROOTS` (more than one word
    headed by ROOT), :data:`NONPROJECTIVE` (crossing arcs); None when it can build it."""
    n = len(heads)
    if any(not isinstance(h, int) or not 0 <= h <= n for h in heads):
        return MISSING_HEADS
    reaches_root = [True] + [False] * n  # position 0 is ROOT
    for start in range(1, n + 1):
        path, j = set(), start
        while not reaches_root[j]:
            if j in path:
                return CYCLE
            path.add(j)
            j = heads[j - 1]
        for j in path:
            reaches_root[j] = True
    if sum(h == 0 for h in heads) > 1:
        return SEVERAL_ROOTS
    try:
        oracle(heads, [0] * n)
    except ValueError:
        return NONPROJECTIVE
    return None


def oracle(heads: Sequence[int], labels: Sequence[int]) -> list[int]:
    """The static arc-standard oracle: the actions that build the gold tree.

    ``heads``: length n, 0 = root, 1-based; ``labels``: label index per word. Prefers LEFT-ARC,
    then RIGHT-ARC once s0 has all its dependents, then SHIFT. Raises ``ValueError`` for a tree
    arc-standard cannot build: non-projective, not exactly one root word, or malformed (bad
    head index, cycle, negative label). Trainers skip and count those (see
    :func:`is_projective`); they are not projectivised.
    """
    _check_tree(heads, labels)
    n = len(heads)
    gold = [-1, *heads]
    missing = [0] * (n + 1)  # dependents of each position not attached yet
    for h in heads:
        missing[h] += 1
    for lab in labels:
        if lab < 0:
            raise ValueError(f"bad label index {lab}")
    actions: list[int] = []
    stack = [0]
    i = 1
    while True:
        if len(stack) >= 2:
            s0, s1 = stack[-1], stack[-2]
            if s1 != 0 and gold[s1] == s0:
                actions.append(1 + 2 * labels[s1 - 1])
                missing[s0] -= 1
                stack.pop()
                stack[-1] = s0
                continue
            if gold[s0] == s1 and missing[s0] == 0 and (s1 != 0 or i > n):
                actions.append(2 + 2 * labels[s0 - 1])
                missing[s1] -= 1
                stack.pop()
                continue
        if i <= n:
            actions.append(0)
            stack.append(i)
            i += 1
        elif len(stack) == 1:
            return actions
        else:
            raise ValueError("arc-standard cannot build this tree (non-projective or not one root)")
