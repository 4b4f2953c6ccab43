"""A trained tokenizer applied without torch: the model file read as plain data and the
network's forward pass by the C kernels (:mod:`tagger.runtime.c_tokenizer`, without numpy either)
where they are built, else in numpy (:mod:`tagger.runtime.numpy_tokenizer`).

``tagger tag --model tok.model`` with a tokenizer alone runs on this: importing torch costs
2-3 seconds, longer than tokenising a treebank's test text, and a whole process is what a user
waits for (importing numpy, a third of a 60 kB text's process, is left out too where the C
kernels run). Both compute what :meth:`tagger.models.tokenizer.Tokenizer.label` computes
(tested: the same labels), for the ``recurrent=torch`` layer on the CPU; :func:`load` gives None
for anything else (another family, ``recurrent=project``, an older file layout), and the caller
uses torch.

Reading: the one torch-free model-file reader, :func:`tagger.archive.read` (weights only: it
refuses every global but plain data and tensors, as ``torch.load(weights_only=True)`` does).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Sequence

from tagger import archive
from tagger.config import config_from_dict
from tagger.corpus.batching import fewer_collections
from tagger.errors import TaggerError
from tagger.models.tokenizer.config import TokenizerConfig
from tagger.modules.fused import FUSED, f32_kernel


def read_archive(path: str | os.PathLike, peek: bool = False) -> dict[str, Any] | None:
    """:func:`tagger.archive.read`: a model file's plain data (with ``peek``, its tensors unread)."""
    return archive.read(path, peek)


def load(path: str | os.PathLike) -> Any:
    """The tokenizer in a model file, to run without torch (a :class:`~tagger.runtime.c_tokenizer.CTokenizer`
    where the C kernels are built, else a :class:`~tagger.runtime.numpy_tokenizer.NumpyTokenizer`);
    None for any other model file (see the module text)."""
    header = read_archive(path, peek=True)  # another model's weights are not read twice
    if not runs(header):
        return None
    plain = archive.read(path, raw=bool(f32_kernel()))
    return from_archive(plain) if plain is not None else None


def runs(header: dict[str, Any] | None) -> bool:
    """Whether the runtimes compute the model of a model file's (or pipeline stage's) plain data
    (tensors need not be read)."""
    return (header is not None and header.get("name") == "tokenizer"
            and (header.get("config") or {}).get("recurrent") == "torch")


def from_archive(plain: dict[str, Any]) -> Any:
    """:func:`load` from a model file's (or pipeline stage's) plain data, tensors read (numpy
    arrays, or :class:`tagger.archive.Raw`: only the C runtime reads those)."""
    if not runs(plain):
        return None
    try:
        config = config_from_dict(TokenizerConfig, plain.get("config") or {}, from_file=True)
        if f32_kernel():
            from tagger.runtime.c_tokenizer import CTokenizer

            return CTokenizer(config, plain["vocabs"], plain["state_dict"])
        from tagger.runtime.numpy_tokenizer import NumpyTokenizer

        return NumpyTokenizer(config, plain["vocabs"], plain["state_dict"])
    except (KeyError, ValueError, TypeError, TaggerError):
        return None


#: Characters a run labels without torch before it switches to torch (imported then, 2-3 s).
#: With numpy's own scan (no C step built), past 250k characters torch's fused LSTM kernel (2-3×
#: faster than that scan, whose ``exp`` is scalar) wins back its import. With the C step the
#: torch-free scan is the faster at any length (EWT test text ×80, 10 MB: 15.3 s and 147 MB peak
#: against 16.8 s and 386 MB switching), so it never switches. The labels are the same either
#: way (tested).
SWITCH_CHARS = sys.maxsize if FUSED else 250_000


class SwitchingLabeller:
    """Labels with ``fast`` (a runtime tokenizer of :func:`load`) for the first :data:`SWITCH_CHARS` characters, then with the
    torch model ``load_full()`` gives."""

    def __init__(self, fast: Any, load_full: Callable[[], Any], switch_after: int = SWITCH_CHARS):
        self.fast, self.load_full, self.switch_after = fast, load_full, switch_after
        self.expander, self.spaced_tokens, self.joined = fast.expander, fast.spaced_tokens, fast.joined
        self.known = fast.known
        self.full: Any = None
        self.done = 0

    def label(self, norm: str) -> bytes:
        if self.full is None and self.done >= self.switch_after:
            self.full = self.load_full()
        self.done += len(norm)
        return (self.full or self.fast).label(norm)


def tag_file(model_path: str, inputs: Sequence[str], output: str | None, output_format: str = "conllu",
             chunk_size: int = 1000, threads: int | None = None,
             switch_after: int = SWITCH_CHARS, presegmented: bool = False) -> dict[str, int] | None:
    """``tagger tag --model TOKENIZER``: raw text from ``inputs`` (paths; none: stdin) to
    ``output`` (a path; None: stdout), without importing torch for the first ``switch_after``
    characters (:class:`SwitchingLabeller`). None, having read nothing, when the model file is not
    a tokenizer this module runs or the input is tokenised already (the caller then goes through
    :func:`tagger.load`, which says what is wrong)."""
    import sys

    if not runs(read_archive(model_path, peek=True)):  # another model: nothing read, nothing imported
        return None
    from tagger.progress import counted
    from tagger.formats.base import open_output
    from tagger.tokenization.stream import raw_sentences, tokenised, write_sentences

    source: Any = list(inputs) if inputs else sys.stdin.buffer
    if tokenised(source, "auto"):
        return None
    fast = load(model_path)
    if fast is None:
        return None

    def load_full() -> Any:
        import torch

        from tagger import model_file

        if threads:
            torch.set_num_threads(threads)
        return model_file.load(model_path)[0]

    labeller = SwitchingLabeller(fast, load_full, switch_after)
    stream = open_output(output)
    try:
        with fewer_collections():
            return write_sentences(counted(raw_sentences(labeller, source, presegmented)), stream, output_format, chunk_size)
    finally:
        if stream is not sys.stdout:
            stream.close()
