"""The parsers of an ensemble (``tagger train --task pipeline --parsers N``): the same parser
request trained ``N`` times, seeds ``--seed``, ``--seed`` + 1, ..., on the same jackknifed tags,
into ``parser.model``, ``parser-2.model``, ... of the pipeline's work folder.

One at a time they train in this process; with ``--jobs J`` (J > 1) ``J`` at a time, each in a
process of its own (the job protocol of :mod:`tagger.training.jobs`: ``python -m
tagger.training.members SPEC``; SPEC, ``parser-K.json``, is the request as JSON, and the child
writes its summary beside it, ``parser-K.result.json``), its progress in ``parser-K.log``.
Each member is the single-model runner with the jackknife's hook (:func:`train_member`).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from tagger.errors import TaggerError
from tagger.training import jackknife, run
from tagger.training.jobs import EpochLines, Job, child_main, log_line, run_stamped
from tagger.training.request import TrainReporter, TrainRequest, request_from_json, request_to_json  # noqa: F401


def member_file(first: Path, k: int) -> Path:
    """Where member ``k`` (0-based) is written: ``first`` (``parser.model``), then beside it
    ``parser-2.model``, ..."""
    return first if k == 0 else first.with_name(f"{first.stem}-{k + 1}{first.suffix}")


def member_requests(request: TrainRequest, parsers: int) -> list[TrainRequest]:
    """``request`` once per member: its own file (the first ``request.out``) and seed (``--seed`` + k)."""
    return [dataclasses.replace(request, out=str(member_file(Path(request.out), k)),
                                options=dataclasses.replace(request.options, seed=request.options.seed + k))
            for k in range(parsers)]


def train_member(request: TrainRequest, reporter: TrainReporter, say: Callable[[str], None]) -> dict[str, Any]:
    """One member: the single-model runner, on the jackknife's tags where the request asks for them."""
    return run.train(request, reporter, say, hooks=jackknife.hooks(request))


def _job(request: TrainRequest, threads: int) -> Job:
    """Member ``request``'s process: its spec, result and log beside its model file."""
    out = Path(request.out)
    return Job(out.stem, __name__, out.with_suffix(".json"), out.with_suffix(".log"), threads,
               result=out.with_suffix(".result.json"))


def train_members(requests: Sequence[TrainRequest], jobs: int, threads: int, reporter: TrainReporter,
                  say: Callable[[str], None]) -> tuple[list[dict[str, Any]], float]:
    """Train every request (a member each); their summaries in order, and the wall seconds."""
    started = time.monotonic()
    if jobs <= 1 or len(requests) == 1:
        summaries = []
        for k, request in enumerate(requests):
            say(f"parser {k + 1}/{len(requests)} (seed {request.options.seed}): training {request.out}")
            summaries.append(train_member(request, reporter, say))
        return summaries, round(time.monotonic() - started, 1)
    member_jobs = [_job(request, threads) for request in requests]
    requests_of = {job.name: request for job, request in zip(member_jobs, requests)}

    def start(job: Job) -> None:
        request = requests_of[job.name]
        job.spec.write_text(json.dumps({"request": request_to_json(request), "threads": threads}), encoding="utf-8")
        say(f"{job.name} (seed {request.options.seed}): training, log in {job.log}")

    def ended(job: Job, result: dict[str, Any] | None, error: str | None) -> None:
        if result is None:
            say(f"{job.name} failed: {error}")
            return
        say(f"{job.name} done: best dev {result['dev_metric']} {result['best_dev']:.2f} "
            f"at epoch {result['best_epoch']} of {result['epochs']}")

    for job in member_jobs:
        assert job.result is not None
        job.result.unlink(missing_ok=True)
    outcome = run_stamped(member_jobs, jobs, start, ended,
                          lambda stopped: say(f"stopped {', '.join(job.name for job in stopped)}"))
    if outcome.failed:
        raise TaggerError(f"{len(outcome.failed)} of the ensemble's parsers failed ({', '.join(outcome.failed)}); "
                          f"logs beside them")
    return [outcome.done[job.name] for job in member_jobs], round(time.monotonic() - started, 1)


def train_member_job(spec_path: str) -> dict[str, Any]:
    """In a job's process: train the request of ``spec_path`` and write its summary beside it."""
    import torch

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    torch.set_num_threads(spec["threads"])
    request = request_from_json(spec["request"])
    summary = train_member(request, EpochLines(), log_line)
    Path(request.out).with_suffix(".result.json").write_text(json.dumps(summary), encoding="utf-8")
    return summary


def main(argv: Sequence[str]) -> int:
    """``python -m tagger.training.members SPEC``: :func:`train_member_job` (:func:`child_main`)."""
    return child_main(argv, train_member_job, explain_interrupt=False)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
