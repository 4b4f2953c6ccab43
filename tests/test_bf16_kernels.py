"""The bf16 kernels of the torch-free tagger runtime (tagger.runtime.bf16 over _fastscan.c): the
packed layout, products into both sinks, and a whole LSTM layer, against numpy on the same
bf16-rounded values, for each kernel this CPU runs (none on a CPU without AVX512-BF16: those
tests skip, the layout and the choice of kernel are tested everywhere)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tagger.modules import fused
from tagger.runtime import bf16
from tests.helpers import reference_lstm

HAS = int(fused._fastscan.bf16_kernel()) if fused._fastscan is not None else 0
KERNELS = [pytest.param(k, id=fused.KERNELS[k]) for k in range(1, HAS + 1)] or [
    pytest.param(0, marks=pytest.mark.skip(reason="no AVX512-BF16 or AMX on this CPU"))]


def rounded(shape, rng, scale=1.0) -> np.ndarray:
    """Random float32 values that bf16 holds exactly."""
    return bf16.from_bf16(bf16.to_bf16(rng.standard_normal(shape).astype(np.float32) * scale))


def left(x: np.ndarray) -> np.ndarray:
    a = bf16.rows(*x.shape)
    a[: x.shape[0], : x.shape[1]] = bf16.to_bf16(x)
    return a


def test_bf16_rounds_to_nearest_even_and_packing_puts_each_value_in_its_tile_slot():
    x = np.array([1.0, 1.00390625, 1.01171875, -2.5], dtype=np.float32)  # 1 + 2^-8, 1 + 3·2^-8: ties, to even
    assert bf16.to_bf16(x).tolist() == [0x3F80, 0x3F80, 0x3F82, 0xC020]
    assert bf16.from_bf16(bf16.to_bf16(x)).tolist() == [1.0, 1.0, 1.015625, -2.5]
    w = np.arange(70 * 20, dtype=np.float32).reshape(70, 20)  # K 70 → 96, N 20 → 32
    packed = bf16.pack(w)
    assert (packed.k, packed.n) == (96, 32) and packed.tiles.shape == (2, 3, 16, 32)
    values = bf16.from_bf16(packed.tiles)
    for k, n in [(0, 0), (1, 0), (33, 5), (69, 19), (40, 17)]:
        assert values[n // 16, k // 32, (k % 32) // 2, 2 * (n % 16) + k % 2] == bf16.from_bf16(bf16.to_bf16(w[k, n]))
    assert values[1, 2, :, 2 * 4:].max() == 0 and values[:, 2, 3:].max() == 0  # padding is zero


def test_amx_is_taken_by_default_dot_products_where_they_pay_and_the_environment_can_ask_for_less(monkeypatch):
    monkeypatch.delenv("TAGGER_CPU", raising=False)
    monkeypatch.setattr(fused._fastscan, "bf16_kernel", lambda: 1)
    for pays in (False, True):
        monkeypatch.setattr(bf16, "dot_products_pay", lambda: pays)
        for wanted, expected in [("", int(pays)), ("amx", 1), ("avx512-bf16", 1), ("none", 0)]:
            bf16.bf16_kernel.cache_clear()
            monkeypatch.setenv("TAGGER_BF16_KERNEL", wanted)
            assert bf16.bf16_kernel() == expected
    monkeypatch.setattr(fused._fastscan, "bf16_kernel", lambda: 2)
    for wanted, expected in [("", 2), ("avx512-bf16", 1), ("none", 0), ("nonsense", 2)]:
        bf16.bf16_kernel.cache_clear()
        monkeypatch.setenv("TAGGER_BF16_KERNEL", wanted)
        assert bf16.bf16_kernel() == expected
    monkeypatch.setenv("TAGGER_BF16_KERNEL", "amx")  # as a CPU without bf16: none, whatever is asked
    monkeypatch.setenv("TAGGER_CPU", "avx2")
    bf16.bf16_kernel.cache_clear()
    assert bf16.bf16_kernel() == 0
    bf16.bf16_kernel.cache_clear()


@pytest.mark.skipif(HAS < 1, reason="no AVX512-BF16 or AMX on this CPU")
def test_whether_dot_products_pay_is_measured_in_a_moment():
    start = time.perf_counter()
    assert bf16.dot_products_pay(repeats=3) in (True, False)
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("m,k,n", [(1, 32, 16), (37, 305, 100), (70, 64, 48), (16, 128, 640)])
def test_products_are_numpys_on_the_same_bf16_values(kernel, m, k, n):
    rng = np.random.default_rng(m + k + n)
    x, w, bias = rounded((m, k), rng), rounded((k, n), rng), rng.standard_normal(n).astype(np.float32)
    expected = x.astype(np.float64) @ w + bias
    out = np.full((m, n), np.nan, dtype=np.float32)
    bf16.product(kernel, left(x), bf16.pack(w), out, bias)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-4)
    low = np.zeros((m, n), dtype=np.uint16)  # bf16 out: the float32 result rounded
    bf16.product(kernel, left(x), bf16.pack(w), low)
    np.testing.assert_allclose(bf16.from_bf16(low), x.astype(np.float64) @ w, rtol=2 ** -8, atol=1e-3)
    with pytest.raises(ValueError):  # a left side as wide as another right side
        bf16.product(kernel, bf16.rows(m, bf16.up(k, 32) + 32), bf16.pack(w), out)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("hidden", [16, 12])
def test_a_product_of_two_directions_lands_in_its_blocks_and_a_shortcut_term_adds_to_the_g_gates(kernel, hidden):
    rng = np.random.default_rng(hidden)
    rows_, width, inputs = 35, 4 * hidden, 40
    block = bf16.up(width, 16)
    x = rounded((rows_, inputs), rng)
    w = rounded((2, inputs, width), rng)
    bias = rng.standard_normal(2 * block).astype(np.float32)
    gx = np.full((rows_, 2 * block), np.nan, dtype=np.float32)
    bf16.product(kernel, left(x), bf16.directions(w, block), gx, bias)
    for d in range(2):
        np.testing.assert_allclose(gx[:, d * block : d * block + width], x.astype(np.float64) @ w[d]
                                   + bias[d * block : d * block + width], rtol=1e-5, atol=1e-4)
    u = rounded((2, 2 * hidden, hidden), rng)  # each direction's term added to its columns 3H … 4H only
    before = gx.copy()
    bf16.product(kernel, left(x[:, : 2 * hidden]), bf16.directions(u, bf16.up(hidden, 16)), gx,
                 block=bf16.up(hidden, 16), stride=block, offset=3 * hidden, count=hidden, add=True)
    for d in range(2):
        g = slice(d * block + 3 * hidden, d * block + 4 * hidden)
        np.testing.assert_allclose(gx[:, g], before[:, g] + x[:, : 2 * hidden].astype(np.float64) @ u[d], rtol=1e-5,
                                   atol=1e-4)
        gx[:, g] = before[:, g]
    np.testing.assert_array_equal(gx, before)  # nothing else moved
    with pytest.raises(ValueError):  # blocks past the end of out
        bf16.product(kernel, left(x[:, : 2 * hidden]), bf16.directions(u, bf16.up(hidden, 16)), gx,
                     block=bf16.up(hidden, 16), stride=block, offset=block, count=hidden, add=True)


def reference_layer(gx, w_h, k, mask):
    """:func:`tests.helpers.reference_lstm` with h rounded to bf16 before each product, as the kernels do."""
    return reference_lstm(gx, w_h, k, mask, lambda h: bf16.from_bf16(bf16.to_bf16(h.astype(np.float32))))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("hidden,shortcut", [(16, False), (12, True), (40, True)])
def test_a_whole_layer_in_one_call_is_the_lstm_with_bf16_products(kernel, hidden, shortcut):
    rng = np.random.default_rng(hidden)
    steps, batch = 6, 19
    width = (5 if shortcut else 4) * hidden
    gx = rng.standard_normal((2, steps, batch, width)).astype(np.float32)
    w_h = rounded((2, hidden, width), rng, 0.3)
    k = rng.standard_normal((steps, 2, batch, hidden)).astype(np.float32) if shortcut else None
    lengths = rng.integers(1, steps + 1, batch)
    t = np.arange(3)[:, None]
    mask = np.ascontiguousarray(np.stack([t < lengths, steps - 1 - t < lengths], 1), dtype=np.float32)
    out = np.full((steps, 2, batch, hidden), np.nan, dtype=np.float32)
    xs = bf16.rows(steps * batch, 2 * hidden)
    bf16.scan(kernel, gx, bf16.recurrent(w_h), hidden, k, mask, out, xs, steps, batch)
    expected, sentence = reference_layer(gx, w_h, k, mask)
    block = bf16.up(width, 16) + 16  # the same gates in sentence order, as a product writes them
    rows_ = np.zeros((steps * batch, 2 * block), dtype=np.float32)
    rows_[:, :width] = gx[0].reshape(-1, width)
    rows_[:, block : block + width] = gx[1][::-1].reshape(-1, width)
    out2, xs2 = np.full_like(out, np.nan), bf16.rows(steps * batch, 2 * hidden)
    bf16.scan(kernel, rows_, bf16.recurrent(w_h), hidden, k, mask, out2, xs2, steps, batch, block)
    np.testing.assert_array_equal(out2, out)
    np.testing.assert_array_equal(xs2, xs)
    # an h on the edge between two bf16 values may round the other way (a reciprocal to 2^-14 here):
    # the next products then differ by 2^-8 of a term, rarely and not far
    np.testing.assert_allclose(out, expected, atol=5e-3)
    assert np.abs(out - expected).mean() < 1e-4
    np.testing.assert_allclose(bf16.from_bf16(xs[: steps * batch, : 2 * hidden]), sentence, rtol=2 ** -8, atol=5e-3)
    assert not xs[steps * batch :].any() and not xs[:, 2 * hidden :].any()  # the padding stays zero
    with pytest.raises(ValueError):
        bf16.scan(kernel, gx, bf16.recurrent(w_h[:, :, : width - hidden]), hidden, k, mask, out, xs, steps, batch)
