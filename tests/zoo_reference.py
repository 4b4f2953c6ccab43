"""A naive reference of the recurrent layer of ``docs/zoo.md`` ("The layer, all variants in one
set of equations"), written from the equations alone, to check the batched scan of
:mod:`tagger.modules.recurrent` against.

Deliberately slow and literal: one sentence at a time, one direction at a time, one word at a
time, on vectors of the cell size; no padding at all (the backward direction starts at the last
real word of each sentence from a zero state), blocks looked up by name. It reads the fast
model's parameter tensors (by name, sliced into the doc's blocks) so that both compute from the
same leaves and their gradients can be compared; it shares no code with the scan.

Random draws (Bernoulli gates in training): each layer whose shortcut has a Bernoulli gate draws
``u = torch.rand(T, 2, B, n)`` once (T the padded length; scan order: step ``t`` of direction 1
is padded position ``T-1-t``), layers in order 1..L, and ``β = (u < p)``.

Readings where the doc leaves room: ``gate=output`` is γ = σ(o) (the gate, not the
pre-activation); one Bernoulli sample serves both places of ``skip=both``; ``skip=gates`` adds the
raw K (no map) to i, f, o, s and has no γ, hence no g block; ``mix=highway`` with γ = 1 (gate none,
or an ungated place) gives k alone; j = 0 counts only for ``source=output`` (not ``separate``); a
layer draws Bernoulli samples only if γ applies at some place it has a shortcut.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

PLACES = ("internal", "output")


@dataclass(frozen=True)
class Variant:
    """The options of the doc's layer; same names and defaults as ``CellSpec`` (checked by a test)."""

    cell: str = "lstm"
    skip: str = "none"
    gate: str = "recurrent"
    skip_map: str = "identity"
    forget_bias: float = 0.0
    source: str = "output"
    mix: str = "add"
    ungated: str = ""
    depth: int = 3


def source_layers(composition: str, span: int, layers: int) -> list[tuple[int, ...]]:
    """The doc's ``S(l)`` for l = 1..L, before the existence rule (may hold j < 0)."""
    out = []
    for l in range(1, layers + 1):
        if composition == "chain":
            out.append(((1,) if l >= 2 else ()) if span == 0 else (l - span - 1,))
        elif composition == "nested":
            out.append((l - span - 1, l - 2 * span - 2))
        elif composition == "adjacent":
            out.append((l - 1,))
        else:
            raise ValueError(composition)
    return out


def exists(j: int, v: Variant, input_size: int, hidden: int) -> bool:
    """The doc: "j ≥ 1, or j = 0 (the layer input x itself) for skip_source=output when the input
    size equals the cell size" (so never for source=separate, though its output place reads h^j)."""
    return j >= 1 or (j == 0 and v.source == "output" and input_size == hidden)


def shortcut_places(v: Variant) -> tuple[str, ...]:
    """Where the shortcut enters (the doc's ``skip=`` table); "gates" is the z-addition of Eq. 32."""
    if v.cell == "rhn":
        return ()
    skip = "both" if v.cell == "block" and v.skip == "none" else v.skip
    if skip == "gates":
        if v.cell != "lstm":
            raise ValueError("skip=gates is an lstm option only")
        return ("gates",)
    return {"none": (), "internal": ("internal",), "output": ("output",), "both": PLACES}[skip]


def place_kinds(v: Variant) -> dict[str, str]:
    """For each place the shortcut enters: which states feed it ("output" or "internal")."""
    places = shortcut_places(v)
    if v.source == "separate":
        if v.cell != "lstm" or places != PLACES:
            raise ValueError("source=separate is for lstm, skip=both")
        return {"internal": "internal", "output": "output"}
    kind = "output" if v.source == "output" else "internal"
    return {place: kind for place in places}


def layer_sources(v: Variant, composition: str, span: int, layers: int, input_size: int,
                  hidden: int) -> list[dict[str, tuple[int, ...]]]:
    """Per layer: place -> the existing sources feeding it ({} for a plain layer)."""
    out = []
    for cand in source_layers(composition, span, layers):
        found = tuple(j for j in cand if exists(j, v, input_size, hidden))
        out.append({place: found for place in place_kinds(v)} if found else {})
    return out


def gated_places(v: Variant, places) -> tuple[str, ...]:
    """Places where γ is applied (not ``gates``, not ungated)."""
    return tuple(p for p in places if p in PLACES and p != v.ungated and v.gate != "none")


