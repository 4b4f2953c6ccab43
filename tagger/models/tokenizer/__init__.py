"""The character-level tokeniser and sentence splitter: the model, its config and its presets.
The config and the exporter of its inference arrays (``export.py``) import without torch; the
model on first use."""

from __future__ import annotations

from typing import Any

from tagger.models.tokenizer.config import TokenizerConfig
from tagger.models.tokenizer.presets import PRESETS

__all__ = ["PRESETS", "Tokenizer", "TokenizerBatch", "TokenizerConfig"]


def __getattr__(name: str) -> Any:
    if name in ("Tokenizer", "TokenizerBatch"):
        from tagger.models.tokenizer import model

        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
