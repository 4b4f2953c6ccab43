"""``tagger train --task pipeline``: a tagger of several columns feeding a parser, in one model file.

1. The tagger's columns: ``--column`` (``upos,xpos,feats``), else those of the task's
   ``tagger_columns`` the training data has. The parser reads the part of them its
   ``tag_column`` names (``--set tag_column=...``; by default ``upos+feats`` where a tenth of the
   training words or more have FEATS, else ``upos``, else ``xpos``).
2. Jackknifing (:mod:`tagger.training.jackknife`, ``--jackknife K``, 10 by default): ``K``
   taggers of those columns each tag the fold they never saw, one more is trained on all of
   train and tags dev. The parser trains on those tags, as it will see them on new text.
3. A tokenizer (``--task tokenize``), when the training CoNLL-U has ``# text`` comments and
   ``--no-tokenizer`` is not given: trained with its own preset (``--tokenizer-preset``, else
   the task's) on the same train and dev.
4. One pipeline file (:func:`tagger.model_file.save_pipeline`): the tokenizer (if any), the
   all-train tagger, then the parser. ``tagger tag --model OUT`` fills every column in one
   process; with a tokenizer it reads raw text.

The taggers and the parser's own model file stay in the work folder (``OUT.jackknife/``), so
that running the same command again reuses the finished taggers and only what is missing trains.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any, Callable

from tagger import model_file
from tagger.errors import TaggerError
from tagger.formats.base import file_digest
from tagger.tasks import get_task
from tagger.training import jackknife, run
from tagger.training.jackknife import ALL, MODEL, TAGS, WORK_SUFFIX, Jackknife, plan_jobs
from tagger.training.jobs import stamped, write_json
from tagger.training.members import member_requests, train_members
from tagger.training.request import PIPELINE_DECIDES, Data, DataSpec, JackknifeSettings, TrainReporter, TrainRequest, configs

#: The parser trained on jackknifed tags, in the work folder.
PARSER = "parser.model"
#: Folds when ``--jackknife`` is not given and the parser reads POS.
DEFAULT_FOLDS = 10
#: ``JackknifeSettings.folds`` when ``--jackknife`` is not given (:data:`PIPELINE_DECIDES`, from
#: :mod:`tagger.training.request`): :data:`DEFAULT_FOLDS` if the parser reads POS, no folds if it reads none.
#: The tokenizer, in the work folder.
TOKENIZER = "tokenizer.model"
#: What it was trained from and with (:func:`tokenizer_stamp`), written once it is.
TOKENIZER_STAMP = "tokenizer.json"
#: A training corpus of fewer words than this is *small*: where neither ``--preset`` nor
#: ``--config`` names the parser, the pipeline takes :func:`small_recipe`'s (docs/parser.md,
#: "Pipelines of small corpora": measured on Bosque, GSD and VTB, 12,000-33,000 words, and EWT's
#: 204,000, where it gains nothing for three times the training).
SMALL_WORDS = 50_000
#: The small-corpus recipe: the parser's preset, its jackknife folds (unless ``--jackknife``),
#: and the subword kinds its taggers embed beside ``subwords=auto``'s (unless ``--pos-set`` names some).
SMALL_PRESET, SMALL_FOLDS, SMALL_AFFIXES = "bilstm-tags", 5, ("suffixes", "prefixes")
#: The parser reads FEATS beside UPOS where at least this share of the training words have some:
#: English EWT 68%, Japanese GSD 0.4% (almost none: its taggers, jackknifed on a small corpus,
#: may predict none at all, and the parser would read nothing there).
FEATS_SHARE = 0.1


def has_text(request: TrainRequest) -> bool:
    """Whether the first training sentences are CoNLL-U with ``# text`` comments (a tokenizer can
    learn from them)."""
    from tagger.formats import read_corpus

    sample = read_corpus(request.train.path, request.train.fmt, request.train.columns, max_sentences=50)
    return bool(sample) and all(isinstance(s.raw, dict) and s.raw.get("format") == "conllu"
                                and any(line.startswith("# text") for line in s.raw["lines"]) for s in sample)


def train_tokenizer(request: TrainRequest, work: Path, reporter: TrainReporter,
                    say: Callable[[str], None]) -> Path:
    """The pipeline's tokenizer: ``work/tokenizer.model``, trained (with ``--tokenizer-preset``,
    else the tokenize task's preset, on the request's train and dev, at most ``--max-epochs``
    epochs as every stage) unless an earlier run left one stamped with the same data and
    settings (:func:`tokenizer_stamp`, in ``work/tokenizer.json``)."""
    out, kept = work / TOKENIZER, work / TOKENIZER_STAMP
    stamp = tokenizer_stamp(request)
    if out.exists() and stamped(kept, stamp, "stamp") is not None:
        say(f"pipeline: reusing the tokenizer {out}")
        return out
    if out.exists():
        say(f"pipeline: the tokenizer {out} was trained with other data or settings: training it again")
    else:
        say(f"pipeline: training the tokenizer {out}")
    kept.unlink(missing_ok=True)
    run.train(dataclasses.replace(request, task="tokenize", column=None, out=str(out), overrides=(),
                                  preset=request.tokenizer_preset,
                                  config_file=None, arch=None, batch_size=None, patience=None,
                                  jackknife=None, tokenizer=False, embeddings=None, encoder=None,  # it reads characters
                                  options=dataclasses.replace(request.options, checkpoint_dir=None, resume=False)),
              reporter, say)
    write_json(kept, {"stamp": stamp})
    return out


def tokenizer_stamp(request: TrainRequest) -> dict[str, Any]:
    """What the pipeline's tokenizer is made from: the bytes of the training and dev files
    (digests), how they are read, its preset, epochs and seed. A run that changes any of them
    trains it again."""
    def data(spec: DataSpec | None) -> dict[str, Any] | None:
        if spec is None:
            return None
        return {"files": [[file.name, file_digest(file)] for file in spec.files()], "fmt": spec.fmt,
                "columns": spec.columns, "max_sentences": spec.max_sentences}

    return {"train": data(request.train), "dev": data(request.dev), "preset": request.tokenizer_preset,
            "max_epochs": request.max_epochs, "seed": request.options.seed}


def small_recipe(request: TrainRequest) -> tuple[TrainRequest, str | None]:
    """``request`` with the small-corpus recipe applied where it applies (no ``--preset`` or
    ``--config``, fewer than :data:`SMALL_WORDS` training words): the parser :data:`SMALL_PRESET`
    on :data:`SMALL_FOLDS` jackknifed folds, the taggers embedding affixes too
    (:data:`SMALL_AFFIXES`, and ``pieces`` where ``subwords=auto`` takes them); and the line
    that says so (None where it does not apply)."""
    from tagger.corpus.features import subword_kinds_for
    from tagger.formats import read

    if request.preset or request.config_file:
        return request, None
    forms: dict[str, int] = {}
    words = 0
    sentences = read(request.train.path, request.train.fmt, columns=request.train.columns)
    for sentence in itertools.islice(sentences, request.train.max_sentences or None):
        words += len(sentence)
        if words >= SMALL_WORDS:
            return request, None
        for form in sentence.words:
            forms[form] = forms.get(form, 0) + 1
    settings = request.jackknife or JackknifeSettings(PIPELINE_DECIDES)
    folds = settings.folds or SMALL_FOLDS
    overrides = settings.overrides
    if not any(o.split("=", 1)[0].strip() == "subwords" for o in overrides):
        kinds = subword_kinds_for("auto", 1, forms) + SMALL_AFFIXES
        overrides = (f"subwords={','.join(kinds)}", *overrides)
    said = (f"pipeline: {words:,} training words (under {SMALL_WORDS:,}): the parser {SMALL_PRESET} on {folds} "
            f"jackknifed folds, taggers with {next(o for o in overrides if o.startswith('subwords'))} "
            f"(--preset bilstm-words: the parser of larger corpora)")
    return dataclasses.replace(request, preset=SMALL_PRESET,
                               jackknife=dataclasses.replace(settings, folds=folds, overrides=overrides)), said


def tagger_columns(request: TrainRequest) -> list[str]:
    """The columns the pipeline's tagger learns: ``--column`` (comma list), else those of the
    task's ``tagger_columns`` that the first training sentences have."""
    from tagger.formats import read_corpus

    if request.column:
        return [c.strip() for c in request.column.split(",") if c.strip()]
    sample = read_corpus(request.train.path, request.train.fmt, request.train.columns, max_sentences=200)
    columns = [c for c in get_task(request.task).tagger_columns if any(s.has(c) for s in sample)]
    if not columns:
        raise TaggerError(f"no {' or '.join(get_task(request.task).tagger_columns)} column to learn a tagger from; "
                          f"name one with --column", request.train.name)
    return columns


