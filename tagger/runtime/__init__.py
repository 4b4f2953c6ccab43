"""Trained models applied without torch, for small inputs: a model file read as plain data
(:func:`tagger.archive.read`), its arrays by the family's exporter (``tagger.models.*.export``) and
the network's forward pass in numpy and C (one LSTM time loop, :mod:`tagger.runtime.scan`).
Importing torch costs 1.5-3 seconds, longer than tagging a few sentences; ``tagger tag`` takes
these paths first and falls back to torch for anything they do not run.

- :mod:`tagger.runtime.skip_lstm`: the skip-LSTM tagger (presets ``fast`` and ``small``).
- :mod:`tagger.runtime.tokenizer`: the tokenizer.
"""
