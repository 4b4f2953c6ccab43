"""Plain text: one sentence per line, tokens separated by whitespace (spaces or tabs); blank lines
are skipped.

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
_ATTACHED = re.compile(r"""^(?=.*\w)(?:.*\w[,;:!?"”’)\]}]+|["“‘(\[{¿¡]+\w.*)$""")
_FINAL_PERIOD = re.compile(r"^(?=.*\w)[^.]*\w[.!?]+$")


def attached_punctuation(words: list[str]) -> list[str]:
    """The tokens of one line (``words``, split at whitespace) that carry punctuation attached:
    what a tokenizer would have split off."""
    found = [w for w in words if _ATTACHED.match(w)]
    if words and words[-1] not in found and len(words[-1]) > 1 and _FINAL_PERIOD.match(words[-1]):
        found.append(words[-1])
    return found


def warning(name: str, line: int, examples: list[str]) -> str:
    """The one-line warning about attached punctuation, naming where it was seen."""
    shown = ", ".join(repr(w) for w in examples[:3])
    return (f"warning: {name}:{line}: plain text is split at white space only, so tokens such as {shown} keep "
            f"their punctuation attached and will be tagged poorly; tokenise the input, or put a tokenizer model "
            f"first (tagger train --task tokenize; docs/tokenizer.md)")


def read(source: Source, *, on_error: OnError | None = None, warn: TextIO | None = None) -> Iterator[Sentence]:
    """Yield one sentence (words only) per non-blank line; with ``on_error``, lines that are not
    valid UTF-8 are reported to it and skipped. The first time one of the first
    :data:`CHECK_LINES` lines has tokens with punctuation attached, a warning goes to ``warn``
    (default stderr)."""
    name = source_name(source)
    warned = False

    def sentence(item: tuple[int, str]) -> Sentence | None:
        nonlocal warned
        words = item[1].split()
        if not warned and item[0] <= CHECK_LINES:
            attached = attached_punctuation(words)
            if attached:
                warned = True
                stream = warn or sys.stderr
                stream.write(warning(name, item[0], attached) + "\n")
                stream.flush()
        return Sentence(words, {}, source=name, line=item[0]) if words else None

    yield from each_sentence(iter_lines(source, name, lenient=on_error is not None), sentence, on_error)


def write(sentences: Iterable[Sentence], stream: TextIO) -> None:
    """Write each sentence's words on one line, separated by single spaces."""
    for sentence in sentences:
        stream.write(" ".join(sentence.words) + "\n")
