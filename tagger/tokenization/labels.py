"""Character labels, the model's view of text, and labelled text from CoNLL-U sentences.

Every character of the text gets one label (:data:`LABELS`): ``0`` inside a token or white
space, ``1`` the last character of a token, ``2`` the last of a token that ends a sentence,
``3`` the last of a multiword token, ``4`` the last of a multiword token that ends a sentence.

The model reads the text :func:`normalise`\\ d: every white-space character becomes a space,
except those of a gap holding a blank line (a paragraph break), which become :data:`PAR`; the
result has the text's length, so labels line up with the original characters.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError

#: The labels, by index.
INSIDE, END, SENTENCE_END, MWT_END, MWT_SENTENCE_END = range(5)
LABELS = ("0", "1", "2", "3", "4")
#: A character of a paragraph break in :func:`normalise`'s output.
PAR = "\x00"
#: What the text between paragraphs is when CoNLL-U sentences are joined into training text.
PARAGRAPH_BREAK = "\n\n"

#: Every character ``str.isspace`` calls white space.
_SPACES = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
           "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
#: White space other than spaces and newlines (a regular expression finds these rare ones 7×
#: faster than ``str.translate`` maps every character).
_OTHER_SPACES = re.compile("[" + "".join(re.escape(c) for c in _SPACES if c not in " \n") + "]")
_BLANK_LINE = re.compile(r" *\n *\n[ \n]*")


def normalise(text: str) -> str:
    """``text`` as the model reads it, character for character: white space as spaces, the
    characters of a gap holding a blank line as :data:`PAR` (and a NUL, our paragraph mark, in
    the text as U+0001)."""
    out = _OTHER_SPACES.sub(" ", text)
    if PAR in out:
        out = out.replace(PAR, "\x01")
    if "\n" not in out:
        return out
    out = _BLANK_LINE.sub(lambda m: PAR * len(m.group()), out)
    return out.replace("\n", " ")


def is_space(char: str) -> bool:
    """Whether a character of :func:`normalise`'s output is white space (or a paragraph break)."""
    return char == " " or char == PAR


# ---------------------------------------------------------------------------------- character codes
#: Unicode categories, after padding and the paragraph break: what the model reads of a character
#: besides its own embedding.
CATEGORIES = ("<pad>", "<par>", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps",
              "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn")
#: Scripts whose letters (and marks, and modifier letters) get categories of their own with
#: ``scripts`` (``Lo CJK``, ``Lo HIRAGANA``, ``Mn DEVANAGARI``, ...): in a text without spaces a
#: change of script is where a word often ends (kanji then kana), which ``Lo`` alone does not
#: show. The script is the first word of the character's Unicode name, up to a hyphen
#: (``HALFWIDTH`` and ``FULLWIDTH`` skipped); scripts not listed keep the plain category.
SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "GEORGIAN", "HEBREW", "ARABIC", "SYRIAC", "THAANA", "DEVANAGARI",
           "BENGALI", "GURMUKHI", "GUJARATI", "ORIYA", "TAMIL", "TELUGU", "KANNADA", "MALAYALAM", "SINHALA", "THAI",
           "LAO", "TIBETAN", "MYANMAR", "KHMER", "MONGOLIAN", "ETHIOPIC", "CHEROKEE", "HANGUL", "HIRAGANA", "KATAKANA",
           "CJK", "BOPOMOFO", "YI")
#: The categories that :data:`SCRIPTS` qualify.
SCRIPT_CATEGORIES = ("Lu", "Ll", "Lm", "Lo", "Mn", "Mc")
#: ``category script`` for each qualified category and script, after :data:`CATEGORIES`.
CATEGORIES_WITH_SCRIPTS = CATEGORIES + tuple(f"{c} {s}" for c in SCRIPT_CATEGORIES for s in SCRIPTS)
#: The modulus of a character's code (:func:`char_code`), whichever categories a model reads.
N_CATEGORIES = len(CATEGORIES_WITH_SCRIPTS)
_CATEGORY = {name: i for i, name in enumerate(CATEGORIES_WITH_SCRIPTS)}
_SKIPPED = ("HALFWIDTH", "FULLWIDTH")


