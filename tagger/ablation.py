"""The ablation zoo as plain functions: the named presets of every model family
(:func:`list_presets`, ``tagger presets``) and the papers' tables, each row a preset of one
family (the skip-LSTM tagger's for Wu et al., the transition parser's for Elkaref & Bohnet),
trained row by row under one budget and printed beside the paper's figures (:func:`run_table`,
``tagger ablate``).

A table (``TABLES`` in a family's presets module, :data:`TABLE_SOURCES`) is that family's
presets whose ``table`` key names it, in the order they are written. A row may read the run's
vectors only in one case of its table (``vectors``: paper 004's random against pre-trained
embeddings) and may start from another row's model (``bootstrap``, ``gates``): such rows run
after the rows they start from. ``run_table`` trains each row in a process of its own
(``python -m tagger.ablation SPEC``, the stamped-job protocol of :mod:`tagger.training.jobs`:
train through :func:`tagger.training.dispatch.train`, score the best model on the test file,
write ``DIR/ROW.json`` atomically, stamped with the run's :func:`identity` under ``run``),
``jobs`` at a time, and skips the
rows whose result is there from a run with the same data, budget, seed and overrides (another
run's result is an error, never mixed in). A row killed on the way resumes from its checkpoint in ``DIR/ckpt/ROW``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from tagger.config import build_configs, config_to_dict, parse_overrides, resolve_preset
from tagger.devices import cpu_name
from tagger.errors import TaggerError
from tagger.model_file import atomic_write
from tagger.models import MODELS
from tagger.models.skip_lstm import presets as zoo_presets
from tagger.models.transition_parser import presets as parser_presets
from tagger.tasks import TASKS, get_task
from tagger.training.jobs import (EpochLines, Job, Restart, child_main, clear_stale, run_stamped, threads_per_job,
                                  write_json)

#: The model family listed first (``tagger presets``): the one most of the papers' rows are of.
ZOO_FAMILY = "skip_lstm"

#: Per model family with tables, the presets module holding its ``TABLES`` (read when asked).
TABLE_SOURCES: dict[str, Any] = {ZOO_FAMILY: zoo_presets, "transition_parser": parser_presets}

#: Which recurrent scan a family's presets run on, shown by ``tagger presets`` (:func:`scan_of`).
SCANS: dict[str, str] = {ZOO_FAMILY: "fast"}

#: The tasks a table can be trained on: those the families with tables learn.
ZOO_TASKS = tuple(name for name, task in TASKS.items() if task.model in TABLE_SOURCES)

#: What a result file keeps about the run that made it; rows are comparable only if these agree.
IDENTITY_KEYS = ("task", "column", "format", "train", "dev", "test", "max_sentences", "budget_minutes", "seed",
                 "overrides", "embeddings")

#: Shown for a figure nobody has (yet).
PENDING = "…"
#: Shown for the paper's test figures of a table that reports dev only (``test_reported`` False).
NOT_REPORTED = "—"


# -- presets and tables ------------------------------------------------------------------------

def tables() -> dict[str, dict[str, Any]]:
    """The papers' tables: id -> ``{"paper", "file", "number", "title", "data", "family", "task"}``
    (``task``: what its rows learn unless ``--task`` says otherwise; ``pos`` where not given)."""
    return {name: {"task": "pos", **entry, "family": family}
            for family, module in TABLE_SOURCES.items() for name, entry in module.TABLES.items()}


def get_table(table: str) -> dict[str, Any]:
    """Table ``table``'s entry; a one-line error listing the tables otherwise."""
    known = tables()
    if table not in known:
        raise TaggerError(f"unknown table {table!r}; tables: {', '.join(known) or 'none'}")
    return known[table]


def table_rows(table: str) -> list[str]:
    """The preset names that are the rows of ``table``, in the order they are written."""
    return [name for name, entry in table_presets(table).items() if entry.get("table") == table]


