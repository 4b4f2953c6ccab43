"""The int8 kernels of the torch-free tagger runtime (tagger.runtime.kernels over _fastscan.c, issue
33): the packed layout and its scales, products against the same integer arithmetic in numpy and
against float64 within the codes' rounding, a whole LSTM layer against the float64 LSTM whose
state is rounded to the codes before each product, and when `tagger tag` takes them."""

from __future__ import annotations

import numpy as np
import pytest

from tagger.modules import fused, packing
from tagger.runtime import kernels
from tagger.runtime.kernels import Kernel
from tests.helpers import check_upper_scan, reference_lstm

HAS = int(fused._fastscan.i8_kernel()) if fused._fastscan is not None else 0
pytestmark = pytest.mark.skipif(not HAS, reason="no int8 kernel on this CPU (AVX2 on x86-64)")
F32 = int(fused._fastscan.f32_kernel()) if fused._fastscan is not None else 0
I8 = Kernel(f32=F32, i8=HAS)
#: every int8 kernel this CPU runs (AVX2's; AVX-VNNI's and AVX512-VNNI's where it has them)
EVERY = [pytest.param(Kernel(f32=F32, i8=k), id=fused.I8_KERNELS[k]) for k in range(1, HAS + 1)
         if fused._fastscan.i8_kernel_runs(k)]


def unpacked(packed: packing.Packed) -> np.ndarray:
    """The signed bytes [K, N] (padded) of a right side packed by pack_i8."""
    return packed.tiles.transpose(1, 3, 0, 2).reshape(packed.k, packed.n)


def integer_product(x: np.ndarray, packed: packing.Packed) -> np.ndarray:
    """What the kernel computes, in numpy: the codes of x times the bytes, corrected and scaled."""
    a = np.full((len(x), packed.k), packing.ZERO, dtype=np.int64)
    a[:, : x.shape[1]] = packing.codes(x, packed.scale)
    return (a @ unpacked(packed).astype(np.int64) - packed.corr).astype(np.float32) * packed.deq


def test_int8_packing_keeps_each_value_in_its_place_at_its_columns_scale():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((70, 20)).astype(np.float32)
    w[:, 3] = 0  # an all-zero column keeps a finite scale
    packed = packing.pack_i8(w, packing.scale_for(2.0))
    assert (packed.k, packed.n, packed.cols) == (72, 32, 20) and packed.tiles.shape == (2, 18, 16, 4)
    assert packed.tiles.dtype == np.int8 and packed.tiles.ctypes.data % 64 == 0 and packed.scale == 31.5
    q = unpacked(packed)
    assert np.abs(q[:70, :20]).max(0)[[0, 1, 19]].tolist() == [127, 127, 127] and not q[:, 3].any()
    assert not q[70:].any() and not q[:, 20:].any()  # padding
    column_scale = 1 / (packed.deq[:20] * packed.scale)
    np.testing.assert_allclose(q[:70, :20] / column_scale, w, atol=np.abs(w).max(0).max() / 254 + 1e-7)
    assert (packed.corr == 64 * q.astype(np.int32).sum(0)).all() and np.isfinite(packed.deq).all()
    codes = packing.codes(np.array([-5, -1, -0.5, 0, 0.01, 0.5, 1, 5], np.float32), packing.scale_for(1.0))
    assert codes.tolist() == [0, 1, 33, 64, 65, 96, 127, 127]  # 64 + round(63 x), within 0 … 127


@pytest.mark.parametrize("kernel", EVERY)
@pytest.mark.parametrize("m,k,n", [(1, 4, 16), (37, 305, 100), (70, 64, 48), (97, 128, 640), (200, 33, 7)])
def test_products_are_the_integer_arithmetic_and_near_float64(kernel, m, k, n):
    rng = np.random.default_rng(m + k + n)
    x = np.tanh(rng.standard_normal((m, k))).astype(np.float32)
    w = (rng.standard_normal((k, n)) * 0.2).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    packed = packing.pack_i8(w, packing.scale_for(1.0), kernel.weight_max)
    a = np.full((m, packed.k), 64, dtype=np.uint8)
    a[:, :k] = packing.codes(x, packed.scale)
    out = np.full((m, n), np.nan, dtype=np.float32)
    kernels.product(kernel, a, packed, out, bias)
    expected = integer_product(x, packed)[:, :n] + bias
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)
    exact = x.astype(np.float64) @ w + bias
    assert np.abs(out - exact).max() < 0.02 * np.abs(exact - bias).max() + 1e-3
    with pytest.raises(ValueError):  # float32 rows for an int8 right side
        kernels.product(I8, np.zeros((m, packed.k), np.float32), packed, out)
    with pytest.raises(ValueError):  # an int8 right side without the int8 kernel
        kernels.product(Kernel(f32=I8.f32), a, packed, out)


