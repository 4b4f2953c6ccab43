"""Training checkpoints: model, optimizer, trainer state and RNG, written atomically.

``DIR/last.ckpt`` is replaced at every save (temporary file, fsync, rename), so a run killed
at any moment leaves either the previous checkpoint or the new one, never half of one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from tagger.errors import TaggerError
from tagger.model_file import archive, atomic_save

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
