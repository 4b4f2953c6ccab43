"""Training jobs in processes of their own, several at a time: the rows of ``tagger ablate``
(:mod:`tagger.ablation`) and the fold taggers of a jackknife (:mod:`tagger.training.jackknife`).

A job is ``python -m MODULE SPEC`` (SPEC: a JSON file its module reads), its output appended to
its log (each attempt begins with a :data:`RUN_MARK` line), with a set number of torch threads.
:func:`run_jobs` keeps ``parallel`` of them running until all have ended; Ctrl-C or SIGTERM of
the parent stops the running ones with SIGTERM (a training child checkpoints after the current
update) and waits for them. A child that calls :func:`die_with_parent` gets that SIGTERM also
when its parent is killed outright, so no orphan goes on writing into the folder a rerun uses.

Plain processes (``subprocess``, not ``fork``): a child shares no memory with its parent.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Sequence

#: The line that starts each attempt of a job in its log.
RUN_MARK = "--- started"
#: The environment variable that gives a job's process its parent's id (:func:`die_with_parent`).
PARENT = "TAGGER_JOB_PARENT"


@dataclass
class Job:
    """``python -m module spec`` with ``threads`` torch threads, its output appended to ``log``."""

    name: str
    module: str
    spec: Path
    log: Path
    threads: int


def threads_per_job(threads: int | None, jobs: int) -> int:
    """Torch threads for each of ``jobs`` jobs run at once: the ``threads`` (default: the CPU
    count) split between them, at least one."""
    return max(1, (threads or os.cpu_count() or 1) // max(1, jobs))


def child_env(threads: int) -> dict[str, str]:
    """The environment of a job's process: this ``tagger`` package first on the path (the one
    running now, wherever it was imported from), and ``threads`` OpenMP threads."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else ""),
            "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), PARENT: str(os.getpid())}


def last_error(log: Path) -> str:
    """The error line of the last attempt in ``log`` (else its last line)."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "no output"
    lines = [line.strip() for line in text.rpartition(RUN_MARK)[2].splitlines()[1:] if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    return (errors or lines or ["no output"])[-1]


class TermAsInterrupt:
    """While active (main thread only), SIGTERM raises KeyboardInterrupt, so that the jobs'
    processes are stopped (and checkpoint) as on Ctrl-C."""

    def __enter__(self) -> "TermAsInterrupt":
        self.previous = None
        try:
            self.previous = signal.signal(signal.SIGTERM, self._raise)
        except ValueError:  # not the main thread
            pass
        return self

    @staticmethod
    def _raise(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    def __exit__(self, *exc: Any) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)


@dataclass
class _Running:
    job: Job
    process: subprocess.Popen
    log: IO[str]


def _launch(job: Job) -> _Running:
    job.log.parent.mkdir(parents=True, exist_ok=True)
    log = open(job.log, "a", encoding="utf-8")
    log.write(f"{RUN_MARK} {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    log.flush()
    process = subprocess.Popen([sys.executable, "-m", job.module, str(job.spec)], stdout=log, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, env=child_env(job.threads))
    return _Running(job, process, log)


def _stop(running: Sequence[_Running]) -> None:
    """Ask the processes to stop (SIGTERM: they checkpoint after the current update) and wait."""
    for item in running:
        if item.process.poll() is None:
            item.process.send_signal(signal.SIGTERM)
    for item in running:
        try:
            item.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            item.process.kill()
            item.process.wait()
        item.log.close()


def run_jobs(jobs: Sequence[Job], parallel: int, on_start: Callable[[Job], None], on_end: Callable[[Job, int], None],
             on_stopped: Callable[[list[Job]], None] = lambda stopped: None, poll_seconds: float = 0.2) -> None:
    """Run ``jobs`` in order, ``parallel`` at a time, each in a process of its own.
    ``on_start(job)`` is called just before a job's process starts (write its spec there),
    ``on_end(job, exit_status)`` when it has ended (the others go on whatever the status).
    An exception here (Ctrl-C; SIGTERM, turned into KeyboardInterrupt) stops the running
    processes (:func:`_stop`), tells ``on_stopped`` which, and is raised again."""
    pending, running = list(jobs), []
    try:
        with TermAsInterrupt():
            while pending or running:
                while pending and len(running) < max(1, parallel):
                    job = pending.pop(0)
                    on_start(job)
                    running.append(_launch(job))
                time.sleep(poll_seconds)
                for item in [r for r in running if r.process.poll() is not None]:
                    running.remove(item)
                    item.log.close()
                    on_end(item.job, item.process.returncode)
    except BaseException:
        if running:
            _stop(running)
            on_stopped([item.job for item in running])
        raise


#: ``prctl(PR_SET_PDEATHSIG, ...)``: the signal a Linux process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a job's process: get SIGTERM (checkpoint and stop) when the process that started it
    (:data:`PARENT`) dies, and stop at once if it already has. Linux only; elsewhere, or in a
    process not started by :func:`run_jobs`, nothing happens."""
    parent = os.environ.get(PARENT)
    if not sys.platform.startswith("linux") or not parent:
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return
    if os.getppid() != int(parent):  # it died before the request above
        os.kill(os.getpid(), signal.SIGTERM)
