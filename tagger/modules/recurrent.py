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

from tagger.modules.cellspec import (  # noqa: F401 - the options, torch-free, re-exported here
    CELLS, COMPOSITIONS, GATES, MIXES, SKIP_MAPS, SKIPS, SOURCES, CellSpec)
from tagger.modules.fused import FUSED, _fastscan  # the fused time step, where it is built
from tagger.modules.init import orthogonal_, scaled_normal_
from tagger.modules.precision import Lowered, lowered_matmul


class BiLayer(nn.Module):
    """One bidirectional layer: parameters of both directions stacked on a leading axis of 2."""

    def __init__(self, input_size: int, hidden: int, spec: CellSpec, has_skip: bool, init_scale: float = 0.1):
        super().__init__()
        self.hidden, self.spec, self.has_skip, self.init_scale = hidden, spec, has_skip, init_scale
        gated = has_skip and spec.gate != "none" and spec.skip != "gates"
        self.gated = gated
        # Pre-activation layout: sigmoid gates first ([i, f, o], [i, o] or the RHN's [t, o], then g
        # when it is recurrent), tanh s last.
        self.n_sigmoid = (3 if spec.cell == "lstm" else 2) + (1 if gated and spec.recurrent_gate else 0)
        width = (self.n_sigmoid + 1) * hidden
        #: gate=hidden: γ reads no input, so W_x has no g columns (they are zeros in the product)
        self.x_gap = gated and spec.gate == "hidden"
        self.w_x = nn.Parameter(torch.empty(2, input_size, width - (hidden if self.x_gap else 0)))
        self.w_h = nn.Parameter(torch.empty(2, hidden, width))
        self.bias = nn.Parameter(torch.zeros(2, 1, width))
        self.u_k = nn.Parameter(torch.empty(2, hidden, hidden)) if gated and spec.gate in ("recurrent", "skip") else None
        g_width = 2 * hidden if spec.source == "separate" else hidden
        self.w_g = (nn.Parameter(torch.empty(2, input_size, g_width))
                    if gated and spec.gate in ("input", "bernoulli-learned") else None)
        self.w_lin = nn.Parameter(torch.ones(2, hidden)) if gated and spec.gate == "linear" else None
        deep = spec.depth - 1 if spec.cell == "rhn" else 0
        self.w_deep = nn.Parameter(torch.empty(2, deep, hidden, 2 * hidden)) if deep else None
        self.b_deep = nn.Parameter(torch.zeros(2, deep, 1, 2 * hidden)) if deep else None
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

    def input_weight(self) -> torch.Tensor:
        """``W_x`` [2, D, G] as the input projection uses it (:meth:`weight`), with zero columns
        where γ reads no input (gate=hidden)."""
        weight = self.weight("w_x")
        if not self.x_gap:
            return weight
        at = (self.n_sigmoid - 1) * self.hidden
        gap = weight.new_zeros(weight.shape[0], weight.shape[1], self.hidden)
        return torch.cat([weight[..., :at], gap, weight[..., at:]], -1)

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
                orthogonal_(block)
            if self.w_deep is not None:
                for step in range(self.w_deep.shape[1]):
                    for gate in range(2):
                        orthogonal_(self.w_deep.data[d, step, :, gate * self.hidden : (gate + 1) * self.hidden])
        for weight in (self.w_x, self.u_k, self.w_g):
            if weight is not None:
                scaled_normal_(weight, weight.shape[1], self.init_scale)
        nn.init.zeros_(self.bias)
        if self.spec.cell == "lstm" and self.spec.forget_bias:
            self.bias.data[:, :, self.hidden : 2 * self.hidden] = self.spec.forget_bias

    def forward(self, x: torch.Tensor | None, k: torch.Tensor | None, mask: torch.Tensor | None,
                gx: torch.Tensor | None = None, k_cells: torch.Tensor | None = None,
                keep_cells: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Run both directions.

        x: [T, B, D] the layer input in sentence order (both directions read it).
        k, k_cells: [T, 2, B, H] the sum of the source layers' outputs (cells) in scan order
        (direction 1 time-reversed), or None; which ones the spec reads: ``spec.source``.
        mask: [P, 2, B, 1] 1.0 at real positions for the first P scan steps (the only steps
        where a backward scan can start in padding), or None when no sentence is padded.
        gx: [2, T, B, G] the input projection ``x · W_x + b`` when the caller computed it (then x
        is only needed for an input-driven skip gate).
        Returns the outputs [T, 2, B, H] in scan order, and the cells [T, 2, B, H] (the block's
        m) when ``keep_cells``, else None.
        """
        spec = self.spec
        if gx is None:
            gx = _both_directions(x, self.input_weight(), self.bias)  # [2, T, B, G]
        if spec.cell == "rhn":
            return _scan_rhn(gx, self.weight("w_h"), self.w_deep, self.b_deep, mask, self.hidden), None
        places: dict[str, Term] = {}
        if self.has_skip:
            main = k_cells if spec.source == "internal" else k  # the K of γ (and of "gates")
            assert main is not None
            if spec.skip == "gates":  # identity I ∈ R^{4n×n}: K joins every pre-activation
                gx = gx + main.transpose(0, 1).repeat(1, 1, 1, self.n_sigmoid + 1)
            else:
                gx, places = self._terms(x, k, k_cells, main, gx)
        if torch.is_grad_enabled():
            scan = _scan
        else:
            scan = _scan_fused if fused_applies(gx, places, spec, keep_cells) else _scan_inference
        return scan(gx, self.weight("w_h"), places, mask, self.hidden, self.n_sigmoid, spec.cell == "lstm", keep_cells)

    def _terms(self, x: torch.Tensor | None, k: torch.Tensor | None, k_cells: torch.Tensor | None, main: torch.Tensor,
               gx: torch.Tensor) -> tuple[torch.Tensor, dict[str, "Term"]]:
        """The shortcut at each place it enters, with everything that does not need h_{t-1}
        computed for all steps at once: ``gx`` (γ's ``U K`` joins it when γ is recurrent) and
        one :class:`Term` per place."""
        spec, hidden = self.spec, self.hidden
        gamma: torch.Tensor | None = None  # [T, 2, B, H or 2H] when γ does not need h_{t-1}
        if not self.gated or spec.gate == "linear":
            pass
        elif spec.gate == "recurrent":
            at = (self.n_sigmoid - 1) * hidden
            gx[..., at : at + hidden] += torch.einsum("tdbh,dhk->dtbk", main, self.u_k)
        elif spec.gate in ("input", "bernoulli-learned"):
            gamma = torch.sigmoid(_both_directions(x, self.weight("w_g"), None)).transpose(0, 1)
        elif spec.gate == "skip":
            gamma = torch.sigmoid(torch.einsum("tdbh,dhk->tdbk", main, self.u_k))
        elif spec.gate == "bernoulli":
            gamma = main.new_full(main.shape, 0.5)
        if spec.gate.startswith("bernoulli") and self.training:
            assert gamma is not None
            sample = (torch.rand(main.shape, device=main.device) < gamma).to(main.dtype)
            gamma = sample + gamma - gamma.detach() if gamma.requires_grad else sample  # straight-through
        places = {}
        for place in spec.places:
            source = k_cells if spec.source == "internal" or (spec.source == "separate" and place == "internal") else k
            assert source is not None
            mapped = _MAPS[spec.skip_map](source)
            kind = "none" if spec.ungated == place or not self.gated else spec.gate
            if kind == "none":  # (a highway mix always has a gate: CellSpec refuses it otherwise)
                places[place] = Term(mapped, None, None, False)
            elif kind == "linear":
                places[place] = Term(self.w_lin[None, :, None, :] * mapped, None, None, False)
            elif kind in ("recurrent", "hidden", "output"):
                places[place] = Term(mapped, None, "output" if kind == "output" else "g", spec.mix == "highway")
            else:
                assert gamma is not None
                g = gamma
                if spec.source == "separate":
                    g = gamma[..., :hidden] if place == "internal" else gamma[..., hidden:]
                if spec.mix == "highway":
                    places[place] = Term(mapped, g, None, True)
                else:  # γ ⊙ k for all steps at once
                    places[place] = Term(g * mapped, None, None, False)
        return gx, places


@dataclass
class Term:
    """The shortcut at one place of the scan: ``v + γ ⊙ k`` (or ``lerp(v, k, γ)`` when
    ``highway``). ``k`` [T, 2, B, H] (already multiplied by γ when γ needs no h_{t-1} and the mix
    is additive); γ is ``gamma[t]`` when given, else the recurrent gate block ("g"), the output
    gate ("output"), or 1 (None)."""

    k: torch.Tensor
    gamma: torch.Tensor | None
    in_loop: str | None
    highway: bool

    @property
    def plain(self) -> bool:
        """Whether the shortcut is ``v + k[t]``."""
        return self.gamma is None and self.in_loop is None and not self.highway

    def per_step(self) -> "Term":
        """The same term with ``k`` and ``gamma`` as tuples of their steps (:func:`_per_step`)."""
        return Term(_per_step(self.k), _per_step(self.gamma), self.in_loop, self.highway)


def _per_step(tensor: torch.Tensor | None) -> tuple[torch.Tensor, ...] | None:
    """``tensor`` [T, ...] as its T steps, indexed as the tensor would be: the backward of one
    ``unbind`` stacks the steps' gradients once, where that of each ``tensor[t]`` would fill a
    zero tensor as large as the whole (quadratic in T)."""
    return None if tensor is None else tensor.unbind(0)


_MAPS = {"identity": lambda k: k, "sigmoid": torch.sigmoid, "tanh": torch.tanh}


def _both_directions(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """x [T, B, D] · weight [2, D, G] (+ bias [2, 1, G]) → [2, T, B, G] in scan order (direction 1
    reversed in time). The reversal is applied to the narrower of input and output; without
    autograd each product is written straight into its half of the result. A ``weight`` in a
    lower dtype (inference, :mod:`tagger.modules.precision`) multiplies ``x`` rounded to it, and
    the result is float32."""
    if (FUSED and not torch.is_grad_enabled() and x.device.type == "cpu" and x.dtype == torch.float32
            and weight.dtype in (torch.float32, torch.bfloat16) and (bias is None or bias.dtype == torch.float32)):
        return _both_directions_fused(x, weight, bias)
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


def _both_directions_fused(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """:func:`_both_directions` at inference: one product of ``x`` with both directions' weights
    side by side [D, 2G] (in the weight's dtype, bf16 products kept as they come), then one C pass
    (``_fastscan.scan_order``) adding the bias and writing direction 1 reversed in time."""
    steps, batch, size = x.shape
    width = weight.shape[-1]
    both = weight.permute(1, 0, 2).reshape(size, 2 * width)
    flat = x.reshape(-1, size)
    product = flat @ both if weight.dtype == x.dtype else lowered_matmul(flat, both, as_float=False)
    if product.stride(-1) != 1:
        product = product.contiguous()
    out = torch.empty(2, steps, batch, width, dtype=torch.float32)
    if bias is not None:
        bias = bias.contiguous()
    _fastscan.scan_order(steps, batch, width, product.data_ptr(), product.dtype == torch.bfloat16, product.stride(0),
                         0 if bias is None else bias.data_ptr(), 0 if bias is None else bias.stride(0), out.data_ptr())
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
    places: dict[str, Term],
    mask: torch.Tensor | None,
    hidden: int,
    n_sigmoid: int,
    lstm: bool,
    keep_cells: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The time loop of the LSTM and the shortcut block. gx: [2, T, B, G·H] precomputed
    pre-activations; returns the outputs [T, 2, B, H] (and the cells, the block's m, when
    ``keep_cells``).

    ``places`` holds the shortcut added to the cell ("internal") and to the output ("output")
    (:class:`Term`); γ that needs h_{t-1} is the last sigmoid block ("g") or the output gate.
    ``mask`` [P, 2, B, 1] zeroes the state after padded steps among the first P, so that a
    backward scan starts its sentence from a zero state. A ``w_h`` in a lower dtype (inference)
    multiplies ``h_{t-1}`` rounded to it; the sum with ``gx`` is float32.
    """
    _, steps, batch, _ = gx.shape
    h = gx.new_zeros(2, batch, hidden)
    c = gx.new_zeros(2, batch, hidden)
    masked = 0 if mask is None else mask.shape[0]
    sig_end = n_sigmoid * hidden
    low = w_h.dtype if w_h.dtype != gx.dtype else None
    if low is not None:  # h_{t-1} rounded into rows padded as lowered_matmul pads them (see ROW_QUANTUM)
        h_low = gx.new_zeros((2, -(-batch // BATCH_QUANTUM) * BATCH_QUANTUM, hidden), dtype=low)
    inner, outer = places.get("internal"), places.get("output")
    # A plain sum v + k[t] (γ already in k, or none) is fused into the product before it.
    inner_sum = _per_step(inner.k) if inner is not None and inner.plain else None
    outer_sum = _per_step(outer.k) if outer is not None and outer.plain else None
    inner = None if inner is None or inner_sum is not None else inner.per_step()
    outer = None if outer is None or outer_sum is not None else outer.per_step()
    gx_t = gx.unbind(1)
    outputs, cells = [], []
    for t in range(steps):
        if low is None:
            z = torch.baddbmm(gx_t[t], h, w_h)
        else:
            h_low[:, :batch] = h
            z = torch.bmm(h_low, w_h)[:, :batch].float().add_(gx_t[t])
        gates = torch.sigmoid(z[..., :sig_end])
        s = _tanh(z[..., sig_end:])
        i = gates[..., :hidden]
        if lstm:
            f = gates[..., hidden : 2 * hidden]
            o = gates[..., 2 * hidden : 3 * hidden]
            c = torch.addcmul(f * c if inner_sum is None else torch.addcmul(inner_sum[t], f, c), i, s)
        else:
            o = gates[..., hidden : 2 * hidden]
            c = i * s if inner_sum is None else torch.addcmul(inner_sum[t], i, s)  # the block's m: no self-connection
        g = gates[..., sig_end - hidden : sig_end]
        if inner is not None:
            c = _shortcut(c, inner, t, g, o)
        h = o * _tanh(c) if outer_sum is None else torch.addcmul(outer_sum[t], o, _tanh(c))
        if outer is not None:
            h = _shortcut(h, outer, t, g, o)
        if t < masked:
            h = h * mask[t]
            if lstm or keep_cells:
                c = c * mask[t]
        outputs.append(h)
        if keep_cells:
            cells.append(c)
    return torch.stack(outputs), (torch.stack(cells) if keep_cells else None)


def _scan_inference(
    gx: torch.Tensor,
    w_h: torch.Tensor,
    places: dict[str, Term],
    mask: torch.Tensor | None,
    hidden: int,
    n_sigmoid: int,
    lstm: bool,
    keep_cells: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """:func:`_scan` without autograd (inference): the same arithmetic in the same order, so the
    same outputs, with fewer calls per step and no new tensors: one in-place sigmoid over the gates
    and the doubled ``s`` block (tanh(x) = 2σ(2x) - 1, as :func:`_tanh`), the cell updated in
    place, and each step's state written straight into the preallocated outputs [T, 2, B, H]."""
    _, steps, batch, width = gx.shape
    outputs = gx.new_empty(steps, 2, batch, hidden)
    cells = gx.new_empty(steps, 2, batch, hidden) if keep_cells else None
    h = gx.new_zeros(2, batch, hidden)
    c = gx.new_zeros(2, batch, hidden)
    z = gx.new_empty(2, batch, width)  # the step's pre-activations, then its gates in place
    squashed = gx.new_empty(2, batch, hidden)  # tanh(c)
    masked = 0 if mask is None else mask.shape[0]
    sig_end = n_sigmoid * hidden
    low = w_h.dtype if w_h.dtype != gx.dtype else None
    if low is not None:  # as in _scan: h_{t-1} rounded into rows padded to BATCH_QUANTUM
        h_low = gx.new_zeros((2, -(-batch // BATCH_QUANTUM) * BATCH_QUANTUM, hidden), dtype=low)
    inner, outer = places.get("internal"), places.get("output")
    inner_sum = _per_step(inner.k) if inner is not None and inner.plain else None
    outer_sum = _per_step(outer.k) if outer is not None and outer.plain else None
    inner = None if inner is None or inner_sum is not None else inner.per_step()
    outer = None if outer is None or outer_sum is not None else outer.per_step()
    gx_t = gx.unbind(1)
    gates, z_s = z[..., :sig_end], z[..., sig_end:]
    s = gx.new_empty(2, batch, hidden)  # tanh(z_s), contiguous as _tanh's (the same kernel loop, the same bits)
    i = gates[..., :hidden]
    f = gates[..., hidden : 2 * hidden]
    o = gates[..., 2 * hidden : 3 * hidden] if lstm else gates[..., hidden : 2 * hidden]
    g = gates[..., sig_end - hidden : sig_end]
    for t in range(steps):
        if low is None:
            torch.baddbmm(gx_t[t], h, w_h, out=z)
        else:
            h_low[:, :batch] = h
            z.copy_(torch.bmm(h_low, w_h)[:, :batch]).add_(gx_t[t])
        gates.sigmoid_()
        torch.mul(z_s, 2, out=s).sigmoid_().mul_(2).sub_(1)
        if lstm:
            if inner_sum is None:
                c.mul_(f)
            else:
                c = torch.addcmul(inner_sum[t], f, c)
            c.addcmul_(i, s)
        elif inner_sum is None:
            torch.mul(i, s, out=c)  # the block's m: no self-connection
        else:
            torch.addcmul(inner_sum[t], i, s, out=c)
        if inner is not None:
            _shortcut_(c, inner, t, g, o)
        h = outputs[t]
        torch.mul(c, 2, out=squashed).sigmoid_().mul_(2).sub_(1)
        if outer_sum is None:
            torch.mul(o, squashed, out=h)
        else:
            torch.addcmul(outer_sum[t], o, squashed, out=h)
        if outer is not None:
            _shortcut_(h, outer, t, g, o)
        if t < masked:
            h.mul_(mask[t])
            if lstm or keep_cells:
                c.mul_(mask[t])
        if keep_cells:
            cells[t].copy_(c)
    return outputs, cells


#: The shortcut at the output as the fused step takes it: its gate γ → ``kmode`` (1: the recurrent
#: gate block, 3: the output gate); a plain sum is 2.
_KMODES = {"g": 1, "output": 3}


def fused_applies(gx: torch.Tensor, places: dict[str, "Term"], spec: CellSpec, keep_cells: bool) -> bool:
    """Whether :func:`_scan_fused` computes this scan: an LSTM cell on the CPU in float32, whose
    shortcut (if any) is added to the output, ungated or gated by the recurrent gate or the output
    gate, with the mix ``add`` (the ``fast`` and ``small`` presets and the papers' output-skip
    rows); cells not kept. Everything else stays in :func:`_scan_inference`."""
    if not FUSED or spec.cell != "lstm" or keep_cells or gx.device.type != "cpu" or gx.dtype != torch.float32:
        return False
    if "internal" in places:
        return False
    outer = places.get("output")
    return outer is None or (not outer.highway and outer.gamma is None
                             and (outer.in_loop is None or outer.in_loop in _KMODES))


def _scan_fused(
    gx: torch.Tensor,
    w_h: torch.Tensor,
    places: dict[str, Term],
    mask: torch.Tensor | None,
    hidden: int,
    n_sigmoid: int,
    lstm: bool,
    keep_cells: bool = False,
) -> tuple[torch.Tensor, None]:
    """:func:`_scan_inference` for the cells :func:`fused_applies` accepts, with each step after
    its recurrent product done by one C call (``_fastscan.lstm_step``): the pre-activations
    ``z = h_{t-1}·W_h + gx_t`` (the product in ``w_h``'s dtype, as float32), the gates, the cell
    ``c = f⊙c + i⊙tanh(s)``, ``h = o⊙tanh(c)`` plus the shortcut (``γ⊙k_t`` or ``k_t``), the
    padding mask, and ``h`` rounded for the next product. One product and one call per step
    instead of about fifteen tensor operations; the arithmetic is the torch scan's, in the same
    order, except that exp is Cephes' (a few ulp from torch's): tags agree, the last bits of the
    scores may not (tests/test_fused_scan.py)."""
    _, steps, batch, width = gx.shape
    outputs = gx.new_empty(steps, 2, batch, hidden)
    c = gx.new_zeros(2, batch, hidden)
    low = w_h.dtype if w_h.dtype != gx.dtype else None
    rows = -(-batch // BATCH_QUANTUM) * BATCH_QUANTUM if low is not None else batch
    h_in = gx.new_zeros((2, rows, hidden), dtype=low or gx.dtype)  # h_{t-1} as the product reads it
    prod = gx.new_empty((2, rows, width), dtype=low or gx.dtype)
    outer = places.get("output")
    k = None if outer is None else outer.k.contiguous()
    kmode = 0 if outer is None else _KMODES.get(outer.in_loop, 2)
    masked = 0 if mask is None else mask.shape[0]
    if mask is not None:
        mask = mask.contiguous()
    if gx.stride(-1) != 1:
        gx = gx.contiguous()
    # addresses in bytes, strides in elements (all float32 but the bf16 h_in and prod, read by their own strides)
    size = gx.element_size()
    step = _fastscan.lstm_step
    gx_ptr, out_ptr = gx.data_ptr(), outputs.data_ptr()
    gx_t, out_t = gx.stride(1) * size, outputs.stride(0) * size
    head = (batch, hidden, n_sigmoid, low is not None, kmode)
    fixed = (prod.data_ptr(), prod.stride(0), prod.stride(1))
    gx_strides = (gx.stride(0), gx.stride(2))
    state = (c.data_ptr(), c.stride(0), c.stride(1))
    out_strides = (outputs.stride(1), outputs.stride(2))
    low_in = (h_in.data_ptr() if low is not None else 0, h_in.stride(0), h_in.stride(1))
    k_ptr, k_t, k_strides = (0, 0, (0, 0)) if k is None else (k.data_ptr(), k.stride(0) * size, (k.stride(1), k.stride(2)))
    mask_ptr, mask_t, mask_strides = ((0, 0, (0, 0)) if mask is None else
                                      (mask.data_ptr(), mask.stride(0) * size, (mask.stride(1), mask.stride(2))))
    for t in range(steps):
        torch.bmm(h_in if low is not None or t == 0 else outputs[t - 1], w_h, out=prod)
        now = t < masked
        step(*head, now, *fixed, gx_ptr + t * gx_t, *gx_strides, *state, out_ptr + t * out_t, *out_strides, *low_in,
             k_ptr + t * k_t if k_ptr else 0, *k_strides, mask_ptr + t * mask_t if now else 0, *mask_strides)
    return outputs, None


def _shortcut_(v: torch.Tensor, term: Term, t: int, g: torch.Tensor, o: torch.Tensor) -> None:
    """:func:`_shortcut` in place on ``v``."""
    gamma = term.gamma[t] if term.gamma is not None else g if term.in_loop == "g" else o if term.in_loop else None
    if term.highway:
        if gamma is None:
            v.copy_(term.k[t])
        else:
            v.lerp_(term.k[t], gamma)
    elif gamma is None:
        v.add_(term.k[t])
    else:
        v.addcmul_(gamma, term.k[t])


def _shortcut(v: torch.Tensor, term: Term, t: int, g: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
    """``v`` with the shortcut ``term`` at step ``t`` (``g``: the recurrent gate block, ``o``:
    the output gate, for a γ that needs h_{t-1})."""
    gamma = term.gamma[t] if term.gamma is not None else g if term.in_loop == "g" else o if term.in_loop else None
    if term.highway:
        return term.k[t] if gamma is None else torch.lerp(v, term.k[t], gamma)
    return v + term.k[t] if gamma is None else torch.addcmul(v, gamma, term.k[t])


def _scan_rhn(gx: torch.Tensor, w_h: torch.Tensor, w_deep: torch.Tensor | None, b_deep: torch.Tensor | None,
              mask: torch.Tensor | None, hidden: int) -> torch.Tensor:
    """The recurrent highway layer (docs/zoo.md): micro-step 1 from ``gx`` [2, T, B, 3H] (blocks
    t, o, s) and ``h_{t-1} · w_h``; micro-steps 2..L from ``w_deep`` [2, L-1, H, 2H] (t, s) and
    ``b_deep``; output ``σ(o) ⊙ tanh(q_L)``, carried to the next step. Returns [T, 2, B, H]."""
    _, steps, batch, _ = gx.shape
    if w_h.dtype != gx.dtype:  # a lowered inference copy: this cell multiplies in float32
        w_h = w_h.to(gx.dtype)
    h = gx.new_zeros(2, batch, hidden)
    masked = 0 if mask is None else mask.shape[0]
    deep = 0 if w_deep is None else w_deep.shape[1]
    outputs = []
    gx_t = gx.unbind(1)
    for t in range(steps):
        z = torch.baddbmm(gx_t[t], h, w_h)
        gates = torch.sigmoid(z[..., : 2 * hidden])
        q = torch.lerp(h, _tanh(z[..., 2 * hidden :]), gates[..., :hidden])  # t⊙s + (1-t)⊙h
        for step in range(deep):
            zq = torch.baddbmm(b_deep[:, step], q, w_deep[:, step])
            q = torch.lerp(q, _tanh(zq[..., hidden:]), torch.sigmoid(zq[..., :hidden]))
        h = gates[..., hidden:] * _tanh(q)
        if t < masked:
            h = h * mask[t]
        outputs.append(h)
    return torch.stack(outputs)


class StackedBiRNN(nn.Module):
    """Stacked bidirectional layers with shortcuts from earlier layers of the same direction.

    Which layers feed layer l's shortcut (``composition``, docs/zoo.md): ``chain``: k_t =
    h^{l - skip_span - 1} (span 1: h^{l-2}, "type 2"; ``skip_span = 0``: k = h^1 for every l ≥ 2,
    "type 1"); ``nested``: the sum of h^{l-n-1} and h^{l-2n-2} (n = skip_span; types 5 and 4);
    ``adjacent``: layer l-1 (H-LSTM). A layer gets k only from sources that exist (≥ 1, or the
    input when its size equals ``hidden`` and k reads outputs).

    Layout: time-major. Each layer scans both directions in one loop as a batch of two; the
    backward direction reads the time-reversed input, so right-padded sentences start their
    backward scan in padding, and a mask over those first steps resets the state to zero.
    """

    def __init__(self, input_size: int, hidden: int, layers: int, spec: CellSpec, skip_span: int = 1,
                 dropouts: tuple[float, ...] = (), init_scale: float = 0.1, composition: str = "chain"):
        super().__init__()
        if composition not in COMPOSITIONS:
            raise ValueError(f"composition must be one of {', '.join(COMPOSITIONS)}, not {composition!r}")
        self.hidden, self.spec, self.skip_span, self.composition = hidden, spec, skip_span, composition
        use_skip = spec.skip != "none"
        lowest = 0 if input_size == hidden and not spec.reads_cells else 1
        #: per layer (index l-1): the layers (0 = the input) summed into its shortcut, or None
        self.sources: list[tuple[int, ...] | None] = []
        for layer in range(1, layers + 1):
            found = tuple(j for j in _wanted_sources(layer, composition, skip_span) if lowest <= j < layer)
            self.sources.append(found if use_skip and found else None)
        #: the layers whose cells a later shortcut reads
        self.cell_sources = {j for found in self.sources if found for j in found} if spec.reads_cells else set()
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

    @property
    def reads_input(self) -> bool:
        """Whether a layer's shortcut reads the input itself (h^0: an input as wide as the
        layers), so that :meth:`forward` needs x even when given the first layer's projection."""
        return any(found and 0 in found for found in self.sources)

    def forward(self, x: torch.Tensor | None, lengths: torch.Tensor, projected: torch.Tensor | None = None) -> torch.Tensor:
        """x: [T, B, D] time-major, right-padded; lengths: [B] → [T, B, 2H] (forward then
        backward states, in sentence order; values at padded positions are meaningless).

        ``projected`` [2, T, B, G]: the first layer's input projection, computed by the caller
        (see :meth:`InputLayer.project_by_type`); x may then be None unless a layer's shortcut
        reads it (layer 1's, or a later one's: :attr:`reads_input`).
        """
        if x is None and self.reads_input:
            raise ValueError("this stack's shortcuts read its input x: pass it beside the projection")
        first = x if projected is None else projected
        steps = first.shape[1] if projected is not None else first.shape[0]
        mask = padding_mask(lengths, steps)
        if mask is not None:
            mask = mask.to(first.dtype)
        outputs: list[torch.Tensor | None] = [None]  # per layer, [T, 2, B, H] in scan order
        cells: list[torch.Tensor | None] = [None]
        if x is not None and x.shape[-1] == self.hidden:  # h^0 usable as k only when sizes agree
            outputs[0] = torch.stack([x, x.flip(0)], 1)
        inp = x
        for i, (layer, found, dropout) in enumerate(zip(self.layers, self.sources, self.dropouts)):
            k = k_cells = None
            if found:
                k = _sum(outputs[j] for j in found) if self.spec.source != "internal" else None
                k_cells = _sum(cells[j] for j in found) if self.spec.reads_cells else None
            h, c = layer(inp, k, mask, projected if i == 0 else None, k_cells, keep_cells=i + 1 in self.cell_sources)
            outputs.append(h)
            cells.append(c)
            inp = dropout(torch.cat([h[:, 0], h[:, 1].flip(0)], -1))  # [T, B, 2H] in sentence order
        return inp


def _wanted_sources(layer: int, composition: str, span: int) -> tuple[int, ...]:
    """The layers that feed layer ``layer``'s shortcut under ``composition`` (before dropping
    those that do not exist)."""
    if composition == "adjacent":
        return (layer - 1,)
    if span == 0:
        return (1,) if layer >= 2 else ()
    if composition == "nested":
        return (layer - span - 1, layer - 2 * span - 2)
    return (layer - span - 1,)


def _sum(tensors) -> torch.Tensor:
    total = None
    for tensor in tensors:
        total = tensor if total is None else total + tensor
    return total


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