@pytest.mark.parametrize("kernel", EVERY)
@pytest.mark.parametrize("k", [4, 8, 12, 132])  # one, two, three and 33 groups of 4 k: AVX2's pairs and an odd one
def test_the_extreme_codes_and_weights_a_kernel_takes_sum_exactly(kernel, k):
    top = kernel.weight_max
    assert top == (63 if fused.I8_KERNELS[kernel.i8] == "avx2" else 127)
    signs = np.where(np.arange(k * 32).reshape(k, 32) % 3 == 0, -1.0, 1.0)
    signs[:, :16] = 1.0  # columns of all +top, and of mixed signs
    w = (signs * top).astype(np.float32)
    packed = packing.pack_i8(w, 1.0, top)
    assert np.abs(unpacked(packed)).max() == top and packed.top == top
    for code in (127, 0, 1):  # every code at an end: int16 pairs at their largest
        a = np.full((13, packed.k), code, dtype=np.uint8)
        out = np.full((13, 32), np.nan, dtype=np.float32)
        kernels.product(kernel, a, packed, out)
        expected = (a.astype(np.int64) @ unpacked(packed).astype(np.int64) - packed.corr).astype(np.float32) * packed.deq
        np.testing.assert_allclose(out, expected[:, :32], rtol=1e-6)
        np.testing.assert_allclose(out, (code - 64) * w.sum(0)[None].repeat(13, 0), rtol=1e-6)
    if top < 127:  # weights of 127 would overflow its int16 sums: refused
        with pytest.raises(ValueError):
            kernels.product(kernel, a, packing.pack_i8(w, 1.0), out)
        wide = packing.recurrent(np.zeros((2, 16, 64), np.float32), i8=1.0)
        with pytest.raises(ValueError):
            kernels.scan(kernel, np.zeros((2, 1, 1, 64), np.float32), wide, 16, None, None, None,
                         np.zeros((1, 32), np.uint8), 1, 1)
    with pytest.raises(ValueError):
        packing.pack_i8(w, 1.0, 128)


def test_a_product_of_two_directions_lands_in_its_blocks_and_a_shortcut_term_adds_to_the_g_gates():
    rng = np.random.default_rng(3)
    hidden, rows_, inputs = 16, 35, 40
    width, block = 4 * hidden, packing.up(4 * hidden, 16)
    x = np.tanh(rng.standard_normal((rows_, inputs))).astype(np.float32)
    w = (rng.standard_normal((2, inputs, width)) * 0.3).astype(np.float32)
    bias = rng.standard_normal(2 * block).astype(np.float32)
    packed = packing.directions(w, block, i8=packing.scale_for(1.0), top=I8.weight_max)
    a = packing.codes(x, packed.scale)
    gx = np.full((rows_, 2 * block), np.nan, dtype=np.float32)
    kernels.product(I8, a, packed, gx, bias)
    np.testing.assert_allclose(gx, integer_product(x, packed) + bias, rtol=1e-6, atol=1e-6)
    u = (rng.standard_normal((2, 2 * hidden, hidden)) * 0.3).astype(np.float32)
    shortcut = packing.directions(u, packing.up(hidden, 16), i8=packing.scale_for(1.0), top=I8.weight_max)
    before = gx.copy()
    kernels.product(I8, np.ascontiguousarray(a[:, : 2 * hidden]), shortcut, gx, block=packing.up(hidden, 16),
                    stride=block, offset=3 * hidden, count=hidden, add=True)
    term = integer_product(x[:, : 2 * hidden], shortcut)
    for d in range(2):
        g = slice(d * block + 3 * hidden, d * block + 4 * hidden)
        np.testing.assert_allclose(gx[:, g], before[:, g] + term[:, d * hidden : (d + 1) * hidden], rtol=1e-5, atol=1e-5)
        gx[:, g] = before[:, g]
    np.testing.assert_array_equal(gx, before)  # nothing else moved


