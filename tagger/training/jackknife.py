"""Jackknifing: a parser trained on the POS a tagger predicts for sentences that tagger never saw.

``tagger train --task dep --jackknife K`` splits the training sentences into ``K`` folds
(sentence ``i`` goes to fold ``i mod K``: :func:`fold_of`), trains one tagger on every ``K - 1``
folds and tags the fold it left out, and one tagger on all of train, which tags dev (and is the
tagger to put before the parser on new text). The parser then trains on those predicted
columns, its gold heads and labels kept: at tagging time it sees predicted POS, so it should
learn from predicted POS that are as good as a tagger's on new text, not better (Elkaref &
Bohnet 2017 train and test on predicted POS "as is standard").

The ``K + 1`` taggers (:func:`tagger_names`) learn every column the parser reads
(``Model.pos_columns``: ``upos``; ``upos,feats`` for ``tag_column=upos+feats``), with the
``pos`` task's tagger and preset (or ``--pos-preset``, ``--pos-config``, ``--pos-set``), each
in a process of its own (``python -m tagger.training.jackknife SPEC``, run by
:mod:`tagger.training.jobs`), as many at a time as the cores allow. Each has a folder in the
work folder (``OUT.jackknife/`` beside the model file, or ``--jackknife-dir``)::

    fold01/  spec.json  config.json  train.log  last.ckpt (while training)  tagger.model
             tags.json (its held-out fold tagged)  result.json (written last: the stamp)
    ...
    all/     the same; tags.json is dev tagged

A tagger whose ``result.json`` stamp (:func:`identity`: the fold, the folds, the whole model
and training config, the seed, a digest of the data) is this run's is reused; a half-trained one
resumes from its checkpoint; one stamped with other settings or data is trained again (the
stamped-job protocol of :mod:`tagger.training.jobs`).

A parser trains on the taggers' tags through :class:`JackknifeHook` (:func:`hooks`), a hook of
the single-model runner (:func:`tagger.training.run.train`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from tagger.config import config_to_dict, parse_overrides
from tagger.corpus.records import UNDERSCORE_VALUE_COLUMNS, Sentence
from tagger.errors import TaggerError
from tagger.training import distributed, run
from tagger.training.jobs import (EpochLines, Job, child_main, clear_stale, log_line, read_json, run_stamped, stamped,
                                  write_json)
from tagger.training.request import (Data, DataSpec, JackknifeSettings, TrainRequest, configs, data_spec_from_json,
                                     read_data)

#: The task whose tagger family and default preset the jackknife's taggers use.
TAGGER_TASK = "pos"
#: The work folder's default name: the model file's, with this added.
WORK_SUFFIX = ".jackknife"
#: The tagger trained on all of train (it tags dev).
ALL = "all"
#: The files of one tagger's folder.
SPEC, CONFIG, LOG, MODEL, TAGS, RESULT, LOCK = ("spec.json", "config.json", "train.log", "tagger.model", "tags.json",
                                               "result.json", "lock")


@dataclass
class Jackknife:
    """A finished jackknife: ``K`` fold taggers and the all-train one, each's result (the
    ``result.json`` of its folder, with ``reused`` added), in ``work_dir``."""

    folds: int
    columns: list[str]
    work_dir: Path
    digest: str  # of the data the taggers learnt from (:func:`data_digest`)
    settings: JackknifeSettings
    tagger_config: dict[str, Any]  # {"model": ..., "training": ...}, as every tagger trained
    results: list[dict[str, Any]] = field(default_factory=list)  # :func:`tagger_names` order
    jobs: int = 1
    threads: int = 1
    wall_seconds: float = 0.0

    @property
    def all_train_tagger(self) -> Path:
        """The tagger trained on all of train: it tags dev, and new text before the parser."""
        return self.work_dir / ALL / MODEL

    @property
    def tagger_seconds(self) -> float:
        """The taggers' training time, added up (what the jackknife costs on one core per tagger)."""
        return round(sum(r["seconds"] for r in self.results), 1)


