"""Running ``tagger`` from tests: as a real process, or in this process through click's runner.

A real process costs an interpreter start and a torch import (1-2 s); use it where the test is
about the process itself (exit status, what reaches the real stderr/stdout, signals, pipes), and
:func:`invoke` elsewhere. Both run from the repository root, so relative paths such as
``data/sample.conllu`` mean the same in either.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from click.testing import CliRunner, Result

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"

#: A tiny tagger, one thread: trains on the samples in a second or two.
SMALL = ["--set", "layers=2", "--set", "hidden=16", "--set", "word_dim=16", "--threads", "1"]
#: A tiny parser, one thread, three epochs.
FAST = ["--max-epochs", "3", "--threads", "1", "--quiet", "--json", "--set", "hidden=32", "--set", "word_dim=16",
        "--set", "tag_dim=16", "--set", "label_dim=16", "--set", "precompute=100"]


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """``python -m tagger ARGS`` as a real process, one thread, from the repository root."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "tagger", *args], input=stdin, capture_output=True, env=env, cwd=ROOT,
                          timeout=300)


def first_blocks(path: Path, n: int) -> str:
    """The first ``n`` sentences of a CoNLL-U file, as text."""
    out, block = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            block.append(line)
            if not line.strip():
                out.append("".join(block))
                block = []
                if len(out) == n:
                    break
    return "".join(out)


@contextmanager
def _in_root() -> Iterator[None]:
    before = os.getcwd()
    os.chdir(ROOT)
    try:
        yield
    finally:
        os.chdir(before)


def invoke(*args: str | os.PathLike, stdin: bytes | str | None = None) -> Result:
    """``tagger ARGS`` in this process (click's runner), from the repository root."""
    from tagger.cli.main import cli

    with _in_root():
        return CliRunner().invoke(cli, [str(a) for a in args], input=stdin, prog_name="tagger")


def assert_one_line_error(done: subprocess.CompletedProcess | Result, *fragments: str) -> None:
    """A non-zero exit with exactly one ``error: ...`` line on stderr holding ``fragments``, and no
    traceback. For an in-process run (a click ``Result``) an uncaught exception is not printed but
    kept as ``result.exception``: the run must have ended by ``sys.exit`` instead."""
    if isinstance(done, subprocess.CompletedProcess):
        code, err = done.returncode, done.stderr.decode()
    else:
        code, err = done.exit_code, done.stderr
        assert isinstance(done.exception, SystemExit), repr(done.exception)
    assert code != 0, err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for fragment in fragments:
        assert fragment in lines[0], err


def reference_lstm(gx, w_h, k, mask, round_h=lambda h: h):
    """A bidirectional LSTM layer in numpy (float64), the C kernels' reference: ``gx`` [2, T, B, G]
    in scan order, ``w_h`` [2, H, G], the shortcut ``k`` [T, 2, B, H] or None, ``mask`` [P, 2, B]
    or None; ``round_h`` rounds h before each product (bf16 for those kernels). The outputs
    [T, 2, B, H] and in sentence order [T·B, 2H]."""
    import numpy as np

    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    _, steps, batch, width = gx.shape
    hidden = w_h.shape[1]
    nsig = width // hidden - 1
    out = np.zeros((steps, 2, batch, hidden))
    xs = np.zeros((steps * batch, 2 * hidden))
    for d in range(2):
        h, c = np.zeros((batch, hidden)), np.zeros((batch, hidden))
        for t in range(steps):
            z = gx[d, t] + round_h(h) @ w_h[d]
            i, f, o = (sigmoid(z[:, j * hidden : (j + 1) * hidden]) for j in range(3))
            c = f * c + i * np.tanh(z[:, nsig * hidden :])
            h = o * np.tanh(c)
            if k is not None:
                h = h + sigmoid(z[:, (nsig - 1) * hidden : nsig * hidden]) * k[t, d]
            if mask is not None and t < len(mask):
                c, h = c * mask[t, d][:, None], h * mask[t, d][:, None]
            out[t, d] = h
            at = t if d == 0 else steps - 1 - t
            xs[at * batch : (at + 1) * batch, d * hidden : (d + 1) * hidden] = h
    return out, xs
