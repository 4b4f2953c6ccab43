"""Rich progress for training: a bar per epoch with loss and tokens/s, a line per epoch with the dev score."""

from __future__ import annotations

import os
import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def make_console(stderr: bool = False) -> Console:
    """A rich console that, when not writing to a terminal, never breaks a long line in two
    (soft wrap) and gives tables their natural width, so a path in a piped or logged line stays
    whole (rich would otherwise wrap at 80 columns)."""
    console = Console(stderr=stderr)
    if not console.is_terminal:
        console.soft_wrap = True
        if "COLUMNS" not in os.environ:
            console.width = 1000
    return console


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


class RichReporter:
    def __init__(self, console: Console, metric_name: str = "dev", bar: bool = True, quiet: bool = False):
        self.console, self.metric_name, self.bar, self.quiet = console, metric_name, bar, quiet
        self.progress: Progress | None = None

    def note(self, message: str) -> None:
        """A line about the run, printed as it is known (before training starts)."""
        if not self.quiet:
            self.console.print(message, markup=False, highlight=False)

    def epoch_start(self, epoch: int, batches: int) -> None:
        self.started, self.tokens, self.loss = time.monotonic(), 0, 0.0
        if self.quiet or not self.bar:
            return
        self.progress = Progress(
            TextColumn(f"epoch {epoch}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("loss {task.fields[loss]:.4f}"), TextColumn("{task.fields[speed]:,.0f} tok/s"),
            TimeElapsedColumn(), console=self.console, transient=True,
        )
        self.progress.start()
        self.task = self.progress.add_task("train", total=batches, loss=0.0, speed=0.0)

    def step(self, loss: float, tokens: int) -> None:
        self.tokens += tokens
        self.loss = 0.98 * self.loss + 0.02 * loss if self.loss else loss
        if self.progress is not None:
            speed = self.tokens / max(1e-9, time.monotonic() - self.started)
            self.progress.update(self.task, advance=1, loss=self.loss, speed=speed)

    def epoch_end(self, record: dict[str, Any]) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
        if self.quiet:
            return
        speed = self.tokens / max(1e-9, time.monotonic() - self.started)
        mark = "  [green]best[/green]" if record.get("best") else ""
        partial = "" if record.get("complete", True) else " (partial epoch)"
        metric = f"{self.metric_name} {record['metric']}" if record.get("metric") else self.metric_name
        parts = record.get("parts") or {}
        shown = " (" + ", ".join(f"{name} {100 * value:.2f}" for name, value in parts.items()) + ")" if parts else ""
        self.console.print(
            f"epoch {record['epoch']:>3}{partial}  loss {record['loss']:.4f}  {metric} {100 * record['dev']:.2f}{shown}"
            f"  lr {record['lr']:.4g}  {speed:,.0f} tok/s  {record['seconds']:.0f}s{mark}", highlight=False
        )
