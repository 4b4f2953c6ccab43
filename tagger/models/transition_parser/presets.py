"""Named presets of the transition parser, as plain data (resolved by
:func:`tagger.config.resolve_preset`). The defaults are the paper's FFN; Tables 2-5 are the four
architectures, with ``--bootstrap FFN --gates ...`` for the bootstrapped rows and
``--embeddings`` for GloVe.

The ablation zoo's rows of paper 004 (Tables 3-5, :data:`TABLES`): presets ``TABLE-ROW-CASE``
carrying their ``table``, the paper's ``case`` and ``row`` labels, its dev LAS (``paper_dev``)
and UAS (``paper_uas``), whether the row reads the run's vectors (``vectors``) and the row it
is bootstrapped from (``bootstrap``, with ``gates``); ``tagger ablate --table elkaref2017-t3``
trains them (:mod:`tagger.ablation`)."""

from __future__ import annotations

from typing import Any

#: Training values under every preset (Elkaref & Bohnet 2017: mini-batch SGD, momentum 0.9, lr
#: 0.05, L2 1e-8; 8 sentences per update ≈ 330 transitions on EWT, see docs/parser.md).
TRAINING_DEFAULTS: dict[str, Any] = {"optimizer": "sgd", "lr": 0.05, "momentum": 0.9, "weight_decay": 1e-8,
                                     "batch_size": 8, "max_epochs": 30, "patience": 4, "lr_halving": True}

PRESETS: dict[str, dict[str, Any]] = {
    "ffn": {"description": "feed-forward hidden layer (Chen & Manning 2014)", "model": {"arch": "ffn"}},
    "lstm": {"description": "LSTM hidden layer over the transition sequence", "model": {"arch": "lstm"}},
    "gru": {"description": "GRU hidden layer", "model": {"arch": "gru"}},
    "elman": {"description": "Elman (simple recurrent) hidden layer", "model": {"arch": "elman"}},
    "lstm-full-bptt": {"based_on": "lstm", "description": "§5: full backpropagation through time instead of τ = 5",
                       "model": {"bptt": 0}},
    "ffn-no-input-dropout": {"based_on": "ffn", "description": "§5: the effect of input dropout",
                             "model": {"input_dropout": 0.0}},
    "ffn-paper": {"based_on": "ffn", "description": "exactly the paper's recipe (no UNK training)",
                  "model": {"rare_word_dropout": 0.0}},
    "lstm-paper": {"based_on": "lstm", "description": "exactly the paper's recipe (no UNK training)",
                   "model": {"rare_word_dropout": 0.0}},
    # contextual features (beyond the paper): token slots read a BiLSTM encoding of the sentence
    "bilstm": {"description": "FFN whose token slots read a 2-layer BiLSTM over the sentence (words, characters) "
                              "beside the word and tag embeddings (Kiperwasser & Goldberg 2016); Adam",
               "model": {"arch": "ffn", "encoder": "bilstm", "features": "beside"},
               "training": {"optimizer": "adam", "lr": 0.001, "batch_size": 16, "max_epochs": 100}},
    "bilstm-words": {"based_on": "bilstm",
                     "description": "bilstm whose first 6 token slots (s0-s2, b0-b2) read the BiLSTM alone: no POS "
                                    "input, so no tagger errors to learn and nothing to jackknife; the pipeline's parser",
                     "model": {"features": "replace", "encoder_slots": 6, "encoder_tag_dim": 0}},
    "bilstm-tags": {"based_on": "bilstm-words",
                    "description": "bilstm-words whose BiLSTM also reads the POS (32-dim tag embeddings): train it on "
                                   "jackknifed tags (--jackknife K; a pipeline does)",
                    "model": {"encoder_tag_dim": 32}},
    "bilstm-lstm": {"based_on": "bilstm", "description": "bilstm with an LSTM hidden layer (--bootstrap a bilstm FFN)",
                    "model": {"arch": "lstm"}},
}


#: Paper 004's tables that the zoo reproduces (rows: the presets whose "table" is the key).
#: The paper's figures are WSJ (Stanford dependencies) dev scores: ``paper_dev`` LAS,
#: ``paper_uas`` UAS (no test figures: ``test_reported`` False). A row ``vectors`` trains with
#: the run's ``--embeddings`` (the paper's "pre-trained embeddings", GloVe); a row ``bootstrap``
#: starts from that row's model (same table), copying ``gates`` (None: all; Elkaref & Bohnet
#: 2017, §6 and §8).
TABLES: dict[str, dict[str, Any]] = {
    "elkaref2017-t3": {"paper": "Elkaref & Bohnet 2017", "file": "004", "number": 3, "task": "dep",
                       "test_reported": False, "title": "RNN types, random against pre-trained embeddings",
                       "data": "WSJ (SD) dev LAS"},
    "elkaref2017-t4": {"paper": "Elkaref & Bohnet 2017", "file": "004", "number": 4, "task": "dep",
                       "test_reported": False, "title": "individually bootstrapped LSTM gates",
                       "data": "WSJ (SD) dev LAS"},
    "elkaref2017-t5": {"paper": "Elkaref & Bohnet 2017", "file": "004", "number": 5, "task": "dep",
                       "test_reported": False, "title": "individually bootstrapped GRU gates",
                       "data": "WSJ (SD) dev LAS"},
}

