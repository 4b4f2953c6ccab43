"""Length-bucketed batches, and bounded chunks of a sentence stream."""

from __future__ import annotations

import gc
import itertools
import queue
import random
import threading
from contextlib import contextmanager
from typing import Iterable, Iterator, Sequence, TypeVar

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError

T = TypeVar("T")


def bucket_batches(lengths: Sequence[int], batch_size: int, rng: random.Random | None = None,
                   max_tokens: int = 0) -> list[list[int]]:
    """Indices grouped into batches of ``batch_size`` sentences of similar length, or (with
    ``max_tokens``) of as many as keep sentences × the longest length ≤ ``max_tokens`` (one at
    least): batches by tokens, as a transformer's memory asks.

    With ``rng`` the order is shuffled (lengths sorted with random tie-breaks inside buckets,
    then batch order shuffled); without, batches follow length order (for evaluation).
    """
    order = list(range(len(lengths)))
    if rng is not None:
        rng.shuffle(order)
        order.sort(key=lambda i: lengths[i] + rng.random() * 2)  # light noise keeps batches varied
    else:
        order.sort(key=lambda i: lengths[i])
    if max_tokens > 0:
        batches: list[list[int]] = [[]]
        longest = 0  # of the batch being filled
        for i in order:
            longest = max(longest, lengths[i])
            if batches[-1] and (len(batches[-1]) + 1) * longest > max_tokens:
                batches.append([])
                longest = lengths[i]
            batches[-1].append(i)
        batches = [batch for batch in batches if batch]
    else:
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


def chunks_until_error(sentences: Iterable[Sentence], size: int, on_error: str = "fail") -> Iterator[tuple[list[Sentence], TaggerError | None]]:
    """Chunks of at most ``size`` sentences. A reader error ends the stream after yielding the
    sentences read before it, with the error, so they are still tagged and written."""
    chunk: list[Sentence] = []
    iterator = iter(sentences)
    while True:
        try:
            sentence = next(iterator)
        except StopIteration:
            break
        except TaggerError as error:
            yield chunk, error
            return
        chunk.append(sentence)
        if len(chunk) >= size:
            yield chunk, None
            chunk = []
    if chunk:
        yield chunk, None


def chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of at most ``size`` items: how a stream is read with bounded memory."""
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


_END = object()


def read_ahead(items: Iterable[T], depth: int = 1) -> Iterator[T]:
    """The items of ``items``, produced by a background thread at most ``depth`` ahead of the
    consumer: reading and parsing the next chunk of a stream overlaps with tagging this one
    (torch releases the GIL while it computes). An exception raised by ``items`` is raised here,
    in order, after the items before it; a consumer that stops early stops the thread."""
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry: tuple) -> bool:
        while not stop.is_set():
            try:
                ready.put(entry, timeout=0.1)
                return True
            except queue.Full:
                pass
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
            put((_END, None))
        except BaseException as error:  # noqa: BLE001 - handed to the consumer
            put((_END, error))

    threading.Thread(target=produce, name="read-ahead", daemon=True).start()
    try:
        while True:
            item, error = ready.get()
            if item is _END:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()


#: The first generation's threshold of Python's cyclic garbage collector while the torch-free
#: runtimes tag or tokenize a stream (the default is 700 new objects).
FEWER_COLLECTIONS = 50_000


@contextmanager
def fewer_collections(threshold: int = FEWER_COLLECTIONS) -> Iterator[None]:
    """Python's cyclic garbage collector less often, the thresholds restored after: a chunk read
    ahead is some hundred thousand small objects that live until it is written (none of them in
    cycles), and at the default thresholds they were collected 380 times over EWT train, older
    generations too: 0.35 s of 4 (issue 33; two threads, AVX2 path, AMX Xeon), the other threads
    waiting for the GIL meanwhile; 9% of a tokenizer's run over 1.3 MB of Japanese."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], threshold), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """numpy's BLAS (OpenBLAS in numpy's wheels) in one thread, its setting restored after
    (threadpoolctl). The runtimes run their batches in a pool of their own; the few products
    numpy computes there (a chunk's window gates of its new words) woke BLAS's own threads,
    which then spun, waiting for more work, about a tenth of a second each time: 1.0-1.5 s of a
    core over EWT train, taken from the pool. The command line sets OPENBLAS_NUM_THREADS before
    numpy is imported (:func:`tagger.engines.blas_threads`); this covers a program that imported
    numpy first (issue 33, session 27, AMX Xeon as AVX2, ``tagger.load(...).tag_file`` of EWT train
    on two threads after ``import numpy``: 7% less wall time, paired runs)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield

