"""The tokeniser's model config: the network's hyper-parameters only (training ones are
:class:`tagger.config.TrainingConfig`; named combinations of both are in ``presets.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from tagger.config import check_ranges, ranged

#: The recurrent layer (``recurrent``): ``torch``, ``torch.nn.LSTM`` (one fused kernel per
#: layer: 1.4-1.6× faster on one CPU thread at these sizes, docs/tokenizer.md); ``project``, the
#: project's own scan (:class:`tagger.modules.recurrent.StackedBiRNN` with a plain LSTM cell).
RECURRENT = ("torch", "project")


@dataclass
class TokenizerConfig:
    segment: int = ranged(240, at_least=1)  # characters labelled per window
    context: int = ranged(16, at_least=0)  # characters read on each side of a window besides those it labels
    char_dim: int = ranged(32, at_least=1)
    category_dim: int = ranged(8, at_least=0)  # the embedding of a character's Unicode category (Lu, Ll, Lo, Nd, Po, Zs, ...)
    # letters and marks of the scripts of tagger.tokenization.labels.SCRIPTS get categories of
    # their own (Lo CJK, Lo HIRAGANA, ...); files written before it read False, as they were trained
    scripts: bool = False
    min_char_count: int = ranged(2, at_least=1)  # characters seen fewer times in training are one unknown character
    char_dropout: float = ranged(0.02, at_least=0, below=1)  # training: a character read as unknown (its category stays) with this probability
    hidden: int = ranged(32, at_least=1)
    layers: int = ranged(1, at_least=1, at_most=8)
    recurrent: str = "torch"  # RECURRENT
    dropout: float = ranged(0.1, at_least=0, below=1)  # on the input and on the recurrent output
    # training: this share of the single spaces before closing punctuation and after opening
    # punctuation left out of the training text (tagger.tokenization.labels.tightened), so that a
    # treebank spacing its punctuation (Vietnamese VTB) also teaches unspaced text; files written
    # before it read 0, as they were trained
    tight_punctuation: float = ranged(0.0, at_least=0, at_most=1)

    def __post_init__(self) -> None:
        check_ranges(self)
        if self.recurrent not in RECURRENT:
            raise ValueError(f"recurrent must be one of {', '.join(RECURRENT)}, not {self.recurrent!r}")

    @property
    def window(self) -> int:
        """Characters a window reads: its ``segment`` and ``context`` on each side."""
        return self.segment + 2 * self.context
