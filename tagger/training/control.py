"""What decides, besides the data, when training halves its learning rate and when it stops:
the papers' schedule (:class:`Schedule`), the time budget (:class:`Budget`) and Ctrl-C/SIGTERM
(:class:`StopSignals`). Under DDP the loop agrees on the last two with the other processes
(:func:`tagger.training.distributed.agree`) so that every process stops at the same batch."""

from __future__ import annotations

import signal
import threading
import time
from typing import Any, Protocol

import torch


class ScheduleConfig(Protocol):
    """The training settings :class:`Schedule` reads (``TrainingConfig`` has them)."""

    lr_halving: bool
    halve_threshold: float
    min_lr: float
    patience: int
    min_epoch_updates: int


class ScheduleState(Protocol):
    """The part of the trainer state :class:`Schedule` reads and updates."""

    epoch: int
    lr: float
    best_epoch: int
    prev_error: float | None


class Schedule:
    """The papers' rule: after each epoch, halve lr when the relative change of the dev error
    ``|e_prev - e| / e_prev`` is at most ``halve_threshold`` (while lr ≥ ``min_lr``); stop after
    ``patience`` epochs without a better dev score (0: never).

    An epoch of this rule is at least ``min_epoch_updates`` updates: where one pass over the
    training data is ``batches`` < that, :attr:`passes` passes make one (a 500-sentence corpus of
    16 batches a pass: 16), so that a small corpus is not given up on after a few dozen updates.
    ``state.epoch`` counts passes, each scored on dev; on a large corpus the two are the same."""

    def __init__(self, config: ScheduleConfig, batches: int = 0):
        self.config = config
        self.passes = max(1, -(-config.min_epoch_updates // batches)) if batches else 1

    def after_epoch(self, state: ScheduleState, error: float, optimizer: torch.optim.Optimizer) -> None:
        """After a pass: at the end of one of the rule's epochs, halve ``state.lr`` (and the
        optimizer's) if the rule says so, and remember ``error``."""
        if state.epoch % self.passes:
            return
        config, prev = self.config, state.prev_error
        if config.lr_halving and prev and abs(prev - error) / prev <= config.halve_threshold and state.lr >= config.min_lr:
            state.lr /= 2
            for group in optimizer.param_groups:
                group["lr"] = state.lr
        state.prev_error = error

    def exhausted(self, state: ScheduleState) -> bool:
        """True when the last ``patience`` of the rule's epochs (passes × :attr:`passes`) brought
        no better dev score."""
        return bool(self.config.patience) and state.epoch - 1 - state.best_epoch >= self.config.patience * self.passes


class Budget:
    """The run's clock: seconds of training so far (counting those before a resume) and the
    ``--max-minutes`` limit (None: no limit)."""

    def __init__(self, max_minutes: float | None, elapsed: float = 0.0):
        self.max_minutes = max_minutes
        self.started = time.monotonic() - elapsed

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def out_of_time(self) -> bool:
        return self.max_minutes is not None and self.elapsed() > 60 * self.max_minutes


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