def parser_columns(columns: list[str], overrides: tuple[str, ...], feats_share: float = 1.0) -> list[str]:
    """``tag_column=...`` for the parser unless ``--set`` names one: ``upos+feats`` where the
    tagger learns both and at least :data:`FEATS_SHARE` of the training words have features
    (``feats_share``: :func:`share_with_feats`), else its first of ``upos``, ``xpos``."""
    if any(o.split("=", 1)[0].strip() == "tag_column" for o in overrides):
        return []
    if "upos" in columns and "feats" in columns and feats_share >= FEATS_SHARE:
        return ["tag_column=upos+feats"]
    first = next((c for c in ("upos", "xpos") if c in columns), columns[0])
    return [f"tag_column={first}"]


def share_with_feats(request: TrainRequest) -> float:
    """The share of the first training sentences' words whose FEATS is not ``_``."""
    from tagger.formats import read_corpus

    sample = read_corpus(request.train.path, request.train.fmt, request.train.columns, max_sentences=200)
    words = sum(len(s) for s in sample)
    return sum(value != "_" for s in sample for value in s.columns.get("feats") or ()) / max(words, 1)


def parser_config(request: TrainRequest) -> tuple[type, Any]:
    """The parser family and its model config as ``request`` (``--task dep``) builds them:
    preset < ``--config`` < ``--set``; no data is read (the parser's column is no data default)."""
    from tagger.models import MODELS

    cls = MODELS[get_task(request.task).model]
    return cls, configs(request, cls, Data([], [], ""))[0]


