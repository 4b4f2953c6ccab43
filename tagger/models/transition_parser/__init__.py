"""The arc-standard transition parser with a feed-forward network and LSTM/GRU/Elman versions
bootstrapped from it (Elkaref & Bohnet 2017): the model, its config and its presets. The config
(``config.py``), the numbering (``ids.py``) and the exporter of its inference arrays
(``export.py``) import without torch; the model on first use."""

from __future__ import annotations

from typing import Any

from tagger.models.transition_parser.config import ParserConfig
from tagger.models.transition_parser.ids import LABEL_OFFSET, NULL_ID
from tagger.models.transition_parser.presets import PRESETS

__all__ = ["LABEL_OFFSET", "NULL_ID", "PRESETS", "ParserConfig", "TransitionParser"]


def __getattr__(name: str) -> Any:
    if name == "TransitionParser":
        from tagger.models.transition_parser import model

        return model.TransitionParser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
