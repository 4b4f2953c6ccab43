"""The tokeniser's model config: the network's hyper-parameters only (training ones are
:class:`tagger.config.TrainingConfig`; named combinations of both are in ``presets.py``)."""

from __future__ import annotations

from dataclasses import dataclass

#: The recurrent layer (``recurrent``): ``torch``, ``torch.nn.LSTM`` (one fused kernel per
#: layer: 1.4-1.6× faster on one CPU thread at these sizes, docs/tokenizer.md); ``project``, the
#: project's own scan (:class:`tagger.modules.recurrent.StackedBiRNN` with a plain LSTM cell).
RECURRENT = ("torch", "project")


@dataclass
class TokenizerConfig:
    segment: int = 240  # characters labelled per window
    context: int = 16  # characters read on each side of a window besides those it labels
    char_dim: int = 32
    category_dim: int = 8  # the embedding of a character's Unicode category (Lu, Ll, Lo, Nd, Po, Zs, ...)
    min_char_count: int = 2  # characters seen fewer times in training are one unknown character
    char_dropout: float = 0.02  # training: a character read as unknown (its category stays) with this probability
    hidden: int = 32
    layers: int = 1
    recurrent: str = "torch"  # RECURRENT
    dropout: float = 0.1  # on the input and on the recurrent output

    def __post_init__(self) -> None:
        if self.segment < 1 or self.context < 0:
            raise ValueError("segment must be ≥ 1 and context ≥ 0")
        if self.recurrent not in RECURRENT:
            raise ValueError(f"recurrent must be one of {', '.join(RECURRENT)}, not {self.recurrent!r}")
        if not 1 <= self.layers <= 8 or self.hidden < 1 or self.char_dim < 1:
            raise ValueError("layers must be 1 to 8, hidden and char_dim positive")

    @property
    def window(self) -> int:
        """Characters a window reads: its ``segment`` and ``context`` on each side."""
        return self.segment + 2 * self.context
