"""Training checkpoints: model, optimizer, trainer state and RNG, written atomically.

``DIR/last.ckpt`` is replaced at every save (temporary file, fsync, rename), so a run killed
at any moment leaves either the previous checkpoint or the new one, never half of one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from tagger.config import config_to_dict
from tagger.errors import TaggerError
from tagger.model_file import FORMAT_VERSION, atomic_save

NAME = "last.ckpt"


def save(directory: str | Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> Path:
    path = Path(directory) / NAME
    atomic_save(
        {
            "format_version": FORMAT_VERSION,
            "name": model.name,
            "config": config_to_dict(model.config),
            "vocabs": {k: list(v) for k, v in model.vocabs.items()},
            "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
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
