"""Named presets of the tokeniser, as plain data (resolved by :func:`tagger.config.resolve_preset`)."""

from __future__ import annotations

from typing import Any

#: Training values under every preset of the family.
TRAINING_DEFAULTS: dict[str, Any] = {}

PRESETS: dict[str, dict[str, Any]] = {
    "fast": {
        "description": "the default: characters embedded in 16 dimensions with their category, letters' qualified by "
                       "script (Lo CJK, Lo HIRAGANA, ...), one bidirectional LSTM layer of 32 cells (torch.nn.LSTM), "
                       "windows of 240 characters with 16 of context on each side, Adam, up to 100 epochs (EWT test: "
                       "tokens F1 99.23, sentences 88.66; Japanese and Vietnamese: docs/tokenizer.md)",
        "model": {"hidden": 32, "layers": 1, "segment": 240, "context": 16, "char_dim": 16, "scripts": True,
                  "tight_punctuation": 0.5},
        "training": {"optimizer": "adam", "lr": 0.005, "batch_size": 16, "max_epochs": 100, "patience": 5,
                     "halve_threshold": 0.002},
    },
    "medium": {
        "based_on": "fast",
        "description": "40 cells, characters in 32 dimensions: on EWT test the most accurate of the three (tokens F1 "
                       "99.46, words 99.20, sentences 87.91; wide 99.32, 99.08, 88.66) and 1.6× wide's speed; the "
                       "shipped English model's",
        "model": {"hidden": 40, "char_dim": 32},
    },
    "wide": {
        "based_on": "fast",
        "description": "64 cells, characters in 32 dimensions, windows of 192 characters with 32 of context: about "
                       "as accurate on EWT, 2-3× slower",
        "model": {"hidden": 64, "segment": 192, "context": 32, "char_dim": 32},
    },
    "project": {
        "based_on": "fast",
        "description": "fast with the project's own recurrent scan (tagger.modules.recurrent) instead of torch.nn.LSTM "
                       "(slower; tagging then needs torch)",
        "model": {"recurrent": "project"},
    },
}
