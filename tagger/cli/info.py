"""``tagger info``: what a model file holds, without building the model."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.table import Table

from tagger import resources
from tagger.progress import make_console
from tagger.model_file import ENSEMBLE, PIPELINE, configs_of, read_archive
from tagger.tasks import TASKS


def dev_metric(meta: dict[str, Any]) -> str:
    """What a model's dev score is; files written before the name was stored get it from the task."""
    task = TASKS.get(meta.get("task", ""))
    return meta.get("dev_metric") or (task.metric if task else "accuracy")


def percent(value: Any) -> Any:
    """A stored fraction in percent; anything else (None: not recorded) as it is."""
    return 100.0 * value if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def shown_meta(meta: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``meta`` and its history as shown: scores in percent (model files store fractions), each
    with its metric's name beside it."""
    shown = {k: v for k, v in meta.items() if k != "history"}
    metric = dev_metric(meta)
    if isinstance(shown.get("dev_score"), (int, float)):
        shown["dev_score"] = 100.0 * shown["dev_score"]
        shown["dev_metric"] = metric
    if isinstance(shown.get("jackknife"), dict):
        jackknife = dict(shown["jackknife"])
        for key in ("train_accuracy", "dev_accuracy"):
            jackknife[key] = {column: 100.0 * value for column, value in jackknife.get(key, {}).items()}
        jackknife["fold_accuracies"] = [100.0 * value for value in jackknife.get("fold_accuracies", [])]
        shown["jackknife"] = jackknife
    if isinstance(shown.get("distilled_from"), list):  # a distilled tagger's teachers (tagger distill)
        shown["distilled_from"] = [{**t, "dev_score": percent(t.get("dev_score")),
                                    "own_dev_score": percent(t.get("own_dev_score"))} for t in shown["distilled_from"]]
        distillation = dict(shown.get("distillation") or {})
        for key in ("teachers_dev_score", "kept_mass"):
            distillation[key] = percent(distillation.get(key))
        shown["distillation"] = distillation
    if isinstance(shown.get("ensemble_of"), list):  # a parser ensemble's members (tagger ensemble, --parsers N)
        shown["ensemble_of"] = [{**m, "dev_score": percent(m.get("dev_score"))} if isinstance(m, dict) else m
                                for m in shown["ensemble_of"]]
    history = []
    for record in meta.get("history", []):
        record = dict(record)
        if isinstance(record.get("dev"), (int, float)):
            record["dev"] = 100.0 * record["dev"]
            record["metric"] = record.get("metric") or metric
        if isinstance(record.get("parts"), dict):  # each column's dev accuracy, of a tagger of several
            record["parts"] = {name: 100.0 * value for name, value in record["parts"].items()}
        history.append(record)
    return shown, marked_best(history, meta.get("epoch"))


def marked_best(history: list[dict[str, Any]], epoch: Any) -> list[dict[str, Any]]:
    """``history`` with exactly the saved model's record marked ``best``: the last one of its
    ``epoch`` (meta ``epoch``). Files written before the trainer marked it lack that mark and
    carry it on earlier epochs that were the best of their time; a history with no record of
    ``epoch`` is left as it is."""
    saved = [i for i, record in enumerate(history) if record.get("epoch") == epoch]
    if epoch is None or not saved:
        return history
    for record in history:
        record.pop("best", None)
    history[saved[-1]]["best"] = True
    return history


#: Entries of ``vocabs`` that hold a number, not a vocabulary: where the words seen once start,
#: where a lifting parser's lifted labels start, and (in model files of older versions) the count
#: of non-projective training trees, which the meta's ``nonprojective_skipped`` shows.
NOT_VOCABULARIES = ("rare_word_from", "plain_labels", "nonprojective")


def jackknife_text(entry: dict[str, Any]) -> str:
    """A parser's ``jackknife`` meta (scores in percent, as :func:`shown_meta` gives them) in a line."""
    overrides = ", ".join(entry.get("tagger_overrides") or [])
    settings = entry.get("tagger_preset") or "?"
    if entry.get("tagger_config_file"):
        settings += f" + {entry['tagger_config_file']}"
    if overrides:
        settings += f" + {overrides}"
    folds = ", ".join(f"{value:.2f}" for value in entry.get("fold_accuracies", []))
    columns = [column for column in entry.get("columns", [])
               if column in entry.get("train_accuracy", {}) and column in entry.get("dev_accuracy", {})]
    each = len(columns) == 1  # a fold tagger's score is its columns' mean: shown once where there are several
    scores = "; ".join(f"{column.upper()} train {entry['train_accuracy'][column]:.2f} %"
                       + (f" (folds {folds})" if each else "") + f", dev {entry['dev_accuracy'][column]:.2f} %"
                       for column in columns)
    if folds and not each:
        scores += f"; each fold's tagger on its fold (the mean of its columns) {folds}"
    return (f"{entry.get('folds')} folds, taggers {settings}; {scores}; "
            f"{entry.get('tagger_seconds', 0):.0f} s of tagger training; in {entry.get('work_dir')}")


def distilled_text(teachers: list[dict[str, Any]]) -> str:
    """A distilled tagger's ``distilled_from`` meta (scores in percent) in a line."""
    return "; ".join(f"{t.get('model')} (dev {t.get('dev_score', 0):.2f} %)" for t in teachers)


def ensemble_text(members: list[Any]) -> str:
    """A parser ensemble's ``ensemble_of`` meta (scores in percent) in a line: each member's
    file, seed and dev score."""
    shown = []
    for member in members:
        if not isinstance(member, dict):
            shown.append(str(member))
            continue
        score, seed = member.get("dev_score"), member.get("seed")
        score = f"dev {score:.2f} %" if isinstance(score, (int, float)) else "dev ?"
        shown.append(f"{member.get('model')} (seed {'?' if seed is None else seed}, {score})")
    return "; ".join(shown)


def distillation_text(entry: dict[str, Any]) -> str:
    """A distilled tagger's ``distillation`` meta (scores in percent) in a line."""
    return (f"teachers' averaged distribution {entry.get('teachers_dev_score', 0):.2f} % on dev; temperature "
            f"{entry.get('temperature')}, gold weight {entry.get('gold_weight')}, top {entry.get('top_k')} labels "
            f"({entry.get('kept_mass', 0):.2f} % of the mass)")


def output_columns(config: dict[str, Any], meta: dict[str, Any]) -> list[str] | None:
    """The columns a model fills, from its task (:data:`tagger.tasks.TASKS`): a tagger's
    ``column`` (several joined by commas: ``upos,xpos,feats``), a parser's tree columns; None
    when the file names no task."""
    task = TASKS.get(meta.get("task", ""))
    if task is None:
        return None
    if not task.column_from_data:
        return list(task.columns)
    named = str(config.get(task.column_key) or "")
    return [name for name in named.split(",") if name] or None


def vocabularies_line(sizes: dict[str, int]) -> str:
    """The vocabulary sizes on one line; a FEATS column learned per feature (``feats:NAME``, one
    vocabulary per feature) is one entry: its features and their values in all."""
    shown = [f"{k} {v:,}" for k, v in sizes.items() if not k.startswith("feats:")]
    features = [v for k, v in sizes.items() if k.startswith("feats:")]
    if features:
        shown.append(f"feats {len(features)} features ({sum(features):,} values with each one's '_')")
    return ", ".join(shown)


def describe(path: str) -> dict:
    """A plain summary of a model file: versions, model, the columns it fills, its model config
    and training config (None where the file does not record it), vocab sizes, training data and
    dev score (percent, as everywhere). Files of format 1, whose one config held both, show them split."""
    archive = read_archive(resources.model_path(path))
    if archive.get("name") == PIPELINE:  # one summary per stage, in the order they run
        stages = [describe_archive(stage, path) for stage in archive["stages"]]
        meta, _ = shown_meta(archive.get("meta", {}))
        return {"file": path, "format_version": archive["format_version"], "tagger_version": archive.get("tagger_version"),
                "model": PIPELINE, "parameters": sum(s["parameters"] for s in stages), "meta": meta, "stages": stages}
    return describe_archive(archive, path)


def vectors_text(archive: dict[str, Any]) -> str | None:
    """What a tagger's frozen table of pretrained vectors holds (``input.pretrained``): its size,
    the rows beyond the training words, and how many training words have a vector; None without."""
    state, vocabs = archive.get("state_dict", {}), archive.get("vocabs", {})
    table = state.get("input.pretrained")
    trained = len(vocabs.get("words", []))
    specials = 2  # PAD, UNK
    if table is None:  # a parser's encoder that took a tagger's table with it
        table, trained = state.get("encoder.input.pretrained"), len(vocabs.get("encoder_words", []))
    if table is None:  # a parser's static word features, a seq2seq parser's input (tagger.modules.pretrained)
        table, trained = state.get(WORD_TABLE), len(vocabs.get("words", []))
        specials = SPECIAL_WORDS.get(archive.get("name"), 2)
    if table is None:
        return None
    covered = int((abs(table[specials:trained]).sum(-1) > 0).sum()) if trained > specials else 0
    beyond = table.shape[0] - trained
    return (f"{table.shape[0]:,} × {table.shape[1]} (fp16), {beyond:,} word{'s' * (beyond != 1)} beyond the training "
            f"words; {covered:,} of {max(trained - specials, 0):,} training words have a vector")


#: The frozen table of the families whose words are plain embedding rows (``word_pretrained``).
WORD_TABLE = "word_pretrained.table"
#: The special rows (padding, UNK, ...) at the start of those families' word vocabularies.
SPECIAL_WORDS = {"transition_parser": 4, "seq2seq": 8}


def describe_archive(archive: dict[str, Any], path: str) -> dict:
    """:func:`describe` of one model's archive (a file's, or a pipeline stage's); a parser
    ensemble's members each described in ``members``."""
    if archive.get("name") == ENSEMBLE:
        members = [describe_archive(member, path) for member in archive["members"]]
        meta, _ = shown_meta(archive.get("meta", {}))
        return {"file": path, "format_version": archive["format_version"], "tagger_version": archive.get("tagger_version"),
                "model": ENSEMBLE, "columns": members[0]["columns"], "parameters": sum(m["parameters"] for m in members),
                "vocab_sizes": {}, "config": {}, "training": None, "meta": meta, "history": [], "members": members}
    state = archive["state_dict"]
    meta, history = shown_meta(archive.get("meta", {}))
    vectors = vectors_text(archive)
    if vectors is not None:
        meta["pretrained vectors"] = vectors
    config, training = configs_of(archive)
    return {
        "file": path,
        "format_version": archive["format_version"],
        "tagger_version": archive.get("tagger_version"),
        "model": archive.get("name"),
        "columns": output_columns(config, archive.get("meta", {})),
        "parameters": sum(t.numel() for t in state.values()),
        "vocab_sizes": {k: len(v) for k, v in archive.get("vocabs", {}).items() if k not in NOT_VOCABULARIES},
        "config": config,
        "training": training,
        "meta": meta,
        "history": history,
    }


@click.command("info")
@click.argument("model_path", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (scores in percent, as everywhere).")
def command(model_path: str, as_json: bool) -> None:
    """Print a model file's model and training configs, vocabulary sizes, training data and dev score.

    \b
    Examples:
      tagger info pos.tagger
      tagger info en              (the shipped English pipeline: its scores and how it was built)
    """
    info = describe(model_path)
    if as_json:
        click.echo(json.dumps(info, default=str))
        return
    console = make_console()
    if info["model"] == PIPELINE:
        table = Table(title=f"{model_path}: pipeline of {len(info['stages'])} models ({info['parameters']:,} parameters)",
                      show_header=False)
        table.add_row("format", f"{info['format_version']} (tagger {info['tagger_version']})")
        for key, value in info["meta"].items():
            if key == "card":  # a shipped model's: what it is, its scores, how it was built
                for name, text in value.items():
                    table.add_row(name, card_text(text))
            else:
                table.add_row(key, meta_text(key, value))
        console.print(table)
        for number, stage in enumerate(info["stages"], 1):
            _print(console, stage, f"stage {number}: {stage['model']} ({stage['parameters']:,} parameters)")
        return
    _print(console, info, f"{model_path}: {info['model']} ({info['parameters']:,} parameters)")


def card_text(value: Any) -> str:
    """One entry of a shipped model's card: scores as ``name value`` pairs, anything else as text."""
    if isinstance(value, dict):
        return ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in value.items())
    return str(value)


def rare_text(value: dict[str, Any]) -> str:
    """``rare_labels``: per column, the labels too rare in training to be output (one RARE class)."""
    return "; ".join(f"{column}: {entry['labels']:,} of {entry['of_labels']:,} labels, on {entry['words']:,} of "
                     f"{entry['of_words']:,} training words, are one RARE class (never output)"
                     for column, entry in value.items())


def meta_text(key: str, value: Any) -> str:
    """One meta entry as ``tagger info``'s table shows it (a pipeline's and each stage's alike)."""
    if key == "dev_score" and isinstance(value, float):
        return f"{value:.2f} %"
    shown = {"jackknife": jackknife_text, "distilled_from": distilled_text, "distillation": distillation_text,
             "ensemble_of": ensemble_text, "rare_labels": rare_text}.get(key)
    return shown(value) if shown is not None and value else str(value)


def _print(console: Any, info: dict[str, Any], title: str) -> None:
    table = Table(title=title, show_header=False)
    table.add_row("format", f"{info['format_version']} (tagger {info['tagger_version']})")
    if info["columns"]:
        table.add_row("columns", ", ".join(info["columns"]))
    for key, value in info["meta"].items():
        table.add_row(key, meta_text(key, value))
    table.add_row("vocabularies", vocabularies_line(info["vocab_sizes"]))
    table.add_section()
    table.add_row("model config", "" if info["config"] else "(none)")
    for key, value in info["config"].items():
        table.add_row(key, str(value))
    table.add_section()
    table.add_row("training config", "" if info["training"] else "(not recorded)")
    for key, value in (info["training"] or {}).items():
        table.add_row(key, str(value))
    console.print(table)
    for number, member in enumerate(info.get("members", []), 1):
        _print(console, member, f"parser {number} of the ensemble ({member['parameters']:,} parameters)")
