"""The float32 kernels of the torch-free tagger runtime (tagger.runtime.kernels over _fastscan.c):
the packed layout, products into every kind of sink, and a whole LSTM layer in one call, against
numpy in float64, for each float32 kernel this CPU runs (plain C everywhere; AVX2 and AVX-512 on
x86 CPUs that have them), and how a kernel is chosen."""

from __future__ import annotations

import numpy as np
import pytest

from tagger.modules import fused, packing
from tagger.runtime import kernels
from tagger.runtime.kernels import Kernel
from tests.helpers import check_upper_scan, reference_lstm

pytestmark = pytest.mark.skipif(fused._fastscan is None, reason="the C steps are not built")

HAS = int(fused._fastscan.f32_kernel()) if fused._fastscan is not None else 0
F32 = [pytest.param(Kernel(f32=k), id=fused.F32_KERNELS[k]) for k in range(1, HAS + 1)]


def test_float32_packing_puts_each_value_in_its_panel_and_starts_on_a_cache_line():
    w = np.arange(70 * 20, dtype=np.float32).reshape(70, 20)  # N 20 → 32, K stays 70
    packed = packing.pack(w, f32=True)
    assert (packed.k, packed.n, packed.cols) == (70, 32, 20) and packed.tiles.shape == (2, 70, 16)
    for k, n in [(0, 0), (1, 0), (33, 5), (69, 19), (40, 17)]:
        assert packed.tiles[n // 16, k, n % 16] == w[k, n]
    assert not packed.tiles[1, :, 4:].any()  # the padding columns are zero
    assert packed.tiles.ctypes.data % 64 == 0 and packing.pack(w).tiles.ctypes.data % 64 == 0
    both = packing.recurrent(np.stack([w[:, :16], -w[:, :16]]), f32=True)
    assert both.tiles.shape == (2, 70, 16) and (both.tiles[1] == -both.tiles[0]).all()


def test_the_best_kernel_is_taken_by_default_and_the_environment_can_ask_for_less(monkeypatch):
    monkeypatch.delenv("TAGGER_CPU", raising=False)
    monkeypatch.setattr(fused._fastscan, "f32_kernel", lambda: 3)
    for wanted, expected in [("", 3), ("avx2", 2), ("generic", 1), ("none", 0), ("nonsense", 3)]:
        kernels.f32_kernel.cache_clear()
        monkeypatch.setenv("TAGGER_F32_KERNEL", wanted)
        assert kernels.f32_kernel() == expected
    monkeypatch.setattr(fused._fastscan, "f32_kernel", lambda: 1)  # never more than the CPU has
    monkeypatch.setenv("TAGGER_F32_KERNEL", "avx512")
    kernels.f32_kernel.cache_clear()
    assert kernels.f32_kernel() == 1
    monkeypatch.setattr(fused._fastscan, "f32_kernel", lambda: 3)  # as an AVX2 CPU: AVX2 at most
    monkeypatch.setenv("TAGGER_CPU", "avx2")
    kernels.f32_kernel.cache_clear()
    assert kernels.f32_kernel() == 2
    kernels.f32_kernel.cache_clear()
    assert not kernels.NUMPY and Kernel(f32=2) and Kernel(bf16=1).table_type is np.uint16
    assert Kernel(f32=2).name == "f32-avx2" and kernels.NUMPY.name == "numpy"


def test_a_kernel_the_cpu_lacks_is_refused_in_c():
    if HAS >= 3:
        pytest.skip("this CPU runs every float32 kernel")
    a, out = np.ones((4, 8), np.float32), np.zeros((4, 16), np.float32)
    with pytest.raises(ValueError):
        kernels.product(Kernel(f32=3), a, packing.pack(np.ones((8, 16), np.float32), f32=True), out)


@pytest.mark.parametrize("kernel", F32)
@pytest.mark.parametrize("m,k,n", [(1, 1, 16), (37, 305, 100), (70, 64, 48), (97, 128, 640), (200, 33, 7)])
def test_products_are_numpys(kernel, m, k, n):
    rng = np.random.default_rng(m + k + n)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    out = np.full((m, n), np.nan, dtype=np.float32)
    kernels.product(kernel, x, packing.pack(w, f32=True), out, bias)
    np.testing.assert_allclose(out, x.astype(np.float64) @ w + bias, rtol=1e-5, atol=1e-4)
    wide = np.zeros((m, k + 9), np.float32)  # a left side whose rows are further apart (a view)
    wide[:, :k] = x
    kernels.product(kernel, wide[:, :k], packing.pack(w, f32=True), out)
    np.testing.assert_allclose(out, x.astype(np.float64) @ w, rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError):  # a left side as wide as another right side
        kernels.product(kernel, np.zeros((m, k + 1), np.float32), packing.pack(w, f32=True), out)


@pytest.mark.parametrize("kernel", F32)
@pytest.mark.parametrize("hidden", [16, 12])
def test_a_product_of_two_directions_lands_in_its_blocks_and_a_shortcut_term_adds_to_the_g_gates(kernel, hidden):
    rng = np.random.default_rng(hidden)
    rows_, width, inputs = 35, 4 * hidden, 40
    block = packing.up(width, 16)
    x = rng.standard_normal((rows_, inputs)).astype(np.float32)
    w = rng.standard_normal((2, inputs, width)).astype(np.float32)
    bias = rng.standard_normal(2 * block).astype(np.float32)
    gx = np.full((rows_, 2 * block), np.nan, dtype=np.float32)
    kernels.product(kernel, x, packing.directions(w, block, f32=True), gx, bias)
    for d in range(2):
        np.testing.assert_allclose(gx[:, d * block : d * block + width], x.astype(np.float64) @ w[d]
                                   + bias[d * block : d * block + width], rtol=1e-5, atol=1e-4)
    u = rng.standard_normal((2, 2 * hidden, hidden)).astype(np.float32)
    before = gx.copy()
    kernels.product(kernel, np.ascontiguousarray(x[:, : 2 * hidden]), packing.directions(u, packing.up(hidden, 16), True),
                    gx, block=packing.up(hidden, 16), stride=block, offset=3 * hidden, count=hidden, add=True)
    for d in range(2):
        g = slice(d * block + 3 * hidden, d * block + 4 * hidden)
        np.testing.assert_allclose(gx[:, g], before[:, g] + x[:, : 2 * hidden].astype(np.float64) @ u[d], rtol=1e-5,
                                   atol=1e-4)
        gx[:, g] = before[:, g]
    np.testing.assert_array_equal(gx, before)  # nothing else moved


@pytest.mark.parametrize("kernel", F32)
@pytest.mark.parametrize("hidden,shortcut,batch", [(16, False, 19), (12, True, 1), (40, True, 130)])
def test_a_whole_layer_in_one_call_is_the_lstm(kernel, hidden, shortcut, batch):
    rng = np.random.default_rng(hidden)
    steps = 6
    width = (5 if shortcut else 4) * hidden
    gx = rng.standard_normal((2, steps, batch, width)).astype(np.float32)
    w_h = (rng.standard_normal((2, hidden, width)) * 0.3).astype(np.float32)
    k = rng.standard_normal((steps, 2, batch, hidden)).astype(np.float32) if shortcut else None
    lengths = rng.integers(1, steps + 1, batch)
    t = np.arange(3)[:, None]
    mask = np.ascontiguousarray(np.stack([t < lengths, steps - 1 - t < lengths], 1), dtype=np.float32)
    out = np.full((steps, 2, batch, hidden), np.nan, dtype=np.float32)
    xs = np.full((steps * batch, 2 * hidden), np.nan, dtype=np.float32)
    kernels.scan(kernel, gx, packing.recurrent(w_h, True), hidden, k, mask, out, xs, steps, batch)
    expected, sentence = reference_lstm(gx, w_h, k, mask)
    np.testing.assert_allclose(out, expected, atol=2e-5)
    np.testing.assert_allclose(xs, sentence, atol=2e-5)
    block = packing.up(width, 16) + 16  # the same gates in sentence order, as a product writes them
    rows_ = np.zeros((steps * batch, 2 * block), dtype=np.float32)
    rows_[:, :width] = gx[0].reshape(-1, width)
    rows_[:, block : block + width] = gx[1][::-1].reshape(-1, width)
    out2, xs2 = np.full_like(out, np.nan), np.full_like(xs, np.nan)
    kernels.scan(kernel, rows_, packing.recurrent(w_h, True), hidden, k, mask, out2, xs2, steps, batch, block)
    np.testing.assert_array_equal(out2, out)
    np.testing.assert_array_equal(xs2, xs)
    with pytest.raises(ValueError):
        kernels.scan(kernel, gx, packing.recurrent(w_h[:, :, : width - hidden], True), hidden, k, mask, out, xs,
                     steps, batch)


@pytest.mark.parametrize("kernel", F32)
def test_every_float32_kernel_gives_the_same_layer_to_float32_rounding(kernel):
    rng = np.random.default_rng(5)
    steps, batch, hidden = 9, 23, 24
    gx = rng.standard_normal((2, steps, batch, 4 * hidden)).astype(np.float32)
    w_h = (rng.standard_normal((2, hidden, 4 * hidden)) * 0.3).astype(np.float32)
    outs = []
    for other in (Kernel(f32=1), kernel):
        xs = np.zeros((steps * batch, 2 * hidden), np.float32)
        kernels.scan(other, gx, packing.recurrent(w_h, True), hidden, None, None, None, xs, steps, batch)
        outs.append(xs)
    np.testing.assert_allclose(outs[0], outs[1], atol=1e-6)


@pytest.mark.parametrize("kernel", F32)
@pytest.mark.parametrize("hidden,shortcut,batch", [(16, False, 7), (12, True, 1), (40, True, 33)])
def test_an_upper_layer_with_its_input_product_in_the_scan_is_the_product_then_the_scan(kernel, hidden, shortcut, batch):
    check_upper_scan(kernel, hidden, shortcut, batch, i8=False)
