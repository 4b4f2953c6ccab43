"""The bottom of training: what a run is asked to do, as plain data, and the data it reads.

:class:`TrainRequest` (with its :class:`DataSpec` and :class:`JackknifeSettings`) is what every
runner above takes: the single-model runner (:mod:`tagger.training.run`), the jackknife, the
pipeline and its ensemble members, the ablation's rows, and the dispatcher that picks among
them (:mod:`tagger.training.dispatch`). :func:`build_request` is the one way to make a request
from the options of ``tagger train`` and :func:`tagger.train`; :func:`request_to_json` and
:func:`request_from_json` carry a request to a job's process. Nothing here imports torch or a
model family (a family is passed in where its config is built).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

from tagger.config import TrainingConfig, build_configs, check_options, parse_overrides
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats.base import read_once_only
from tagger.tasks import TASKS as TASK_TABLE
from tagger.tasks import get_task

#: The ``--task`` names (:data:`tagger.tasks.TASKS`).
TASKS = tuple(TASK_TABLE)

SPLITS = ("wsj", "sample")

#: Without ``--dev``, every HOLD_OUT_EVERY-th training sentence is held out as dev (5%).
HOLD_OUT_EVERY = 20


class Reporter(Protocol):
    def epoch_start(self, epoch: int, batches: int) -> None: ...
    def step(self, loss: float, tokens: int) -> None: ...
    def epoch_end(self, record: dict[str, Any]) -> None: ...


@dataclass
class RunOptions:
    """How one run is driven (not part of the model: changing these keeps results comparable)."""

    seed: int = 1
    device: str = "cpu"
    max_minutes: float | None = None
    checkpoint_dir: Path | None = None
    checkpoint_minutes: float | None = None
    resume: bool = False
    eval_max_tokens: int = 8192


@dataclass
class DataSpec:
    """Where sentences come from: a path (file or folder) or a list of files, its format and, for
    ``columns``, the column spec."""

    path: str | list[Path]
    fmt: str = "auto"
    columns: str | None = None
    max_sentences: int | None = None

    def files(self) -> list[Path]:
        """The files it names: each file given, every file under each folder given, sorted."""
        paths = [Path(self.path)] if isinstance(self.path, str) else [Path(p) for p in self.path]
        return sorted(f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file())

    @property
    def name(self) -> str:
        return self.path if isinstance(self.path, str) else f"{len(self.path)} files from {self.path[0].parent}"


@dataclass
class JackknifeSettings:
    """How to jackknife (:mod:`tagger.training.jackknife`): ``folds`` (K ≥ 2; 10 is the usual),
    the taggers' settings (``preset``, ``config_file``, ``overrides`` as ``key=value``:
    ``--pos-preset``, ``--pos-config``, ``--pos-set``), the work folder (None: the model file's
    name + ``.jackknife``), and ``jobs`` taggers at a time with ``threads`` torch threads each
    (:func:`tagger.training.jackknife.plan_jobs`). ``columns``: what the taggers learn; empty:
    the columns the parser reads. A pipeline (``--task pipeline``) asks for more (``upos, xpos,
    feats``): its tagger fills them all."""

    folds: int
    preset: str | None = None
    config_file: str | None = None
    overrides: tuple[str, ...] = ()
    work_dir: str | None = None
    jobs: int | None = None
    threads: int | None = None
    columns: tuple[str, ...] = ()
    #: The taggers' seed (None: the run's ``--seed``). A pipeline of several parsers sets it, so
    #: that the parsers' own seeds (``--seed``, ``--seed`` + 1, ...) share one set of taggers.
    seed: int | None = None
    #: Whether taggers found done are announced as reused (a pipeline's parsers, which look at
    #: the taggers the pipeline has just trained, say nothing of them: False).
    announce: bool = True

    def tagger_seed(self, run_seed: int) -> int:
        return run_seed if self.seed is None else self.seed


#: ``JackknifeSettings.folds`` of ``--task pipeline`` when ``--jackknife`` is not given: the
#: pipeline decides (10 folds if its parser reads POS, none if it reads none).
PIPELINE_DECIDES = 0


@dataclass
class TrainRequest:
    task: str
    train: DataSpec
    dev: DataSpec | None  # None: hold out part of the training data (:func:`hold_out`)
    out: str
    column: str | None = None
    model: str | None = None
    preset: str | None = None
    config_file: str | None = None
    overrides: tuple[str, ...] = ()  # "key=value" (--set); they win over the typed fields below
    arch: str | None = None  # --arch: the parser's architecture (arch=...)
    encoder: str | None = None  # --encoder: a pretrained transformer under a tagger (transformer=...)
    max_epochs: int | None = None
    batch_size: int | None = None  # sentences per update (per process under torchrun)
    patience: int | None = None
    embeddings: str | None = None
    bootstrap: str | None = None
    gates: str | None = None
    pos_model: str | None = None  # retag the parser's POS column with this tagger first
    jackknife: JackknifeSettings | None = None  # retag them with jackknifed taggers (tagger.training.jackknife)
    encoder_from: str | None = None  # a trained tagger whose encoder the model starts from (with_encoder)
    tokenizer: bool = True  # --task pipeline: add a tokenizer when the training CoNLL-U has # text
    tokenizer_preset: str | None = None  # --task pipeline: the tokenizer's preset (None: the tokenize task's)
    parsers: int = 1  # --task pipeline: parsers trained (seeds seed, seed + 1, ...) and parsing as an ensemble
    options: RunOptions = field(default_factory=RunOptions)


@dataclass
class Data:
    """The sentences a run trains and selects on; ``dev_source`` says where dev came from."""

    train: list[Sentence]
    dev: list[Sentence]
    dev_source: str
    held_out: bool = False
    warnings: list[str] = field(default_factory=list)  # said once training starts (not before an error)
    #: (train, dev) sentences read, where the model trains on units made of them (a tokenizer's windows)
    sentences_read: tuple[int, int] | None = None
    words_read: tuple[int, int] | None = None  # (train, dev) words of those sentences

    @property
    def word_counts(self) -> tuple[int, int]:
        """Training and dev words, as read."""
        return self.words_read or (sum(len(s) for s in self.train), sum(len(s) for s in self.dev))

    @property
    def sentence_counts(self) -> tuple[int, int]:
        """Training and dev sentences, as read."""
        return self.sentences_read or (len(self.train), len(self.dev))


class TrainReporter(Reporter, Protocol):
    """A :class:`Reporter` that is also told notes about the run (vectors loaded, training trees
    skipped) as they are known, before training starts."""

    def note(self, message: str) -> None: ...


# -- building a request --------------------------------------------------------------------------

def data_source(path: str | os.PathLike | Sequence[str | os.PathLike]) -> str | list[Path]:
    """A ``DataSpec`` path: a file or folder's name, or a list of files. A pipe (bash's
    ``<(command)``, a FIFO) is refused: training reads its data more than once (a sample to
    plan, then all of it; jackknife folds in processes of their own), and a pipe once only."""
    paths = [Path(p) for p in path] if isinstance(path, (list, tuple)) else [Path(path)]
    for one in paths:
        if read_once_only(one):
            raise TaggerError("training reads its data more than once, and a pipe can be read once only: "
                              "write it to a file first", os.fspath(one))
    return paths if isinstance(path, (list, tuple)) else os.fspath(path)


def refuse_overwriting(out: str | os.PathLike, *inputs: Any) -> None:
    """A one-line error where ``out`` is one of the files read (``inputs``: paths, lists of them,
    None): writing the model there would replace a corpus or a teacher."""
    if not os.path.isfile(out):
        return
    for item in inputs:
        for path in item if isinstance(item, (list, tuple)) else [item]:
            if path is not None and os.path.isfile(path) and os.path.samefile(path, out):
                raise TaggerError(f"--out is {os.fspath(path)}, which this run reads: the model would replace it; "
                                  "write it elsewhere", os.fspath(out))


def refuse_unwritable(*targets: str | os.PathLike | None) -> None:
    """A one-line error, before anything trains, for a model file or checkpoint folder that could
    not be written (its nearest existing folder read-only): found at the first epoch's end, it
    would have cost that epoch."""
    for target in targets:
        if target is None:
            continue
        folder = Path(target).absolute()
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if folder.is_file():
            folder = folder.parent
        if not os.access(folder, os.W_OK):
            raise TaggerError(f"cannot write here ({folder} is not writable)", os.fspath(target))


def build_request(*, task: str, train: Any, out: str | os.PathLike, dev: Any = None, split: str | None = None,
                  format: str = "auto", columns: str | None = None, column: str | None = None,
                  model: str | None = None, preset: str | None = None, config_file: str | None = None,
                  overrides: Sequence[str] = (), arch: str | None = None, max_epochs: int | None = None,
                  batch_size: int | None = None, patience: int | None = None, max_minutes: float | None = None,
                  max_sentences: int | None = None, seed: int = 1, device: str = "auto", threads: int | None = None,
                  embeddings: str | None = None, bootstrap: str | None = None, gates: str | None = None,
                  pos_model: str | None = None, jackknife: int | None = None, pos_preset: str | None = None,
                  pos_config: str | None = None, pos_overrides: Sequence[str] = (),
                  jackknife_dir: str | os.PathLike | None = None, jobs: int | None = None,
                  encoder_from: str | None = None, tokenizer: bool = True, tokenizer_preset: str | None = None,
                  parsers: int = 1,
                  checkpoint_dir: str | os.PathLike | None = None, checkpoint_minutes: float | None = None,
                  resume: bool = False, encoder: str | None = None) -> TrainRequest:
    """The :class:`TrainRequest` of ``tagger train``'s options (and :func:`tagger.train`'s):
    the numeric options checked (a one-line error naming the first out of range), ``--split``
    applied to a folder of WSJ files (:func:`split_files`), a pipeline given its jackknife
    (:data:`PIPELINE_DECIDES`) when none is named. ``train``/``dev``: a path or a list of files."""
    check_options(max_epochs=max_epochs, batch_size=batch_size, patience=patience, max_minutes=max_minutes,
                  max_sentences=max_sentences, threads=threads, jackknife=jackknife, jobs=jobs, parsers=parsers,
                  checkpoint_minutes=checkpoint_minutes, seed=seed)
    if gates and not bootstrap:
        raise TaggerError("gates: only with bootstrap (they name the gates it initialises from the FFN)")
    if tokenizer_preset and not get_task(task).tagger_columns:
        raise TaggerError("tokenizer_preset: only with --task pipeline (a tokenizer alone: --task tokenize --preset NAME)")
    if jackknife is None and get_task(task).tagger_columns:  # a pipeline: it jackknifes if its parser reads POS
        jackknife = PIPELINE_DECIDES
    if split:
        parts = split_files(os.fspath(train), split, task)
        train, dev = parts["train"], dev or parts["dev"]
    refuse_overwriting(out, train, dev, config_file, bootstrap, pos_model, encoder_from, embeddings)
    refuse_unwritable(out, checkpoint_dir)
    settings = JackknifeSettings(jackknife, pos_preset, pos_config, tuple(pos_overrides),
                                 os.fspath(jackknife_dir) if jackknife_dir else None, jobs, threads)
    return TrainRequest(
        task=task, train=DataSpec(data_source(train), format, columns, max_sentences),
        dev=DataSpec(data_source(dev), format, columns) if dev is not None and dev != "" else None, out=os.fspath(out), column=column,
        model=model, preset=preset, config_file=config_file, overrides=tuple(overrides), arch=arch or None,
        encoder=encoder or None,
        max_epochs=max_epochs, batch_size=batch_size, patience=patience, embeddings=embeddings,
        bootstrap=bootstrap, gates=gates, pos_model=pos_model,
        jackknife=settings if jackknife is not None else None, encoder_from=encoder_from, tokenizer=tokenizer,
        tokenizer_preset=tokenizer_preset or None, parsers=parsers,
        options=RunOptions(seed=seed, device=device, max_minutes=max_minutes,
                           checkpoint_dir=Path(checkpoint_dir) if checkpoint_dir else None,
                           checkpoint_minutes=checkpoint_minutes, resume=resume))


def request_to_json(request: TrainRequest) -> dict[str, Any]:
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


def data_spec_from_json(spec: dict[str, Any] | None) -> DataSpec | None:
    if spec is None:
        return None
    path = spec["path"] if isinstance(spec["path"], str) else [Path(p) for p in spec["path"]]
    return DataSpec(**{**spec, "path": path})


def request_from_json(values: dict[str, Any]) -> TrainRequest:
    jackknife = values.get("jackknife")
    options = dict(values["options"])
    options["checkpoint_dir"] = Path(options["checkpoint_dir"]) if options.get("checkpoint_dir") else None
    return TrainRequest(**{
        **values,
        "train": data_spec_from_json(values["train"]),
        "dev": data_spec_from_json(values.get("dev")),
        "overrides": tuple(values.get("overrides", ())),
        "jackknife": None if jackknife is None else JackknifeSettings(**{
            **jackknife, "overrides": tuple(jackknife.get("overrides", ())), "columns": tuple(jackknife.get("columns", ()))}),
        "options": RunOptions(**options),
    })


# -- the data ------------------------------------------------------------------------------------

def split_files(folder: str, split: str, task: str) -> dict[str, list[Path]]:
    """Train/dev/test files of a folder of WSJ files (searched recursively, as CCGbank keeps one
    folder per section): ``wsj`` splits by section for ``task``, ``sample`` as the benchmarks split
    the NLTK sample (SPEC §2, ../shared/BENCHMARKS.md)."""
    from tagger.formats.ptb import WSJ_FILE, sample_split, wsj_split

    root = Path(folder)
    if not root.is_dir():
        raise TaggerError("--split needs a folder of wsj_SSNN files", folder)
    files = sorted(p for p in root.rglob("*") if p.is_file() and WSJ_FILE.search(p.name))
    if not files:
        raise TaggerError("no wsj_SSNN files in this folder", folder)
    kinds = sorted({p.suffix or p.name for p in files})
    if len(kinds) > 1:  # e.g. the NLTK sample keeps the same text as .mrg and as .pos
        where = sorted({str(p.parent) for p in files})[:2]
        raise TaggerError(f"the folder holds WSJ files of several formats ({', '.join(kinds)}): "
                          f"point --train at one kind, e.g. {' or '.join(where)}", folder)
    parts = sample_split(files) if split == "sample" else wsj_split(files, get_task(task).splits)
    for part, chosen in parts.items():
        if not chosen:
            raise TaggerError(f"the {split} split has no {part} files here", folder)
    return parts


def read_sentences(spec: DataSpec) -> list[Sentence]:
    from tagger.formats import read_corpus

    return read_corpus(spec.path, spec.fmt, spec.columns, max_sentences=spec.max_sentences)


def default_column(task: str, sentences: Sequence[Sentence]) -> str:
    """The column a tagger learns when ``--column`` is not given (:meth:`Task.default_column`)."""
    return get_task(task).default_column(sentences)


def hold_out(sentences: Sequence[Sentence], every: int = HOLD_OUT_EVERY) -> tuple[list[Sentence], list[Sentence]]:
    """``sentences`` split into (train, dev): every ``every``-th sentence goes to dev (the 20th,
    40th, ...: spread over the file, the same on every run), or the last one when there are
    fewer than ``every``. No dev sentence is trained on."""
    if len(sentences) < 2:
        where = sentences[0] if sentences else None
        raise TaggerError("only one sentence: none can be held out as dev; give --dev",
                          where.source if where else None, where.line if where else None)
    held = set(range(every - 1, len(sentences), every)) or {len(sentences) - 1}
    return [s for i, s in enumerate(sentences) if i not in held], [s for i, s in enumerate(sentences) if i in held]


def where(spec: DataSpec) -> str:
    """The data's name in a model file's meta: the absolute path, or the list's description."""
    return os.path.abspath(spec.path) if isinstance(spec.path, str) else spec.name


