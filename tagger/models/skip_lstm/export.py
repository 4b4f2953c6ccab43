"""The skip-LSTM tagger's inference arrays, from its plain state dict, without torch: the one
accessor the fast path (:mod:`tagger.runtime.skip_lstm` and the C kernels) reads a model
through, as spaCy's parser reads its C weights through ``get_c_weights``.

:func:`export` takes the ``state_dict`` of a model file (numpy arrays, :func:`tagger.archive.read`)
or of a live :class:`~tagger.models.skip_lstm.SkipLSTMTagger` (``model.state_dict()``, tensors on
the CPU) and gives the same arrays from both (tests/test_schema_export.py): the first layer as one
table per window slot and direction, each layer's two directions stacked and side by side, the
output layer with padding and RARE never chosen, and with ``packed`` every right-hand side packed
for the bf16, the float32 or the int8 kernels (:mod:`tagger.modules.packing`). The weights it expects are named by the
model's own layout (:meth:`SkipLSTMTagger.state_dict`); any other set is a ValueError.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from tagger.corpus.lexicon import LEXICON, LEXICON_MIN, TagLexicon
from tagger.corpus.vocab import PAD
from tagger.models.skip_lstm.config import RARE, TaggerConfig, subword_table
from tagger.modules import packing

#: The input layer's embeddings (word, capitalisation, characters), in the order of the features.
EMBEDDINGS = ("input.word.weight", "input.caps.weight", "input.char.weight")


@dataclass
class Layer:
    """One bidirectional layer, both directions stacked: ``w_x`` [2, D, G], ``w_h`` [2, H, G],
    ``bias`` [2, 1, G] with G = 4H (blocks i, f, o, s) or, with the shortcut, 5H (i, f, o, g, s);
    ``u_k`` [2, H, H] the shortcut's term in g, or None."""

    w_x: np.ndarray
    w_h: np.ndarray
    bias: np.ndarray
    u_k: np.ndarray | None
    #: ``w_x`` of both directions side by side [D, 2G] (one product for both, as the C path takes it)
    both: np.ndarray
    #: for the kernels (None without): W_h, w_x of both directions (layers above the first)
    #: and the shortcut's U of both (layers with one), packed
    packed_h: packing.Packed | None = None
    packed_x: packing.Packed | None = None
    packed_u: packing.Packed | None = None
    #: the bias laid out as the columns of ``packed_x``'s product [2·block]
    bias_x: np.ndarray | None = None


@dataclass
class TaggerArrays:
    """What the fast path computes a skip-LSTM tagger from."""

    columns: list[str]  # the output columns, in order
    labels: list[list[str]]  # each output column's labels
    heads: list[tuple[int, int]]  # [start, stop) of each output column's scores
    window: int
    char_length: int
    embeddings: list[np.ndarray | None]  # word, caps and char embeddings [V, dim] (None: off), as stored (float16 or float32)
    first: np.ndarray  # the first layer's W_x as [F, d·2·G]: the block of (window slot j, direction) at 2j + direction
    gates_w: np.ndarray | None  # the window gates [F, d·d] (slot j, gate), or None
    gates_b: np.ndarray | None  # their bias [d]
    layers: list[Layer]
    w_out: np.ndarray  # [2H, S]
    b_out: np.ndarray  # [S]; padding and RARE at -inf
    packed_first: packing.Packed | None = field(default=None)  # for the kernels: ``first`` and ``w_out`` packed
    packed_out: packing.Packed | None = field(default=None)
    #: the frozen table of pretrained vectors [R, P] (float16 or float32 as the file stores it, a
    #: row made float32 where it is read: exact; rows past the word embedding's are words only it
    #: holds) and its projection [P, word_dim], or None
    pretrained: np.ndarray | None = field(default=None)
    project: np.ndarray | None = field(default=None)
    #: the subword units' embedding [units, dim] (row 0 zero), last in the features, or None
    subwords: np.ndarray | None = field(default=None)
    #: each output column's tag dictionary (None: any label), over the word vocabulary's rows
    lexicons: list[TagLexicon | None] = field(default_factory=list)


