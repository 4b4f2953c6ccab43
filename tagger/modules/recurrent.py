"""The configurable recurrent layer of Wu, Zhang & Zong (2016, 2017) and its stacked scan.

One cell covers the plain LSTM, the skip connections of paper 000 (to the gates, to the cell,
to the output, gated or not) and the shortcut block of paper 001 (no self-connected cell).
Variants are options of :class:`CellSpec`, never copies of the cell.

Speed: everything that does not depend on ``h_{t-1}`` (input projections, input-driven gates,
the skip term ``g ⊙ k`` when ``g`` is not recurrent) is computed for all time steps in one matrix
product before the loop. Both directions run in the same step as a batch of two (``bmm``), on
sequences that are reversed per sentence, so padding always sits at the end and needs no masking.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from tagger.modules.init import scaled_normal_

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


def reverse_padded(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Reverse each sequence of ``x`` [B, T, D] within its length; ``index`` from :func:`reverse_index`."""
    return torch.gather(x, 1, index.unsqueeze(-1).expand_as(x))


def reverse_index(lengths: torch.Tensor, steps: int) -> torch.Tensor:
    """[B, T] positions that reverse every sequence within its length and keep padding in place."""
    t = torch.arange(steps, device=lengths.device).unsqueeze(0)
    lengths = lengths.unsqueeze(1)
    return torch.where(t < lengths, lengths - 1 - t, t)


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

    def forward(self, x: torch.Tensor, k: torch.Tensor | None) -> torch.Tensor:
        """Run both directions.

        x: [2, B, T, D] inputs per direction, each in its own time order (backward reversed).
        k: [2, B, T, H] skip inputs in the same order, or None.
        Returns [2, B, T, H].
        """
        _, batch, steps, _ = x.shape
        hidden, spec = self.hidden, self.spec
        gx = torch.baddbmm(self.bias, x.reshape(2, batch * steps, -1), self.w_x)
        gx = gx.view(2, batch, steps, -1)
        skip_term = None  # g ⊙ map(k), where computable before the loop
        k_mapped = None
        if self.has_skip:
            assert k is not None
            k_mapped = {"identity": k, "sigmoid": torch.sigmoid(k), "tanh": torch.tanh(k)}[spec.skip_map]
            if spec.skip == "gates" and spec.cell == "lstm":
                gx = gx + torch.cat([k] * (self.n_sigmoid + 1), dim=-1)  # identity I ∈ R^{4n×n}
            elif spec.gate == "none":
                skip_term = k_mapped
            elif spec.gate == "input":
                skip_term = torch.sigmoid(torch.bmm(x.reshape(2, batch * steps, -1), self.w_g)).view_as(k) * k_mapped
            elif spec.gate == "skip":
                skip_term = torch.sigmoid(torch.bmm(k.reshape(2, batch * steps, -1), self.u_k)).view_as(k) * k_mapped
            elif spec.gate == "recurrent":  # U_g k_t joins the g pre-activation
                g_at = (self.n_sigmoid - 1) * hidden
                extra = torch.bmm(k.reshape(2, batch * steps, -1), self.u_k).view_as(k)
                gx = torch.cat([gx[..., :g_at], gx[..., g_at : g_at + hidden] + extra, gx[..., g_at + hidden :]], -1)
        adds_to = spec.skip if spec.cell == "lstm" else "block"
        if not self.has_skip or (spec.skip == "gates" and spec.cell == "lstm"):
            adds_to = "none"
        return _scan(
            gx.permute(2, 0, 1, 3).contiguous(),
            self.w_h,
            None if skip_term is None else skip_term.permute(2, 0, 1, 3).contiguous(),
            None if k_mapped is None or skip_term is not None else k_mapped.permute(2, 0, 1, 3).contiguous(),
            hidden,
            self.n_sigmoid,
            spec.cell == "lstm",
            adds_to,
        ).permute(1, 2, 0, 3)


def _scan(
    gx: torch.Tensor,
    w_h: torch.Tensor,
    skip_term: torch.Tensor | None,
    k_mapped: torch.Tensor | None,
    hidden: int,
    n_sigmoid: int,
    lstm: bool,
    adds_to: str,
) -> torch.Tensor:
    """The time loop. gx: [T, 2, B, G·H] precomputed pre-activations; returns [T, 2, B, H].

    ``skip_term`` [T, 2, B, H] is g⊙map(k) when g does not depend on h_{t-1}; otherwise
    ``k_mapped`` is given and g is the last sigmoid block of the pre-activation.
    """
    steps, _, batch, _ = gx.shape
    h = gx.new_zeros(2, batch, hidden)
    c = gx.new_zeros(2, batch, hidden)
    sig_end = n_sigmoid * hidden
    outputs = []
    for t in range(steps):
        z = torch.baddbmm(gx[t], h, w_h)
        gates = torch.sigmoid(z[..., :sig_end])
        s = torch.tanh(z[..., sig_end:])
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
            h = o * torch.tanh(c)
            if adds_to == "output":
                h = h + extra
        else:  # shortcut block: m = i⊙s + g⊙k, h = o⊙tanh(m) + g⊙k
            if extra is None:
                h = o * torch.tanh(i * s)
            else:
                m = torch.addcmul(extra, i, s)
                h = torch.addcmul(extra, o, torch.tanh(m))
        outputs.append(h)
    return torch.stack(outputs)


class StackedBiRNN(nn.Module):
    """Stacked bidirectional layers with skip connections from an earlier layer of the same direction.

    ``skip_from``: for layer l (1-based), k_t = h^{l - skip_span - 1} (span 1: h^{l-2}, the
    default "type 2"); ``skip_span = 0`` means "type 1": k = h^1 for every l ≥ 2. A layer gets
    k only where that layer exists (≥ 1, or the input when its size equals ``hidden``).
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

    @property
    def output_size(self) -> int:
        return 2 * self.hidden

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """x: [B, T, D] right-padded, lengths: [B] → [B, T, 2H] (forward then backward states)."""
        rev = reverse_index(lengths, x.shape[1])
        inp = torch.stack([x, reverse_padded(x, rev)])  # [2, B, T, D], each direction in its own order
        history = [inp if inp.shape[-1] == self.hidden else None]  # h^0 usable as k only when sizes agree
        for layer, src, dropout in zip(self.layers, self.sources, self.dropouts):
            h = layer(inp, history[src] if src is not None else None)  # [2, B, T, H]
            history.append(h)
            out = torch.cat([h[0], reverse_padded(h[1], rev)], -1)  # [B, T, 2H] in sentence order
            out = dropout(out)
            inp = torch.stack([out, reverse_padded(out, rev)])
        return out
