"""``tagger tag`` with torch, as plain functions: stream sentences through a model into a writer
(:func:`tag`), and a file or stream in to one out (:func:`tag_file`, what
:meth:`tagger.api.Model.tag_file` runs where the torch-free runtimes do not, :mod:`tagger.engines`).

Memory is bounded by ``chunk_size`` sentences whatever the input length; each chunk is written
and flushed as soon as it is tagged, so a failure later in the input loses nothing already done.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any, Callable, Iterable, Iterator, TextIO

import torch

from tagger import formats
from tagger import progress
from tagger.corpus.batching import chunks_until_error, read_ahead
from tagger.corpus.records import TREE, Sentence
from tagger.errors import TaggerError
from tagger.formats.base import open_output
from tagger.formats.placement import REWRITING_FORMATS, check_output, write_chunk  # noqa: F401 (imported from here too)
from tagger.inference import InputCheck, annotate, multitag_decoder  # noqa: F401 (imported from here too)
from tagger.options import CHUNK_SIZE, MAX_TOKENS, ON_ERROR, OUTPUT_FORMATS, TagRequest  # noqa: F401 (imported from here too)
from tagger.pipeline import split_raw
from tagger.tokenization.stream import (TOKENIZER_FORMATS, raw_sentences, tokenised,  # noqa: F401 (tagger tag's)
                                        write_sentences)


def default_output_format(model: torch.nn.Module, multi: bool = False) -> str:
    """The output format without ``--output-format``: one bracketed tree per line for a
    constituency parser, jsonl when multi-tagging, else CoNLL-U."""
    if TREE in model.output_columns:
        return "trees"
    return "jsonl" if multi else "conllu"


class SkipReport:
    """The ``on_error`` callback of ``formats.read`` for ``--on-error skip``: one line per
    malformed sentence on ``stream`` (``warning: file:line: message (skipped the sentence at
    lines a-b)``), and a count. Holds nothing per sentence, so memory stays flat."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream
        self.count = 0

    def __call__(self, error: TaggerError, first: int, last: int) -> None:
        self.count += 1
        lines = f"line {first}" if first == last else f"lines {first}-{last}"
        stream = self.stream or sys.stderr
        stream.write(f"warning: {error} (skipped the sentence at {lines})\n")
        stream.flush()


def tag(model: torch.nn.Module, sentences: Iterable[Sentence], stream: TextIO, output_format: str = "conllu",
        top_k: int | None = None, beta: float | None = None, chunk_size: int = CHUNK_SIZE, max_tokens: int = MAX_TOKENS,
        on_error: str = "fail", supertag_in: str = "misc",
        check: Callable[[list[Sentence]], None] | None = None) -> dict[str, int]:
    """Tag ``sentences`` and write them to ``stream``; returns counts. A format that cannot show
    the model's output (a tree as tagged text, ...) is refused before any input is read
    (:func:`tagger.formats.placement.check_output`). Reader errors end the run
    after the sentences before them are written. (Skipping malformed sentences is the reader's
    part: ``formats.read(..., on_error=SkipReport())``; a reader's generator cannot go on after
    raising, so errors that reach this function always end the run, whatever ``on_error``.)
    ``check`` sees each chunk before the model does (default :class:`InputCheck`: refuse input
    without a column the model reads)."""
    if on_error not in ON_ERROR:
        raise TaggerError(f"--on-error must be one of {', '.join(ON_ERROR)}")
    if output_format not in OUTPUT_FORMATS:
        raise TaggerError(f"--output-format must be one of {', '.join(OUTPUT_FORMATS)}")
    if output_format == "msuper" and top_k is None and beta is None:
        top_k = 1  # C&C's multi-tagger format: the best tag with its probability
    multi = top_k is not None or beta is not None
    if multi and output_format not in ("jsonl", "msuper"):
        raise TaggerError("--top-k/--beta write several tags per word: use --output-format jsonl or msuper")
    check_output(model.output_columns, output_format, supertag_in)
    decode = multitag_decoder(model, top_k, beta) if multi else None
    counts = {"sentences": 0, "tokens": 0}
    check = check or InputCheck(model)
    for chunk, error in read_ahead(chunks_until_error(sentences, chunk_size, on_error)):
        if chunk:
            check(chunk)
            predictions = annotate(model, chunk, max_tokens, decode)
            write_chunk(chunk, predictions if multi else None, model, stream, output_format, supertag_in)
            for key, number in model.output_counts(predictions).items():  # e.g. trees that needed repair
                counts[key] = counts.get(key, 0) + number
            counts["sentences"] += len(chunk)
            counts["tokens"] += sum(len(s) for s in chunk)
            progress.advance(len(chunk))
        if error is not None:
            raise error
    return counts


