"""Named presets of the skip-LSTM tagger, as plain data (resolved by
:func:`tagger.config.resolve_preset`): ``model`` values go to :class:`TaggerConfig`, ``training``
values to :class:`tagger.config.TrainingConfig`, and ``based_on`` starts from another preset.
``fast`` (the default) trains on a laptop CPU in minutes; the ``wu*`` presets reproduce the
papers' sizes and training recipe (on-line SGD)."""

from __future__ import annotations

from typing import Any

#: Training values under every preset: none, the TrainingConfig defaults are the papers' recipe.
TRAINING_DEFAULTS: dict[str, Any] = {}

PRESETS: dict[str, dict[str, Any]] = {
    "fast": {
        "description": "the CPU default: 3 × 128 cells, Adam, wider character embeddings (20 dims instead of the "
                       "papers' 5: +0.45 dev UPOS on EWT after 6 epochs) and a lr halving threshold of 5% rather than 0.5%",
        "model": {"layers": 3, "hidden": 128, "char_dim": 20, "rare_word_dropout": 0.25, "init_scale": 1.0,
                  "skip": "output", "gate": "recurrent"},
        "training": {"optimizer": "adam", "lr": 0.002, "batch_size": 32, "max_epochs": 50, "patience": 4,
                     "halve_threshold": 0.05},
    },
    "fast-cnn": {
        "based_on": "fast",
        "description": "fast plus a character CNN (50 filters of width 3 over 20-dim characters), for unseen words",
        "model": {"char_cnn": 50, "char_cnn_width": 3},
    },
    "small": {
        "based_on": "fast",
        "description": "fast with 64 cells: ~1.7× faster through the CLI, −0.2–0.3 UPOS",
        "model": {"hidden": 64},
    },
    "plain-fast": {
        "based_on": "fast",
        "description": "fast without skip connections",
        "model": {"skip": "none"},
    },
    "wu2016-7x512": {
        "description": "Wu, Zhang & Zong 2016: 7 × 512 LSTM cells with gated skip connections to the output",
        "model": {"layers": 7, "hidden": 512, "cell": "lstm", "skip": "output", "gate": "recurrent"},
        "training": {"optimizer": "sgd", "lr": 0.02, "batch_size": 1, "max_epochs": 30, "patience": 5},
    },
    "wu2016-9x512": {
        "based_on": "wu2016-7x512",
        "description": "Wu, Zhang & Zong 2016: 9 × 512",
        "model": {"layers": 9},
    },
    "wu2017-9x465": {
        "description": "Wu, Zhang & Zong 2017: 9 × 465 shortcut blocks, input-gated",
        "model": {"layers": 9, "hidden": 465, "cell": "block", "skip": "none", "gate": "input", "skip_span": 1},
        "training": {"optimizer": "sgd", "lr": 0.02, "batch_size": 1, "max_epochs": 30, "patience": 5},
    },
    "wu2017-7x465": {
        "based_on": "wu2017-9x465",
        "description": "Wu, Zhang & Zong 2017: 7 × 465",
        "model": {"layers": 7},
    },
}
