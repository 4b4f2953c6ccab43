"""Applying a model: batched prediction in input order, over lists or bounded chunks of a stream."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Sequence

import torch

from tagger.corpus.batching import chunks, token_batches
from tagger.corpus.records import Sentence


@torch.inference_mode()
def predict(model: torch.nn.Module, sentences: Sequence[Sentence], max_tokens: int = 4096,
            decode: Callable[[Any], list] | None = None) -> list:
    """``model.decode`` (or ``decode``) for every sentence, batched by length, in input order."""
    device = next(model.parameters()).device
    decode = decode or model.decode
    results: list = [None] * len(sentences)
    nonempty = [i for i, s in enumerate(sentences) if len(s)]
    for i in range(len(sentences)):
        if not len(sentences[i]):
            results[i] = []
    for batch_ids in token_batches([len(sentences[i]) for i in nonempty], max_tokens):
        ids = [nonempty[j] for j in batch_ids]
        batch = model.collate([sentences[i] for i in ids], with_gold=False).to(device)
        for i, result in zip(ids, decode(batch)):
            results[i] = result
    return results


def predict_stream(model: torch.nn.Module, sentences: Iterable[Sentence], chunk_size: int = 2000,
                   max_tokens: int = 4096, decode: Callable[[Any], list] | None = None) -> Iterator[tuple[Sentence, Any]]:
    """(sentence, prediction) pairs in input order, holding at most ``chunk_size`` sentences at once."""
    for chunk in chunks(sentences, chunk_size):
        yield from zip(chunk, predict(model, chunk, max_tokens, decode))
