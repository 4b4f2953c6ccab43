"""Applying a model with torch: the models of model files loaded for it (:func:`load_module`),
batched prediction in input order, the predictions written into the sentences (:func:`annotate`,
a :class:`~tagger.pipeline.Pipeline` stage by stage), and the check of what a model reads.

Below :mod:`tagger.tagging` (streams in and out) and the torch-free runtimes, which load their
torch fallback here; above :mod:`tagger.pipeline` and the models."""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator, Sequence, TextIO, TypeVar

import torch

from tagger.corpus.batching import token_batches
from tagger.corpus.lemmas import LEMMA
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.options import MAX_TOKENS, in_worker_process
from tagger.pipeline import Pipeline, chain

#: A sentence at least this long that has only ``_`` in a column the model reads is taken as
#: untagged there; shorter ones may be gold sentences with nothing to say (every EWT sentence
#: without FEATS has at most 4 words: URLs, "Hi back !").
UNTAGGED_LENGTH = 5

T = TypeVar("T")
R = TypeVar("R")


def set_threads(threads: int | None) -> int:
    """Set torch's CPU threads (process-wide): ``threads`` if given, else 1 in a worker process
    (:func:`~tagger.options.in_worker_process`), else torch's own default is left. Returns the
    number in use."""
    if threads:
        torch.set_num_threads(threads)
    elif in_worker_process():
        torch.set_num_threads(1)
    return torch.get_num_threads()


def load_module(paths: Sequence[str | os.PathLike], device: str = "cpu", threads: int | None = None,
                precision: str = "auto", beam: int | None = None,
                constrained: bool | None = None) -> tuple[torch.nn.Module, dict[str, Any]]:
    """The torch model of the files at ``paths`` (several: chained, :func:`tagger.pipeline.chain`)
    in eval mode on ``device``, its products at ``precision`` (converted in place) and decoding
    set (``beam``, ``constrained``), torch's threads set (:func:`set_threads`); and the model
    file's ``meta`` (several files: the last one's, with every file's under ``stages``)."""
    from tagger import model_file
    from tagger.devices import resolve_device
    from tagger.modules.precision import apply

    set_threads(threads)
    if not paths:
        raise TaggerError("no model file given")
    loaded = [model_file.load(p, resolve_device(device)) for p in paths]
    module = chain([stage for stage, _ in loaded])
    apply(module, precision, in_place=True)
    module.set_decoding(beam, constrained)
    meta = loaded[-1][1] if len(loaded) == 1 else {"stages": [m for _, m in loaded], **loaded[-1][1]}
    return module, meta


@torch.inference_mode()
def predict(model: torch.nn.Module, sentences: Sequence[Sentence], max_tokens: int = 4096,
            decode: Callable[[Any], list] | None = None) -> list:
    """``model.decode`` (or ``decode``) for every sentence, batched by length, in input order.

    On the CPU, a model whose forward pass is thread-safe (``batches_in_threads``) runs as many
    batches at once as torch has threads, each batch on one thread (:func:`in_threads`): a time
    step's small products and gate functions gain little from several threads per operation.
    Every batch is computed as it is alone, so the output is the same with any thread count."""
    device = next(model.parameters()).device
    decode = decode or model.decode
    results: list = [None] * len(sentences)
    nonempty = [i for i, s in enumerate(sentences) if len(s)]
    for i in range(len(sentences)):
        if not len(sentences[i]):
            results[i] = []
    batches = [[nonempty[j] for j in batch_ids] for batch_ids in token_batches([len(sentences[i]) for i in nonempty], max_tokens)]

    def run(ids: list[int]) -> list:
        with torch.inference_mode():  # per thread
            return decode(model.collate([sentences[i] for i in ids], with_gold=False).to(device))

    workers = torch.get_num_threads() if device.type == "cpu" and model.batches_in_threads else 1
    for ids, decoded in zip(batches, in_threads(run, batches, workers)):
        for i, result in zip(ids, decoded):
            results[i] = result
    return results


