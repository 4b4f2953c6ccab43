"""Named presets of the skip-LSTM tagger, as plain data (resolved by
:func:`tagger.config.resolve_preset`): ``model`` values go to :class:`TaggerConfig`, ``training``
values to :class:`tagger.config.TrainingConfig`, and ``based_on`` starts from another preset.
``fast`` (the default) trains on a laptop CPU in minutes; the ``wu*`` presets reproduce the
papers' sizes and training recipe (on-line SGD).

The ablation zoo: every row of the papers' tables is a preset carrying its ``table`` (a key of
:data:`TABLES`), the paper's ``case`` and ``row`` labels and its ``paper_dev``/``paper_test``
figures; a table's rows are its presets in this file's order (``tagger presets``, ``tagger
ablate``, docs/zoo.md). Rows that differ from their table's base in one option say only that."""

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


#: The papers' tables that the zoo reproduces (rows: the presets whose "table" is the key).
TABLES: dict[str, dict[str, Any]] = {
    "wu2016-t1": {"paper": "Wu, Zhang & Zong 2016", "file": "000", "number": 1, "title": "the full model",
                  "data": "CCGbank supertags"},
    "wu2016-t2": {"paper": "Wu, Zhang & Zong 2016", "file": "000", "number": 2, "title": "types of skip connections",
                  "data": "CCGbank supertags, 7 layers"},
    "wu2016-t3": {"paper": "Wu, Zhang & Zong 2016", "file": "000", "number": 3, "title": "depth (gated skip to the output)",
                  "data": "CCGbank supertags"},
    "wu2017-t1": {"paper": "Wu, Zhang & Zong 2017", "file": "001", "number": 1, "title": "depth of shortcut blocks",
                  "data": "CCGbank supertags"},
    "wu2017-t2": {"paper": "Wu, Zhang & Zong 2017", "file": "001", "number": 2, "title": "shortcut topologies",
                  "data": "CCGbank supertags, 7 layers"},
    "wu2017-t3": {"paper": "Wu, Zhang & Zong 2017", "file": "001", "number": 3, "title": "gating functions",
                  "data": "CCGbank supertags, 7 layers"},
    "wu2017-t4": {"paper": "Wu, Zhang & Zong 2017", "file": "001", "number": 4, "title": "compositions of shortcut blocks",
                  "data": "CCGbank supertags, 7 layers"},
    "wu2017-t5": {"paper": "Wu, Zhang & Zong 2017", "file": "001", "number": 5, "title": "input hyper-parameters",
                  "data": "CCGbank supertags, 7 layers"},
}


def _row(table: str, case: str, row: str, dev: float | None, test: float | None, based_on: str, description: str,
         model: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"based_on": based_on, "table": table, "case": case, "row": row, "paper_dev": dev, "paper_test": test,
            "description": description, "model": model or {}}


