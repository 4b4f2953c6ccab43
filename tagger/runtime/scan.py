"""The torch-free runtimes' one LSTM time loop (the skip-LSTM tagger's, :mod:`tagger.runtime.skip_lstm`,
and the tokenizer's, :mod:`tagger.runtime.tokenizer`): each step after its recurrent product
in one C call (``_fastscan.lstm_step``), or, without the C steps, the numpy reference.

Layout, as the torch path's (:mod:`tagger.modules.recurrent`): both directions at once, time-major,
direction 1 reversed in time. A direction's pre-activations are G = (nsig + 1)·H columns: the
sigmoid gates i, f, o (and the shortcut's recurrent gate g when a shortcut ``k`` is given), then
the candidate s; ``c = f⊙c + i⊙tanh(s)``, ``h = o⊙tanh(c) (+ g⊙k_t)``.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tagger.modules.fused import FUSED, _fastscan


def sigmoid_(x: np.ndarray) -> np.ndarray:
    """σ(x) in place, as 1 / (1 + exp(-x)): numpy's ``exp`` is about three times faster than
    its ``tanh`` on float32, so tanh is computed as 2σ(2x) - 1."""
    np.negative(x, out=x)
    np.exp(x, out=x)
    x += 1.0
    np.reciprocal(x, out=x)
    return x


def lstm_layer(gx: np.ndarray, w_h: np.ndarray, k: np.ndarray | None = None, mask: np.ndarray | None = None,
               steps: int | None = None, refill: Callable[[int], None] | None = None,
               fused: bool | None = None) -> np.ndarray:
    """One bidirectional LSTM layer's time loop → its outputs [T, 2, B, H] in scan order.

    ``gx`` [2, P, B, G] the input projections (``x·W_x + b``) in scan order: all T = P steps, or,
    with ``refill``, P steps at a time, ``refill(t)`` writing steps t … t + P - 1 into it at
    every t that is a multiple of P (``steps`` is then T); ``w_h`` [2, H, G]; ``k`` [T, 2, B, H]
    the shortcut's source (γ = the g block) or None; ``mask`` [M, 2, B] 1 at words, 0 at
    padding, over the first M steps, or None. ``fused``: the C step (default: where it is built)."""
    fused = (FUSED if fused is None else fused) and _fastscan is not None
    if steps is None:
        steps = gx.shape[1]
    if fused:
        return _fused(gx, w_h, k, mask, steps, refill)
    with np.errstate(over="ignore"):  # exp(-z) overflows to inf for very negative z: σ is then 0, as it should be
        return _reference(gx, w_h, k, mask, steps, refill)


def _fused(gx: np.ndarray, w_h: np.ndarray, k: np.ndarray | None, mask: np.ndarray | None, steps: int,
           refill: Callable[[int], None] | None) -> np.ndarray:
    """:func:`lstm_layer` with per step one product in numpy and one ``_fastscan.lstm_step``."""
    _, window, batch, width = gx.shape
    hidden = w_h.shape[1]
    out = np.empty((steps, 2, batch, hidden), dtype=np.float32)
    c = np.zeros((2, batch, hidden), dtype=np.float32)
    prod = np.zeros((2, batch, width), dtype=np.float32)
    nsig, kmode = width // hidden - 1, 0 if k is None else 1
    masked = 0 if mask is None else mask.shape[0]
    step, f32 = _fastscan.lstm_step, 4  # addresses in bytes, strides in elements; all contiguous float32
    gx_ptr, out_ptr, k_ptr = gx.ctypes.data, out.ctypes.data, 0 if k is None else k.ctypes.data
    mask_ptr = 0 if mask is None else mask.ctypes.data
    gx_t, out_t = batch * width * f32, 2 * batch * hidden * f32
    head = (batch, hidden, nsig, False, kmode)
    fixed = (prod.ctypes.data, batch * width, width)
    gx_strides, state = (window * batch * width, width), (c.ctypes.data, batch * hidden, hidden)
    out_strides = (batch * hidden, hidden)
    for t in range(steps):
        if refill is not None and t % window == 0:
            refill(t)
        if t:
            np.matmul(out[t - 1], w_h, out=prod)
        now = t < masked
        step(*head, now, *fixed, gx_ptr + t % window * gx_t, *gx_strides, *state, out_ptr + t * out_t, *out_strides,
             0, 0, 0, k_ptr + t * out_t if k_ptr else 0, *out_strides, mask_ptr + t * 2 * batch * f32 if now else 0,
             batch, 1)
    return out


def _reference(gx: np.ndarray, w_h: np.ndarray, k: np.ndarray | None, mask: np.ndarray | None, steps: int,
               refill: Callable[[int], None] | None) -> np.ndarray:
    """:func:`lstm_layer` in numpy alone, tanh(z) as 2σ(2z) - 1: the arithmetic of the torch
    path's inference scan (:mod:`tagger.modules.recurrent`)."""
    _, window, batch, width = gx.shape
    hidden = w_h.shape[1]
    out = np.empty((steps, 2, batch, hidden), dtype=np.float32)
    h = np.zeros((2, batch, hidden), dtype=np.float32)
    c = np.zeros_like(h)
    tmp = np.empty_like(h)
    z = np.empty((2, batch, width), dtype=np.float32)
    i, f, o, g, s = (z[..., j * hidden : (j + 1) * hidden] for j in (0, 1, 2, 3, width // hidden - 1))
    masked = 0 if mask is None else mask.shape[0]
    for t in range(steps):
        if refill is not None and t % window == 0:
            refill(t)
        np.matmul(h, w_h, out=z)
        z += gx[:, t % window]
        s *= 2
        sigmoid_(z)  # i, f, o, (g,) σ(2 z_s)
        s *= 2
        s -= 1
        c *= f
        np.multiply(i, s, out=tmp)
        c += tmp
        np.multiply(c, 2, out=tmp)  # tanh(c) = 2σ(2c) - 1
        sigmoid_(tmp)
        tmp *= 2
        tmp -= 1
        h = out[t]
        np.multiply(o, tmp, out=h)
        if k is not None:
            np.multiply(g, k[t], out=tmp)
            h += tmp
        if t < masked:
            h *= mask[t][..., None]
            c *= mask[t][..., None]
    return out
