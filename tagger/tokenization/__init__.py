"""Tokenisation and sentence splitting of raw text, torch-free: what the ``tokenizer`` model
family (``tagger/models/tokenizer/``) learns from and writes.

- :mod:`.labels`: one label per character (inside a token, end of a token, of a sentence, of a
  multiword token), the model's view of the text (:func:`~.labels.normalise`), and the labelled
  text of CoNLL-U sentences (their ``# text``, ``SpaceAfter=No``, ``# newpar``/``# newdoc``).
- :mod:`.segment`: text + labels -> sentences of tokens, and those as CoNLL-U blocks whose
  tokens and spacing give back the text exactly.
- :mod:`.multiword`: the multiword-token lexicon learned from training, with suffix rules for
  unseen forms.
- :mod:`.stream`: raw text read in bounded pieces and tokenised piece by piece, carrying the
  unfinished last sentence over (flat memory on any input).

docs/tokenizer.md describes the whole.
"""
