"""Configs: a model config (one ``@dataclass`` per model family: the network's hyper-parameters)
and the :class:`TrainingConfig` (the optimiser's and the loop's), built together from a named
preset, a JSON file and ``key=value`` overrides. Each key goes to the dataclass that has it;
unknown keys and badly typed values are errors, never silently ignored.

Presets are plain data in each family's ``presets.py``::

    PRESETS = {
        "fast": {"description": "...", "model": {"layers": 3, ...}, "training": {"lr": 0.002, ...}},
        "fast-cnn": {"based_on": "fast", "description": "...", "model": {"char_cnn": 50}},
    }

``based_on`` names the preset whose ``model`` and ``training`` values this one starts from
(:func:`resolve_preset`). A config file holds either one flat object (every key goes where it
belongs) or ``{"model": {...}, "training": {...}}``.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence, TypeVar

from tagger.errors import TaggerError

C = TypeVar("C")

#: The two parts of a preset or of a sectioned config file.
SECTIONS = ("model", "training")


@dataclass
class TrainingConfig:
    """Training hyper-parameters shared by every model (the papers' recipes are presets)."""

    optimizer: str = "sgd"  # sgd | adam
    lr: float = 0.02
    momentum: float = 0.0
    weight_decay: float = 0.0
    batch_size: int = 1  # sentences per update; 1 = the papers' on-line training
    max_epochs: int = 30
    patience: int = 5  # epochs without a better dev score before stopping (0 = never)
    lr_halving: bool = True  # halve lr when |e_prev - e_cur| / e_prev <= halve_threshold
    halve_threshold: float = 0.005
    min_lr: float = 0.0005  # halve only while lr >= min_lr
    clip: float = 5.0  # gradient norm clipping (0 = off)
    average: float = 0.0  # decay of a moving average of the weights, scored on dev and saved (0 = off)

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be positive, not {self.batch_size}")


def _convert(value: Any, kind: Any, key: str, where: str) -> Any:
    if kind in ("bool", bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "yes", "1", "on", "false", "no", "0", "off"):
            return value.lower() in ("true", "yes", "1", "on")
        raise TaggerError(f"{key} must be true or false, not {value!r}", where)
    for name, typ in (("int", int), ("float", float), ("str", str)):
        if kind in (name, typ):
            try:
                if typ is int and isinstance(value, float) and not value.is_integer():
                    raise ValueError
                return typ(value)
            except (TypeError, ValueError):
                raise TaggerError(f"{key} must be {name}, not {value!r}", where) from None
    return value


def field_names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]


