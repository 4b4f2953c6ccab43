"""The training schedule on any corpus size (issue 35): patience and lr halving count epochs of at
least ``min_epoch_updates`` updates, so a small corpus is not given up on after a few dozen
updates; a large one's schedule is the papers' as before."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace

import torch

from tagger.config import TrainingConfig
from tagger.training.control import Schedule
from tests.helpers import DATA, SMALL, invoke


@dataclass
class State:
    epoch: int = 1
    lr: float = 0.1
    best_epoch: int = 1
    prev_error: float | None = None


def optimizer() -> torch.optim.Optimizer:
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)


def test_a_pass_of_few_batches_is_part_of_a_longer_epoch():
    config = TrainingConfig(patience=3, min_epoch_updates=250)
    assert Schedule(config, 392).passes == 1 and Schedule(config, 250).passes == 1  # EWT: as before
    small = Schedule(config, 16)  # 500 sentences of 32
    assert small.passes == 16
    state = State(epoch=49, best_epoch=1)  # pass 48 done (the state names the next), the best at pass 1
    assert not small.exhausted(state)  # 47 passes without better: not yet 3 epochs of 250 updates
    state.epoch += 1
    assert small.exhausted(state)  # 48 = 3 × 16
    assert Schedule(replace(config, min_epoch_updates=0), 16).passes == 1  # 0: every pass is an epoch
    assert Schedule(config).passes == 1  # no batches known


def test_halving_looks_at_the_dev_error_once_an_epoch():
    config = TrainingConfig(min_epoch_updates=100, halve_threshold=0.01, min_lr=0.0)
    schedule, state, opt = Schedule(config, 50), State(), optimizer()  # two passes an epoch
    for epoch, error in ((1, 0.30), (2, 0.20), (3, 0.199), (4, 0.199)):
        state.epoch = epoch
        schedule.after_epoch(state, error, opt)
    # passes 2 and 4 end epochs: 0.20 then 0.199 is a change of 0.5 % ≤ 1 %: halved once
    assert state.lr == 0.05 and opt.param_groups[0]["lr"] == 0.05 and state.prev_error == 0.199


def test_the_summary_counts_the_updates():
    done = invoke("train", "--train", DATA / "sample.conllu", "--dev", DATA / "heldout.conllu", "--out", "/dev/null",
                  "--max-epochs", 3, "--batch-size", 4, "--json", "--quiet", *SMALL)
    assert done.exit_code == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["epochs"] == 3 and summary["updates"] == 6  # 8 sentences, 4 a batch


def test_batches_by_tokens_hold_every_sentence_once_within_the_budget():
    from tagger.training.trainer import epoch_batches

    rng = random.Random(4)
    lengths = [rng.randint(1, 60) for _ in range(200)]
    batches = epoch_batches(lengths, 32, seed=1, epoch=1, batch_tokens=300)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    assert all(len(b) == 1 or len(b) * max(lengths[i] for i in b) <= 300 for b in batches)
    assert max(map(len, batches)) > 16 and len(batches) != len(epoch_batches(lengths, 32, seed=1, epoch=1))
    assert batches == epoch_batches(lengths, 32, seed=1, epoch=1, batch_tokens=300)  # a resumed run's batches


def test_a_run_that_ends_at_max_epochs_still_rising_says_so():
    from tagger.training.run import still_rising
    from tagger.training.trainer import TrainState

    state = TrainState(best_epoch=3, steps=30, history=[{"epoch": e} for e in (1, 2, 3)])
    assert "still rising in the last epoch, 3 (30 updates)" in still_rising(state, 3)
    assert still_rising(state, 5) is None  # stopped otherwise (patience, a time budget)
    assert still_rising(TrainState(best_epoch=2, history=[{"epoch": e} for e in (1, 2, 3)]), 3) is None
    # best in the last fifth of 30 epochs, not the last (a 30-sentence parser: 120 updates, LAS 2.5)
    late = TrainState(best_epoch=26, steps=120, history=[{"epoch": e} for e in range(1, 31)])
    assert "near the end (best at epoch 26 of 30, 120 updates in all)" in still_rising(late, 30)
    assert still_rising(TrainState(best_epoch=24, history=late.history), 30) is None
