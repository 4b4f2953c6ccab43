"""The command line. :func:`main` is the ``tagger`` script and ``python -m tagger``: a plain
``tagger tag --model FILE ...`` runs without importing click (:mod:`tagger.cli.quick`), the rest
through the click group (:mod:`tagger.cli.main`)."""

from __future__ import annotations

import sys


def main() -> None:
    from tagger.cli import quick

    if quick.run(sys.argv[1:]):
        return
    from tagger.cli.main import main as click_main

    click_main()
