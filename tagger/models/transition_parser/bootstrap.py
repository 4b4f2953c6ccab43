"""Bootstrapping a recurrent parser from a trained FFN parser (Elkaref & Bohnet 2017, §4).

Copies the three embedding tables and the output layer, and for each chosen gate (``i j f o``
for LSTM, ``r z h`` for GRU, ``h`` for Elman; none chosen = all) the FFN's hidden weights ``W``
into that gate's ``W_x`` block and its bias ``b`` into the gate's bias. Everything else (``W_h``,
the other gates) keeps its initialisation. With an encoder (contextual features), the FFN's
encoder is copied whole, and its token slots' weights (``slot_weight``) gate by gate as ``W``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from tagger.models.transition_parser.encoder import VOCAB_KEYS

if TYPE_CHECKING:
    from tagger.models.transition_parser.model import TransitionParser

#: The config keys of the contextual features that must agree (the encoder's shape and what it reads).
ENCODER_KEYS = ("encoder", "features", "encoder_layers", "encoder_hidden", "encoder_skip", "encoder_word_dim",
                "encoder_caps_dim", "encoder_char_dim", "encoder_char_length", "encoder_char_cnn", "encoder_window",
                "encoder_tag_dim", "encoder_slots")

#: Other spellings of the GRU's and Elman's candidate gate ``h``.
GATE_ALIASES = {"h~": "h", "htilde": "h", "h_tilde": "h"}


def bootstrap(rnn: TransitionParser, ffn: TransitionParser, gates: list[str] | None = None) -> None:
    """Initialise ``rnn`` (arch lstm, gru or elman) from ``ffn``; a ``ValueError`` saying why when
    they do not fit (architectures, vocabularies, sizes, unknown gates)."""
    check_fits(rnn, ffn)
    chosen = chosen_gates(rnn.config.arch, rnn.gates, gates)
    size = rnn.config.hidden
    with torch.no_grad():
        for mine, theirs in ((rnn.word_emb, ffn.word_emb), (rnn.tag_emb, ffn.tag_emb), (rnn.label_emb, ffn.label_emb),
                             (rnn.output, ffn.output)):
            if mine is not None:  # no word and tag embeddings when an encoder replaces them
                mine.weight.copy_(theirs.weight)
        if rnn.encoder is not None:
            rnn.encoder.load_state_dict(ffn.encoder.state_dict())
        if ffn.word_pretrained is not None:  # its frozen table and the projection it learnt
            rnn.take_table(list(ffn.vocabs.get("pretrained", [])), ffn.word_pretrained.table.float())
            rnn.word_pretrained.project.weight.copy_(ffn.word_pretrained.project.weight)
        for gate in chosen:
            k = rnn.gates.index(gate)
            rnn.hidden.weight[k * size : (k + 1) * size] = ffn.hidden.weight
            rnn.hidden.bias[k * size : (k + 1) * size] = ffn.hidden.bias
            if rnn.slot_weight is not None:
                rnn.slot_weight[..., k * size : (k + 1) * size] = ffn.slot_weight


def check_fits(rnn: TransitionParser, ffn: TransitionParser) -> None:
    """A ``ValueError`` unless ``rnn`` is recurrent and ``ffn`` a trained FFN of the same
    vocabularies and sizes."""
    if rnn.config.arch == "ffn":
        raise ValueError("bootstrapping initialises a recurrent parser (arch lstm, gru or elman) from an FFN")
    if not isinstance(ffn, type(rnn)) or ffn.config.arch != "ffn":
        arch = ffn.config.arch if isinstance(ffn, type(rnn)) else "?"
        raise ValueError(f"can only bootstrap from a trained FFN transition parser, not a {ffn.name} "
                         f"model with arch {arch}")
    keys = ("words", "tags", "labels", "plain_labels") + (VOCAB_KEYS if rnn.config.encoder != "none" else ())
    for key in keys:
        if list(ffn.vocabs.get(key, [])) != list(rnn.vocabs.get(key, [])):
            raise ValueError(f"the FFN's {key} vocabulary differs from this parser's "
                             f"({len(ffn.vocabs.get(key, []))} vs {len(rnn.vocabs.get(key, []))} entries): "
                             f"build this parser with the FFN's vocabularies")
    for key in ("word_dim", "tag_dim", "label_dim", "hidden") + ENCODER_KEYS:
        if getattr(ffn.config, key) != getattr(rnn.config, key):
            raise ValueError(f"{key} differs: FFN {getattr(ffn.config, key)}, this parser {getattr(rnn.config, key)}"
                             f" (add --set {key}={getattr(ffn.config, key)})")
    if ffn.config.nonprojective != rnn.config.nonprojective:  # the FFN's labels are lifted ones or not
        raise ValueError(f"the FFN was trained with nonprojective={ffn.config.nonprojective}, this parser "
                         f"{rnn.config.nonprojective}: train it with --set nonprojective={ffn.config.nonprojective}")


def chosen_gates(arch: str, gates: tuple[str, ...], requested: list[str] | None) -> list[str]:
    """The gates to copy: ``requested`` (normalised; ``None`` or empty = all of ``gates``)."""
    chosen = [GATE_ALIASES.get(g.strip().lower(), g.strip().lower()) for g in requested] if requested else list(gates)
    unknown = [g for g in chosen if g not in gates]
    if unknown:
        raise ValueError(f"unknown gate(s) {', '.join(unknown)} for {arch}; choose from {', '.join(gates)}")
    return chosen

