"""Plain text: one sentence per line, tokens separated by whitespace (spaces or tabs); blank lines
are skipped. A line of more than :data:`MAX_WORDS` tokens is read as several sentences of at most
that many (a ``note:`` on stderr says so, once): a sentence is tagged whole, so one unbounded
line (a 50 MB text without a line end) would otherwise take memory in proportion to it at every
step of a model. Such a line's tokens are found a sentence at a time, never all at once.

This reader does not tokenise: ``Smith?`` and ``$5.00,`` stay one token each, punctuation
attached. It says so once (a ``warning:`` line on stderr, :func:`attached_punctuation`) when the
first lines hold such tokens; a tokenizer model (``tagger train --task tokenize``,
docs/tokenizer.md) reads raw text instead.
"""

from __future__ import annotations

import re
import sys
from typing import Iterable, Iterator, TextIO

from tagger.corpus.records import Sentence
from tagger.corpus.spaces import is_separator, split_tokens
from tagger.formats.base import OnError, Source, each_sentence, iter_lines, source_name

NAME = "text"
EXTENSIONS = (".txt",)

#: Lines looked at for tokens with punctuation attached (the warning is about the input's
#: convention, which its first lines show; looking further would cost every line a regex).
CHECK_LINES = 200

#: A token with a letter or digit and punctuation glued to its end (``Smith?``, ``$5.00,``,
#: ``said:``) or start (``"Yes``, ``(see``). A final period is not enough (``Mr.``, ``etc.``)
#: unless it ends the line on a word without periods (``Yes.``, not ``U.S.``): tokenised text
#: writes the sentence's period apart. On UD EWT's gold tokens (16,622 lines) it fires 14 times.
_ATTACHED = re.compile(r"""^(?=.*\w)(?:.*\w[,;:!?"”’)\]}，、：；！？」』）】》〉]+|["“‘(\[{¿¡「『（【《〈]+\w.*)$""")
_FINAL_PERIOD = re.compile(r"^(?=.*\w)[^.。]*\w[.!?。！？]+$")
#: The most tokens of a sentence read from plain text: a longer line is split into sentences of
#: this many tokens (the last one fewer). UD's longest sentences hold a few hundred tokens; the
#: tokenizer's sentences are bounded alike (:data:`tagger.tokenization.segment.MAX_TOKENS`).
MAX_WORDS = 1000
#: Characters of a long line split at a time (see :func:`pieces`).
STRETCH = 1 << 16


def attached_punctuation(words: list[str], ends_line: bool = True) -> list[str]:
    """The tokens of one line (``words``, split at whitespace; ``ends_line``: the last one ends
    the line) that carry punctuation attached: what a tokenizer would have split off."""
    found = [w for w in words if _ATTACHED.match(w)]
    if ends_line and words and words[-1] not in found and len(words[-1]) > 1 and _FINAL_PERIOD.match(words[-1]):
        found.append(words[-1])
    return found


def warning(name: str, line: int, examples: list[str]) -> str:
    """The one-line warning about attached punctuation, naming where it was seen."""
    shown = ", ".join(repr(w) for w in examples[:3])
    return (f"warning: {name}:{line}: plain text is split at white space only, so tokens such as {shown} keep "
            f"their punctuation attached and will be tagged poorly; tokenise the input, or put a tokenizer model "
            f"first (tagger train --task tokenize; docs/tokenizer.md)")


def read(source: Source, *, on_error: OnError | None = None, warn: TextIO | None = None,
         max_words: int = MAX_WORDS, check_tokens: bool = True) -> Iterator[Sentence]:
    """Yield one sentence (words only) per non-blank line, a line of more than ``max_words``
    tokens as several (see the module text); with ``on_error``, lines that are not valid UTF-8
    are reported to it and skipped. The first time one of the first :data:`CHECK_LINES` lines
    has tokens with punctuation attached, a warning goes to ``warn`` (default stderr), unless
    not ``check_tokens`` (``tagger convert``: nothing is tagged)."""
    name = source_name(source)
    told = {"warned": False, "split": False}

    def say(text: str) -> None:
        stream = warn or sys.stderr
        stream.write(text + "\n")
        stream.flush()

    def sentences(item: tuple[int, str]) -> Iterator[Sentence]:
        number, line = item
        for index, words in enumerate(pieces(line, max_words)):
            if index == 0 and check_tokens and not told["warned"] and number <= CHECK_LINES:
                attached = attached_punctuation(words, ends_line=len(words) < max_words)
                if attached:
                    told["warned"] = True
                    say(warning(name, number, attached))
            if index == 1 and not told["split"]:
                told["split"] = True
                say(f"note: {name}:{number}: a line of more than {max_words} tokens is read as sentences of at most "
                    f"{max_words} (plain text is one sentence a line)")
            yield Sentence(words, {}, source=name, line=number)

    for group in each_sentence(iter_lines(source, name, lenient=on_error is not None), sentences, on_error):
        yield from group


def pieces(line: str, size: int) -> Iterator[list[str]]:
    """The tokens of a line, at most ``size`` at a time; a long line's found a stretch of
    :data:`STRETCH` characters at a time (split there, its last token completed), not all at once."""
    if len(line) < 2 * size:  # fewer than size + 1 tokens, however they are spaced
        words = split_tokens(line)
        if words:
            yield words
        return
    buffer: list[str] = []
    at, stretch = 0, STRETCH
    while at < len(line):
        stop = at + stretch
        words = split_tokens(line[at:stop])
        if stop < len(line) and words and not is_separator(line[stop - 1]) and not is_separator(line[stop]):
            if len(words) == 1:  # one token longer than the stretch: take more
                stretch *= 2
                continue
            stop -= len(words.pop())  # the last token goes on past the stretch: it starts the next
        buffer += words
        at, stretch = stop, STRETCH
        if len(buffer) >= size:
            full = len(buffer) // size * size
            yield from (buffer[i : i + size] for i in range(0, full, size))
            buffer = buffer[full:]
    if buffer:
        yield buffer


def write(sentences: Iterable[Sentence], stream: TextIO) -> None:
    """Write each sentence's words on one line, separated by single spaces."""
    for sentence in sentences:
        stream.write(" ".join(sentence.words) + "\n")
