"""Weight initialisation shared by the models."""

from __future__ import annotations

import math

import torch
from torch import nn


def scaled_normal_(weight: torch.Tensor, fan_in: int, scale: float = 0.1) -> torch.Tensor:
    """N(0, 1/sqrt(fan_in)) × scale; the papers use scale 0.1 (SPEC §3)."""
    return nn.init.normal_(weight, 0.0, scale / math.sqrt(fan_in))
