"""The one training loop, shared by every model.

It calls only the model interface (``collate``, ``forward``, ``loss``, ``decode``, ``metric``)
and keeps everything a resumed run needs in :class:`TrainState`: the batch order of an epoch is
a function of (seed, epoch), so a checkpoint at any batch boundary restarts bit for bit.
Checkpoints (with every process's RNG state) are taken only at batch boundaries: Ctrl-C or
SIGTERM sets a flag that the loop honours after the current update (:class:`StopSignals`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import random
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol, Sequence

import torch

from tagger.config import TrainingConfig
from tagger.corpus.batching import bucket_batches
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.inference import predict
from tagger.training import checkpoint, distributed


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
    metric_name: str = ""  # what the dev score is (``Metric.score_name``: accuracy, LAS (no punct))
    prev_error: float | None = None
    elapsed: float = 0.0  # seconds of training before this process
    tokens: int = 0
    steps: int = 0  # optimizer updates so far (the weight average's warm-up)
    epoch_loss: float = 0.0  # loss × tokens and tokens of ``epoch`` so far (for its record only)
    epoch_tokens: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)


class Interrupted(KeyboardInterrupt):
    """Training stopped by Ctrl-C or SIGTERM at a batch boundary; ``checkpoint`` is the folder
    holding a checkpoint of that moment (None without ``--checkpoint-dir``)."""

    def __init__(self, checkpoint: Path | None, epoch: int, batch: int):
        super().__init__(f"interrupted at epoch {epoch}, batch {batch}")
        self.checkpoint, self.epoch, self.batch = checkpoint, epoch, batch


class StopSignals:
    """While active (main thread only), SIGINT and SIGTERM only set ``requested``; the training
    loop checks it after each update, so a checkpoint never holds half an update. A second
    Ctrl-C interrupts at once."""

    def __init__(self) -> None:
        self.requested = False
        self.previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.requested = True

    def __enter__(self) -> "StopSignals":
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


def _rng_state(device: torch.device) -> dict[str, Any]:
    return {"cpu": torch.get_rng_state(), "cuda": torch.cuda.get_rng_state(device) if device.type == "cuda" else None}


def _resume(directory: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, shard: tuple[int, int],
            device: torch.device, average: "WeightAverage | None" = None) -> TrainState | None:
    """Model, optimizer and this process's RNG from the checkpoint in ``directory``; its state."""
    loaded = checkpoint.load_latest(directory, model, optimizer)
    if loaded is None:
        return None
    rank, world = shard
    rngs, saved_world = loaded.pop("rng", None), loaded.pop("world", 1)
    if average is not None and loaded.get("average") is not None:
        for a, saved in zip(average.average, loaded["average"]):
            a.copy_(saved)
    names = {f.name for f in dataclasses.fields(TrainState)}
    state = TrainState(**{k: v for k, v in loaded.items() if k in names})
    if state.batch and saved_world != world:
        raise TaggerError(f"the checkpoint was taken mid-epoch by {saved_world} process(es); resume it with "
                          f"{saved_world}, not {world}", str(directory))
    if rngs and len(rngs) == world:
        torch.set_rng_state(rngs[rank]["cpu"])
        if rngs[rank].get("cuda") is not None and device.type == "cuda":
            torch.cuda.set_rng_state(rngs[rank]["cuda"], device)
    return state