def train(request: TrainRequest, reporter: TrainReporter, say: Callable[[str], None]) -> dict[str, Any]:
    """Train the tagger(s) and the parser of a pipeline and write the pipeline file; returns the
    parser's summary (:func:`tagger.training.run.train`) with the pipeline's entries.

    A parser that reads POS (``cls.pos_columns``) trains on jackknifed tags (``--jackknife K``,
    :data:`DEFAULT_FOLDS` unless given). One that reads none (contextual features alone:
    ``bilstm-words``) needs no folds: the tagger trains once, on all of train. A parser with an
    encoder starts it from the all-train tagger (unless ``--encoder-from`` names another)."""
    if request.pos_model:
        raise TaggerError("--task pipeline trains its own tagger: leave out --pos-model (or train --task dep "
                          "--pos-model ... and chain the two with tagger tag --model A --model B)")
    if request.bootstrap:
        raise TaggerError("--task pipeline trains an FFN or recurrent parser from scratch: for a bootstrapped one, "
                          "train it with --task dep --jackknife and chain it after the tagger")
    if request.tokenizer_preset:  # the tokenizer trains last: a wrong name is said before the rest trains
        from tagger.config import resolve_preset
        from tagger.models import MODELS

        try:
            resolve_preset(MODELS[get_task("tokenize").model].PRESETS, request.tokenizer_preset)
        except TaggerError as e:
            raise TaggerError(f"tokenizer preset: {e}") from None
    request, said = small_recipe(request)
    if said:
        say(said)
    columns = tagger_columns(request)
    settings, work = _settings(request, columns)
    if request.encoder:  # the transformer goes under the tagger; a parser with an encoder takes it from there
        settings = dataclasses.replace(settings, overrides=(f"transformer={request.encoder}", *settings.overrides))
    parser_request = dataclasses.replace(request, task="dep", column=None, out=str(work / PARSER), encoder=None,
                                         preset=request.preset or (None if request.config_file else
                                                                   get_task(request.task).preset),
                                         overrides=tuple(parser_columns(columns, request.overrides, share_with_feats(request)))
                                         + request.overrides)
    cls, config = parser_config(parser_request)
    reads_pos = bool(cls.pos_columns(config))
    if reads_pos:
        settings = dataclasses.replace(settings, folds=settings.folds or DEFAULT_FOLDS)
    elif settings.folds:
        raise TaggerError(f"--jackknife {settings.folds}: this parser reads no POS (features=replace, "
                          "encoder_tag_dim=0), so there is nothing to jackknife; leave --jackknife out")
    if request.parsers > 1:  # the members' seeds differ; their taggers are the pipeline seed's
        settings = dataclasses.replace(settings, seed=settings.tagger_seed(request.options.seed))
    # The taggers first (the parser's own jackknife then finds them finished), so that a parser
    # with an encoder can start it from the all-train tagger.
    taggers = jackknife.jackknife_taggers(dataclasses.replace(parser_request, jackknife=settings), columns, say)
    encoder_from = request.encoder_from or (str(taggers.all_train_tagger) if config.encoder != "none" else None)
    parser_request = dataclasses.replace(parser_request, encoder_from=encoder_from,
                                         jackknife=dataclasses.replace(settings, announce=False) if reads_pos else None)
    requests = member_requests(parser_request, request.parsers)
    jobs, threads = plan_jobs(len(requests), settings.jobs, settings.threads)
    summaries, parsers_wall = train_members(requests, jobs, threads, reporter, say)
    tokenizer = train_tokenizer(request, work, reporter, say) if request.tokenizer and has_text(request) else None
    meta = write_pipeline(request, requests, tokenizer, work / ALL / MODEL, "+".join(cls.pos_columns(config)) or None,
                          taggers, columns)
    return _summary(request, requests, summaries, (jobs, parsers_wall), taggers, reads_pos, tokenizer, meta, say)


