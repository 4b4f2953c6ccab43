"""A trained tokenizer applied without torch: the model file read as plain data and the
network's forward pass in numpy.

``tagger tag --model tok.model`` with a tokenizer alone runs on this: importing torch costs
2-3 seconds, longer than tokenising a treebank's test text, and a whole process is what a user
waits for. It computes what :meth:`tagger.models.tokenizer.Tokenizer.label` computes (tested:
the same labels), for the ``recurrent=torch`` layer on the CPU; :func:`load` gives None for
anything else (another family, ``recurrent=project``, an older file layout), and the caller
uses torch.

Reading: a model file is a zip archive written by ``torch.save``; its ``data.pkl`` is unpickled
with an unpickler that allows only the three globals a file of plain data and tensors holds
(``collections.OrderedDict``, ``torch.FloatStorage`` and kin, ``torch._utils._rebuild_tensor_v2``)
and refuses every other, as ``torch.load(weights_only=True)`` does.
"""

from __future__ import annotations

import collections
import os
import pickle
import sys
import zipfile
from typing import Any, Callable, Sequence

import numpy as np

from tagger.modules.fused import FUSED, _fastscan  # the taggers' C time step, where it is built
from tagger.tokenization.labels import N_CATEGORIES, char_code
from tagger.tokenization.multiword import Expander

#: ``torch.XStorage`` -> numpy dtype.
_STORAGES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
             "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16, "CharStorage": np.int8,
             "ByteStorage": np.uint8, "BoolStorage": np.bool_}
#: Windows per batch, at most.
MAX_WINDOWS = 512
#: Time steps whose input projection is computed at once (memory: 2 × 32 × 512 × 4H floats).
PROJECTED_STEPS = 32


def _rebuild_tensor(storage: np.ndarray, offset: int, size: tuple, stride: tuple, *rest: Any) -> np.ndarray:
    if not size:
        return storage[offset : offset + 1].reshape(())
    strides = tuple(s * storage.itemsize for s in stride)
    return np.lib.stride_tricks.as_strided(storage[offset:], shape=size, strides=strides).copy()


def _no_tensor(*args: Any) -> None:
    return None


class _Unpickler(pickle.Unpickler):
    """Plain data and tensors (as numpy arrays); with ``peek``, tensors are None and their data
    is never read (what a model file is, without the cost of its weights)."""

    def __init__(self, data: Any, archive: zipfile.ZipFile, prefix: str, peek: bool = False):
        super().__init__(data)
        self.archive, self.prefix, self.peek = archive, prefix, peek

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _no_tensor if self.peek else _rebuild_tensor
        if module == "torch" and name in _STORAGES:
            return np.dtype(_STORAGES[name])
        raise pickle.UnpicklingError(f"refused global {module}.{name}")

    def persistent_load(self, pid: Any) -> np.ndarray | None:
        kind, dtype, key, _location, _numel = pid
        if kind != "storage":
            raise pickle.UnpicklingError(f"unknown persistent id {kind!r}")
        if self.peek:
            return None
        return np.frombuffer(self.archive.read(f"{self.prefix}/data/{key}"), dtype=dtype)


