"""A trained tokenizer applied by the C kernels alone: no torch, no numpy.

``tagger tag --model tok.model`` on a small text is mostly start-up: importing numpy is a third of
the process on a 60 kB text, more than the network's forward pass (docs/benchmarks.md, "Any
language"). Where the float32 kernels of ``tagger/modules/_fastscan.c`` are built, this computes
what :class:`tagger.runtime.numpy_tokenizer.NumpyTokenizer` computes with the same kernels
(tested: the same labels), its buffers Python's ``array``:

- the weights: a model file's tensors read ``raw`` (:func:`tagger.archive.read`), or a pipeline
  stage's numpy arrays (their ``data``), float32 or float16 (:func:`floats`): torch's ``nn.LSTM``
  weights of each direction, gates reordered to the kernels' i, f, o, g and packed as
  :mod:`tagger.modules.packing` packs them (:class:`Panels`; a tokenizer's matrices are small,
  so this costs a few milliseconds);
- per window batch, rows ``t·B + b``: the inputs ``[char embedding; category embedding]``
  gathered by ``bag_sum``, each layer's input projection one ``f32_product`` for both directions,
  its time loop one ``f32_scan``, the output layer one product of the windows' middle steps, and
  ``window_labels`` their argmax, window by window.
"""

from __future__ import annotations

import struct
from array import array
from itertools import chain
from typing import Any, Sequence

from tagger.modules.fused import _fastscan, f32_kernel
from tagger.runtime.tokenizer_vocabulary import Vocabulary
from tagger.tokenization.labels import N_CATEGORIES

#: Windows per batch, at most: a multiple of the float32 kernels' blocks of rows (12 for AVX-512,
#: 6 for AVX2), and few, so that a batch's buffers stay in the caches: the first labels of a
#: process (AMX Xeon, AVX-512 kernel) on Japanese GSD's test text 22.8 ms at 12, 27.4 at 32,
#: 45 at 128; EWT's with the ``medium`` tokenizer 144 ms at 12, 167 at 32 (AVX2 kernel: 158, 170).
WINDOWS = 12
#: The right-hand sides' alignment, in floats (64 bytes: the kernels read them a cache line at a time).
ALIGN = 16


