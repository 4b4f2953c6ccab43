"""The arc-standard transition parser with a feed-forward network and LSTM/GRU/Elman versions
bootstrapped from it (Elkaref & Bohnet 2017): the model, its config and its presets."""

from tagger.models.transition_parser.config import ParserConfig
from tagger.models.transition_parser.model import LABEL_OFFSET, NULL_ID, TransitionParser
from tagger.models.transition_parser.presets import PRESETS

__all__ = ["LABEL_OFFSET", "NULL_ID", "PRESETS", "ParserConfig", "TransitionParser"]