def read_data(request: TrainRequest) -> Data:
    """Training and dev sentences; without ``request.dev``, dev is held out of the training data."""
    train_sents = read_sentences(request.train)
    if not train_sents:
        raise TaggerError("no sentences to train on", request.train.name)
    if request.dev is None:
        which = f"every {HOLD_OUT_EVERY}th" if len(train_sents) >= HOLD_OUT_EVERY else "the last"
        if len(train_sents) == 1 and request.train.max_sentences == 1:
            raise TaggerError("--max-sentences 1 leaves one sentence: none can be held out as dev; give --dev or more",
                              request.train.name)
        train_sents, dev_sents = hold_out(train_sents)
        source = f"{which} sentence of {where(request.train)} ({len(dev_sents)} held out, not trained on)"
        return Data(train_sents, dev_sents, source, held_out=True)
    dev_sents = read_sentences(request.dev)
    if not dev_sents:
        raise TaggerError("no sentences to evaluate on", request.dev.name)
    data = Data(train_sents, dev_sents, where(request.dev))
    if where(request.dev) == where(request.train):
        data.warnings.append("warning: --dev is the --train data: the dev score measures memorisation, not accuracy "
                             "(leave --dev out to hold out every 20th training sentence)")
    return data


# -- the configs ---------------------------------------------------------------------------------