def multitag_decoder(model: torch.nn.Module, top_k: int | None, beta: float | None) -> Callable[[Any], list]:
    """A decode function giving, per token, the tags with p ≥ beta·p_best (at most top_k), with p."""
    if not model.gives_distribution:
        raise TaggerError(f"--top-k/--beta need a tagger; {model.name} gives no tag distribution")
    if beta is not None and not 0 <= beta <= 1:  # (nan too)
        raise TaggerError(f"--beta (beta) must be between 0 and 1, not {beta}")
    if top_k is not None and top_k < 1:
        raise TaggerError(f"--top-k (top_k) must be at least 1, not {top_k}")
    if model.output_columns[0] == LEMMA:  # its labels are edit rules, not tags
        raise TaggerError("--top-k/--beta list the tags of a tagger's first column, and this model's first column is "
                          "lemma: train it with the lemma after a tag column (--column upos,lemma)")
    itos = model.distribution_labels

    def decode(batch: Any) -> list:
        probs = model.distribution(batch)  # [B, T, C]
        if top_k is not None and top_k < probs.shape[-1]:
            values, indices = probs.topk(top_k, dim=-1)  # [B, T, k], best first
        else:  # every label that passes beta: the kept ones alone are sorted and listed (a few of 1,000s)
            values, indices = probs, None
        keep = values > 0  # never a label the model cannot give (padding, RARE, what a tag dictionary bans)
        if beta is not None:
            keep &= values >= beta * values.amax(dim=-1, keepdim=True)
        lengths = batch.lengths.to(keep.device)
        keep &= (torch.arange(keep.shape[1], device=keep.device)[None, :] < lengths[:, None])[..., None]
        b, t, i = keep.nonzero(as_tuple=True)  # row-major: by sentence, then token
        p = values[b, t, i]
        best_first = torch.argsort(-p, stable=True)
        order = best_first[torch.argsort((b * keep.shape[1] + t)[best_first], stable=True)]  # by token, best first
        labels = (indices[b, t, i] if indices is not None else i)[order].tolist()
        b, t, p = b[order].tolist(), t[order].tolist(), p[order].tolist()
        out: list = [[[] for _ in range(n)] for n in lengths.tolist()]
        for sentence, token, label, prob in zip(b, t, labels, p):
            out[sentence][token].append((itos[label], round(prob, 6)))
        return out

    return decode


def annotate(model: torch.nn.Module, chunk: list[Sentence], max_tokens: int = MAX_TOKENS,
             decode: Callable[[Any], list] | None = None) -> list:
    """Predict ``chunk`` (batched, in input order) and write the predictions into its sentences'
    columns; with a multi-tag ``decode`` (:func:`multitag_decoder`) each word gets its best tag
    in the model's first column (the one multi-tagging reads), and a model of several columns
    fills the others as without it (a second pass over the chunk). Returns the predictions
    (with ``decode``, its multi-tags). A :class:`tagger.pipeline.Pipeline` runs its stages in
    turn (each reads what the ones before it wrote; a tokenizer first has nothing to do on
    sentences already made and is passed over, ``[]``) and returns each stage's predictions."""
    if isinstance(model, Pipeline):
        return [[] if stage.reads_raw_text else annotate(stage, chunk, max_tokens) for stage in model.stages]
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


def in_threads(function: Callable[[T], R], items: Sequence[T], workers: int) -> Iterator[R]:
    """``function`` of each item, in order; with ``workers`` > 1 (and more than one item) in that
    many threads at once, torch running each operation on one thread meanwhile (its thread count
    is put back afterwards). An error of one item is raised here, in its turn."""
    if workers <= 1 or len(items) <= 1:
        yield from map(function, items)
        return
    threads = torch.get_num_threads()
    pool = ThreadPoolExecutor(min(workers, len(items)), initializer=torch.set_num_threads, initargs=(1,))
    try:
        yield from pool.map(function, items)
    finally:  # an error (or Ctrl-C) here: the items not started are not run
        pool.shutdown(wait=True, cancel_futures=True)
        torch.set_num_threads(threads)


