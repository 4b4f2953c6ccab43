"""Which engine tags: torch, or the torch-free runtimes (numpy with float32 products, or the bf16
kernels), chosen under the API for ``tagger tag`` and :meth:`tagger.api.Model.tag_file` alike.

:func:`choose` (called by :func:`tagger.load`) decides by the model files, the device, the
precision and the decoding options whether the runtimes may run the files: a tokenizer alone, or
stages the runtimes compute (:func:`tagger.runtime.pipeline.runs`: a tokenizer or none, then
skip-LSTM taggers, :func:`tagger.runtime.skip_lstm.supported`, and transition parsers,
:func:`tagger.runtime.parser.runs`), as separate files or one pipeline file (the shipped English
model), on the CPU (``auto``: a long input then goes to torch on the device ``auto`` resolves),
with the models' own decoding. Where they may, it sets the thread variables of numpy's BLAS
first (read once, when numpy is imported: reading the files imports it) and the model is loaded
for torch only when something needs it. :func:`tag_file` (called by ``Model.tag_file``) then
decides by the request (one label a word, no picture) and leaves the input size to the
runtimes' own entry points: a tokenizer's text past its switch, and an input where
:func:`tagger.runtime.skip_lstm.kernel_for` says so, go to torch (the model's own, through
``load_torch``); None from them, having read nothing, sends the whole run to torch.
"""

from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from tagger.errors import TaggerError
from tagger.options import PRECISIONS, TagRequest, in_worker_process

#: :func:`tagger.load`'s ``engine`` values: ``auto`` chooses (see the module text), ``torch``
#: runs torch on every input (the reference the runtimes are tested against).
ENGINES = ("auto", "torch")
#: Devices the runtimes run on.
RUNTIME_DEVICES = ("auto", "cpu")
#: Model files the runtimes chain, at most: a tokenizer, then taggers and parsers.
RUNTIME_FILES = 4
#: The family name of a tokenizer's model file (:class:`tagger.models.tokenizer.Tokenizer`).
TOKENIZER = "tokenizer"


@dataclass(frozen=True)
class Engine:
    """What :func:`tagger.load` was asked for (``paths``, ``device``, ``threads``,
    ``precision``), and whether the torch-free runtimes may run it (``runtime``)."""

    paths: tuple[str, ...]
    device: str = "cpu"
    threads: int | None = None
    precision: str = "auto"
    runtime: bool = False


def choose(paths: Sequence[str | os.PathLike], device: str = "cpu", threads: int | None = None,
           precision: str = "auto", beam: int | None = None, constrained: bool | None = None,
           engine: str = "auto") -> Engine:
    """The engine of :func:`tagger.load`'s arguments (see the module text)."""
    if engine not in ENGINES:
        raise TaggerError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    names = tuple(os.fspath(p) for p in paths)
    runtime = (engine == "auto" and 0 < len(names) <= RUNTIME_FILES and device in RUNTIME_DEVICES and precision in PRECISIONS
               and beam is None and constrained is None)
    if runtime:
        blas_threads(threads)  # before the files are read: that imports numpy
        runtime = runs(names)
    return Engine(names, device, threads, precision, runtime)


def blas_threads(threads: int | None) -> None:
    """Before numpy is imported (its BLAS reads them once), where it is not yet: numpy's BLAS gets
    one thread (more made the runtimes' small products wait for each other: on a busy 2-core
    machine, EWT dev through the tagger 2.6 s at one thread, 6.4 s at two, 44 s by default; its
    text through the tokenizer 0.85 s at one, 9.7 s by default); torch, if it is needed, gets
    ``threads`` (it reads OMP_NUM_THREADS when imported)."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if threads and "torch" not in sys.modules:
        os.environ["OMP_NUM_THREADS"] = str(threads)


def runs(paths: Sequence[str]) -> bool:
    """Whether the runtimes may run these model files (their plain data, tensors not read): a
    tokenizer alone, or stages :func:`tagger.runtime.pipeline.runs` takes (a tokenizer or none,
    then skip-LSTM taggers and transition parsers the runtimes compute; a pipeline file's stages
    count as its own). Files the reader does not take (missing, another format) go to torch,
    which words the errors."""
    from tagger import archive

    if len(paths) == 1 and (archive.read(paths[0], peek=True) or {}).get("name") == TOKENIZER:
        return True  # (the pipeline's runtime, and numpy, not imported for a tokenizer alone)
    from tagger.runtime.pipeline import headers, runs as computes

    stages = headers(paths)
    return bool(stages) and (len(stages) == 1 and stages[0].get("name") == TOKENIZER or computes(stages))


def tag_file(engine: Engine, path_in: Any, path_out: Any, request: TagRequest,
             load_torch: Callable[..., Any]) -> dict[str, int] | None:
    """``Model.tag_file`` by the runtimes where ``engine`` and ``request`` allow it: the counts;
    None, having read nothing, where they do not (the caller then runs torch on everything).
    Paths in (None: stdin; a pipe's binary stream, read as stdin's) and out (None or ``-``: stdout)
    only: other streams go to torch. Without ``threads``, a worker process
    (:func:`~tagger.options.in_worker_process`) runs one thread."""
    inputs, output = _paths(path_in), path_out
    if not engine.runtime or not request.plain or inputs is None:
        return None
    if output is not None and not isinstance(output, (str, os.PathLike)):
        return None
    output = None if output is None else os.fspath(output)
    threads = engine.threads or (1 if in_worker_process() else None)
    if len(engine.paths) == 1 and request.input_format in ("auto", "text") and not request.columns:
        from tagger.runtime.tokenizer import tag_file as tokenize  # a tokenizer alone runs without torch

        counts = tokenize(engine.paths[0], inputs, output, request.format or "conllu", request.chunk_size, threads,
                          presegmented=request.presegmented)
        if counts is not None:
            return counts
    if request.on_error != "fail":
        return None
    from tagger.runtime.pipeline import tag_file as tag_runtime

    return tag_runtime(list(engine.paths), inputs, output, request.input_format, request.columns, request.format,
                       request.supertag_in, request.chunk_size, engine.device, threads, engine.precision,
                       load_torch=load_torch, presegmented=request.presegmented)


def _paths(path_in: Any) -> list[Any] | None:
    """The inputs of ``path_in`` (None: stdin, ``[]``): files, and the binary file streams of
    :func:`tagger.formats.base.read_once` (a pipe's, read as stdin is); None for another stream."""
    if path_in is None:
        return []
    items = list(path_in) if isinstance(path_in, (list, tuple)) else [path_in]
    if all(isinstance(p, (str, os.PathLike, io.BufferedReader)) for p in items):
        return [p if isinstance(p, io.BufferedReader) else os.fspath(p) for p in items]
    return None
