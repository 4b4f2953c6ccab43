"""The skip-LSTM tagger (:class:`tagger.models.skip_lstm.SkipLSTMTagger`) applied without torch.

``tagger tag --model pos.tagger`` on a small input runs on this (:func:`tag_file`), and on an
input of any length where :func:`products` says so (the C steps of :mod:`tagger.modules._fastscan`
built, and torch would multiply in float32 too or our bf16 kernels run; batches in ``--threads``
threads): with float32 products (the float32 kernels of :mod:`tagger.runtime.kernels`, each
layer's time loop in one C call, or numpy a step at a time) the labels of the torch model in fp32
(tested), with the bf16 kernels (:mod:`tagger.runtime.bf16`) its scores to bf16 precision, for the configurations of the
presets ``fast`` and ``small`` and any that differ from them in sizes only
(:func:`tagger.models.skip_lstm.config.supports_fast_path`). :func:`load` gives None
for any other model file (another family, cell or shortcut, the character CNN, per-feature
FEATS heads, a newer option or file format), and the caller uses torch.

What it computes, time-major (T steps, B sentences, direction 0 forward, 1 backward), as
:meth:`SkipLSTMTagger.forward` does in evaluation: the first layer's input projection per
distinct word through the gated window (:meth:`InputLayer.project_by_type`); stacked
bidirectional LSTM layers, each layer l ≥ 3 with the gated shortcut ``h = o⊙tanh(c) + γ⊙h^{l-2}``,
``γ = σ(W_x,g x + W_h,g h_{t-1} + U h^{l-2} + b_g)`` (:mod:`tagger.modules.recurrent`,
``gate=recurrent``); one output product and an argmax per head, padding and RARE never chosen.
The backward direction scans each sentence reversed within its own length, so no scan starts
in padding (torch resets the state there instead: the same values).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from tagger import archive
from tagger.corpus.features import InputFeaturizer
from tagger.corpus.lemmas import output_values
from tagger.modules.packing import row_codes
from tagger.modules.fused import I8_KERNELS, KERNELS, _fastscan  # the C steps of the torch path; without them, numpy
from tagger.runtime import bf16, kernels
from tagger.runtime.bf16 import bf16_kernel
from tagger.runtime.kernels import NUMPY, Kernel, f32_kernel
from tagger.config import config_from_dict
from tagger.corpus.vocab import Vocab
from tagger.errors import TaggerError
from tagger.models.skip_lstm.config import (FAST_PATH, RARE, TaggerConfig, lookup_words,  # noqa: F401 - RARE here as before
                                            subword_featurizing, supports_fast_path)
from tagger.models.skip_lstm.export import Layer, Output, TaggerArrays, export  # noqa: F401 - Layer here as before
from tagger.options import cpu_has_bf16
from tagger.runtime.scan import lstm_layer, sigmoid_

if TYPE_CHECKING:
    from concurrent.futures import Future

    from tagger.runtime.pool import Pool

#: Model file formats read (:data:`tagger.model_file.FORMAT_VERSION` and the one before, which
#: lays these configurations out alike); a newer file goes to torch, which says so.
FORMAT_VERSIONS = (2, 3)
#: Models of at most this many cells a layer are tagged here at any input length, even where torch
#: would multiply in bf16 (:func:`products`).
NUMPY_HIDDEN = 64
#: The first layer's per-word products kept across chunks (:meth:`NumpyTagger.word_rows`), at most.
KEPT_BYTES = 96 << 20
#: Padded tokens per batch, at most (sentences are batched by length), with float32 products and
#: with the bf16 kernels (smaller batches keep a layer's gates in cache: on EWT train, AMX, the
#: whole process 3.27 s at 4096, 2.85 s at 1024, 3.12 s at 512, one thread; 2.72, 2.29, 2.49 at two).
MAX_TOKENS = 4096
KERNEL_MAX_TOKENS = 1024
#: ... and with the float32 kernels (5,000 EWT train sentences, AVX2, one thread: 6.98 s of CPU at
#: 512, 6.47 at 1024, 6.61 at 2048, 6.34 at 4096; fewer, larger batches leave threads less to share)
F32_MAX_TOKENS = 2048
#: ... and with the int8 kernels (EWT train through the `fast` student as an AVX2 CPU, AMX Xeon,
#: medians of 3 alternating runs in one process: one thread 4.58 s at 1024, 4.82 s at 2048; two
#: threads 3.37 s both)
I8_MAX_TOKENS = 1024
#: The first layer's per-word products of a chunk's new words run in the pool in at most PARTS parts
#: of at least PART_ROWS rows (:meth:`NumpyTagger.first_products`).
PARTS, PART_ROWS = 8, 256
#: Tokens tagged without torch; a longer input goes to torch whole (docs/benchmarks.md,
#: "Tagging speed": past about this, importing torch pays for itself).
SWITCH_TOKENS = 25_000
#: An input of at most this many tokens is multiplied by numpy, a step at a time, in float32: its
#: first line comes without packing the model for the kernels. Past it the kernels pay for their
#: packing (session 23, AMX Xeon, the shipped pipeline, whole processes' CPU seconds, numpy /
#: kernels: 0.46 / 0.49 for one sentence, 0.50 / 0.49 for ~100 tokens, 0.67 / 0.57 for ~800,
#: 1.36 / 0.85 for ~6,500; the Japanese GSD pipeline on its test text, ~13,000 tokens: 1.57 / 0.78).
NUMPY_TOKENS = 500


def read_archive(path: str | os.PathLike, peek: bool = False) -> dict[str, Any] | None:
    """:func:`tagger.archive.read`: a model file's plain data (with ``peek``, its tensors unread)."""
    return archive.read(path, peek)


