"""The one training loop, shared by every model.

It calls only the model interface (``collate``, ``forward``, ``loss``, ``decode``, ``metric``)
and keeps everything a resumed run needs in :class:`TrainState`: the batch order of an epoch is
a function of (seed, epoch) (:func:`epoch_batches`), so a checkpoint at any batch boundary
restarts bit for bit. The pieces beside the loop: checkpoints (with every process's RNG state,
:class:`~tagger.training.checkpoint.Checkpoints`), taken only at batch boundaries; Ctrl-C or
SIGTERM sets a flag that the loop honours after the current update
(:class:`~tagger.training.control.StopSignals`); the time budget and the lr-halving/patience
schedule (:mod:`tagger.training.control`); the weight average (:mod:`tagger.training.averaging`);
and, under DDP, one agreement per batch on whether to stop or checkpoint
(:func:`tagger.training.distributed.agree`).
"""

from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from tagger.config import TrainingConfig
from tagger.corpus.batching import bucket_batches
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.inference import predict
from tagger.training import distributed
from tagger.training.amp import MixedPrecision
from tagger.training.averaging import WeightAverage, averager
from tagger.training.checkpoint import Checkpoints
from tagger.training.control import Budget, Schedule, StopSignals
from tagger.training.request import Reporter, RunOptions

#: Float32 throughout (``amp=off``): what :func:`update` does when given no mode.
FLOAT32 = MixedPrecision("off", torch.device("cpu"))

__all__ = ["Interrupted", "NothingTrained", "Reporter", "RunOptions", "StopSignals", "TrainState", "WeightAverage",
           "check_saved", "epoch_batches", "evaluate", "fit", "make_optimizer", "tokens_per_second"]


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

    @classmethod
    def restored(cls, saved: dict[str, Any]) -> "TrainState":
        """The state a checkpoint saved (other keys in it ignored)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in saved.items() if k in names})

    def count(self, loss: float, tokens: int) -> None:
        """One more batch of ``epoch`` done: its loss (per token) and its size."""
        self.batch += 1
        self.tokens += tokens
        self.epoch_loss += loss * tokens
        self.epoch_tokens += tokens

    def next_epoch(self) -> None:
        self.epoch, self.batch, self.epoch_loss, self.epoch_tokens = self.epoch + 1, 0, 0.0, 0


class Interrupted(KeyboardInterrupt):
    """Training stopped by Ctrl-C or SIGTERM at a batch boundary; ``checkpoint`` is the folder
    holding a checkpoint of that moment (None without ``--checkpoint-dir``)."""

    def __init__(self, checkpoint: Path | None, epoch: int, batch: int):
        super().__init__(f"interrupted at epoch {epoch}, batch {batch}")
        self.checkpoint, self.epoch, self.batch = checkpoint, epoch, batch


class NothingTrained(TaggerError):
    """An epoch trained on no example at all (every one left out of its batch, or none): the
    model would be saved untrained. The caller names the training file."""


def check_trained(state: TrainState, complete: bool) -> None:
    """:class:`NothingTrained` when no process has learned from a single token so far (the batch
    counts are summed over processes: every one calls this at the same point)."""
    if distributed.total(state.tokens) == 0:
        raise NothingTrained(f"nothing to train on: no training example was left in the "
                             f"{'batches of epoch' if complete else 'first batches of epoch'} {state.epoch} "
                             f"(every one was skipped), so no model was written")


def check_saved(out: str, saves: int, state: TrainState, max_epochs: int, resumed: bool) -> None:
    """A one-line error, never a claim that a model was written, when training ended and wrote
    none to ``out`` (``saves``: the models this process wrote): no epoch ran (``max_epochs`` below
    1), or no dev score ever counted as a best (one that is not a number). A resumed run whose
    earlier part saved its best epoch (the file is there) counts as written."""
    if saves or (resumed and state.best_epoch > 0 and Path(out).exists()):
        return
    if resumed and state.best_epoch > 0:
        raise TaggerError(f"the best epoch ({state.best_epoch}) was saved before the resume, to this file, which is "
                          "no longer there; no later epoch was better, so no model was written", out)
    if not state.history:
        raise TaggerError(f"no epoch ran (max_epochs is {max_epochs}; it must be at least 1), so no model was "
                          "written (an existing file is left as it was)", out)
    scores = ", ".join(f"{100 * record['dev']:.2f}" if isinstance(record.get("dev"), (int, float)) else str(record.get("dev"))
                       for record in state.history[:3])  # (percent, as every score shown)
    raise TaggerError(f"no epoch's dev score could be compared ({scores}), so no model was written "
                      "(an existing file is left as it was)", out)


def parameter_groups(model: torch.nn.Module, config: TrainingConfig) -> list[dict[str, Any]]:
    """The optimizer's parameter groups: the model's own weights at ``lr``, and those of a
    fine-tuned pretrained encoder (``model.pretrained_parameters()``) at ``encoder_lr`` after a
    linear warm-up of ``encoder_warmup`` updates (each group's ``scale`` of the run's lr, and its
    ``warmup``: :func:`set_rates`)."""
    pretrained = [p for p in model.pretrained_parameters() if p.requires_grad]
    apart = {id(p) for p in pretrained}
    groups = [{"params": [p for p in model.parameters() if id(p) not in apart], "scale": 1.0, "warmup": 0}]
    if pretrained:
        groups.append({"params": pretrained, "scale": (config.encoder_lr or config.lr) / config.lr,
                       "warmup": config.encoder_warmup})
    return groups


def set_rates(optimizer: torch.optim.Optimizer, lr: float, steps: int) -> None:
    """Each group's learning rate before update ``steps + 1``: the run's ``lr`` (halved as the
    schedule says) times the group's scale, times ``(steps + 1) / warmup`` while that is below 1."""
    for group in optimizer.param_groups:
        warmup = group.get("warmup", 0)
        group["lr"] = lr * group.get("scale", 1.0) * (min(1.0, (steps + 1) / warmup) if warmup else 1.0)


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