def _settings(request: TrainRequest, columns: list[str]) -> tuple[JackknifeSettings, Path]:
    """The taggers' settings (the request's jackknife, its ``--max-epochs`` too unless ``--pos-set``
    names one, its columns) and the work folder."""
    settings = request.jackknife or JackknifeSettings(PIPELINE_DECIDES)
    if request.max_epochs is not None:  # --max-epochs is every stage's (--pos-set max_epochs=N: the taggers' own)
        settings = dataclasses.replace(settings, overrides=(f"max_epochs={request.max_epochs}", *settings.overrides))
    work = Path(settings.work_dir or request.out + WORK_SUFFIX)
    return dataclasses.replace(settings, columns=tuple(columns), work_dir=str(work)), work


def _summary(request: TrainRequest, requests: list[TrainRequest], summaries: list[dict[str, Any]],
             parsers_run: tuple[int, float], taggers: Jackknife, reads_pos: bool, tokenizer: Path | None,
             meta: dict[str, Any], say: Callable[[str], None]) -> dict[str, Any]:
    """The pipeline's summary (the first parser's, with the pipeline's entries), and its line."""
    columns, (jobs, parsers_wall) = list(taggers.columns), parsers_run
    summary = dict(summaries[0])
    tagger_summary = None if reads_pos else taggers.results[-1]
    if reads_pos:  # the cost of this run's taggers, not of the parser's look at them (all reused by then)
        fresh = jackknife.summary(taggers, {"train": {}, "dev": {}})
        summary["jackknife"] = {**summary["jackknife"], **{key: fresh[key] for key in
                                                            ("taggers", "wall_seconds", "jobs", "threads_per_job")}}
    tagger_file, parser_files = taggers.work_dir / ALL / MODEL, [Path(r.out) for r in requests]
    first = f"tokens and sentences by {tokenizer}, " if tokenizer is not None else ""
    reads = f"reads {meta['parser_reads']}" if meta["parser_reads"] else "reads the words only"
    parsed_by = str(parser_files[0]) if len(requests) == 1 else (f"an ensemble of {len(requests)} parsers "
                                                                 f"({parser_files[0].name}, ...; dev {meta['dev_metric']} "
                                                                 f"{100 * meta['dev_score']:.2f})")
    say(f"pipeline: {first}{', '.join(columns)} by {tagger_file}, then {parsed_by} ({reads}), in {request.out}")
    extra = {"tagger": tagger_summary} if tagger_summary is not None else {}
    if len(requests) > 1:
        extra["parsers"] = [{"model": str(path), "seed": r.options.seed, "best_dev": one["best_dev"],
                             "best_epoch": one["best_epoch"], "epochs": one["epochs"], "seconds": one["seconds"]}
                            for path, r, one in zip(parser_files, requests, summaries)]
        extra["parsers_wall_seconds"] = parsers_wall
        extra["parsers_jobs"] = jobs
        extra["best_dev"] = round(100.0 * meta["dev_score"], 4)
    return {**summary, **extra, "model": request.out, "task": request.task, "tagger_columns": columns,
            "stages": ([str(tokenizer)] if tokenizer is not None else []) + [str(tagger_file)] + [str(p) for p in parser_files]}


