"""The threads a chunk's batches run in. A module of its own: ``concurrent.futures`` (and the
``logging`` it imports) costs 6 ms, which a first line of a few words, tagged in one thread, does
without (:func:`tagger.runtime.pipeline.tag_file`)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor


class Pool(ThreadPoolExecutor):
    """The threads a chunk's batches run in, and how many there are: with more than one, the first
    layer's per-word products are shared out among them too
    (:meth:`tagger.runtime.skip_lstm.NumpyTagger.first_products`)."""

    def __init__(self, threads: int):
        super().__init__(threads)
        self.threads = threads