def blocks(v: Variant, shortcut: dict) -> tuple[list[str], list[str]]:
    """Names of the pre-activation blocks of ``z`` (``W_h``, ``b``) and of ``W_x``, in order."""
    has_g = v.gate in ("recurrent", "hidden") and bool(gated_places(v, shortcut))
    head = {"lstm": ["i", "f", "o"], "block": ["i", "o"], "rhn": ["t", "o"]}[v.cell]
    names = head + (["g"] if has_g else []) + ["s"]
    x_names = [n for n in names if not (n == "g" and v.gate == "hidden")]
    return names, x_names


def expected_shapes(v: Variant, input_size: int, hidden: int, shortcut: dict) -> dict[str, tuple[int, ...]]:
    """The parameters of one BiLayer as the doc's layout implies (leading 2 = direction)."""
    names, x_names = blocks(v, shortcut)
    n = hidden
    shapes = {"w_x": (2, input_size, len(x_names) * n), "w_h": (2, n, len(names) * n), "bias": (2, 1, len(names) * n)}
    gated = gated_places(v, shortcut)
    if gated and v.gate in ("recurrent", "skip"):
        shapes["u_k"] = (2, n, n)
    if gated and v.gate in ("input", "bernoulli-learned"):
        shapes["w_g"] = (2, input_size, 2 * n if v.source == "separate" else n)
    if gated and v.gate == "linear":
        shapes["w_lin"] = (2, n)
    if v.cell == "rhn" and v.depth > 1:
        shapes["w_deep"] = (2, v.depth - 1, n, 2 * n)
        shapes["b_deep"] = (2, v.depth - 1, 1, 2 * n)
    return shapes


def _split(row: torch.Tensor, names: list[str], n: int) -> dict[str, torch.Tensor]:
    return {name: row[a * n:(a + 1) * n] for a, name in enumerate(names)}


def _map(v: Variant, K: torch.Tensor) -> torch.Tensor:
    return {"identity": lambda a: a, "sigmoid": torch.sigmoid, "tanh": torch.tanh}[v.skip_map](K)


def run_direction(v: Variant, layer, d: int, xs: list[torch.Tensor], order: list[int],
                  feeds: dict[str, list[torch.Tensor]], u: torch.Tensor | None,
                  training: bool) -> tuple[list, list]:
    """One direction of one layer over one sentence.

    xs: the layer input per sentence position; order: positions in reading order; feeds:
    place -> K per sentence position (summed source states); u: [len, n] uniform draws per
    sentence position, or None. Returns (h, internal) per sentence position.
    """
    n = layer.w_h.shape[1]
    names, x_names = blocks(v, feeds)
    W_x, W_h, b = layer.w_x[d], layer.w_h[d], layer.bias[d, 0]
    gated = gated_places(v, feeds)
    h = xs[0].new_zeros(n)
    c = xs[0].new_zeros(n)
    hs: list = [None] * len(xs)
    internals: list = [None] * len(xs)
    for p in order:
        x = xs[p]
        zx = _split(x @ W_x, x_names, n)
        zh = _split(h @ W_h, names, n)
        zb = _split(b, names, n)
        z = {name: zx.get(name, 0) + zh[name] + zb[name] for name in names}
        if "gates" in feeds:  # Eq. 32: K added to i, f, o, s; no γ
            for name in ("i", "f", "o", "s"):
                z[name] = z[name] + feeds["gates"][p]
        K = {place: feeds[place][p] for place in PLACES if place in feeds}
        k = {place: _map(v, value) for place, value in K.items()}
        if "g" in z and v.gate == "recurrent":
            z["g"] = z["g"] + next(iter(K.values())) @ layer.u_k[d]  # one K (source is not separate)
        gamma: dict[str, torch.Tensor] = {}
        for place in gated:
            if v.gate in ("recurrent", "hidden"):
                gamma[place] = torch.sigmoid(z["g"])
            elif v.gate == "input":
                w_g = layer.w_g[d]
                if v.source == "separate":
                    w_g = w_g[:, :n] if place == "internal" else w_g[:, n:]
                gamma[place] = torch.sigmoid(x @ w_g)
            elif v.gate == "skip":
                gamma[place] = torch.sigmoid(K[place] @ layer.u_k[d])
            elif v.gate == "output":
                gamma[place] = torch.sigmoid(z["o"])
            elif v.gate == "linear":
                gamma[place] = layer.w_lin[d]
            elif v.gate == "bernoulli":
                gamma[place] = (u[p] < 0.5).to(x.dtype) if training else x.new_full((n,), 0.5)
            elif v.gate == "bernoulli-learned":
                prob = torch.sigmoid(x @ layer.w_g[d])
                gamma[place] = ((u[p] < prob).to(x.dtype) + prob - prob.detach()) if training else prob
            else:
                raise ValueError(v.gate)

        def P(place: str, value: torch.Tensor) -> torch.Tensor:
            if place not in k:
                return value
            g = gamma.get(place)  # None: γ = 1
            if v.mix == "add":
                return value + (k[place] if g is None else g * k[place])
            if v.gate == "linear":
                raise ValueError("highway mix with a linear gate is not defined by the doc")
            if g is None:
                return k[place]  # (1 - 1)⊙v + 1⊙k
            return (1 - g) * value + g * k[place]

        if v.cell == "lstm":
            c = P("internal", torch.sigmoid(z["f"]) * c + torch.sigmoid(z["i"]) * torch.tanh(z["s"]))
            h = P("output", torch.sigmoid(z["o"]) * torch.tanh(c))
            internals[p] = c
        elif v.cell == "block":
            m = P("internal", torch.sigmoid(z["i"]) * torch.tanh(z["s"]))
            h = P("output", torch.sigmoid(z["o"]) * torch.tanh(m))
            internals[p] = m
        else:  # rhn
            t1 = torch.sigmoid(z["t"])
            q = t1 * torch.tanh(z["s"]) + (1 - t1) * h
            for step in range(v.depth - 1):  # micro-steps 2..L
                ts = q @ layer.w_deep[d, step] + layer.b_deep[d, step, 0]
                t_l, s_l = torch.sigmoid(ts[:n]), torch.tanh(ts[n:])
                q = t_l * s_l + (1 - t_l) * q
            h = torch.sigmoid(z["o"]) * torch.tanh(q)
        hs[p] = h
    return hs, internals


