"""Length-bucketed batches, and bounded chunks of a sentence stream."""

from __future__ import annotations

import itertools
import random
from typing import Iterable, Iterator, Sequence, TypeVar

T = TypeVar("T")


def bucket_batches(lengths: Sequence[int], batch_size: int, rng: random.Random | None = None) -> list[list[int]]:
    """Indices grouped into batches of ``batch_size`` sentences of similar length.

    With ``rng`` the order is shuffled (lengths sorted with random tie-breaks inside buckets,
    then batch order shuffled); without, batches follow length order (for evaluation).
    """
    order = list(range(len(lengths)))
    if rng is not None:
        rng.shuffle(order)
        order.sort(key=lambda i: lengths[i] + rng.random() * 2)  # light noise keeps batches varied
    else:
        order.sort(key=lambda i: lengths[i])
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    if rng is not None:
        rng.shuffle(batches)
    return batches


def token_batches(lengths: Sequence[int], max_tokens: int) -> list[list[int]]:
    """Indices sorted by length, grouped so that batch size × longest length stays ≤ max_tokens."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches, current = [], []
    for i in order:
        if current and (len(current) + 1) * lengths[i] > max_tokens:
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of at most ``size`` items: how a stream is read with bounded memory."""
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk
