"""Mixed precision in training (``--set amp=bf16|fp16``): the forward pass and the loss under
``torch.autocast``, the weights, their gradients and the optimizer in float32.

- ``bf16``: autocast to bfloat16. Its range is float32's, so no loss scaling is needed. On a
  GPU that has it (Ampere and later) and on CPUs (native on those with ``avx512_bf16`` or AMX).
- ``fp16``: autocast to float16, with the loss scaled (``torch.amp.GradScaler``) so that small
  gradients do not vanish; a step whose gradients overflow is skipped and the scale lowered.
  Meant for GPUs without bfloat16 (V100, T4).
- ``off`` (the default): float32 throughout, as every run before.

Dev scoring and the saved weights stay float32 whatever the mode, and the scaler's state goes
into checkpoints (:meth:`MixedPrecision.state` / :meth:`~MixedPrecision.load_state`), so a
resumed run continues as the interrupted one would have.
"""

from __future__ import annotations

import contextlib
from typing import Any, ContextManager

import torch

#: The values of ``TrainingConfig.amp``.
AMP_MODES = ("off", "bf16", "fp16")
_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


class MixedPrecision:
    """How one run's updates handle precision: :meth:`autocast` around the forward pass and the
    loss, :meth:`backward` of the loss, then :meth:`unscale` (before clipping) and :meth:`step`."""

    def __init__(self, mode: str, device: torch.device):
        if mode not in AMP_MODES:
            raise ValueError(f"amp must be one of {', '.join(AMP_MODES)}, not {mode!r}")
        if mode == "bf16" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
            raise ValueError(f"amp=bf16 needs a GPU with bfloat16 (this one, {device}, has none): use amp=fp16")
        self.mode, self.device_type = mode, device.type
        self.dtype = _DTYPES.get(mode)
        self.scaler = torch.amp.GradScaler(device.type) if mode == "fp16" else None

    def autocast(self) -> ContextManager[Any]:
        """The context of the forward pass and the loss: autocast to the mode's type, or nothing."""
        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device_type, dtype=self.dtype)

    def backward(self, loss: torch.Tensor) -> None:
        (self.scaler.scale(loss) if self.scaler is not None else loss).backward()

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        """The gradients back at their true size (before clipping them); a no-op without a scaler."""
        if self.scaler is not None:
            self.scaler.unscale_(optimizer)

    def step(self, optimizer: torch.optim.Optimizer) -> None:
        """``optimizer.step()``; with a scaler, skipped where the gradients overflowed, and the scale updated."""
        if self.scaler is None:
            optimizer.step()
        else:
            self.scaler.step(optimizer)
            self.scaler.update()

    def state(self) -> dict[str, Any] | None:
        """What a checkpoint keeps: the scaler's state (None without one)."""
        return self.scaler.state_dict() if self.scaler is not None else None

    def load_state(self, saved: dict[str, Any] | None) -> None:
        if self.scaler is not None and saved:
            self.scaler.load_state_dict(saved)
