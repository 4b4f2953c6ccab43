"""Transition systems for dependency parsing (plain Python; never imports torch).

:mod:`~tagger.transitions.arc_standard` holds the arc-standard system, its legality rules (the
UD root-label rule included) and static oracle; :mod:`~tagger.transitions.pseudo_projective`
pseudo-projective parsing (Nivre & Nilsson 2005: lifting non-projective arcs before training,
moving them back after decoding) and the finder of non-projective arcs;
:mod:`~tagger.transitions.features` the token slots of the 48 Chen & Manning features. This is
the API the parser uses; nothing else.
:mod:`~tagger.transitions.linearise` (imported from there) turns constituency trees into the
symbol sequences of the sequence-to-sequence parser, and any such sequence back into a tree.
"""

from tagger.transitions.arc_standard import (
    LEFT,
    RIGHT,
    ROOT_LABEL,
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
    tree_problem,
)
from tagger.transitions.features import FEATURE_NAMES, FIRST_CHILD_SLOT, N_FEATURES, TOKEN_SLOTS, token_slots
from tagger.transitions.pseudo_projective import (
    SEPARATOR,
    deprojectivise,
    label_parts,
    lift,
    lifted_label,
    nonprojective_arcs,
    projectivise,
    split_lifted,
)

__all__ = [
    "FEATURE_NAMES",
    "FIRST_CHILD_SLOT",
    "LEFT",
    "N_FEATURES",
    "RIGHT",
    "ROOT_LABEL",
    "SEPARATOR",
    "SHIFT",
    "State",
    "TOKEN_SLOTS",
    "action_name",
    "apply",
    "decode",
    "deprojectivise",
    "encode",
    "first_legal",
    "is_final",
    "is_projective",
    "label_parts",
    "legal_code",
    "lift",
    "lifted_label",
    "mask_templates",
    "n_actions",
    "nonprojective_arcs",
    "oracle",
    "projectivise",
    "root_label",
    "split_lifted",
    "token_slots",
    "tree_problem",
]
