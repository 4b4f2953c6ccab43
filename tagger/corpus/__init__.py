"""Sentence records (with their constituency trees), vocabularies and batching."""

from tagger.corpus.records import Sentence
from tagger.corpus.trees import Tree
from tagger.corpus.vocab import Vocab

__all__ = ["Sentence", "Tree", "Vocab"]
