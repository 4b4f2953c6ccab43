"""The parsers of an ensemble (``tagger train --task pipeline --parsers N``): the same parser
request trained ``N`` times, seeds ``--seed``, ``--seed`` + 1, ..., on the same jackknifed tags,
into ``parser.model``, ``parser-2.model``, ... of the pipeline's work folder.

One at a time they train in this process; with ``--jobs J`` (J > 1) ``J`` at a time, each in a
process of its own (:func:`tagger.training.jobs.run_jobs`, ``python -m
tagger.training.members SPEC``; SPEC is the request as JSON, and the child writes its summary
beside it), its progress in ``parser-K.log``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from tagger.errors import TaggerError
from tagger.training.jobs import Job, last_error, run_jobs

if TYPE_CHECKING:
    from tagger.training.run import TrainReporter, TrainRequest


def member_file(first: Path, k: int) -> Path:
    """Where member ``k`` (0-based) is written: ``first`` (``parser.model``), then beside it
    ``parser-2.model``, ..."""
    return first if k == 0 else first.with_name(f"{first.stem}-{k + 1}{first.suffix}")


def member_requests(request: "TrainRequest", parsers: int) -> list["TrainRequest"]:
    """``request`` once per member: its own file (the first ``request.out``) and seed (``--seed`` + k)."""
    return [dataclasses.replace(request, out=str(member_file(Path(request.out), k)),
                                options=dataclasses.replace(request.options, seed=request.options.seed + k))
            for k in range(parsers)]


def request_to_json(request: "TrainRequest") -> dict[str, Any]:
    """A :class:`TrainRequest` as plain JSON data (:func:`request_from_json` reads it back)."""
    def plain(value: Any) -> Any:
        if isinstance(value, Path):
            return str(value)
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    return plain(dataclasses.asdict(request))


def request_from_json(values: dict[str, Any]) -> "TrainRequest":
    from tagger.training.jackknife import JackknifeSettings
    from tagger.training.run import DataSpec, TrainRequest
    from tagger.training.trainer import RunOptions

    def data(spec: dict[str, Any] | None) -> DataSpec | None:
        if spec is None:
            return None
        path = spec["path"] if isinstance(spec["path"], str) else [Path(p) for p in spec["path"]]
        return DataSpec(**{**spec, "path": path})

    jackknife = values.get("jackknife")
    options = dict(values["options"])
    options["checkpoint_dir"] = Path(options["checkpoint_dir"]) if options.get("checkpoint_dir") else None
    return TrainRequest(**{
        **values,
        "train": data(values["train"]),
        "dev": data(values.get("dev")),
        "overrides": tuple(values.get("overrides", ())),
        "jackknife": None if jackknife is None else JackknifeSettings(**{
            **jackknife, "overrides": tuple(jackknife.get("overrides", ())), "columns": tuple(jackknife.get("columns", ()))}),
        "options": RunOptions(**options),
    })


def train_members(requests: Sequence["TrainRequest"], jobs: int, threads: int, reporter: "TrainReporter",
                  say: Callable[[str], None]) -> tuple[list[dict[str, Any]], float]:
    """Train every request (a member each); their summaries in order, and the wall seconds."""
    from tagger.training import run

    started = time.monotonic()
    if jobs <= 1 or len(requests) == 1:
        summaries = []
        for k, request in enumerate(requests):
            say(f"parser {k + 1}/{len(requests)} (seed {request.options.seed}): training {request.out}")
            summaries.append(run.train(request, reporter, say))
        return summaries, round(time.monotonic() - started, 1)
    results: dict[str, dict[str, Any]] = {}
    failed: list[str] = []
    paths = {Path(r.out).stem: r for r in requests}

    def spec_of(name: str) -> Path:
        return Path(paths[name].out).with_suffix(".json")

    def start(job: Job) -> None:
        request = paths[job.name]
        spec_of(job.name).write_text(json.dumps({"request": request_to_json(request), "threads": threads}),
                                     encoding="utf-8")
        say(f"{job.name} (seed {request.options.seed}): training, log in {job.log}")

    def end(job: Job, status: int) -> None:
        result = Path(paths[job.name].out).with_suffix(".result.json")
        if status != 0 or not result.exists():
            failed.append(job.name)
            say(f"{job.name} failed: {last_error(job.log)}")
            return
        results[job.name] = json.loads(result.read_text(encoding="utf-8"))
        say(f"{job.name} done: best dev {results[job.name]['dev_metric']} {results[job.name]['best_dev']:.2f} "
            f"at epoch {results[job.name]['best_epoch']} of {results[job.name]['epochs']}")

    for name in paths:
        Path(paths[name].out).with_suffix(".result.json").unlink(missing_ok=True)
    run_jobs([Job(name, __name__, spec_of(name), Path(paths[name].out).with_suffix(".log"), threads) for name in paths],
             jobs, start, end, lambda stopped: say(f"stopped {', '.join(job.name for job in stopped)}"))
    if failed:
        raise TaggerError(f"{len(failed)} of the ensemble's parsers failed ({', '.join(failed)}); logs beside them")
    return [results[name] for name in paths], round(time.monotonic() - started, 1)


def train_member(spec_path: str) -> dict[str, Any]:
    """In a job's process: train the request of ``spec_path`` and write its summary beside it."""
    import torch

    from tagger.training import run
    from tagger.training.jackknife import _EpochLines

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    torch.set_num_threads(spec["threads"])
    request = request_from_json(spec["request"])
    summary = run.train(request, _EpochLines(), lambda line: print(line, file=sys.stderr, flush=True))
    Path(request.out).with_suffix(".result.json").write_text(json.dumps(summary), encoding="utf-8")
    return summary


def main(argv: Sequence[str]) -> int:
    """``python -m tagger.training.members SPEC``: :func:`train_member`; an error is one line."""
    from tagger.training.jobs import die_with_parent
    from tagger.training.trainer import Interrupted

    die_with_parent()
    try:
        train_member(argv[0])
    except TaggerError as e:
        print(f"error: {e}", file=sys.stderr, flush=True)
        return 1
    except Interrupted:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
