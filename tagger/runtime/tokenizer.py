"""A trained tokenizer applied without torch: the model file read as plain data and the
network's forward pass in numpy.

``tagger tag --model tok.model`` with a tokenizer alone runs on this: importing torch costs
2-3 seconds, longer than tokenising a treebank's test text, and a whole process is what a user
waits for. It computes what :meth:`tagger.models.tokenizer.Tokenizer.label` computes (tested:
the same labels), for the ``recurrent=torch`` layer on the CPU; :func:`load` gives None for
anything else (another family, ``recurrent=project``, an older file layout), and the caller
uses torch.

Reading: the one torch-free model-file reader, :func:`tagger.archive.read` (weights only: it
refuses every global but plain data and tensors, as ``torch.load(weights_only=True)`` does);
the arrays: :func:`tagger.models.tokenizer.export.export`; the time loop: the tagger runtime's,
each layer in one C call by the float32 kernels (:mod:`tagger.runtime.kernels`) where they are
built, else a step at a time (:func:`tagger.runtime.scan.lstm_layer`).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Sequence

import numpy as np

from tagger import archive
from tagger.archive import STORAGES as _STORAGES  # noqa: F401 - here as before
from tagger.config import config_from_dict
from tagger.corpus.batching import fewer_collections
from tagger.errors import TaggerError
from tagger.models.tokenizer.config import TokenizerConfig
from tagger.models.tokenizer.export import export
from tagger.modules import packing
from tagger.modules.fused import FUSED, _fastscan  # noqa: F401 - the taggers' C time step, where it is built
from tagger.runtime import kernels
from tagger.runtime.scan import lstm_layer, sigmoid_  # noqa: F401 - sigmoid_ here as before
from tagger.tokenization.joined import JOINED
from tagger.tokenization.labels import N_CATEGORIES, char_code, spaced_tokens
from tagger.tokenization.multiword import Expander

#: Windows per batch, at most; by the float32 kernels, whose layers take all their time steps'
#: input projections at once, fewer (memory: T steps × 128 × 2 × 4H floats).
MAX_WINDOWS = 512
KERNEL_WINDOWS = 128
#: Time steps whose input projection is computed at once (memory: 2 × 32 × 512 × 4H floats).
PROJECTED_STEPS = 32


def read_archive(path: str | os.PathLike, peek: bool = False) -> dict[str, Any] | None:
    """:func:`tagger.archive.read`: a model file's plain data (with ``peek``, its tensors unread)."""
    return archive.read(path, peek)


def load(path: str | os.PathLike) -> "NumpyTokenizer | None":
    """The tokenizer in a model file, to run without torch; None for any other model file (see
    the module text)."""
    header = read_archive(path, peek=True)  # another model's weights are not read twice
    if not runs(header):
        return None
    plain = read_archive(path)
    return from_archive(plain) if plain is not None else None


def runs(header: dict[str, Any] | None) -> bool:
    """Whether :class:`NumpyTokenizer` computes the model of a model file's (or pipeline stage's)
    plain data (tensors need not be read)."""
    return (header is not None and header.get("name") == "tokenizer"
            and (header.get("config") or {}).get("recurrent") == "torch")


def from_archive(plain: dict[str, Any]) -> "NumpyTokenizer | None":
    """:func:`load` from a model file's (or pipeline stage's) plain data, tensors read."""
    if not runs(plain):
        return None
    config = plain.get("config") or {}
    try:
        return NumpyTokenizer(config, plain["vocabs"], plain["state_dict"])
    except (KeyError, ValueError, TypeError, TaggerError):
        return None


