"""The transition parser's inference arrays, from its plain state dict, without torch: the one
accessor the torch-free parser (:mod:`tagger.runtime.parser`) reads a model through, as the
skip-LSTM tagger's fast path reads its own (:mod:`tagger.models.skip_lstm.export`).

What it computes is :mod:`.decoder`'s greedy decoding with :class:`.decoder.TokenInputs` rows, for
the parsers whose token slots read the encoder's vectors only (``encoder=bilstm``,
``features=replace``) through a feed-forward hidden layer (``arch=ffn``): the shipped English
model's parser, ``--preset bilstm-words`` and ``bilstm-tags`` (an encoder that also reads the
POS tag: its part of the first layer's product is a row per tag, :attr:`ParserArrays.tag_rows`).
:func:`supported` says which configurations; the others (static word and tag embeddings,
recurrent parsers, a character CNN) stay with torch.

The encoder is the skip-LSTM tagger's network without its output layer, so it is exported as
one (:func:`encoder_parts`: a :class:`~tagger.models.skip_lstm.config.TaggerConfig`, the
tagger's vocabulary and weight names) whose output layer is the parser's token-slot product:
``v · slot_weight`` for the first k slots side by side [2H, k·G·H], the hidden layer's bias in
slot 0's columns (slot s0 is never empty). The tagger runtime then gives each word's k rows
in one product, with its kernels.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from tagger.config import config_from_dict
from tagger.errors import TaggerError
from tagger.models.skip_lstm.config import TaggerConfig, subword_table, supports_fast_path
from tagger.models.skip_lstm.export import Output, expected_keys, plain
from tagger.models.transition_parser.config import FIXED, MIRRORED, PRETRAINED_KEY, SUBWORD_KEYS, ParserConfig
from tagger.models.transition_parser.ids import LABEL_OFFSET, N_CHILD
from tagger.transitions.arc_standard import mask_templates, n_actions, root_label
from tagger.transitions.pseudo_projective import label_parts

#: Where the encoder's weights are in the parser's state dict.
ENCODER_PREFIX = "encoder."
#: The encoder's tag embedding (``encoder_tag_dim``), under :data:`ENCODER_PREFIX`.
TAG_KEY = "tag_emb.weight"
#: The parser's own weights (besides the encoder's) on this path.
PARSER_KEYS = {"slot_weight", "label_emb.weight", "hidden.weight", "hidden.bias", "output.weight", "encoder.null",
               "encoder.root"}


@dataclass
class ParserArrays:
    """What the torch-free parser computes a model from (G·H = the hidden layer's width, k = the
    slots that read the encoder, A = actions)."""

    encoder_config: TaggerConfig  # the encoder as a skip-LSTM tagger
    encoder_vocabs: dict[str, list[str]]  # ... its vocabularies under the tagger's names
    encoder_state: dict[str, Any]  # ... its weights under the tagger's names
    slot_output: Output  # its output layer: [2H, k·G·H], the bias in slot 0's columns
    slots: int  # k
    null_rows: np.ndarray  # [k, G·H] the rows of an empty slot (the null vector; bias in slot 0)
    root_rows: np.ndarray  # [k, G·H] ROOT's
    label_rows: np.ndarray  # [(labels + 4) · 12, G·H] row 12 l + c: W_c · e_l, label-embedding id l, child slot c
    w_out: np.ndarray  # [G·H, A]
    masks: np.ndarray  # [8, A] 0 where legal, -inf where not, per legal_code
    label_names: list[str]  # transition labels (lifted ones d↑h after the plain)
    plain_labels: list[str]  # per label index: the label it is written as
    lifted_from: list[str | None]  # per label index: h of d↑h, None for a plain label
    #: an encoder that reads the POS tag (``encoder_tag_dim``): each tag's part of the first
    #: layer's input product, [tags + 1, 2, G] (direction; the last row zero, for padding), and
    #: the tags (the parser's ``tags`` vocabulary, ``tag_column`` values such as ``NOUN+Number=Sing``)
    tag_rows: np.ndarray | None = None
    tag_names: list[str] | None = None
    tag_column: str = ""  # the columns it reads (``upos+feats``), where it reads tags


def supported(config: ParserConfig) -> bool:
    """Whether :func:`export` (and so the torch-free parser) takes a parser of ``config``."""
    return (config.arch == "ffn" and config.encoder == "bilstm" and config.features == "replace"
            and not config.encoder_char_cnn
            and supports_fast_path(encoder_config(config)))


def encoder_config(config: ParserConfig) -> TaggerConfig:
    """The skip-LSTM tagger config the encoder of ``config`` has (:data:`MIRRORED`, :data:`FIXED`)."""
    tagger_fields = {f.name for f in dataclasses.fields(TaggerConfig)}
    values: dict[str, Any] = {source: getattr(config, name) for name, source in MIRRORED.items()}
    values.update({key: value for key, value in FIXED.items() if key in tagger_fields})
    return config_from_dict(TaggerConfig, values, from_file=True)


def config_of(values: Mapping[str, Any] | None) -> ParserConfig | None:
    """A model file's parser config values as the family's config (None where they do not read as one)."""
    if not isinstance(values, Mapping):
        return None
    try:
        return config_from_dict(ParserConfig, values, from_file=True)
    except (TaggerError, ValueError, TypeError):  # TaggerError: an unknown key (a newer file)
        return None


def export(config: ParserConfig, vocabs: Mapping[str, Sequence[str]], state: Mapping[str, Any]) -> ParserArrays:
    """The inference arrays of a parser of ``config`` (:func:`supported` must hold) from its
    ``vocabs`` and plain ``state`` dict (numpy arrays, or CPU tensors of a live model). A
    ValueError when they are not those of this configuration."""
    if not supported(config):
        raise ValueError("not a configuration computed here")
    tagger_config = encoder_config(config)
    encoder_state = {key[len(ENCODER_PREFIX):]: value for key, value in state.items()
                     if key.startswith(ENCODER_PREFIX) and key not in PARSER_KEYS}
    encoder_vocabs = {"words": list(vocabs["encoder_words"]), "chars": list(vocabs["encoder_chars"]),
                      "pretrained": list(vocabs.get(PRETRAINED_KEY, [])) if config.encoder_pretrained_dim else []}
    if vocabs.get(SUBWORD_KEYS[0]):
        encoder_vocabs.update(subwords=list(vocabs[SUBWORD_KEYS[0]]), subword_kinds=list(vocabs[SUBWORD_KEYS[1]]))
    tag_rows = _tag_rows(config, encoder_state) if config.encoder_tag_dim else None
    if set(state) - {ENCODER_PREFIX + key for key in encoder_state} - {ENCODER_PREFIX + TAG_KEY} != PARSER_KEYS \
            or set(encoder_state) != expected_keys(tagger_config, output=False, subwords=subword_table(tagger_config, encoder_vocabs)[0] > 0):
        raise ValueError("the weights are not those of this configuration")
    k = config.encoder_slots
    slot_weight, bias = plain(state["slot_weight"]), plain(state["hidden.bias"])  # [2H, k, GH], [GH]
    size, width = 2 * config.encoder_hidden, len(bias)
    if slot_weight.shape != (size, k, width):
        raise ValueError("the token slots' weights do not fit the configuration")
    slot_bias = np.zeros((k, width), dtype=np.float32)
    slot_bias[0] = bias
    vectors = np.stack([plain(state["encoder.null"]), plain(state["encoder.root"])])  # [2, 2H]
    null_rows, root_rows = (vectors @ slot_weight.reshape(size, -1)).reshape(2, k, width) + slot_bias
    names = list(vocabs["labels"])
    parts = label_parts(names, int(vocabs.get("plain_labels", [str(len(names))])[0]))
    w_out = np.ascontiguousarray(plain(state["output.weight"]).T)  # [GH, A]
    if w_out.shape != (width, n_actions(len(names))):
        raise ValueError("the output layer does not fit the labels")
    templates = mask_templates(len(names), root_label(names))
    masks = np.where(np.array([list(t) for t in templates], dtype=bool), 0.0, -np.inf).astype(np.float32)
    return ParserArrays(tagger_config, encoder_vocabs, encoder_state,
                        Output(slot_weight.reshape(size, k * width), slot_bias.reshape(-1)), k,
                        np.ascontiguousarray(null_rows), np.ascontiguousarray(root_rows),
                        label_rows(plain(state["label_emb.weight"]), plain(state["hidden.weight"])), w_out, masks,
                        names, [p for p, _ in parts], [h for _, h in parts], tag_rows,
                        list(vocabs["tags"]) if tag_rows is not None else None,
                        config.tag_column if tag_rows is not None else "")


def _tag_rows(config: ParserConfig, encoder_state: dict[str, Any]) -> np.ndarray:
    """An encoder reading the POS tag takes ``[words' window; tag embedding]`` into its first
    layer: the tag's part is taken out of ``encoder_state`` (which keeps the words' part, as a
    tagger's first layer) and returned as one row per tag, ``e_t · W_tag`` [tags + 1, 2, G], the
    last row zero (padding)."""
    key = "rnn.layers.0.w_x"
    if TAG_KEY not in encoder_state or key not in encoder_state:
        raise ValueError("an encoder reading tags without its tag weights")
    emb, w_x = plain(encoder_state.pop(TAG_KEY)), plain(encoder_state[key])  # [tags, D_t], [2, D + D_t, G]
    size = config.encoder_tag_dim
    if emb.ndim != 2 or emb.shape[1] != size or w_x.ndim != 3 or w_x.shape[1] <= size:
        raise ValueError("the tag weights do not fit the configuration")
    encoder_state[key] = np.ascontiguousarray(w_x[:, :-size])
    rows = np.zeros((len(emb) + 1, 2, w_x.shape[2]), dtype=np.float32)
    rows[:-1] = np.einsum("nt,dtg->ndg", emb, w_x[:, -size:])
    return rows


def label_rows(label_weight: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``W_c · e_l`` for every label embedding ``e_l`` (``label_weight`` [L, D]) and child slot c:
    [L · 12, G·H] (row ``12 l + c``), from the hidden layer's ``weight`` [G·H, 12 · D] (the
    torch decoder's :func:`.encoder.label_rows`)."""
    width, size = weight.shape[0], label_weight.shape[1]
    if weight.shape[1] != N_CHILD * size or len(label_weight) <= LABEL_OFFSET:
        raise ValueError("the label features do not fit the hidden layer")
    blocks = weight.reshape(width, N_CHILD, size).transpose(2, 1, 0).reshape(size, N_CHILD * width)
    return np.ascontiguousarray((label_weight @ blocks).reshape(-1, width))
