"""Sentence records, vocabularies and batching."""

from tagger.corpus.records import Sentence
from tagger.corpus.vocab import Vocab

__all__ = ["Sentence", "Vocab"]
