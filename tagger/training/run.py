"""``tagger train`` as a plain function: read data, build the model, fit, write the model file."""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

import torch

from tagger import model_file
from tagger.config import TrainingConfig, build_configs, config_to_dict
from tagger.corpus.records import UNDERSCORE_VALUE_COLUMNS, Sentence
from tagger.devices import resolve_device
from tagger.errors import TaggerError
from tagger.models import MODELS
from tagger.tasks import TASKS as TASK_TABLE
from tagger.tasks import get_task
from tagger.training import distributed
from tagger.training.trainer import NothingTrained, Reporter, RunOptions, TrainState, check_saved, fit

if TYPE_CHECKING:
    from tagger.training.jackknife import Jackknife, JackknifeSettings

#: The ``--task`` names (:data:`tagger.tasks.TASKS`).
TASKS = tuple(TASK_TABLE)


SPLITS = ("wsj", "sample")


@dataclass
class DataSpec:
    """Where sentences come from: a path (file or folder) or a list of files, its format and, for
    ``columns``, the column spec."""

    path: str | list[Path]
    fmt: str = "auto"
    columns: str | None = None
    max_sentences: int | None = None

    @property
    def name(self) -> str:
        return self.path if isinstance(self.path, str) else f"{len(self.path)} files from {self.path[0].parent}"


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


#: Without ``--dev``, every HOLD_OUT_EVERY-th training sentence is held out as dev (5%).
HOLD_OUT_EVERY = 20


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

    @property
    def sentence_counts(self) -> tuple[int, int]:
        """Training and dev sentences, as read."""
        return self.sentences_read or (len(self.train), len(self.dev))


def _where(spec: DataSpec) -> str:
    return os.path.abspath(spec.path) if isinstance(spec.path, str) else spec.name


def read_data(request: TrainRequest) -> Data:
    """Training and dev sentences; without ``request.dev``, dev is held out of the training data."""
    train_sents = read_sentences(request.train)
    if not train_sents:
        raise TaggerError("no sentences to train on", request.train.name)
    if request.dev is None:
        which = f"every {HOLD_OUT_EVERY}th" if len(train_sents) >= HOLD_OUT_EVERY else "the last"
        train_sents, dev_sents = hold_out(train_sents)
        source = f"{which} sentence of {_where(request.train)} ({len(dev_sents)} held out, not trained on)"
        return Data(train_sents, dev_sents, source, held_out=True)
    dev_sents = read_sentences(request.dev)
    if not dev_sents:
        raise TaggerError("no sentences to evaluate on", request.dev.name)
    data = Data(train_sents, dev_sents, _where(request.dev))
    if _where(request.dev) == _where(request.train):
        data.warnings.append("warning: --dev is the --train data: the dev score measures memorisation, not accuracy "
                             "(leave --dev out to hold out every 20th training sentence)")
    return data


class TrainReporter(Reporter, Protocol):
    """A :class:`Reporter` that is also told notes about the run (vectors loaded, training trees
    skipped) as they are known, before training starts."""

    def note(self, message: str) -> None: ...


def train(request: TrainRequest, reporter: TrainReporter, say: Callable[[str], None] = lambda line: None,
          data: Data | None = None) -> dict[str, Any]:
    """Train and save a model; returns a plain summary (for tables and ``--json``); scores in it
    are percentages. ``say`` gets the lines worth showing as they happen (resuming, warnings,
    the jackknife's taggers); ``reporter.note`` the notes about the run, before training starts.
    ``data``: the sentences to train and select on, already read (a jackknife's fold tagger
    trains on part of ``request.train``); None: read them as ``request`` says (:func:`read_data`).

    With ``request.jackknife`` the parser's POS columns are first replaced by jackknifed
    predictions (:mod:`tagger.training.jackknife`: taggers in processes of their own, before
    this one reads the data); the summary then has a ``jackknife`` entry.

    Under ``torchrun`` (``WORLD_SIZE`` > 1) every process calls this: it joins the process group,
    trains its shard through DistributedDataParallel (``batch_size`` sentences per process, so
    the total batch is ``batch_size`` × processes) and only rank 0 writes the model and
    checkpoints (see :mod:`tagger.training.distributed`)."""
    if get_task(request.task).tagger_columns:  # a tagger then a model, jackknifed, in one file
        from tagger.training import pipeline

        return pipeline.train(request, reporter, say)
    context = distributed.init(resolve_device(request.options.device))
    try:
        return _train(request, reporter, context, say, data)
    finally:
        distributed.shutdown()