def plain(value: Any, keep_half: bool = False) -> np.ndarray:
    """A weight as contiguous float32 numpy: a numpy array, or a CPU tensor (torch not imported
    here); with ``keep_half``, a float16 one stays float16 (a frozen table, whose rows are made
    float32 where they are read: exact)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.ascontiguousarray(value, dtype=np.float16 if keep_half and value.dtype == np.float16 else np.float32)


@dataclass
class Output:
    """An output layer given instead of the tagger's own, for a network that is the tagger's
    without its output layer (a transition parser's encoder, whose output is its token-slot
    rows: :mod:`tagger.models.transition_parser.export`)."""

    weight: np.ndarray  # [2H, S]
    bias: np.ndarray  # [S]


def expected_keys(config: TaggerConfig, output: bool = True, subwords: bool = False) -> set[str]:
    """The state dict's names for a model of ``config`` on the fast path (``output``: with its
    output layer; ``subwords``: with a subword embedding, which the vocabularies decide:
    :func:`~tagger.models.skip_lstm.config.subword_table`)."""
    d, layers = config.window, config.layers
    present = [config.word_dim > 0, config.caps_dim > 0, config.char_dim > 0 and config.char_length > 0]
    keys = {name for name, on in zip(EMBEDDINGS, present) if on} | ({"output.weight", "output.bias"} if output else set())
    keys |= {"input.gates.weight", "input.gates.bias"} if d > 1 and config.window_gates else set()
    keys |= {f"rnn.layers.{i}.{w}" for i in range(layers) for w in ("w_x", "w_h", "bias")}
    keys |= {"input.pretrained", "input.project.weight"} if config.pretrained_dim else set()
    keys |= {"input.subword.weight"} if subwords else set()
    return keys | {f"rnn.layers.{i}.u_k" for i in range(2, layers)}


def export(config: TaggerConfig, vocabs: Mapping[str, Sequence[str]], state: Mapping[str, Any],
           packed: str = "", output: Output | None = None, top: int = 127) -> TaggerArrays:
    """The inference arrays of a tagger of ``config`` (:func:`~tagger.models.skip_lstm.config.supports_fast_path`
    must hold) from its ``vocabs`` and ``state`` dict; ``packed``: the products' right sides packed
    too, for the ``"bf16"``, the ``"f32"`` or the ``"i8"`` kernels (:func:`pack_for_kernels`; int8
    weights of at most ``top``: :attr:`tagger.runtime.kernels.Kernel.weight_max`);
    ``output``: an output layer in place of the state's (which then has none; no output columns).
    A ValueError when the weights are not those of this configuration."""
    units, unit_dim = subword_table(config, vocabs)
    if set(state) != expected_keys(config, output is None, units > 0):
        raise ValueError("the weights are not those of this configuration")
    hidden, d, length = config.hidden, config.window, config.char_length
    sizes = [config.word_dim, config.caps_dim, config.char_dim]
    embeddings = [plain(state[name], keep_half=True) if name in state else None for name in EMBEDDINGS]
    features = sizes[0] + sizes[1] + (2 * length * sizes[2] if embeddings[2] is not None else 0) + unit_dim
    if d < 1 or d % 2 == 0:
        raise ValueError("the window is an odd number of words")
    if d * features == hidden and config.layers > 1:
        raise ValueError("an input as wide as the layers is a shortcut source: left to torch")
    layers = [_layer(state, i, d * features if i == 0 else 2 * hidden, hidden) for i in range(config.layers)]
    first = layers[0].w_x  # [2, d·F, G] as one matrix [F, d·2·G]: the block of (slot j, direction)
    first = np.ascontiguousarray(first.reshape(2, d, features, -1).transpose(2, 1, 0, 3).reshape(features, -1))
    gates_w = gates_b = None
    if "input.gates.weight" in state:
        gates_w = np.ascontiguousarray(plain(state["input.gates.weight"]).reshape(d, d, features).transpose(2, 1, 0)
                                       .reshape(features, d * d))
        gates_b = plain(state["input.gates.bias"])
    if output is None:
        columns, labels, heads, w_out, b_out = _output_layer(config, vocabs, state)
    else:
        columns, labels, heads = [], [], []
        w_out, b_out = plain(output.weight), plain(output.bias).copy()
        if w_out.shape != (2 * hidden, len(b_out)):
            raise ValueError("the output layer given does not fit the configuration")
    for (start, _), names in zip(heads, labels):
        for special in (PAD, RARE):
            if special in names:
                b_out[start + names.index(special)] = -np.inf
    arrays = TaggerArrays(columns, labels, heads, d, length, embeddings, first, gates_w, gates_b, layers, w_out, b_out)
    arrays.lexicons = [lexicon_of(config, vocabs, key, len(names)) for key, names in zip(label_keys(columns), labels)]
    if config.pretrained_dim:
        arrays.pretrained = plain(state["input.pretrained"], keep_half=True)  # (shipped model: 17 ms, 17 MB)
        arrays.project = np.ascontiguousarray(plain(state["input.project.weight"]).T)
        if arrays.project.shape != (config.pretrained_dim, config.word_dim):
            raise ValueError("the pretrained vectors' projection does not fit the configuration")
    if units:
        arrays.subwords = plain(state["input.subword.weight"])
        if arrays.subwords.shape != (units, unit_dim):
            raise ValueError("the subword embedding does not fit the vocabularies")
    if packed not in ("", "bf16", "f32", "i8"):
        raise ValueError(f"no kernels {packed!r}")
    if packed:
        pack_for_kernels(arrays, packed, top)
    return arrays


def _output_layer(config: TaggerConfig, vocabs: Mapping[str, Sequence[str]], state: Mapping[str, Any]
                  ) -> tuple[list[str], list[list[str]], list[tuple[int, int]], np.ndarray, np.ndarray]:
    """The tagger's own output layer: its columns, their labels and score ranges, ``w_out`` [2H, S], ``b_out`` [S]."""
    columns = config.columns
    labels = [list(vocabs[key]) for key in label_keys(columns)]
    stops = np.cumsum([len(names) for names in labels]).tolist()
    total = stops[-1] + (len(vocabs["aux_tags"]) if config.aux_column else 0)
    w_out, b_out = np.ascontiguousarray(plain(state["output.weight"]).T), plain(state["output.bias"]).copy()
    if w_out.shape != (2 * config.hidden, total) or b_out.shape != (total,):
        raise ValueError("the output layer does not fit the vocabularies")
    return columns, labels, list(zip([0] + stops[:-1], stops)), w_out, b_out


