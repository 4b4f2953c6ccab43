"""Pseudo-projective parsing (Nivre & Nilsson 2005), with their "head" encoding of the lifts.

A projective parser (arc-standard) cannot build a tree whose arcs cross. Before training, each
non-projective gold tree is made projective by *lifting* arcs: the shortest non-projective arc
(ties: the leftmost dependent) is moved from its head to its head's head, until no
non-projective arc is left (:func:`lift`). The label of a lifted arc records where it came from:
``d`` becomes ``d↑h`` (:data:`SEPARATOR`), ``h`` the label of the dependent's original head
(:func:`projectivise`). The parser learns those decorated labels like any other; after decoding
:func:`deprojectivise` moves each arc with a decorated label back below its head: it searches the
subtree of the arc's head, breadth-first (nearer words first among one head's dependents, as
MaltParser does), for a word labelled ``h``, skipping the lifted word's own subtree; when there is
none, the arc stays where it is.

Conventions are those of :mod:`tagger.transitions.arc_standard`: positions 0 = ROOT, words
1..n; ``heads`` has length n, entry ``j - 1`` the head of word ``j``. An arc ``h → d`` is
non-projective when some word strictly between ``h`` and ``d`` is not a descendant of ``h``
(ROOT dominates everything, so in a single-rooted tree the dependents of the root word are
never lifted and lifting keeps the tree single-rooted).

The separator ``↑`` (U+2191) does not occur in UD labels. Labels that already contain it still
work as long as every decorated label splits one way only into two known labels
(:func:`split_lifted`); whoever builds a label vocabulary checks that.

Plain Python, no torch.
"""

from __future__ import annotations

from typing import Collection, Sequence

#: Between a lifted arc's own label and its original head's label: ``nsubj↑acl``.
SEPARATOR = "\u2191"


def lifted_label(label: str, head_label: str) -> str:
    """The label of an arc lifted from a head labelled ``head_label``: ``label↑head_label``."""
    return f"{label}{SEPARATOR}{head_label}"


def split_lifted(label: str, plain: Collection[str]) -> list[tuple[str, str]]:
    """Every way ``label`` reads as ``d↑h`` with ``d`` and ``h`` both in ``plain``: one pair for a
    decorated label, none for a plain one; more than one means the label is ambiguous."""
    splits = []
    start = label.find(SEPARATOR)
    while start >= 0:
        d, h = label[:start], label[start + len(SEPARATOR):]
        if d in plain and h in plain:
            splits.append((d, h))
        start = label.find(SEPARATOR, start + 1)
    return splits


def label_parts(labels: Sequence[str], n_plain: int) -> list[tuple[str, str | None]]:
    """``(plain label, original head's label)`` of each of ``labels``: the first ``n_plain`` are
    plain (``(label, None)``); each later one must read ``d↑h`` exactly one way, ``d`` and ``h``
    among the plain ones (a ``ValueError`` otherwise)."""
    if not 0 <= n_plain <= len(labels):
        raise ValueError(f"{n_plain} plain labels of {len(labels)}")
    plain = set(labels[:n_plain])
    parts: list[tuple[str, str | None]] = [(label, None) for label in labels[:n_plain]]
    for label in labels[n_plain:]:
        splits = split_lifted(label, plain)
        if len(splits) != 1 or label in plain:
            raise ValueError(f"the lifted label {label!r} does not read as one plain label {SEPARATOR} another")
        parts.append(splits[0])
    return parts


def _check(heads: Sequence[int]) -> None:
    n = len(heads)
    for j, h in enumerate(heads, 1):
        if not 0 <= h <= n or h == j:
            raise ValueError(f"word {j} has a bad head {h}")


def _children(heads: Sequence[int]) -> list[list[int]]:
    """Dependents of each position 0..n, left to right (heads out of range are left out)."""
    n = len(heads)
    children: list[list[int]] = [[] for _ in range(n + 1)]
    for j, h in enumerate(heads, 1):
        if 0 <= h <= n and h != j:
            children[h].append(j)
    return children


def _tour(heads: Sequence[int]) -> tuple[list[int], list[int]]:
    """``(enter, leave)`` times of a depth-first walk from ROOT: ``a`` dominates ``k`` (both
    reached from ROOT) iff ``enter[a] <= enter[k] < leave[a]``. Positions not reached from
    ROOT (on a cycle, or below one) get ``enter == -1``."""
    n = len(heads)
    children = _children(heads)
    enter, leave = [-1] * (n + 1), [-1] * (n + 1)
    clock = 0
    stack = [(0, 0)]
    while stack:
        node, k = stack.pop()
        if k == 0:
            enter[node] = clock
            clock += 1
        if k < len(children[node]):
            stack.append((node, k + 1))
            stack.append((children[node][k], 0))
        else:
            leave[node] = clock
    return enter, leave


def _nonprojective(j: int, heads: Sequence[int], enter: list[int], leave: list[int]) -> bool:
    """Whether some word strictly between ``j`` and its head, itself below ROOT, is not below
    the head (``enter``/``leave`` of :func:`_tour`)."""
    h = heads[j - 1]
    lo, hi = (h, j) if h < j else (j, h)
    first, last = enter[h], leave[h]
    if first < 0:  # the head is not below ROOT: any word between that is, is not below it
        return any(enter[k] >= 0 for k in range(lo + 1, hi))
    return any(enter[k] >= 0 and not first <= enter[k] < last for k in range(lo + 1, hi))


