"""``tagger tag`` by the torch-free runtimes: one model file, several (``--model TOK --model POS
--model DEP``) or a pipeline model file (the shipped English model), when every stage is one a
runtime computes: a tokenizer first (:mod:`.tokenizer`), then skip-LSTM taggers
(:mod:`.skip_lstm`) and transition parsers (:mod:`.parser`).

The taggers and parsers computed here read the words (a parser whose encoder also reads the POS
tags, ``bilstm-tags``, reads those of the taggers before it), so the stages of a chunk start at
once, their batches in the same thread pool (a tag-reading parser once the taggers are done), and
each fills its own columns (:class:`Chain`). :func:`tag_file` is the whole command: raw text
through the tokenizer (tokenised input skips it), the first chunk read before anything is
written, then chunk by chunk; where :func:`kernel_for` says torch must multiply, the torch model
(the stages after the tokenizer) tags everything instead, the same bytes out.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from itertools import chain
from typing import Any, Callable, Iterator, Sequence, TextIO

from tagger import archive, formats
from tagger.runtime import skip_lstm, tokenizer
from tagger.modules.fused import _fastscan  # the C steps; without them, numpy throughout
from tagger.runtime.kernels import Kernel
from tagger.runtime.skip_lstm import Tagging, kernel_for, usable_cores
from tagger.corpus.batching import chunks_until_error, fewer_collections, one_blas_thread, read_ahead
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats.base import open_output
from tagger.formats.placement import check_output, write_chunk
from tagger.options import CHUNK_SIZE
from tagger import progress

#: The name of a pipeline model file (:data:`tagger.model_file.PIPELINE`, not imported: torch).
PIPELINE = "pipeline"
#: The name of the parser family (:data:`tagger.runtime.parser.NAME`).
PARSER = "transition_parser"


def _parser() -> Any:
    """:mod:`tagger.runtime.parser`, imported only where a stage is a parser: a tokenizer or a
    tagger alone starts without the parser's modules."""
    from tagger.runtime import parser

    return parser


def _stream() -> Any:
    """:mod:`tagger.tokenization.stream`, imported only where a tokenizer runs (6 ms of a tagger's
    first line)."""
    from tagger.tokenization import stream

    return stream


def headers(paths: Sequence[str | os.PathLike], peek: bool = True) -> list[dict[str, Any]] | None:
    """The plain data of every stage of the model files at ``paths`` (tensors unread with
    ``peek``), in the order they run (a pipeline file's stages in its order); None where a file
    is not one the reader takes (the torch path words the error)."""
    stages: list[dict[str, Any]] = []
    for path in paths:
        header = archive.read(path, peek=peek)
        if header is None:
            return None
        stages += header.get("stages") or [] if header.get("name") == PIPELINE else [header]
    return stages


def computes(stage: dict[str, Any], before: Sequence[dict[str, Any]] = ()) -> bool:
    """Whether a runtime computes a stage after the tokenizer: a tagger or a parser of the fast
    path; a parser that reads POS tags only where the stages ``before`` it tag them (tags given
    in the input, and their errors, are the torch path's)."""
    if skip_lstm.supported(stage):
        return True
    if stage.get("name") != PARSER or not _parser().runs(stage):
        return False
    configs = [skip_lstm.fast_config(earlier) for earlier in before]
    tagged = {column for config in configs if config is not None for column in config.column.split(",")}
    return set(_parser().input_columns(stage)) <= tagged


def runs(stages: Sequence[dict[str, Any]] | None) -> bool:
    """Whether the runtimes compute these stages (:func:`headers`): a tokenizer, or a tokenizer
    (or none) then taggers and parsers :func:`computes` takes."""
    if not stages:
        return False
    rest = stages[1:] if tokenizer.runs(stages[0]) else stages
    return all(computes(stage, rest[:i]) for i, stage in enumerate(rest))


def widest(stages: Sequence[dict[str, Any]]) -> int | None:
    """The most cells a layer of any stage after the tokenizer has (None: unknown)."""
    sizes = [(stage.get("config") or {}).get(key) for stage in stages for key in ("hidden", "encoder_hidden")
             if stage.get("name") != "tokenizer"]
    sizes = [size for size in sizes if isinstance(size, int)]
    return max(sizes) if sizes else None


@dataclass
class Started:
    """A chunk under way in a :class:`Chain`: each stage's :class:`Tagging`, and the labels of
    those already finished (the stages before one that reads their columns)."""

    taggings: list[Tagging]
    done: dict[int, list[dict[str, list]]]


