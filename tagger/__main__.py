"""``python -m tagger``: the command line (:func:`tagger.cli.main`). The one module outside
``tagger/cli/`` that imports it, because starting the CLI is all it does (as the ``tagger``
script does)."""

from tagger.cli import main

main()