def write_pipeline(request: TrainRequest, requests: list[TrainRequest], tokenizer: Path | None, tagger_file: Path,
                   parser_reads: str | None, taggers: Any, columns: list[str]) -> dict[str, Any]:
    """Write the pipeline file ``request.out``: the tokenizer (if any), the all-train tagger and
    the parser (an ensemble of the parsers of ``requests`` where there are several); its meta."""
    parser_files = [Path(r.out) for r in requests]
    parser_archives = [model_file.read_archive(path) for path in parser_files]
    parser_stage = parser_archives[0] if len(parser_archives) == 1 else model_file.ensemble_archive(
        parser_archives, {"task": "dep", "ensemble_of": [{"model": str(path), "seed": r.options.seed,
                                                          "dev_score": a["meta"].get("dev_score")}
                                                         for path, r, a in zip(parser_files, requests, parser_archives)]})
    stages = [model_file.read_archive(tagger_file), parser_stage]
    if tokenizer is not None:
        stages.insert(0, model_file.read_archive(tokenizer))
    first = parser_archives[0]["meta"]
    meta = {
        "task": request.task,
        "tokenizer": str(tokenizer.resolve()) if tokenizer is not None else None,
        "tagger_columns": columns,
        "parser_reads": parser_reads,
        "tagger": str(tagger_file.resolve()),
        "parser": str(parser_files[0].resolve()),
        **{key: first.get(key) for key in ("train", "dev", "dev_score", "dev_metric", "jackknife")},
    }
    if len(requests) > 1:
        meta["parsers"] = [str(path.resolve()) for path in parser_files]
        meta["ensemble_dev_score"] = ensemble_dev_score(stages[-1], request, taggers, columns)
        meta["dev_score"] = meta["ensemble_dev_score"]
    model_file.save_pipeline(request.out, stages, meta)
    return meta


def ensemble_dev_score(ensemble: dict[str, Any], request: TrainRequest, taggers: Any, columns: list[str]) -> float:
    """The ensemble's dev score (the parsers' own metric: LAS without punctuation, a fraction)
    on dev as the parsers were selected on it: with the all-train tagger's tags where they read
    POS."""
    from tagger.formats import read_corpus
    from tagger.inference import predict

    if request.dev is None:
        raise TaggerError("--parsers N needs --dev (the ensemble is scored on it)")
    model = model_file.model_of(ensemble, request.out)
    dev = list(read_corpus(request.dev.path, request.dev.fmt, request.dev.columns))
    tags = taggers.work_dir / ALL / TAGS
    if tags.exists():
        jackknife._retag(dev, tags, list(taggers.columns), {})
    return model.metric(dev, predict(model, dev)).score
