"""CoNLL-X: ten columns ID FORM LEMMA CPOSTAG POSTAG FEATS HEAD DEPREL PHEAD PDEPREL.

The same reader and writer as CoNLL-U (:mod:`tagger.formats.conll`); CPOSTAG is read as
``upos`` and POSTAG as ``xpos``; PHEAD and PDEPREL are kept in ``raw`` only.

``.conllx`` files are CoNLL-X; ``.conll`` is written for both dialects, so a ``.conll`` file
whose first lines show CoNLL-U (``#`` comments, a multiword-token range ``3-4`` or empty node
``8.1``, DEPS ``4:nsubj`` or MISC ``SpaceAfter=No``) is read as CoNLL-U, any other as CoNLL-X
(:func:`tagger.formats.guess_format`).
"""

from __future__ import annotations

from typing import Iterable, Iterator, Sequence, TextIO

from tagger.corpus.records import Sentence
from tagger.formats import conll
from tagger.formats.base import OnError, Source

NAME = "conllx"
EXTENSIONS = (".conllx", ".conll")
#: Of :data:`EXTENSIONS`, those CoNLL-U files are written with too: the file's first lines decide.
SHARED_EXTENSIONS = (".conll",)


def read(source: Source, *, on_error: OnError | None = None) -> Iterator[Sentence]:
    """Yield the sentences of a CoNLL-X file (``on_error``: see :func:`tagger.formats.conll.read`)."""
    return conll.read(source, dialect="conllx", on_error=on_error)


def write(sentences: Iterable[Sentence], stream: TextIO, *, columns: Sequence[str] | None = None) -> None:
    """Write ``sentences`` as CoNLL-X (``columns``: see :func:`tagger.formats.conll.write`)."""
    conll.write(sentences, stream, dialect="conllx", columns=columns)
