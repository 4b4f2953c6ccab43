"""The deep stacked BiLSTM tagger with gated skip connections and shortcut blocks (Wu, Zhang &
Zong 2016, 2017): the model, its config and its presets. The config (``config.py``) and the
exporter of its inference arrays (``export.py``) import without torch; the model on first use."""

from __future__ import annotations

from typing import Any

from tagger.models.skip_lstm.config import RARE, TaggerConfig
from tagger.models.skip_lstm.presets import PRESETS

__all__ = ["PRESETS", "RARE", "SkipLSTMTagger", "TaggerBatch", "TaggerConfig"]


def __getattr__(name: str) -> Any:
    if name in ("SkipLSTMTagger", "TaggerBatch"):
        from tagger.models.skip_lstm import model

        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
