"""The one training loop, shared by every model.

It calls only the model interface (``collate``, ``forward``, ``loss``, ``decode``, ``metric``)
and keeps everything a resumed run needs in :class:`TrainState`: the batch order of an epoch is
a function of (seed, epoch), so a checkpoint at any batch boundary restarts bit for bit.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import torch

from tagger.config import TrainingConfig
from tagger.corpus.batching import bucket_batches
from tagger.corpus.records import Sentence
from tagger.inference import predict
from tagger.training import checkpoint


class Reporter(Protocol):
    def epoch_start(self, epoch: int, batches: int) -> None: ...
    def step(self, loss: float, tokens: int) -> None: ...
    def epoch_end(self, record: dict[str, Any]) -> None: ...


@dataclass
class RunOptions:
    """How one run is driven (not part of the model: changing these keeps results comparable)."""

    seed: int = 1
    device: str = "cpu"
    max_minutes: float | None = None
    checkpoint_dir: Path | None = None
    checkpoint_minutes: float | None = None
    resume: bool = False
    eval_max_tokens: int = 8192


@dataclass
class TrainState:
    epoch: int = 1
    batch: int = 0  # batches of ``epoch`` already done
    lr: float = 0.0
    best_score: float = -1.0
    best_epoch: int = 0
    prev_error: float | None = None
    elapsed: float = 0.0  # seconds of training before this process
    tokens: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)


def make_optimizer(params, config: TrainingConfig) -> torch.optim.Optimizer:
    if config.optimizer == "sgd":
        return torch.optim.SGD(params, lr=config.lr, momentum=config.momentum, weight_decay=config.weight_decay)
    if config.optimizer == "adam":
        return torch.optim.Adam(params, lr=config.lr, weight_decay=config.weight_decay)
    raise ValueError(f"optimizer must be sgd or adam, not {config.optimizer!r}")


def evaluate(model: torch.nn.Module, sentences: Sequence[Sentence], max_tokens: int = 8192):
    """The model's metric on gold ``sentences`` (a metric object with ``.score``)."""
    was_training = model.training
    model.eval()
    try:
        return model.metric(sentences, predict(model, sentences, max_tokens))
    finally:
        model.train(was_training)


def fit(
    model: torch.nn.Module,
    train: Sequence[Sentence],
    dev: Sequence[Sentence],
    config: TrainingConfig,
    options: RunOptions,
    save_best: Callable[[dict[str, Any]], None],
    reporter: Reporter,
    net: torch.nn.Module | None = None,
    shard: tuple[int, int] = (0, 1),
) -> TrainState:
    """Train ``model`` on ``train``, keep the best on ``dev`` through ``save_best(meta)``.

    ``net`` is what the forward pass goes through (a DistributedDataParallel wrapper, or the
    model itself); ``shard = (rank, world)`` gives each process its share of every epoch's batches.
    """
    net = net or model
    device = torch.device(options.device)
    optimizer = make_optimizer(model.parameters(), config)
    state = TrainState(lr=config.lr)
    if options.resume and options.checkpoint_dir is not None:
        loaded = checkpoint.load_latest(options.checkpoint_dir, model, optimizer)
        if loaded is not None:
            state = TrainState(**loaded)
    started = time.monotonic() - state.elapsed
    last_checkpoint = time.monotonic()
    lengths = [len(s) for s in train]
    rank, world = shard

    def save_checkpoint() -> None:
        if options.checkpoint_dir is not None and rank == 0:
            state.elapsed = time.monotonic() - started
            checkpoint.save(options.checkpoint_dir, model, optimizer, dataclasses.asdict(state))

    out_of_time = lambda: options.max_minutes is not None and time.monotonic() - started > 60 * options.max_minutes  # noqa: E731
    stopped = False
    while state.epoch <= config.max_epochs and not stopped:
        batches = bucket_batches(lengths, config.batch_size, random.Random(options.seed * 100_003 + state.epoch))
        batches = batches[rank::world]
        reporter.epoch_start(state.epoch, len(batches))
        model.train()
        epoch_loss, epoch_tokens = 0.0, 0
        try:
            while state.batch < len(batches):
                batch = model.collate([train[i] for i in batches[state.batch]]).to(device)
                loss = model.loss(net(batch), batch)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if config.clip > 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
                optimizer.step()
                state.batch += 1
                tokens = batch.n_tokens
                state.tokens += tokens
                epoch_loss += loss.item() * tokens
                epoch_tokens += tokens
                reporter.step(loss.item(), tokens)
                if options.checkpoint_minutes and time.monotonic() - last_checkpoint > 60 * options.checkpoint_minutes:
                    save_checkpoint()
                    last_checkpoint = time.monotonic()
                if out_of_time():
                    stopped = True
                    break
        except KeyboardInterrupt:
            save_checkpoint()
            raise
        metric = evaluate(model, dev, options.eval_max_tokens)
        error = 1.0 - metric.score
        record = {"epoch": state.epoch, "loss": epoch_loss / max(1, epoch_tokens), "dev": metric.score, "lr": state.lr,
                  "complete": state.batch >= len(batches), "seconds": round(time.monotonic() - started, 1)}
        if metric.score > state.best_score:
            state.best_score, state.best_epoch = metric.score, state.epoch
            if rank == 0:
                save_best({"dev_score": metric.score, "epoch": state.epoch, "history": state.history + [record]})
            record["best"] = True
        # The papers' rule: halve lr when the relative change of the dev error is small.
        if config.lr_halving and state.prev_error and abs(state.prev_error - error) / state.prev_error <= config.halve_threshold and state.lr >= config.min_lr:
            state.lr /= 2
            for group in optimizer.param_groups:
                group["lr"] = state.lr
        state.prev_error = error
        state.history.append(record)
        reporter.epoch_end(record)
        if record["complete"]:
            state.epoch += 1
            state.batch = 0
        save_checkpoint()
        if config.patience and state.epoch - 1 - state.best_epoch >= config.patience:
            break
        stopped = stopped or out_of_time()
    state.elapsed = time.monotonic() - started
    return state


def tokens_per_second(state: TrainState) -> float:
    return state.tokens / state.elapsed if state.elapsed > 0 else math.nan
