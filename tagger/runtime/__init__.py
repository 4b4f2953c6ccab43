"""Trained models applied without torch, for small inputs: a model file read as plain data
(:func:`tagger.tokenization.runtime.read_archive`) and the network's forward pass in numpy.
Importing torch costs 1.5-3 seconds, longer than tagging a few sentences; ``tagger tag`` takes
these paths first and falls back to torch for anything they do not run.

- :mod:`tagger.runtime.skip_lstm`: the skip-LSTM tagger (presets ``fast`` and ``small``).
- :mod:`tagger.tokenization.runtime`: the tokenizer.
"""
