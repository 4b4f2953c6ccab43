"""Applying a model: batched prediction in input order, and the check of what it reads."""

from __future__ import annotations

import sys
from typing import Any, Callable, Sequence, TextIO

import torch

from tagger.corpus.batching import token_batches
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError

#: A sentence at least this long that has only ``_`` in a column the model reads is taken as
#: untagged there; shorter ones may be gold sentences with nothing to say (every EWT sentence
#: without FEATS has at most 4 words: URLs, "Hi back !").
UNTAGGED_LENGTH = 5


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
                 stream: TextIO | None = None):
        self.columns = [] if allow_missing else list(model.input_columns)
        self.reads = "+".join(c.upper() for c in model.input_columns)
        self.name, self.meta, self.stream = model.name, meta or {}, stream
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
        for column in (c for c in self.columns if c not in self.warned):
            lacking = next((s for s in chunk if len(s) >= UNTAGGED_LENGTH and not s.has(column)), None)
            if lacking is not None:
                self.warned.add(column)
                stream = self.stream or sys.stderr
                stream.write(f"warning: {lacking.source}:{lacking.line}: this sentence has no {column.upper()}, which "
                             f"the {self.name} model reads: its output will be poor (pipe the input through a tagger "
                             f"that fills {column.upper()}; this warning is given once)\n")
                stream.flush()

    def refusal(self, missing: list[str]) -> str:
        names = "+".join(c.upper() for c in missing)
        pos_model = self.meta.get("pos_model")
        example = ""
        if pos_model and self.meta.get("pos_model_column") in missing:
            example = f" (it was trained on the tags of {pos_model}: tagger tag --model {pos_model} | tagger tag --model ...)"
        return (f"the input has no {names} (only '_' or no such column), and this {self.name} model reads {self.reads}: "
                f"pipe it through a tagger that fills {names} first{example}, or pass --allow-missing-columns "
                f"to run the model on it anyway")
