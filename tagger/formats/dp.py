"""Malt-TAB dependency files (``.dp``, as in NLTK's dependency treebank): one word per line,
``word TAB POS TAB head`` and optionally ``TAB deprel``; a blank line after each sentence.

``head`` is 1-based, 0 for the root, ``_`` if unknown. Without a fourth column ``deprel`` is
``_`` (unlabelled). The WSJ conversions write a slash in a word as the Penn Treebank does,
``1\\/2``: words are read with ``\\/`` as ``/`` and written with ``/`` as ``\\/``, as the other PTB
formats do, but for a file that spells a word with a bare ``/`` (a treebank that does not
escape it), whose words are written back as they were (see :mod:`tagger.formats.ptb`).
"""

from __future__ import annotations

from typing import Iterable, Iterator, TextIO

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats.base import OnError, Source, blocks, each_sentence, iter_lines, parse_head, source_name
from tagger.formats.ptb import read_words, spelled_words

NAME = "dp"
EXTENSIONS = (".dp",)


def read(source: Source, *, on_error: OnError | None = None) -> Iterator[Sentence]:
    """Yield the sentences of a Malt-TAB file (columns ``xpos``, ``head``, ``deprel``); with
    ``on_error``, malformed sentences are reported to it and skipped."""
    name = source_name(source)

    def sentence(block: list[tuple[int, str]]) -> Sentence:
        words, tags, heads, labels = [], [], [], []
        for number, text in block:
            values = text.split("\t")
            if len(values) not in (3, 4) or "" in values:
                raise TaggerError(
                    f"expected 3 or 4 non-empty tab-separated columns (word, POS, head[, deprel]), "
                    f"found {len(values)}", name, number)
            words.append(values[0])
            tags.append(values[1])
            heads.append(parse_head(values[2], name, number))
            labels.append(values[3] if len(values) == 4 else "_")
        for (number, _), head in zip(block, heads):
            if head > len(words):
                raise TaggerError(f"head {head} out of range 0..{len(words)}", name, number)
        columns = {"xpos": tags, "head": heads, "deprel": labels}
        words, spelling = read_words(words)
        return Sentence(words, columns, source=name, line=block[0][0], raw=spelling)

    yield from each_sentence(blocks(iter_lines(source, name, lenient=on_error is not None)), sentence, on_error)



def write(sentences: Iterable[Sentence], stream: TextIO) -> None:
    """Write word (slashes escaped: :func:`tagger.formats.ptb.spelled_words`), ``xpos`` (``_`` if
    absent) and head, plus ``deprel`` if the sentence has one."""
    for sentence in sentences:
        n = len(sentence.words)
        tags = sentence.columns.get("xpos", ["_"] * n)
        heads = sentence.columns.get("head", [-1] * n)
        labels = sentence.columns.get("deprel") if sentence.has("deprel") else None
        for i, word in enumerate(spelled_words(sentence)):
            values = [word, str(tags[i]), "_" if heads[i] is None or heads[i] < 0 else str(heads[i])]
            if labels is not None:
                values.append(str(labels[i]))
            stream.write("\t".join(values) + "\n")
        stream.write("\n")
