"""The character-level tokeniser and sentence splitter: the model, its config and its presets."""

from tagger.models.tokenizer.config import TokenizerConfig
from tagger.models.tokenizer.model import Tokenizer, TokenizerBatch
from tagger.models.tokenizer.presets import PRESETS

__all__ = ["PRESETS", "Tokenizer", "TokenizerBatch", "TokenizerConfig"]
