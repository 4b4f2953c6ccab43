"""What separates the tokens of a line in the formats of space-separated tokens (plain text,
tagged, pos, pipe) and in bracketed trees: white space, but not the no-break spaces (U+00A0,
U+2007, U+202F: by their name no place to break a word) nor the line and paragraph separators
(U+0085, U+2028, U+2029), which stay inside a token, as EVALB, which reads ASCII white space
alone, keeps them. Other spaces (an ideographic space, U+3000) separate tokens."""

from __future__ import annotations

import re

#: White space that stays inside a token.
KEPT = "\xa0\u2007\u202f\x85\u2028\u2029"
_SEPARATORS = re.compile(f"[^\\S{KEPT}]+")
#: A token of a bracketed tree: a bracket, or a run of anything but brackets and separators.
TREE_TOKEN = re.compile(f"[()]|(?:[^\\s()]|[{KEPT}])+")


def split_tokens(text: str) -> list[str]:
    """The tokens of ``text`` (``str.split()``, but for the white space in :data:`KEPT`)."""
    if text.isascii() or not any(char in text for char in KEPT):
        return text.split()
    return [token for token in _SEPARATORS.split(text) if token]


def is_separator(char: str) -> bool:
    """Whether ``char`` separates tokens."""
    return char.isspace() and char not in KEPT
