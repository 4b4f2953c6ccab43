"""Knowledge distillation: a (smaller) tagger trained on the averaged distributions of trained taggers.

``tagger distill --teacher A.tagger --teacher B.tagger --preset small --train T --dev D --out S.tagger``
(:func:`distill`): the teachers must be taggers of the same family predicting the student's
columns, each column with the same label set in every teacher (labels are matched by name, so
their order may differ). The student learns every column its teachers all predict whole
(:meth:`~tagger.models.base.Model.soft_columns`: a tagger of UPOS, XPOS and FEATS teaches a
student of the three), or those of ``--column`` (``upos``, ``upos,xpos``).
Before training, every training sentence is tagged once by every teacher (batched, without
gradients, one forward pass for all its columns): per column, each teacher's distribution at
``temperature`` (``p^(1/T)`` renormalised, which is ``softmax(scores / T)``) is averaged over
the teachers, and of each token only the ``top_k`` most probable labels are kept, renormalised
(:class:`SoftTable`: ``8 × (4 + 4)`` bytes a token and column at ``top_k`` 8, 64 MB for a
million tokens, whatever the size of the tag set).

The student (any preset or config of the teachers' family, ``small`` by default) covers every
teacher label of its columns and trains through the one training loop (:func:`tagger.training.trainer.fit`),
whose ``collate`` here adds each batch's soft targets (:class:`DistillCollate`,
:meth:`~tagger.models.base.Model.with_soft_targets`); its loss is ``gold_weight`` × the gold
cross-entropy + (1 − ``gold_weight``) × T² × the cross-entropy to the soft targets
(:class:`~tagger.models.base.SoftTargets`), per column. Dev scoring, lr halving and early stopping are the
student's own accuracy on gold dev, as in ``tagger train``. The student is an ordinary model
file whose meta names its teachers (``distilled_from``, each with its accuracy on this dev)
and the ensemble's dev accuracy (``distillation``).
"""

from __future__ import annotations

import math

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import torch

from tagger import model_file
from tagger.corpus.batching import token_batches
from tagger.corpus.records import Sentence
from tagger.devices import resolve_device
from tagger.errors import TaggerError
from tagger.evaluation.metrics import TagMetric
from tagger.models.base import SoftTargets
from tagger.tasks import TASKS
from tagger.training.request import (Data, DataSpec, RunOptions, refuse_overwriting, refuse_unwritable, TrainReporter, TrainRequest, configs, read_data,
                                     read_sentences, where)
from tagger.training.run import attach_vectors, check_columns, start_note, summary, tune_saved
from tagger.training.trainer import NothingTrained, TrainState, check_saved, fit

#: The student's preset when none is given.
DEFAULT_PRESET = "small"
#: The gold cross-entropy's share of the loss when not given (the rest is the teachers').
DEFAULT_GOLD_WEIGHT = 0.5
#: Labels kept per token of the teachers' averaged distribution.
DEFAULT_TOP_K = 8


@dataclass
class DistillRequest:
    """What :func:`distill` trains: the student's data, config (as ``tagger train`` takes them)
    and output, its teachers (model files) and how it learns from them."""

    teachers: tuple[str, ...]
    train: DataSpec
    dev: DataSpec | None  # None: every 20th training sentence held out (tagger.training.run.hold_out)
    out: str
    preset: str | None = None  # None: DEFAULT_PRESET
    column: str | None = None  # the student's columns (--column, "upos,xpos"); None: every one its teachers teach
    config_file: str | None = None
    overrides: tuple[str, ...] = ()  # "key=value" (--set)
    max_epochs: int | None = None
    batch_size: int | None = None
    patience: int | None = None
    temperature: float = 1.0
    gold_weight: float = DEFAULT_GOLD_WEIGHT
    top_k: int = DEFAULT_TOP_K
    embeddings: str | None = None  # the student's pretrained vectors (--embeddings): a file or a package name
    unlabeled: DataSpec | None = None  # more text (--unlabeled): its words, labelled by the teachers alone
    options: RunOptions = field(default_factory=RunOptions)

    def __post_init__(self) -> None:
        if not self.teachers:
            raise TaggerError("distillation needs at least one teacher (--teacher MODEL)")
        refuse_overwriting(self.out, list(self.teachers), self.train.path, self.dev.path if self.dev else None,
                           self.unlabeled.path if self.unlabeled else None, self.config_file)
        refuse_unwritable(self.out)
        if not 0 < self.temperature < math.inf:
            raise TaggerError(f"--temperature must be a positive number, not {self.temperature}")
        if not 0.0 <= self.gold_weight < 1.0:
            raise TaggerError(f"--gold-weight must be in [0, 1) (1 would ignore the teachers), not {self.gold_weight}")
        if self.top_k < 1:
            raise TaggerError(f"--top-k must be at least 1, not {self.top_k}")