def table_presets(table: str) -> dict[str, dict[str, Any]]:
    """The presets of ``table``'s family (its rows among them)."""
    return MODELS[get_table(table)["family"]].PRESETS


def row_embeddings(entry: Mapping[str, Any], embeddings: str | None) -> str | None:
    """The vectors row ``entry`` trains with: the run's (``embeddings``), except in the random
    case of a table that has both (``vectors`` False) and in a bootstrapped row, which takes
    its source row's table of vectors with its weights."""
    if entry.get("bootstrap") or entry.get("vectors") is False:
        return None
    return embeddings


def scan_of(family: str, preset: str) -> str:
    """Which recurrent scan the ``preset`` of ``family`` runs on: ``fast`` (the one batched scan
    every skip-LSTM variant runs on) or ``-`` (a family without that scan)."""
    return SCANS.get(family, "-")


def families() -> list[str]:
    """The model families, the zoo's first."""
    return sorted(MODELS, key=lambda name: (name != ZOO_FAMILY, name))


def source_label(entry: Mapping[str, Any]) -> str:
    """Where a preset comes from, short: ``wu2017 T2 · case 2 · no gate in m`` (the table id as
    paper and number, the case's ``(case N)`` if it has one, the row label before its ``:``)."""
    table = entry.get("table")
    if not table:
        return ""
    paper, _, number = table.rpartition("-")
    parts = [f"{paper} {number.upper()}" if paper else table]
    case = entry.get("case") or ""
    short = re.search(r"\((case \d+)\)", case, re.IGNORECASE)
    if case:
        parts.append(short.group(1).lower() if short else case)
    row = (entry.get("row") or "").partition(": ")[0].strip()
    if row:
        parts.append(row)
    return " · ".join(parts)


#: The pretrained vectors each paper's setup trained with (../shared/papers), by the start of a
#: preset's name: ours train without them unless ``--embeddings`` (train, ablate) gives some.
PAPER_VECTORS = {
    "wu2016": "200-dimensional GloVe, initialising the word embeddings (Wu et al. 2016)",
    "wu2017": "100-dimensional GloVe (Wu et al. 2017)",
    "vinyals2015": "512-dimensional word2vec, trained further (Vinyals et al. 2015)",
    "ffn-paper": "100-dimensional GloVe or random, both reported (Elkaref & Bohnet 2017, Tables 3-5)",
    "lstm-paper": "100-dimensional GloVe or random, both reported (Elkaref & Bohnet 2017, Tables 3-5)",
    "elkaref2017": "100-dimensional GloVe in the pre-trained rows, random in the others (Elkaref & Bohnet 2017)",
}


def paper_vectors(name: str) -> str | None:
    """The vectors the paper of preset ``name`` used (:data:`PAPER_VECTORS`), or None."""
    return next((vectors for prefix, vectors in PAPER_VECTORS.items() if name.startswith(prefix)), None)


def list_presets(family: str | None = None, table: str | None = None) -> list[dict[str, Any]]:
    """Every named preset (of ``family`` only, or the rows of ``table`` only), the zoo's family
    first, each as ``{name, family, table, case, row, paper_dev, paper_test, description, scan,
    source, paper_vectors, model, training}`` (``model``/``training``: the values after ``based_on``)."""
    if family is not None and family not in MODELS:
        raise TaggerError(f"unknown model family {family!r}; choose from: {', '.join(sorted(MODELS))}")
    rows = set(table_rows(table)) if table is not None else None
    out = []
    for name_of_family in families():
        if family is not None and name_of_family != family:
            continue
        presets = MODELS[name_of_family].PRESETS
        for name, entry in presets.items():
            if rows is not None and (entry.get("table") != table or name not in rows):
                continue
            model, training = resolve_preset(presets, name)
            out.append({
                "name": name, "family": name_of_family, "table": entry.get("table"), "case": entry.get("case"),
                "row": entry.get("row"), "paper_dev": entry.get("paper_dev"), "paper_test": entry.get("paper_test"),
                "description": " ".join(str(entry.get("description", "")).split()),
                "scan": scan_of(name_of_family, name), "source": source_label(entry),
                "paper_vectors": paper_vectors(name), "model": model, "training": training,
            })
    return out