#: The two cases of every table: the initial word vectors random, or pre-trained (the run's --embeddings).
CASES = {"random": ("Random embeddings", False), "glove": ("Pre-trained embeddings", True)}


def _row(table: str, case: str, row: str, uas: float, las: float, arch: str, description: str,
         bootstrap: str | None = None, gates: str | None = None) -> dict[str, Any]:
    """One row of paper 004's tables: the paper's recipe (``ffn-paper``) with ``arch``."""
    label, vectors = CASES[case]
    entry: dict[str, Any] = {"based_on": "ffn-paper", "table": table, "case": label, "row": row, "paper_dev": las,
                             "paper_test": None, "paper_uas": uas, "vectors": vectors, "description": description,
                             "model": {"arch": arch} if arch != "ffn" else {}}
    if bootstrap:
        entry.update({"bootstrap": f"{table}-{bootstrap}-{case}", "gates": gates})
    return entry


def _rows(table: str, figures: dict[str, list[tuple[str, float, float]]],
          specs: dict[str, tuple[str, str, str | None, str | None]]) -> dict[str, dict[str, Any]]:
    """``table``'s presets ``TABLE-KEY-CASE``: per case, the rows ``(key, uas, las)`` in the
    paper's order, each built from ``specs[key]`` = (label, arch, bootstrapped from, gates)."""
    out = {}
    for case, rows in figures.items():
        for key, uas, las in rows:
            label, arch, source, gates = specs[key]
            gate = f"{gates} gate" if gates else "all gates"
            what = f"{arch.upper()} hidden layer" + (f", bootstrapped from the FFN row ({gate})" if source else "")
            out[f"{table}-{key}-{case}"] = _row(table, case, label, uas, las, arch, what, source, gates)
    return out


_SPECS = {
    "ffn": ("FFN baseline", "ffn", None, None),
    "lstm": ("LSTM baseline", "lstm", None, None), "lstm-boot": ("bootstrapped LSTM", "lstm", "ffn", None),
    "elman": ("Elman baseline", "elman", None, None), "elman-boot": ("bootstrapped Elman", "elman", "ffn", None),
    "gru": ("GRU baseline", "gru", None, None), "gru-boot": ("bootstrapped GRU", "gru", "ffn", None),
    **{f"lstm-{g}": (f"bootstrapped {g} gate", "lstm", "ffn", g) for g in "ijfo"},
    "lstm-all": ("bootstrapped all gates", "lstm", "ffn", None),
    **{f"gru-{g}": (f"bootstrapped {label} gate", "gru", "ffn", g) for g, label in (("r", "r"), ("z", "z"), ("h", "h~"))},
    "gru-all": ("bootstrapped all gates", "gru", "ffn", None),
}
PRESETS.update(_rows("elkaref2017-t3", {
    "random": [("ffn", 92.21, 89.85), ("lstm", 92.16, 89.87), ("lstm-boot", 92.43, 90.06), ("elman", 91.97, 89.62),
               ("elman-boot", 92.40, 90.06), ("gru", 91.62, 89.18), ("gru-boot", 91.67, 89.31)],
    "glove": [("ffn", 92.76, 90.47), ("lstm", 93.23, 90.94), ("lstm-boot", 93.41, 91.20), ("elman", 92.01, 89.47),
              ("elman-boot", 92.87, 90.52), ("gru", 92.21, 89.77), ("gru-boot", 92.14, 89.78)],
}, _SPECS))
PRESETS.update(_rows("elkaref2017-t4", {
    "random": [("ffn", 92.21, 89.85), ("lstm", 92.16, 89.87), ("lstm-i", 92.29, 90.00), ("lstm-j", 92.38, 89.96),
               ("lstm-f", 92.25, 89.81), ("lstm-o", 92.43, 90.06), ("lstm-all", 92.38, 90.01)],
    "glove": [("ffn", 92.76, 90.47), ("lstm", 93.23, 90.94), ("lstm-i", 93.20, 90.96), ("lstm-j", 93.30, 91.02),
              ("lstm-f", 93.42, 91.22), ("lstm-o", 93.35, 91.11), ("lstm-all", 93.41, 91.20)],
}, _SPECS))
PRESETS.update(_rows("elkaref2017-t5", {
    "random": [("ffn", 92.21, 89.85), ("gru", 91.62, 89.18), ("gru-r", 91.70, 89.15), ("gru-z", 90.59, 87.90),
               ("gru-h", 91.67, 89.31), ("gru-all", 91.73, 89.20)],
    "glove": [("ffn", 92.76, 90.47), ("gru", 92.21, 89.77), ("gru-r", 92.22, 89.79), ("gru-z", 92.62, 90.37),
              ("gru-h", 92.14, 89.78), ("gru-all", 89.30, 86.09)],
}, _SPECS))
