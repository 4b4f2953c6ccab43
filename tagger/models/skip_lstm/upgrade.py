"""Reading skip-LSTM model files of format 2 and older (before the ablation zoo's layer).

Two layouts changed in format 3, both for configs no preset used:

* ``skip=gates`` with a recurrent gate (``gate=recurrent``, the config default, or ``hidden``):
  the layer had a g block in ``w_x``/``w_h``/``bias`` (and ``u_k``) that the output never read
  (the shortcut enters every pre-activation, with no gate). Dropped: the same outputs.
* ``gate=hidden``: γ read the input too (``w_x`` as wide as ``w_h``), ``σ(W_x,g x + W_h,g h_{t-1} + b)``; format 3's
  ``hidden`` has no input part. Such a file becomes ``gate=recurrent`` with ``U = 0``, which
  computes exactly the old γ.

Torch-free apart from the tensors it slices; plain functions over the archive's plain data.
"""

from __future__ import annotations

from typing import Any

import torch


def upgrade(config: dict[str, Any], state_dict: dict[str, torch.Tensor], version: int
            ) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """``(config, state_dict)`` of a format-``version`` file as format 3 reads them."""
    if version >= 3:
        return config, state_dict
    gate, skip = config.get("gate", "recurrent"), config.get("skip", "output")
    hidden = int(config.get("hidden", 128))
    lstm = config.get("cell", "lstm") == "lstm"
    with_g = (5 if lstm else 4) * hidden  # width of a layer's pre-activation with a recurrent g block
    g_at = (3 if lstm else 2) * hidden  # where that block starts
    state = dict(state_dict)
    if skip == "gates" and gate in ("recurrent", "hidden"):
        for key in [k for k in state if k.startswith("rnn.layers.") and k.endswith(".w_h")]:
            layer = key[: -len("w_h")]
            if state[key].shape[-1] != with_g:
                continue
            for name in ("w_x", "w_h", "bias"):
                weight = state[layer + name]
                state[layer + name] = torch.cat([weight[..., :g_at], weight[..., g_at + hidden :]], -1)
            state.pop(layer + "u_k", None)
    elif gate == "hidden":
        gated = [k[: -len("w_h")] for k in state
                 if k.startswith("rnn.layers.") and k.endswith(".w_h") and state[k].shape[-1] == with_g]
        if gated and all(state[layer + "w_x"].shape[-1] == with_g for layer in gated):  # γ read the input
            config = {**config, "gate": "recurrent"}
            for layer in gated:
                state[layer + "u_k"] = state[layer + "w_h"].new_zeros(2, hidden, hidden)
    return config, state