# -- one ablation run --------------------------------------------------------------------------

@dataclass
class AblationRequest:
    """``tagger ablate``: train the rows of ``table`` on the same data, budget (minutes per row),
    seed and ``--set`` overrides, ``jobs`` rows at a time, into ``out_dir``."""

    table: str
    out_dir: str
    train: str
    dev: str
    test: str
    budget_minutes: float
    task: str | None = None  # None: the table's (tables()[table]["task"])
    column: str | None = None
    format: str = "auto"
    max_sentences: int | None = None
    overrides: tuple[str, ...] = ()
    seed: int = 1
    jobs: int = 1
    threads: int | None = None  # CPU threads for all jobs together (default: every core)
    device: str = "auto"
    rows: tuple[str, ...] = ()  # a subset of the table's rows (default: all)
    embeddings: str | None = None  # pretrained vectors for every row (tagger train --embeddings)


def task_of(request: AblationRequest) -> str:
    """The task the rows learn: ``--task``, else the table's."""
    return request.task or get_table(request.table)["task"]


def identity(request: AblationRequest) -> dict[str, Any]:
    """What makes two rows' results comparable (:data:`IDENTITY_KEYS`): the data (absolute
    paths), the budget, the seed and the overrides (sorted, the last of a repeated key)."""
    overrides = parse_overrides(request.overrides)
    return {
        "task": task_of(request), "column": request.column, "format": request.format,
        "train": os.path.abspath(request.train), "dev": os.path.abspath(request.dev),
        "test": os.path.abspath(request.test), "max_sentences": request.max_sentences,
        "budget_minutes": request.budget_minutes, "seed": request.seed,
        "overrides": [f"{key}={value}" for key, value in sorted(overrides.items())],
        "embeddings": request.embeddings,
    }


