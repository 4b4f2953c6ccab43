"""Pretrained word vectors in the GloVe / word2vec text format."""

from __future__ import annotations

import torch

from tagger.errors import TaggerError
from tagger.formats.base import iter_lines


def read_vectors(path: str) -> tuple[list[str], torch.Tensor]:
    """Words and a [N, dim] tensor from a text file: ``word v1 v2 ...`` per line.

    A word2vec header line (``count dim``) is skipped; a line of another dimension, or a
    value that is not a number, is an error naming the line.
    """
    words: list[str] = []
    rows: list[list[float]] = []
    dim = None
    for number, line in iter_lines(path):
        parts = line.rstrip().split(" ")
        if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
            continue  # word2vec header
        if len(parts) < 2:
            if not line.strip():
                continue
            raise TaggerError("expected a word and its vector", path, number)
        if dim is None:
            dim = len(parts) - 1
        elif len(parts) - 1 != dim:
            raise TaggerError(f"vector of {len(parts) - 1} dimensions, the file's first has {dim}", path, number)
        try:
            rows.append([float(v) for v in parts[1:]])
        except ValueError:
            raise TaggerError("vector value is not a number", path, number) from None
        words.append(parts[0])
    if not rows:
        raise TaggerError("empty embeddings file", path)
    return words, torch.tensor(rows)
