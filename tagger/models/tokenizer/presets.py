"""Named presets of the tokeniser, as plain data (resolved by :func:`tagger.config.resolve_preset`)."""

from __future__ import annotations

from typing import Any

#: Training values under every preset of the family.
TRAINING_DEFAULTS: dict[str, Any] = {}

PRESETS: dict[str, dict[str, Any]] = {
    "fast": {
        "description": "the default: one bidirectional LSTM layer of 64 cells over characters (torch.nn.LSTM), "
                       "windows of 192 characters with 32 of context on each side, Adam",
        "model": {"hidden": 64, "layers": 1, "segment": 192, "context": 32},
        "training": {"optimizer": "adam", "lr": 0.002, "batch_size": 32, "max_epochs": 20, "patience": 4,
                     "halve_threshold": 0.002},
    },
    "small": {
        "based_on": "fast",
        "description": "fast with 32 cells: about twice as fast",
        "model": {"hidden": 32},
    },
    "project": {
        "based_on": "fast",
        "description": "fast with the project's own recurrent scan (tagger.modules.recurrent) instead of torch.nn.LSTM",
        "model": {"recurrent": "project"},
    },
}