class Chain:
    """Taggers and parsers of the runtimes applied to the same words, each filling its own
    columns (``output_columns``: theirs, in order), with :class:`NumpyTagger`'s start/finish.
    Stages that read words alone start at once; one that reads columns (``input_columns``: a
    parser reading POS tags) starts when the stages before it are finished, given their labels."""

    def __init__(self, models: Sequence[Any]):
        self.models = list(models)
        columns = [column for model in self.models for column in model.output_columns]
        self.output_columns = list(dict.fromkeys(columns))  # each once; a later stage's labels win, as torch's

    def start(self, sentences: Sequence[Sequence[str]], pool: Pool | None = None) -> Started:
        started = Started([], {})
        for i, model in enumerate(self.models):
            if not model.input_columns:
                started.taggings.append(model.start(sentences, pool))
                continue
            for j in range(i):
                if j not in started.done:
                    started.done[j] = self.models[j].finish(started.taggings[j])
            labels = self._merged(started, range(i), len(sentences))
            started.taggings.append(model.start(sentences, pool, labels))
        return started

    def finish(self, started: Started) -> list[dict[str, list]]:
        for j, (model, tagging) in enumerate(zip(self.models, started.taggings)):
            if j not in started.done:
                started.done[j] = model.finish(tagging)
        return self._merged(started, range(len(self.models)), len(started.taggings[0].sentences))

    @staticmethod
    def _merged(started: Started, stages: range, count: int) -> list[dict[str, list]]:
        out: list[dict[str, list]] = [{} for _ in range(count)]
        for j in stages:
            for labels, more in zip(out, started.done[j]):
                labels.update(more)
        return out


def load(stages: Sequence[dict[str, Any]], kernel: Kernel) -> Chain | None:
    """The stages after the tokenizer (:func:`headers`, tensors read) as a :class:`Chain`, their products by
    ``kernel``; None where a stage is not computed here after all."""
    models = [skip_lstm.from_archive(stage, kernel) if skip_lstm.supported(stage) else _parser().from_archive(stage, kernel)
              for stage in stages[1 if tokenizer.runs(stages[0]) else 0 :]]
    return None if any(model is None for model in models) else Chain(models)


def tag_file(model_paths: Sequence[str], inputs: Sequence[str], output: str | None, input_format: str = "auto",
             columns: str | None = None, output_format: str | None = None, supertag_in: str = "misc",
             chunk_size: int = CHUNK_SIZE, device: str = "cpu", threads: int | None = None, precision: str = "fp32",
             switch_tokens: int = skip_lstm.SWITCH_TOKENS, load_torch: Callable[..., Any] | None = None,
             presegmented: bool = False) -> dict[str, int] | None:
    """``tagger tag --model M...`` with the default options: ``inputs`` (paths; none: stdin) to
    ``output`` (a path; None: stdout), what :meth:`tagger.api.Model.tag_file` writes, byte for
    byte (in fp32). An input of at most ``switch_tokens`` tokens and one chunk (``chunk_size``
    sentences) is tagged here, and so is one of any length, chunk by chunk, where
    :func:`~tagger.runtime.skip_lstm.kernel_for` gives a kernel (the C steps built); the products
    by numpy, a step at a time, for an input of at most
    :data:`~tagger.runtime.skip_lstm.NUMPY_TOKENS` tokens (the first line at once) or where no
    kernel is built; otherwise everything goes (the sentences read ahead, then the rest,
    streaming) to the torch model of the stages after the tokenizer (``device``, ``threads``,
    ``precision``: :func:`tagger.api.load`'s), and a tokenizer's text past
    :data:`~tagger.runtime.tokenizer.SWITCH_CHARS` to the torch tokenizer. None, having read
    nothing, when the stages are not those :func:`runs` takes (or a tokenizer alone: its own
    runtime's). Returns the counts ``{"sentences", "tokens"}``. ``load_torch(paths, device,
    threads, precision)`` gives the torch model of all the files (default: loaded here,
    :func:`tagger.inference.load_module`; :meth:`tagger.api.Model.tag_file` passes its own)."""
    stages = headers(model_paths)
    if not runs(stages) or len(stages) < 2 and tokenizer.runs(stages[0]):
        return None
    source: Any = list(inputs) if inputs else sys.stdin.buffer
    plain = headers(model_paths, peek=False)
    if plain is None:
        return None
    if tokenizer.runs(plain[0]) and not _stream().tokenised(source, input_format):  # tokenised input skips it
        fast = tokenizer.from_archive(plain[0])
        if fast is None:
            return None
        torch_tokenizer = lambda: _torch(load_torch, model_paths, "cpu", threads)[0]  # noqa: E731
        sentences = _stream().raw_sentences(tokenizer.SwitchingLabeller(fast, torch_tokenizer), source,
                                                presegmented)
    else:
        sentences = iter(formats.read(source, input_format, columns=columns or None))
    ahead, failed, whole = _first_chunk(sentences, chunk_size, switch_tokens)
    small = whole and sum(map(len, ahead)) <= skip_lstm.NUMPY_TOKENS
    kernel = kernel_for(precision, small, widest(stages))
    if kernel is None and whole:  # no kernels built: numpy a step at a time rather than importing torch
        kernel = kernel_for(precision, True, widest(stages))
    loaded = load(plain, kernel) if kernel is not None else None
    if kernel is None or loaded is None:  # the torch path, on everything
        from tagger.tagging import tag

        _, full = _torch(load_torch, model_paths, device, threads, precision)
        with _output(output) as stream:
            return tag(full, chain(ahead, _raising(failed), sentences), stream, output_format or "conllu",
                       chunk_size=chunk_size, supertag_in=supertag_in)
    return _tag_here(loaded, chain(ahead, _raising(failed), sentences), output, output_format or "conllu",
                     supertag_in, chunk_size, threads, one_blas=bool(kernel), pooled=not small)


