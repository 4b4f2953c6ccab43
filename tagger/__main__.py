"""``python -m tagger``: the command line. The one module outside ``tagger/cli/`` that imports
it, because starting the CLI is all it does (as the ``tagger`` script does)."""

from tagger.cli.main import main

main()
