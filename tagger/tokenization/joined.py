"""Known words with a space inside (torch-free): a tokenizer trained on tokens that hold a space
(Vietnamese ``thành phố``) keeps the two-piece ones it saw more often whole than as two tokens,
and joins two tokens it made into one where they spell such a word.

The character model decides each space on its own context, and on a small corpus often splits a
word it has seen whole many times. On Vietnamese VTB test (1,400 training sentences), joining such
pairs in the model's output takes Tokens F1 from 84.66 to 87.32 (docs/tokenizer.md).

:func:`learn` reads the training windows (characters and their labels), :func:`join_known`
corrects the labels of a text before :func:`tagger.tokenization.segment.segment` reads them.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Sequence

from tagger.tokenization.labels import END, INSIDE, LABELS, PAR, SENTENCE_END

#: The tokenizer vocabulary of those words, lowercased (absent: none).
JOINED = "joined_tokens"
_SPACES = (" ", PAR)
#: One space between two characters that are not white space (in a normalised text).
_ONE_SPACE = re.compile("(?<=[^ \x00]) (?=[^ \x00])")


def tokens_of(chars: Sequence[str], labels: Sequence[str]) -> list[tuple[str, bool]]:
    """The tokens of one training window (its characters and their labels, :data:`LABELS`), each
    with whether white space came before it; a space after a character labelled inside a token
    stays in the token."""
    out: list[tuple[str, bool]] = []
    current, spaced, previous = "", False, LABELS[END]
    for char, label in zip(chars, labels):
        if char in _SPACES:
            if current and previous == LABELS[INSIDE]:
                current += " "
            else:
                spaced = True
            continue
        current += char
        previous = label
        if label != LABELS[INSIDE]:
            out.append((current.strip(), spaced))
            current, spaced = "", False
    return out


def learn(windows: Iterable[tuple[Sequence[str], Sequence[str]]]) -> list[str]:
    """The two-piece training tokens (lowercased) seen more often whole than as two tokens with
    white space between, from the training windows' characters and labels (each window's first
    and last tokens left out: it may cut them), sorted."""
    whole: Counter = Counter()
    apart: Counter = Counter()
    for chars, labels in windows:
        tokens = tokens_of(chars, labels)[1:-1]  # a window may cut its first and last tokens
        for token, _ in tokens:
            if token.count(" ") == 1:
                whole[token.lower()] += 1
        for (first, _), (second, spaced) in zip(tokens, tokens[1:]):
            if spaced and " " not in first and " " not in second:
                apart[f"{first} {second}".lower()] += 1
    return sorted(word for word, n in whole.items() if n > apart[word])


def join_known(norm: str, labels: bytes, words: frozenset[str], text: str | None = None) -> bytes:
    """``labels`` (of the normalised text ``norm``) with two tokens of one piece each, one space
    apart, made one where they spell a word of ``words`` (lowercased): the first's end becomes
    inside, so the token goes on past the space (a tokenizer of spaced tokens). Left to right, a
    token joins at most once; sentence ends and multiword tokens stay as they are. ``text``: the
    text ``norm`` was made of, where that space must be a space U+0020 (not a tab or a line
    break, which ``norm`` holds as a space: :func:`tagger.tokenization.segment.segment` would
    end the token there anyway)."""
    if not words:
        return labels
    out = bytearray(labels)
    last, free = len(out) - 1, 0
    for space in _ONE_SPACE.finditer(norm):
        at = space.start() - 1  # the first token's last character
        if out[at] != END or at < free or (text is not None and text[at + 1] != " "):
            continue
        start = at
        while start > 0 and out[start - 1] == INSIDE and norm[start - 1] not in _SPACES:
            start -= 1
        stop = at + 2
        while stop < last and out[stop] == INSIDE and norm[stop + 1] not in _SPACES:
            stop += 1
        if out[stop] in (END, SENTENCE_END) and norm[start : stop + 1].lower() in words:
            out[at] = INSIDE
            free = stop + 1
    return bytes(out)