def fast_config(header: dict[str, Any] | None) -> TaggerConfig | None:
    """The config of a skip-LSTM model file (its plain data, :func:`read_archive`; tensors need
    not be read) when the fast path computes it (:func:`supports_fast_path`), else None. The
    config is the family's own (:class:`TaggerConfig`: an unknown key, a bad value, and the
    model goes to torch, which says what is wrong); a file that does not name a key of
    :data:`FAST_PATH` predates it and goes to torch too."""
    if header is None or header.get("name") != "skip_lstm" or header.get("format_version") not in FORMAT_VERSIONS:
        return None
    values = header.get("config")
    if not isinstance(values, dict) or not FAST_PATH.keys() <= values.keys():
        return None
    try:
        config = config_from_dict(TaggerConfig, values, from_file=True)
    except (TaggerError, ValueError, TypeError):
        return None
    return config if supports_fast_path(config) else None


def supported(header: dict[str, Any] | None) -> bool:
    """Whether :class:`NumpyTagger` computes the model of a model file (its plain data,
    :func:`read_archive`; tensors need not be read): :func:`fast_config`."""
    return fast_config(header) is not None


def load(path: str | os.PathLike, kernel: Kernel = NUMPY) -> "NumpyTagger | None":
    """The tagger in a model file, to run without torch, its products by ``kernel``
    (:mod:`tagger.runtime.kernels`: float32 or bf16; by default numpy's float32 a time step at a
    time); None for any other (see the module text)."""
    config = fast_config(read_archive(path, peek=True))  # another model's weights are not read
    plain = read_archive(path) if config is not None else None
    return from_archive(plain, kernel) if plain is not None else None


def from_archive(plain: dict[str, Any], kernel: Kernel = NUMPY) -> "NumpyTagger | None":
    """:func:`load` from a model file's (or pipeline stage's) plain data, tensors read."""
    config = fast_config(plain)
    if config is None:
        return None
    try:
        return NumpyTagger(config, plain["vocabs"], plain["state_dict"], kernel)
    except (KeyError, ValueError, TypeError):
        return None


def length_batches(sentences: Sequence[Sequence[str]], most: int) -> list[list[int]]:
    """The indices of the non-empty ``sentences`` in batches by length (shortest first), each of at
    most ``most`` padded tokens (or one sentence)."""
    order = sorted((i for i, words in enumerate(sentences) if words), key=lambda i: len(sentences[i]))
    batches: list[list[int]] = [[]]
    for i in order:
        if batches[-1] and (len(batches[-1]) + 1) * len(sentences[i]) > most:
            batches.append([])
        batches[-1].append(i)
    return [batch for batch in batches if batch]


@dataclass
class WordTables:
    """The first layer's per-word products: ``rows`` form → row, ``tables`` [U+1, d·2·G] (the
    table of window slot j and direction at column block 2j + direction), ``gate_in`` [U+1, d·d]
    the window gates' terms (None without window gates), ``ids`` form → row of the word
    vocabulary (what a tag dictionary reads)."""

    rows: dict[str, int]
    tables: np.ndarray
    gate_in: np.ndarray | None
    ids: dict[str, int] = field(default_factory=dict)