def row_configs(request: AblationRequest, preset: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The whole model config and training config row ``preset`` trains with: the task's
    defaults < the preset < the overrides (``--column``, then ``--set``), as ``tagger train
    --preset`` builds them. A bad key or value is an error here, before anything trains."""
    task = get_task(task_of(request))
    cls = MODELS[task.model]
    column = [f"{task.column_key}={request.column}"] if request.column else []
    given = request.column and task.column_key not in parse_overrides(request.overrides)  # not overridden by --set
    config, training = build_configs(cls, cls.PRESETS, preset, None, column + list(request.overrides), task.defaults,
                                     {task.column_key: "--column"} if given else None)
    return config_to_dict(config), config_to_dict(training)


def check_request(request: AblationRequest) -> list[str]:
    """The rows to train (``request.rows``, else the whole table), after checking what can be
    checked before anything runs: the table, the rows, the task, the data files, the configs."""
    rows = table_rows(request.table)
    family, task = get_table(request.table)["family"], task_of(request)
    if get_task(task).model != family:
        tasks = [name for name, entry in TASKS.items() if entry.model == family]
        raise TaggerError(f"--task {task} trains a {get_task(task).model}; table {request.table}'s rows are "
                          f"{family} presets (tasks: {', '.join(tasks)})")
    if not rows:
        raise TaggerError(f"table {request.table} has no rows (no preset names it)")
    chosen = list(request.rows) or rows
    unknown = [name for name in chosen if name not in rows]
    if unknown:
        raise TaggerError(f"--rows: {', '.join(unknown)} not in table {request.table}; its rows: {', '.join(rows)}")
    if request.jobs < 1:
        raise TaggerError(f"--jobs must be at least 1, not {request.jobs}")
    device_name(request.device)
    for path in (request.train, request.dev, request.test):
        if not os.path.exists(path):
            raise TaggerError("no such file", path)
    for name in chosen:
        row_configs(request, name)
    _check_row_inputs(request, chosen)
    return [name for name in rows if name in chosen]


def _check_row_inputs(request: AblationRequest, chosen: Sequence[str]) -> None:
    """A one-line error for rows that read pre-trained vectors without ``--embeddings``, or that
    start from a row neither chosen nor done."""
    presets = table_presets(request.table)
    vectors = [name for name in chosen if presets[name].get("vectors") and not presets[name].get("bootstrap")]
    if vectors and not request.embeddings:
        raise TaggerError(f"row{'s' * (len(vectors) != 1)} {', '.join(vectors)} of {request.table} read pre-trained "
                          f"vectors: give --embeddings (a file, or glove-6b-50d), or leave them out with --rows")
    for name in chosen:
        source = presets[name].get("bootstrap")
        if source and source not in chosen and not result_path(request.out_dir, source).is_file():
            raise TaggerError(f"row {name} starts from row {source}'s model: add {source} to --rows")


def waves(rows: Sequence[str], presets: Mapping[str, Mapping[str, Any]], done: Mapping[str, Any]) -> list[list[str]]:
    """``rows`` in the order they can run: first those that start from nothing or from a row
    done before, then those that start from a row of the wave before, and so on."""
    out: list[list[str]] = []
    ready, left = set(done), list(rows)
    while left:
        wave = [name for name in left if presets[name].get("bootstrap") in (None, *ready)]
        if not wave:  # a source neither in rows nor done (check_request refuses that): run them to fail
            wave = left
        out.append(wave)
        ready |= set(wave)
        left = [name for name in left if name not in wave]
    return out


def result_path(out_dir: str | os.PathLike, preset: str) -> Path:
    return Path(out_dir) / f"{preset}.json"


def work_dir(out_dir: str | os.PathLike, preset: str) -> Path:
    """Where row ``preset`` keeps its spec, config, log and checkpoint while it runs."""
    return Path(out_dir) / "ckpt" / preset


def _differences(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> str:
    return "; ".join(f"{key} {ours.get(key)!r} here, {theirs.get(key)!r} there"
                     for key in IDENTITY_KEYS if ours.get(key) != theirs.get(key))


def check_results(request: AblationRequest, rows: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The results already in ``out_dir`` of ``rows``; a one-line error if one of them comes
    from a run with other data, budget, seed or overrides."""
    done = load_results(request.out_dir, rows)
    ours = identity(request)
    for name, result in done.items():
        if result.get("run") != ours:
            raise TaggerError(f"a result from another run is in the way ({_differences(ours, result.get('run', {}))}): "
                              f"use another --out-dir, or delete it to run this row again",
                              str(result_path(request.out_dir, name)))
    return done


def load_results(out_dir: str | os.PathLike, rows: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """The row results in ``out_dir`` (``ROW.json``, of ``rows`` only if given), by preset name."""
    folder = Path(out_dir)
    paths = [result_path(folder, name) for name in rows] if rows is not None else sorted(folder.glob("*.json"))
    results = {}
    for path in paths:
        if not path.is_file():
            continue
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise TaggerError(f"not an ablation result: {e}", str(path)) from None
        if isinstance(result, dict) and "preset" in result and "run" in result:
            results[result["preset"]] = result
    return results


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) over ``path`` atomically: a kill leaves the old file or the new one."""
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def device_name(device: str) -> str:
    """``--device`` resolved (a one-line error for a bad name), a GPU with its model: ``cuda (NVIDIA H100)``."""
    import torch

    from tagger.devices import resolve_device

    name = resolve_device(device)
    if name.startswith("cuda"):
        return f"{name} ({torch.cuda.get_device_name(torch.device(name))})"
    return name


def run_settings(request: AblationRequest) -> dict[str, Any]:
    """The run as the table's header states it: its :func:`identity`, the table, jobs, threads,
    device and CPU."""
    return {**identity(request), "table": request.table, "jobs": request.jobs,
            "threads_per_job": threads_per_job(request.threads, request.jobs), "device": device_name(request.device),
            "cpu": cpu_name()}


def _job(request: AblationRequest, name: str, threads: int) -> Job:
    """Row ``name``'s process (:mod:`tagger.training.jobs`): ``python -m tagger.ablation SPEC``,
    its output to ``train.log`` in its work folder, its result ``DIR/ROW.json`` stamped with the
    run's :func:`identity` under ``run``."""
    work = work_dir(request.out_dir, name)
    return Job(name, "tagger.ablation", work / "spec.json", work / "train.log", threads,
               result=result_path(request.out_dir, name), stamp=identity(request), stamp_key="run",
               checkpoint=work / "last.ckpt")


def _prepare(request: AblationRequest, name: str, threads: int) -> Restart:
    """Write row ``name``'s spec and whole config to its work folder, just before its process
    starts (a checkpoint left by a run with other settings is deleted first: the returned
    :class:`~tagger.training.jobs.Restart` says whether one was)."""
    job = _job(request, name, threads)
    restart = clear_stale(job, ("last.ckpt",), keep_without_spec=True)
    model, training = row_configs(request, name)
    work = job.spec.parent
    write_json(work / "config.json", {"model": model, "training": training}, ensure_ascii=True, newline=False)
    entry = table_presets(request.table)[name]
    source = entry.get("bootstrap")
    spec = {"preset": name, "table": request.table, "run": job.stamp, "out_dir": os.path.abspath(request.out_dir),
            "threads": threads, "device": request.device, "jobs": request.jobs,
            "embeddings": row_embeddings(entry, request.embeddings),
            "bootstrap": os.path.abspath(Path(request.out_dir) / f"{source}.model") if source else None,
            "gates": entry.get("gates")}
    write_json(job.spec, spec, ensure_ascii=True, newline=False)
    return restart


def start_word(found: bool, restart: Restart) -> str:
    """How a row's start is told: ``resuming`` from the checkpoint ``found`` in its folder,
    ``training again: other settings`` where that checkpoint was another run's and was deleted
    (:func:`_prepare`), else ``training``."""
    if found and "last.ckpt" in restart.deleted:
        return "training again: other settings"
    return "resuming" if found else "training"


def describe_result(result: Mapping[str, Any]) -> str:
    return f"dev {result['dev']:.2f} test {result['test']:.2f} in {result['seconds']:.0f} s"


def run_table(request: AblationRequest, say: Callable[[str], None] = lambda line: None,
              poll_seconds: float = 0.2) -> dict[str, Any]:
    """Train the rows of ``request.table`` not done yet, ``jobs`` at a time, each in a process
    of its own with :func:`threads_per_job` torch threads; ``say`` gets a line as each row
    starts, is skipped, ends or fails (the others still run). ``DIR/table.md`` and
    ``DIR/table.json`` are rewritten as each row ends. Returns the table's report
    (:func:`table_report`), whose ``failed`` names the rows that failed (:func:`failure`)."""
    rows = check_request(request)
    done = check_results(request, table_rows(request.table))  # every row's: the table must not mix runs
    Path(request.out_dir).mkdir(parents=True, exist_ok=True)
    settings = run_settings(request)
    write_text_atomic(Path(request.out_dir) / "ablation.json", json.dumps(settings, indent=1))
    total, threads = len(rows), settings["threads_per_job"]
    pending = []
    for index, name in enumerate(rows, 1):
        if name in done:
            say(f"row {index}/{total} {name}: done before ({describe_result(done[name])}), skipped")
        else:
            pending.append((index, name))
    index_of = {name: index for index, name in pending}
    failed: list[str] = []

    def start(job: Job) -> None:
        found = job.checkpoint is not None and job.checkpoint.exists()
        word = start_word(found, _prepare(request, job.name, threads))
        say(f"row {index_of[job.name]}/{total} {job.name}: {word} "
            f"(budget {request.budget_minutes:g} min, {threads} thread{'s' * (threads != 1)})")

    def ended(job: Job, result: dict[str, Any] | None, error: str | None) -> None:
        if result is not None:
            say(f"row {index_of[job.name]}/{total} {job.name} done: {describe_result(result)}")
        else:
            failed.append(job.name)
            say(f"row {index_of[job.name]}/{total} {job.name} failed: {error}")
        write_report(request.out_dir, table_report(request.table, done, settings, failed))

    def stopped(running: list[Job]) -> None:
        say(f"stopped {', '.join(job.name for job in running)} (checkpoints in {Path(request.out_dir) / 'ckpt'}); "
            f"run the same command again to continue")

    presets = table_presets(request.table)
    for wave in waves([name for _, name in pending], presets, done):
        for name in [name for name in wave if presets[name].get("bootstrap") in failed]:
            failed.append(name)
            say(f"row {index_of[name]}/{total} {name} failed: the row it starts from, {presets[name]['bootstrap']}, failed")
        run_stamped([_job(request, name, threads) for name in wave if name not in failed], request.jobs, start, ended,
                    stopped, collect=lambda job: load_results(request.out_dir, [job.name]).get(job.name), done=done,
                    poll_seconds=poll_seconds)
    report = table_report(request.table, done, settings, failed)
    write_report(request.out_dir, report)
    return report


def failure(report: Mapping[str, Any], out_dir: str | os.PathLike) -> TaggerError | None:
    """The error to end a run with if rows of it failed (``report["failed"]``), naming their logs."""
    failed = report.get("failed") or []
    if not failed:
        return None
    logs = ", ".join(str(work_dir(out_dir, name) / "train.log") for name in failed)
    return TaggerError(f"{len(failed)} row{'s' * (len(failed) != 1)} failed ({', '.join(failed)}); logs: {logs}")


def report_table(table: str, out_dir: str | os.PathLike) -> dict[str, Any]:
    """``tagger ablate --report``: the table of what ``out_dir`` holds, with the settings of its
    last run (``ablation.json``, else those of a result), rewritten to ``table.md``/``table.json``."""
    rows = table_rows(table)
    folder = Path(out_dir)
    if not folder.is_dir():
        raise TaggerError("no such folder", str(out_dir))
    results = load_results(folder, rows)
    settings: dict[str, Any] = {}
    if (folder / "ablation.json").is_file():
        settings = json.loads((folder / "ablation.json").read_text(encoding="utf-8"))
    elif results:
        first = next(iter(results.values()))
        settings = {**first["run"], "table": table, "jobs": first.get("jobs"),
                    "threads_per_job": first.get("threads"), "device": first.get("device"), "cpu": first.get("cpu")}
    report = table_report(table, results, settings)
    write_report(folder, report)
    return report


# -- the table: report, markdown -------------------------------------------------------------

def table_report(table: str, results: Mapping[str, Mapping[str, Any]], settings: Mapping[str, Any],
                 failed: Sequence[str] = ()) -> dict[str, Any]:
    """The table as plain data (``table.json``, ``--json``): the paper's table, the run's
    settings, the rows that ``failed`` in it, and per row the paper's figures beside ours
    (None where not run yet)."""
    entry = get_table(table)
    presets = table_presets(table)
    rows = []
    for name in table_rows(table):
        preset, result = presets[name], results.get(name)
        rows.append({
            "preset": name, "case": preset.get("case") or "", "row": preset.get("row") or name,
            "paper_dev": preset.get("paper_dev"), "paper_test": preset.get("paper_test"),
            "dev": result["dev"] if result else None, "test": result["test"] if result else None,
            "epochs": result["epochs"] if result else None, "seconds": result["seconds"] if result else None,
            "tokens_per_second": result["tokens_per_second"] if result else None,
        })
    return {"table": table, **{key: entry.get(key) for key in ("paper", "number", "title", "data")},
            "paper_test_reported": entry.get("test_reported", True),
            "settings": dict(settings), "failed": list(failed), "rows": rows}


def _figure(value: float | None) -> str:
    return PENDING if value is None else f"{value:.2f}"


#: The columns of the table as printed (:func:`display_rows`).
COLUMNS = ("Case", "Variant", "paper dev", "paper test", "our dev", "our test", "preset")


def display_rows(report: Mapping[str, Any]) -> list[list[str]]:
    """The table's rows as printed, in the paper's layout: a case named on its first row only."""
    out, case = [], None
    reported = report.get("paper_test_reported", True)
    for row in report["rows"]:
        shown = row["case"] if row["case"] != case else ""
        case = row["case"]
        paper_test = _figure(row["paper_test"]) if reported else NOT_REPORTED
        out.append([shown, row["row"], _figure(row["paper_dev"]), paper_test, _figure(row["dev"]),
                    _figure(row["test"]), row["preset"]])
    return out


def title_line(report: Mapping[str, Any]) -> str:
    """``Wu, Zhang & Zong 2017, Table 2: shortcut topologies (paper: CCGbank supertags, 7 layers)``."""
    data = f" (paper: {report['data']})" if report.get("data") else ""
    return f"{report.get('paper')}, Table {report.get('number')}: {report.get('title')}{data}"


def settings_line(settings: Mapping[str, Any]) -> str:
    """The run's data, budget, seed, overrides, CPU and threads, in one line."""
    if not settings:
        return "not run yet"
    column = f", column {settings['column']}" if settings.get("column") else ""
    limit = f" (first {settings['max_sentences']} training sentences)" if settings.get("max_sentences") else ""
    overrides = ", ".join(settings.get("overrides") or []) or "none"
    threads = settings.get("threads_per_job")
    jobs = settings.get("jobs")
    return (f"ours: task {settings.get('task')}{column}; train {settings.get('train')}{limit}, "
            f"dev {settings.get('dev')}, test {settings.get('test')}; budget {settings.get('budget_minutes'):g} min "
            f"per row; seed {settings.get('seed')}; overrides: {overrides}; "
            f"{'vectors: ' + settings['embeddings'] + '; ' if settings.get('embeddings') else ''}device {settings.get('device')}; "
            f"CPU {settings.get('cpu')}; threads {threads} per row × {jobs} rows at a time")


def render_markdown(report: Mapping[str, Any]) -> str:
    """The table as markdown (``DIR/table.md``): a title and a settings line, then the rows."""
    lines = [f"# {title_line(report)}", "", settings_line(report.get("settings") or {}), "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * 4 + ["---"]) + "|"]
    for cells in display_rows(report):
        cells = [cell.replace("|", "\\|") for cell in cells]
        lines.append("| " + " | ".join(cells[:-1]) + f" | `{cells[-1]}` |")
    return "\n".join(lines) + "\n"


def write_report(out_dir: str | os.PathLike, report: Mapping[str, Any]) -> None:
    """``DIR/table.md`` and ``DIR/table.json``, each written atomically."""
    write_text_atomic(Path(out_dir) / "table.md", render_markdown(report))
    write_text_atomic(Path(out_dir) / "table.json", json.dumps(report, indent=1, ensure_ascii=False) + "\n")


# -- one row, in its own process ---------------------------------------------------------------

def row_request(run: Mapping[str, Any], spec: Mapping[str, Any], config_file: Path, model_path: Path) -> Any:
    """The training request of a row: ``tagger train`` of the run's data, budget and seed with the
    row's whole config (:func:`tagger.training.request.build_request`)."""
    from tagger.training.request import build_request

    return build_request(task=run["task"], train=run["train"], dev=run["dev"], out=model_path, format=run["format"],
                         column=run["column"], config_file=str(config_file),
                         overrides=[f"{key}={value}" for key, value in parse_overrides(run["overrides"]).items()],
                         max_minutes=run["budget_minutes"], max_sentences=run["max_sentences"], seed=run["seed"],
                         device=spec["device"], threads=spec["threads"], checkpoint_dir=config_file.parent,
                         resume=True, embeddings=spec.get("embeddings", run.get("embeddings")),
                         bootstrap=spec.get("bootstrap"), gates=spec.get("gates"))


def score_on_test(model_path: Path, test: str, fmt: str, device: str) -> tuple[float, int]:
    """The row's best model scored on ``test`` as ``tagger evaluate`` scores it (fp32 products):
    the score (percent) and the sentences scored."""
    from tagger import model_file
    from tagger.devices import resolve_device
    from tagger.inference import InputCheck, predict
    from tagger.modules.precision import apply
    from tagger.training.request import DataSpec, read_sentences

    model, meta = model_file.load(model_path, resolve_device(device))
    apply(model, "fp32", in_place=True)
    model.set_decoding(None, None)
    gold = read_sentences(DataSpec(test, fmt, None))
    if not gold:
        raise TaggerError("no sentences to evaluate", test)
    for name in model.output_columns:
        if not any(sentence.has(name) for sentence in gold):
            raise TaggerError(f"no gold '{name}' column to score the model's output against", test)
    InputCheck(model, False, meta)(gold)
    return 100.0 * model.metric(gold, predict(model, gold)).score, len(gold)


def run_row(spec_path: str | os.PathLike) -> dict[str, Any]:
    """Train the row that ``spec_path`` describes (written by :func:`run_table`) with its whole
    config (``config.json`` beside it) and the run's overrides, resuming from its checkpoint;
    score the best model on the test file as ``tagger evaluate`` does; write ``DIR/ROW.json``
    atomically (last: a row killed before has no result and is run again)."""
    import torch

    from tagger.training import dispatch

    work = Path(spec_path).parent
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    run, name, out_dir = spec["run"], spec["preset"], Path(spec["out_dir"])
    model_path = out_dir / f"{name}.model"
    started = time.monotonic()
    torch.set_num_threads(spec["threads"])
    summary = dispatch.train(row_request(run, spec, work / "config.json", model_path), EpochLines(notes=False),
                             lambda line: print(line, file=sys.stderr, flush=True) if line.startswith("warning:") else None)
    test, test_sentences = score_on_test(model_path, run["test"], run["format"], spec["device"])
    config = json.loads((work / "config.json").read_text(encoding="utf-8"))
    result = {
        "preset": name, "table": spec["table"], "dev": summary["best_dev"], "test": test,
        "metric": summary["dev_metric"], "epochs": summary["epochs"], "best_epoch": summary["best_epoch"],
        "seconds": summary["seconds"], "tokens_per_second": summary["train_tokens_per_second"],
        "seed": run["seed"], "overrides": run["overrides"], "budget_minutes": run["budget_minutes"],
        "train_sentences": summary["train_sentences"], "dev_sentences": summary["dev_sentences"],
        "test_sentences": test_sentences, "model_file": model_path.name, "model": config["model"],
        "training": config["training"], "threads": spec["threads"], "jobs": spec["jobs"],
        "device": device_name(spec["device"]),
        "cpu": cpu_name(), "wall_seconds": round(time.monotonic() - started, 1),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"), "run": run,
    }
    write_json(result_path(out_dir, name), result)
    return result


def main(argv: Sequence[str]) -> int:
    """``python -m tagger.ablation SPEC``: :func:`run_row` (:func:`tagger.training.jobs.child_main`:
    a :class:`TaggerError` is one line, an interrupted row, its checkpoint saved, exits 130)."""
    return child_main(argv, run_row, describe_result)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