@dataclass
class Teachers:
    """The loaded teachers (eval mode), their paths and metas, the columns they teach (the
    student's) and per column their common label set (the first teacher's order)."""

    models: list[Any]
    paths: list[str]
    metas: list[dict[str, Any]]
    columns: list[str]
    labels: dict[str, list[str]]


def load_teachers(paths: Sequence[str], device: str | torch.device = "cpu",
                  columns: Sequence[str] | None = None) -> Teachers:
    """The teachers in ``paths`` (:func:`load_teacher_models`), teaching ``columns``
    (:func:`teaching`; None: every column they all predict whole, :func:`common_columns`)."""
    models, metas = load_teacher_models(paths, device)
    return teaching(models, metas, paths, common_columns(models, paths) if columns is None else columns)


def load_teacher_models(paths: Sequence[str], device: str | torch.device = "cpu") -> tuple[list[Any], list[dict[str, Any]]]:
    """The models and metas in ``paths``; a one-line error for one that is no tagger giving
    distributions or is of another family than the first."""
    models, metas = [], []
    for path in paths:
        model, meta = model_file.load(path, device)
        if model.kind != "tagger" or not model.gives_distribution or not model.can_distill:
            raise TaggerError(f"a teacher must be a tagger giving tag distributions, this is a {model.name} model", path)
        if models and type(model) is not type(models[0]):
            raise TaggerError(f"this teacher is a {model.name} model, the first ({paths[0]}) a {models[0].name}", path)
        models.append(model)
        metas.append(meta)
    return models, metas


def common_columns(models: Sequence[Any], paths: Sequence[str]) -> list[str]:
    """The columns every one of ``models`` predicts whole, in the first one's order; a one-line
    error where there is none."""
    taught = [_soft_columns(model) for model in models]
    common = list(taught[0])
    for path, theirs in zip(paths[1:], taught[1:]):
        common = [c for c in common if c in theirs]
        if not common:
            raise TaggerError(f"this teacher predicts {', '.join(theirs)}, the first ({paths[0]}) "
                              f"{', '.join(taught[0])}: teachers must predict the same column", path)
    return common


def teaching(models: list[Any], metas: list[dict[str, Any]], paths: Sequence[str], columns: Sequence[str]) -> Teachers:
    """:class:`Teachers` of ``columns``; a one-line error where a teacher does not predict one of
    them whole, or has another label set for one than the first teacher."""
    for path, model in zip(paths, models):
        theirs = _soft_columns(model)
        missing = [c for c in columns if c not in theirs]
        if missing:
            raise TaggerError(f"this teacher does not predict {', '.join(missing)} (it predicts "
                              f"{', '.join(theirs) or 'none whole'}): every teacher must predict each column the "
                              f"student learns", path)
    labels = {column: _common_labels(models, paths, column) for column in columns}
    return Teachers(models, [os.fspath(p) for p in paths], metas, list(columns), labels)


def _soft_columns(model: Any) -> list[str]:
    return type(model).soft_columns(model.config)