def keep_first(sentences: Iterable[Sentence], into: list[Sentence]) -> Iterator[Sentence]:
    """``sentences`` passed through; a copy of the first with words goes into ``into`` (for
    ``--show-attention``, drawn once the stream is tagged)."""
    for sentence in sentences:
        if not into and len(sentence):
            into.append(Sentence(list(sentence.words), dict(sentence.columns), sentence.source, sentence.line))
        yield sentence


def input_stream(paths: tuple[str, ...]) -> Any:
    """The sources to read: the given files, or stdin's bytes."""
    return list(paths) if paths else sys.stdin.buffer


def tag_file(model: torch.nn.Module, meta: dict[str, Any], source: Any, path_out: str | os.PathLike | IO[str] | None,
             request: TagRequest = TagRequest()) -> dict[str, int]:
    """``tagger tag`` by torch: ``model`` (a loaded model, its model file's ``meta``) reads
    ``source`` (what :func:`tagger.formats.read` reads: a path, a list of them, a binary stream)
    and writes ``path_out`` (a path, a text stream; None or ``-``: stdout), as ``request`` says.
    A model whose first stage is a tokenizer reads raw text (on tokenised input its later stages
    run on the input's tokens). Returns the counts (:func:`tag`); notes go to stderr."""
    tokenizer, module = split_raw(model)
    if tokenizer is not None and tokenised(source, request.input_format):
        if module is None:
            raise TaggerError(f"a tokenizer reads raw text, and this input is "
                              f"{request.input_format if request.input_format != 'auto' else 'CoNLL-U'} "
                              f"(give raw text, or --format text)")
        tokenizer = None  # a pipeline on tokenised input: its later stages run on the input's tokens
    output_format = request.format
    if output_format is None:
        output_format = default_output_format(module, request.multi) if module else "conllu"
    draw = None
    if request.show_attention is not None:
        from tagger.plots import attention_drawer

        draw = attention_drawer(model, request.show_attention)  # fails before any output
    skipped = SkipReport() if request.on_error == "skip" else None
    if tokenizer is not None:
        sentences = raw_sentences(tokenizer, source, request.presegmented)
    else:
        sentences = formats.read(source, request.input_format, on_error=skipped, columns=request.columns or None)
    first: list[Sentence] = []
    if draw is not None:
        sentences = keep_first(sentences, first)
    named = path_out is None or isinstance(path_out, (str, os.PathLike))
    stream = open_output(path_out) if named else path_out
    try:
        if module is None:  # a tokenizer alone
            counts = write_sentences(sentences, stream, output_format, request.chunk_size)
        else:
            check = InputCheck(module, request.allow_missing_columns, meta)
            counts = tag(module, sentences, stream, output_format, request.top_k, request.beta, request.chunk_size,
                         on_error=request.on_error, supertag_in=request.supertag_in, check=check)
        _notes(counts, model, first, draw, request.show_attention)
        return counts
    finally:
        if skipped is not None and skipped.count:
            print(f"warning: {skipped.count} malformed sentence{'s' * (skipped.count != 1)} skipped",
                  file=sys.stderr, flush=True)
        if named and stream is not sys.stdout:
            stream.close()


def _notes(counts: dict[str, int], model: torch.nn.Module, first: list[Sentence], draw: Any,
           picture: str | os.PathLike | None) -> None:
    """After a run of :func:`tag_file`: a note on stderr of the trees that needed repair, and the
    attention picture of the first sentence drawn (``draw``; a warning when there was none)."""
    if counts.get("repaired"):
        print(f"note: {counts['repaired']} of {counts['sentences']} outputs were not well-formed trees and "
              f"were repaired (docs/constituency.md says how)", file=sys.stderr, flush=True)
    if draw is not None:
        if first:
            draw(model.attention(first[0]), picture)
        else:
            print("warning: --show-attention: no sentence to draw, no picture written", file=sys.stderr, flush=True)
