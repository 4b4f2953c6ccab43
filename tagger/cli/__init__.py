"""The command line. :func:`main` is the ``tagger`` script and ``python -m tagger``: a plain
``tagger tag [--model FILE ...] ...`` runs without importing click (:mod:`tagger.cli.quick`), the rest
through the click group (:mod:`tagger.cli.main`)."""

from __future__ import annotations

import os
import sys


def main() -> None:
    try:
        from tagger.cli import quick

        if quick.run(sys.argv[1:]):
            _end()
            return
        from tagger.cli.main import main as click_main
    except KeyboardInterrupt:  # Ctrl-C while the modules load, before the commands' own guard
        print("interrupted", file=sys.stderr, flush=True)
        sys.exit(130)
    click_main()


def _end() -> None:
    """End a finished ``tagger tag`` without the interpreter's teardown of every module (8-10 ms,
    a tenth of a small text's process), as mypy ends its runs: what was written is flushed first,
    and nothing of ours waits for the exit (the output file is in place, the threads are done).
    Where the flush fails, the normal exit reports it."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(0)