@pytest.mark.parametrize("kernel", EVERY)
@pytest.mark.parametrize("hidden,shortcut,batch", [(16, False, 19), (12, True, 1), (40, True, 130)])
def test_a_whole_layer_is_the_lstm_whose_state_is_rounded_to_the_codes(kernel, hidden, shortcut, batch):
    rng = np.random.default_rng(hidden)
    steps, bound = 6, 2.0 if shortcut else 1.0
    width = (5 if shortcut else 4) * hidden
    gx = rng.standard_normal((2, steps, batch, width)).astype(np.float32)
    w_h = (rng.standard_normal((2, hidden, width)) * 0.3).astype(np.float32)
    k = np.tanh(rng.standard_normal((steps, 2, batch, hidden))).astype(np.float32) if shortcut else None
    lengths = rng.integers(1, steps + 1, batch)
    t = np.arange(3)[:, None]
    mask = np.ascontiguousarray(np.stack([t < lengths, steps - 1 - t < lengths], 1), dtype=np.float32)
    packed = packing.recurrent(w_h, i8=packing.scale_for(bound), top=kernel.weight_max)
    assert packed.corr.shape == packed.deq.shape == (2 * packed.n,)
    out = np.full((steps, 2, batch, hidden), np.nan, dtype=np.float32)
    xs = np.full((steps * batch, 2 * hidden), 255, dtype=np.uint8)
    kernels.scan(kernel, gx, packed, hidden, k, mask, out, xs, steps, batch)
    # the float64 LSTM with the kernel's weights (bytes / column scale) and its state as codes
    column = [1 / (packed.deq[d * packed.n : d * packed.n + width] * packed.scale) for d in range(2)]
    weights = np.stack([unpacked(packing.Packed(packed.tiles[d * packed.n // 16 : (d + 1) * packed.n // 16], hidden,
                                                packed.n, width))[:, :width] / column[d] for d in range(2)])
    decoded = lambda h: (packing.codes(h, packed.scale).astype(np.float64) - 64) / packed.scale  # noqa: E731
    expected, sentence = reference_lstm(gx, weights, k, mask, round_h=decoded)
    np.testing.assert_allclose(out, expected, atol=1e-4)
    assert (np.abs(xs.astype(int) - packing.codes(sentence, packed.scale).astype(int)) <= 1).all()
    assert (xs == packing.codes(sentence, packed.scale)).mean() > 0.99  # off by one only at a rounding edge
    exact, _ = reference_lstm(gx, w_h, k, mask)  # and the LSTM itself, to the codes' precision
    assert np.abs(out - exact).max() < 0.05 and np.abs(out - exact).mean() < 0.01
    block = packing.up(width, 16) + 16  # the same gates in sentence order, as a product writes them
    rows_ = np.zeros((steps * batch, 2 * block), dtype=np.float32)
    rows_[:, :width] = gx[0].reshape(-1, width)
    rows_[:, block : block + width] = gx[1][::-1].reshape(-1, width)
    out2, xs2 = np.full_like(out, np.nan), np.zeros_like(xs)
    kernels.scan(kernel, rows_, packed, hidden, k, mask, out2, xs2, steps, batch, block)
    np.testing.assert_array_equal(out2, out)
    np.testing.assert_array_equal(xs2, xs)
    narrow = packing.recurrent(w_h, i8=packing.scale_for(bound), top=63)  # weights AVX2's kernel takes
    out3, xs3 = np.full_like(out, np.nan), np.zeros_like(xs)  # the same integer sums by AVX2's products as by
    kernels.scan(Kernel(f32=F32, i8=1), gx, narrow, hidden, k, mask, out3, xs3, steps, batch)  # this kernel's (the
    kernels.scan(kernel, gx, narrow, hidden, k, mask, out, xs, steps, batch)  # cell's vectors differ)
    np.testing.assert_allclose(out3, out, rtol=0, atol=1e-6)
    assert (np.abs(xs3.astype(int) - xs.astype(int)) <= 1).all() and (xs3 == xs).mean() > 0.99
    with pytest.raises(ValueError):  # float32 outputs for the int8 scan
        kernels.scan(I8, gx, packed, hidden, k, mask, out, xs.astype(np.float32), steps, batch)


def test_the_int8_kernel_is_taken_where_the_cpu_has_it_and_the_environment_can_refuse_it(monkeypatch):
    monkeypatch.delenv("TAGGER_CPU", raising=False)
    monkeypatch.setattr(fused._fastscan, "i8_kernel", lambda: 3)
    monkeypatch.setattr(fused._fastscan, "i8_kernel_runs", lambda k: k in (1, 2, 3))
    for wanted, expected in [("", 3), ("avx512-vnni", 3), ("avx-vnni", 2), ("avx2", 1), ("none", 0), ("nonsense", 3)]:
        kernels.i8_kernel.cache_clear()
        monkeypatch.setenv("TAGGER_I8_KERNEL", wanted)
        assert kernels.i8_kernel() == expected
    monkeypatch.setenv("TAGGER_I8_KERNEL", "")
    for cpu, expected in [("avx2", 1), ("avx-vnni", 2), ("avx512-vnni", 3)]:  # as such a CPU: no more than it has
        monkeypatch.setenv("TAGGER_CPU", cpu)
        kernels.i8_kernel.cache_clear()
        assert kernels.i8_kernel() == expected
    monkeypatch.setattr(fused._fastscan, "i8_kernel_runs", lambda k: k in (1, 3))  # AVX512-VNNI without AVX-VNNI
    monkeypatch.setenv("TAGGER_CPU", "avx-vnni")
    kernels.i8_kernel.cache_clear()
    assert kernels.i8_kernel() == 1
    monkeypatch.delenv("TAGGER_CPU")
    monkeypatch.setattr(fused._fastscan, "i8_kernel", lambda: 1)
    monkeypatch.setenv("TAGGER_I8_KERNEL", "avx-vnni")
    kernels.i8_kernel.cache_clear()
    assert kernels.i8_kernel() == 1
    kernels.i8_kernel.cache_clear()
    with pytest.raises(ValueError):  # one the CPU lacks is refused in C
        fused._fastscan.i8_product(HAS + 1, 1, 1, 1, 1, 4, 1, 1, 1, 0, 0, 1, 1, 16, 0, 16, 0, 0, 16)


def test_rows_of_any_range_are_coded_at_a_scale_per_row_and_scaled_back():
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((50, 37)) * rng.uniform(0.01, 100, (50, 1))).astype(np.float32)  # rows far apart
    x[3] = 0
    w = rng.standard_normal((37, 40)).astype(np.float32)
    packed = packing.pack_i8(w, 1.0, I8.weight_max)
    codes, by_row = packing.row_codes(x, packed.k)
    assert codes.shape == (50, 40) and codes.dtype == np.uint8 and (codes[:, 37:] == 64).all()
    assert (np.abs(codes[:, :37].astype(int) - 64).max(1)[[0, 1, 49]] == 63).all() and (codes[3] == 64).all()
    out = np.full((50, 40), np.nan, dtype=np.float32)
    kernels.product(I8, codes, packed, out, by_row=by_row)
    scaled = np.full((50, packed.k), 64, np.int64)
    scaled[:, :37] = codes[:, :37]
    integer = (scaled @ unpacked(packed).astype(np.int64) - packed.corr).astype(np.float32) * packed.deq
    np.testing.assert_allclose(out, integer[:, :40] * by_row[:, None], rtol=1e-5, atol=1e-6)
    exact = x.astype(np.float64) @ w
    assert (np.abs(out - exact).max(1) <= 0.03 * np.abs(exact).max(1) + 1e-9).all() and not out[3].any()
    with pytest.raises(ValueError):  # a factor per row for a float32 product
        kernels.product(Kernel(f32=I8.f32), x, packing.pack(w, f32=True), out, by_row=by_row)


