"""Named presets of the seq2seq constituency parser, as plain data (resolved by
:func:`tagger.config.resolve_preset`). ``vinyals2015`` is the paper's LSTM+A+D: 3 × 256 LSTM
layers, attention, dropout between the layers, the attention context fed to the next step;
``fast`` (the default) is the same network without that feeding, so that teacher-forced
training runs the decoder over a whole tree at once (about twice as fast on a CPU), decoding
constrained to well-formed trees;
``fast-bi`` is ``fast`` with a bidirectional encoder, the measured choice with pretrained vectors;
``small`` trains in minutes on a laptop CPU."""

from __future__ import annotations

from typing import Any

#: Training values under every preset of the family.
#: The dev score of a seq2seq parser stays flat for its first epochs (its outputs are generic
#: trees until it learns to attend), which the papers' halving rule takes for convergence (with
#: halve_threshold 0.01 it halved lr in the 4th epoch of a WSJ-sample run, dev F1 still ~13):
#: halve_threshold 0 keeps lr constant unless dev repeats exactly; patience ends the run.
TRAINING_DEFAULTS: dict[str, Any] = {"optimizer": "adam", "lr": 0.002, "batch_size": 16, "max_epochs": 60,
                                     "patience": 8, "halve_threshold": 0.0, "clip": 5.0}

PRESETS: dict[str, dict[str, Any]] = {
    "vinyals2015": {
        "description": "Vinyals et al. 2015, LSTM+A+D: 3 × 256 LSTM encoder and decoder with attention, dropout "
                       "between the layers, reversed input, the attention context fed to the next step, beam 10",
        "model": {"layers": 3, "hidden": 256, "word_dim": 256, "attention_dim": 256, "dropout": 0.3, "beam": 10,
                  "input_feeding": True},
    },
    "fast": {
        "based_on": "vinyals2015",
        "description": "the CPU default: vinyals2015 without input feeding (d'_t is not fed to the next step), so "
                       "training runs the decoder over whole trees at once (~2× faster per epoch on one CPU thread), "
                       "decoding constrained to well-formed trees (+0.3 to +1.3 dev F1 on the WSJ sample, no repairs)",
        "model": {"input_feeding": False, "constrained": True},
    },
    "fast-bi": {
        "based_on": "fast",
        "description": "fast with a bidirectional encoder (128 cells each way); with --embeddings glove-6b-50d "
                       "72.79 test F1 on the WSJ sample in 55 CPU minutes (docs/constituency.md)",
        "model": {"bidirectional": True},
    },
    "small": {
        "based_on": "fast",
        "description": "2 × 128: a few minutes on a laptop CPU, for trying things out",
        "model": {"layers": 2, "hidden": 128, "word_dim": 128, "attention_dim": 128, "symbol_dim": 64},
    },
}
