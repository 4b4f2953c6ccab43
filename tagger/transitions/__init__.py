"""Transition systems for dependency parsing (plain Python; never imports torch).

:mod:`~tagger.transitions.arc_standard` holds the arc-standard system, its legality masks and
static oracle; :mod:`~tagger.transitions.features` the 48 Chen & Manning features.
"""

from tagger.transitions.arc_standard import (
    LEFT,
    RIGHT,
    SHIFT,
    State,
    action_name,
    apply,
    decode,
    encode,
    is_final,
    is_legal,
    is_projective,
    legal_actions_mask,
    legal_code,
    legal_kinds,
    mask_templates,
    n_actions,
    oracle,
)
from tagger.transitions.features import FEATURE_NAMES, N_FEATURES, TOKEN_SLOTS, extract, token_slots

__all__ = [
    "FEATURE_NAMES",
    "LEFT",
    "N_FEATURES",
    "RIGHT",
    "SHIFT",
    "State",
    "TOKEN_SLOTS",
    "action_name",
    "apply",
    "decode",
    "encode",
    "extract",
    "is_final",
    "is_legal",
    "is_projective",
    "legal_actions_mask",
    "legal_code",
    "legal_kinds",
    "mask_templates",
    "n_actions",
    "oracle",
    "token_slots",
]
