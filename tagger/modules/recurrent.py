"""The configurable recurrent layer of Wu, Zhang & Zong (2016, 2017) and its stacked scan.

One cell covers the plain LSTM, the skip connections of paper 000 (to the gates, to the cell,
to the output, gated or not) and the shortcut block of paper 001 (no self-connected cell).
Variants are options of :class:`CellSpec`, never copies of the cell.

Speed: everything that does not depend on ``h_{t-1}`` (input projections, input-driven gates,
the skip term ``g ⊙ k`` when ``g`` is not recurrent) is computed for all time steps in one matrix
product before the loop. Both directions run in the same step as a batch of two (``bmm``), time-
major, the backward one on the time-reversed batch: a plain ``flip``, no per-sentence gathers. Its
scan starts in the padding of shorter sentences, so the state is masked back to zero there.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from tagger.modules.init import scaled_normal_
from tagger.modules.precision import Lowered, lowered_matmul

CELLS = ("lstm", "block")
SKIPS = ("none", "gates", "internal", "output")
# Gate on the skip term g ⊙ map(k): which signals compute g.
#   none      g = 1
#   recurrent g = σ(W_g h_{t-1} + U_g k_t + b_g)   (paper 000, Eq. 49)
#   input     g = σ(W h_t^{l-1})                   (paper 001 default)
#   hidden    g = σ(U h_{t-1})
#   skip      g = σ(V k_t)
GATES = ("none", "recurrent", "input", "hidden", "skip")
SKIP_MAPS = ("identity", "sigmoid", "tanh")


@dataclass(frozen=True)
class CellSpec:
    """What one layer computes; see the module docstring and SPEC §3."""

    cell: str = "lstm"  # "lstm" (c_t = f⊙c_{t-1} + i⊙s) or "block" (m = i⊙s, no self-connection)
    skip: str = "none"  # where k_t enters: "gates", "internal" (cell), "output" (h); block: always m and h
    gate: str = "recurrent"
    skip_map: str = "identity"
    forget_bias: float = 0.0

    def __post_init__(self) -> None:
        for value, allowed, what in (
            (self.cell, CELLS, "cell"),
            (self.skip, SKIPS, "skip"),
            (self.gate, GATES, "gate"),
            (self.skip_map, SKIP_MAPS, "skip_map"),
        ):
            if value not in allowed:
                raise ValueError(f"{what} must be one of {', '.join(allowed)}, not {value!r}")

    @property
    def recurrent_gate(self) -> bool:
        return self.gate in ("recurrent", "hidden")


class BiLayer(nn.Module):
    """One bidirectional layer: parameters of both directions stacked on a leading axis of 2."""

    def __init__(self, input_size: int, hidden: int, spec: CellSpec, has_skip: bool, init_scale: float = 0.1):
        super().__init__()
        self.hidden, self.spec, self.has_skip, self.init_scale = hidden, spec, has_skip, init_scale
        gated_skip = has_skip and spec.gate != "none"
        # Pre-activation layout: sigmoid gates first ([i, f, o] or [i, o], then g when recurrent), tanh s last.
        self.n_sigmoid = (3 if spec.cell == "lstm" else 2) + (1 if gated_skip and spec.recurrent_gate else 0)
        width = (self.n_sigmoid + 1) * hidden
        self.w_x = nn.Parameter(torch.empty(2, input_size, width))
        self.w_h = nn.Parameter(torch.empty(2, hidden, width))
        self.bias = nn.Parameter(torch.zeros(2, 1, width))
        self.u_k = nn.Parameter(torch.empty(2, hidden, hidden)) if gated_skip and spec.gate in ("recurrent", "skip") else None
        self.w_g = nn.Parameter(torch.empty(2, input_size, hidden)) if gated_skip and spec.gate == "input" else None
        self.reset_parameters()
        #: dtype of the input and recurrent products without autograd (None: float32); see
        #: :mod:`tagger.modules.precision`. Not part of the model file.
        self.matmul_dtype: torch.dtype | None = None
        self._lowered = Lowered()

    def weight(self, name: str) -> torch.Tensor:
        """``w_x``, ``w_h`` or ``w_g`` as the products use it: in ``matmul_dtype`` when autograd
        is off, else the parameter itself."""
        weight = getattr(self, name)
        if not torch.is_grad_enabled():
            return self._lowered(weight, self.matmul_dtype)
        if weight.dtype != self.bias.dtype:
            raise RuntimeError(f"{name} was converted to {weight.dtype} for inference (set_matmul_dtype in_place): "
                               f"set_matmul_dtype(None) before training")
        return weight

    def set_matmul_dtype(self, dtype: torch.dtype | None, in_place: bool = False) -> None:
        """Inference products in ``dtype`` (None: the parameters' float32). By default ``w_x``,
        ``w_h`` and ``w_g`` stay float32 and the products use copies in ``dtype`` (made on first
        use: both in memory). ``in_place`` converts them themselves (one copy, for inference:
        their float32 values are gone; ``None`` afterwards turns them back into float32 holding
        the rounded values)."""
        self.matmul_dtype = dtype
        self._lowered = Lowered()  # no copy outlives the choice it was made for
        target = dtype if in_place and dtype is not None else self.bias.dtype
        with torch.no_grad():
            for name in ("w_x", "w_h", "w_g"):
                weight = getattr(self, name)
                if weight is not None and weight.dtype != target:
                    weight.data = weight.data.to(target)

    def reset_parameters(self) -> None:
        """Recurrent matrices orthogonal, the rest N(0, 1/sqrt(fan_in)) × init_scale, biases 0 (SPEC §3)."""
        for d in range(2):
            for gate in range(self.n_sigmoid + 1):
                block = self.w_h.data[d, :, gate * self.hidden : (gate + 1) * self.hidden]
                nn.init.orthogonal_(block)
        for weight in (self.w_x, self.u_k, self.w_g):
            if weight is not None:
                scaled_normal_(weight, weight.shape[1], self.init_scale)
        nn.init.zeros_(self.bias)
        if self.spec.cell == "lstm" and self.spec.forget_bias:
            self.bias.data[:, :, self.hidden : 2 * self.hidden] = self.spec.forget_bias

    def forward(self, x: torch.Tensor | None, k: torch.Tensor | None, mask: torch.Tensor | None,
                gx: torch.Tensor | None = None) -> torch.Tensor:
        """Run both directions.

        x: [T, B, D] the layer input in sentence order (both directions read it).
        k: [T, 2, B, H] skip inputs in scan order (direction 1 time-reversed), or None.
        mask: [P, 2, B, 1] 1.0 at real positions for the first P scan steps (the only steps
        where a backward scan can start in padding), or None when no sentence is padded.
        gx: [2, T, B, G] the input projection ``x · W_x + b`` when the caller computed it (then x
        is only needed for an input-driven skip gate).
        Returns [T, 2, B, H] in scan order.
        """
        hidden, spec = self.hidden, self.spec
        if gx is None:
            gx = _both_directions(x, self.weight("w_x"), self.bias)  # [2, T, B, G]
        skip_term = None  # g ⊙ map(k), where computable before the loop
        k_mapped = None
        if self.has_skip:
            assert k is not None
            k_mapped = {"identity": k, "sigmoid": torch.sigmoid(k), "tanh": torch.tanh(k)}[spec.skip_map]
            if spec.skip == "gates" and spec.cell == "lstm":
                gx = gx + k.transpose(0, 1).repeat(1, 1, 1, self.n_sigmoid + 1)  # identity I ∈ R^{4n×n}
            elif spec.gate == "none":
                skip_term = k_mapped
            elif spec.gate == "input":
                skip_term = torch.sigmoid(_both_directions(x, self.weight("w_g"), None)).transpose(0, 1) * k_mapped
            elif spec.gate == "skip":
                skip_term = torch.sigmoid(torch.einsum("tdbh,dhk->tdbk", k, self.u_k)) * k_mapped
            elif spec.gate == "recurrent":  # U_g k_t joins the g pre-activation
                g_at = (self.n_sigmoid - 1) * hidden
                gx[..., g_at : g_at + hidden] += torch.einsum("tdbh,dhk->dtbk", k, self.u_k)
        adds_to = spec.skip if spec.cell == "lstm" else "block"
        if not self.has_skip or (spec.skip == "gates" and spec.cell == "lstm"):
            adds_to = "none"
        return _scan(gx, self.weight("w_h"), skip_term, None if skip_term is not None else k_mapped, mask,
                     hidden, self.n_sigmoid, spec.cell == "lstm", adds_to)


def _both_directions(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """x [T, B, D] · weight [2, D, G] (+ bias [2, 1, G]) → [2, T, B, G] in scan order (direction 1
    reversed in time). The reversal is applied to the narrower of input and output; without
    autograd each product is written straight into its half of the result. A ``weight`` in a
    lower dtype (inference, :mod:`tagger.modules.precision`) multiplies ``x`` rounded to it, and
    the result is float32."""
    steps, batch, size = x.shape
    width = weight.shape[-1]
    flip_input = size <= width
    sources = (x.reshape(-1, size), (x.flip(0) if flip_input else x).reshape(-1, size))
    if torch.is_grad_enabled():
        products = [torch.mm(source, weight[d]) for d, source in enumerate(sources)]
        out = torch.stack(products if bias is None else [p + bias[d, 0] for d, p in enumerate(products)])
    else:
        out = x.new_empty(2, steps * batch, width)
        for d, source in enumerate(sources):
            if weight.dtype != x.dtype:
                product = lowered_matmul(source, weight[d])
                if bias is None:
                    out[d].copy_(product)
                else:
                    torch.add(bias[d, 0], product, out=out[d])
            elif bias is None:
                torch.mm(source, weight[d], out=out[d])
            else:
                torch.addmm(bias[d, 0], source, weight[d], out=out[d])
    out = out.view(2, steps, batch, width)
    if not flip_input:
        out[1] = out[1].flip(0)
    return out


def _tanh(x: torch.Tensor) -> torch.Tensor:
    """tanh(x) as 2σ(2x) - 1: the same function, but this torch's CPU ``tanh`` kernel is several
    times slower than its ``sigmoid`` (813 µs against 281 µs for the whole expression on
    2 × 1024 × 128 floats, one thread), and the time step calls it twice."""
    return torch.sigmoid(x * 2) * 2 - 1


#: The batch rows of a recurrent product in a lower dtype are padded to a multiple of this, for
#: the reason given at :data:`tagger.modules.precision.ROW_QUANTUM`.
BATCH_QUANTUM = 64


def _scan(
    gx: torch.Tensor,
    w_h: torch.Tensor,
    skip_term: torch.Tensor | None,
    k_mapped: torch.Tensor | None,
    mask: torch.Tensor | None,
    hidden: int,
    n_sigmoid: int,
    lstm: bool,
    adds_to: str,
) -> torch.Tensor:
    """The time loop. gx: [2, T, B, G·H] precomputed pre-activations; returns [T, 2, B, H].

    ``skip_term`` [T, 2, B, H] is g⊙map(k) when g does not depend on h_{t-1}; otherwise
    ``k_mapped`` is given and g is the last sigmoid block of the pre-activation. ``mask``
    [P, 2, B, 1] zeroes the state after padded steps among the first P, so that a backward scan
    starts its sentence from a zero state. A ``w_h`` in a lower dtype (inference) multiplies
    ``h_{t-1}`` rounded to it; the sum with ``gx`` is float32.
    """
    _, steps, batch, _ = gx.shape
    h = gx.new_zeros(2, batch, hidden)
    c = gx.new_zeros(2, batch, hidden)
    masked = 0 if mask is None else mask.shape[0]
    sig_end = n_sigmoid * hidden
    low = w_h.dtype if w_h.dtype != gx.dtype else None
    if low is not None:  # h_{t-1} rounded into rows padded as lowered_matmul pads them (see ROW_QUANTUM)
        h_low = gx.new_zeros((2, -(-batch // BATCH_QUANTUM) * BATCH_QUANTUM, hidden), dtype=low)
    outputs = []
    for t in range(steps):
        if low is None:
            z = torch.baddbmm(gx[:, t], h, w_h)
        else:
            h_low[:, :batch] = h
            z = torch.bmm(h_low, w_h)[:, :batch].float().add_(gx[:, t])
        gates = torch.sigmoid(z[..., :sig_end])
        s = _tanh(z[..., sig_end:])
        i = gates[..., :hidden]
        if lstm:
            f = gates[..., hidden : 2 * hidden]
            o = gates[..., 2 * hidden : 3 * hidden]
        else:
            o = gates[..., hidden : 2 * hidden]
        if adds_to == "none":
            extra = None
        elif skip_term is not None:
            extra = skip_term[t]
        else:
            extra = gates[..., sig_end - hidden : sig_end] * k_mapped[t]
        if lstm:
            c = torch.addcmul(f * c, i, s)
            if adds_to == "internal":
                c = c + extra
            h = o * _tanh(c)
            if adds_to == "output":
                h = h + extra
        else:  # shortcut block: m = i⊙s + g⊙k, h = o⊙tanh(m) + g⊙k
            if extra is None:
                h = o * _tanh(i * s)
            else:
                m = torch.addcmul(extra, i, s)
                h = torch.addcmul(extra, o, _tanh(m))
        if t < masked:
            h = h * mask[t]
            if lstm:
                c = c * mask[t]
        outputs.append(h)
    return torch.stack(outputs)


class StackedBiRNN(nn.Module):
    """Stacked bidirectional layers with skip connections from an earlier layer of the same direction.

    ``skip_from``: for layer l (1-based), k_t = h^{l - skip_span - 1} (span 1: h^{l-2}, the
    default "type 2"); ``skip_span = 0`` means "type 1": k = h^1 for every l ≥ 2. A layer gets
    k only where that layer exists (≥ 1, or the input when its size equals ``hidden``).

    Layout: time-major. Each layer scans both directions in one loop as a batch of two; the
    backward direction reads the time-reversed input, so right-padded sentences start their
    backward scan in padding, and a mask over those first steps resets the state to zero.
    """

    def __init__(self, input_size: int, hidden: int, layers: int, spec: CellSpec, skip_span: int = 1,
                 dropouts: tuple[float, ...] = (), init_scale: float = 0.1):
        super().__init__()
        self.hidden, self.spec, self.skip_span = hidden, spec, skip_span
        use_skip = spec.skip != "none" or spec.cell == "block"
        self.sources: list[int | None] = []
        for layer in range(1, layers + 1):
            src = (1 if layer >= 2 else None) if skip_span == 0 else layer - skip_span - 1
            if skip_span != 0 and src is not None and src < 1:
                src = 0 if src == 0 and input_size == hidden else None
            self.sources.append(src if use_skip else None)
        self.layers = nn.ModuleList(
            BiLayer(input_size if i == 0 else 2 * hidden, hidden, spec, self.sources[i] is not None, init_scale) for i in range(layers)
        )
        self.dropouts = nn.ModuleList(nn.Dropout(p) for p in (dropouts or (0.0,) * layers))

    def set_matmul_dtype(self, dtype: torch.dtype | None, in_place: bool = False) -> None:
        """Inference products in ``dtype`` (None: float32) in every layer (see
        :meth:`BiLayer.set_matmul_dtype`)."""
        for layer in self.layers:
            layer.set_matmul_dtype(dtype, in_place)

    @property
    def output_size(self) -> int:
        return 2 * self.hidden

    def forward(self, x: torch.Tensor | None, lengths: torch.Tensor, projected: torch.Tensor | None = None) -> torch.Tensor:
        """x: [T, B, D] time-major, right-padded; lengths: [B] → [T, B, 2H] (forward then
        backward states, in sentence order; values at padded positions are meaningless).

        ``projected`` [2, T, B, G]: the first layer's input projection, computed by the caller
        (see :meth:`InputLayer.project_by_type`); x may then be None unless layer 1 has a skip.
        """
        first = x if projected is None else projected
        steps = first.shape[1] if projected is not None else first.shape[0]
        mask = padding_mask(lengths, steps)
        if mask is not None:
            mask = mask.to(first.dtype)
        history: list[torch.Tensor | None] = [None]
        if x is not None and x.shape[-1] == self.hidden:  # h^0 usable as k only when sizes agree
            history[0] = torch.stack([x, x.flip(0)], 1)
        inp = x
        for i, (layer, src, dropout) in enumerate(zip(self.layers, self.sources, self.dropouts)):
            h = layer(inp, history[src] if src is not None else None, mask, projected if i == 0 else None)  # [T, 2, B, H]
            history.append(h)
            inp = dropout(torch.cat([h[:, 0], h[:, 1].flip(0)], -1))  # [T, B, 2H] in sentence order
        return inp


def padding_mask(lengths: torch.Tensor, steps: int) -> torch.Tensor | None:
    """[P, 2, B, 1] validity of the first P = T - min(lengths) scan steps of each direction
    (direction 1 is time-reversed); None when no sentence is shorter than ``steps``."""
    masked = steps - int(lengths.min())
    if masked <= 0:
        return None
    t = torch.arange(masked, device=lengths.device).unsqueeze(1)
    forward = t < lengths
    backward = (steps - 1 - t) < lengths
    return torch.stack([forward, backward], 1).unsqueeze(-1).float()