def _torch(load_torch: Callable[..., Any] | None, paths: Sequence[str], device: str, threads: int | None,
           precision: str = "fp32") -> tuple[Any, Any]:
    """The torch model of ``paths`` (:func:`_torch_models` by default)
    as ``(its tokenizer or None, the rest)`` (:func:`tagger.pipeline.split_raw`)."""
    from tagger.pipeline import split_raw

    return split_raw((load_torch or _torch_models)(list(paths), device, threads, precision))


def _first_chunk(sentences: Iterator[Sentence], chunk_size: int, switch_tokens: int
                 ) -> tuple[list[Sentence], TaggerError | None, bool]:
    """The first chunk, read before anything is written (as the torch path does): its sentences,
    the reader's error if one came (the sentences before it are tagged and written, then it is
    raised), and whether that was the whole input, of at most ``switch_tokens`` tokens."""
    ahead: list[Sentence] = []
    failed, tokens, ended = None, 0, False
    try:
        while not ended and tokens <= switch_tokens and len(ahead) < chunk_size:
            sentence = next(sentences, None)
            ended = sentence is None
            if sentence is not None:
                ahead.append(sentence)
                tokens += len(sentence)
    except TaggerError as error:
        failed, ended = error, True
    return ahead, failed, ended and tokens <= switch_tokens


def _tag_here(model: Chain, sentences: Iterator[Sentence], output: str | None, output_format: str,
              supertag_in: str, chunk_size: int, threads: int | None, one_blas: bool = False,
              pooled: bool = True) -> dict[str, int]:
    """:func:`tag_file` on this path: ``sentences`` tagged by ``model`` chunk by chunk, written to
    ``output``; the counts ``{"sentences", "tokens"}``. ``one_blas``: numpy's BLAS in one thread
    meanwhile (:func:`one_blas_thread`; the kernels' path, not a small input's first line);
    ``pooled``: batches in a pool of threads (not for a small input's: this thread tags it)."""
    counts = {"sentences": 0, "tokens": 0}
    # --threads batches at once in the pool (without it, one a core, as torch's path runs them);
    # reading (a thread of its own), the word rows of the next chunk and writing the last go on
    # beside them in this thread
    pool = None
    if _fastscan is not None and pooled:
        from tagger.runtime.pool import Pool

        pool = Pool(max(threads or usable_cores(), 1))
    try:
        with _output(output) as stream, fewer_collections(), one_blas_thread() if one_blas else nullcontext():
            check_output(model.output_columns, output_format, supertag_in)

            def finish(chunk: list[Sentence], tagging: Started) -> None:
                for sentence, labels in zip(chunk, model.finish(tagging)):
                    sentence.columns.update(labels)
                write_chunk(chunk, None, model, stream, output_format, supertag_in)
                counts["sentences"] += len(chunk)
                counts["tokens"] += sum(len(s) for s in chunk)
                progress.advance(len(chunk))

            # the next chunk is read and parsed in a thread while this one is tagged (as on the torch
            # path), and a chunk's batches run in the pool while this thread writes the one before and
            # begins the next
            pending = None
            for chunk, error in read_ahead(chunks_until_error(sentences, chunk_size)):
                if chunk:
                    tagging = model.start([s.words for s in chunk], pool)
                    if pending is not None:
                        finish(*pending)
                    pending = (chunk, tagging)
                if error is not None:
                    if pending is not None:
                        finish(*pending)
                    raise error
            if pending is not None:
                finish(*pending)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return counts


def _torch_models(paths: list[str], device: str, threads: int | None, precision: str = "fp32") -> Any:
    """The torch model of the files at ``paths`` (importing torch)."""
    from tagger.inference import load_module

    return load_module(paths, device, threads, precision)[0]


@contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    """The output stream (:func:`open_output`: None is stdout), closed after unless stdout."""
    stream = open_output(path)
    try:
        yield stream
    finally:
        if stream is not sys.stdout:
            stream.close()


def _raising(error: TaggerError | None) -> Iterator[Sentence]:
    """Nothing, then ``error`` raised (if any): a reader's error after the sentences before it."""
    if error is not None:
        raise error
    yield from ()
