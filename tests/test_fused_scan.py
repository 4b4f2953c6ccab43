"""The fused C time step (tagger/modules/_fastscan.c) against the torch inference scan: the same
states to float32 rounding (exp is Cephes' there, Sleef's in torch), the same tags, in float32
and bf16 products, for every zoo cell it takes; the others stay in torch."""

from __future__ import annotations

import pytest
import torch

from tagger.inference import predict
from tagger.modules import precision, recurrent
from tagger.modules.recurrent import CellSpec, StackedBiRNN
from tests.test_tagger import TOY, toy_model
from tests.test_zoo_cells import CASES

pytestmark = pytest.mark.skipif(recurrent._fastscan is None, reason="the C step was not built (no compiler)")


def scans(model, x, lengths, monkeypatch, dtype=None):
    """(fused, torch) outputs of ``model`` and whether any layer took the fused step."""
    model.set_matmul_dtype(dtype)
    taken = []
    real = recurrent._scan_fused

    def spy(*args, **kwargs):
        taken.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(recurrent, "_scan_fused", spy)
    with torch.no_grad():
        monkeypatch.setattr(recurrent, "FUSED", True)
        fused = model(x, lengths)
        monkeypatch.setattr(recurrent, "FUSED", False)
        plain = model(x, lengths)
    return fused, plain, bool(taken)


@pytest.mark.parametrize("dtype", [None, torch.bfloat16])
@pytest.mark.parametrize("spec,setup", CASES)
def test_fused_step_gives_the_torch_scans_states(spec, setup, dtype, monkeypatch):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    hidden = 16
    size = hidden if setup["input_size"] == 4 else 10
    model = StackedBiRNN(size, hidden, setup["layers"], CellSpec(**spec), skip_span=setup["skip_span"],
                         composition=setup["composition"])
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.5)
    model.eval()
    x, lengths = torch.randn(9, 70, size), torch.randint(1, 10, (70,))  # 70 rows: past one bf16 row quantum
    lengths[0] = 9
    fused, plain, taken = scans(model, x, lengths, monkeypatch, dtype)
    assert fused.shape == plain.shape
    # bf16: a last-bit difference in exp can round h_{t-1} to the neighbouring bf16 value (2^-8 apart)
    tolerance = 2e-5 if dtype is None else 1e-2
    assert torch.allclose(fused, plain, atol=tolerance, rtol=1e-5), (fused - plain).abs().max()
    lstm_output_skip = (spec.get("cell", "lstm") == "lstm" and spec.get("skip", "none") in ("none", "output")
                        and spec.get("mix", "add") == "add" and spec.get("gate", "recurrent") in ("recurrent", "output", "none"))
    if lstm_output_skip:  # the presets' cells (fast, small, the papers' output-skip rows) take it
        assert taken, spec


def test_a_fast_tagger_tags_alike_with_and_without_the_fused_step(monkeypatch):
    torch.set_num_threads(1)
    model = toy_model()
    model.eval()
    for dtype in ("fp32", "bf16"):
        precision.apply(model, dtype)
        monkeypatch.setattr(recurrent, "FUSED", True)
        fused = predict(model, TOY)
        monkeypatch.setattr(recurrent, "FUSED", False)
        assert predict(model, TOY) == fused
    monkeypatch.setattr(recurrent, "FUSED", True)
    assert recurrent.fused_applies(torch.zeros(2, 1, 1, 5, dtype=torch.float32), {}, CellSpec(), False)
    assert not recurrent.fused_applies(torch.zeros(2, 1, 1, 5), {}, CellSpec(cell="block"), False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_fused_first_layer_and_input_products_equal_torchs(dtype, monkeypatch):
    """``window_sum`` (the first layer from per-word products, window gates on, tables strided as
    word_products makes them, in float32 or bf16) and ``scan_order`` (both directions' input
    products in scan order) give torch's values."""
    torch.manual_seed(0)
    model = toy_model()
    model.eval()
    layer = model.input
    assert layer.gates is not None and layer.window == 3
    batch = model.collate(TOY, with_gold=False)
    first = model.rnn.layers[0]
    with torch.no_grad():
        layer.gates.bias.add_(torch.randn_like(layer.gates.bias))
        tables, gate_in = layer.word_products(batch.words, batch.caps, batch.chars, batch.spelled, first.input_weight())
        assert not tables.is_contiguous()
        tables = tables.to(dtype)
        types = batch.types.t()
        monkeypatch.setattr(recurrent, "FUSED", True)
        fused = layer.gather_products(tables, gate_in, types, first.bias)
        monkeypatch.setattr(recurrent, "FUSED", False)
        plain = layer.gather_products(tables, gate_in, types, first.bias)
        assert fused.dtype == plain.dtype == torch.float32
        assert torch.allclose(fused, plain, atol=1e-5), (fused - plain).abs().max()
        x, weight, bias = torch.randn(6, 4, 10), torch.randn(2, 10, 12).to(dtype), torch.randn(2, 1, 12)
        for b in (bias, None):
            monkeypatch.setattr(recurrent, "FUSED", True)
            fused = recurrent._both_directions(x, weight, b)
            monkeypatch.setattr(recurrent, "FUSED", False)
            plain = recurrent._both_directions(x, weight, b)
            assert torch.allclose(fused, plain, atol=1e-5), (fused - plain).abs().max()