def _common_labels(models: Sequence[Any], paths: Sequence[str], column: str) -> list[str]:
    """The first teacher's labels of ``column``; a one-line error where another's set differs."""
    first = models[0].soft_labels(column)
    for model, path in zip(models[1:], paths[1:]):
        ours, theirs = set(model.soft_labels(column)), set(first)
        if ours != theirs:
            extra, missing = sorted(ours - theirs)[:5], sorted(theirs - ours)[:5]
            what = "; ".join(part for part in (f"only it has {', '.join(extra)}" if extra else "",
                                               f"it lacks {', '.join(missing)}" if missing else "") if part)
            raise TaggerError(f"this teacher's {column} labels differ from the first's ({paths[0]}): {what}; "
                              f"teachers must have the same label set", path)
    return list(first)


#: Label ids per column: ``{column: {label: id}}``, each column's ids 0 .. n − 1.
LabelIds = dict[str, dict[str, int]]


def teacher_distributions(teachers: Teachers, sentences: Sequence[Sentence], label_ids: LabelIds,
                          temperature: float = 1.0,
                          max_tokens: int = 8192) -> Iterator[tuple[list[int], dict[str, torch.Tensor]]]:
    """Per batch of non-empty ``sentences`` (grouped by length): their indices and, per column
    of ``label_ids``, every teacher's distribution at ``temperature`` over that column's labels
    numbered as ``label_ids`` says, ``[M, B, T, C]`` (M teachers; 0 at padding), on the
    teachers' device. Each teacher runs once a batch for all the columns."""
    device = next(teachers.models[0].parameters()).device
    maps = [{column: torch.tensor([ids[label] for label in model.soft_labels(column)], device=device)
             for column, ids in label_ids.items()} for model in teachers.models]
    nonempty = [i for i, s in enumerate(sentences) if len(s)]
    with torch.inference_mode():
        for group in token_batches([len(sentences[i]) for i in nonempty], max_tokens):
            ids = [nonempty[j] for j in group]
            chosen = [sentences[i] for i in ids]
            lengths = torch.tensor([len(s) for s in chosen], device=device)
            steps = int(lengths.max())
            mask = (torch.arange(steps, device=device)[None, :] < lengths[:, None]).unsqueeze(-1)  # [B, T, 1]
            out = {column: torch.zeros(len(teachers.models), len(ids), steps, len(numbers), device=device)
                   for column, numbers in label_ids.items()}
            for m, (model, where) in enumerate(zip(teachers.models, maps)):
                given = model.distributions(model.collate(chosen, with_gold=False).to(device))  # {column: [B, T, C_m]}
                for column, places in where.items():
                    probs = given[column]
                    if temperature != 1.0:
                        probs = probs.pow(1.0 / temperature)
                        probs = probs / probs.sum(-1, keepdim=True).clamp(min=1e-30)
                    out[column][m].index_add_(-1, places, probs.masked_fill(~mask, 0.0))
            yield ids, out


@dataclass
class SoftTable:
    """Every training token's soft targets in one column: the ``K`` best labels of the
    teachers' averaged distribution and their renormalised probabilities, ``ids`` and ``probs``
    ``[N, K]`` for the ``N`` tokens in sentence order, sentence ``i`` at rows ``starts[i]`` to
    ``starts[i] + len``. ``kept``: the mean probability mass of the ``K`` labels before
    renormalising."""

    ids: torch.Tensor  # [N, K] int32
    probs: torch.Tensor  # [N, K] float32
    starts: list[int]
    lengths: list[int]
    kept: float

    def targets(self, indices: Sequence[int], temperature: float, gold_weight: float) -> SoftTargets:
        """The soft targets of the sentences ``indices`` (in order), padded: ``[B, T, K]``."""
        steps, k = max(self.lengths[i] for i in indices), self.ids.shape[1]
        ids = torch.zeros(len(indices), steps, k, dtype=torch.long)
        probs = torch.zeros(len(indices), steps, k)
        for b, i in enumerate(indices):
            n, start = self.lengths[i], self.starts[i]
            ids[b, :n] = self.ids[start : start + n]
            probs[b, :n] = self.probs[start : start + n]
        return SoftTargets(ids, probs, temperature, gold_weight)