# -- folds and plans -----------------------------------------------------------------------------

def fold_of(index: int, folds: int) -> int:
    """The fold of the ``index``-th training sentence (from 0): ``index mod folds``, the same on
    every run and spread over the file."""
    return index % folds


def fold_split(sentences: Sequence[Sentence], fold: int, folds: int) -> tuple[list[Sentence], list[Sentence]]:
    """``(the sentences of the other folds, those of fold)``, each in file order."""
    rest = [s for i, s in enumerate(sentences) if fold_of(i, folds) != fold]
    return rest, list(sentences[fold::folds])


def tagger_names(folds: int) -> list[str]:
    """The taggers' folder names: ``fold01`` ... ``foldK`` (fold 0 ... K-1), then :data:`ALL`."""
    width = max(2, len(str(folds)))
    return [f"fold{k + 1:0{width}d}" for k in range(folds)] + [ALL]


def plan_jobs(taggers: int, jobs: int | None, threads: int | None, cpus: int | None = None) -> tuple[int, int]:
    """``(taggers at a time, torch threads each)`` for ``taggers`` to train on ``cpus`` cores
    (default: all): one thread each and as many at once as there are cores, unless told;
    ``threads`` given: as many as fit; ``jobs`` given: the cores split between them."""
    cpus = cpus or os.cpu_count() or 1
    if jobs is None:
        jobs = max(1, cpus // (threads or 1))
    jobs = max(1, min(jobs, taggers))
    return jobs, threads or max(1, cpus // jobs)


def data_digest(train: Sequence[Sentence], dev: Sequence[Sentence], columns: Sequence[str]) -> str:
    """A digest of what the taggers learn from: the words and ``columns`` of ``train``, then of ``dev``."""
    digest = hashlib.sha256()
    for part in (train, dev):
        for sentence in part:
            values = [sentence.words] + [sentence.columns.get(c) for c in columns]
            digest.update(json.dumps(values, ensure_ascii=False).encode("utf-8"))
            digest.update(b"\n")
        digest.update(b"\f")
    return digest.hexdigest()


def identity(name: str, folds: int, columns: Sequence[str], digest: str, config: Mapping[str, Any],
             seed: int, embeddings: str | None = None) -> dict[str, Any]:
    """What a tagger's result is stamped with: two taggers with equal stamps are the same (the
    pretrained vectors it trained with named only where there are some, so that results stamped
    before they could be keep their stamps)."""
    return {"tagger": name, "folds": folds, "columns": list(columns), "data": digest, "config": dict(config),
            "seed": seed, **({"embeddings": embeddings} if embeddings else {})}


def finished(folder: Path, stamp: Mapping[str, Any]) -> dict[str, Any] | None:
    """The result in ``folder`` if it is stamped ``stamp`` and its model and tags are there."""
    result = stamped(folder / RESULT, stamp)
    return result if result is not None and (folder / MODEL).is_file() and (folder / TAGS).is_file() else None


def _differences(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> str:
    """The stamp's keys on which ``theirs`` differs from ``ours``, named."""
    return ", ".join(key for key in ours if ours.get(key) != theirs.get(key)) or "none"


# -- the parent: plan, run, apply ------------------------------------------------------------

def _spec_dict(spec: DataSpec | None) -> dict[str, Any] | None:
    if spec is None:
        return None
    path = os.path.abspath(spec.path) if isinstance(spec.path, str) else [os.path.abspath(p) for p in spec.path]
    return {"path": path, "fmt": spec.fmt, "columns": spec.columns, "max_sentences": spec.max_sentences}


def tagger_family() -> type:
    """The model family of the taggers: the ``pos`` task's."""
    from tagger.models import MODELS
    from tagger.tasks import get_task

    return MODELS[get_task(TAGGER_TASK).model]


def tagger_configs(request: TrainRequest, columns: Sequence[str], data: Data) -> tuple[Any, Any]:
    """The model and training config every tagger trains with, as ``tagger train --task pos
    --column COLUMNS`` builds them from ``request.jackknife`` (``--pos-preset`` < ``--pos-config``
    < ``--pos-set``); a bad key or value is an error here, before anything trains."""
    from tagger.tasks import get_task

    settings = request.jackknife
    assert settings is not None
    column = ",".join(columns)
    tagger = TrainRequest(task=TAGGER_TASK, train=request.train, dev=request.dev, out="", column=column,
                          preset=settings.preset, config_file=settings.config_file, overrides=settings.overrides)
    try:
        model, training = configs(tagger, tagger_family(), data)
    except TaggerError as e:
        raise TaggerError(f"the jackknife's taggers: {e.message}", e.file, e.line) from None
    key = get_task(TAGGER_TASK).column_key
    if config_to_dict(model)[key] != column:  # --pos-set column=..., or a --pos-config that names one
        raise TaggerError(f"the jackknife's taggers learn {key}={column} (what the parser reads), "
                          f"not {key}={config_to_dict(model)[key]}: leave {key} out of --pos-set and --pos-config")
    return model, training


def check_settings(request: TrainRequest, least: int = 2) -> None:
    """Refuse the settings that cannot be jackknifed, before any data is read (``least``: the
    fewest folds; 0 only for :func:`jackknife_taggers` of a pipeline, where no folds means the
    all-train tagger alone)."""
    settings = request.jackknife
    assert settings is not None
    if settings.folds < least or settings.folds == 1:
        raise TaggerError(f"--jackknife needs at least 2 folds, not {settings.folds} (10 is the usual)")
    if request.pos_model:
        raise TaggerError("--jackknife trains its own taggers: leave out --pos-model (or --jackknife, to retag "
                          "with that tagger)")
    for name, value in (("--jobs", settings.jobs), ("--threads", settings.threads)):
        if value is not None and value < 1:
            raise TaggerError(f"{name} must be at least 1, not {value}")


def check_request(request: TrainRequest, cls: type, config: Any) -> list[str]:
    """The columns the taggers must learn for the parser ``cls`` of ``config`` (its
    ``pos_columns``, or the settings' ``columns`` when they name them all), after refusing what
    cannot be jackknifed."""
    check_settings(request)
    columns = cls.pos_columns(config)
    if not columns:
        raise TaggerError(f"--jackknife retags the POS a parser reads; the {cls.name} model of --task {request.task} "
                          f"reads none")
    chosen = list(request.jackknife.columns) if request.jackknife and request.jackknife.columns else columns
    missing = [c for c in columns if c not in chosen]
    if missing:
        raise TaggerError(f"the parser reads {'+'.join(columns)} but the taggers would learn {','.join(chosen)}: "
                          f"add {','.join(missing)}")
    return chosen


def work_folder(request: TrainRequest) -> Path:
    """Where the taggers go: ``--jackknife-dir``, else beside the model file (``OUT.jackknife``)."""
    settings = request.jackknife
    assert settings is not None
    return Path(settings.work_dir) if settings.work_dir else Path(request.out + WORK_SUFFIX)


@dataclass
class _Plan:
    """What :func:`run_jackknife` decides before any tagger trains (the data itself is not kept)."""

    folds: int
    columns: list[str]
    digest: str
    tagger_config: dict[str, Any]
    work: Path
    train_sentences: int


def plan(request: TrainRequest, columns: Sequence[str], data: Data, least: int = 2) -> _Plan:
    """Check the request against the data (read by the caller) and settle what the taggers that
    learn ``columns`` are (``least``: as :func:`check_settings`)."""
    check_settings(request, least)
    settings = request.jackknife
    assert settings is not None
    columns = list(columns)
    if len(data.train) < settings.folds:
        raise TaggerError(f"--jackknife {settings.folds} needs at least {settings.folds} training sentences, "
                          f"there are {len(data.train)}", request.train.name)
    model, training = tagger_configs(request, columns, data)
    for part, name in ((data.train, request.train.name), (data.dev, request.dev.name if request.dev else request.train.name)):
        try:
            run.check_columns(tagger_family(), model, part, name)
        except TaggerError as e:
            raise TaggerError(f"the jackknife's taggers learn {','.join(columns)}: {e.message}", e.file,
                              e.line) from None
    tagger = {"model": config_to_dict(model), "training": config_to_dict(training)}
    return _Plan(settings.folds, columns, data_digest(data.train, data.dev, columns), tagger,
                 work_folder(request), len(data.train))


def run_jackknife(request: TrainRequest, cls: type, say: Callable[[str], None] = lambda line: None) -> Jackknife:
    """Train (or reuse) the ``K + 1`` taggers of ``request.jackknife`` for the parser family
    ``cls`` of ``request``: read the data to check it and stamp the taggers, let it go, then run
    the taggers' processes (:func:`run_taggers`). ``say`` gets a line as each tagger starts, is
    reused, ends or fails. Put their tags into the parser's data with :func:`apply`."""
    check_settings(request)
    data = read_data(request)
    config, _ = configs(request, cls, data)
    chosen = plan(request, check_request(request, cls, config), data)
    del data  # the parent holds no corpus while the taggers train
    return run_taggers(request, chosen, say)


def jackknife_taggers(request: TrainRequest, columns: Sequence[str],
                      say: Callable[[str], None] = lambda line: None) -> Jackknife:
    """Train (or reuse) ``K + 1`` taggers of ``columns`` (e.g. ``["upos", "xpos", "feats"]``) as
    ``request.jackknife`` says, on ``request.train`` (and ``request.dev``, ``options.seed``,
    ``options.device``, ``options.checkpoint_minutes``; the work folder beside ``request.out``
    unless the settings name one), whatever model ``request`` trains afterwards: what a
    pipeline trainer calls. :func:`apply` puts their tags into that model's data; the
    all-train tagger (:attr:`Jackknife.all_train_tagger`) tags new text before it. With 0 folds
    only the all-train tagger trains (a pipeline whose parser reads no tags)."""
    check_settings(request, least=0)
    data = read_data(request)
    chosen = plan(request, columns, data, least=0)
    del data
    return run_taggers(request, chosen, say)


def _job(chosen: _Plan, name: str, stamp: Mapping[str, Any], threads: int) -> Job:
    """Tagger ``name``'s process: ``python -m tagger.training.jackknife SPEC`` in its folder."""
    folder = chosen.work / name
    return Job(name, __name__, folder / SPEC, folder / LOG, threads, result=folder / RESULT, stamp=dict(stamp),
               checkpoint=folder / "last.ckpt")


def run_taggers(request: TrainRequest, chosen: _Plan, say: Callable[[str], None]) -> Jackknife:
    """The taggers of ``chosen`` not finished yet, trained ``jobs`` at a time; a
    :class:`TaggerError` naming the logs of those that failed."""
    settings = request.jackknife
    assert settings is not None
    names = tagger_names(chosen.folds)
    stamps = {name: identity(name, chosen.folds, chosen.columns, chosen.digest, chosen.tagger_config,
                             settings.tagger_seed(request.options.seed), request.embeddings) for name in names}
    done = {name: result for name in names if (result := finished(chosen.work / name, stamps[name])) is not None}
    todo = [name for name in names if name not in done]
    jobs, threads = plan_jobs(len(todo) or 1, settings.jobs, settings.threads)
    chosen.work.mkdir(parents=True, exist_ok=True)
    quiet = not settings.announce and not todo  # (a pipeline's parsers: the pipeline trained them just now)
    if not quiet:
        _say_plan(chosen, len(names), todo, jobs, threads, say)

    def label(name: str) -> str:
        return f"tagger {name}" if name == ALL else f"tagger {name} ({names.index(name) + 1}/{chosen.folds})"

    for name in names:
        if name in done and not quiet:
            say(f"{label(name)}: done before ({describe(done[name])}), reused")
    started = time.monotonic()

    def start(job: Job) -> None:
        resumed = _prepare(request, chosen, job.name, stamps[job.name], threads, say)
        say(f"{label(job.name)}: {'resuming' if resumed else 'training'}")

    def ended(job: Job, result: dict[str, Any] | None, error: str | None) -> None:
        say(f"{label(job.name)} done: {describe(result)}" if result is not None else f"{label(job.name)} failed: {error}")

    def stopped(running: list[Job]) -> None:
        say(f"stopped taggers {', '.join(job.name for job in running)} (checkpoints in {chosen.work}); "
            f"run the same command again to continue")

    outcome = run_stamped([_job(chosen, name, stamps[name], threads) for name in todo], jobs, start, ended, stopped,
                          collect=lambda job: finished(chosen.work / job.name, stamps[job.name]), done=done)
    if outcome.failed:
        failed = outcome.failed
        logs = ", ".join(str(chosen.work / name / LOG) for name in failed)
        raise TaggerError(f"{len(failed)} jackknife tagger{'s' * (len(failed) != 1)} failed ({', '.join(failed)}); "
                          f"logs: {logs}")
    results = [{**done[name], "reused": name not in todo} for name in names]
    return Jackknife(chosen.folds, chosen.columns, chosen.work, chosen.digest, settings, chosen.tagger_config,
                     results, jobs, threads, round(time.monotonic() - started, 1))


def _say_plan(chosen: _Plan, taggers: int, todo: Sequence[str], jobs: int, threads: int,
              say: Callable[[str], None]) -> None:
    """The line that says what the jackknife will do: its folds, its taggers, how many train."""
    if chosen.folds:
        say(f"jackknife: {chosen.folds} folds of {chosen.train_sentences:,} training sentences, {taggers} taggers "
            f"learning {','.join(chosen.columns)} in {chosen.work}" +
            (f"; {len(todo)} to train, {jobs} at a time × {threads} thread{'s' * (threads != 1)}" if todo else ""))
    else:
        say(f"one tagger learning {','.join(chosen.columns)} from all {chosen.train_sentences:,} training sentences "
            f"(nothing to jackknife) in {chosen.work}" +
            (f", {threads} thread{'s' * (threads != 1)}" if todo else ""))


def _prepare(request: TrainRequest, chosen: _Plan, name: str, stamp: Mapping[str, Any], threads: int,
             say: Callable[[str], None]) -> bool:
    """Write tagger ``name``'s spec and config to its folder just before its process starts;
    what another run left there (a checkpoint, a result) is deleted first. Whether it resumes."""
    job = _job(chosen, name, stamp, threads)
    folder = job.spec.parent
    restart = clear_stale(job, ("last.ckpt", RESULT, TAGS, MODEL))
    if restart.previous is not None and restart.stale:
        say(f"tagger {name}: the one in {folder} was trained with other "
            f"{_differences(stamp, restart.previous.get('identity') or {})}: training it again")
    elif restart.deleted:
        say(f"tagger {name}: {', '.join(restart.deleted)} in {folder} without a spec (another run's?) deleted")
    write_json(folder / CONFIG, chosen.tagger_config)
    fold = None if name == ALL else tagger_names(chosen.folds).index(name)
    spec = {"identity": dict(stamp), "name": name, "fold": fold, "folds": chosen.folds, "columns": chosen.columns,
            "train": _spec_dict(request.train), "dev": _spec_dict(request.dev),
            "seed": request.jackknife.tagger_seed(request.options.seed) if request.jackknife else request.options.seed,
            "device": request.options.device, "threads": threads,
            "checkpoint_minutes": request.options.checkpoint_minutes}
    write_json(job.spec, spec)
    return job.checkpoint is not None and job.checkpoint.exists()


def describe(result: Mapping[str, Any]) -> str:
    """One tagger's result in a few words: its accuracy on what it tagged, and its cost."""
    what = "dev" if result["fold"] is None else "held-out"
    return (f"{what} accuracy {result['accuracy']:.2f} on {result['tagged_sentences']:,} sentences, "
            f"{result['epochs']} epoch{'s' * (result['epochs'] != 1)} in {result['seconds']:.0f} s")


def apply(jackknife: Jackknife, data: Data) -> dict[str, dict[str, float]]:
    """Put the taggers' predictions into ``data`` (read as :func:`run_jackknife` read it): each fold's into
    its training sentences, the all-train tagger's into dev; heads, labels and every other
    column stay gold. Returns the accuracy of what was put in, per column (fractions; tokens
    whose gold is ``_`` not counted): ``{"train": {"upos": 0.95}, "dev": {...}}``."""
    if data_digest(data.train, data.dev, jackknife.columns) != jackknife.digest:
        raise TaggerError("the training or dev data changed while the jackknife's taggers trained; run again",
                          str(jackknife.work_dir))
    names = tagger_names(jackknife.folds)
    counts: dict[str, dict[str, list[int]]] = {"train": {}, "dev": {}}
    for fold, name in enumerate(names):
        part = "dev" if name == ALL else "train"
        sentences = data.dev if name == ALL else data.train[fold::jackknife.folds]
        _retag(sentences, jackknife.work_dir / name / TAGS, jackknife.columns, counts[part])
    return {part: {column: correct / total if total else 0.0 for column, (correct, total) in columns.items()}
            for part, columns in counts.items()}


def _retag(sentences: Sequence[Sentence], path: Path, columns: Sequence[str], counts: dict[str, list[int]]) -> None:
    """Replace ``columns`` of ``sentences`` with the tags in ``path``, counting per column the
    (correct, total) of the tokens whose gold is not ``_`` (FEATS: every token, its ``_`` a value,
    as ``tagger evaluate`` scores it)."""
    saved = read_json(path)
    if not isinstance(saved, dict) or saved.get("columns") != list(columns) or \
            len(saved.get("sentences", ())) != len(sentences):
        raise TaggerError("not the tags of these sentences: delete the folder to train its tagger again", str(path))
    for sentence, tags in zip(sentences, saved["sentences"]):
        for column, values in zip(columns, tags):
            if len(values) != len(sentence):
                raise TaggerError("not the tags of these sentences: delete the folder to train its tagger again",
                                  str(path))
            gold = sentence.columns.get(column) or ["_"] * len(sentence)
            blank = None if column in UNDERSCORE_VALUE_COLUMNS and column in sentence.columns else "_"  # FEATS' '_' counts
            tally = counts.setdefault(column, [0, 0])
            tally[0] += sum(g == p for g, p in zip(gold, values) if g != blank)
            tally[1] += sum(g != blank for g in gold)
            sentence.columns[column] = list(values)


def parser_meta(jackknife: Jackknife, accuracy: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """What the parser's model file records of the jackknife (scores as fractions, as every score
    in a model file): the all-train tagger as its ``pos_model`` (named when input lacks POS), and
    ``jackknife``: folds, columns, the taggers' settings and whole config, the accuracy of the
    jackknifed training tags and of the dev tags, each fold tagger's on its fold, and the cost."""
    settings = jackknife.settings
    folds = [r for r in jackknife.results if r["fold"] is not None]
    return {
        "pos_model": os.path.abspath(jackknife.all_train_tagger),
        "pos_model_column": jackknife.columns[0],
        "jackknife": {
            "folds": jackknife.folds,
            "columns": jackknife.columns,
            "tagger_preset": settings.preset or _default_preset(),
            "tagger_config_file": os.path.abspath(settings.config_file) if settings.config_file else None,
            "tagger_overrides": [f"{k}={v}" for k, v in parse_overrides(settings.overrides).items()],
            "tagger_config": jackknife.tagger_config,
            "train_accuracy": dict(accuracy["train"]),
            "dev_accuracy": dict(accuracy["dev"]),
            "fold_accuracies": [round(r["accuracy"] / 100, 6) for r in folds],
            "tagger_seconds": jackknife.tagger_seconds,
            "work_dir": os.path.abspath(jackknife.work_dir),
        },
    }


def _default_preset() -> str:
    from tagger.tasks import get_task

    return get_task(TAGGER_TASK).preset


def summary(jackknife: Jackknife, accuracy: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """The jackknife in ``tagger train --json``'s summary (scores in percent): settings, the
    accuracy of the tags the parser trained and selected on, and the cost: per tagger its
    training seconds (over every attempt), this attempt's wall seconds and whether it was reused."""
    return {
        "folds": jackknife.folds,
        "columns": jackknife.columns,
        "work_dir": str(jackknife.work_dir),
        "all_train_tagger": str(jackknife.all_train_tagger),
        "jobs": jackknife.jobs,
        "threads_per_job": jackknife.threads,
        "train_accuracy": {c: round(100 * v, 2) for c, v in accuracy["train"].items()},
        "dev_accuracy": {c: round(100 * v, 2) for c, v in accuracy["dev"].items()},
        "taggers": [{"name": r["name"], "fold": r["fold"], "accuracy": r["accuracy"], "seconds": r["seconds"],
                     "wall_seconds": r["wall_seconds"], "epochs": r["epochs"], "reused": r["reused"]}
                    for r in jackknife.results],
        "tagger_seconds": jackknife.tagger_seconds,
        "wall_seconds": jackknife.wall_seconds,
    }


def summary_line(entry: Mapping[str, Any]) -> str:
    """The jackknife's line under ``tagger train``'s summary line."""
    trained = [t for t in entry["taggers"] if not t["reused"]]
    reused = len(entry["taggers"]) - len(trained)
    scores = "; ".join(f"{c.upper()} train {entry['train_accuracy'][c]:.2f} (jackknifed), "
                       f"dev {entry['dev_accuracy'][c]:.2f}" for c in entry["columns"])
    cost = f"{entry['tagger_seconds']:.0f} s of tagger training"
    if trained:
        cost += (f", {entry['wall_seconds']:.0f} s wall ({entry['jobs']} at a time × {entry['threads_per_job']} "
                 f"thread{'s' * (entry['threads_per_job'] != 1)})")
    return (f"jackknife: {entry['folds']} fold taggers + 1 on all of train ({len(trained)} trained, {reused} reused); "
            f"{scores}; {cost}; taggers in {entry['work_dir']}")


# -- the parser's hook -------------------------------------------------------------------------

class JackknifeHook:
    """The jackknife as a hook of the single-model runner (:class:`tagger.training.run.Hook`):
    before the parser's data is read its taggers train (or are reused: :func:`run_jackknife`), and once it
    is read their tags replace its POS (:func:`apply`); the parser's meta names them
    (:func:`parser_meta`) and the summary gains a ``jackknife`` entry (:func:`summary`)."""

    def __init__(self) -> None:
        self.jackknife: Jackknife | None = None

    def before_data(self, request: TrainRequest, cls: type, context: distributed.Context,
                    say: Callable[[str], None]) -> None:
        if context.distributed:
            raise TaggerError("--jackknife trains its taggers in processes of its own: run it without torchrun")
        self.jackknife = run_jackknife(request, cls, say)

    def on_data(self, data: Data) -> tuple[dict[str, Any], dict[str, Any]]:
        assert self.jackknife is not None
        accuracy = apply(self.jackknife, data)
        return parser_meta(self.jackknife, accuracy), {"jackknife": summary(self.jackknife, accuracy)}


def hooks(request: TrainRequest) -> list[JackknifeHook]:
    """The hooks that train ``request``'s model on jackknifed tags: one if it asks for a jackknife."""
    return [JackknifeHook()] if request.jackknife is not None else []


# -- one tagger, in its own process -----------------------------------------------------------

def _locked(folder: Path) -> Any:
    """An exclusive lock on ``folder`` for this process's life (POSIX); an error if another
    process holds it (a tagger left running by a killed run)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return None
    handle = open(folder / LOCK, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise TaggerError("another process is training this tagger (a run killed before?); wait for it or end it",
                          str(folder)) from None
    return handle


def train_tagger(spec_path: str | os.PathLike) -> dict[str, Any]:
    """Train the tagger that ``spec_path`` describes (written by :func:`run_taggers`) with the
    whole config beside it, resuming from its checkpoint; tag what it left out (its fold, or
    dev); write ``tags.json`` and then, last, ``result.json`` (a tagger killed before that has
    no result and is run again)."""
    import torch

    from tagger import model_file
    from tagger.devices import resolve_device
    from tagger.inference import predict
    from tagger.training.request import RunOptions

    folder = Path(spec_path).parent
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    lock = _locked(folder)
    started = time.monotonic()
    torch.set_num_threads(spec["threads"])
    stamp, fold, folds, columns = spec["identity"], spec["fold"], spec["folds"], spec["columns"]
    request = TrainRequest(task=TAGGER_TASK, train=data_spec_from_json(spec["train"]), dev=data_spec_from_json(spec["dev"]),  # type: ignore[arg-type]
                           out=str(folder / MODEL), column=",".join(columns), config_file=str(folder / CONFIG),
                           embeddings=stamp.get("embeddings"),
                           options=RunOptions(seed=spec["seed"], device=spec["device"], checkpoint_dir=folder,
                                              checkpoint_minutes=spec["checkpoint_minutes"], resume=True))
    data = read_data(request)
    if data_digest(data.train, data.dev, columns) != stamp["data"]:
        raise TaggerError("the training or dev data changed since the jackknife began; run it again", str(folder))
    if fold is None:
        part, tagged = data.train, data.dev
    else:
        part, tagged = fold_split(data.train, fold, folds)
    summary = run.train(request, EpochLines(), log_line,
                        data=Data(part, data.dev, data.dev_source, data.held_out, data.warnings))
    tagger, _ = model_file.load(request.out, resolve_device(spec["device"]))
    tagger.eval()
    predictions = predict(tagger, tagged)
    accuracy = tagger.metric(tagged, predictions).score
    out = []
    for sentence, prediction in zip(tagged, predictions):
        copy = Sentence(list(sentence.words), dict(sentence.columns))
        tagger.annotate(copy, prediction)
        out.append([list(copy.columns[c]) for c in columns])
    write_json(folder / TAGS, {"columns": columns, "sentences": out})
    result = {
        "identity": stamp, "name": spec["name"], "fold": fold, "folds": folds,
        "accuracy": round(100.0 * accuracy, 4), "tagged_sentences": len(tagged),
        "tagged_tokens": sum(len(s) for s in tagged), "train_sentences": len(part), "dev_accuracy": summary["best_dev"],
        "epochs": summary["epochs"], "best_epoch": summary["best_epoch"], "seconds": summary["seconds"],
        "wall_seconds": round(time.monotonic() - started, 1), "threads": spec["threads"], "device": spec["device"],
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    write_json(folder / RESULT, result)
    if lock is not None:
        lock.close()
    return result


def main(argv: Sequence[str]) -> int:
    """``python -m tagger.training.jackknife SPEC``: :func:`train_tagger` (:func:`child_main`:
    a :class:`TaggerError` is one line, an interrupted tagger, its checkpoint saved, exits 130)."""
    return child_main(argv, train_tagger, describe)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
