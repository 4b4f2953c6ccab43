"""Reading transition-parser model files written before the ``nonprojective`` option (issue 18).

Those parsers were trained on the projective trees only (the non-projective ones skipped), so a
config without the key reads as ``nonprojective="skip"``: the option's default, ``lift``, is for
new models. Decoding does not depend on it (only on whether the label vocabulary holds lifted
labels, which such files never do), so they parse exactly as before; the key says how they were
trained, and what resuming or bootstrapping from them continues with.
"""

from __future__ import annotations

from typing import Any

import torch


def upgrade(config: dict[str, Any], state_dict: dict[str, torch.Tensor], version: int
            ) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """``(config, state_dict)`` of a file of any format as this code reads them."""
    if "nonprojective" not in config:
        config = {**config, "nonprojective": "skip"}
    return config, state_dict