#: The fewest values of a column in the first chunk that :meth:`InputCheck.other_values` judges.
OTHER_VALUES_MIN = 20


class InputCheck:
    """Refuses input that lacks a column the model reads (``model.input_columns``: a parser's
    UPOS, FEATS), and warns once per column on ``stream`` (default stderr) when some sentences
    lack it, rather than let the model fill its columns from nothing. A sentence lacks a column
    when it has none or only ``_`` there.

    Call it on each chunk of sentences before predicting: the first chunk with words decides the
    refusal (no sentence in it has the column); later sentences of ``UNTAGGED_LENGTH`` words or
    more without it give the warning. ``allow_missing`` turns both off. ``meta`` is the model
    file's: a ``pos_model`` there (the tagger the parser was trained with) is named in the refusal.
    """

    def __init__(self, model: torch.nn.Module, allow_missing: bool = False, meta: dict[str, Any] | None = None,
                 stream: TextIO | None = None, allow_option: str = "--allow-missing-columns"):
        self.columns = [] if allow_missing else list(model.input_columns)
        self.allow_option = allow_option  # how the caller turns the check off: the command's option, the API's argument
        self.reads = "+".join(c.upper() for c in model.input_columns)
        self.name, self.meta, self.stream = model.name, meta or {}, stream
        self.known = {c: v for c, v in model.known_input_values.items() if c in self.columns}
        self.decided = False
        self.warned: set[str] = set()

    def __call__(self, chunk: Sequence[Sentence]) -> None:
        if not self.columns:
            return
        if not self.decided and any(len(s) for s in chunk):
            self.decided = True
            missing = [c for c in self.columns if not any(s.has(c) for s in chunk)]
            if missing:
                first = next(s for s in chunk if len(s))
                raise TaggerError(self.refusal(missing), first.source, first.line)
            self.other_values(chunk)
        for column in (c for c in self.columns if c not in self.warned):
            lacking = next((s for s in chunk if len(s) >= UNTAGGED_LENGTH and not s.has(column)), None)
            if lacking is not None:
                self.warned.add(column)
                stream = self.stream or sys.stderr
                stream.write(f"warning: {lacking.source}:{lacking.line}: this sentence has no {column.upper()}, which "
                             f"the {self.name} model reads: its output will be poor (pipe the input through a tagger "
                             f"that fills {column.upper()}; this warning is given once)\n")
                stream.flush()

    def other_values(self, chunk: Sequence[Sentence]) -> None:
        """A warning where most of the first chunk's values of a column the model learnt as a
        closed set (:attr:`known_input_values`) are others: another tag set (CoNLL-X CPOSTAG, PTB
        tags for a UPOS parser), which the model reads as unknown tags."""
        for column, known in self.known.items():
            values = [v for s in chunk if s.has(column) for v in s.columns[column] if v != "_"]
            other = [v for v in values if v not in known]
            if len(values) >= OTHER_VALUES_MIN and len(other) > len(values) / 2:
                first = next(s for s in chunk if s.has(column))
                shown = ", ".join(repr(v) for v in list(dict.fromkeys(other))[:4])
                stream = self.stream or sys.stderr
                stream.write(f"warning: {first.source}:{first.line}: {len(other) / len(values):.0%} of the input's "
                             f"{column.upper()} values ({shown}) are ones this {self.name} model never saw in training "
                             f"(another tag set?): it reads them as unknown, and its output will be poor\n")
                stream.flush()

    def refusal(self, missing: list[str]) -> str:
        names = "+".join(c.upper() for c in missing)
        pos_model = self.meta.get("pos_model")
        example = ""
        if pos_model and self.meta.get("pos_model_column") in missing:
            example = f" (it was trained on the tags of {pos_model}: tagger tag --model {pos_model} | tagger tag --model ...)"
        return (f"the input has no {names} (only '_' or no such column), and this {self.name} model reads {self.reads}: "
                f"pipe it through a tagger that fills {names} first{example}, or pass {self.allow_option} "
                f"to run the model on it anyway")
