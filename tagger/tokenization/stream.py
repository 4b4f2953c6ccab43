"""Raw text in bounded pieces, tokenised piece by piece: memory stays flat on any input, a
1 GB file without a blank line included.

:func:`read_pieces` decodes a byte stream :data:`PIECE` characters at a time and cuts it into
pieces (at white space where it can), whose concatenation is the input. :func:`tokenize` labels
each piece (with the text carried over from the one before in front of it), emits the sentences
that end well before the piece does, and carries the last one over: it is labelled again with
what follows it. Where what would be carried is longer than :data:`MAX_CARRY` characters (a
long sentence, whether or not the piece holds others before it), all of it is emitted but the
last token, so what is carried stays bounded and each character is labelled at most
``1 + MAX_CARRY / (PIECE / 2)`` times: time is linear in the input. A sentence also ends at its
:data:`~tagger.tokenization.segment.MAX_TOKENS`\\ th token, and no token ends inside a grapheme
cluster (:func:`~tagger.tokenization.segment.whole_clusters`).
"""

from __future__ import annotations

import codecs
import itertools
import json
import os
import sys
import unicodedata
from typing import Any, BinaryIO, Callable, Iterable, Iterator, TextIO

from tagger.corpus.batching import chunks_until_error
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats.base import source_name
from tagger.tokenization.labels import normalise
from tagger.tokenization.multiword import Expander
from tagger.tokenization.joined import join_known
from tagger.tokenization.segment import (MAX_TOKENS, Span, block, closed_sentences, joined, line_sentences, segment,
                                         whole_clusters)

#: Characters decoded and labelled at a time (a thousand windows: batches large enough that the
#: recurrent scan's fixed cost per step is spread).
PIECE = 1 << 18
#: A sentence ending fewer than this many characters before the end of a piece is carried over
#: (its end was decided without the text after it).
MARGIN = 64
#: The most characters carried over from one piece to the next (see the module text).
MAX_CARRY = 1 << 16

#: Labels of a normalised text, one per character.
Labeller = Callable[[str], "bytes | list[int]"]


