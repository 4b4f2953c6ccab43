"""The seq2seq LSTM+attention constituency parser (Vinyals et al. 2015, *Grammar as a Foreign
Language*; SPEC §5): the model, its beam search, its config and presets. The linearisation of
trees is torch-free, in :mod:`tagger.transitions.linearise`."""

from tagger.models.seq2seq.config import Seq2seqConfig
from tagger.models.seq2seq.model import Seq2seqParser
from tagger.models.seq2seq.presets import PRESETS

__all__ = ["PRESETS", "Seq2seqConfig", "Seq2seqParser"]