def reference_forward(v: Variant, layers, x: torch.Tensor, lengths: torch.Tensor, composition: str = "chain",
                      skip_span: int = 1, training: bool = True) -> torch.Tensor:
    """``layers``: the fast model's BiLayers (their parameters are read by name); x: [T, B, D];
    returns [T, B, 2n] (zeros at padded positions)."""
    steps, batch, size = x.shape
    n = layers[0].w_h.shape[1]
    sources = layer_sources(v, composition, skip_span, len(layers), size, n)
    # states[j][b][d]["output" | "internal"]: per sentence position
    states: list = [[[{"output": [x[p, b] for p in range(int(lengths[b]))]} for _ in range(2)]
                     for b in range(batch)]]
    for l, layer in enumerate(layers, start=1):
        feeds_of = sources[l - 1]
        u = None
        if v.gate in ("bernoulli", "bernoulli-learned") and gated_places(v, feeds_of):
            u = torch.rand(steps, 2, batch, n).to(x.dtype)
        kinds = place_kinds(v)
        row = []
        for b in range(batch):
            length = int(lengths[b])
            if l == 1:
                xs = [x[p, b] for p in range(length)]
            else:
                below = states[l - 1][b]
                xs = [torch.cat([below[0]["output"][p], below[1]["output"][p]]) for p in range(length)]
            pair = []
            for d in range(2):
                order = list(range(length)) if d == 0 else list(range(length - 1, -1, -1))
                feeds = {place: [sum(states[j][b][d][kinds[place]][p] for j in js) for p in range(length)]
                         for place, js in feeds_of.items()}
                u_b = None
                if u is not None:  # scan order -> sentence position
                    u_b = [u[p, 0, b] if d == 0 else u[steps - 1 - p, 1, b] for p in range(length)]
                hs, internals = run_direction(v, layer, d, xs, order, feeds, u_b, training)
                pair.append({"output": hs, "internal": internals})
            row.append(pair)
        states.append(row)
    out = x.new_zeros(steps, batch, 2 * n)
    top = states[-1]
    for b in range(batch):
        for p in range(int(lengths[b])):
            out[p, b] = torch.cat([top[b][0]["output"][p], top[b][1]["output"][p]])
    return out