def epoch_batches(lengths: Sequence[int], batch_size: int, seed: int, epoch: int,
                  batch_tokens: int = 0) -> list[list[int]]:
    """The batches of ``epoch``, in order (of ``batch_size`` sentences, or by tokens with
    ``batch_tokens``): a function of (seed, epoch) only, so that a resumed run sees the very
    batches the interrupted one would have."""
    return bucket_batches(lengths, batch_size, random.Random(seed * 100_003 + epoch), batch_tokens)


def update(model: torch.nn.Module, net: torch.nn.Module, optimizer: torch.optim.Optimizer, batches: Sequence[Any],
           clip: float, amp: MixedPrecision | None = None) -> float:
    """One optimizer step on ``batches`` (one, or several whose gradients accumulate, each loss
    weighted by its share of their tokens; gradient norm clipped to ``clip``, 0: not), the
    forward passes under ``amp`` (None: float32); the loss (their tokens' mean)."""
    amp = amp or FLOAT32
    optimizer.zero_grad(set_to_none=True)
    tokens, value = sum(b.n_tokens for b in batches), 0.0
    for batch in batches:
        with amp.autocast():
            loss = model.loss(net(batch), batch)
            if len(batches) > 1:
                loss = loss * (batch.n_tokens / max(tokens, 1))
        amp.backward(loss)
        value += loss.item()
    amp.unscale(optimizer)
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    amp.step(optimizer)
    return value


def step(model: torch.nn.Module, net: torch.nn.Module, optimizer: torch.optim.Optimizer, parts: Sequence[Any],
         state: TrainState, config: TrainingConfig, average: Any, reporter: Reporter,
         amp: MixedPrecision | None = None) -> None:
    """One update on the batches ``parts`` at the rates of :func:`set_rates` (forward passes under
    ``amp``), counted in ``state``, the weight average and the reporter."""
    set_rates(optimizer, state.lr, state.steps)
    loss = update(model, net, optimizer, parts, config.clip, amp)
    state.steps += 1
    average.update(state.steps)
    tokens = sum(part.n_tokens for part in parts)
    state.count(loss, tokens)
    reporter.step(loss, tokens)


def updates(batches: list[list[int]], accumulate: int) -> list[list[list[int]]]:
    """The epoch's batches in the groups that make one update each: ``accumulate`` consecutive
    batches (the last group may hold fewer). ``state.batch`` counts these groups, so a resumed
    run starts at an update's first batch."""
    return [batches[i : i + accumulate] for i in range(0, len(batches), accumulate)]


def score_epoch(model: torch.nn.Module, dev: Sequence[Sentence], state: TrainState, complete: bool,
                seconds: float, max_tokens: int) -> tuple[dict[str, Any], bool]:
    """The record of the epoch just trained, with its dev score; and whether that score is the
    best so far (``state`` then names this epoch). A :class:`TaggerError` if the weights are no
    longer numbers (a learning rate too high, a loss that overflowed): nothing is saved of it."""
    if not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
        loss = state.epoch_loss / max(1, state.epoch_tokens)
        kept = f"the model of epoch {state.best_epoch} is kept" if state.best_epoch else "no model was saved"
        raise TaggerError(f"training diverged in epoch {state.epoch}: its weights became inf or nan (loss {loss:.4g}); "
                          f"{kept}. A lower learning rate (--set lr=...) may help")
    metric = evaluate(model, dev, max_tokens)
    state.metric_name = metric.score_name
    record = {"epoch": state.epoch, "loss": state.epoch_loss / max(1, state.epoch_tokens), "dev": metric.score,
              "metric": metric.score_name, "lr": state.lr, "complete": complete, "seconds": round(seconds, 1)}
    if metric.parts():  # e.g. each column's accuracy, of a tagger of several
        record["parts"] = metric.parts()
    best = metric.score > state.best_score
    if best:
        state.best_score, state.best_epoch = metric.score, state.epoch
    return record, best