def test_a_model_whose_layers_are_not_four_cells_wide_apart_keeps_to_float32(sample_tagger):
    from dataclasses import asdict

    from tagger import model_file
    from tagger.models.skip_lstm import SkipLSTMTagger, TaggerConfig
    from tagger.runtime import skip_lstm

    plain = model_file.read_archive(sample_tagger)
    config = TaggerConfig(**{**plain["config"], "hidden": 10})  # rows of 20 codes: not a multiple of 4 bytes
    state = {k: v.numpy() for k, v in SkipLSTMTagger(config, plain["vocabs"]).state_dict().items()}
    model = skip_lstm.NumpyTagger(asdict(config), plain["vocabs"], state, I8)
    assert model.kernel == Kernel(f32=I8.f32) and model.arrays.layers[0].packed_h.tiles.dtype == np.float32
    assert len(model.tag([["a", "b", "c"], ["d"]])) == 2
    same = skip_lstm.NumpyTagger(plain["config"], plain["vocabs"], plain["state_dict"], I8)
    assert same.kernel == I8  # 16 cells: int8


@pytest.mark.parametrize("kernel", EVERY)
@pytest.mark.parametrize("hidden,shortcut,batch", [(16, False, 7), (12, True, 1), (40, True, 33)])
def test_an_upper_layer_with_its_input_product_in_the_scan_is_the_product_then_the_scan(kernel, hidden, shortcut, batch):
    check_upper_scan(kernel, hidden, shortcut, batch, i8=True)