@dataclass
class Tagging:
    """A chunk begun by :meth:`NumpyTagger.start`: its sentences, their batches (indices, by
    length), how a batch is scored, and the scores on their way (futures) or None (to compute)."""

    sentences: Sequence[Sequence[str]]
    batches: list[list[int]]
    run: Any
    scores: list[Future] | None
    words: "WordTables | None" = None  # the per-word rows its batches read (None: numpy's steps)


class NumpyTagger:
    """The forward pass of a skip-LSTM tagger in numpy, for :meth:`tag` only."""

    #: the columns it reads besides the words (a chain's interface: none)
    input_columns: list[str] = []

    def __init__(self, config: TaggerConfig | dict[str, Any], vocabs: dict[str, list[str]], state: dict[str, Any],
                 kernel: Kernel = NUMPY, output: Output | None = None):
        """The tagger of ``config`` (or a model file's config values), its ``vocabs`` and the
        plain ``state`` dict (numpy arrays or CPU tensors; :func:`tagger.models.skip_lstm.export.export`
        reads it); ``kernel``: what multiplies (:class:`tagger.runtime.kernels.Kernel`: the
        float32 or bf16 kernels of the C steps, or numpy a time step at a time); ``output``: an
        output layer in place of the state's (a parser's encoder: :meth:`scores` then gives its
        products, and there are no columns to tag)."""
        if not isinstance(config, TaggerConfig):
            config = fast_config({"name": "skip_lstm", "format_version": FORMAT_VERSIONS[-1], "config": config})
        if config is None or not supports_fast_path(config):
            raise ValueError("not a configuration computed here")
        self.kernel = kernel if _fastscan is not None else NUMPY
        if self.kernel.i8 and config.hidden % 4:  # the int8 kernels take rows of a multiple of 4 bytes
            self.kernel = Kernel(f32=self.kernel.f32)
        arrays = export(config, vocabs, state, packed=self.kernel.packing, output=output,
                        top=self.kernel.weight_max or 127)
        self.arrays = arrays
        self.columns = arrays.columns
        self.output_columns = self.columns  # what write_chunk reads
        self.window, self.layers, self.first = arrays.window, arrays.layers, arrays.first
        self.featurizer = InputFeaturizer(Vocab.from_list(lookup_words(vocabs)), Vocab.from_list(vocabs["chars"]),
                                          arrays.char_length, 0, *subword_featurizing(config, vocabs))
        self.embeddings, self.gates_w, self.gates_b = arrays.embeddings, arrays.gates_w, arrays.gates_b
        self.labels, self.heads = arrays.labels, arrays.heads
        self.names = [np.array(labels, dtype=object) for labels in self.labels]  # to index by a batch's best
        self.w_out, self.b_out = arrays.w_out, arrays.b_out
        self.packed_first, self.packed_out = arrays.packed_first, arrays.packed_out
        self.kept: WordTables | None = None  # the per-word products of the words seen so far (word_rows)
        self.local = threading.local()  # per thread, the arrays of scores_packed (workspace)

    def tag(self, sentences: Sequence[Sequence[str]], threads: int = 1) -> list[dict[str, list[str]]]:
        """Per sentence (its words), ``{column: labels}`` for every output column; with the C
        steps and ``threads`` > 1, that many batches at once (the products and the C steps run
        without the GIL)."""
        if threads <= 1 or _fastscan is None:
            return self.finish(self.start(sentences))
        from tagger.runtime.pool import Pool

        with Pool(threads) as pool:
            return self.finish(self.start(sentences, pool))

    def start(self, sentences: Sequence[Sequence[str]], pool: Pool | None = None) -> "Tagging":
        """Begins tagging ``sentences``: the first layer's rows for their words, their batches,
        and (with the C steps) the batches handed to ``pool`` to run, if one is given; the labels
        come from :meth:`finish`. While a chunk's batches run, the next chunk can be started
        (its new word rows are written past the rows the running batches read)."""
        kernel = self.kernel
        most = (KERNEL_MAX_TOKENS if kernel.bf16 else I8_MAX_TOKENS if kernel.i8 else F32_MAX_TOKENS if kernel.f32
                else MAX_TOKENS)
        batches = length_batches(sentences, most)
        words = None
        if _fastscan is not None:  # the first layer's per-word products once per word, kept across calls
            words = self.word_rows(list(dict.fromkeys(chain.from_iterable(sentences))), pool)
        run = lambda batch: self.scores([sentences[i] for i in batch], words)  # noqa: E731 - [T, B, S]
        scores = [pool.submit(run, batch) for batch in batches] if pool is not None and words is not None else None
        return Tagging(sentences, batches, run, scores, words)

    def finish(self, tagging: "Tagging") -> list[dict[str, list[str]]]:
        """The labels of a chunk begun by :meth:`start` (its batches run here if no pool runs them)."""
        out: list[dict[str, list[str]]] = [{column: [] for column in self.columns} for _ in tagging.sentences]
        results = (s.result() for s in tagging.scores) if tagging.scores is not None else map(tagging.run, tagging.batches)
        for batch, scores in zip(tagging.batches, results):
            self.best(scores, batch, tagging.sentences, out, tagging.words)
        return out

    def best(self, scores: np.ndarray, batch: list[int], sentences: Sequence[Sequence[str]],
             out: list[dict[str, list[str]]], kept: "WordTables | None" = None) -> None:
        """Each column's best labels from ``scores`` [T, B, S] into ``out`` for the sentences
        ``batch``, where a column has a tag dictionary the best its words may have
        (:meth:`TagLexicon.fix`; the words' rows in the vocabulary from ``kept``, else featurised)."""
        words = None
        if any(self.arrays.lexicons):  # each token's word row [T, B] (0: padding)
            lookup = kept.ids.__getitem__ if kept is not None else (lambda word: self.featurizer.token(word)[0])
            chosen = [sentences[i] for i in batch]
            lengths = np.fromiter(map(len, chosen), dtype=np.intp, count=len(chosen))
            flat = np.fromiter(map(lookup, chain.from_iterable(chosen)), dtype=np.intp, count=int(lengths.sum()))
            words = np.zeros(scores.shape[1::-1], dtype=np.intp)  # [B, T]
            words[np.arange(scores.shape[0]) < lengths[:, None]] = flat
            words = words.T
        for column, (start, stop), labels, lexicon in zip(self.columns, self.heads, self.names, self.arrays.lexicons):
            head = scores[..., start:stop]
            best = head.argmax(-1)
            if lexicon is not None:
                lexicon.fix(head.reshape(-1, stop - start), best.reshape(-1), words.reshape(-1))
            best = labels[best.T].tolist()  # [B, T] label strings
            for i, row in zip(batch, best):
                out[i][column] = output_values(sentences[i], column, row[: len(sentences[i])])

    def scores(self, sentences: Sequence[Sequence[str]], words: "WordTables | None" = None,
               extra: np.ndarray | None = None) -> np.ndarray:
        """Label scores [T, B, S] of B non-empty sentences (padding and RARE at -inf); ``words``:
        the per-word products of :meth:`word_rows` for their words (made here if not given);
        ``extra`` [T, B, 2, G]: more of the first layer's input product per token and direction,
        in sentence order (a parser's encoder reading the POS tags: their rows)."""
        if _fastscan is not None:
            if words is None:
                words = self.word_rows(list(dict.fromkeys(chain.from_iterable(sentences))))
            if self.kernel:
                return self.scores_packed(sentences, words, extra)
            return self.scores_fused(sentences, words, extra)
        lengths = np.array([len(words) for words in sentences])
        steps, batch, half = int(lengths.max()), len(sentences), self.window // 2
        forms = list(dict.fromkeys(chain.from_iterable(sentences)))
        row_of = {form: row for row, form in enumerate(forms, 1)}
        rows = np.zeros((steps + 2 * half, batch), dtype=np.intp)  # each token's row in the window (0: none)
        for b, words in enumerate(sentences):
            rows[half : half + len(words), b] = [row_of[w] for w in words]
        t = np.arange(steps)[:, None]
        rev = np.where(t < lengths, lengths - 1 - t, t)  # [T, B] scan step <-> position of the backward scan
        cols = np.arange(batch)
        projected = self.project(self.features(forms), rows, steps)  # [T, B, 2, G] in sentence order
        outputs = []  # per layer, [T, 2, B, H] in scan order
        with np.errstate(over="ignore"):  # exp(-z) overflows to inf for very negative z: σ is then 0, as it should be
            for i, layer in enumerate(self.layers):
                gx = np.empty((2, steps, batch, layer.w_x.shape[-1]), dtype=np.float32)  # [2, T, B, G]
                if i == 0:
                    gx[0], gx[1] = projected[:, :, 0], projected[rev, cols, 1]
                    if extra is not None:
                        gx[0] += extra[:, :, 0]
                        gx[1] += extra[rev, cols, 1]
                else:
                    gx[0] = x @ layer.w_x[0] + layer.bias[0]
                    gx[1] = x[rev, cols] @ layer.w_x[1] + layer.bias[1]
                k = outputs[i - 2] if layer.u_k is not None else None
                if k is not None:  # γ's U h^{l-2} joins the g block
                    hidden = layer.u_k.shape[-1]
                    gx[..., 3 * hidden : 4 * hidden] += (k @ layer.u_k).transpose(1, 0, 2, 3)
                outputs.append(lstm_layer(gx, layer.w_h, k, fused=False))
                h = outputs[-1]
                x = np.concatenate([h[:, 0], h[:, 1][rev, cols]], -1)  # [T, B, 2H] in sentence order
        return x @ self.w_out + self.b_out

    def word_rows(self, forms: list[str], pool: Pool | None = None) -> "WordTables":
        """The first layer's per-word products with rows for every form of ``forms`` (row 0: no
        word). Rows are kept across calls, so that a stream's frequent words are computed once,
        up to :data:`KEPT_BYTES`; past that a new table starts with the rows of ``forms`` the
        old one holds, copied (:meth:`restart`), and the others computed. A row depends on its
        word alone (each product row is one word's features times the weights). With a ``pool``
        of several threads, the products run there, in parts (:meth:`first_products`)."""
        kept = self.kept
        table_type = self.kernel.table_type  # bf16 bits for the bf16 kernels
        row_bytes = self.first.shape[1] * np.dtype(table_type).itemsize + (
            0 if self.gates_w is None else self.gates_w.shape[1] * 4)
        room = max(len(forms) + 1, KEPT_BYTES // row_bytes + 1)
        new = forms if kept is None else [form for form in forms if form not in kept.rows]
        if kept is None or len(kept.rows) + 1 + len(new) > len(kept.tables):
            kept = self.kept = self.restart(kept, forms, room, table_type)
            new = [form for form in forms if form not in kept.rows]
        if not new:
            return kept
        start, stop = len(kept.rows) + 1, len(kept.rows) + 1 + len(new)
        f = self.features(new, kept.ids)[1:]
        self.first_products(f, kept.tables[start:stop], pool)
        if kept.gate_in is not None:
            np.matmul(f, self.gates_w, out=kept.gate_in[start:stop])
        kept.rows.update(zip(new, range(start, stop)))
        return kept

    def restart(self, old: "WordTables | None", forms: list[str], room: int, table_type: Any) -> "WordTables":
        """A new table of ``room`` rows (row 0, no word, zero; all of them at once: zero pages
        cost nothing until written) holding the rows of ``old`` for the words of ``forms``, copied
        (on EWT train, `fast`: 19,674 words, 8,169 rows a table; starting empty instead, 33,254
        rows were computed). Batches still running read ``old``, which is not written."""
        tables = np.zeros((room, self.first.shape[1]), dtype=table_type)
        gate_in = None if self.gates_w is None else np.zeros((room, self.gates_w.shape[1]), dtype=np.float32)
        fresh = WordTables({}, tables, gate_in)
        held = [form for form in forms if form in old.rows] if old is not None else []
        if held:
            rows = np.fromiter(map(old.rows.__getitem__, held), dtype=np.intp, count=len(held))
            np.take(old.tables, rows, axis=0, out=tables[1 : len(held) + 1])
            if gate_in is not None:
                np.take(old.gate_in, rows, axis=0, out=gate_in[1 : len(held) + 1])
            fresh.rows.update(zip(held, range(1, len(held) + 1)))
            fresh.ids.update((form, old.ids[form]) for form in held)
        return fresh

    def first_products(self, f: np.ndarray, out: np.ndarray, pool: Pool | None = None) -> None:
        """``out`` [U, d·2·G] = the first layer's products of the words' features ``f`` [U, F]:
        numpy's without a kernel, else the kernel's (the int8 one from codes at a scale per word).
        With a ``pool`` of several threads and a float32 or int8 kernel, they run there, in parts
        of at least :data:`PART_ROWS` rows: its threads would otherwise wait for this one (on EWT
        train, two threads, close to half their time). With one, this thread computes them while
        the pool's runs batches."""
        if not self.kernel:
            np.matmul(f, self.first, out=out)
            return
        if self.kernel.i8:
            left, by_row = row_codes(f, self.packed_first.k)
        else:
            left, by_row = self.kernel.left(f), None
        shared = pool is not None and pool.threads > 1 and not self.kernel.bf16  # (bf16 rows come in tiles)
        parts = max(1, min(PARTS, len(f) // PART_ROWS)) if shared else 1
        if parts == 1:
            kernels.product(self.kernel, left, self.packed_first, out, by_row=by_row)
            return

        def run(start: int, stop: int) -> None:
            kernels.product(self.kernel, left[start:stop], self.packed_first, out[start:stop],
                            by_row=None if by_row is None else by_row[start:stop])
        bounds = [len(f) * i // parts for i in range(parts + 1)]
        for done in [pool.submit(run, a, b) for a, b in zip(bounds, bounds[1:])]:
            done.result()

    def scores_fused(self, sentences: Sequence[Sequence[str]], words: "WordTables",
                     extra: np.ndarray | None = None) -> np.ndarray:
        """:meth:`scores` with the C steps of the torch path (:mod:`tagger.modules._fastscan`)
        and its layout: direction 1 scans the whole batch reversed in time, its state reset in
        the padding it starts in (:func:`tagger.modules.recurrent.padding_mask`); the first
        layer's window sum, the input products' scan order and each time step after its product
        in C, the products in numpy (float32)."""
        steps, batch = max(map(len, sentences)), len(sentences)
        gx = np.empty((2, steps, batch, self.layers[0].w_x.shape[-1]), dtype=np.float32)
        mask = self.first_layer(sentences, words, gx, extra)
        outputs: list[np.ndarray] = []  # per layer, [T, 2, B, H] in scan order
        x = None
        for i, layer in enumerate(self.layers):
            hidden, width = layer.w_h.shape[1], layer.w_h.shape[2]
            if i > 0:
                product = x.reshape(steps * batch, -1) @ layer.both  # [T·B, 2G]
                gx = np.empty((2, steps, batch, width), dtype=np.float32)
                _fastscan.scan_order(steps, batch, width, product.ctypes.data, False, 2 * width, layer.bias.ctypes.data,
                                     width, gx.ctypes.data)
            k = outputs[i - 2] if layer.u_k is not None else None
            if k is not None:  # γ's U h^{l-2} joins the g block
                for direction in range(2):
                    gx[direction, ..., 3 * hidden : 4 * hidden] += k[:, direction] @ layer.u_k[direction]
            outputs.append(lstm_layer(gx, layer.w_h, k, mask, fused=True))
            h = outputs[-1]
            x = np.concatenate([h[:, 0], h[::-1, 1]], -1)  # [T, B, 2H] in sentence order
        return x @ self.w_out + self.b_out

    def first_layer(self, sentences: Sequence[Sequence[str]], words: "WordTables", gx: np.ndarray,
                    extra: np.ndarray | None = None) -> np.ndarray | None:
        """The first layer's input projection of B non-empty sentences into ``gx`` [2, T, B, G]
        in scan order (``_fastscan.window_sum`` from the per-word rows ``words``, float32 or bf16
        as they are kept; ``extra`` [T, B, 2, G] in sentence order added: direction 1 scans the
        padded batch reversed in time); returns the padding mask [P, 2, B] of the first P = T - (the shortest
        length) steps (1: a word, 0: padding; direction 1 reversed in time), or None."""
        _, steps, batch, width = gx.shape
        lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=batch)
        row_of = words.rows.__getitem__
        types = np.zeros((steps, batch), dtype=np.int64)  # each token's row (0: padding)
        for b, sentence in enumerate(sentences):
            types[: len(sentence), b] = list(map(row_of, sentence))
        tables, gate_in, d = words.tables, words.gate_in, self.window
        _fastscan.window_sum(steps, batch, width, d, tables.ctypes.data, tables.dtype == np.uint16, width,
                             tables.shape[1], 0 if gate_in is None else gate_in.ctypes.data, d * d,
                             0 if gate_in is None else self.gates_b.ctypes.data, types.ctypes.data,
                             self.layers[0].bias.ctypes.data, width, gx.ctypes.data)
        if extra is not None:
            gx[0] += extra[:, :, 0]
            gx[1] += extra[::-1, :, 1]
        masked = steps - int(lengths.min())
        if masked <= 0:
            return None
        t = np.arange(masked)[:, None]
        return np.ascontiguousarray(np.stack([t < lengths, steps - 1 - t < lengths], 1), dtype=np.float32)

    def scores_packed(self, sentences: Sequence[Sequence[str]], words: "WordTables",
                      extra: np.ndarray | None = None) -> np.ndarray:
        """:meth:`scores_fused` with every product by the kernel (:mod:`tagger.runtime.kernels`:
        float32, or bf16 with fp32 sums and the per-word rows kept in bf16): each upper layer's
        input projection one product (both directions, in sentence order, the scan reading
        direction 1 backwards; with the int8 and float32 kernels inside the layer's scan, a time step at a
        time: :func:`tagger.runtime.kernels.scan_upper`), each layer's time loop in one C call,
        its outputs kept in sentence order as the next product's input (and in scan order only
        where a shortcut reads them)."""
        steps, batch, kernel, work = max(map(len, sentences)), len(sentences), self.kernel, self.workspace()
        gx = work.take("gx", (2, steps, batch, self.layers[0].w_x.shape[-1]), np.float32)
        mask = self.first_layer(sentences, words, gx, extra)
        inputs: list[np.ndarray] = []  # per layer, its outputs in sentence order (bf16 rows t·B + b)
        outputs: list[np.ndarray | None] = []  # per layer, [T, 2, B, H] in scan order where a shortcut reads it
        for i, layer in enumerate(self.layers):
            hidden, width = layer.w_h.shape[1], layer.w_h.shape[2]
            read = i + 2 < len(self.layers) and self.layers[i + 2].u_k is not None
            out = work.take(f"out{i % 3}", (steps, 2, batch, hidden), np.float32) if read else None
            xs = kernel.rows(work, f"xs{i % 3}", steps * batch, 2 * hidden)
            if i > 0 and not kernel.bf16:  # the input product and shortcut term in the scan, a step at a time
                kernels.scan_upper(kernel, inputs[-1], layer.packed_x, layer.bias_x,
                                      inputs[-2] if layer.packed_u is not None else None, layer.packed_u,
                                      layer.packed_h, hidden, outputs[i - 2] if layer.u_k is not None else None,
                                      mask, out, xs, steps, batch)
            else:
                block = 0  # gx in scan order (the first layer's window sums); above, the product's rows
                if i > 0:
                    block = bf16.up(width, 16)
                    gx = work.take("gx", (steps * batch, 2 * block), np.float32)
                    kernels.product(kernel, inputs[-1], layer.packed_x, gx, layer.bias_x)
                if layer.packed_u is not None:  # γ's U h^{l-2} joins each direction's g block
                    kernels.product(kernel, inputs[-2], layer.packed_u, gx, block=bf16.up(hidden, 16), stride=block,
                                    offset=3 * hidden, count=hidden, add=True)
                kernels.scan(kernel, gx, layer.packed_h, hidden, outputs[i - 2] if layer.u_k is not None else None,
                             mask, out, xs, steps, batch, block)
            inputs.append(xs)
            outputs.append(out)
        scores = np.empty((steps * batch, len(self.b_out)), dtype=np.float32)
        kernels.product(kernel, inputs[-1], self.packed_out, scores, self.b_out)
        return scores.reshape(steps, batch, -1)

    def workspace(self) -> bf16.Workspace:
        """This thread's arrays for :meth:`scores_packed`."""
        work = getattr(self.local, "work", None)
        if work is None:
            work = self.local.work = bf16.Workspace()
        return work

    def features(self, forms: list[str], ids: dict[str, int] | None = None) -> np.ndarray:
        """f = [E_w(w); E_a(a); E_c(chars); E_s(units)] of each form, [U+1, F]; row 0 (no word)
        zero; ``E_s``, with a subword embedding, the mean of the known units' rows. Each form's
        row of the word vocabulary goes into ``ids``, if given."""
        words, caps, chars, _, units = zip(*map(self.featurizer.token, forms))  # (no CNN spelling)
        if ids is not None:
            ids.update(zip(forms, words))
        ids = (np.array(words), np.array(caps), np.array(chars, dtype=np.intp).reshape(len(forms), -1))
        pretrained = self.arrays.pretrained
        if pretrained is not None:  # E(w) + P v(w); the words only the table holds read UNK's (1) E
            ids = (np.where(ids[0] >= len(self.embeddings[0]), 1, ids[0]), *ids[1:])
        parts = [table[values].reshape(len(forms), -1) for table, values in zip(self.embeddings, ids) if table is not None]
        if pretrained is not None:
            parts[0] = parts[0] + pretrained[np.array(words)].astype(np.float32) @ self.arrays.project
        if self.arrays.subwords is not None:
            parts.append(bags(self.arrays.subwords, units))
        f = np.zeros((len(forms) + 1, sum(part.shape[1] for part in parts)), dtype=np.float32)
        f[1:] = np.concatenate(parts, -1)
        return f

    def project(self, f: np.ndarray, rows: np.ndarray, steps: int) -> np.ndarray:
        """The first layer's input projection ``Σ_j r_j(t) f_{t+j} W_j + b`` [T, B, 2, G], in
        sentence order, from the features ``f`` [U+1, F] and the rows [T + 2·half, B] of the
        words in the window (0: none)."""
        d = self.window
        tables = (f @ self.first).reshape(len(f), d, 2, -1)  # [U+1, d, 2, G]
        gates = None
        if self.gates_w is not None:
            gate_in = (f @ self.gates_w).reshape(len(f), d, d)  # [U+1, slot j, gate]
            total = gate_in[rows[:steps], 0]
            for j in range(1, d):
                total += gate_in[rows[j : j + steps], j]
            gates = total
            gates += self.gates_b
            sigmoid_(gates)  # [T, B, d]
        out = np.empty((steps, rows.shape[1], 2, tables.shape[-1]), dtype=np.float32)
        out[...] = self.layers[0].bias[:, 0]
        for j in range(d):
            term = tables[rows[j : j + steps], j]  # [T, B, 2, G]
            if gates is not None:
                term *= gates[:, :, j, None, None]
            out += term
        return out


def bags(table: np.ndarray, units: Sequence[Sequence[int]]) -> np.ndarray:
    """The mean of ``table``'s rows [N, dim] for each word's unit ids (zero where it has none),
    as :meth:`tagger.modules.input_layer.InputLayer.bag` computes it."""
    counts = np.fromiter(map(len, units), dtype=np.intp, count=len(units))
    out = np.zeros((len(units), table.shape[1]), dtype=np.float32)
    if counts.any():
        np.add.at(out, np.repeat(np.arange(len(units)), counts), table[np.fromiter(chain.from_iterable(units), dtype=np.intp)])
        out /= np.maximum(counts, 1)[:, None]
    return out


def usable_cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def products(header: dict[str, Any] | None, precision: str, small: bool) -> Kernel | None:
    """How an input is tagged: None by torch, or here by a :class:`~tagger.runtime.kernels.Kernel`:
    float32 (the C kernels of :func:`~tagger.runtime.kernels.f32_kernel`, or numpy a time step at
    a time where they are not built or are turned off), int8 beside float32, or bf16
    (:func:`tagger.runtime.bf16.bf16_kernel`).

    ``--precision bf16``, and ``auto`` on a large input: the bf16 kernels wherever they run (a
    CPU with AMX or AVX512-BF16; docs/benchmarks.md, "Tagging speed": faster than torch's bf16
    products at any size); ``fp32``: float32 here (a small input, of at most :data:`NUMPY_TOKENS`
    tokens, the first line at once: numpy a step at a time, the model's right sides not packed).
    Otherwise, with the C steps built,
    ``auto`` takes: AMX's bf16 kernel where it runs; else the int8 kernels beside the float32
    ones (:func:`~tagger.runtime.kernels.i8_kernel`) where they are VNNI's dot products (faster
    than AVX512-BF16's: on the AMX Xeon, `fast`, two threads, 71,909 tokens/s against 42,783), or
    on a CPU without native bf16 (where torch would multiply in float32: AVX2's); else the
    AVX512-BF16 kernel where it pays; float32 here on a CPU without native bf16 or for models
    of at most :data:`NUMPY_HIDDEN` cells a layer; torch for the rest (``bf16`` without the
    kernels)."""
    if not supported(header):
        return None
    hidden = (header.get("config") or {}).get("hidden")
    return kernel_for(precision, small, hidden if isinstance(hidden, int) else None)


def kernel_for(precision: str, small: bool, hidden: int | None) -> Kernel | None:
    """:func:`products` for models the runtimes compute whose widest layer has ``hidden`` cells (None: unknown)."""
    if precision == "bf16":
        number = bf16_kernel()
        return Kernel(bf16=number) if number else None
    if small:  # the first line at once: no packing for the kernels (25 ms for `fast`; before the bf16
        return NUMPY  # kernel is asked for, which may measure for 20 ms)
    here = Kernel(f32=f32_kernel())
    if _fastscan is None or precision not in ("fp32", "auto"):
        return None
    if precision == "fp32":
        return here
    number = bf16_kernel()
    if number == KERNELS.index("amx"):
        return Kernel(bf16=number)
    i8 = kernels.i8_kernel() if here.f32 else 0
    if i8 >= I8_KERNELS.index("avx-vnni") or (i8 and not cpu_has_bf16()):  # int8 products (issue 33)
        return Kernel(f32=here.f32, i8=i8)
    if number:
        return Kernel(bf16=number)
    return here if not cpu_has_bf16() or (hidden is not None and hidden <= NUMPY_HIDDEN) else None