def _model_class(request: TrainRequest) -> type:
    """The model family that trains ``request``: ``--model``, else the task's. A family whose
    config has no field for the task's column (``column`` of a tagger, ``tag_column`` of a
    parser) cannot learn the task."""
    task = get_task(request.task)
    cls = MODELS.get(request.model or task.model)
    if cls is None:
        raise TaggerError(f"no model for task {request.task!r} (known models: {', '.join(sorted(MODELS))})")
    if task.column_key and task.column_key not in {f.name for f in dataclasses.fields(cls.Config)}:
        raise TaggerError(f"model {cls.name} cannot learn --task {task.name} (its model is {task.model})")
    return cls


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
    task's defaults < preset < ``--config`` file < overrides (:func:`overrides_of`)."""
    task = get_task(request.task)
    column = request.column or (task.default_column(data.train) if task.column_from_data else None)
    own = task.model == cls.name  # the task's preset and defaults are its own family's
    preset = request.preset or (task.preset if own else cls.default_preset)
    return build_configs(cls, cls.PRESETS, preset, request.config_file, overrides_of(request, column),
                         task.defaults if own else {})


def _config(request: TrainRequest, cls: type, data: Data,
            jackknifed: Jackknife | None) -> tuple[Any, TrainingConfig, dict[str, Any], dict[str, Any] | None]:
    """The configs (:func:`configs`), the data checked against them (its POS retagged first with
    ``--pos-model``, or with the predictions of the ``jackknifed`` taggers); the meta naming
    that tagger (and the jackknife); and the jackknife's entry of the summary (None without)."""
    config, training = configs(request, cls, data)
    data.sentences_read = data.sentence_counts
    data.train, data.dev = cls.training_units(config, data.train), cls.training_units(config, data.dev)
    pos_meta: dict[str, Any] = {}
    jackknife_summary = None
    if request.pos_model:
        pos_meta = retag_for_parser(request.pos_model, cls, config, data.train + data.dev)
    elif jackknifed is not None:
        from tagger.training import jackknife

        accuracy = jackknife.apply(jackknifed, data)
        pos_meta, jackknife_summary = jackknife.parser_meta(jackknifed, accuracy), jackknife.summary(jackknifed, accuracy)
    column_key = get_task(request.task).column_key
    check_columns(cls, config, data.train, request.train.name, column_key)
    check_columns(cls, config, data.dev, request.dev.name if request.dev else request.train.name, column_key)
    return config, training, pos_meta, jackknife_summary


def _jackknife(request: TrainRequest, cls: type, context: distributed.Context,
               say: Callable[[str], None]) -> Jackknife | None:
    """The jackknife's taggers, trained (or reused) before the parser reads its data; None
    without ``request.jackknife``."""
    if request.jackknife is None:
        return None
    if context.distributed:
        raise TaggerError("--jackknife trains its taggers in processes of its own: run it without torchrun")
    from tagger.training import jackknife

    return jackknife.run(request, cls, say)


def _resumed(request: TrainRequest, say: Callable[[str], None]) -> dict[str, Any] | None:
    """The checkpoint to resume from (None: start afresh), announced through ``say``."""
    directory = request.options.checkpoint_dir
    if not request.options.resume or directory is None:
        return None
    from tagger.training import checkpoint

    resumed = checkpoint.read(directory)
    if resumed is None:
        say(f"no checkpoint in {directory}: starting afresh")
    else:
        trainer = resumed["trainer"]
        say(f"resuming from epoch {trainer['epoch']}, batch {trainer['batch']} ({directory})")
    return resumed


