"""Named presets of the transition parser, as plain data (resolved by
:func:`tagger.config.resolve_preset`). The defaults are the paper's FFN; Tables 2-5 are the four
architectures, with ``--bootstrap FFN --gates ...`` for the bootstrapped rows and
``--embeddings`` for GloVe."""

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
               "training": {"optimizer": "adam", "lr": 0.001, "batch_size": 16}},
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
