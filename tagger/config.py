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

Every numeric field of every config declares the values it allows (:func:`ranged`: the field's
:class:`Range` in its metadata); :func:`check_ranges`, which each config's ``__post_init__`` calls,
refuses any other in one message naming the key and the range, however the value came (a preset,
``--config FILE``, ``--set``, the Python API, a model file). The numeric options of the commands
and of :mod:`tagger.api` that are not config keys declare theirs in :data:`OPTION_RANGES`.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import json
import math
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence, TypeVar

from tagger.errors import TaggerError

C = TypeVar("C")

#: The two parts of a preset or of a sectioned config file.
SECTIONS = ("model", "training")


@dataclass(frozen=True)
class Range:
    """The values a numeric setting allows: ``low`` to ``high`` (``None``: unbounded), each end
    closed unless ``*_open``; ``odd``: odd integers only. Always finite."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    odd: bool = False

    def __str__(self) -> str:
        low, high = _number(self.low), _number(self.high)
        if self.odd:
            return f"an odd number >= {low}"
        if self.low is not None and self.high is not None:
            if not self.low_open and not self.high_open:
                return f"between {low} and {high}"
            return f"in {'(' if self.low_open else '['}{low}, {high}{')' if self.high_open else ']'}"
        if self.low is not None:
            return f"{'>' if self.low_open else '>='} {low}"
        if self.high is not None:
            return f"{'<' if self.high_open else '<='} {high}"
        return "a finite number"

    def holds(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        above = self.low is None or (value > self.low if self.low_open else value >= self.low)
        below = self.high is None or (value < self.high if self.high_open else value <= self.high)
        return above and below and (not self.odd or value % 2 == 1)

    def check(self, name: str, value: float) -> None:
        """A ``ValueError`` naming ``name`` and the range unless ``value`` is in it."""
        if not self.holds(value):
            raise ValueError(f"{name} must be {self}, not {value}")

    def click_type(self, kind: type) -> Any:
        """The range as a click option type (``click.IntRange`` or ``click.FloatRange``)."""
        import click

        cls = click.IntRange if kind is int else click.FloatRange
        return cls(min=self.low, max=self.high, min_open=self.low_open, max_open=self.high_open)


def _number(bound: float | None) -> str:
    return f"{bound:g}" if isinstance(bound, float) else str(bound)


def ranged(default: Any, *, at_least: float | None = None, above: float | None = None, at_most: float | None = None,
           below: float | None = None, odd: bool = False) -> Any:
    """A numeric config field with its default and allowed range (``at_least``/``above`` the
    low end, closed or open; ``at_most``/``below`` the high end; ``odd``), for
    :func:`check_ranges`. No bound at all: any finite number."""
    if (at_least is not None and above is not None) or (at_most is not None and below is not None):
        raise TypeError("a range has one low end and one high end")
    bounds = Range(above if at_least is None else at_least, below if at_most is None else at_most,
                   low_open=above is not None, high_open=below is not None, odd=odd)
    return dataclasses.field(default=default, metadata={"range": bounds})


def field_range(cls: type, name: str) -> Range | None:
    """The :class:`Range` field ``name`` of config ``cls`` declares (:func:`ranged`), if any."""
    field = {f.name: f for f in dataclasses.fields(cls)}.get(name)  # type: ignore[arg-type]
    return None if field is None else field.metadata.get("range")


#: False while a config is rebuilt from a model file (:func:`config_from_dict` ``from_file``): a
#: file written before a range was declared keeps loading with the values it was trained with.
_CHECK_RANGES = contextvars.ContextVar("check_ranges", default=True)


def check_ranges(config: Any) -> None:
    """A ``ValueError`` naming the first field of ``config`` (a config dataclass) whose value is
    outside its declared :class:`Range`, or whose numeric value is not a number."""
    if not _CHECK_RANGES.get():
        return
    for field in dataclasses.fields(config):
        bounds = field.metadata.get("range")
        if bounds is None:
            continue
        value = getattr(config, field.name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{field.name} must be a number, not {value!r}")
        bounds.check(field.name, value)


@dataclass
class TrainingConfig:
    """Training hyper-parameters shared by every model (the papers' recipes are presets)."""

    optimizer: str = "sgd"  # sgd | adam
    lr: float = ranged(0.02, above=0)
    momentum: float = ranged(0.0, at_least=0, below=1)  # SGD only
    weight_decay: float = ranged(0.0, at_least=0)
    batch_size: int = ranged(1, at_least=1)  # sentences per update; 1 = the papers' on-line training
    max_epochs: int = ranged(30, at_least=1)  # training runs at least one epoch
    patience: int = ranged(5, at_least=0)  # epochs without a better dev score before stopping (0 = never)
    lr_halving: bool = True  # halve lr when |e_prev - e_cur| / e_prev <= halve_threshold
    halve_threshold: float = ranged(0.005, at_least=0)
    # patience and halving count epochs of at least this many updates: on a corpus whose every
    # pass is fewer batches, ceil(min_epoch_updates / batches) passes are one such epoch (each pass
    # is still scored on dev); 0 = every pass is one. At 250, no EWT-sized run changes.
    min_epoch_updates: int = ranged(250, at_least=0)
    min_lr: float = ranged(0.0005, at_least=0)  # halve only while lr >= min_lr
    clip: float = ranged(5.0, at_least=0)  # gradient norm clipping (0 = off)
    # a fine-tuned pretrained encoder's weights (Model.pretrained_parameters): their learning rate
    # (0: lr), reached by a linear warm-up over encoder_warmup updates, halved with lr
    encoder_lr: float = ranged(0.0, at_least=0)
    encoder_warmup: int = ranged(0, at_least=0)
    accumulate: int = ranged(1, at_least=1)  # batches whose gradients make one update (gradient accumulation)
    batch_tokens: int = ranged(0, at_least=0)  # > 0: batches by tokens (sentences × the longest ≤ this) instead of batch_size
    # decay of a moving average of the weights, scored on dev and saved (0 = off)
    average: float = ranged(0.0, at_least=0, below=1)
    # mixed precision of the forward pass: off | bf16 | fp16 (with loss scaling); tagger.training.amp
    amp: str = "off"

    def __post_init__(self) -> None:
        check_ranges(self)
        if self.amp not in ("off", "bf16", "fp16"):
            raise ValueError(f"amp must be off, bf16 or fp16, not {self.amp!r}")
        if self.optimizer not in ("sgd", "adam"):
            raise ValueError(f"optimizer must be sgd or adam, not {self.optimizer!r}")


#: The numeric options of ``tagger train``, ``distill`` and ``ablate`` (and of :mod:`tagger.api`)
#: that are not config keys: their type and :class:`Range` (:func:`option_type`, :func:`check_options`).
OPTION_RANGES: dict[str, tuple[type, Range]] = {
    "threads": (int, Range(1)),
    "jobs": (int, Range(1)),
    "parsers": (int, Range(1)),
    "jackknife": (int, Range(2)),
    "max_sentences": (int, Range(1)),
    "max_minutes": (float, Range(0, low_open=True)),
    "budget_minutes": (float, Range(0, low_open=True)),
    "checkpoint_minutes": (float, Range(0, low_open=True)),
    "seed": (int, Range(-2 ** 63)),  # any whole number (torch takes them all)
}


def _option_range(name: str) -> tuple[type, Range]:
    if name in OPTION_RANGES:
        return OPTION_RANGES[name]
    bounds = field_range(TrainingConfig, name)
    if bounds is None:
        raise KeyError(f"no declared range for {name!r}")
    return type_hints(TrainingConfig)[name], bounds


@functools.lru_cache(maxsize=None)
def type_hints(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints(cls)``, worked out once a class (a config's annotations are strings:
    1 ms a call, 18 calls to load the shipped model). Read it, do not change it."""
    return typing.get_type_hints(cls)


def option_type(name: str) -> Any:
    """The click type of the numeric option ``name`` (``--max-minutes``: ``max_minutes``): its
    range in :data:`OPTION_RANGES`, or that of the :class:`TrainingConfig` key it sets."""
    kind, bounds = _option_range(name)
    return bounds.click_type(kind)


def check_options(**values: Any) -> None:
    """A :class:`TaggerError` naming the first of the numeric options ``values`` (``None``: not
    given) outside its range (as :func:`option_type`), for the Python API."""
    for name, value in values.items():
        if value is None:
            continue
        kind, bounds = _option_range(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TaggerError(f"{name} must be a number, not {value!r}")
        whole = kind is not int or (math.isfinite(value) and value == int(value))
        if not whole or not bounds.holds(value):
            raise TaggerError(f"{name} must be {'' if whole else 'an integer '}{bounds}, not {value}")


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
                if isinstance(value, bool) and typ is not str:  # JSON's true is no number (int(True) is 1)
                    raise ValueError
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
                  defaults: Mapping[str, Any] | None = None,
                  options: Mapping[str, str] | None = None) -> tuple[Any, TrainingConfig]:
    """``(model config, training config)`` of the model family ``model_cls`` (its ``Config`` and
    ``training_defaults``), layered: field defaults < the family's ``training_defaults`` <
    ``defaults`` (a task's, e.g. CCG's ``rare_tag_count``) < ``preset`` (of ``presets``) < JSON
    ``file`` < ``key=value`` overrides. ``options`` names the command-line option an override's
    value came from where that is not ``--set`` (``{"column": "--column"}``): errors about that
    key name it."""
    return _build(model_cls.Config, model_cls.training_defaults, presets, preset, file, overrides, defaults, options)


def build_config(cls: type[C], presets: Mapping[str, Mapping[str, Any]], preset: str | None, file: str | Path | None = None,
                 overrides: Sequence[str] = (), defaults: Mapping[str, Any] | None = None) -> C:
    """The model config ``cls`` alone, as :func:`build_configs` layers it (for building a model
    outside training: training keys are accepted, and go to a training config that is dropped)."""
    return _build(cls, {}, presets, preset, file, overrides, defaults)[0]


def _build(config_cls: type, training_defaults: Mapping[str, Any], presets: Mapping[str, Mapping[str, Any]],
           preset: str | None, file: str | Path | None, overrides: Sequence[str],
           defaults: Mapping[str, Any] | None, options: Mapping[str, str] | None = None) -> tuple[Any, TrainingConfig]:
    both: tuple[dict[str, Any], dict[str, Any]] = ({}, dict(training_defaults))
    origins: dict[str, str] = {}  # where each key's value came from, for its errors
    _route(defaults or {}, config_cls, TrainingConfig, None, both)
    if preset is not None:
        model, training = resolve_preset(presets, preset)
        both[0].update(model)
        both[1].update(training)
        origins.update(dict.fromkeys([*model, *training], f"preset {preset}"))
    if file is not None:
        loaded = read_config_file(file)
        _route_file(loaded, config_cls, TrainingConfig, str(file), both)
        origins.update(dict.fromkeys([k for part in loaded.values() for k in part] if _sectioned(loaded) else loaded,
                                     str(file)))
    settings = parse_overrides(overrides)
    _route(settings, config_cls, TrainingConfig, "--set", both)
    origins.update({key: (options or {}).get(key, "--set") for key in settings})
    where = "--set" if overrides else (str(file) if file else None)
    return (config_from_dict(config_cls, both[0], where, origins),
            config_from_dict(TrainingConfig, both[1], where, origins))


def config_from_dict(cls: type[C], values: Mapping[str, Any], where: str | None = None,
                     origins: Mapping[str, str] | None = None, from_file: bool = False) -> C:
    """``cls(**values)`` with unknown keys rejected, values converted to the field types and
    checked against their ranges (:func:`ranged`). An error about one key (a range's, or a
    config's own check whose message starts with the key's name) names where its value came from
    (``origins``, else ``where``); one about several, ``where``. ``from_file``: the
    values are a model file's, which loads whatever its ranges (they were declared after some
    files were written); what a user asks for is always checked."""
    if from_file:
        token = _CHECK_RANGES.set(False)
        try:
            return config_from_dict(cls, values, where, origins)
        finally:
            _CHECK_RANGES.reset(token)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    hints = type_hints(cls)
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise TaggerError(f"unknown config key(s): {', '.join(unknown)}; known: {', '.join(sorted(fields))}", where)
    source = {k: (origins or {}).get(k, where) for k in values}
    converted = {k: _convert(v, hints.get(k, fields[k].type), k, source[k] or "config") for k, v in values.items()}
    for key, value in converted.items():
        bounds = fields[key].metadata.get("range") if _CHECK_RANGES.get() else None
        try:
            if bounds is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
                bounds.check(key, value)
        except ValueError as e:
            raise TaggerError(str(e), source[key]) from None
    try:
        return cls(**converted)
    except ValueError as e:  # one that starts with a key's name is about that key's value
        raise TaggerError(str(e), source.get(str(e).split(" ", 1)[0]) or where) from None


def split_flat(values: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A flat config (model files of format 1 kept both in one) as ``(model values, training
    values)``: the keys of :class:`TrainingConfig` go to the second, every other to the first."""
    training_keys = set(field_names(TrainingConfig))
    return ({k: v for k, v in values.items() if k not in training_keys},
            {k: v for k, v in values.items() if k in training_keys})


def config_to_dict(config: Any) -> dict[str, Any]:
    return dataclasses.asdict(config)
