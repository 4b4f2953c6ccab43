"""The deep stacked BiLSTM tagger with gated skip connections and shortcut blocks (Wu, Zhang &
Zong 2016, 2017): the model and its presets."""

from tagger.models.skip_lstm.model import PRESETS, RARE, SkipLSTMTagger, TaggerBatch, TaggerConfig

__all__ = ["PRESETS", "RARE", "SkipLSTMTagger", "TaggerBatch", "TaggerConfig"]