def _build_model(request: TrainRequest, cls: type, config: Any, data: Data, resumed: dict | None) -> tuple[Any, list[str]]:
    """The model to train (vocabularies from the checkpoint, the bootstrap source or the data),
    with pretrained vectors or bootstrapped weights; and notes saying which."""
    source = None
    if request.bootstrap and not resumed:
        if not cls.can_bootstrap:
            raise TaggerError(f"model {cls.name} cannot be bootstrapped")
        source, _ = model_file.load(request.bootstrap)
        if source.name != cls.name:
            raise TaggerError(f"--bootstrap needs a trained {cls.name} model, not a {source.name}", request.bootstrap)
    # A bootstrapped model shares its source's vocabularies, so that embedding rows line up.
    vocabs = resumed["vocabs"] if resumed else source.vocabs if source is not None else cls.vocabs_from(config, data.train)
    vocabs = distributed.broadcast(vocabs)  # every process indexes words as rank 0 does
    notes = []
    if request.encoder_from:  # also when resuming: the checkpoint's weights then replace the tagger's
        if not cls.can_take_encoder:
            raise TaggerError(f"model {cls.name} takes no encoder from another model (--encoder-from is for --task dep)")
        tagger, _ = model_file.load(request.encoder_from)
        try:
            model = cls.with_encoder(config, vocabs, tagger)
        except ValueError as e:
            raise TaggerError(str(e), request.encoder_from) from None
        if not resumed:
            notes.append(f"encoder initialised from {request.encoder_from}")
    else:
        model = cls(config, vocabs)
    if request.embeddings and not resumed:
        from tagger.modules.vectors import read_vectors

        words, vectors = read_vectors(request.embeddings)
        try:
            notes.append(f"{model.load_embeddings(words, vectors)} word vectors loaded")
        except TaggerError as e:
            raise TaggerError(e.message, request.embeddings) from None
    if source is not None:
        gates = [g.strip() for g in (request.gates or "").split(",") if g.strip()] or None
        try:
            model.bootstrap(source, gates)
        except ValueError as e:
            raise TaggerError(str(e), request.bootstrap) from None
        notes.append(f"bootstrapped from {request.bootstrap} ({','.join(gates) if gates else 'all gates'})")
    return model, notes


