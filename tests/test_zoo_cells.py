"""The batched scan (tagger.modules.recurrent) against the naive reference of docs/zoo.md
(tests/zoo_reference.py): outputs and gradients (input and every parameter), every variant."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from tagger.modules.recurrent import CellSpec, StackedBiRNN
from tests.zoo_reference import Variant, expected_shapes, layer_sources, reference_forward

T, B, D, H = 5, 3, 6, 4
LENGTHS = (5, 3, 4)
ATOL = 1e-5


def case(name: str, layers: int = 4, composition: str = "chain", skip_span: int = 1, input_size: int = D,
         training: bool = True, **spec):
    return pytest.param(spec, dict(layers=layers, composition=composition, skip_span=skip_span,
                                   input_size=input_size, training=training), id=name)


BLOCK = dict(cell="block", gate="input")  # the 2017 default: shortcut block, skip both, γ = σ(x W_g)

CASES = [
    # LSTM with skip connections (2016, Table 1) and case 1 of 2017 Table 2
    case("lstm-none", skip="none"),
    case("lstm-gates", skip="gates"),
    case("lstm-gates-d=h", skip="gates", input_size=H),
    case("lstm-internal-none", skip="internal", gate="none"),
    case("lstm-internal-recurrent", skip="internal", gate="recurrent"),
    case("lstm-output-none", skip="output", gate="none"),
    case("lstm-output-none-d=h", skip="output", gate="none", input_size=H),
    case("lstm-output-recurrent", skip="output", gate="recurrent"),
    case("lstm-output-recurrent-fb5", skip="output", gate="recurrent", forget_bias=5.0),
    case("lstm-output-recurrent-sigmoid", skip="output", gate="recurrent", skip_map="sigmoid"),
    case("lstm-both-none", skip="both", gate="none"),
    case("lstm-both-input", skip="both", gate="input"),
    case("lstm-both-highway", skip="both", gate="input", mix="highway"),
    case("lstm-both-separate", skip="both", gate="input", source="separate"),
    case("lstm-both-separate-none", skip="both", gate="none", source="separate"),
    case("lstm-both-separate-d=h", skip="both", gate="input", source="separate", input_size=H),
    case("lstm-output-internal-source", skip="output", gate="recurrent", source="internal"),
    # H-LSTM
    case("hlstm", skip="internal", gate="recurrent", source="internal", composition="adjacent"),
    case("hlstm-d=h", skip="internal", gate="recurrent", source="internal", composition="adjacent", input_size=H),
    # shortcut blocks (2017 Table 2 case 2)
    case("block-default", **BLOCK),
    case("block-skip-none-means-both", cell="block", skip="none", gate="input"),
    case("block-ungated-output", **BLOCK, ungated="output"),
    case("block-ungated-internal", **BLOCK, ungated="internal"),
    case("block-gate-output", cell="block", gate="output"),
    case("block-skip-output", **BLOCK, skip="output"),
    case("block-skip-internal", **BLOCK, skip="internal"),
    case("block-source-internal", **BLOCK, source="internal"),
    # gates (2017 Table 3)
    case("gate-none", cell="block", gate="none"),
    case("gate-tanh-map", **BLOCK, skip_map="tanh"),
    case("gate-linear", cell="block", gate="linear"),
    case("gate-hidden", cell="block", gate="hidden"),
    case("gate-skip", cell="block", gate="skip"),
    case("gate-skip-d=h", cell="block", gate="skip", input_size=H),
    case("gate-recurrent", cell="block", gate="recurrent"),
    case("gate-bernoulli-train", cell="block", gate="bernoulli"),
    case("gate-bernoulli-eval", cell="block", gate="bernoulli", training=False),
    case("gate-bernoulli-learned-train", cell="block", gate="bernoulli-learned"),
    case("gate-bernoulli-learned-eval", cell="block", gate="bernoulli-learned", training=False),
    case("lstm-bernoulli-learned-train", skip="both", gate="bernoulli-learned"),
    # compositions (2017 Fig. 1)
    case("chain-span0", **BLOCK, layers=5, skip_span=0),
    case("chain-span1", **BLOCK, layers=5, skip_span=1),
    case("chain-span2", **BLOCK, layers=5, skip_span=2),
    case("nested-span1", **BLOCK, layers=5, composition="nested", skip_span=1),
    case("nested-span2", **BLOCK, layers=5, composition="nested", skip_span=2),
    case("nested-span1-d=h", **BLOCK, layers=5, composition="nested", skip_span=1, input_size=H),
    case("nested-span1-lstm-output-d=h", skip="output", gate="recurrent", layers=5, composition="nested",
         skip_span=1, input_size=H),
    # recurrent highway
    case("rhn-depth3", cell="rhn", depth=3),
    case("rhn-depth1", cell="rhn", depth=1),
]


def build(spec: dict, setup: dict, perturb: bool = True):
    torch.manual_seed(0)
    model = StackedBiRNN(setup["input_size"], H, setup["layers"], CellSpec(**spec), skip_span=setup["skip_span"],
                         composition=setup["composition"]).double()
    if perturb:  # away from the initial values (forget bias, w_lin = 1, zero biases) so every parameter matters
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.add_(torch.randn_like(parameter) * 0.5)
    model.train(setup["training"])
    return model


def _grads(loss, leaves):
    grads = torch.autograd.grad(loss, leaves, allow_unused=True)
    return [torch.zeros_like(leaf) if g is None else g for leaf, g in zip(leaves, grads)]


@pytest.mark.parametrize("spec,setup", CASES)
def test_scan_matches_reference(spec, setup):
    torch.set_num_threads(1)
    variant = Variant(**spec)
    model = build(spec, setup)
    size, layers = setup["input_size"], setup["layers"]
    shortcuts = layer_sources(variant, setup["composition"], setup["skip_span"], layers, size, H)

    # the doc's sources and parameter layout
    fast_sources = [set(s or ()) for s in model.sources]
    assert fast_sources == [set().union(*shortcut.values()) for shortcut in shortcuts]
    for i, (layer, shortcut) in enumerate(zip(model.layers, shortcuts)):
        for name, shape in expected_shapes(variant, size if i == 0 else 2 * H, H, shortcut).items():
            assert getattr(layer, name) is not None, f"layer {i + 1}: no {name}"
            assert tuple(getattr(layer, name).shape) == shape, f"layer {i + 1}: {name}"

    gen = torch.Generator().manual_seed(1)
    x = torch.randn(T, B, size, dtype=torch.float64, generator=gen, requires_grad=True)  # padding holds noise too
    lengths = torch.tensor(LENGTHS)
    weight = torch.randn(T, B, 2 * H, dtype=torch.float64, generator=gen)
    real = (torch.arange(T).unsqueeze(1) < lengths).unsqueeze(-1).double()  # [T, B, 1]
    leaves = [x] + list(model.parameters())

    torch.manual_seed(7)
    fast = model(x, lengths)
    torch.manual_seed(7)
    ref = reference_forward(variant, model.layers, x, lengths, setup["composition"], setup["skip_span"],
                            setup["training"])
    assert fast.shape == (T, B, 2 * H)
    torch.testing.assert_close(fast * real, ref * real, atol=ATOL, rtol=0)

    names = ["x"] + [name for name, _ in model.named_parameters()]
    for name, g_fast, g_ref in zip(names, _grads((fast * real * weight).sum(), leaves),
                                   _grads((ref * real * weight).sum(), leaves)):
        torch.testing.assert_close(g_fast, g_ref, atol=ATOL, rtol=0, msg=lambda m: f"d/d{name}: {m}")


def test_reference_variant_has_cellspecs_names_and_defaults():
    """The cases build both from one dict: the same keyword must mean the same in both."""
    spec_defaults = {f.name: f.default for f in dataclasses.fields(CellSpec)}
    for f in dataclasses.fields(Variant):
        assert spec_defaults.get(f.name, "absent") == f.default, f.name


@pytest.mark.parametrize("spec,setup", [c for c in CASES if c.id in ("lstm-output-recurrent-fb5", "gate-linear",
                                                                      "rhn-depth3", "lstm-both-input")])
def test_initial_biases_and_linear_gate(spec, setup):
    """Doc: b_f starts at forget_bias, the other biases at 0; the linear gate's w at 1."""
    model = build(spec, setup, perturb=False)
    variant = Variant(**spec)
    for layer in model.layers:
        bias = layer.bias.detach()
        if variant.cell == "lstm":  # blocks i, f, o, ...
            assert torch.all(bias[..., H:2 * H] == variant.forget_bias)
            bias = torch.cat([bias[..., :H], bias[..., 2 * H:]], -1)
        assert torch.all(bias == 0)
        if getattr(layer, "b_deep", None) is not None:
            assert torch.all(layer.b_deep == 0)
        if variant.gate == "linear" and getattr(layer, "w_lin", None) is not None:
            assert torch.all(layer.w_lin == 1)