def category_of(char: str, scripts: bool = False) -> int:
    """The category id of a character of normalised text: its Unicode category's, with
    ``scripts`` qualified by its script where :data:`SCRIPTS` lists it."""
    if char == PAR:
        return _CATEGORY["<par>"]
    category = unicodedata.category(char)
    if scripts and category in SCRIPT_CATEGORIES:
        words = unicodedata.name(char, "").split()
        script = words[1] if len(words) > 1 and words[0] in _SKIPPED else words[0] if words else ""
        script = script.split("-")[0]  # KATAKANA-HIRAGANA PROLONGED SOUND MARK
        qualified = _CATEGORY.get(f"{category} {script}")
        if qualified is not None:
            return qualified
    return _CATEGORY.get(category, 0)


def char_code(char: str, ids: dict[str, int], unknown: int, scripts: bool = False) -> int:
    """A character of normalised text as one number, ``id × N_CATEGORIES + category``: its row in
    the character vocabulary ``ids`` (``unknown`` if absent) and its category (:func:`category_of`)."""
    return ids.get(char, unknown) * N_CATEGORIES + category_of(char, scripts)


#: The tokenizer vocabulary that says its training tokens held spaces (``["yes"]``; absent: none did).
SPACED = "spaced_tokens"


def spaced_tokens(vocabs: dict[str, list[str]]) -> bool:
    """Whether a tokenizer's training tokens held spaces (Vietnamese ``thành phố``), so that a
    token it does not end before a space goes on after it (:func:`tagger.tokenization.segment.segment`)."""
    return bool(vocabs.get(SPACED))


# ---------------------------------------------------------------------------------- CoNLL-U tokens
@dataclass
class Token:
    """A surface token of a CoNLL-U sentence: its form, whether a space follows it, and the
    words of a multiword token (empty for a plain token)."""

    form: str
    space_after: bool = True
    words: list[str] = field(default_factory=list)


@dataclass
class TextSentence:
    """A CoNLL-U sentence as a tokeniser learns it: its tokens, its ``# text`` (None when
    missing), and whether it starts a paragraph (``# newpar`` or ``# newdoc``)."""

    tokens: list[Token]
    text: str | None
    new_paragraph: bool
    source: str = ""
    line: int = 0


def _misc_no_space(misc: str) -> bool:
    return "SpaceAfter=No" in misc.split("|")


def text_sentence(sentence: Sentence) -> TextSentence:
    """The tokens of a sentence read from CoNLL-U (its original lines, ``raw["lines"]``):
    multiword ranges are one token whose words are those it spans; empty nodes are left out."""
    raw = sentence.raw if isinstance(sentence.raw, dict) else {}
    lines = raw.get("lines")
    if raw.get("format") != "conllu" or lines is None:
        raise TaggerError("the tokenize task learns from CoNLL-U (with # text and SpaceAfter=No)", sentence.source,
                          sentence.line)
    tokens: list[Token] = []
    text, new_paragraph = None, False
    until = 0  # the last word of the multiword token being read
    for line in lines:
        if line.startswith("#"):
            key = line[1:].strip()
            if key.startswith("text") and key[4:].lstrip().startswith("="):
                text = key[4:].lstrip()[1:].strip()
            elif key.startswith(("newpar", "newdoc")):
                new_paragraph = True
            continue
        fields = line.split("\t")
        wid = fields[0]
        if "-" in wid:
            first, last = wid.split("-", 1)
            tokens.append(Token(fields[1], not _misc_no_space(fields[9]), []))
            until = int(last)
        elif "." in wid:
            continue
        elif until and int(wid) <= until:
            tokens[-1].words.append(fields[1])
        else:
            tokens.append(Token(fields[1], not _misc_no_space(fields[9])))
    return TextSentence(tokens, text, new_paragraph, sentence.source, sentence.line)


#: Punctuation written against the token before it (full stops, commas, closing brackets and
#: quotes) and against the token after it (opening ones): these characters and the categories
#: Pe, Pf (closing) and Ps, Pi (opening). ASCII quotes open and close, so are neither. The full
#: stops, commas, colons and question marks of other scripts close too: Arabic (، ؛ ؟ ۔), Devanagari
#: (। ॥), Greek (;), Armenian (։ ՝), Ethiopic (። ፣ ፤), Myanmar (။ ၊), Khmer (។ ៕), Tibetan (། ༎),
#: Mongolian (᠂ ᠃) and CJK's ideographic and full-width ones.
_CLOSING_CHARS = frozenset(".,:;!?…%)]}»”’" "،؛؟۔।॥;։՝።፣፤፥፦፧။၊។៕།༎᠂᠃、。，．：；！？｡､")
_OPENING_CHARS = frozenset("([{«“‘" "¿¡")