def read_pieces(stream: BinaryIO, name: str, size: int = PIECE) -> Iterator[str]:
    """The text of a UTF-8 byte ``stream`` in pieces of at most ``size`` characters (a leading
    BOM dropped), cut after the last white space of a piece's second half where there is one;
    a :class:`TaggerError` naming the line of the first byte that is not UTF-8."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    buffer, line, first, column = "", 1, True, 0
    while True:
        data = stream.read(size)
        final = not data
        try:
            buffer += decoder.decode(data, final)
        except UnicodeDecodeError as e:
            yield from _before_bad_line(buffer, e, size, drop_bom=first)
            raise _not_utf8(e, buffer, name, line, column) from None
        if first and buffer:
            first = False
            if buffer.startswith("\ufeff"):
                buffer = buffer[1:]
        while len(buffer) > size or (final and buffer):
            cut = _cut(buffer, size)
            piece, buffer = buffer[:cut], buffer[cut:]
            line += piece.count("\n")
            at = piece.rfind("\n")  # the bytes of the line the next piece goes on with
            column = len(piece[at + 1 :].encode("utf-8")) + (column if at < 0 else 0)
            yield piece
        if final:
            return


def _before_bad_line(buffer: str, e: UnicodeDecodeError, size: int, drop_bom: bool = False) -> Iterator[str]:
    """The pieces of the text before a byte that is not UTF-8 (``buffer``, then the bytes decoded
    before it): its sentences are tokenised and written before the error (:func:`tokenize`);
    ``drop_bom``: nothing was read before, so a leading BOM is dropped, as :func:`read_pieces` drops it."""
    text = buffer + e.object[: e.start].decode("utf-8", "replace")  # (valid up to e.start: nothing replaced)
    if drop_bom and text.startswith("\ufeff"):
        text = text[1:]
    while text:
        cut = _cut(text, size)
        yield text[:cut]
        text = text[cut:]


def _not_utf8(e: UnicodeDecodeError, buffer: str, name: str, line: int, column: int) -> TaggerError:
    """The error for a byte that is not UTF-8, as the readers of tokens word it: its line (``line``
    the first of ``buffer``, whose first ``column`` bytes were in the pieces before), its byte and
    its column."""
    before = e.object[: e.start]
    where = line + buffer.count("\n") + before.count(b"\n")
    if b"\n" in before:
        column = e.start - before.rfind(b"\n") - 1
    else:
        at = buffer.rfind("\n")
        column = e.start + len(buffer[at + 1 :].encode("utf-8")) + (column if at < 0 else 0)
    return TaggerError(f"not UTF-8 text (byte {e.object[e.start]:#04x} at column {column + 1})", name, where)


def _cut(buffer: str, size: int) -> int:
    """Where to end the next piece of ``buffer``: all of it if short enough, else after the last
    white space between ``size // 2`` and ``size``, else at ``size`` (moved back to the start of
    a grapheme cluster there, up to :data:`CLUSTER` characters)."""
    if len(buffer) <= size:
        return len(buffer)
    window = buffer[size // 2 : size]
    at = max(window.rfind(" "), window.rfind("\n"))
    if at >= 0:
        return size // 2 + at + 1
    cut = size
    while cut > size - CLUSTER and joined(buffer, cut):
        cut -= 1
    return cut if not joined(buffer, cut) else size


#: The longest grapheme cluster a piece's end is moved back over (a longer one is cut).
CLUSTER = 64


def tokenize(pieces: Iterable[str], labeller: Labeller, expander: Expander, source: str = "<stdin>",
             sent_ids: Iterator[int] | None = None, margin: int = MARGIN, max_carry: int = MAX_CARRY,
             max_tokens: int = MAX_TOKENS, spaced_tokens: bool = False, joined: frozenset[str] = frozenset(),
             presegmented: bool = False) -> Iterator[Sentence]:
    """The CoNLL-U sentences (:func:`tagger.tokenization.segment.block`) of one document given as
    consecutive ``pieces``; ``labeller`` labels a normalised text. ``sent_ids`` numbers the
    sentences (default 1, 2, ...; pass one counter to number several documents on); a sentence
    has at most ``max_tokens`` tokens; ``spaced_tokens``: tokens may hold a space
    (:func:`~tagger.tokenization.segment.segment`); ``joined``: words with a space inside that two
    tokens are joined into (:func:`tagger.tokenization.joined.join_known`); ``presegmented``: one
    sentence a line (:func:`~tagger.tokenization.segment.line_sentences`), the model's sentence
    ends not taken."""
    sent_ids = sent_ids if sent_ids is not None else itertools.count(1)
    pending, first, new_par, line = "", True, True, 1
    iterator = iter(pieces)
    piece = next(iterator, None)
    failed = None
    while piece is not None:
        try:
            following = next(iterator, None)
        except TaggerError as error:  # bad bytes: this piece is the last, and its sentences but the one
            failed, following = error, None  # the bad bytes cut short are written before the error
        final = following is None
        text = pending + piece
        norm = normalise(text)
        if final and norm and not norm[-1].isspace():  # the text ends in a token: label it as if a space
            labels = labeller(norm + " ")[: len(norm)]  # followed, as in training ("Yes." → Yes .)
        else:
            labels = labeller(norm)
        labels = closed_sentences(norm, whole_clusters(norm, bytes(labels)))
        if presegmented:
            labels = line_sentences(text, labels, final)
        spans = segment(norm, join_known(norm, labels, joined, text), new_par, max_tokens, spaced_tokens, text)
        emitted, carried = spans, len(text)
        if failed is not None and spans and "\n" not in text[spans[-1].stop:]:  # the bad bytes' line cut it short
            emitted, carried = spans[:-1], spans[-1].start
        elif not final:
            emitted, carried = _split(spans, len(text), margin, max_carry)
            if not emitted and not spans:  # only white space so far
                pending, piece = text, following
                continue
        at, at_line = 0, line
        for index, span in enumerate(emitted):
            at_line += text.count("\n", at, span.start)
            at = span.start
            next_start = emitted[index + 1].start if index + 1 < len(emitted) else carried
            yield block(text, span, next_start, next(sent_ids), expander, before=text[: span.start] if first else "",
                        newdoc=first, source=source, line=at_line)
            first = False
        if carried < len(text):
            new_par = _starts_paragraph(spans, carried)
        line = at_line + text.count("\n", at, carried)
        pending, piece = text[carried:], following
    if failed is not None:
        raise failed


def _split(spans: list[Span], size: int, margin: int, max_carry: int) -> tuple[list[Span], int]:
    """The sentences to emit now, and where the text carried over starts: the last sentence is
    carried, with those that end within ``margin`` of the end; where that is longer than
    ``max_carry``, everything is emitted but the last token (carried if it is not that long
    itself), the last sentence cut before it."""
    if not spans:
        return [], size
    keep = len(spans) - 1
    while keep > 0 and spans[keep - 1].stop > size - margin:
        keep -= 1
    if size - spans[keep].start <= max_carry:
        return spans[:keep], spans[keep].start
    last = spans[-1]
    start = last.tokens[-1][0]
    if size - start > max_carry:
        return spans, size
    if len(last.tokens) == 1:
        return spans[:-1], start
    return spans[:-1] + [Span(last.tokens[:-1], last.new_paragraph)], start


def _starts_paragraph(spans: list[Span], carried: int) -> bool:
    """Whether the text carried over (from ``carried``) starts a paragraph: the flag of the
    sentence that starts there (False inside a sentence cut by :func:`_split`)."""
    return next((span.new_paragraph for span in spans if span.start == carried), False)


#: Output formats of a tokenizer alone (with later models, theirs).
TOKENIZER_FORMATS = ("conllu", "jsonl")


def tokenised(source: Any, input_format: str) -> bool:
    """Whether input is already tokenised rather than raw text: a ``--format`` other than auto or
    text; with auto, a file whose extension names a format (``.conllu``), else a file or stream
    whose start is CoNLL-U (:func:`_conllu_head`)."""
    if input_format not in ("auto", "text"):
        return True
    if input_format == "text":
        return False
    first = source[0] if isinstance(source, list) and source else source
    if isinstance(first, (str, os.PathLike)):
        from tagger.formats import BY_EXTENSION

        if os.path.splitext(os.fspath(first))[1].lower() in BY_EXTENSION:
            return True
        try:
            with open(first, "rb") as stream:
                head = stream.read(HEAD_BYTES + 1)
        except OSError:
            return False  # the reader says what is wrong
    else:
        peek = getattr(getattr(first, "buffer", first), "peek", None)
        if peek is None:
            return False
        head = peek(HEAD_BYTES + 1)
    return _conllu_head(head[:HEAD_BYTES])


#: What :func:`tokenised` reads of an input's start (at most: a stream's peek may give less).
HEAD_BYTES = 1 << 16


def _conllu_head(head: bytes) -> bool:
    """Whether the start of an input is CoNLL-U: its first line that is not a ``#`` comment has
    ten tab-separated fields, or every line read is a comment (a long comment header: raw text
    does not begin with kilobytes of ``#`` lines; one that held only such lines would be refused
    by the CoNLL-U reader, not tokenised wrongly)."""
    lines = [line for line in head.decode("utf-8", "ignore").splitlines() if line.strip()]
    words = next((line for line in lines if not line.startswith("#")), None)
    return bool(lines) if words is None else words.count("\t") == 9


#: A warning when more than this share of the first characters of the input (white space aside)
#: are ones the tokenizer never saw in training: text of another script than it learnt.
UNSEEN_SHARE = 0.5
#: ... of at least this many characters.
UNSEEN_SAMPLE = 20


def unseen_share(text: str, known: frozenset[str]) -> tuple[float, int]:
    """The share of the characters of ``text`` (white space aside, normalised as the tokenizer
    reads them) that are not in ``known``, and how many there are."""
    chars = [char for char in normalise(text[:PIECE]) if not char.isspace()]
    return sum(char not in known for char in chars) / max(len(chars), 1), len(chars)


def _checked(pieces: Iterator[str], known: frozenset[str], name: str, told: list[bool]) -> Iterator[str]:
    """``pieces``, the first looked at once (``told``: whether a warning was given already): a
    one-line warning on stderr where most of its characters are unseen (:func:`unseen_share`),
    not a silent wrong tokenisation of text in a script the model never learnt."""
    for piece in pieces:
        if not told[0]:
            told[0] = True
            share, count = unseen_share(piece, known)
            if not unicodedata.is_normalized("NFC", piece) and unseen_share(unicodedata.normalize("NFC", piece), known)[0] < share:
                print(f"warning: {name}: the text is in decomposed Unicode (NFD: letters and their accents as separate "
                      "characters), which this tokenizer did not learn: its tokens will be poor; compose it first "
                      "(NFC), e.g. python3 -c 'import sys, unicodedata; sys.stdout.write(unicodedata.normalize(\"NFC\", "
                      "sys.stdin.read()))'", file=sys.stderr, flush=True)
            elif share > UNSEEN_SHARE and count >= UNSEEN_SAMPLE:
                print(f"warning: {name}: {share:.0%} of its first {count} characters are ones this tokenizer never saw "
                      "in training (another language or script than it learnt): its tokens, and what later models "
                      "make of them, will be poor", file=sys.stderr, flush=True)
        yield piece


def raw_sentences(tokenizer: Any, source: Any, presegmented: bool = False) -> Iterator[Sentence]:
    """The sentences a tokenizer makes of raw text (:func:`tagger.tokenization.stream.tokenize`,
    streaming): ``source`` is a path, a list of paths (each a document of its own) or a binary
    stream; sentences are numbered on across them (``presegmented``: one a line). A warning where
    the text is mostly characters the tokenizer never saw (:func:`_checked`)."""
    ids, told = itertools.count(1), [False]
    for item in (source if isinstance(source, (list, tuple)) else [source]):
        name = source_name(item)
        if isinstance(item, (str, os.PathLike)):
            if os.path.isdir(item):
                raise TaggerError("a tokenizer reads text files, not a folder", name)
            try:
                stream = open(item, "rb")
            except OSError as e:
                raise TaggerError(f"cannot read: {e.strerror}", name) from None
            with stream:
                yield from tokenize(_checked(read_pieces(stream, name), tokenizer.known, name, told), tokenizer.label, tokenizer.expander, name, ids,
                                    spaced_tokens=tokenizer.spaced_tokens, joined=tokenizer.joined, presegmented=presegmented)
        else:
            stream = getattr(item, "buffer", item)
            yield from tokenize(_checked(read_pieces(stream, name), tokenizer.known, name, told), tokenizer.label, tokenizer.expander, name, ids,
                                spaced_tokens=tokenizer.spaced_tokens, joined=tokenizer.joined, presegmented=presegmented)


def write_sentences(sentences: Iterable[Sentence], stream: TextIO, output_format: str = "conllu",
                    chunk_size: int = 1000) -> dict[str, int]:
    """Write a tokenizer's sentences as they are (no later model), ``chunk_size`` at a time:
    CoNLL-U, or jsonl records ``{"text", "words"}``; returns counts."""
    if output_format not in TOKENIZER_FORMATS:
        raise TaggerError(f"a tokenizer alone writes {' or '.join(TOKENIZER_FORMATS)} (--output-format)"
                          + (" (trees come of a constituency parser after it)" if output_format in ("trees", "mrg") else
                             f"; chain a tagger after it for {output_format}"))
    counts = {"sentences": 0, "tokens": 0}
    for chunk, error in chunks_until_error(sentences, chunk_size):
        if output_format == "conllu":  # the blocks as made (what formats.write(..., columns=[]) writes)
            stream.write("".join("\n".join(sentence.raw["lines"]) + "\n\n" for sentence in chunk))
        else:
            for sentence in chunk:
                text = next((line[len("# text = "):] for line in sentence.raw["lines"] if line.startswith("# text = ")), "")
                stream.write(json.dumps({"text": text, "words": sentence.words}, ensure_ascii=False) + "\n")
        stream.flush()
        counts["sentences"] += len(chunk)
        counts["tokens"] += sum(len(s) for s in chunk)
        if error is not None:
            raise error
    return counts