def overrides_of(request: TrainRequest, column: str | None) -> list[str]:
    """``key=value`` overrides in the order they apply: the column (``--column``, or the task's
    choice from the data), the typed fields (``--arch``, ``--max-epochs``, ...), then ``--set``."""
    task = get_task(request.task)
    if column and not task.column_key:
        raise TaggerError(f"--task {task.name} learns no column: leave out --column")
    typed = (("arch", request.arch), ("max_epochs", request.max_epochs), ("batch_size", request.batch_size),
             ("patience", request.patience))
    return ([f"{task.column_key}={column}"] if column else []) + \
        [f"{key}={value}" for key, value in typed if value not in (None, "")] + list(request.overrides)


def configs(request: TrainRequest, cls: type, data: Data) -> tuple[Any, TrainingConfig]:
    """The model config and the training config of ``request`` for the family ``cls``: the
    task's defaults (with the column it chooses from the data where ``--column`` names none) <
    preset < ``--config`` file < overrides (:func:`overrides_of`)."""
    task = get_task(request.task)
    column = request.column  # given; else the task's choice from the data, below a preset or --config file's
    chosen = task.default_column(data.train) if not column and task.column_from_data else None
    if request.encoder and not cls.takes_transformer:
        raise TaggerError(f"--encoder puts a transformer under taggers and parsers; the {cls.name} model takes none")
    own = task.model == cls.name  # the task's preset and defaults are its own family's
    preset = request.preset or (task.preset if own else cls.default_preset)
    overrides = overrides_of(request, column)
    if request.encoder:  # before --set, which wins
        overrides.insert(len(overrides) - len(request.overrides), f"{cls.transformer_key}={request.encoder}")
    given = request.column and task.column_key not in parse_overrides(request.overrides)  # not overridden by --set
    named = {task.column_key: "--column"} if given else {}
    defaults = {**(task.defaults if own else {}), **({task.column_key: chosen} if chosen else {})}
    return build_configs(cls, cls.PRESETS, preset, request.config_file, overrides, defaults, named)