def lexicon_of(config: TaggerConfig, vocabs: Mapping[str, Sequence[str]], key: str, size: int) -> TagLexicon | None:
    """The tag dictionary of the labels ``key`` as the model decodes with it, or None (as
    :meth:`~tagger.models.skip_lstm.SkipLSTMTagger.set_lexicons`)."""
    entries = vocabs.get(LEXICON + key)
    least = int(vocabs.get(LEXICON_MIN + key, ["0" if config.lexicon == "auto" else config.lexicon])[0])
    return TagLexicon(entries, size, least) if entries and least else None


def label_keys(columns: Sequence[str]) -> list[str]:
    """The vocabularies' keys of the labels of output ``columns`` (the first's ``tags``)."""
    return ["tags"] + [f"tags:{column}" for column in columns[1:]]


def _layer(state: Mapping[str, Any], i: int, inputs: int, hidden: int) -> Layer:
    """Layer ``i`` of the stack, ``inputs`` wide, checked."""
    prefix, width = f"rnn.layers.{i}.", (5 if i >= 2 else 4) * hidden
    w_x, w_h, bias = plain(state[prefix + "w_x"]), plain(state[prefix + "w_h"]), plain(state[prefix + "bias"])
    if w_x.shape != (2, inputs, width) or w_h.shape != (2, hidden, width) or bias.shape != (2, 1, width):
        raise ValueError("the weights do not fit the configuration")
    u_k = plain(state[prefix + "u_k"]) if i >= 2 else None
    return Layer(w_x, w_h, bias, u_k, np.ascontiguousarray(w_x.transpose(1, 0, 2).reshape(inputs, -1)))


def pack_for_kernels(arrays: TaggerArrays, kind: str, top: int = 127) -> None:
    """Every product's right side packed once for the kernels of ``kind``: ``bf16``, ``f32``, or
    ``i8`` (:func:`tagger.modules.packing.pack_i8`), each then at the scale of what it multiplies:
    a layer's outputs (its recurrent product, the next layer's input product, the shortcut of the
    layer two up, the output layer) at the scale of :func:`output_bounds`, the first layer's
    per-word rows, from embeddings of any range, at a scale per word
    (:func:`tagger.modules.packing.row_codes`); int8 weights of at most ``top``."""
    f32, i8 = kind != "bf16", kind == "i8"
    scales = [packing.scale_for(bound) if i8 else 0.0 for bound in output_bounds(arrays.layers)]
    arrays.packed_first = packing.pack_i8(arrays.first, 1.0, top) if i8 else packing.pack(arrays.first, f32)
    arrays.packed_out = packing.pack_i8(arrays.w_out, scales[-1], top) if i8 else packing.pack(arrays.w_out, f32)
    for i, layer in enumerate(arrays.layers):
        hidden = layer.w_h.shape[1]
        layer.packed_h = packing.recurrent(layer.w_h, f32, scales[i], top)
        if i:
            layer.packed_x, layer.bias_x, _ = packing.input_projection(layer.w_x, layer.bias, f32, scales[i - 1], top)
        if layer.u_k is not None:  # U of direction d reads columns dH … of the shortcut's source
            split = np.zeros((2, 2 * hidden, hidden), dtype=np.float32)
            split[0, :hidden], split[1, hidden:] = layer.u_k[0], layer.u_k[1]
            layer.packed_u = packing.directions(split, packing.up(hidden, 16), f32, scales[i - 2], top)


def output_bounds(layers: Sequence[Layer]) -> list[float]:
    """Per layer, a bound of its outputs' magnitudes: 1 (o⊙tanh(c)), plus the bound of its
    shortcut's source (γ⊙h^{l-2}, γ in (0, 1)) where it has one."""
    bounds: list[float] = []
    for i, layer in enumerate(layers):
        bounds.append(1.0 + (bounds[i - 2] if layer.u_k is not None else 0.0))
    return bounds
