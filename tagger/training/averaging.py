"""Weight averaging: what is scored on dev and saved when ``average`` > 0."""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch


class WeightAverage:
    """An exponential moving average of the parameters (Polyak averaging): after each update
    ``a ← a + (1 - δ)(θ - a)`` with ``δ = min(decay, (1 + n) / (10 + n))`` at update n, so the
    first updates are not swamped by the initial weights. :meth:`swapped_in` puts the average
    into the model (for dev scoring and saving) and the trained weights back afterwards."""

    def __init__(self, model: torch.nn.Module, decay: float):
        self.params = [p for p in model.parameters()]
        self.decay = decay
        self.average = [p.detach().clone() for p in self.params]

    def update(self, step: int) -> None:
        decay = min(self.decay, (1 + step) / (10 + step))
        with torch.no_grad():
            torch._foreach_lerp_(self.average, [p.detach() for p in self.params], 1.0 - decay)

    @contextlib.contextmanager
    def swapped_in(self) -> Iterator[None]:
        with torch.no_grad():
            trained = [p.detach().clone() for p in self.params]
            for p, a in zip(self.params, self.average):
                p.copy_(a)
        try:
            yield
        finally:
            with torch.no_grad():
                for p, t in zip(self.params, trained):
                    p.copy_(t)

    def state(self) -> list[torch.Tensor]:
        """The average, on the CPU (for a checkpoint)."""
        return [a.cpu() for a in self.average]

    def load_state(self, saved: list[torch.Tensor]) -> None:
        for a, tensor in zip(self.average, saved):
            a.copy_(tensor)


class NoAverage:
    """Stands in for :class:`WeightAverage` when averaging is off: the trained weights are what
    is scored and saved, and a checkpoint holds no average."""

    def update(self, step: int) -> None:
        pass

    def swapped_in(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def state(self) -> None:
        return None

    def load_state(self, saved: list[torch.Tensor]) -> None:
        pass


def averager(model: torch.nn.Module, decay: float) -> WeightAverage | NoAverage:
    """A :class:`WeightAverage` of ``model`` with ``decay`` (the ``average`` setting), or none for 0."""
    return WeightAverage(model, decay) if decay > 0 else NoAverage()