def resolve_preset(presets: Mapping[str, Mapping[str, Any]], name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``(model, training)`` values of preset ``name``, after those of the presets it is
    ``based_on`` (the nearest wins)."""
    chain: list[str] = []
    while name is not None:
        if name not in presets:
            raise TaggerError(f"unknown preset {name!r}; choose from: {', '.join(sorted(presets))}")
        if name in chain:
            raise ValueError(f"presets based on each other: {' -> '.join(chain + [name])}")
        chain.append(name)
        name = presets[name].get("based_on")
    model: dict[str, Any] = {}
    training: dict[str, Any] = {}
    for link in reversed(chain):
        model.update(presets[link].get("model", {}))
        training.update(presets[link].get("training", {}))
    return model, training


def _sectioned(loaded: Mapping[str, Any]) -> bool:
    """Whether a config file's object is ``{"model": {...}, "training": {...}}`` (either part optional)."""
    return bool(loaded) and set(loaded) <= set(SECTIONS) and all(isinstance(v, dict) for v in loaded.values())


def read_config_file(file: str | Path) -> dict[str, Any]:
    """A JSON config file's object (lists as tuples), flat or sectioned (:func:`_sectioned`)."""
    try:
        loaded = json.loads(Path(file).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaggerError("no such file", str(file)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise TaggerError(f"not a JSON config: {e}", str(file)) from None
    if not isinstance(loaded, dict):
        raise TaggerError("a config file must hold one JSON object", str(file))
    tuples = lambda d: {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items()}  # noqa: E731
    if _sectioned(loaded):
        return {section: tuples(values) for section, values in loaded.items()}
    return tuples(loaded)


def parse_overrides(overrides: Sequence[str]) -> dict[str, str]:
    """``["key=value", ...]`` as a dict (the last of a repeated key wins)."""
    values = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise TaggerError(f"--set takes key=value, not {item!r}")
        values[key.strip()] = value.strip()
    return values


def _route(values: Mapping[str, Any], model_cls: type, training_cls: type, where: str | None,
           into: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """Put each of ``values`` into the model or the training dict of ``into``, by which dataclass
    has the key; a key in neither is an error listing the known ones."""
    model_keys, training_keys = set(field_names(model_cls)), set(field_names(training_cls))
    unknown = sorted(set(values) - model_keys - training_keys)
    if unknown:
        known = sorted(model_keys | training_keys)
        raise TaggerError(f"unknown config key(s): {', '.join(unknown)}; known: {', '.join(known)}", where)
    for key, value in values.items():
        into[0 if key in model_keys else 1][key] = value


def _route_file(loaded: dict[str, Any], model_cls: type, training_cls: type, where: str,
                into: tuple[dict[str, Any], dict[str, Any]]) -> None:
    if not _sectioned(loaded):
        _route(loaded, model_cls, training_cls, where, into)
        return
    for index, (section, cls) in enumerate(zip(SECTIONS, (model_cls, training_cls))):
        values = loaded.get(section, {})
        unknown = sorted(set(values) - set(field_names(cls)))
        if unknown:
            raise TaggerError(f"unknown {section} config key(s): {', '.join(unknown)}; "
                              f"known: {', '.join(sorted(field_names(cls)))}", where)
        into[index].update(values)


def build_configs(model_cls: Any, presets: Mapping[str, Mapping[str, Any]], preset: str | None,
                  file: str | Path | None = None, overrides: Sequence[str] = (),
                  defaults: Mapping[str, Any] | None = None) -> tuple[Any, TrainingConfig]:
    """``(model config, training config)`` of the model family ``model_cls`` (its ``Config`` and
    ``training_defaults``), layered: field defaults < the family's ``training_defaults`` <
    ``defaults`` (a task's, e.g. CCG's ``rare_tag_count``) < ``preset`` (of ``presets``) < JSON
    ``file`` < ``key=value`` overrides."""
    return _build(model_cls.Config, model_cls.training_defaults, presets, preset, file, overrides, defaults)


def build_config(cls: type[C], presets: Mapping[str, Mapping[str, Any]], preset: str | None, file: str | Path | None = None,
                 overrides: Sequence[str] = (), defaults: Mapping[str, Any] | None = None) -> C:
    """The model config ``cls`` alone, as :func:`build_configs` layers it (for building a model
    outside training: training keys are accepted, and go to a training config that is dropped)."""
    return _build(cls, {}, presets, preset, file, overrides, defaults)[0]


def _build(config_cls: type, training_defaults: Mapping[str, Any], presets: Mapping[str, Mapping[str, Any]],
           preset: str | None, file: str | Path | None, overrides: Sequence[str],
           defaults: Mapping[str, Any] | None) -> tuple[Any, TrainingConfig]:
    both: tuple[dict[str, Any], dict[str, Any]] = ({}, dict(training_defaults))
    _route(defaults or {}, config_cls, TrainingConfig, None, both)
    if preset is not None:
        model, training = resolve_preset(presets, preset)
        both[0].update(model)
        both[1].update(training)
    if file is not None:
        _route_file(read_config_file(file), config_cls, TrainingConfig, str(file), both)
    _route(parse_overrides(overrides), config_cls, TrainingConfig, "--set", both)
    where = "--set" if overrides else (str(file) if file else None)
    return config_from_dict(config_cls, both[0], where), config_from_dict(TrainingConfig, both[1], where)


def config_from_dict(cls: type[C], values: Mapping[str, Any], where: str | None = None) -> C:
    """``cls(**values)`` with unknown keys rejected and values converted to the field types."""
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    hints = typing.get_type_hints(cls)
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise TaggerError(f"unknown config key(s): {', '.join(unknown)}; known: {', '.join(sorted(fields))}", where)
    converted = {k: _convert(v, hints.get(k, fields[k].type), k, where or "config") for k, v in values.items()}
    try:
        return cls(**converted)
    except ValueError as e:
        raise TaggerError(str(e), where) from None


def split_flat(values: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A flat config (model files of format 1 kept both in one) as ``(model values, training
    values)``: the keys of :class:`TrainingConfig` go to the second, every other to the first."""
    training_keys = set(field_names(TrainingConfig))
    return ({k: v for k, v in values.items() if k not in training_keys},
            {k: v for k, v in values.items() if k in training_keys})


def config_to_dict(config: Any) -> dict[str, Any]:
    return dataclasses.asdict(config)
