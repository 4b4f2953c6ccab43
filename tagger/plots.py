"""Pictures, with matplotlib (the optional ``plot`` extra: ``pip install 'tagger[plot]'``)."""

from __future__ import annotations

import importlib.util
import os
from typing import Any, Callable

import torch

from tagger.errors import TaggerError

Attention = tuple[list[str], list[str], torch.Tensor]


def attention_drawer(model: Any) -> Callable[[Attention, str | os.PathLike], None]:
    """:func:`draw_attention`, once it is known that ``model`` has attention and matplotlib is
    installed (a one-line error otherwise, before anything is tagged)."""
    if not model.has_attention:
        raise TaggerError(f"--show-attention: the {model.name} model has no attention to show")
    if importlib.util.find_spec("matplotlib") is None:
        raise TaggerError("--show-attention needs matplotlib: pip install 'tagger[plot]'")
    return draw_attention


def draw_attention(attention: Attention, path: str | os.PathLike) -> None:
    """Draw the attention matrix (one column per emitted symbol, one row per input word, as in
    Vinyals et al.'s Figure 4) into the picture file ``path`` (its extension picks the format)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    words, symbols, matrix = attention
    weights = matrix.float().numpy().T  # [words, symbols]
    width = max(4.0, 0.28 * len(symbols) + 1.5)
    height = max(3.0, 0.28 * len(words) + 1.5)
    figure, axes = plt.subplots(figsize=(width, height))
    axes.imshow(weights, cmap="Greys", aspect="auto", vmin=0.0, vmax=1.0)
    axes.set_xticks(range(len(symbols)), symbols, rotation=90, fontsize=8)
    axes.set_yticks(range(len(words)), words, fontsize=8)
    axes.set_xlabel("output symbol")
    axes.set_ylabel("input word (as the encoder reads it)")
    figure.tight_layout()
    try:
        figure.savefig(path, dpi=120)
    except (OSError, ValueError) as e:
        raise TaggerError(f"cannot write the picture: {e}", os.fspath(path)) from None
    finally:
        plt.close(figure)