class NumpyTokenizer:
    """The forward pass of :class:`tagger.models.tokenizer.Tokenizer` (``recurrent=torch``) in
    numpy, for :meth:`label` only."""

    def __init__(self, config: TokenizerConfig | dict[str, Any], vocabs: dict[str, list[str]], state: dict[str, Any]):
        if not isinstance(config, TokenizerConfig):
            config = config_from_dict(TokenizerConfig, config, from_file=True)
        self.segment, self.context = config.segment, config.context
        self.scripts = config.scripts  # categories qualified by script (tagger.tokenization.labels.SCRIPTS)
        self.window = config.window
        self.layers, self.hidden = config.layers, config.hidden
        self.ids = {char: i for i, char in enumerate(vocabs["chars"])}
        self.unknown = self.ids["<unk>"]
        self.expander = Expander.from_vocabs(vocabs)
        self.spaced_tokens = spaced_tokens(vocabs)
        self.joined = frozenset(vocabs.get(JOINED, ()))
        arrays = export(config, state)
        self.chars, self.categories = arrays.chars, arrays.categories
        #: per layer: (W_ih^T [2, D, 4H], W_hh^T [2, H, 4H], b [2, 1, 4H]) for both directions, gates i, f, o, g
        self.weights = arrays.layers
        self.w_out, self.b_out = arrays.w_out, arrays.b_out
        self._codes: dict[int, int] = {}  # code point -> code
        #: the float32 kernel (none: numpy a step at a time), and per layer its packed right sides:
        #: W_ih of both directions side by side, each ``block`` columns, their bias, block, W_hh
        self.kernel = kernels.Kernel(f32=kernels.f32_kernel())
        self.packed = [(*packing.input_projection(w_ih, bias, f32=True), packing.recurrent(w_hh, f32=True))
                       for w_ih, w_hh, bias in self.weights] if self.kernel else []

    def encode(self, norm: str) -> np.ndarray:
        """Codes (``id × N_CATEGORIES + category``) of a normalised text, ``[N]``."""
        points = np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32)
        distinct, where = np.unique(points, return_inverse=True)
        codes = self._codes
        table = np.array([codes.get(c) or codes.setdefault(c, char_code(chr(c), self.ids, self.unknown, self.scripts))
                          for c in distinct.tolist()], dtype=np.int64)
        return table[where.reshape(-1)]

    def label(self, norm: str) -> bytes:
        """One label per character of a normalised text, as :meth:`Tokenizer.label` gives them."""
        n = len(norm)
        if not n:
            return b""
        size, context, window = self.segment, self.context, self.window
        count = -(-n // size)
        padded = np.zeros(count * size + 2 * context, dtype=np.int64)
        padded[context : context + n] = self.encode(norm)
        windows = np.lib.stride_tricks.sliding_window_view(padded, window)[::size]  # [count, window]
        batches = -(-count // (KERNEL_WINDOWS if self.kernel else MAX_WINDOWS))
        size_of = -(-count // batches)  # batches of equal size: the scan's cost per step is mostly fixed
        out = [self._labels(windows[start : start + size_of]) for start in range(0, count, size_of)]
        return np.concatenate(out)[:n].astype(np.uint8).tobytes()

    def _labels(self, codes: np.ndarray) -> np.ndarray:
        """The labels of the middle ``segment`` characters of each window ``codes`` [B, T], flat."""
        chars, categories = np.divmod(codes.T, N_CATEGORIES)  # [T, B]
        x = np.concatenate([self.chars[chars], self.categories[categories]], -1)  # [T, B, D]
        if self.kernel:
            x = self._kernel_layers(x)
        else:
            for w_ih, w_hh, bias in self.weights:
                x = self._layer(x, w_ih, w_hh, bias)
        middle = x[self.context : self.context + self.segment]  # [S, B, 2H]
        scores = middle @ self.w_out + self.b_out
        return scores.argmax(-1).T.reshape(-1)  # window by window

    def _kernel_layers(self, x: np.ndarray) -> np.ndarray:
        """Every layer by the float32 kernels, [T, B, D] -> [T, B, 2H]: each layer's input
        projection one product for both directions, in sentence order, and its time loop one C
        call, which reads direction 1 backwards and writes the outputs in sentence order."""
        steps, batch, _ = x.shape
        rows = np.ascontiguousarray(x.reshape(steps * batch, -1), dtype=np.float32)
        for packed_x, bias, block, packed_h in self.packed:
            gx = np.empty((steps * batch, 2 * block), dtype=np.float32)
            kernels.product(self.kernel, rows, packed_x, gx, bias)
            rows = np.empty((steps * batch, 2 * self.hidden), dtype=np.float32)
            kernels.scan(self.kernel, gx, packed_h, self.hidden, None, None, None, rows, steps, batch, block)
        return rows.reshape(steps, batch, -1)

    def _layer(self, x: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, bias: np.ndarray) -> np.ndarray:
        """One bidirectional LSTM layer: [T, B, D] -> [T, B, 2H], the input projection a few steps
        at a time (:func:`_project`), the time loop the tagger runtime's."""
        steps, batch, _ = x.shape
        gx = np.empty((2, PROJECTED_STEPS, batch, w_ih.shape[-1]), dtype=np.float32)
        out = lstm_layer(gx, w_hh, steps=steps, refill=lambda t: _project(x, t, w_ih, bias, gx), fused=FUSED)
        return np.concatenate([out[:, 0], out[::-1, 1]], -1)


def _project(x: np.ndarray, t: int, w_ih: np.ndarray, bias: np.ndarray, gx: np.ndarray) -> None:
    """The input projection ``x W_ih + b`` of steps ``t`` .. ``t + P - 1`` of both directions
    (direction 1 reads ``x`` [T, B, D] backwards) into ``gx`` [2, P, B, 4H], P = PROJECTED_STEPS."""
    steps, batch, _ = x.shape
    width = w_ih.shape[-1]
    span = min(gx.shape[1], steps - t)
    ahead = x[t : t + span].reshape(span * batch, -1)
    back = x[steps - t - span : steps - t][::-1].reshape(span * batch, -1)
    np.add(np.matmul(ahead, w_ih[0]).reshape(span, batch, width), bias[0], out=gx[0, :span])
    np.add(np.matmul(back, w_ih[1]).reshape(span, batch, width), bias[1], out=gx[1, :span])


#: Characters a run labels without torch before it switches to torch (imported then, 2-3 s).
#: With numpy's own scan (no C step built), past 250k characters torch's fused LSTM kernel (2-3×
#: faster than that scan, whose ``exp`` is scalar) wins back its import. With the C step the
#: torch-free scan is the faster at any length (EWT test text ×80, 10 MB: 15.3 s and 147 MB peak
#: against 16.8 s and 386 MB switching), so it never switches. The labels are the same either
#: way (tested).
SWITCH_CHARS = sys.maxsize if FUSED else 250_000


class SwitchingLabeller:
    """Labels with ``fast`` (numpy) for the first :data:`SWITCH_CHARS` characters, then with the
    torch model ``load_full()`` gives."""

    def __init__(self, fast: NumpyTokenizer, load_full: Callable[[], Any], switch_after: int = SWITCH_CHARS):
        self.fast, self.load_full, self.switch_after = fast, load_full, switch_after
        self.expander, self.spaced_tokens, self.joined = fast.expander, fast.spaced_tokens, fast.joined
        self.full: Any = None
        self.done = 0

    def label(self, norm: str) -> bytes:
        if self.full is None and self.done >= self.switch_after:
            self.full = self.load_full()
        self.done += len(norm)
        return (self.full or self.fast).label(norm)


def tag_file(model_path: str, inputs: Sequence[str], output: str | None, output_format: str = "conllu",
             chunk_size: int = 1000, threads: int | None = None,
             switch_after: int = SWITCH_CHARS) -> dict[str, int] | None:
    """``tagger tag --model TOKENIZER``: raw text from ``inputs`` (paths; none: stdin) to
    ``output`` (a path; None: stdout), without importing torch for the first ``switch_after``
    characters (:class:`SwitchingLabeller`). None, having read nothing, when the model file is not
    a tokenizer this module runs or the input is tokenised already (the caller then goes through
    :func:`tagger.load`, which says what is wrong)."""
    import sys

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
            return write_sentences(counted(raw_sentences(labeller, source)), stream, output_format, chunk_size)
    finally:
        if stream is not sys.stdout:
            stream.close()
