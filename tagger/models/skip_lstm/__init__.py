"""The deep stacked BiLSTM tagger with gated skip connections and shortcut blocks (Wu, Zhang &
Zong 2016, 2017): the model, its config and its presets."""

from tagger.models.skip_lstm.config import TaggerConfig
from tagger.models.skip_lstm.model import RARE, SkipLSTMTagger, TaggerBatch
from tagger.models.skip_lstm.presets import PRESETS

__all__ = ["PRESETS", "RARE", "SkipLSTMTagger", "TaggerBatch", "TaggerConfig"]