def _all(form: str, chars: frozenset[str], categories: tuple[str, str]) -> bool:
    return all(char in chars or unicodedata.category(char) in categories for char in form)


def tightened(sentences: Iterable[TextSentence], share: float) -> Iterator[TextSentence]:
    """``sentences`` with ``share`` of the single spaces between a word and a closing punctuation
    token after it (``Nội .``), or an opening one and the word after it (``( 1``), left out,
    every ``1/share``-th such space in order (deterministic): a treebank whose text spaces its
    punctuation (Vietnamese VTB) then also teaches the tokenizer text written without those
    spaces, as most is. A treebank that writes most such places without a space already teaches
    both, and is given back as it is; so are sentences without such a space."""
    sentences = list(sentences)
    if share <= 0 or not _spaces_punctuation(sentences):
        yield from sentences
        return
    seen = 0.0
    for sentence in sentences:
        text = _aligned(sentence)
        if text is None:
            yield sentence
            continue
        gaps, at, cut = [], 0, False
        tokens = sentence.tokens
        for index, token in enumerate(tokens):
            start = text.index(token.form, at)
            gap = text[at:start]
            if index and gap == " " and _tight_pair(tokens[index - 1].form, token.form):
                seen += share
                if seen >= 1:
                    seen -= 1
                    gap, cut = "", True
            gaps.append(gap)
            at = start + len(token.form)
        if not cut:
            yield sentence
            continue
        spaced = [bool(gap) for gap in gaps[1:]] + [tokens[-1].space_after]
        yield TextSentence([Token(t.form, space, t.words) for t, space in zip(tokens, spaced)],
                           "".join(gap + t.form for gap, t in zip(gaps, tokens)) + text[at:],
                           sentence.new_paragraph, sentence.source, sentence.line)


def _spaces_punctuation(sentences: list[TextSentence]) -> bool:
    """Whether the text of ``sentences`` puts a space at most of the places :func:`tightened` may
    take one out (between tokens, by ``SpaceAfter``)."""
    spaced = tight = 0
    for sentence in sentences:
        for before, after in zip(sentence.tokens, sentence.tokens[1:]):
            if _tight_pair(before.form, after.form):
                spaced, tight = spaced + before.space_after, tight + (not before.space_after)
    return spaced > tight


def _tight_pair(before: str, after: str) -> bool:
    """Whether the space between tokens ``before`` and ``after`` is one most text leaves out: before
    closing punctuation (``Nội .``, ``) .``), after opening punctuation (``( 1``)."""
    closing, opening = _all(after, _CLOSING_CHARS, ("Pe", "Pf")), _all(before, _OPENING_CHARS, ("Ps", "Pi"))
    return closing != opening


@dataclass
class LabelledText:
    """Text with one label per character (:data:`LABELS` indices), and at the last character of
    each multiword token its surface form and words (``expansions``: position -> (form, words))."""

    text: str
    labels: list[int]
    expansions: dict[int, tuple[str, list[str]]] = field(default_factory=dict)
    rebuilt: int = 0  # sentences whose ``# text`` was missing or did not match their tokens


def _aligned(sentence: TextSentence) -> str | None:
    """The sentence's text with its tokens at their places: ``# text`` if the tokens' forms
    are found in it in order, separated only by white space; None otherwise."""
    text = sentence.text
    if text is None:
        return None
    at = 0
    for token in sentence.tokens:
        while at < len(text) and text[at].isspace():
            at += 1
        if not text.startswith(token.form, at):
            return None
        at += len(token.form)
    return text if not text[at:].strip() else None


