"""Moved to :mod:`tagger.progress` (below the layers that report progress: the runtimes,
:mod:`tagger.tagging`; docs/architecture.md); the names stay importable from here."""

from tagger.progress import (  # noqa: F401
    InputMeter, RichReporter, TagProgress, advance, counted, make_console, plural, tagging_progress)