def soft_table(teachers: Teachers, sentences: Sequence[Sentence], label_ids: LabelIds, temperature: float,
               top_k: int, max_tokens: int = 8192) -> dict[str, SoftTable]:
    """Per column of ``label_ids`` (numbering the student's labels), the :class:`SoftTable` of
    ``sentences``."""
    lengths = [len(s) for s in sentences]
    starts = [0]
    for n in lengths[:-1]:
        starts.append(starts[-1] + n)
    ks = {column: min(top_k, len(ids)) for column, ids in label_ids.items()}
    ids = {column: torch.zeros(sum(lengths), k, dtype=torch.int32) for column, k in ks.items()}
    probs = {column: torch.zeros(sum(lengths), k) for column, k in ks.items()}
    kept = dict.fromkeys(label_ids, 0.0)
    for indices, dists in teacher_distributions(teachers, sentences, label_ids, temperature, max_tokens):
        for column, dist in dists.items():
            best, where = dist.mean(0).topk(ks[column], -1)  # [B, T, K]
            for b, i in enumerate(indices):
                n = lengths[i]
                mass = best[b, :n].sum(-1, keepdim=True)  # [n, 1]
                kept[column] += float(mass.sum())
                probs[column][starts[i] : starts[i] + n] = (best[b, :n] / mass).cpu()
                ids[column][starts[i] : starts[i] + n] = where[b, :n].to(torch.int32).cpu()
    total = max(1, sum(lengths))
    return {column: SoftTable(ids[column], probs[column], starts, lengths, kept[column] / total) for column in label_ids}


class DistillCollate:
    """The training loop's ``collate`` for a student: the model's own batch (with gold) of
    sentences of ``train``, carrying their rows of each column's ``tables`` (sentences known by
    identity)."""

    def __init__(self, model: Any, train: Sequence[Sentence], tables: dict[str, SoftTable], temperature: float,
                 gold_weight: float):
        self.model, self.tables = model, tables
        self.temperature, self.gold_weight = temperature, gold_weight
        self.index = {id(sentence): i for i, sentence in enumerate(train)}

    def __call__(self, sentences: Sequence[Sentence]) -> Any:
        indices = [self.index[id(s)] for s in sentences]
        soft = {column: table.targets(indices, self.temperature, self.gold_weight) for column, table in self.tables.items()}
        return self.model.with_soft_targets(self.model.collate(sentences), soft)


def own_label_ids(teachers: Teachers) -> LabelIds:
    """The teachers' own numbering of their columns' labels (:attr:`Teachers.labels`)."""
    return {column: {label: i for i, label in enumerate(labels)} for column, labels in teachers.labels.items()}


def dev_scores(teachers: Teachers, dev: Sequence[Sentence], max_tokens: int = 8192) -> tuple[list[float], float]:
    """Each teacher's accuracy on gold ``dev`` (its best label per token) and the ensemble's
    (the best label of the averaged distribution), as fractions; of several columns, the mean
    of their accuracies (as a student of them is scored)."""
    metrics = {column: [TagMetric() for _ in range(len(teachers.models) + 1)] for column in teachers.columns}
    for indices, dists in teacher_distributions(teachers, dev, own_label_ids(teachers), 1.0, max_tokens):
        for column, dist in dists.items():
            labels = teachers.labels[column]
            best = torch.cat([dist, dist.mean(0, keepdim=True)]).argmax(-1).tolist()  # [M + 1, B, T]
            for b, i in enumerate(indices):
                sentence, n = dev[i], len(dev[i])
                gold = sentence.column(column)
                for metric, rows in zip(metrics[column], best):
                    metric.update(sentence.words, gold, [labels[j] for j in rows[b][:n]])
    means = [sum(metrics[c][m].score for c in teachers.columns) / len(teachers.columns)
             for m in range(len(teachers.models) + 1)]
    return means[:-1], means[-1]