def labelled_text(sentences: Iterable[TextSentence]) -> LabelledText:
    """The sentences joined into one text as a tokeniser sees running text: sentences of a
    paragraph by a space (none after a last token with ``SpaceAfter=No``), paragraphs by a blank
    line; each sentence's ``# text`` where its tokens are found in it, else its tokens joined
    as ``SpaceAfter`` says (counted in ``rebuilt``). Labels as the module text says."""
    parts: list[str] = []
    labels: list[int] = []
    expansions: dict[int, tuple[str, list[str]]] = {}
    size, rebuilt, first, previous_space = 0, 0, True, True

    def add(piece: str, label_of_last: int = INSIDE) -> None:
        nonlocal size
        parts.append(piece)
        labels.extend([INSIDE] * len(piece))
        size += len(piece)
        if label_of_last != INSIDE and piece:
            labels[-1] = label_of_last

    for sentence in sentences:
        if not sentence.tokens:
            continue
        if not first:
            if sentence.new_paragraph:
                add(PARAGRAPH_BREAK)
            elif previous_space:
                add(" ")
        first = False
        text = _aligned(sentence)
        if text is None:
            rebuilt += 1
            text = "".join(t.form + (" " if t.space_after else "") for t in sentence.tokens).rstrip(" ")
        at = 0
        for index, token in enumerate(sentence.tokens):
            start = text.index(token.form, at)
            if start > at:
                add(text[at:start])
            last = index == len(sentence.tokens) - 1
            mwt = len(token.words) > 1
            label = (MWT_SENTENCE_END if mwt else SENTENCE_END) if last else (MWT_END if mwt else END)
            add(token.form, label)
            if mwt:
                expansions[size - 1] = (token.form, list(token.words))
            at = start + len(token.form)
        previous_space = sentence.tokens[-1].space_after
    return LabelledText("".join(parts), labels, expansions, rebuilt)


# ---------------------------------------------------------------------------------- spacing in MISC
_ESCAPES = {" ": "\\s", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\\": "\\\\", "|": "\\p"}
_UNESCAPES = {"s": " ", "t": "\t", "n": "\n", "r": "\r", "\\": "\\", "p": "|"}


def escape_spaces(spaces: str) -> str:
    """White space as UDPipe writes it in ``SpacesAfter=``/``SpacesBefore=``: ``\\s``, ``\\t``,
    ``\\n``, ``\\r``; other characters as ``\\uXXXX``."""
    return "".join(_ESCAPES.get(c) or (c if c.isprintable() and not c.isspace() else f"\\u{ord(c):04X}")
                   for c in spaces)


def unescape_spaces(value: str) -> str:
    """The inverse of :func:`escape_spaces`."""
    out, i = [], 0
    while i < len(value):
        c = value[i]
        if c == "\\" and i + 1 < len(value):
            nxt = value[i + 1]
            if nxt == "u" and i + 6 <= len(value):
                out.append(chr(int(value[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_UNESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def spacing_after(misc: str) -> str:
    """What follows a token, from its MISC: ``SpacesAfter=`` (unescaped), else nothing with
    ``SpaceAfter=No``, else one space."""
    for item in misc.split("|"):
        if item.startswith("SpacesAfter="):
            return unescape_spaces(item[len("SpacesAfter="):])
    return "" if _misc_no_space(misc) else " "


def rebuild_text(blocks: Iterable[Sequence[str]]) -> str:
    """The text a tokeniser read, from the CoNLL-U blocks it wrote (each a list of lines):
    ``SpacesBefore`` of the first token, then every token's form and what follows it
    (:func:`spacing_after`). Words inside a multiword token are skipped."""
    out: list[str] = []
    for lines in blocks:
        until = 0
        for line in lines:
            if line.startswith("#") or not line:
                continue
            fields = line.split("\t")
            wid = fields[0]
            if "-" in wid:
                until = int(wid.split("-")[1])
            elif "." in wid or (until and int(wid) <= until):
                continue
            for item in fields[9].split("|"):
                if item.startswith("SpacesBefore="):
                    out.append(unescape_spaces(item[len("SpacesBefore="):]))
            out.append(fields[1] + spacing_after(fields[9]))
    return "".join(out)


def conllu_blocks(lines: Iterable[str]) -> Iterator[list[str]]:
    """The blank-line separated blocks of CoNLL-U ``lines`` (without line ends)."""
    block: list[str] = []
    for line in lines:
        line = line.rstrip("\n")
        if line:
            block.append(line)
        elif block:
            yield block
            block = []
    if block:
        yield block
