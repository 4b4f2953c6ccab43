"""Issue 31, item 5: every numeric setting has a declared range, and a value outside it is one
line naming the key (or option) and the range, never a traceback and never silently accepted.

In-process and model-free where it can be: every refusal here happens before any data is read
or any model is built, so the whole file runs in a few seconds."""

from __future__ import annotations

import dataclasses
import json
import typing

import pytest

import tagger
from tagger.config import (OPTION_RANGES, Range, TrainingConfig, build_configs, check_options, config_from_dict,
                           option_type, resolve_preset)
from tagger.errors import TaggerError
from tagger.models import MODELS
from tests.helpers import DATA, assert_one_line_error, invoke

CONFIGS = [TrainingConfig] + [cls.Config for cls in MODELS.values()]
TRAIN = ["train", "--train", DATA / "sample.conllu", "--dev", DATA / "heldout.conllu", "--threads", "1"]


def numeric_fields(cls: type) -> list[dataclasses.Field]:
    hints = typing.get_type_hints(cls)
    return [f for f in dataclasses.fields(cls) if hints[f.name] in (int, float)]


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_every_numeric_config_field_declares_its_range(cls: type) -> None:
    missing = [f.name for f in numeric_fields(cls) if not isinstance(f.metadata.get("range"), Range)]
    assert not missing, f"{cls.__name__}: no declared range for {missing}"
    cls()  # the defaults are in range


def outside(bounds: Range, kind: type) -> list[float]:
    """Values just outside ``bounds`` (and a non-finite one for floats)."""
    values: list[float] = [float("nan"), float("inf")] if kind is float else []
    if bounds.low is not None:
        values.append(bounds.low if bounds.low_open else bounds.low - (1 if kind is int else 0.5))
    if bounds.high is not None:
        values.append(bounds.high if bounds.high_open else bounds.high + (1 if kind is int else 0.5))
    if bounds.odd:
        values.append(bounds.low + 1)
    return values


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_every_value_outside_a_range_is_refused_naming_the_key(cls: type) -> None:
    hints = typing.get_type_hints(cls)
    for field in numeric_fields(cls):
        bounds = field.metadata["range"]
        for value in outside(bounds, hints[field.name]):
            with pytest.raises(TaggerError, match=rf"^x\.json: {field.name} must be .*, not "):
                config_from_dict(cls, {field.name: value}, "x.json")


@pytest.mark.parametrize("cls", [cls for cls in MODELS.values()], ids=lambda c: c.name)
def test_every_preset_is_in_range(cls) -> None:
    for name in cls.PRESETS:
        resolve_preset(cls.PRESETS, name)
        build_configs(cls, cls.PRESETS, name)


def test_documented_zeros_keep_their_meaning() -> None:
    skip_lstm = MODELS["skip_lstm"]
    _, training = build_configs(skip_lstm, skip_lstm.PRESETS, None, overrides=["patience=0", "clip=0", "average=0"])
    assert (training.patience, training.clip, training.average) == (0, 0.0, 0.0)  # never stop early; no clipping
    config = build_configs(skip_lstm, skip_lstm.PRESETS, "wu2017-t5-chars-only")[0]  # docs/zoo.md: character only
    assert config.word_dim == 0 and config.caps_dim == 0
    with pytest.raises(TaggerError, match="every input feature is switched off"):
        build_configs(skip_lstm, skip_lstm.PRESETS, None, overrides=["word_dim=0", "caps_dim=0", "char_dim=0"])


