"""Pretrained word vectors as a tensor, for a model's ``load_embeddings``: any source that
:func:`tagger.formats.vectors.read` takes (GloVe / word2vec / fastText files, gzipped or binary,
or an installed package by name)."""

from __future__ import annotations

from typing import Iterable

import torch

from tagger.corpus.features import normalize
from tagger.formats import vectors as vector_files


#: Rows a model may keep beyond its training words (a frozen table's, for words unseen in
#: training): the source's first, its most frequent words.
EXTRA_ROWS = 100_000


def read_vectors(path: str, vocabulary: Iterable[str] | None = None) -> tuple[list[str], torch.Tensor]:
    """Words and a [N, dim] tensor of the rows of ``path`` (a file or a package name), in its
    order: every row, or only those a model of ``vocabulary`` may look up (the word itself,
    lowercased, or lowercased with digits as 9, as the families match them) and the first
    :data:`EXTRA_ROWS`, so that memory holds those rows alone. A malformed line is an error
    naming the file and the line."""
    keep = None
    if vocabulary is not None:
        known = set(vocabulary)
        lowered, normalized = {word.lower() for word in known}, {normalize(word) for word in known}
        keep = lambda word: word in known or word.lower() in lowered or normalize(word) in normalized  # noqa: E731
    found = vector_files.read(path, keep=keep, first=EXTRA_ROWS if keep is not None else 0)
    return found.words, torch.from_numpy(found.table)
