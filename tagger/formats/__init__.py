"""Readers and writers, one module per format (being filled in; see base.py for shared helpers)."""