def read_archive(path: str | os.PathLike, peek: bool = False) -> dict[str, Any] | None:
    """The plain data of a model file, tensors as numpy arrays (with ``peek``: None, unread);
    None when the file is not a zip archive of little-endian plain data that this reader takes
    (the caller then uses torch, which also gives the errors)."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            pickled = next((n for n in names if n.endswith("/data.pkl")), None)
            if pickled is None:
                return None
            prefix = pickled[: -len("/data.pkl")]
            if f"{prefix}/byteorder" in names and archive.read(f"{prefix}/byteorder") != b"little":
                return None
            with archive.open(pickled) as data:
                loaded = _Unpickler(data, archive, prefix, peek).load()
    except (OSError, zipfile.BadZipFile, pickle.UnpicklingError, ValueError, KeyError, EOFError, TypeError):
        return None
    return loaded if isinstance(loaded, dict) else None


def load(path: str | os.PathLike) -> "NumpyTokenizer | None":
    """The tokenizer in a model file, to run without torch; None for any other model file (see
    the module text)."""
    header = read_archive(path, peek=True)  # another model's weights are not read twice
    if header is None or header.get("name") != "tokenizer" or (header.get("config") or {}).get("recurrent") != "torch":
        return None
    archive = read_archive(path)
    if archive is None:
        return None
    config = archive.get("config") or {}
    if config.get("recurrent") != "torch":
        return None
    try:
        return NumpyTokenizer(config, archive["vocabs"], archive["state_dict"])
    except (KeyError, ValueError):
        return None


def sigmoid_(x: np.ndarray) -> np.ndarray:
    """σ(x) in place, as 1 / (1 + exp(-x)): numpy's ``exp`` is about three times faster than
    its ``tanh`` on float32, so tanh is computed as 2σ(2x) - 1 (the g gate's weights are doubled
    for it when the model is read)."""
    np.negative(x, out=x)
    np.exp(x, out=x)
    x += 1.0
    np.reciprocal(x, out=x)
    return x


class NumpyTokenizer:
    """The forward pass of :class:`tagger.models.tokenizer.Tokenizer` (``recurrent=torch``) in
    numpy, for :meth:`label` only."""

    def __init__(self, config: dict[str, Any], vocabs: dict[str, list[str]], state: dict[str, np.ndarray]):
        self.segment, self.context = int(config["segment"]), int(config["context"])
        self.window = self.segment + 2 * self.context
        self.layers, self.hidden = int(config["layers"]), int(config["hidden"])
        self.ids = {char: i for i, char in enumerate(vocabs["chars"])}
        self.unknown = self.ids["<unk>"]
        self.expander = Expander(vocabs.get("mwt", []), vocabs.get("mwt_rules", []))
        self.chars = state["char_embedding.weight"].astype(np.float32)
        self.categories = state["category_embedding.weight"].astype(np.float32)
        #: per layer: (W_ih^T [2, D, 4H], W_hh^T [2, H, 4H], b [2, 1, 4H]) for both directions
        self.weights = []
        for layer in range(self.layers):
            names = [f"l{layer}", f"l{layer}_reverse"]
            w_ih = np.stack([state[f"rnn.weight_ih_{n}"].T for n in names]).astype(np.float32)
            w_hh = np.stack([state[f"rnn.weight_hh_{n}"].T for n in names]).astype(np.float32)
            bias = np.stack([(state[f"rnn.bias_ih_{n}"] + state[f"rnn.bias_hh_{n}"])[None] for n in names])
            bias = bias.astype(np.float32)
            H = self.hidden
            if FUSED:  # the C step reads the gates as i, f, o, then the candidate (torch: i, f, g, o)
                order = np.r_[0 : 2 * H, 3 * H : 4 * H, 2 * H : 3 * H]
                w_ih, w_hh, bias = w_ih[..., order], w_hh[..., order], bias[..., order]
            else:  # tanh(z_g) = 2σ(2 z_g) - 1: the g gate doubled
                for weight in (w_ih, w_hh, bias):
                    weight[..., 2 * H : 3 * H] *= 2
            self.weights.append((np.ascontiguousarray(w_ih), np.ascontiguousarray(w_hh), np.ascontiguousarray(bias)))
        self.w_out = np.ascontiguousarray(state["output.weight"].T.astype(np.float32))  # [2H, 5]
        self.b_out = state["output.bias"].astype(np.float32)
        self._codes: dict[int, int] = {}  # code point -> code

    def encode(self, norm: str) -> np.ndarray:
        """Codes (``id × N_CATEGORIES + category``) of a normalised text, ``[N]``."""
        points = np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32)
        distinct, where = np.unique(points, return_inverse=True)
        codes = self._codes
        table = np.array([codes.get(c) or codes.setdefault(c, char_code(chr(c), self.ids, self.unknown))
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
        batches = -(-count // MAX_WINDOWS)
        size_of = -(-count // batches)  # batches of equal size: the scan's cost per step is mostly fixed
        out = [self._labels(windows[start : start + size_of]) for start in range(0, count, size_of)]
        return np.concatenate(out)[:n].astype(np.uint8).tobytes()

    def _labels(self, codes: np.ndarray) -> np.ndarray:
        """The labels of the middle ``segment`` characters of each window ``codes`` [B, T], flat."""
        chars, categories = np.divmod(codes.T, N_CATEGORIES)  # [T, B]
        x = np.concatenate([self.chars[chars], self.categories[categories]], -1)  # [T, B, D]
        for w_ih, w_hh, bias in self.weights:
            x = self._layer(x, w_ih, w_hh, bias)
        middle = x[self.context : self.context + self.segment]  # [S, B, 2H]
        scores = middle @ self.w_out + self.b_out
        return scores.argmax(-1).T.reshape(-1)  # window by window

    def _layer(self, x: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, bias: np.ndarray) -> np.ndarray:
        """One bidirectional LSTM layer (gates i, f, g, o as torch orders them): [T, B, D] -> [T, B, 2H]."""
        steps, batch, _ = x.shape
        hidden = self.hidden
        width = w_ih.shape[-1]
        gx = np.empty((2, PROJECTED_STEPS, batch, width), dtype=np.float32)  # the input projection, a few steps at a time
        h = np.zeros((2, batch, hidden), dtype=np.float32)
        c = np.zeros((2, batch, hidden), dtype=np.float32)
        out = np.empty((2, steps, batch, hidden), dtype=np.float32)
        tmp = np.empty_like(c)
        if FUSED:  # each step after its product in one C call: gates, cell, h written into ``out``
            z = np.empty((2, batch, width), dtype=np.float32)
            head = (batch, hidden, 3, 0, 0, 0, z.ctypes.data, batch * width, width)
            state = (c.ctypes.data, batch * hidden, hidden)
            for t in range(steps):
                k = t % PROJECTED_STEPS
                if k == 0:
                    _project(x, t, w_ih, bias, gx)
                np.matmul(h if t == 0 else out[:, t - 1], w_hh, out=z)
                _fastscan.lstm_step(*head, gx[:, k].ctypes.data, PROJECTED_STEPS * batch * width, width, *state,
                                    out[:, t].ctypes.data, steps * batch * hidden, hidden, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            return np.concatenate([out[0], out[1][::-1]], -1)
        with np.errstate(over="ignore"):  # exp(-z) overflows to inf for very negative z: σ is then 0, as it should be
            for t in range(steps):
                k = t % PROJECTED_STEPS
                if k == 0:
                    _project(x, t, w_ih, bias, gx)
                z = np.matmul(h, w_hh)
                z += gx[:, k]
                sigmoid_(z)  # i, f, σ(2 z_g), o
                i, f, g, o = z[..., :hidden], z[..., hidden : 2 * hidden], z[..., 2 * hidden : 3 * hidden], z[..., 3 * hidden :]
                c *= f
                np.multiply(i, g, out=tmp)  # i ⊙ tanh(z_g) = 2 i ⊙ σ(2 z_g) - i
                tmp *= 2
                tmp -= i
                c += tmp
                np.multiply(c, 2, out=tmp)  # tanh(c) = 2σ(2c) - 1
                sigmoid_(tmp)
                tmp *= 2
                tmp -= 1
                np.multiply(o, tmp, out=h)
                out[:, t] = h
        return np.concatenate([out[0], out[1][::-1]], -1)


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
        self.expander = fast.expander
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

    from tagger.cli.progress import counted
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
        return write_sentences(counted(raw_sentences(labeller, source)), stream, output_format, chunk_size)
    finally:
        if stream is not sys.stdout:
            stream.close()
