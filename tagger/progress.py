"""Rich progress: for training, a bar per epoch with loss and tokens/s and a line per epoch with
the dev score; for ``tagger tag``, a bar of the input read (:func:`tagging_progress`).

It lives here, below the layers that report progress (the runtimes, :mod:`tagger.tagging`);
``tagger/cli/progress.py`` re-exports it. rich is imported only where a console is made: the
engines of ``tagger tag`` import this module for :func:`advance`, which costs nothing while no
bar is shown.
"""

from __future__ import annotations

import os
import stat
import time
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence, TypeVar

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

T = TypeVar("T")


@cache
def _console_class() -> type:
    from rich.console import Console

    class TaggerConsole(Console):
        def on_broken_pipe(self) -> None:
            """A closed pipe (``tagger evaluate | head -1``) ends the command quietly with status 0,
            as the command group ends every other (rich's own exits with 1)."""
            self.quiet = True
            raise BrokenPipeError

    return TaggerConsole


def make_console(stderr: bool = False) -> Console:
    """A rich console that, when not writing to a terminal, never breaks a long line in two
    (soft wrap) and gives tables their natural width, so a path in a piped or logged line stays
    whole (rich would otherwise wrap at 80 columns). A closed pipe raises :class:`BrokenPipeError`
    (the command group ends quietly). Strings are shown as they are, never read as rich markup:
    a CCG category's ``[dcl]``, a path's brackets, stay in the table (styles are given as styles)."""
    console = _console_class()(stderr=stderr, markup=False)
    if not console.is_terminal:
        console.soft_wrap = True
        if "COLUMNS" not in os.environ:
            console.width = 1000
    return console


def may_be_terminal() -> bool:
    """Whether rich could take stderr for a terminal: it is one, or the environment says to
    treat it as one (``FORCE_COLOR``, ``TTY_COMPATIBLE=1``, as rich reads them)."""
    import sys

    forced = os.environ.get("FORCE_COLOR") is not None or os.environ.get("TTY_COMPATIBLE") == "1"
    try:
        return forced or sys.stderr.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stderr
        return False


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


class RichReporter:
    """Training's progress: a bar through each epoch on a terminal; elsewhere (a log file) a line
    :attr:`FIRST_LINE_S` into a long epoch and then every :attr:`LINE_EVERY_S`, so a log shows a
    long epoch's progress before its end; a line at each epoch's end with its dev score."""

    FIRST_LINE_S, LINE_EVERY_S = 60.0, 300.0

    def __init__(self, console: Console, metric_name: str = "dev", bar: bool = True, quiet: bool = False):
        self.console, self.metric_name, self.bar, self.quiet = console, metric_name, bar, quiet
        self.progress: Progress | None = None
        self.epoch, self.batches, self.done, self.next_line = 0, 0, 0, self.FIRST_LINE_S

    def note(self, message: str) -> None:
        """A line about the run, printed as it is known (before training starts)."""
        if not self.quiet:
            self.console.print(message, markup=False, highlight=False)

    def epoch_start(self, epoch: int, batches: int) -> None:
        self.started, self.tokens, self.loss = time.monotonic(), 0, 0.0
        self.epoch, self.batches, self.done, self.next_line = epoch, batches, 0, self.FIRST_LINE_S
        if self.quiet or not self.bar:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

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
        self.done += 1
        if self.progress is not None:
            speed = self.tokens / max(1e-9, time.monotonic() - self.started)
            self.progress.update(self.task, advance=1, loss=self.loss, speed=speed)
        elif not self.quiet:
            elapsed = time.monotonic() - self.started
            if elapsed >= self.next_line:
                self._line(elapsed)

    def _line(self, elapsed: float) -> None:
        """A line of the epoch under way (no bar): batches done, loss, speed, time left."""
        self.next_line = elapsed + self.LINE_EVERY_S
        left = elapsed * (self.batches - self.done) / max(1, self.done)
        self.console.print(
            f"epoch {self.epoch:>3}  {self.done:,}/{self.batches:,} batches  loss {self.loss:.4f}  "
            f"{self.tokens / max(1e-9, elapsed):,.0f} tok/s  {elapsed:.0f}s, about {left / 60:.0f} min left in the epoch",
            markup=False, highlight=False)

    def epoch_end(self, record: dict[str, Any]) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
        if self.quiet:
            return
        speed = self.tokens / max(1e-9, time.monotonic() - self.started)
        from rich.text import Text

        mark = "  best" if record.get("best") else ""
        partial = "" if record.get("complete", True) else " (partial epoch)"
        metric = f"{self.metric_name} {record['metric']}" if record.get("metric") else self.metric_name
        parts = record.get("parts") or {}
        shown = " (" + ", ".join(f"{name} {100 * value:.2f}" for name, value in parts.items()) + ")" if parts else ""
        self.console.print(
            f"epoch {record['epoch']:>3}{partial}  loss {record['loss']:.4f}  {metric} {100 * record['dev']:.2f}{shown}"
            f"  lr {record['lr']:.4g}  {speed:,.0f} tok/s  {record['seconds']:.0f}s", Text(mark, style="green"),
            highlight=False, sep="")


#: The bar of the ``tagger tag`` run under way (:func:`tagging_progress`); None when none is shown.
_shown: TagProgress | None = None


def advance(sentences: int) -> None:
    """Told by each engine of ``tagger tag`` as it writes a chunk of ``sentences``: nothing to
    do (one test) unless a bar is shown."""
    if _shown is not None:
        _shown.sentences += sentences


