"""Training checkpoints: model, optimizer, trainer state and RNG, written atomically.

``DIR/last.ckpt`` is replaced at every save (temporary file, fsync, rename), so a run killed
at any moment leaves either the previous checkpoint or the new one, never half of one.
:class:`Checkpoints` is the training loop's side: when to take one, what goes into it (every
process's RNG state, the weight average) and restoring all of it.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, Protocol

import torch

from tagger.errors import TaggerError
from tagger.model_file import archive, atomic_save
from tagger.training import distributed

NAME = "last.ckpt"


def save(directory: str | Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, state: dict[str, Any],
         training: Any = None) -> Path:
    """The model file's archive (:func:`tagger.model_file.archive`, with the ``training`` config)
    plus what resuming needs: the optimizer, the trainer ``state`` and the RNG."""
    path = Path(directory) / NAME
    atomic_save(
        {
            **archive(model, training),
            "optimizer": optimizer.state_dict(),
            "trainer": state,
            "torch_rng": torch.get_rng_state(),
        },
        path,
    )
    return path


def read(directory: str | Path) -> dict[str, Any] | None:
    """The latest checkpoint's plain data, or None when ``directory`` has none."""
    path = Path(directory) / NAME
    if not path.exists():
        return None
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - any unreadable checkpoint is reported the same way
        raise TaggerError(f"unreadable checkpoint ({type(e).__name__}); delete it to start over", str(path)) from None


def load_latest(directory: str | Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any] | None:
    """Restore model, optimizer and RNG from the latest checkpoint; returns the trainer state."""
    data = read(directory)
    if data is None:
        return None
    model.load_state_dict(data["state_dict"])
    optimizer.load_state_dict(data["optimizer"])
    torch.set_rng_state(data["torch_rng"])
    return data["trainer"]


class Average(Protocol):
    """What a checkpoint keeps of the weight average (``tagger.training.averaging``)."""

    def state(self) -> list[torch.Tensor] | None: ...
    def load_state(self, saved: list[torch.Tensor]) -> None: ...


class Scaler(Protocol):
    """What a checkpoint keeps of mixed precision's loss scaling (``tagger.training.amp``)."""

    def state(self) -> dict[str, Any] | None: ...
    def load_state(self, saved: dict[str, Any] | None) -> None: ...


def rng_state(device: torch.device) -> dict[str, Any]:
    """This process's RNG state: the CPU generator's and, on CUDA, ``device``'s."""
    return {"cpu": torch.get_rng_state(), "cuda": torch.cuda.get_rng_state(device) if device.type == "cuda" else None}


class Checkpoints:
    """A run's checkpoints in ``directory`` (None: none are written or read): one every
    ``minutes`` (None or 0: only at epoch ends, as the loop asks) holding the model, optimizer,
    weight average, trainer state and every process's RNG state.

    ``training`` is the training config, kept in each checkpoint beside the model's.
    ``shard = (rank, world)``: saving is collective under DDP (every rank's RNG goes into rank
    0's file, which only rank 0 writes), so every process must call :meth:`save` together."""

    def __init__(self, directory: Path | None, minutes: float | None, model: torch.nn.Module,
                 optimizer: torch.optim.Optimizer, average: Average, device: torch.device,
                 shard: tuple[int, int] = (0, 1), training: Any = None, amp: Scaler | None = None):
        self.directory, self.minutes, self.training, self.amp = directory, minutes, training, amp
        self.model, self.optimizer, self.average, self.device = model, optimizer, average, device
        self.rank, self.world = shard
        self.last = time.monotonic()

    def due(self) -> bool:
        """True when ``minutes`` have passed since the last periodic checkpoint (or the start)."""
        return bool(self.minutes) and time.monotonic() - self.last > 60 * self.minutes

    def save(self, state: Any, elapsed: float, periodic: bool = False) -> None:
        """Checkpoint this moment: ``state`` is the trainer's state (a dataclass), ``elapsed``
        the seconds trained so far; ``periodic`` restarts the clock of :meth:`due`."""
        if self.directory is not None:
            rngs = distributed.gather(rng_state(self.device))
            if self.rank == 0:
                trainer = {**dataclasses.asdict(state), "elapsed": elapsed, "world": self.world, "rng": rngs,
                           "average": self.average.state()}
                scaler = self.amp.state() if self.amp is not None else None
                if scaler is not None:  # only with loss scaling: other checkpoints keep their keys
                    trainer["scaler"] = scaler
                save(self.directory, self.model, self.optimizer, trainer, self.training)
        if periodic:
            self.last = time.monotonic()

    def resume(self) -> dict[str, Any] | None:
        """Model, optimizer, weight average and this process's RNG from the latest checkpoint;
        the trainer state saved with it (None when there is none)."""
        loaded = load_latest(self.directory, self.model, self.optimizer) if self.directory is not None else None
        if loaded is None:
            return None
        rngs, saved_world = loaded.pop("rng", None), loaded.pop("world", 1)
        if loaded.get("average") is not None:
            self.average.load_state(loaded["average"])
        if self.amp is not None:
            self.amp.load_state(loaded.pop("scaler", None))
        if loaded.get("batch") and saved_world != self.world:
            raise TaggerError(f"the checkpoint was taken mid-epoch by {saved_world} process(es); resume it with "
                              f"{saved_world}, not {self.world}", str(self.directory))
        if rngs and len(rngs) == self.world:
            torch.set_rng_state(rngs[self.rank]["cpu"])
            if rngs[self.rank].get("cuda") is not None and self.device.type == "cuda":
                torch.cuda.set_rng_state(rngs[self.rank]["cuda"], self.device)
        self.last = time.monotonic()  # the next periodic checkpoint is due ``minutes`` after the resume
        return loaded
