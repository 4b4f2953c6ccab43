"""A trained tokenizer applied without torch, the network's forward pass in numpy: where the C
kernels are not built (each layer then a time step at a time, :func:`tagger.runtime.scan.lstm_layer`),
and as the reference the C runtime (:mod:`tagger.runtime.c_tokenizer`) is tested against. With the
float32 kernels built (``NumpyTokenizer(..., kernel)``), each layer is one C call of
:mod:`tagger.runtime.kernels`. It computes what :meth:`tagger.models.tokenizer.Tokenizer.label`
computes (tested: the same labels); the arrays are :func:`tagger.models.tokenizer.export.export`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tagger.models.tokenizer.config import TokenizerConfig
from tagger.models.tokenizer.export import export
from tagger.modules import packing
from tagger.modules.fused import FUSED
from tagger.runtime import kernels
from tagger.runtime.scan import lstm_layer
from tagger.runtime.tokenizer_vocabulary import Vocabulary
from tagger.tokenization.labels import N_CATEGORIES

#: Windows per batch, at most; by the float32 kernels, whose layers take all their time steps'
#: input projections at once, fewer (memory: T steps × 128 × 2 × 4H floats).
MAX_WINDOWS = 512
KERNEL_WINDOWS = 128
#: Time steps whose input projection is computed at once (memory: 2 × 32 × 512 × 4H floats).
PROJECTED_STEPS = 32


class NumpyTokenizer(Vocabulary):
    """The forward pass of :class:`tagger.models.tokenizer.Tokenizer` (``recurrent=torch``) in
    numpy, for :meth:`label` only."""

    def __init__(self, config: TokenizerConfig, vocabs: dict[str, list[str]], state: dict[str, Any]):
        super().__init__(config, vocabs)
        self.layers, self.hidden = config.layers, config.hidden
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
        table = np.array([codes.get(c) or codes.setdefault(c, self.code(chr(c)))
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