def counted(sentences: Iterable[T], every: int = 1000) -> Iterable[T]:
    """``sentences``, told to :func:`advance` ``every`` at a time (and the rest at the end) while
    a bar is shown; else ``sentences`` themselves (for an engine whose writer is not its own)."""
    if _shown is None:
        return sentences

    def counting() -> Iterator[T]:
        count = 0
        for count, sentence in enumerate(sentences, 1):
            yield sentence
            if count % every == 0:
                advance(every)
        advance(count % every)

    return counting()


@contextmanager
def tagging_progress(inputs: Sequence[str], to_terminal: bool = False) -> Iterator[None]:
    """A bar on stderr while ``tagger tag`` runs, where stderr is a terminal (as rich sees it) and
    the output does not go to the same screen (``to_terminal``: the output then shows how far it
    is); nothing otherwise. It shows the bytes of the input read (:class:`InputMeter`; for a
    pipe, no total) and the sentences tagged (:func:`advance`), polled as it is drawn (4 times a
    second, in rich's thread): the tagging loops do no more than count."""
    global _shown
    if to_terminal or _shown is not None or not may_be_terminal():
        yield  # (without importing rich: a tenth of a small input's whole process)
        return
    console = make_console(stderr=True)
    if not console.is_terminal:
        yield
        return
    shown = TagProgress(console, InputMeter(inputs))
    shown.start()
    _shown = shown
    try:
        yield
    finally:
        _shown = None
        shown.finish()


class TagProgress:
    """``tagger tag``'s bar: bytes read of the input's total where it is known, sentences."""

    def __init__(self, console: Console, meter: InputMeter):
        from rich.progress import (BarColumn, DownloadColumn, Progress, SpinnerColumn, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        self.meter, self.sentences, self.task = meter, 0, None
        known = meter.total is not None
        columns = [SpinnerColumn(), TextColumn("tagging"), BarColumn(), *([DownloadColumn()] if known else []),
                   TextColumn("{task.fields[sentences]}"), TimeElapsedColumn(),
                   *([TimeRemainingColumn()] if known else [])]
        poll = self.poll

        class Polled(Progress):
            def get_renderables(self):
                poll()
                yield from super().get_renderables()

        self.progress: Progress = Polled(*columns, console=console, transient=True, refresh_per_second=4,
                                         redirect_stdout=False, redirect_stderr=True)
        self.task = self.progress.add_task("tag", total=meter.total, sentences=plural(0, "sentence"))

    def poll(self) -> None:
        if self.task is not None:
            self.progress.update(self.task, completed=self.meter.position(), sentences=plural(self.sentences, "sentence"))

    def start(self) -> None:
        self.progress.start()

    def finish(self) -> None:
        task, self.task = self.task, None  # polled no more
        self.progress.update(task, completed=self.meter.total or 0, sentences=plural(self.sentences, "sentence"))
        self.progress.refresh()
        self.progress.stop()


class InputMeter:
    """How many bytes of the input files (or of stdin, when it is a regular file: ``< file``) have
    been read, from the file offset of the descriptor each is read through (the kernel's: the
    readers need not say). Files are read in turn, so those before the furthest one read are
    counted whole. ``total`` is None where it is not known (stdin a pipe)."""

    def __init__(self, inputs: Sequence[str]):
        self.files: dict[tuple[int, int], tuple[int, int]] = {}  # (device, inode) -> (turn, size)
        try:
            found = [os.stat(path) for path in _input_files(inputs)] if inputs else [os.fstat(0)]
        except (OSError, ValueError):
            found = []
        regular = [s for s in found if stat.S_ISREG(s.st_mode)]
        self.total = sum(s.st_size for s in regular) if found and len(regular) == len(found) else None
        for turn, s in enumerate(regular):
            self.files.setdefault((s.st_dev, s.st_ino), (turn, s.st_size))
        self.read = [0] * len(regular)
        self.sizes = [s.st_size for s in regular]
        self.furthest = 0

    def position(self) -> int:
        if self.total is None:
            return 0
        for fd in _descriptors():
            try:
                found = os.fstat(fd)
                turn, size = self.files[(found.st_dev, found.st_ino)]
                offset = os.lseek(fd, 0, os.SEEK_CUR)
            except (OSError, KeyError):
                continue
            self.read[turn] = max(self.read[turn], min(offset, size))
            self.furthest = max(self.furthest, turn)
        return sum(self.sizes[:self.furthest]) + sum(self.read[self.furthest:])


def _input_files(inputs: Sequence[str]) -> list[str]:
    """The files ``tagger tag`` reads for ``inputs``: of a folder, those of known extensions, else
    its ``.txt`` files (as :func:`tagger.formats.read` chooses them)."""
    from tagger.formats import BY_EXTENSION

    files: list[str] = []
    for path in inputs:
        if not os.path.isdir(path):
            files.append(path)
            continue
        inside = sorted(p for p in Path(path).iterdir() if p.is_file() and not p.name.startswith("."))
        known = [p for p in inside if p.suffix.lower() in BY_EXTENSION]
        files += [os.fspath(p) for p in known or [p for p in inside if p.suffix.lower() == ".txt"]]
    return files


def _descriptors() -> list[int]:
    """This process's open file descriptors."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            return [int(name) for name in os.listdir(folder)]
        except (OSError, ValueError):
            continue
    return list(range(256))
