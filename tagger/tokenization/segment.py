"""From text and its character labels to sentences of tokens, and those as CoNLL-U blocks.

Rules (whatever the labels say): a token never holds white space (a token the model did not
end before a space ends there); a paragraph break (a blank line) and the end of the text end a
sentence; labels on white space are ignored.

A block's lines: ``# newdoc`` (the first sentence of an input), ``# newpar`` (the first of each
paragraph), ``# sent_id = N``, ``# text = ...`` (the sentence's characters, each run of white
space inside it as one space), multiword range lines, word lines with ``_`` in the fields a
model fills. What follows a token is in its MISC: nothing for one space, ``SpaceAfter=No`` for
none, else ``SpacesAfter=`` (escaped as UDPipe does: ``\\n``, ``\\s``, ...); white space before
the first token of an input is ``SpacesBefore=`` of that token. So the tokens and their MISC
give back the text exactly (:func:`tagger.tokenization.labels.rebuild_text`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tagger.corpus.records import Sentence
from tagger.tokenization.labels import INSIDE, MWT_END, MWT_SENTENCE_END, PAR, SENTENCE_END, escape_spaces
from tagger.tokenization.multiword import Expander

_RUN = re.compile(r"[^ \x00]+")
_SPACE_RUN = re.compile(r"\s+")
_ENDS_SENTENCE = (SENTENCE_END, MWT_SENTENCE_END)
_MULTIWORD = (MWT_END, MWT_SENTENCE_END)


@dataclass
class Span:
    """One sentence: its tokens as ``(start, stop, multiword)`` character spans, and whether a
    paragraph starts with it."""

    tokens: list[tuple[int, int, bool]] = field(default_factory=list)
    new_paragraph: bool = False

    @property
    def start(self) -> int:
        return self.tokens[0][0]

    @property
    def stop(self) -> int:
        return self.tokens[-1][1]


def segment(norm: str, labels: bytes | list[int], new_paragraph: bool = True) -> list[Span]:
    """The sentences of a text, given its :func:`~tagger.tokenization.labels.normalise`\\ d form
    ``norm`` and one label per character. ``new_paragraph``: the text starts a paragraph."""
    if not isinstance(labels, (bytes, bytearray)):
        labels = bytes(labels)
    sentences: list[Span] = []
    current = Span(new_paragraph=new_paragraph)
    previous_stop = 0
    for run in _RUN.finditer(norm):
        start, stop = run.span()
        if PAR in norm[previous_stop:start]:
            if current.tokens:
                sentences.append(current)
                current = Span(new_paragraph=True)
            else:
                current.new_paragraph = True
        previous_stop = stop
        token_start = start
        if labels.count(0, start, stop - 1) == stop - 1 - start:  # the common case: the run is one token
            label = labels[stop - 1]
            current.tokens.append((start, stop, label in _MULTIWORD))
            if label in _ENDS_SENTENCE:
                sentences.append(current)
                current = Span()
            continue
        for at in range(start, stop - 1):
            label = labels[at]
            if label != INSIDE:
                current.tokens.append((token_start, at + 1, label in _MULTIWORD))
                token_start = at + 1
                if label in _ENDS_SENTENCE:
                    sentences.append(current)
                    current = Span()
        label = labels[stop - 1]
        current.tokens.append((token_start, stop, label in _MULTIWORD))
        if label in _ENDS_SENTENCE:
            sentences.append(current)
            current = Span()
    if current.tokens:
        sentences.append(current)
    return sentences


def _misc(spaces: str, before: str = "") -> str:
    items = []
    if before:
        items.append(f"SpacesBefore={escape_spaces(before)}")
    if spaces == "":
        items.append("SpaceAfter=No")
    elif spaces != " ":
        items.append(f"SpacesAfter={escape_spaces(spaces)}")
    return "|".join(items) or "_"


_BLANK = "\t_\t_\t_\t_\t_\t_\t_\t"


def block(text: str, span: Span, next_start: int, sent_id: int, expander: Expander, before: str = "",
          newdoc: bool = False, source: str = "<stdin>", line: int = 0) -> Sentence:
    """The sentence ``span`` of ``text`` as a CoNLL-U record (words, and its lines in ``raw``);
    ``next_start``: where the next token starts (the text's length after the last one), so that
    the white space after each token is known; ``before``: white space before its first token
    when it is the first of an input."""
    lines = []
    if newdoc:
        lines.append("# newdoc")
    if span.new_paragraph or newdoc:
        lines.append("# newpar")
    lines.append(f"# sent_id = {sent_id}")
    lines.append("# text = " + _SPACE_RUN.sub(" ", text[span.start : span.stop]))
    words: list[str] = []
    tokens = span.tokens
    last = len(tokens) - 1
    for index, (start, stop, multiword) in enumerate(tokens):
        form = text[start:stop]
        after = text[stop : tokens[index + 1][0] if index < last else next_start]
        misc = "_" if after == " " and not (index == 0 and before) else _misc(after, before if index == 0 else "")
        n = len(words) + 1
        if multiword:
            parts = expander.expand(form)
            if len(parts) > 1:
                lines.append(f"{n}-{n + len(parts) - 1}\t{form}{_BLANK}{misc}")
                for offset, word in enumerate(parts):
                    lines.append(f"{n + offset}\t{word}{_BLANK}_")
                words += parts
                continue
        lines.append(f"{n}\t{form}{_BLANK}{misc}")
        words.append(form)
    return Sentence(words, {}, source=source, line=line, raw={"format": "conllu", "lines": lines})
