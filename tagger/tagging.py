"""``tagger tag`` as a plain function: stream sentences through a model into a writer.

Memory is bounded by ``chunk_size`` sentences whatever the input length; each chunk is written
and flushed as soon as it is tagged, so a failure later in the input loses nothing already done.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterable, Iterator, TextIO

import torch

from tagger.cli import progress
from tagger.corpus.batching import chunks_until_error, read_ahead
from tagger.corpus.records import TREE, Sentence
from tagger.errors import TaggerError
from tagger.formats.placement import REWRITING_FORMATS, check_output, write_chunk  # noqa: F401 (imported from here too)
from tagger.inference import InputCheck, predict
from tagger.options import CHUNK_SIZE, MAX_TOKENS, ON_ERROR, OUTPUT_FORMATS  # noqa: F401 (imported from here too)
from tagger.pipeline import Pipeline
from tagger.tokenization.stream import TOKENIZER_FORMATS, raw_sentences, write_sentences  # noqa: F401 (tagger tag's)


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


def multitag_decoder(model: torch.nn.Module, top_k: int | None, beta: float | None) -> Callable[[Any], list]:
    """A decode function giving, per token, the tags with p ≥ beta·p_best (at most top_k), with p."""
    if not model.gives_distribution:
        raise TaggerError(f"--top-k/--beta need a tagger; {model.name} gives no tag distribution")
    itos = model.distribution_labels

    def decode(batch: Any) -> list:
        probs = model.distribution(batch)  # [B, T, C]
        k = min(top_k or probs.shape[-1], probs.shape[-1])
        values, indices = probs.topk(k, dim=-1)
        if beta is not None:
            keep = values >= beta * values[..., :1]
        else:
            keep = torch.ones_like(values, dtype=torch.bool)
        values, indices, keep = values.tolist(), indices.tolist(), keep.tolist()
        out = []
        for b, n in enumerate(batch.lengths.tolist()):
            out.append([[(itos[i], round(p, 6)) for i, p, ok in zip(indices[b][t], values[b][t], keep[b][t]) if ok] for t in range(n)])
        return out

    return decode


def annotate(model: torch.nn.Module, chunk: list[Sentence], max_tokens: int = MAX_TOKENS,
             decode: Callable[[Any], list] | None = None) -> list:
    """Predict ``chunk`` (batched, in input order) and write the predictions into its sentences'
    columns; with a multi-tag ``decode`` (:func:`multitag_decoder`) each word gets its best tag
    in the model's first column (the one multi-tagging reads), and a model of several columns
    fills the others as without it (a second pass over the chunk). Returns the predictions
    (with ``decode``, its multi-tags). A :class:`tagger.pipeline.Pipeline` runs its stages in
    turn (each reads what the ones before it wrote) and returns each stage's predictions."""
    if isinstance(model, Pipeline):
        return model.annotate_chunk(chunk, max_tokens)
    predictions = predict(model, chunk, max_tokens, decode)
    if decode is None:
        for sentence, prediction in zip(chunk, predictions):
            model.annotate(sentence, prediction)
        return predictions
    best = [[t[0][0] if t else "_" for t in prediction] for prediction in predictions]
    first, *others = model.output_columns
    if not others:
        for sentence, tags in zip(chunk, best):
            model.annotate(sentence, tags)
        return predictions
    for sentence, prediction, tags in zip(chunk, predict(model, chunk, max_tokens), best):
        model.annotate(sentence, prediction)
        sentence.columns[first] = tags
    return predictions


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
