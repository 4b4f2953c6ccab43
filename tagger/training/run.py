"""The single-model runner: read data, build the model, fit, write the model file.

:func:`train` trains one model of one request (:class:`~tagger.training.request.TrainRequest`).
What runs around it comes in through :class:`Hook` objects: the jackknife's taggers train before
the data is read, and their tags go into it before the model is built
(:func:`tagger.training.jackknife.hooks`). Which runner a request needs (a pipeline, a
jackknifed parser, a plain model) is decided above, by :mod:`tagger.training.dispatch`.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import torch

from tagger import model_file
from tagger.config import TrainingConfig, config_from_dict, config_to_dict
from tagger.corpus.records import UNDERSCORE_VALUE_COLUMNS, Sentence
from tagger.devices import resolve_device
from tagger.errors import TaggerError
from tagger.models import MODELS
from tagger.progress import plural
from tagger.tasks import get_task
from tagger.training import distributed
from tagger.training.jobs import read_json, write_json
# The request and data specs, named here too for the callers that import them from this module.
from tagger.training.request import (HOLD_OUT_EVERY, SPLITS, TASKS, Data, DataSpec,  # noqa: F401
                                     TrainReporter, TrainRequest, configs, default_column, hold_out, overrides_of,
                                     read_data, read_sentences, split_files, where)
from tagger.training.trainer import NothingTrained, RunOptions, TrainState, check_saved, evaluate, fit


class Hook(Protocol):
    """Work around one model's training: ``before_data`` runs before its data is read (the
    jackknife's taggers train there, in processes of their own); ``on_data`` may change the
    data (retag its POS) and returns what the model file's meta and the run's summary gain."""

    def before_data(self, request: TrainRequest, cls: type, context: distributed.Context,
                    say: Callable[[str], None]) -> None: ...

    def on_data(self, data: Data) -> tuple[dict[str, Any], dict[str, Any]]: ...


def train(request: TrainRequest, reporter: TrainReporter, say: Callable[[str], None] = lambda line: None,
          data: Data | None = None, hooks: Sequence[Hook] = ()) -> dict[str, Any]:
    """Train and save one model; returns a plain summary (for tables and ``--json``); scores in
    it are percentages. ``say`` gets the lines worth showing as they happen (resuming, warnings,
    the jackknife's taggers); ``reporter.note`` the notes about the run, before training starts.
    ``data``: the sentences to train and select on, already read (a jackknife's fold tagger
    trains on part of ``request.train``); None: read them as ``request`` says (:func:`read_data`).
    ``hooks``: what runs around it (:class:`Hook`); a jackknifed request needs the jackknife's
    (:func:`tagger.training.dispatch.train` gives them), a pipeline its own trainer.

    Under ``torchrun`` (``WORLD_SIZE`` > 1) every process calls this: it joins the process group,
    trains its shard through DistributedDataParallel (``batch_size`` sentences per process, so
    the total batch is ``batch_size`` × processes) and only rank 0 writes the model and
    checkpoints (see :mod:`tagger.training.distributed`)."""
    if get_task(request.task).tagger_columns or (request.jackknife is not None and not hooks):
        raise TaggerError(f"--task {request.task}{' --jackknife' if request.jackknife else ''} trains several "
                          f"models: train it through tagger.training.dispatch.train")
    context = distributed.init(resolve_device(request.options.device))
    try:
        return _train(request, reporter, context, say, data, hooks)
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


def _config(request: TrainRequest, cls: type, data: Data,
            hooks: Sequence[Hook]) -> tuple[Any, TrainingConfig, dict[str, Any], dict[str, Any]]:
    """The configs (:func:`configs`), the data checked against them (its POS retagged first with
    ``--pos-model``, or by the ``hooks``: the jackknifed taggers' predictions); the meta naming
    that tagger (and the jackknife); and the entries the hooks add to the summary."""
    config, training = configs(request, cls, data)
    data.sentences_read, data.words_read = data.sentence_counts, data.word_counts
    data.train, data.dev = cls.training_units(config, data.train), cls.training_units(config, data.dev)
    pos_meta: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    if request.pos_model:
        pos_meta = retag_for_parser(request.pos_model, cls, config, data.train + data.dev)
    else:
        for hook in hooks:
            meta, entries = hook.on_data(data)
            pos_meta.update(meta)
            extra.update(entries)
    column_key = get_task(request.task).column_key
    check_columns(cls, config, data.train, request.train.name, column_key)
    check_columns(cls, config, data.dev, request.dev.name if request.dev else request.train.name, column_key)
    return config, training, pos_meta, extra


#: The run's identity beside its checkpoints (:func:`run_stamp`), written when it starts afresh.
RUN_STAMP = "run.json"
#: What a resumed run may change: how long it goes on.
RESUMABLE_CHANGES = ("max_epochs", "patience")


def _resumed(request: TrainRequest, say: Callable[[str], None]) -> dict[str, Any] | None:
    """The checkpoint to resume from (None: start afresh), announced through ``say``; a one-line
    error where it is of another run (:func:`run_stamp`: other data, column, settings or seed),
    which resuming would mix into this one. A run started afresh stamps its checkpoint folder."""
    directory = request.options.checkpoint_dir
    if directory is None:
        return None
    stamp, path = run_stamp(request), Path(directory) / RUN_STAMP
    if not request.options.resume:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, stamp)  # (atomic: every process of a distributed run writes the same)
        return None
    from tagger.training import checkpoint

    resumed = checkpoint.read(directory)
    if resumed is None:
        say(f"no checkpoint in {directory}: starting afresh")
        write_json(path, stamp)
        return None
    before = read_json(path)  # (none: a checkpoint of an older version, taken as it is)
    if isinstance(before, dict) and before != stamp:
        changed = ", ".join(key for key in stamp if stamp[key] != before.get(key))
        raise TaggerError(f"the checkpoint is of another run (not the same {changed}): resume with the same data and "
                          "settings (only --max-epochs, --patience and --max-minutes may change), or train afresh "
                          "without --resume", str(directory))
    trainer = resumed["trainer"]
    say(f"resuming from epoch {trainer['epoch']}, batch {trainer['batch']} ({directory})")
    return resumed


def run_stamp(request: TrainRequest) -> dict[str, Any]:
    """What makes a run the one its checkpoints are of: the task, model, column and settings
    (but :data:`RESUMABLE_CHANGES`), the pretrained inputs, the seed, each data file's path,
    size and time of change, and the model file (its best epochs so far are there)."""
    def files(spec: DataSpec | None) -> list | None:
        if spec is None:
            return None
        return [[os.path.abspath(f), f.stat().st_size, f.stat().st_mtime_ns] for f in spec.files()] + [
            spec.fmt, spec.columns, spec.max_sentences]

    overrides = [o for o in request.overrides if o.split("=", 1)[0].strip() not in RESUMABLE_CHANGES]
    return {"task": request.task, "model": request.model, "column": request.column, "preset": request.preset,
            "config": files(DataSpec(request.config_file)) if request.config_file else None, "settings": overrides,
            "arch": request.arch, "encoder": request.encoder, "batch_size": request.batch_size,
            "embeddings": request.embeddings, "bootstrap": request.bootstrap, "pos_model": request.pos_model,
            "encoder_from": request.encoder_from, "seed": request.options.seed, "out": os.path.abspath(request.out),
            "train": files(request.train), "dev": files(request.dev)}


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
    if resumed:  # the model as it was saved (sizes set in training, such as a table of pretrained vectors')
        config = config_from_dict(type(config), resumed["config"], from_file=True)
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
    if cls.takes_transformer and not resumed and not request.encoder_from:  # (a tagger's encoder brings its own)
        notes += [note for note in [model.load_transformer()] if note]
    if request.embeddings and not resumed:
        # only the rows the training words may use (an encoder taken from another model brings its own words)
        notes.append(attach_vectors(model, request.embeddings, None if request.encoder_from else vocabs.get("words")))
    if source is not None:
        gates = [g.strip() for g in (request.gates or "").split(",") if g.strip()] or None
        try:
            model.bootstrap(source, gates)
        except ValueError as e:
            raise TaggerError(str(e), request.bootstrap) from None
        notes.append(f"bootstrapped from {request.bootstrap} ({','.join(gates) if gates else 'all gates'})")
        data.warnings += bootstrap_gaps(cls.vocabs_from(config, data.train), vocabs, request.bootstrap)
    return model, notes


def bootstrap_gaps(ours: dict[str, list[str]], theirs: dict[str, list[str]], source: str,
                   share: float = 0.5) -> list[str]:
    """Warnings where a bootstrapped parser, which takes its source's vocabularies (``theirs``),
    would miss much of its training data's (``ours``, as the data alone would give them): more
    than ``share`` of the training words unknown to it, or relations it can never predict (an
    FFN trained on other data, or on a part of these)."""
    warnings = []
    words = ours.get("words", [])
    unknown = set(words) - set(theirs.get("words", ()))
    if words and len(unknown) > share * len(words):
        warnings.append(f"warning: --bootstrap {source}: {len(unknown) / len(words):.0%} of the training words are not in "
                        "its vocabulary, which this parser takes: it reads them as unknown (was it trained on other data?)")
    plain = ours.get("labels", [])[: int((ours.get("plain_labels") or [len(ours.get("labels", []))])[0])]  # not lifted ones
    labels = [label for label in plain if label not in set(theirs.get("labels", ()))]
    if labels:
        warnings.append(f"warning: --bootstrap {source}: {len(labels)} relations of the training data are not among "
                        f"its labels ({', '.join(labels[:3])}{', ...' if len(labels) > 3 else ''}): this parser can "
                        "never predict them")
    return warnings


def unseen_dev_values(model: Any, train: Sequence[Sentence], dev: Sequence[Sentence], share: float = 0.2) -> list[str]:
    """Warnings for each column a tagger learns (a dependency parser: its relations) whose dev
    values are, for more than ``share`` of the dev tokens, values no training sentence has (a
    dev file annotated with another tag set: UD Vietnamese VTB's dev writes XPOS ``PUNCT``,
    ``ADV`` where train and test write ``.``, ``Adv``): that column's dev score, and the model
    selection it drives, then say little."""
    learned = model.output_columns if model.kind == "tagger" else [c for c in model.output_columns if c == "deprel"]
    warnings = []
    for column in learned:  # a tagger's columns, a dependency parser's relations
        seen = {value for sentence in train for value in sentence.columns.get(column, ())}
        values = [value for sentence in dev for value in sentence.columns.get(column, ()) if value != "_"]
        unseen = Counter(value for value in values if value not in seen)
        if values and sum(unseen.values()) > share * len(values):
            common = ", ".join(value for value, _ in unseen.most_common(3))
            warnings.append(f"warning: {100 * sum(unseen.values()) / len(values):.0f}% of the dev {column} values never "
                            f"occur in the training data ({common}, ...): its dev score, and the model selection it "
                            "drives, say little (is dev annotated with the same tag set?)")
    return warnings


def unannotated_tokens(model: Any, train: Sequence[Sentence]) -> list[str]:
    """Warnings for each column a tagger learns where training tokens hold ``_`` (unannotated)
    in sentences that have the column (a sentence without it at all is refused): the tagger
    learns ``_`` as a tag like any other, and predicts it. FEATS's ``_`` (no features) is a value."""
    if model.kind != "tagger":
        return []
    warnings = []
    for column in model.output_columns:
        if column in UNDERSCORE_VALUE_COLUMNS:
            continue
        values = [value for sentence in train for value in sentence.columns.get(column, ())]
        missing = values.count("_")
        if missing:
            share = 100 * missing / len(values)
            warnings.append(f"warning: {missing:,} of the {len(values):,} training tokens ({share:.1f}%) have no {column} "
                            f"('_'): the tagger learns '_' as a {column} tag and will predict it (fill them, or leave "
                            f"their sentences out, to learn {column} alone)")
    return warnings


def attach_vectors(model: Any, source: str, words: Sequence[str] | None) -> str:
    """Give ``model`` the pretrained vectors of ``source`` (a file or a package name, as
    ``--embeddings`` takes it), reading only the rows of ``words`` (None: all); the note saying
    how many rows it took. A one-line error naming ``source`` where they do not fit."""
    from tagger.modules.vectors import read_vectors

    found, vectors = read_vectors(source, words)
    try:
        return f"{model.load_embeddings(found, vectors)} word vectors loaded"
    except TaggerError as e:
        raise TaggerError(e.message, source) from None


def _train(request: TrainRequest, reporter: TrainReporter, context: distributed.Context,
           say: Callable[[str], None], data: Data | None, hooks: Sequence[Hook]) -> dict[str, Any]:
    cls = _model_class(request)
    for hook in hooks:
        hook.before_data(request, cls, context, say)
    data = data if data is not None else read_data(request)
    config, training, pos_meta, extra = _config(request, cls, data, hooks)
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
        "train": where(request.train),
        "dev": data.dev_source,
        "train_sentences": data.sentence_counts[0],
        "dev_sentences": data.sentence_counts[1],
        "train_tokens": sum(len(s) for s in data.train),
        "seed": options.seed,
        **({"embeddings": request.embeddings} if request.embeddings else {}),
        **({"bootstrapped_from": os.path.abspath(request.bootstrap), "gates": request.gates or "all"}
           if request.bootstrap else {}),
        "processes": context.world,
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    facts, data_notes = cls.training_meta(config, data.train)  # e.g. non-projective trees to skip
    meta_base.update(facts, **pos_meta)
    notes += data_notes
    for note in [*notes, start_note(model, data, options.device)]:  # before training starts, not after it
        reporter.note(note)

    saves: list[int] = []  # the epochs whose model this process wrote

    def save_best(meta: dict[str, Any]) -> None:
        model_file.save(request.out, model, {**meta_base, **meta}, training)
        saves.append(meta["epoch"])

    for warning in data.warnings + unseen_dev_values(model, data.train, data.dev) + unannotated_tokens(model, data.train):
        say(warning)
    try:
        state: TrainState = fit(model, data.train, data.dev, training, options, save_best, reporter,
                                net=net, shard=(context.rank, context.world))
    except NothingTrained as e:
        raise TaggerError(e.message, request.train.name) from None
    rising = still_rising(state, training.max_epochs)
    if rising:
        say(f"note: {rising}")
        notes = [*notes, rising]
    summary = {**_summary(request, cls, state, data, context, notes), **extra}
    if context.is_main:
        check_saved(request.out, len(saves), state, training.max_epochs, resumed is not None)
        tuned = tune_saved(request.out, data.dev, training, options)
        if tuned is not None:
            summary["best_dev"], summary["decoding"] = 100.0 * tuned[0], tuned[1]
    return summary


def start_note(model: torch.nn.Module, data: Data, device: str) -> str:
    """The line a run starts with once its data is read and its model built: what it trains and
    selects on, how many weights it trains, where (a long run's log says at once what it does)."""
    (train, dev), (train_words, dev_words) = data.sentence_counts, data.word_counts
    held = "held-out training " if data.held_out else ""
    train_text = f"{plural(train, 'sentence')} ({plural(train_words, 'word')})"
    dev_text = f"{plural(dev, held + 'sentence')} ({plural(dev_words, 'word')})"
    weights = sum(p.numel() for p in model.parameters() if p.requires_grad)
    where = f"{device}, {plural(torch.get_num_threads(), 'thread')}" if str(device) == "cpu" else str(device)
    return f"training on {train_text}, dev {dev_text}; {plural(weights, 'trainable weight')}; {where}"


def still_rising(state: TrainState, max_epochs: int) -> str | None:
    """A note where training ended at ``max_epochs`` with its best dev score in the last epoch,
    or in the last fifth of the epochs (a small corpus's few updates: more epochs would likely
    still gain; 30 sentences, 120 updates: LAS 2.5, where 1,600 gave 61), else None."""
    epochs = sorted({record["epoch"] for record in state.history})
    if len(epochs) < 2 or epochs[-1] < max_epochs or state.best_epoch <= max_epochs - max(1, max_epochs // 5):
        return None
    if state.best_epoch == epochs[-1]:
        return (f"the dev score was still rising in the last epoch, {max_epochs} ({state.steps:,} updates): "
                f"more epochs may gain (--max-epochs)")
    return (f"the dev score was still rising near the end (best at epoch {state.best_epoch} of {max_epochs}, "
            f"{state.steps:,} updates in all): more epochs may gain (--max-epochs)")


def tune_saved(path: str, dev: Sequence[Sentence], training: Any, options: RunOptions) -> tuple[float, dict[str, Any]] | None:
    """The best model saved at ``path`` with the decoding choices its ``dev`` score decides
    (:meth:`Model.tune_decoding`), saved again with its new dev score; (that score, the
    choices), or None where there were none to make, or ``path`` is no regular file (``--out
    /dev/null``: written through, nothing to read back)."""
    if not os.path.isfile(path):
        return None
    best, meta = model_file.load(path, options.device)
    decoding = best.tune_decoding(dev)
    if not decoding:
        return None
    score = evaluate(best, dev, options.eval_max_tokens).score
    model_file.save(path, best, {**meta, "dev_score": score, "decoding": decoding}, training)
    return score, decoding


def _summary(request: TrainRequest, cls: type, state: TrainState, data: Data, context: distributed.Context,
             notes: list[str]) -> dict[str, Any]:
    return summary(request.out, cls.name, request.task, state, data, distributed.total(state.tokens),
                   data.sentence_counts, context.world, notes)


def summary(out: str, name: str, task: str, state: TrainState, data: Data, tokens: int, counts: Sequence[int],
            processes: int = 1, notes: Sequence[str] = ()) -> dict[str, Any]:
    """What a training run (``tagger train``, ``tagger distill``) sums itself up with: scores in
    percent; ``tokens`` trained on (all processes'), ``counts`` the train and dev sentences."""
    return {
        "model": out,
        "name": name,
        "task": task,
        "best_dev": 100.0 * state.best_score,  # percent, as every score the tagger prints
        "dev_metric": state.metric_name,
        "best_epoch": state.best_epoch,
        "epochs": len({record["epoch"] for record in state.history}),  # (a budget's part of one, resumed: one)
        "updates": state.steps,  # optimizer steps (each process's, under DDP)
        "seconds": round(state.elapsed, 1),
        "train_tokens_per_second": round(tokens / state.elapsed) if state.elapsed else None,
        "train_sentences": counts[0],
        "dev": data.dev_source,
        "dev_sentences": counts[1],
        "dev_held_out": data.held_out,
        "processes": processes,
        "notes": list(notes),
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
            for name in str(value).replace("+", ",").split(",")}

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
    for name in cls.pos_columns(config):  # read as input: '_' in some sentences, not in all (tagging would refuse it)
        if sentences and not any(sentence.has(name) for sentence in sentences):
            present = [other for other in ("upos", "xpos") if other != name and any(s.has(other) for s in sentences)]
            has = f"; it has {present[0]}" if present else ""
            raise TaggerError(f"no '{name}' annotation in any sentence, and the {cls.name} model reads it{has} "
                              f"({hint(name)})", path)