class WeightAverage:
    """An exponential moving average of the parameters (Polyak averaging): after each update
    ``a ← a + (1 - δ)(θ - a)`` with ``δ = min(decay, (1 + n) / (10 + n))`` at update n, so the
    first updates are not swamped by the initial weights. :meth:`swapped_in` puts the average
    into the model (for dev scoring and saving) and the trained weights back afterwards."""

    def __init__(self, model: torch.nn.Module, decay: float):
        self.params = [p for p in model.parameters()]
        self.decay = decay
        self.average = [p.detach().clone() for p in self.params]

    def update(self, step: int) -> None:
        decay = min(self.decay, (1 + step) / (10 + step))
        with torch.no_grad():
            torch._foreach_lerp_(self.average, [p.detach() for p in self.params], 1.0 - decay)

    @contextlib.contextmanager
    def swapped_in(self) -> Iterator[None]:
        with torch.no_grad():
            trained = [p.detach().clone() for p in self.params]
            for p, a in zip(self.params, self.average):
                p.copy_(a)
        try:
            yield
        finally:
            with torch.no_grad():
                for p, t in zip(self.params, trained):
                    p.copy_(t)


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
    model itself); ``shard = (rank, world)`` gives each process its share of every epoch's batches
    (see :mod:`tagger.training.distributed`); only rank 0 writes files.
    """
    net = net or model
    device = torch.device(options.device)
    optimizer = make_optimizer(model.parameters(), config)
    rank, world = shard
    state = TrainState(lr=config.lr)
    average = WeightAverage(model, config.average) if config.average > 0 else None
    if options.resume and options.checkpoint_dir is not None:
        state = _resume(options.checkpoint_dir, model, optimizer, shard, device, average) or state
    scored = average.swapped_in if average is not None else contextlib.nullcontext
    started = time.monotonic() - state.elapsed
    last_checkpoint = time.monotonic()
    lengths = [len(s) for s in train]

    def save_checkpoint() -> None:  # collective under DDP: every rank's RNG goes into rank 0's file
        if options.checkpoint_dir is not None:
            rngs = distributed.gather(_rng_state(device))
            if rank == 0:
                state.elapsed = time.monotonic() - started
                checkpoint.save(options.checkpoint_dir, model, optimizer,
                                {**dataclasses.asdict(state), "world": world, "rng": rngs,
                                 "average": [a.cpu() for a in average.average] if average is not None else None}, config)

    def stop_here(interrupted: bool, saved: bool = False) -> None:
        if interrupted:
            if not saved:
                save_checkpoint()
            raise Interrupted(options.checkpoint_dir, state.epoch, state.batch)

    out_of_time = lambda: options.max_minutes is not None and time.monotonic() - started > 60 * options.max_minutes  # noqa: E731
    stopped = False
    with StopSignals() as signals:
        while state.epoch <= config.max_epochs and not stopped:
            batches = bucket_batches(lengths, config.batch_size, random.Random(options.seed * 100_003 + state.epoch))
            batches = distributed.shard(batches, rank, world)
            reporter.epoch_start(state.epoch, len(batches))
            model.train()
            while state.batch < len(batches):
                batch = model.collate([train[i] for i in batches[state.batch]]).to(device)
                loss = model.loss(net(batch), batch)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if config.clip > 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
                optimizer.step()
                state.steps += 1
                if average is not None:
                    average.update(state.steps)
                state.batch += 1
                tokens, value = batch.n_tokens, loss.item()
                state.tokens += tokens
                state.epoch_loss += value * tokens
                state.epoch_tokens += tokens
                reporter.step(value, tokens)
                due = bool(options.checkpoint_minutes) and time.monotonic() - last_checkpoint > 60 * options.checkpoint_minutes
                interrupted, due, late = distributed.agree(signals.requested, due, out_of_time())
                stop_here(interrupted)
                if due:
                    save_checkpoint()
                    last_checkpoint = time.monotonic()
                if late:
                    stopped = True
                    break
            with scored():  # with a weight average, the average is what is scored and saved
                metric = evaluate(model, dev, options.eval_max_tokens)
                error = 1.0 - metric.score
                state.metric_name = metric.score_name
                record = {"epoch": state.epoch, "loss": state.epoch_loss / max(1, state.epoch_tokens), "dev": metric.score,
                          "metric": metric.score_name, "lr": state.lr, "complete": state.batch >= len(batches),
                          "seconds": round(time.monotonic() - started, 1)}
                if metric.score > state.best_score:
                    state.best_score, state.best_epoch = metric.score, state.epoch
                    if rank == 0:
                        save_best({"dev_score": metric.score, "dev_metric": metric.score_name, "epoch": state.epoch,
                                   "history": state.history + [record]})
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
                state.epoch, state.batch, state.epoch_loss, state.epoch_tokens = state.epoch + 1, 0, 0.0, 0
            save_checkpoint()
            interrupted, late = distributed.agree(signals.requested, out_of_time())
            stop_here(interrupted, saved=True)
            if config.patience and state.epoch - 1 - state.best_epoch >= config.patience:
                break
            stopped = stopped or late
    state.elapsed = time.monotonic() - started
    return state


def tokens_per_second(state: TrainState) -> float:
    return state.tokens / state.elapsed if state.elapsed > 0 else math.nan