SET_CASES = [
    # the tracebacks of the issue
    ("lr=-1", "lr must be > 0, not -1.0"), ("weight_decay=-1", "weight_decay must be >= 0"),
    ("input_dropout=1.5", "input_dropout must be in [0, 1), not 1.5"),
    ("hidden_dropout=-0.1", "hidden_dropout must be in [0, 1)"), ("label_smoothing=1.5", "label_smoothing must be in [0, 1)"),
    ("char_length=-1", "char_length must be >= 0"), ("window=0", "window must be an odd number >= 1, not 0"),
    ("window=2", "window must be an odd number >= 1, not 2"),
    # what it accepted silently
    ("lr=0", "lr must be > 0"), ("momentum=-1", "momentum must be in [0, 1)"), ("clip=-1", "clip must be >= 0"),
    ("rare_word_dropout=2", "rare_word_dropout must be in [0, 1)"), ("halve_threshold=-1", "halve_threshold must be >= 0"),
    ("min_lr=-1", "min_lr must be >= 0"), ("aux_weight=-1", "aux_weight must be >= 0"),
    ("patience=-1", "patience must be >= 0"), ("max_epochs=0", "max_epochs must be >= 1, not 0"),
    ("max_epochs=-1", "max_epochs must be >= 1"), ("batch_size=0", "batch_size must be >= 1"),
    ("lr=nan", "lr must be > 0, not nan"), ("layers=0", "layers must be between 1 and 64"),
]


@pytest.mark.parametrize("setting, message", SET_CASES, ids=[case[0] for case in SET_CASES])
def test_set_out_of_range_is_one_line(tmp_path, setting: str, message: str) -> None:
    out = tmp_path / "m.tagger"
    assert_one_line_error(invoke(*TRAIN, "--out", out, "--set", setting), "--set: ", message)
    assert not out.exists()


def test_config_file_out_of_range_is_one_line(tmp_path) -> None:
    for content in ({"lr": -1}, {"training": {"max_epochs": 0}}, {"model": {"window": 4}}):
        path = tmp_path / "c.json"
        path.write_text(json.dumps(content), encoding="utf-8")
        key = next(iter(content.get("model") or content.get("training") or content))
        assert_one_line_error(invoke(*TRAIN, "--out", tmp_path / "m", "--config", path), f"{path}: {key} must be")


@pytest.mark.parametrize("task, data, setting, message", [
    ("dep", "sample.conllu", "dropout=1.5", "dropout must be in [0, 1)"),
    ("dep", "sample.conllu", "encoder_window=2", "encoder_window must be an odd number >= 1"),
    ("const", "sample.mrg", "beam=0", "beam must be >= 1"),
    ("tokenize", "sample.conllu", "char_dropout=-1", "char_dropout must be in [0, 1)"),
])
def test_every_family_refuses_out_of_range(tmp_path, task: str, data: str, setting: str, message: str) -> None:
    done = invoke("train", "--task", task, "--train", DATA / data, "--out", tmp_path / "m", "--set", setting)
    assert_one_line_error(done, message)


def assert_usage_error(done, option: str) -> None:
    """Click's refusal of a bad option value: exit 2, no traceback, the option named."""
    assert done.exit_code == 2 and isinstance(done.exception, SystemExit), (done.exit_code, done.stderr)
    assert "Traceback" not in done.stderr and f"Invalid value for '{option}'" in done.stderr, done.stderr


TRAIN_OUT = [*TRAIN, "--out", "never-written.tagger"]
DISTILL = ["distill", "--teacher", "t.tagger", "--train", "x.conllu", "--out", "never-written.tagger"]
ABLATE = ["ablate", "--table", "wu2017-t2", "--out-dir", "never-written"]
TAG = ["tag", "--model", "m.tagger"]
OPTION_CASES = [
    (TRAIN_OUT, "--threads", "-1"), (TRAIN_OUT, "--threads", "0"), (TRAIN_OUT, "--max-sentences", "-3"),
    (TRAIN_OUT, "--max-sentences", "0"), (TRAIN_OUT, "--max-minutes", "0"), (TRAIN_OUT, "--max-minutes", "-1"),
    (TRAIN_OUT, "--max-epochs", "0"), (TRAIN_OUT, "--max-epochs", "-1"), (TRAIN_OUT, "--patience", "-1"),
    (TRAIN_OUT, "--batch-size", "0"), (TRAIN_OUT, "--checkpoint-minutes", "0"), (TRAIN_OUT, "--jobs", "0"),
    (DISTILL, "--threads", "0"), (DISTILL, "--max-minutes", "0"), (DISTILL, "--max-epochs", "0"),
    (ABLATE, "--budget-minutes", "0"), (ABLATE, "--max-sentences", "0"), (ABLATE, "--jobs", "0"),
    (TAG, "--threads", "-2"), (TAG, "--threads", "0"),
]