def nonprojective_arcs(heads: Sequence[int]) -> list[bool]:
    """Per word, whether its arc is non-projective: some word strictly between the word and its
    head is not a descendant of the head. Any list of heads is taken (a predicted tree from
    another tool): a word without a valid head (``-1``, out of range, itself) has no arc, so
    ``False``, and words not below ROOT (no valid head, on a cycle or below one) make no arc
    non-projective."""
    n = len(heads)
    enter, leave = _tour(heads)
    out = [False] * n
    for j, h in enumerate(heads, 1):
        if 0 <= h <= n and h != j and abs(h - j) > 1:
            out[j - 1] = _nonprojective(j, heads, enter, leave)
    return out


def lift(heads: Sequence[int]) -> list[int]:
    """The heads of the projectivised tree: the shortest non-projective arc (ties: the leftmost
    dependent) is lifted to its head's head, until none is left (Nivre & Nilsson 2005).

    ``heads`` must form a tree below ROOT (a ``ValueError`` for a bad head or a cycle); several
    root words are allowed, but then a dependent of one may be lifted to ROOT.
    """
    _check(heads)
    enter, _ = _tour(heads)
    if min(enter) < 0:
        raise ValueError("the heads have a cycle")
    heads = list(heads)
    while True:
        enter, leave = _tour(heads)
        for j in sorted(range(1, len(heads) + 1), key=lambda j: (abs(heads[j - 1] - j), j)):
            if abs(heads[j - 1] - j) > 1 and _nonprojective(j, heads, enter, leave):
                heads[j - 1] = heads[heads[j - 1] - 1]  # never from ROOT: ROOT's arcs are projective
                break
        else:
            return heads


def projectivise(heads: Sequence[int], labels: Sequence[str]) -> tuple[list[int], list[str]]:
    """``(heads, labels)`` of the projectivised tree (:func:`lift`), each lifted arc's label
    decorated with its original head's label (:func:`lifted_label`); the tree itself when it is
    projective. A ``ValueError`` as :func:`lift` gives one."""
    if len(labels) != len(heads):
        raise ValueError(f"{len(heads)} heads but {len(labels)} labels")
    lifted = lift(heads)
    return lifted, [label if lifted[j] == heads[j] else lifted_label(label, labels[heads[j] - 1])
                    for j, label in enumerate(labels)]


def deprojectivise(heads: Sequence[int], labels: Sequence[str], head_labels: Sequence[str | None]) -> list[int]:
    """The heads with every lifted arc moved back below its syntactic head.

    ``labels``: each word's plain label; ``head_labels``: for a word whose decoded label was
    decorated (``d↑h``), ``h``, else ``None``. Words are visited top-down, breadth-first from ROOT
    (so a lifted head is mostly back in place before its lifted dependents look for it); a lifted
    word looks, breadth-first below its current head and not inside its own subtree, for the
    first word labelled ``h`` (a head's dependents nearest to the lifted word first) and moves
    there, its subtree with it. Words that found nothing try again after a pass that moved
    others (MaltParser retries too), until a pass moves nothing; their arcs stay, as do those of
    words hanging from ROOT. A tree stays a tree. ``heads`` must be one (a ``ValueError`` otherwise). With labels that tell
    the words apart this undoes :func:`projectivise` exactly; with real labels the search can
    stop at a nearer word of the same label (UD English EWT train: 310 of its 357 lifted arcs
    come back to their gold heads).
    """
    n = len(heads)
    if len(labels) != n or len(head_labels) != n:
        raise ValueError(f"{n} heads but {len(labels)} labels and {len(head_labels)} head labels")
    _check(heads)
    heads = list(heads)
    if all(h is None for h in head_labels):
        return heads
    children = _children(heads)
    if min(_tour(heads)[0]) < 0:
        raise ValueError("the heads have a cycle")
    pending = {j for j in range(1, n + 1) if head_labels[j - 1] is not None and heads[j - 1] != 0}
    while pending:
        moved = False
        for node in _breadth_first(children):
            if node not in pending:
                continue
            target = _find_head(node, heads[node - 1], head_labels[node - 1], labels, children)
            if target is not None:
                children[heads[node - 1]].remove(node)
                heads[node - 1] = target
                children[target].append(node)
                children[target].sort()
                pending.discard(node)
                moved = True
        if not moved:  # the others find no head: their arcs stay
            break
    return heads


def _breadth_first(children: list[list[int]]) -> list[int]:
    """The words, breadth-first from ROOT (left to right within a level)."""
    order = [0]
    for node in order:  # the list grows while it is walked
        order.extend(children[node])
    return order[1:]


def _find_head(node: int, start: int, wanted: str, labels: Sequence[str], children: list[list[int]]) -> int | None:
    """Breadth-first below ``start``, not entering ``node``: the first word labelled ``wanted``
    (each word's dependents nearest to ``node`` first)."""
    queue = [start]
    for current in queue:  # the list grows while it is walked: a FIFO queue
        for child in sorted(children[current], key=lambda c: (abs(c - node), c)):
            if child == node:
                continue
            if labels[child - 1] == wanted:
                return child
            queue.append(child)
    return None
