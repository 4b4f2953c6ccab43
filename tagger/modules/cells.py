"""One step of a plain recurrent cell from a precomputed input projection ``pre = W_x x + b``.

The cells of TensorFlow 1 (as used by Elkaref & Bohnet 2017), without peepholes:

* ``lstm``:  ``[i, j, f, o] = pre + W_h h``; ``c = c ⊙ σ(f + forget_bias) + σ(i) ⊙ tanh(j)``;
  ``h = tanh(c) ⊙ σ(o)`` (``BasicLSTMCell``: the forget bias is a constant added to the gate)
* ``gru``:   ``[r, z] = σ(pre[r, z] + W_h[r, z] h)``; ``h̃ = tanh(pre[h] + W_h[h] (r ⊙ h))``;
  ``h = z ⊙ h + (1 - z) ⊙ h̃``
* ``elman``: ``h = relu(pre + W_h h)``

``pre`` and ``W_h`` hold the gates stacked in the order above (``[G·H, ...]``; the parser's
``GATES`` names them); the caller computes ``pre`` for all steps at once, so a step is one
matrix product with ``W_h``.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F


def step(kind: str, pre: torch.Tensor, h: torch.Tensor, c: torch.Tensor | None, w_h: torch.Tensor,
         forget_bias: float = 1.0) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(h, c)`` after one step of cell ``kind`` (``c`` is ``None`` but for the LSTM).
    ``pre``: [B, G·H]; ``h``, ``c``: [B, H]; ``w_h``: [G·H, H]."""
    if kind == "lstm":
        return lstm_step(pre, h, c, w_h, forget_bias)
    if kind == "gru":
        return gru_step(pre, h, w_h), None
    return elman_step(pre, h, w_h), None


def lstm_step(pre: torch.Tensor, h: torch.Tensor, c: torch.Tensor, w_h: torch.Tensor,
              forget_bias: float) -> tuple[torch.Tensor, torch.Tensor]:
    i, j, f, o = torch.addmm(pre, h, w_h.t()).chunk(4, 1)
    c = c * torch.sigmoid(f + forget_bias) + torch.sigmoid(i) * torch.tanh(j)
    return torch.tanh(c) * torch.sigmoid(o), c


def gru_step(pre: torch.Tensor, h: torch.Tensor, w_h: torch.Tensor) -> torch.Tensor:
    size = h.shape[1]
    r, z = torch.sigmoid(torch.addmm(pre[:, : 2 * size], h, w_h[: 2 * size].t())).chunk(2, 1)
    candidate = torch.tanh(torch.addmm(pre[:, 2 * size :], r * h, w_h[2 * size :].t()))
    return torch.lerp(candidate, h, z)  # z ⊙ h + (1 - z) ⊙ h̃


def elman_step(pre: torch.Tensor, h: torch.Tensor, w_h: torch.Tensor) -> torch.Tensor:
    return F.relu(torch.addmm(pre, h, w_h.t()))