@pytest.mark.parametrize("command, option, value", OPTION_CASES,
                         ids=[f"{case[0][0]} {case[1]} {case[2]}" for case in OPTION_CASES])
def test_option_out_of_range_is_a_usage_error(command: list, option: str, value: str) -> None:
    assert_usage_error(invoke(*command, option, value, stdin="a b\n"), option)


def test_gates_without_bootstrap_is_refused(tmp_path) -> None:
    done = invoke(*TRAIN, "--task", "dep", "--arch", "lstm", "--gates", "o", "--out", tmp_path / "m")
    assert done.exit_code == 2 and "--gates: only with --bootstrap" in done.stderr and "Traceback" not in done.stderr
    with pytest.raises(TaggerError, match="gates: only with bootstrap"):
        tagger.train(train=DATA / "sample.conllu", out=tmp_path / "m", task="dep", gates="o")


def test_checkpoint_minutes_without_a_checkpoint_folder_is_refused(tmp_path) -> None:
    """As --resume is: without --checkpoint-dir nothing would be written. With --jackknife K (or
    --task pipeline) the taggers checkpoint in the jackknife's folder, so it is taken there."""
    out = tmp_path / "m"
    done = invoke(*TRAIN, "--checkpoint-minutes", "5", "--out", out)
    assert done.exit_code == 2 and "--checkpoint-minutes needs --checkpoint-dir" in done.stderr
    assert "Traceback" not in done.stderr and not out.exists()
    missing = ["train", "--train", tmp_path / "none.conllu", "--checkpoint-minutes", "5", "--out", out]
    for taken in (["--task", "dep", "--jackknife", "2"], ["--task", "pipeline"]):
        done = invoke(*missing, *taken)
        assert done.exit_code != 0 and "--checkpoint-minutes" not in done.stderr and "none.conllu" in done.stderr


@pytest.mark.parametrize("keywords, message", [
    ({"settings": {"lr": -1}}, "lr must be > 0, not -1"), ({"settings": {"window": 2}}, "window must be an odd number"),
    ({"max_epochs": 0}, "max_epochs must be >= 1"), ({"max_minutes": 0}, "max_minutes must be > 0"),
    ({"max_sentences": -3}, "max_sentences must be >= 1"), ({"threads": -1}, "threads must be >= 1"),
    ({"patience": -1}, "patience must be >= 0"), ({"checkpoint_minutes": float("nan")}, "checkpoint_minutes"),
    ({"threads": 1.5}, "threads must be an integer"),
])
def test_api_train_refuses_with_a_tagger_error(tmp_path, keywords: dict, message: str) -> None:
    with pytest.raises(TaggerError) as caught:
        tagger.train(train=DATA / "sample.conllu", dev=DATA / "heldout.conllu", out=tmp_path / "m", **keywords)
    assert message in str(caught.value)
    assert not (tmp_path / "m").exists()


def test_option_types_and_check_options_agree() -> None:
    for name, (kind, bounds) in OPTION_RANGES.items():
        click_type = option_type(name)
        assert (click_type.min, click_type.max, click_type.min_open) == (bounds.low, bounds.high, bounds.low_open)
        for value in outside(bounds, kind):
            with pytest.raises(TaggerError, match=name):
                check_options(**{name: value})
    check_options(threads=1, max_minutes=0.5, patience=0, max_epochs=1, jackknife=2, max_sentences=None)


def test_a_model_file_with_a_value_outside_a_later_range_still_loads(sample_tagger, tmp_path) -> None:
    """Ranges were declared after model files were written: a file keeps loading with the values
    it was trained with (here a rare-word dropout of 2, which training now refuses)."""
    import torch

    archive = torch.load(sample_tagger, map_location="cpu", weights_only=True)
    archive["config"]["rare_word_dropout"] = 2.0
    old = tmp_path / "old.tagger"
    torch.save(archive, old)
    model = tagger.load(str(old))
    assert model.tag([["The", "cat", "sat", "."]])
    with pytest.raises(TaggerError, match="rare_word_dropout"):
        config_from_dict(MODELS["skip_lstm"].Config, {"rare_word_dropout": 2.0})
