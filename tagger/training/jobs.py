"""Training jobs in processes of their own, several at a time: the rows of ``tagger ablate``
(:mod:`tagger.ablation`), the fold taggers of a jackknife (:mod:`tagger.training.jackknife`)
and the parsers of a pipeline's ensemble (:mod:`tagger.training.members`).

The stamped-job protocol, written once here for all three:

- **spec**: the parent writes ``SPEC`` (JSON) just before the job starts (:func:`clear_stale`
  first deletes what a run with another stamp left in its folder; :func:`write_json`);
- **identity**: the job's ``stamp`` (a plain dict), kept in its spec and its result under
  ``stamp_key``: two jobs with equal stamps are the same job;
- **result**: the child writes its result file last (:func:`write_json`, atomic); the parent
  reads it back (:func:`stamped`) to tell a finished job (reused on a rerun) from one to run;
- **child main**: ``python -m MODULE SPEC`` runs :func:`child_main` over the module's work
  function: one line for an error, exit 130 for an interrupted (checkpointed) job.

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
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Mapping, Sequence

from tagger.errors import TaggerError

#: The line that starts each attempt of a job in its log.
RUN_MARK = "--- started"
#: The environment variable that gives a job's process its parent's id (:func:`die_with_parent`).
PARENT = "TAGGER_JOB_PARENT"


@dataclass
class Job:
    """``python -m module spec`` with ``threads`` torch threads, its output appended to ``log``;
    ``result``: the file it writes last, stamped with ``stamp`` under ``stamp_key`` (None: not
    stamped); ``checkpoint``: its checkpoint, deleted once it has finished."""

    name: str
    module: str
    spec: Path
    log: Path
    threads: int
    result: Path | None = None
    stamp: Mapping[str, Any] | None = None
    stamp_key: str = "identity"
    checkpoint: Path | None = None


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


# -- the stamped-job protocol: spec, identity, result, child main --------------------------------

def read_json(path: Path) -> Any:
    """The JSON value in ``path``; None if it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None


def write_json(path: str | os.PathLike, value: Any, ensure_ascii: bool = False, newline: bool = True) -> None:
    """``value`` as indented JSON over ``path``, atomically (a kill leaves the old file or the new)."""
    from tagger.model_file import atomic_write  # (imports torch: only where a file is written)

    text = json.dumps(value, indent=1, ensure_ascii=ensure_ascii) + ("\n" if newline else "")
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def stamped(path: Path, stamp: Mapping[str, Any] | None, key: str = "identity") -> dict[str, Any] | None:
    """The result in ``path`` if it is a JSON object stamped ``stamp`` under ``key``."""
    result = read_json(path)
    return result if isinstance(result, dict) and result.get(key) == stamp else None


@dataclass
class Restart:
    """What :func:`clear_stale` found in a job's folder: the spec there (None: none readable),
    whether it was another run's (its stamp differs, or none was trusted) and what was deleted."""

    previous: dict[str, Any] | None
    stale: bool
    deleted: list[str]


def clear_stale(job: Job, files: Sequence[str], keep_without_spec: bool = False) -> Restart:
    """Before ``job`` writes its spec: if the spec in its folder carries another stamp (or there
    is none: unless ``keep_without_spec``, a folder without a spec is not trusted), delete those
    of ``files`` (names in the spec's folder: its checkpoint, result, outputs) that are there."""
    folder = job.spec.parent
    folder.mkdir(parents=True, exist_ok=True)
    found = read_json(job.spec)
    previous = found if isinstance(found, dict) else None
    if previous is None:
        stale = not (keep_without_spec and not job.spec.exists())
    else:
        stale = previous.get(job.stamp_key) != job.stamp
    deleted = [name for name in files if stale and (folder / name).exists()]
    for name in deleted:
        (folder / name).unlink()
    return Restart(previous, stale, deleted)


@dataclass
class Outcome:
    """The results of :func:`run_stamped`'s jobs by name (and any given before), and the names
    of those that failed."""

    done: dict[str, dict[str, Any]]
    failed: list[str]


def run_stamped(jobs: Sequence[Job], parallel: int, start: Callable[[Job], None],
                ended: Callable[[Job, dict[str, Any] | None, str | None], None],
                stopped: Callable[[list[Job]], None] = lambda running: None,
                collect: Callable[[Job], dict[str, Any] | None] | None = None,
                done: dict[str, dict[str, Any]] | None = None, poll_seconds: float = 0.2) -> Outcome:
    """:func:`run_jobs` for jobs that leave a result: ``start(job)`` writes its spec; when it
    ends, its result is read (``collect``, default :func:`stamped` of ``job.result``; or None
    for a job that failed), its checkpoint deleted if it finished, and ``ended(job, result,
    error)`` told (``error``: the failure's line from its log). ``done``: results known before."""
    outcome = Outcome(done if done is not None else {}, [])

    def read(job: Job) -> dict[str, Any] | None:
        if collect is not None:
            return collect(job)
        if job.result is None:
            return None
        return stamped(job.result, job.stamp, job.stamp_key) if job.stamp is not None else read_json(job.result)

    def end(job: Job, status: int) -> None:
        result = read(job) if status == 0 else None
        if result is None:
            outcome.failed.append(job.name)
            ended(job, None, last_error(job.log))
            return
        outcome.done[job.name] = result
        if job.checkpoint is not None:
            job.checkpoint.unlink(missing_ok=True)
        ended(job, result, None)

    run_jobs(jobs, parallel, start, end, stopped, poll_seconds)
    return outcome


def child_main(argv: Sequence[str], work: Callable[[str], Any], done_line: Callable[[Any], str] | None = None,
               explain_interrupt: bool = True) -> int:
    """A job's ``main``: ``work(SPEC)`` (the first of ``argv``) in a process that dies with its
    parent; a :class:`TaggerError` is one ``error:`` line (exit 1), an interrupted job (its
    checkpoint saved) exits 130, saying where it stopped if ``explain_interrupt``; a finished one
    ends with ``done: ...`` (``done_line`` of its result) when given."""
    from tagger.training.trainer import Interrupted

    die_with_parent()
    try:
        result = work(argv[0])
    except TaggerError as e:
        print(f"error: {e}", file=sys.stderr, flush=True)
        return 1
    except Interrupted as stop:
        if explain_interrupt:
            print(f"interrupted at epoch {stop.epoch}, batch {stop.batch}; checkpoint in {stop.checkpoint}",
                  file=sys.stderr, flush=True)
        return 130
    if done_line is not None:
        print(f"done: {done_line(result)}", file=sys.stderr, flush=True)
    return 0


class EpochLines:
    """A job's progress in its log: one line per epoch, and the notes (unless ``notes`` is False)."""

    def __init__(self, notes: bool = True):
        self.notes = notes

    def note(self, message: str) -> None:
        if self.notes:
            print(message, file=sys.stderr, flush=True)

    def epoch_start(self, epoch: int, batches: int) -> None:
        pass

    def step(self, loss: float, tokens: int) -> None:
        pass

    def epoch_end(self, record: dict[str, Any]) -> None:
        print(f"epoch {record['epoch']} loss {record['loss']:.4f} dev {100 * record['dev']:.2f} lr {record['lr']:.4g} "
              f"{record['seconds']:.0f}s{' best' if record.get('best') else ''}", file=sys.stderr, flush=True)


def log_line(line: str) -> None:
    """A line of a job's progress (its ``say``): to its log."""
    print(line, file=sys.stderr, flush=True)
