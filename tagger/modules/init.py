"""Weight initialisation shared by the models."""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Iterator

import torch
from torch import nn

#: Set while a model is built only to receive a model file's weights (:func:`loading`).
_loading = False


@contextmanager
def loading() -> Iterator[None]:
    """Build models whose weights are about to be loaded: :func:`orthogonal_` (a QR decomposition
    per block: 0.3 s of a pipeline's start) does nothing meanwhile."""
    global _loading
    before, _loading = _loading, True
    try:
        yield
    finally:
        _loading = before


def orthogonal_(weight: torch.Tensor) -> torch.Tensor:
    """``nn.init.orthogonal_``, skipped while :func:`loading`."""
    return weight if _loading else nn.init.orthogonal_(weight)


def scaled_normal_(weight: torch.Tensor, fan_in: int, scale: float = 0.1) -> torch.Tensor:
    """N(0, 1/sqrt(fan_in)) × scale; the papers use scale 0.1 (SPEC §3)."""
    return nn.init.normal_(weight, 0.0, scale / math.sqrt(fan_in))
