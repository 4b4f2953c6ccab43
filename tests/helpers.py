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


def check_upper_scan(kernel, hidden: int, shortcut: bool, batch: int, i8: bool) -> None:
    """An upper layer's input product (and shortcut term) inside the scan (``kernels.scan_upper``)
    gives the same floats, bit for bit, as the whole batch's product written out, then the scan
    reading it in sentence order: by ``kernel``, int8 (``i8``, weights no wider than it takes) or
    float32; and a left side of the other kind is refused."""
    import numpy as np
    import pytest

    from tagger.modules import packing
    from tagger.runtime import kernels

    rng = np.random.default_rng(hidden + batch)
    steps, width = 5, (5 if shortcut else 4) * hidden
    pack = {"i8": packing.scale_for(1.0), "top": kernel.weight_max} if i8 else {"f32": True}
    left = (lambda x: packing.codes(x, packing.scale_for(1.0))) if i8 else (lambda x: x)  # noqa: E731
    below = left(np.tanh(rng.standard_normal((steps * batch, 2 * hidden))).astype(np.float32))
    w_x = (rng.standard_normal((2, 2 * hidden, width)) * 0.3).astype(np.float32)
    bias = (rng.standard_normal((2, 1, width)) * 0.3).astype(np.float32)
    packed_x, bias_x, block = packing.input_projection(w_x, bias, **pack)
    packed_h = packing.recurrent((rng.standard_normal((2, hidden, width)) * 0.3).astype(np.float32), **pack)
    src = packed_u = k = None
    if shortcut:
        split = np.zeros((2, 2 * hidden, hidden), dtype=np.float32)
        split[0, :hidden], split[1, hidden:] = rng.standard_normal((2, hidden, hidden)) * 0.3
        packed_u = packing.directions(split, packing.up(hidden, 16), **pack)
        src = left(np.tanh(rng.standard_normal((steps * batch, 2 * hidden))).astype(np.float32))
        k = np.tanh(rng.standard_normal((steps, 2, batch, hidden))).astype(np.float32)
    lengths = rng.integers(1, steps + 1, batch)
    t = np.arange(2)[:, None]
    mask = np.ascontiguousarray(np.stack([t < lengths, steps - 1 - t < lengths], 1), dtype=np.float32)
    gx = np.empty((steps * batch, 2 * block), dtype=np.float32)
    kernels.product(kernel, below, packed_x, gx, bias_x)
    if shortcut:
        kernels.product(kernel, src, packed_u, gx, block=packing.up(hidden, 16), stride=block, offset=3 * hidden,
                        count=hidden, add=True)
    out = np.full((steps, 2, batch, hidden), np.nan, np.float32)
    xs = np.zeros((steps * batch, 2 * hidden), np.uint8 if i8 else np.float32)
    kernels.scan(kernel, gx, packed_h, hidden, k, mask, out, xs, steps, batch, block)
    out2, xs2 = np.full_like(out, np.nan), np.zeros_like(xs)
    kernels.scan_upper(kernel, below, packed_x, bias_x, src, packed_u, packed_h, hidden, k, mask, out2, xs2, steps,
                       batch)
    np.testing.assert_array_equal(out2, out)
    np.testing.assert_array_equal(xs2, xs)
    other = below.astype(np.float32 if i8 else np.uint8)
    with pytest.raises(ValueError):  # the other kind of left side
        kernels.scan_upper(kernel, other, packed_x, bias_x, src, packed_u, packed_h, hidden, k, mask, out2, xs2,
                           steps, batch)
    if shortcut:
        with pytest.raises(ValueError):  # a shortcut's outputs without its U
            kernels.scan_upper(kernel, below, packed_x, bias_x, below, None, packed_h, hidden, k, mask, out2, xs2,
                               steps, batch)
