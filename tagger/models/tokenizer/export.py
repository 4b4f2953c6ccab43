"""The tokenizer's inference arrays, from its plain state dict, without torch: what the torch-free
runtime (:mod:`tagger.runtime.tokenizer`) reads a ``recurrent=torch`` tokenizer through.

:func:`export` takes the ``state_dict`` of a model file (numpy arrays, :func:`tagger.archive.read`)
or of a live :class:`~tagger.models.tokenizer.Tokenizer` (``model.state_dict()``, tensors on the
CPU) and gives the same arrays from both (tests/test_schema_export.py): the embeddings, and per
layer ``torch.nn.LSTM``'s weights of both directions stacked, transposed, their two biases
summed, the gates reordered from torch's i, f, g, o to the C step's i, f, o, g
(:mod:`tagger.runtime.scan`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from tagger.models.tokenizer.config import TokenizerConfig


@dataclass
class TokenizerArrays:
    chars: np.ndarray  # the character embedding [V, char_dim]
    categories: np.ndarray  # the Unicode category embedding [C, category_dim]
    #: per layer: (W_ih^T [2, D, 4H], W_hh^T [2, H, 4H], b [2, 1, 4H]), both directions, gates i, f, o, g
    layers: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    w_out: np.ndarray  # [2H, 5]
    b_out: np.ndarray  # [5]


def plain(value: Any) -> np.ndarray:
    """A weight as numpy float32: a numpy array, or a CPU tensor (torch not imported here)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value).astype(np.float32)


def export(config: TokenizerConfig, state: Mapping[str, Any]) -> TokenizerArrays:
    """The inference arrays of a ``recurrent=torch`` tokenizer of ``config``; a ValueError for
    another layer, a KeyError for a missing weight."""
    if config.recurrent != "torch":
        raise ValueError("only the recurrent=torch layer is exported")
    hidden = config.hidden
    order = np.r_[0 : 2 * hidden, 3 * hidden : 4 * hidden, 2 * hidden : 3 * hidden]  # torch's i, f, g, o -> i, f, o, g
    layers = []
    for layer in range(config.layers):
        names = [f"l{layer}", f"l{layer}_reverse"]
        w_ih = np.stack([plain(state[f"rnn.weight_ih_{n}"]).T for n in names])
        w_hh = np.stack([plain(state[f"rnn.weight_hh_{n}"]).T for n in names])
        bias = np.stack([(plain(state[f"rnn.bias_ih_{n}"]) + plain(state[f"rnn.bias_hh_{n}"]))[None] for n in names])
        layers.append(tuple(np.ascontiguousarray(w[..., order]) for w in (w_ih, w_hh, bias)))
    return TokenizerArrays(plain(state["char_embedding.weight"]), plain(state["category_embedding.weight"]), layers,
                           np.ascontiguousarray(plain(state["output.weight"]).T), plain(state["output.bias"]))