def saved_history(history: Sequence[dict[str, Any]], record: dict[str, Any]) -> list[dict[str, Any]]:
    """The history a model saved at ``record``'s epoch holds: the earlier records (``history``)
    and ``record``, which alone is marked ``best`` (an earlier epoch that was the best of its
    time is not the model in the file)."""
    earlier = [{k: v for k, v in r.items() if k != "best"} for r in history]
    return earlier + [{**record, "best": True}]


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
    collate: Callable[[Sequence[Sentence]], Any] | None = None,
) -> TrainState:
    """Train ``model`` on ``train``, keep the best on ``dev`` through ``save_best(meta)``.

    Hyper-parameters come from ``config`` (a :class:`TrainingConfig`), how the run is driven
    from ``options``. ``net`` is what the forward pass goes through (a DistributedDataParallel
    wrapper, or the model itself); ``shard = (rank, world)`` gives each process its share of every
    epoch's batches (see :mod:`tagger.training.distributed`); only rank 0 writes files.
    ``collate`` makes a training batch of sentences of ``train`` (default ``model.collate``; a
    distillation adds the teachers' soft targets, :mod:`tagger.training.distill`).
    """
    net, device, (rank, world) = net or model, torch.device(options.device), shard
    collate = collate or model.collate
    optimizer = make_optimizer(parameter_groups(model, config), config)
    average = averager(model, config.average)
    amp = MixedPrecision(config.amp, device)
    checkpoints = Checkpoints(options.checkpoint_dir, options.checkpoint_minutes, model, optimizer, average,
                              device, shard, config, amp)
    saved = checkpoints.resume() if options.resume else None
    state = TrainState.restored(saved) if saved is not None else TrainState(lr=config.lr)
    lengths = [len(s) for s in train]
    budget = Budget(options.max_minutes, state.elapsed)
    first = epoch_batches(lengths, config.batch_size, options.seed, 1, config.batch_tokens)
    schedule = Schedule(config, len(updates(distributed.shard(first, rank, world), config.accumulate)))
    stopped = False
    with StopSignals() as signals:
        while state.epoch <= config.max_epochs and not stopped:
            batches = epoch_batches(lengths, config.batch_size, options.seed, state.epoch, config.batch_tokens)
            batches = updates(distributed.shard(batches, rank, world), config.accumulate)
            reporter.epoch_start(state.epoch, len(batches))
            model.train()
            while state.batch < len(batches):
                parts = [collate([train[i] for i in part]).to(device) for part in batches[state.batch]]
                step(model, net, optimizer, parts, state, config, average, reporter, amp)
                # Every process stops, checkpoints and runs out of time at the same batch.
                interrupted, due, late = distributed.agree(signals.requested, checkpoints.due(), budget.out_of_time())
                if interrupted or due:
                    checkpoints.save(state, budget.elapsed(), periodic=due)
                if interrupted:
                    raise Interrupted(options.checkpoint_dir, state.epoch, state.batch)
                if late:
                    stopped = True
                    break
            check_trained(state, state.batch >= len(batches))
            with average.swapped_in():  # with a weight average, the average is what is scored and saved
                record, best = score_epoch(model, dev, state, state.batch >= len(batches), budget.elapsed(),
                                           options.eval_max_tokens)
                if best:
                    record["best"] = True
                if best and rank == 0:
                    save_best({"dev_score": record["dev"], "dev_metric": record["metric"], "epoch": state.epoch,
                               "history": saved_history(state.history, record)})
            if record["complete"]:  # a part of an epoch (a budget's end) neither halves the rate nor counts
                schedule.after_epoch(state, 1.0 - record["dev"], optimizer)
            state.history.append(record)
            reporter.epoch_end(record)
            if record["complete"]:
                state.next_epoch()
            checkpoints.save(state, budget.elapsed())
            interrupted, late = distributed.agree(signals.requested, budget.out_of_time())
            if interrupted:
                raise Interrupted(options.checkpoint_dir, state.epoch, state.batch)
            if schedule.exhausted(state):
                break
            stopped = stopped or late
    state.elapsed = budget.elapsed()
    return state


def tokens_per_second(state: TrainState) -> float:
    return state.tokens / state.elapsed if state.elapsed > 0 else math.nan
