"""From text and its character labels to sentences of tokens, and those as CoNLL-U blocks.

Rules (whatever the labels say): a token never holds white space (a token the model did not
end before a space ends there), but for one space between two of its characters where the model
was trained on such tokens (``spaced_tokens``: Vietnamese ``thành phố``), a space U+0020 in the
text itself (not a tab, a line break or another white-space character, which the normalised text
also holds as a space: CoNLL-U cannot write a FORM with a tab or a line break, and a no-break or
other space is not the one the treebanks write inside such tokens); a token never ends inside an extended grapheme cluster (an
emoji ZWJ sequence, a flag, a letter and its combining marks: :func:`whole_clusters` moves such
an end to the cluster's last character); a sentence never starts with a closing bracket or
quotation mark (:func:`closed_sentences`); a paragraph break (a blank line) and the end of the
text end a sentence, and so does a sentence's :data:`MAX_TOKENS`\\ th token; labels on white
space are ignored.

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
import unicodedata
from dataclasses import dataclass, field
from itertools import chain

from tagger.corpus.records import Sentence
from tagger.formats.text import MAX_WORDS
from tagger.tokenization.labels import END, INSIDE, MWT_END, MWT_SENTENCE_END, PAR, SENTENCE_END, escape_spaces
from tagger.tokenization.multiword import Expander

_RUN = re.compile(r"[^ \x00]+")
#: A label other than inside a token (in the labels' bytes).
_BOUNDARY = re.compile(b"[^%c]" % INSIDE)
_SPACE_RUN = re.compile(r"\s+")
_ENDS_SENTENCE = (SENTENCE_END, MWT_SENTENCE_END)
_MULTIWORD = (MWT_END, MWT_SENTENCE_END)

#: The most tokens of a sentence the tokenizer writes (:func:`tagger.tokenization.stream.tokenize`
#: gives it to :func:`segment`): a longer one is cut there, as a line of plain text is
#: (:data:`tagger.formats.text.MAX_WORDS`), so that the models after it never read an unbounded sentence.
MAX_TOKENS = MAX_WORDS


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


def segment(norm: str, labels: bytes | list[int], new_paragraph: bool = True,
            max_tokens: int | None = None, spaced_tokens: bool = False, text: str | None = None) -> list[Span]:
    """The sentences of a text, given its :func:`~tagger.tokenization.labels.normalise`\\ d form
    ``norm`` and one label per character. ``new_paragraph``: the text starts a paragraph;
    ``max_tokens``: a sentence that reaches this many tokens ends there (None: no bound).
    ``spaced_tokens`` (a tokenizer trained on tokens with spaces inside, as Vietnamese
    ``thành phố``): a token the model did not end before a single space goes on after it, where
    that space is a space U+0020 in ``text``, the text ``norm`` was made of (None: ``norm``
    itself, whose spaces may stand for tabs and line breaks: for scoring labels only)."""
    most = max_tokens or len(norm) + 1
    gaps = norm if text is None else text  # where a token may go on over a space: one " " there
    if not isinstance(labels, (bytes, bytearray)):
        labels = bytes(labels)
    sentences: list[Span] = []
    current = Span(new_paragraph=new_paragraph)
    previous_stop = 0
    open_start = None  # the start of a token going on after a space (spaced_tokens)

    def end_token(start: int, stop: int, label: int) -> None:
        nonlocal current
        current.tokens.append((start, stop, label in _MULTIWORD))
        if label in _ENDS_SENTENCE or len(current.tokens) >= most:
            sentences.append(current)
            current = Span()

    for run in _RUN.finditer(norm):
        start, stop = run.span()
        if open_start is not None and gaps[previous_stop:start] != " ":
            end_token(open_start, previous_stop, labels[previous_stop - 1])  # no single space: it ends there
            open_start = None
        if PAR in norm[previous_stop:start]:
            if current.tokens:
                sentences.append(current)
                current = Span(new_paragraph=True)
            else:
                current.new_paragraph = True
        previous_stop = stop
        token_start = start if open_start is None else open_start
        open_start = None
        if labels.count(INSIDE, start, stop - 1) != stop - 1 - start:  # not the common case of a run that is one token
            for boundary in _BOUNDARY.finditer(labels, start, stop - 1):  # a run of many tokens (no spaces: Japanese)
                at = boundary.start()
                end_token(token_start, at + 1, labels[at])
                token_start = at + 1
        if spaced_tokens and labels[stop - 1] == INSIDE:
            open_start = token_start
        else:
            end_token(token_start, stop, labels[stop - 1])
    if open_start is not None:
        end_token(open_start, previous_stop, labels[previous_stop - 1])
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
        if index == 0 and before:
            misc = _misc(after, before)
        else:  # the usual two without a call: one space, or none (a text without spaces: each token)
            misc = "_" if after == " " else "SpaceAfter=No" if not after else _misc(after)
        n = len(words) + 1
        if expander.is_multiword(form, multiword):
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


# ---------------------------------------------------------------------------------- grapheme clusters
#: Extend besides the marks Mn and Me (UAX #29, GB9): ZWNJ, the halfwidth sound marks, emoji
#: modifiers, tag characters. With the marks Mc and Thai and Lao AM (SpacingMark, GB9a), ZWJ,
#: and Hangul V and T jamo (GB7, GB8), they are what may join the character before.
_EXTEND = [(0x200C, 0x200C), (0xFF9E, 0xFF9F), (0x1F3FB, 0x1F3FF), (0xE0020, 0xE007F)]
#: The stretches of code points that hold every mark (Mn, Me, Mc) of Unicode 14 with room for
#: those added since (tested against :mod:`unicodedata`); their marks are found on first use.
_MARK_BLOCKS = [(0x300, 0x36F), (0x483, 0x489), (0x591, 0x109F), (0x1350, 0x135F), (0x1700, 0x1DFF),
                (0x20D0, 0x20FF), (0x2CEF, 0x2CF1), (0x2D7F, 0x2DFF), (0x302A, 0x309A), (0xA600, 0xABFF),
                (0xFB1E, 0xFB1E), (0xFE00, 0xFE2F), (0x101FD, 0x101FD), (0x102E0, 0x102E0), (0x10376, 0x1037A),
                (0x10A00, 0x11FFF), (0x16AF0, 0x16FFF), (0x1BC9D, 0x1BC9E), (0x1CF00, 0x1CF4F), (0x1D165, 0x1D244),
                (0x1DA00, 0x1DAAF), (0x1E000, 0x1E9FF), (0xE0100, 0xE01EF)]
_ZWJ = "\u200d"
_CANDIDATES: re.Pattern | None = None
_REGIONAL = re.compile("[\U0001f1e6-\U0001f1ff]")
#: After these a character may join (a ZWJ's pictograph, an L jamo's jamo or syllable).
_BEFORE_JOINING = re.compile("[\u200d\u1100-\u115f\ua960-\ua97f]")


def _candidates() -> re.Pattern:
    """Characters that may belong to the cluster of the one before (made on first use): the
    joining ones and the marks of the Basic Multilingual Plane (a class re scans fast) and every
    character beyond it (emoji, their modifiers, regional indicators, tags, the other planes' marks)."""
    global _CANDIDATES
    if _CANDIDATES is None:
        points = [cp for cp in chain.from_iterable(range(a, min(b, 0xFFFF) + 1) for a, b in _MARK_BLOCKS)
                  if unicodedata.category(chr(cp)) in ("Mn", "Me", "Mc")]
        joining = "".join(re.escape(chr(cp)) for cp in points)
        _CANDIDATES = re.compile(f"[{joining}\\u200c\\u200d\\u0e33\\u0eb3\\uff9e\\uff9f\\u1160-\\u11ff\\ud7b0-\\ud7ff"
                                 f"\\U00010000-\\U0010ffff]")
    return _CANDIDATES


def _extends(char: str, spacing: bool = True) -> bool:
    """Whether ``char`` is Extend (GB9; ZWJ has rules of its own) or, with ``spacing``, a
    SpacingMark (GB9a: Mc, Thai and Lao AM)."""
    cp = ord(char)
    category = unicodedata.category(char)
    return (category in ("Mn", "Me") or any(a <= cp <= b for a, b in _EXTEND)
            or (spacing and (category == "Mc" or cp in (0x0E33, 0x0EB3))))


def _pictographic(char: str) -> bool:
    """Extended_Pictographic, nearly (the emoji planes but regional indicators, symbols So of
    U+2190-2BFF, a few more)."""
    cp = ord(char)
    return ((0x1F000 <= cp <= 0x1FFFD and not 0x1F1E6 <= cp <= 0x1F1FF)
            or (0x2190 <= cp <= 0x2BFF and unicodedata.category(char) == "So") or cp in _PICTOGRAPHS)


_PICTOGRAPHS = frozenset((0xA9, 0xAE, 0x203C, 0x2049, 0x2122, 0x2139, 0x3030, 0x303D, 0x3297, 0x3299))


def _hangul(char: str) -> str:
    """The Hangul syllable type of ``char`` (L, V, T, LV, LVT), or ""."""
    cp = ord(char)
    if 0x1100 <= cp <= 0x115F or 0xA960 <= cp <= 0xA97F:
        return "L"
    if 0x1160 <= cp <= 0x11A7 or 0xD7B0 <= cp <= 0xD7C6:
        return "V"
    if 0x11A8 <= cp <= 0x11FF or 0xD7CB <= cp <= 0xD7FB:
        return "T"
    if 0xAC00 <= cp <= 0xD7A3:
        return "LV" if (cp - 0xAC00) % 28 == 0 else "LVT"
    return ""


def joined(text: str, at: int, regional: int | None = None) -> bool:
    """Whether ``text[at]`` belongs to the extended grapheme cluster of ``text[at - 1]`` (UAX #29
    without its Prepend and Indic conjunct rules, GB9b and GB9c; white space ends a cluster).
    ``regional``: how many regional indicators end at ``at - 1`` (counted here if not given)."""
    if at <= 0 or at >= len(text) or text[at - 1].isspace() or text[at - 1] == PAR:
        return False
    char, before = text[at], text[at - 1]
    if 0x1F1E6 <= ord(char) <= 0x1F1FF:  # a flag: pairs of regional indicators (GB12, GB13)
        if regional is None:
            regional = 0
            while regional < at and 0x1F1E6 <= ord(text[at - 1 - regional]) <= 0x1F1FF:
                regional += 1
        return regional % 2 == 1
    if _extends(char) or char == _ZWJ:
        return True
    if before == _ZWJ and _pictographic(char):  # ExtPict Extend* ZWJ × ExtPict (GB11)
        back = at - 2
        while back >= 0 and _extends(text[back], spacing=False):
            back -= 1
        return back >= 0 and _pictographic(text[back])
    kinds = _hangul(before), _hangul(char)
    return kinds in _HANGUL


#: The pairs of Hangul syllable types that do not break (GB6, GB7, GB8).
_HANGUL = ({("L", b) for b in ("L", "V", "LV", "LVT")} | {(a, b) for a in ("LV", "V") for b in ("V", "T")}
           | {("LVT", "T"), ("T", "T")})


#: Sentence ends in the labels' bytes.
_SENTENCE_ENDS = re.compile(b"[%c%c]" % (SENTENCE_END, MWT_SENTENCE_END))
#: The Unicode categories of closing brackets and quotation marks: no gold sentence of the UD
#: treebanks here starts with one, and a model that ends a sentence before ``。”`` or ``.)`` errs.
_CLOSING = ("Pe", "Pf")


def closed_sentences(norm: str, labels: bytes) -> bytes:
    """``labels`` (of the normalised text ``norm``) with every sentence end that a closing bracket
    or quotation mark follows directly (no space between: ``考えます。”教団``, ``done.)``) moved to
    the end of the token that starts with it, and on past any more such tokens."""
    ends = [match.start() for match in _SENTENCE_ENDS.finditer(labels)]
    if not ends:
        return labels
    out = bytearray(labels)
    last = len(out) - 1
    for at in ends:
        while at < last and out[at] in _ENDS_SENTENCE and unicodedata.category(norm[at + 1]) in _CLOSING:
            out[at] = END if out[at] == SENTENCE_END else MWT_END
            at += 1
            while at < last and out[at] == INSIDE and norm[at + 1] not in (" ", PAR):  # to the end of its token
                at += 1
            out[at] = MWT_SENTENCE_END if out[at] in _MULTIWORD else SENTENCE_END
    return bytes(out)


#: Each label with its sentence end taken away, and given.
_NO_SENTENCE_END = bytes.maketrans(bytes([SENTENCE_END, MWT_SENTENCE_END]), bytes([END, MWT_END]))
_SENTENCE_END_OF = {INSIDE: SENTENCE_END, END: SENTENCE_END, SENTENCE_END: SENTENCE_END,
                    MWT_END: MWT_SENTENCE_END, MWT_SENTENCE_END: MWT_SENTENCE_END}


def line_sentences(text: str, labels: bytes, final: bool) -> bytes:
    """``labels`` of ``text`` with one sentence a line (raw text already split into sentences,
    ``--presegmented``): no sentence ends but at the last character before each line break
    that is not white space, where a token and its sentence end (and at the text's last one
    where ``final``: the rest of a text that is not is carried to the next piece)."""
    out = bytearray(labels.translate(_NO_SENTENCE_END))
    ends = [match.start() for match in re.finditer("\n", text)] + ([len(text)] if final else [])
    for stop in ends:
        at = stop - 1
        while at >= 0 and text[at].isspace() and text[at] != "\n":
            at -= 1
        if at >= 0 and text[at] != "\n":
            out[at] = _SENTENCE_END_OF[out[at]]
    return bytes(out)


def whole_clusters(norm: str, labels: bytes | bytearray) -> bytes:
    """``labels`` (of the normalised text ``norm``) with every token end that falls inside an
    extended grapheme cluster moved to the cluster's last character (dropped where the model put
    an end there already): an emoji ZWJ sequence, a flag, a letter and its marks stay one."""
    if norm.isascii():
        return bytes(labels)
    places = [match.start() for match in _candidates().finditer(norm, 1)]
    if _BEFORE_JOINING.search(norm):  # rare: the characters after a ZWJ or an L jamo too
        places = sorted(set(places).union(m.end() for m in _BEFORE_JOINING.finditer(norm) if m.end() < len(norm)))
    out = bytearray(labels)
    flags = _REGIONAL.search(norm) is not None
    run_end, run = -2, 0  # the regional indicators seen in a row: where the run ends, how many
    for at in places:
        if out[at - 1] == INSIDE and not flags:  # the common case: no end to move
            continue
        regional = None
        if flags and 0x1F1E6 <= ord(norm[at]) <= 0x1F1FF:
            regional = run if run_end == at - 1 else 0
            run, run_end = regional + 1, at
        if out[at - 1] != INSIDE and joined(norm, at, regional):
            if out[at] == INSIDE:
                out[at] = out[at - 1]
            out[at - 1] = INSIDE
    return bytes(out)
