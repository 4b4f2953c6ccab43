"""Shared test fixtures: the real corpora, and small models trained once per test session.

The models train in this process (no interpreter start) into a session temporary folder; tests
that need one ask for the fixture and must not change the file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# One torch (OpenMP) thread, for this process and the processes it starts, unless the environment
# says otherwise. The tests' tensors are tiny, and where other work shares the cores the threads of
# every operation wait for each other: on 2 busy cores a 10 s training test took 450 s with 2.
# Set here, before any test module imports torch.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
# The tables' widths are the commands' own (a piped table is not wrapped), not the environment's:
# pytest-xdist's workers, like some shells, export COLUMNS=80, which rich (rightly) obeys.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)

from tests.helpers import FAST, SMALL, first_blocks, invoke  # noqa: E402

#: The real corpora (../shared/data), read in place; tests that need them skip when absent.
SHARED = Path(__file__).parents[1].parent / "shared" / "data"
EWT = SHARED / "ud-english-ewt"


@pytest.fixture
def shared_data() -> Path:
    """Path of ``shared/data``; skips the test if it is not there."""
    if not SHARED.is_dir():
        pytest.skip(f"shared data not found at {SHARED}")
    return SHARED


@pytest.fixture
def one_thread():
    """Torch on one thread for the test, then as it was: small per-step tensor ops avoid OpenMP
    barriers on shared, busy machines, and a CLI run in this process (``--threads``) may have
    changed the count."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def train_in_process(*args: str) -> dict:
    """``tagger train ARGS --json`` through click's runner; returns the summary."""
    done = invoke("train", *args)
    assert done.exit_code == 0, (done.stderr, done.exception)
    return json.loads(done.stdout)


@pytest.fixture(scope="session")
def sample_tagger(tmp_path_factory) -> Path:
    """A tiny POS tagger (2 layers of 16) trained through ``tagger train`` on data/sample.conllu
    (dev = train) for 40 epochs; it scores over 0.8 on that data."""
    path = tmp_path_factory.mktemp("sample-tagger") / "sample.tagger"
    summary = train_in_process("--task", "pos", "--train", "data/sample.conllu", "--dev", "data/sample.conllu",
                               "--out", str(path), "--max-epochs", "40", "--patience", "0", "--set", "lr=0.01",
                               "--set", "lr_halving=false", "--quiet", "--json", *SMALL)
    assert summary["best_dev"] > 0.8 and summary["epochs"] >= 1
    return path


@pytest.fixture(scope="session")
def ffn_parser(tmp_path_factory) -> Path:
    """A tiny feed-forward transition parser trained through ``tagger train`` on data/sample.conllu
    for 3 epochs (trees, not good ones)."""
    path = tmp_path_factory.mktemp("ffn-parser") / "ffn.model"
    train_in_process("--task", "dep", "--train", "data/sample.conllu", "--dev", "data/sample.conllu", "--out", str(path),
                     *FAST)
    return path


@pytest.fixture(scope="session")
def ewt_sample(tmp_path_factory) -> tuple[Path, Path]:
    """(train, dev): the first 400 sentences of UD English EWT train and the first 150 of dev."""
    if not (EWT / "en_ewt-ud-train.conllu").exists():
        pytest.skip("needs ../shared/data")
    folder = tmp_path_factory.mktemp("ewt")
    train, dev = folder / "train.conllu", folder / "dev.conllu"
    train.write_text(first_blocks(EWT / "en_ewt-ud-train.conllu", 400), encoding="utf-8")
    dev.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 150), encoding="utf-8")
    return train, dev


@dataclass
class Trained:
    """A model trained by a fixture: its file, and what training reported."""

    path: Path
    best_score: float
    history: list[dict] = field(default_factory=list)


@pytest.fixture(scope="session")
def ewt_tagger(ewt_sample, tmp_path_factory) -> Trained:
    """A small POS tagger (``fast`` with 2 layers of 64, lr 0.005) fitted on ``ewt_sample`` for 4
    epochs, seed 1, with its per-epoch history; the best model on dev is in ``path``. Measured
    (seeds 1, 2): dev 0.832-0.834, the last epoch's loss 0.28 of the first's."""
    import torch

    from tagger import formats, model_file
    from tagger.config import build_configs
    from tagger.models.skip_lstm import PRESETS, SkipLSTMTagger
    from tagger.training.trainer import RunOptions, fit

    train, dev = (list(formats.read(path)) for path in ewt_sample)
    overrides = ["layers=2", "hidden=64", "max_epochs=4", "batch_size=16", "lr=0.005"]
    config, training = build_configs(SkipLSTMTagger, PRESETS, "fast", overrides=overrides)
    torch.manual_seed(1)
    model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, train))
    path = tmp_path_factory.mktemp("ewt-tagger") / "ewt.tagger"
    history: list[dict] = []

    class Record:
        def epoch_start(self, epoch, batches): pass
        def step(self, loss, tokens): pass
        def epoch_end(self, record): history.append(record)

    state = fit(model, train, dev, training, RunOptions(seed=1), lambda meta: model_file.save(path, model, meta, training),
                Record())
    return Trained(path, state.best_score, history)
