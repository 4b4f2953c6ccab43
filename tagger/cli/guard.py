"""How every command ends, without click: a :class:`~tagger.errors.TaggerError` is one line on
stderr and exit status 1, and so is a failed write to stdout (a full disk: ``error: stdout:
cannot write: ...``); a closed stdout (``tagger tag ... | head``) ends quietly, with status 0; an
interrupt is ``interrupted`` and status 130. The click group (:mod:`tagger.cli.main`) and the
quick route of ``tagger tag`` (:mod:`tagger.cli.quick`) both run under :func:`guarded`."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator

from tagger.errors import TaggerError


@contextmanager
def guarded() -> Iterator[None]:
    """Run the block with ``sys.stdout`` guarded (:class:`~tagger.formats.base.GuardedStream`: a
    failed write is a :class:`TaggerError` naming ``stdout``) and flushed at its end, so that a
    full disk is reported here and not by the interpreter's last flush."""
    from tagger.formats.base import GuardedStream  # (every command imports it: not for --help)

    stdout = sys.stdout
    sys.stdout = guarded_stdout = GuardedStream(stdout, "stdout")
    try:
        yield
        guarded_stdout.flush()
    except TaggerError as e:
        if guarded_stdout.failed:
            _drop_stdout()
        print(f"error: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
    except BrokenPipeError:
        _drop_stdout()
        sys.exit(0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        sys.exit(130)
    finally:
        if sys.stdout is guarded_stdout:
            sys.stdout = stdout


def _drop_stdout() -> None:
    """Point stdout at devnull, so that the interpreter's final flush of what could not be
    written does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