def _train(request: TrainRequest, reporter: TrainReporter, context: distributed.Context,
           say: Callable[[str], None], data: Data | None) -> dict[str, Any]:
    cls = _model_class(request)
    jackknifed = _jackknife(request, cls, context, say)
    data = data if data is not None else read_data(request)
    config, training, pos_meta, jackknife_summary = _config(request, cls, data, jackknifed)
    torch.manual_seed(request.options.seed)
    resumed = _resumed(request, say)
    model, notes = _build_model(request, cls, config, data, resumed)
    options = request.options
    options.device = distributed.process_device(context, resolve_device(options.device))
    model.to(options.device)
    net = distributed.wrap(model, context)  # DDP broadcasts rank 0's initial weights
    if context.distributed:
        torch.manual_seed(options.seed + 7919 * context.rank)  # dropout differs per process

    meta_base = {
        "task": request.task,
        "train": _where(request.train),
        "dev": data.dev_source,
        "train_sentences": data.sentence_counts[0],
        "dev_sentences": data.sentence_counts[1],
        "train_tokens": sum(len(s) for s in data.train),
        "seed": options.seed,
        "processes": context.world,
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    facts, data_notes = cls.training_meta(config, data.train)  # e.g. non-projective trees to skip
    meta_base.update(facts, **pos_meta)
    notes += data_notes
    for note in notes:  # before training starts, not after it
        reporter.note(note)

    saves: list[int] = []  # the epochs whose model this process wrote

    def save_best(meta: dict[str, Any]) -> None:
        model_file.save(request.out, model, {**meta_base, **meta}, training)
        saves.append(meta["epoch"])

    for warning in data.warnings:
        say(warning)
    try:
        state: TrainState = fit(model, data.train, data.dev, training, options, save_best, reporter,
                                net=net, shard=(context.rank, context.world))
    except NothingTrained as e:
        raise TaggerError(e.message, request.train.name) from None
    if context.is_main:
        check_saved(request.out, len(saves), state, training.max_epochs, resumed is not None)
    summary = _summary(request, cls, state, data, context, notes)
    if jackknife_summary is not None:
        summary["jackknife"] = jackknife_summary
    return summary


def _summary(request: TrainRequest, cls: type, state: TrainState, data: Data, context: distributed.Context,
             notes: list[str]) -> dict[str, Any]:
    tokens = distributed.total(state.tokens)
    return {
        "model": request.out,
        "name": cls.name,
        "task": request.task,
        "best_dev": 100.0 * state.best_score,  # percent, as every score the tagger prints
        "dev_metric": state.metric_name,
        "best_epoch": state.best_epoch,
        "epochs": len(state.history),
        "seconds": round(state.elapsed, 1),
        "train_tokens_per_second": round(tokens / state.elapsed) if state.elapsed else None,
        "train_sentences": data.sentence_counts[0],
        "dev": data.dev_source,
        "dev_sentences": data.sentence_counts[1],
        "dev_held_out": data.held_out,
        "processes": context.world,
        "notes": notes,
    }


def retag_for_parser(pos_model: str, cls: type, config: Any, sentences: list[Sentence]) -> dict[str, Any]:
    """:func:`retag` the POS column the model ``cls`` of ``config`` reads (``cls.pos_column``: of
    a parser's ``upos+feats`` the tagger predicts the upos part); returns the meta naming the
    tagger, which the parser names when it is given untagged input."""
    column = cls.pos_column(config)
    if column is None:
        raise TaggerError(f"--pos-model: this {cls.name} reads no POS (features=replace, encoder_tag_dim=0), so "
                          "there is nothing to retag; leave --pos-model out", pos_model)
    retag(pos_model, column, sentences)
    return {"pos_model": os.path.abspath(pos_model), "pos_model_column": column}


def retag(pos_model: str, column: str | None, sentences: list[Sentence]) -> None:
    """Replace ``column`` of ``sentences`` with the predictions of the tagger in ``pos_model``, so
    that a parser trains (and selects its best epoch) on the POS it will see at tagging time.
    ``column`` gets the tagger's column of that name (a tagger without it is refused); a tagger
    of several columns (``upos,feats``) also replaces its other columns (FEATS, which a parser of
    ``upos+feats`` reads), each under its own name."""
    from tagger.inference import predict

    tagger, _ = model_file.load(pos_model)
    if tagger.kind != "tagger":
        raise TaggerError(f"--pos-model must be a tagger model, this is a {tagger.name} model", pos_model)
    if column is None:
        raise TaggerError("--pos-model retags the POS column a parser reads (--task dep)", pos_model)
    outputs = tagger.output_columns
    if column not in outputs:  # a CCG supertagger is no parser's UPOS
        raise TaggerError(f"--pos-model: this tagger predicts {', '.join(outputs)}, not the {column} the parser reads: "
                          f"give a tagger of {column} (or a parser of its column, --set tag_column=NAME)", pos_model)
    for sentence, prediction in zip(sentences, predict(tagger, sentences)):
        predicted = Sentence(sentence.words, {})
        tagger.annotate(predicted, prediction)
        sentence.columns.update({name: predicted.columns[name] for name in outputs})


def check_columns(cls: type, config: Any, sentences: Sequence[Sentence], path: str, column_key: str = "column") -> None:
    """Every sentence has what the model learns from (``cls.required_columns``); a one-line error
    naming the first that does not, and the config key that named the column (``column_key`` is
    the one ``--column`` sets). A column whose ``_`` is a value (FEATS,
    :data:`~tagger.corpus.records.UNDERSCORE_VALUE_COLUMNS`) may hold only ``_`` in a sentence,
    but not in all of them."""
    columns = cls.required_columns(config)
    # the config keys that name columns (column, aux_column, tag_column), by the column they name
    keys = {name: key for key, value in config_to_dict(config).items() if key.endswith("column") and value
            for name in str(value).split(",")}

    def hint(name: str) -> str:
        if name not in keys:  # no option named it: the model's own (a parser's heads and relations)
            return f"a {cls.name} model learns from it: the training data needs it in every sentence"
        key = keys[name]
        return "choose another with --column" if key == column_key else f"{key} must name a column the training data has"

    for sentence in sentences:
        for name in columns:
            if not sentence.has(name) and not (name in UNDERSCORE_VALUE_COLUMNS and name in sentence.columns):
                raise TaggerError(f"no '{name}' annotation in this sentence ({hint(name)})", sentence.source or path,
                                  sentence.line)
    for name in columns:
        if name in UNDERSCORE_VALUE_COLUMNS and sentences and not any(sentence.has(name) for sentence in sentences):
            raise TaggerError(f"no '{name}' annotation in any sentence (only '_'; {hint(name)})", path)