def pseudo_labelled(teachers: Teachers, sentences: Sequence[Sentence], max_tokens: int = 8192) -> list[Sentence]:
    """``sentences`` (their words alone) with the teachers' columns filled by the best label of
    their averaged distribution: text no one annotated, as a student learns it (the soft
    targets are the teachers' distributions there too; the "gold" label is their best)."""
    out = [Sentence(list(s.words), {}, s.source, s.line) for s in sentences if len(s)]
    for indices, dists in teacher_distributions(teachers, out, own_label_ids(teachers), 1.0, max_tokens):
        for column, dist in dists.items():
            labels = teachers.labels[column]
            best = dist.mean(0).argmax(-1).tolist()  # [B, T]
            for b, i in enumerate(indices):
                out[i].columns[column] = [labels[j] for j in best[b][: len(out[i])]]
    return out


def _student_task(meta: dict[str, Any], model: Any) -> str:
    """The task whose defaults the student takes: the first teacher's (``pos`` if unknown)."""
    task = meta.get("task")
    return task if task in TASKS and TASKS[task].model == model.name else "pos"


def distill(request: DistillRequest, reporter: TrainReporter, say: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Train a student on ``request.teachers``' averaged distributions (see the module text) and
    save it; returns the summary ``tagger train`` gives (scores in percent) with the teachers'
    and the ensemble's dev accuracies (``teachers``, ``ensemble_dev``) and the distillation's
    settings."""
    options = request.options
    options.device = resolve_device(options.device)
    models, metas = load_teacher_models(request.teachers, options.device)
    cls = type(models[0])
    task = _student_task(metas[0], models[0])
    train_request = TrainRequest(task=task, train=request.train, dev=request.dev, out=request.out,
                                 column=request.column or ",".join(common_columns(models, request.teachers)),
                                 preset=request.preset or DEFAULT_PRESET,
                                 config_file=request.config_file, overrides=request.overrides,
                                 max_epochs=request.max_epochs, batch_size=request.batch_size, patience=request.patience)
    data = read_data(train_request)
    config, training = configs(train_request, cls, data)
    teachers = teaching(models, metas, request.teachers, config.columns)
    started = time.perf_counter()
    extra = _unlabeled(request, teachers, options.eval_max_tokens)
    data.train = data.train + extra
    check_columns(cls, config, data.train, request.train.name)
    check_columns(cls, config, data.dev, request.dev.name if request.dev else request.train.name)
    torch.manual_seed(options.seed)
    soft = cls.soft_columns(config)  # the student's columns learnt from soft targets (all but FEATS per feature)
    model = cls(config, cls.vocabs_with_labels(config, cls.vocabs_from(config, data.train),
                                               {c: teachers.labels[c] for c in soft}))
    vectors_note = [attach_vectors(model, request.embeddings, model.vocabs.get("words"))] if request.embeddings else []
    label_ids = {column: {label: i for i, label in enumerate(model.soft_labels(column))} for column in soft}
    tables = soft_table(teachers, data.train, label_ids, request.temperature, request.top_k, options.eval_max_tokens)
    teacher_dev, ensemble_dev = dev_scores(teachers, data.dev, options.eval_max_tokens)
    soft_seconds = round(time.perf_counter() - started, 1)
    names = [os.path.abspath(p) for p in teachers.paths]
    distilled_from = [{"model": name, "dev_score": score, "own_dev_score": meta.get("dev_score")}
                      for name, score, meta in zip(names, teacher_dev, teachers.metas)]
    note = _soft_note(len(names), len(data.train), len(extra), soft_seconds, tables, teacher_dev, ensemble_dev)
    reporter.note(note)
    reporter.note(start_note(model, data, options.device))
    del teachers, models  # the student trains without them
    model.to(options.device)

    meta_base = _meta_base(request, task, data, distilled_from, ensemble_dev, tables)
    saves: list[int] = []  # the epochs whose model was written

    def save_best(meta: dict[str, Any]) -> None:
        model_file.save(request.out, model, {**meta_base, **meta}, training)
        saves.append(meta["epoch"])

    for warning in data.warnings:
        say(warning)
    collate = DistillCollate(model, data.train, tables, request.temperature, request.gold_weight)
    try:
        state: TrainState = fit(model, data.train, data.dev, training, options, save_best, reporter, collate=collate)
    except NothingTrained as e:
        raise TaggerError(e.message, request.train.name) from None
    check_saved(request.out, len(saves), state, training.max_epochs, options.resume)
    summary = _summary(request, cls.name, task, state, data)
    tuned = tune_saved(request.out, data.dev, training, options)  # its tag dictionary, chosen on dev as train's
    if tuned is not None:
        summary["best_dev"], summary["decoding"] = 100.0 * tuned[0], tuned[1]
    summary.update({
        "notes": [note, *vectors_note],
        "teachers": [{"model": name, "dev": 100.0 * score} for name, score in zip(names, teacher_dev)],
        "ensemble_dev": 100.0 * ensemble_dev,
        "soft_target_seconds": soft_seconds,
        "temperature": request.temperature,
        "gold_weight": request.gold_weight,
        "soft_columns": list(tables),
        "top_k": _top_k(tables),
        "kept_mass": 100.0 * _kept(tables),
    })
    return summary


def _top_k(tables: dict[str, SoftTable]) -> int:
    """The labels kept per token (the most of any column: fewer where a column has fewer labels)."""
    return max((table.ids.shape[1] for table in tables.values()), default=0)


def _kept(tables: dict[str, SoftTable]) -> float:
    """The mean over the columns of the mass their kept labels had."""
    return sum(table.kept for table in tables.values()) / max(1, len(tables))


def _soft_note(n_teachers: int, sentences: int, unlabeled: int, seconds: float, tables: dict[str, SoftTable],
               teacher_dev: list[float], ensemble_dev: float) -> str:
    """The line the run shows once the soft targets are made."""
    teachers_ = f"{n_teachers} teacher{'s' * (n_teachers != 1)}"
    more = f" ({unlabeled} of them unlabeled text, labelled by the teachers)" if unlabeled else ""
    return (f"soft targets of {teachers_} for {', '.join(tables)} on {sentences} sentences{more} in {seconds}s "
            f"(top {_top_k(tables)} labels keep {100 * _kept(tables):.2f}% of the mass); teachers' dev accuracy "
            f"{', '.join(f'{100 * s:.2f}' for s in teacher_dev)}, averaged {100 * ensemble_dev:.2f}")


def _unlabeled(request: DistillRequest, teachers: Teachers, max_tokens: int) -> list[Sentence]:
    """The sentences of ``--unlabeled`` (any format ``--train`` takes; only the words are read),
    :func:`pseudo_labelled`; none without it."""
    if request.unlabeled is None:
        return []
    sentences = read_sentences(request.unlabeled)
    if not sentences:
        raise TaggerError("no sentences in the unlabeled text", request.unlabeled.name)
    return pseudo_labelled(teachers, sentences, max_tokens)


def _meta_base(request: DistillRequest, task: str, data: Data, distilled_from: list[dict[str, Any]],
               ensemble_dev: float, tables: dict[str, SoftTable]) -> dict[str, Any]:
    """What the student's model file's meta says of its data and teachers (each save adds its epoch's)."""
    return {
        "task": task,
        "train": os.path.abspath(request.train.path) if isinstance(request.train.path, str) else request.train.name,
        "dev": data.dev_source,
        "train_sentences": len(data.train),
        "dev_sentences": len(data.dev),
        "train_tokens": sum(len(s) for s in data.train),
        "seed": request.options.seed,
        **({"embeddings": request.embeddings} if request.embeddings else {}),
        **({"unlabeled": where(request.unlabeled)} if request.unlabeled else {}),
        "processes": 1,
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
        "distilled_from": distilled_from,
        "distillation": {"teachers_dev_score": ensemble_dev, "temperature": request.temperature,
                         "gold_weight": request.gold_weight, "top_k": _top_k(tables), "kept_mass": _kept(tables),
                         "columns": list(tables)},
    }


def _summary(request: DistillRequest, name: str, task: str, state: TrainState, data: Data) -> dict[str, Any]:
    """What ``tagger train`` sums a run up with (scores in percent): :func:`tagger.training.run.summary`."""
    return summary(request.out, name, task, state, data, state.tokens, (len(data.train), len(data.dev)))