_T = "wu2016-t1"
PRESETS.update({
    "wu2016-t1-7": _row(_T, "", "7-layers + skip output + gating", 94.51, 94.67, "wu2016-7x512",
                        "7 × 512 LSTM, gated skip connections to the cell output (Eq. 49)"),
    "wu2016-t1-7-nochar": _row(_T, "", "7-layers + skip output + gating (no char)", 94.33, 94.45, "wu2016-7x512",
                               "without the character features (l_w = 0)", {"char_length": 0}),
    "wu2016-t1-7-nodropout": _row(_T, "", "7-layers + skip output + gating (no dropout)", 94.06, 94.0, "wu2016-7x512",
                                  "without dropout", {"input_dropout": 0.0, "hidden_dropout": 0.0}),
    "wu2016-t1-9": _row(_T, "", "9-layers + skip output + gating", 94.55, 94.69, "wu2016-7x512", "9 × 512",
                        {"layers": 9}),
})
_T = "wu2016-t2"
PRESETS.update({
    "wu2016-t2-hlstm": _row(_T, "H-LSTM, Zhang et al. 2016", "-", 93.14, 93.52, "wu2016-7x512",
                            "gated identity from the cell of the layer below into the cell (highway LSTM)",
                            {"skip": "internal", "gate": "recurrent", "skip_source": "internal",
                             "composition": "adjacent"}),
    "wu2016-t2-rhn": _row(_T, "RHN, Zilly et al. 2016", "L = 3, with output gates", 94.28, 94.24, "wu2016-7x512",
                          "one bidirectional recurrent highway layer, recurrence depth 3, output gate on the last step",
                          {"cell": "rhn", "skip": "none", "layers": 1, "rhn_depth": 3}),
    "wu2016-t2-none": _row(_T, "no skip connections", "-", 93.94, 94.26, "wu2016-7x512", "plain stacked LSTM",
                           {"skip": "none"}),
    "wu2016-t2-gates": _row(_T, "to the gates, Eq. (32)", "-", 93.9, 94.22, "wu2016-7x512",
                            "h^{l-2} added to every gate's pre-activation", {"skip": "gates"}),
    "wu2016-t2-internal": _row(_T, "to the internals", "no gate, Eq. (33)", 94.33, 94.63, "wu2016-7x512",
                               "c = f⊙c + i⊙s + h^{l-2}", {"skip": "internal", "gate": "none"}),
    "wu2016-t2-internal-gated": _row(_T, "to the internals", "with gate", 94.24, 94.52, "wu2016-7x512",
                                     "c = f⊙c + i⊙s + g⊙h^{l-2}", {"skip": "internal", "gate": "recurrent"}),
    "wu2016-t2-output": _row(_T, "to the outputs", "no gate, Eq. (36)", 93.89, 93.98, "wu2016-7x512",
                             "h = o⊙tanh(c) + h^{l-2}", {"skip": "output", "gate": "none"}),
    "wu2016-t2-output-gated-bf5": _row(_T, "to the outputs", "with gate, b_f = 5, Eq. (49)", 94.23, 94.81, "wu2016-7x512",
                                       "h = o⊙tanh(c) + g⊙h^{l-2}, forget bias 5", {"forget_bias": 5.0}),
    "wu2016-t2-output-gated": _row(_T, "to the outputs", "with gate, b_f = 0, Eq. (49)", 94.51, 94.67, "wu2016-7x512",
                                   "h = o⊙tanh(c) + g⊙h^{l-2}, forget bias 0 (the paper's model)"),
    "wu2016-t2-sigmoid": _row(_T, "sigmoid mapping", "g⊙σ(h^{l-2})", 94.02, 94.18, "wu2016-7x512",
                              "h = o⊙tanh(c) + g⊙σ(h^{l-2})", {"skip_map": "sigmoid"}),
})
_T = "wu2016-t3"
PRESETS.update({
    f"wu2016-t3-{n}": _row(_T, "", f"{n} layers", dev, test, "wu2016-7x512", f"{n} × 512, gated skip to the output",
                           {"layers": n})
    for n, dev, test in ((3, 94.21, 94.35), (5, 94.51, 94.57), (7, 94.51, 94.67), (9, 94.55, 94.7), (11, 94.43, 94.65))
})
_T = "wu2017-t1"
PRESETS.update({
    f"wu2017-t1-{n}": _row(_T, "", f"{n}-stacked shortcut block", dev, test, "wu2017-7x465",
                           f"{n} × 465 shortcut blocks (Eq. 11, gate Eq. 13)", {"layers": n})
    for n, dev, test in ((7, 94.74, 94.95), (9, 94.82, 94.99), (11, 94.66, 94.86), (13, 94.73, 94.97))
})
_T, _C1, _C2 = "wu2017-t2", "both c and h updated (case 1)", "shortcut block (case 2)"
PRESETS.update({
    "wu2017-t2-wu2016": _row(_T, "h updated (Wu et al. 2016b)", "with gate: h = h̃ + g⊙h^{l-2}", 94.51, 94.67,
                             "wu2017-7x465", "the 2016 LSTM: gated skip to the output, gate from h_{t-1} and h^{l-2}",
                             {"cell": "lstm", "skip": "output", "gate": "recurrent"}),
    "wu2017-t2-both": _row(_T, _C1, "no gate: c = c̃ + h^{l-2}, h = h̃ + h^{l-2}", 93.84, 93.84, "wu2017-7x465",
                           "LSTM, h^{l-2} added to the cell and the output", {"cell": "lstm", "skip": "both", "gate": "none"}),
    "wu2017-t2-both-gated": _row(_T, _C1, "with gate: c = c̃ + g⊙h^{l-2}, h = h̃ + g⊙h^{l-2}", 94.72, 95.08,
                                 "wu2017-7x465", "LSTM, g⊙h^{l-2} added to the cell and the output, g = σ(W h^{l-1})",
                                 {"cell": "lstm", "skip": "both"}),
    "wu2017-t2-both-highway": _row(_T, _C1, "highway gate: c = (1-g)⊙c̃ + g⊙h^{l-2}, h = (1-g)⊙h̃ + g⊙h^{l-2}",
                                   94.49, 94.62, "wu2017-7x465", "LSTM, highway mix into the cell and the output",
                                   {"cell": "lstm", "skip": "both", "skip_mix": "highway"}),
    "wu2017-t2-both-separate": _row(_T, _C1, "shortcuts for both: c = c̃ + g_c⊙c^{l-2}, h = h̃ + g_h⊙h^{l-2}",
                                    94.72, 94.98, "wu2017-7x465",
                                    "LSTM, the cell of layer l-2 into the cell and its output into the output, own gates",
                                    {"cell": "lstm", "skip": "both", "skip_source": "separate"}),
    "wu2017-t2-block-h-ungated": _row(_T, _C2, "no gate in h: h = o⊙tanh(m) + h^{l-2}", 94.15, 94.29, "wu2017-7x465",
                                      "shortcut block, no gate on the shortcut into h", {"skip_ungated": "output"}),
    "wu2017-t2-block-m-ungated": _row(_T, _C2, "no gate in m: m = i⊙s + h^{l-2}", 94.77, 94.97, "wu2017-7x465",
                                      "shortcut block, no gate on the shortcut into m", {"skip_ungated": "internal"}),
    "wu2017-t2-block-share": _row(_T, _C2, "share gate: h = o⊙tanh(m) + o⊙h^{l-2}", 94.68, 94.83, "wu2017-7x465",
                                  "shortcut block gated by its own output gate o (in m and h)", {"gate": "output"}),
    "wu2017-t2-block-no-m": _row(_T, _C2, "no shortcut in internal: h = o⊙tanh(i⊙s) + g⊙h^{l-2}", 93.83, 94.01,
                                 "wu2017-7x465", "shortcut block, shortcut into h only", {"skip": "output"}),
    "wu2017-t2-block-no-h": _row(_T, _C2, "no shortcut in cell output: h = o⊙tanh(m)", 93.58, 93.82, "wu2017-7x465",
                                 "shortcut block, shortcut into m only", {"skip": "internal"}),
})
_T = "wu2017-t3"
PRESETS.update({
    "wu2017-t3-tanh": _row(_T, "scaled mapping", "replace h^{l-2} with tanh(h^{l-2})", 94.60, 94.81, "wu2017-7x465",
                           "shortcut block on tanh(h^{l-2})", {"skip_map": "tanh"}),
    "wu2017-t3-linear": _row(_T, "linear mapping", "g⊙h^{-l} = w⊙h^{-l}", 92.07, 92.15, "wu2017-7x465",
                             "shortcut scaled by a learned vector w", {"gate": "linear"}),
    "wu2017-t3-input": _row(_T, "non-linear mapping", "g = σ(W h^{l-1})", 94.79, 94.91, "wu2017-7x465",
                            "the default gate, from the layer's input"),
    "wu2017-t3-hidden": _row(_T, "non-linear mapping", "g = σ(U h_{t-1})", 94.21, 94.56, "wu2017-7x465",
                             "gate from the layer's previous state", {"gate": "hidden"}),
    "wu2017-t3-skip": _row(_T, "non-linear mapping", "g = σ(V h^{l-2})", 94.60, 94.78, "wu2017-7x465",
                           "gate from the shortcut itself", {"gate": "skip"}),
    "wu2017-t3-bernoulli": _row(_T, "stochastic sampling", "g ~ Bernoulli(p), p = 0.5", 91.12, 91.47, "wu2017-7x465",
                                "random 0/1 gate in training, 0.5 at test", {"gate": "bernoulli"}),
    "wu2017-t3-bernoulli-learned": _row(_T, "stochastic sampling", "g ~ Bernoulli(p), p = σ(H h^{l-1})", 93.90, 94.06,
                                        "wu2017-7x465", "random gate with a learned p (straight-through), p at test",
                                        {"gate": "bernoulli-learned"}),
})
_T = "wu2017-t4"
PRESETS.update({
    "wu2017-t4-type1": _row(_T, "", "Type 1", 94.22, 94.38, "wu2017-7x465", "every layer's shortcut from h^1",
                            {"skip_span": 0}),
    "wu2017-t4-type2": _row(_T, "", "Type 2", 94.79, 94.94, "wu2017-7x465", "span 1: h^{l-2} (the default)"),
    "wu2017-t4-type3": _row(_T, "", "Type 3", 94.53, 94.80, "wu2017-7x465", "span 2: h^{l-3}", {"skip_span": 2}),
    "wu2017-t4-type4": _row(_T, "", "Type 4", 94.55, 94.70, "wu2017-7x465",
                            "nested span-2 blocks: h^{l-3} + h^{l-6} (our reading)",
                            {"skip_span": 2, "composition": "nested"}),
    "wu2017-t4-type5": _row(_T, "", "Type 5", 94.76, 94.95, "wu2017-7x465",
                            "nested span-1 blocks: h^{l-2} + h^{l-4} (our reading)", {"composition": "nested"}),
})
_T = "wu2017-t5"
PRESETS.update({
    "wu2017-t5-window0": _row(_T, "window size", "k = 0", 93.96, 94.06, "wu2017-7x465",
                              "no context window: the word's own features only", {"window": 1}),
    "wu2017-t5-window5": _row(_T, "window size", "k = 5", 94.27, 94.81, "wu2017-7x465", "window of 5 words",
                              {"window": 5}),
    "wu2017-t5-window7": _row(_T, "window size", "k = 7", 94.52, 94.71, "wu2017-7x465", "window of 7 words",
                              {"window": 7}),
    "wu2017-t5-chars-only": _row(_T, "character-level", "character only", 92.17, 93.0, "wu2017-7x465",
                                 "first and last 5 characters only: no word or capitalisation embedding",
                                 {"word_dim": 0, "caps_dim": 0}),
    "wu2017-t5-lw0": _row(_T, "character-level", "l_w = 0", 93.59, 93.71, "wu2017-7x465", "no characters",
                          {"char_length": 0}),
    "wu2017-t5-lw3": _row(_T, "character-level", "l_w = 3", 94.21, 94.41, "wu2017-7x465",
                          "first and last 3 characters", {"char_length": 3}),
    "wu2017-t5-lw7": _row(_T, "character-level", "l_w = 7", 94.43, 94.75, "wu2017-7x465",
                          "first and last 7 characters", {"char_length": 7}),
})