def up(n: int, to: int) -> int:
    """``n`` rounded up to a multiple of ``to``."""
    return -(-n // to) * to


def floats(tensor: Any) -> tuple[array, tuple[int, ...]]:
    """A float32 or float16 tensor (a :class:`tagger.archive.Raw`, or a numpy array: both have
    ``data``, ``shape`` and ``dtype``; the shipped model keeps its tokenizer in float16) as a flat
    ``array('f')`` of its row-major values, and its shape."""
    data, dtype = tensor.data.cast("B"), str(tensor.dtype)
    if dtype == "float32":
        values = array("f")
        values.frombytes(data)
    elif dtype == "float16":  # (struct reads half floats; array and memoryview do not)
        values = array("f", struct.unpack(f"<{len(data) // 2}e", data))
    else:
        raise ValueError(f"a {dtype} weight where float32 or float16 was expected")
    return values, tuple(tensor.shape)


def zeros(count: int) -> array:
    """``count`` float32 zeros."""
    return array("f", [0.0]) * count


class Workspace:
    """Float32 buffers by name, each grown to the largest size asked for and then reused: a
    batch's buffers are written whole before they are read."""

    def __init__(self) -> None:
        self.buffers: dict[str, array] = {}

    def take(self, name: str, count: int) -> array:
        buffer = self.buffers.get(name)
        if buffer is None or len(buffer) < count:
            buffer = self.buffers[name] = zeros(count)
        return buffer


def address(buffer: array, start: int = 0) -> int:
    """Where element ``start`` of an array is (while the array is not resized)."""
    return buffer.buffer_info()[0] + start * buffer.itemsize


class Panels:
    """A right-hand side [K, N] as the float32 kernels read it (:func:`tagger.modules.packing.pack`
    with ``f32``), from its N columns of K values (None: zeros): panels of 16 columns, element
    (k, n) at [n // 16, k, n % 16], N padded with zero columns to ``n``; the panels start at
    ``address``, a multiple of 64 bytes."""

    def __init__(self, columns: Sequence[Sequence[float] | None], k: int):
        self.k, self.n = k, up(len(columns), 16)
        self.buffer = zeros(self.n * k + ALIGN)
        start = (-address(self.buffer) % (4 * ALIGN)) // 4
        zero = [0.0] * k
        columns = [zero if c is None else c for c in columns] + [zero] * (self.n - len(columns))
        for panel in range(self.n // 16):
            at = start + panel * 16 * k
            self.buffer[at : at + 16 * k] = array("f", chain.from_iterable(zip(*columns[16 * panel : 16 * panel + 16])))
        self.address = address(self.buffer, start)


def gate_order(hidden: int) -> list[int]:
    """torch's gate rows i, f, g, o in the kernels' order i, f, o, g."""
    return [*range(2 * hidden), *range(3 * hidden, 4 * hidden), *range(2 * hidden, 3 * hidden)]


def rows(values: array, shape: tuple[int, ...]) -> list[array]:
    """The rows of a [R, C] matrix held flat."""
    width = shape[1]
    return [values[r * width : (r + 1) * width] for r in range(shape[0])]


class Layer:
    """One bidirectional LSTM layer (torch's ``rnn`` weights of layer ``layer``), packed: the
    input projection of both directions side by side, ``block`` columns each, with its bias, and
    W_h of both directions, the second's panels after the first's."""

    def __init__(self, state: dict[str, Any], layer: int, hidden: int):
        order, gates = gate_order(hidden), 4 * hidden
        self.hidden, self.block = hidden, up(gates, 16)
        names = [f"l{layer}", f"l{layer}_reverse"]
        pad = [None] * (self.block - gates)

        def both(weight: str) -> list[array | None]:  # [4H, K] each: its rows are the product's columns
            matrices = [rows(*floats(state[f"rnn.{weight}_{name}"])) for name in names]
            return [*(matrices[0][g] for g in order), *pad, *(matrices[1][g] for g in order), *pad]

        inputs = both("weight_ih")
        self.input = Panels(inputs, len(inputs[0]))
        self.recurrent = Panels(both("weight_hh"), hidden)
        self.bias = zeros(2 * self.block)
        for d, name in enumerate(names):
            b_ih, b_hh = floats(state[f"rnn.bias_ih_{name}"])[0], floats(state[f"rnn.bias_hh_{name}"])[0]
            for j, g in enumerate(order):
                self.bias[d * self.block + j] = b_ih[g] + b_hh[g]

    def __call__(self, kernel: int, x: array, steps: int, batch: int, work: Workspace, name: str) -> array:
        """The layer's outputs [T·B, 2H] (``work``'s buffer ``name``) from its inputs ``x`` [T·B,
        D], rows t·B + b."""
        count, k, block, hidden = steps * batch, self.input.k, self.block, self.hidden
        gx = work.take("gates", count * 2 * block)
        _fastscan.f32_product(kernel, count, self.input.n // 16, k, address(x), k, self.input.address, 0,
                              address(gx), count, 2 * block, address(self.bias), 2 * block, 0, 0, 2 * block)
        out = work.take(name, count * 2 * hidden)
        _fastscan.f32_scan(kernel, steps, batch, hidden, 3, 0, 0, block, address(gx), 1, 2 * block, block,
                           self.recurrent.address, 0, 0, 0, address(out), 2 * hidden)
        return out


class CTokenizer(Vocabulary):
    """The forward pass of :class:`tagger.models.tokenizer.Tokenizer` (``recurrent=torch``) by the
    float32 C kernels on Python arrays, for :meth:`label` only (see the module text): ``config``
    a :class:`~tagger.models.tokenizer.TokenizerConfig`, ``state`` its weights."""

    def __init__(self, config: Any, vocabs: dict[str, list[str]], state: dict[str, Any], kernel: int | None = None):
        super().__init__(config, vocabs)
        self.kernel = f32_kernel() if kernel is None else kernel
        if not self.kernel:
            raise ValueError("the float32 kernels are not built")
        self.layers = [Layer(state, layer, config.hidden) for layer in range(config.layers)]
        self.chars, (_, self.char_dim) = floats(state["char_embedding.weight"])
        self.categories, (_, self.category_dim) = floats(state["category_embedding.weight"])
        self.width = self.char_dim + self.category_dim
        #: the inputs' table: a row [character embedding; category embedding] per code met, code 0 (padding) first
        self.table, self.row_of_code = array("f"), {}
        self.row_of: dict[str, int] = {}  # character -> its row
        self._row(0)
        w_out, (self.labels, inputs) = floats(state["output.weight"])  # [5, 2H]
        self.output = Panels(rows(w_out, (self.labels, inputs)), inputs)
        self.b_out = zeros(self.output.n)
        self.b_out[: self.labels] = floats(state["output.bias"])[0]
        self.work = Workspace()

    def _row(self, code: int) -> int:
        """The table row of a code, added if new."""
        row = self.row_of_code.get(code)
        if row is None:
            row = self.row_of_code[code] = len(self.row_of_code)
            char, category = divmod(code, N_CATEGORIES)
            self.table += self.chars[char * self.char_dim : (char + 1) * self.char_dim]
            self.table += self.categories[category * self.category_dim : (category + 1) * self.category_dim]
        return row

    def label(self, norm: str) -> bytes:
        """One label per character of a normalised text, as :meth:`Tokenizer.label` gives them."""
        n = len(norm)
        if not n:
            return b""
        size, context = self.segment, self.context
        row_of = self.row_of
        for char in set(norm).difference(row_of):
            row_of[char] = self._row(self.code(char))
        count = -(-n // size)
        padded = [0] * context + list(map(row_of.__getitem__, norm)) + [0] * (count * size + context - n)
        batches = -(-count // WINDOWS)
        each = -(-count // batches)  # batches of equal size: the scan's cost per step is mostly fixed
        return b"".join(self._labels(padded, start, min(each, count - start)) for start in range(0, count, each))[:n]

    def _labels(self, padded: list[int], first: int, batch: int) -> bytes:
        """The labels of the middle ``segment`` characters of windows ``first`` … ``first + batch -
        1`` (``padded``: every position's table row), window by window."""
        steps, size, context = self.window, self.segment, self.context
        windows = [padded[(first + b) * size : (first + b) * size + steps] for b in range(batch)]
        index = array("q", chain.from_iterable(zip(*windows)))  # rows t·B + b
        x = self.work.take("inputs", steps * batch * self.width)
        _fastscan.bag_sum(steps * batch, 1, self.width, len(self.table) // self.width, address(self.table),
                          address(index), 0, address(x))
        for i, layer in enumerate(self.layers):
            x = layer(self.kernel, x, steps, batch, self.work, f"outputs {i % 2}")
        middle, k, n = size * batch, self.output.k, self.output.n
        scores = self.work.take("scores", middle * n)
        _fastscan.f32_product(self.kernel, middle, n // 16, k, address(x, context * batch * k), k, self.output.address,
                              0, address(scores), middle, n, address(self.b_out), n, 0, 0, n)
        labels = array("B", bytes(middle))
        _fastscan.window_labels(address(scores), size, batch, n, self.labels, address(labels))
        return labels.tobytes()
