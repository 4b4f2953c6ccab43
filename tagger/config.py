"""Configs: one ``@dataclass`` per model, built from a named preset, a file and ``key=value``
overrides. Unknown keys and badly typed values are errors, never silently ignored."""

from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, TypeVar

from tagger.errors import TaggerError

C = TypeVar("C")


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


def build_config(cls: type[C], presets: dict[str, dict[str, Any]], preset: str | None, file: str | Path | None = None,
                 overrides: tuple[str, ...] | list[str] = (), defaults: Mapping[str, Any] | None = None) -> C:
    """The config of ``cls``: its field defaults < ``defaults`` (a task's, e.g. CCG's
    ``rare_tag_count``) < preset < JSON ``file`` < ``key=value`` overrides."""
    values: dict[str, Any] = dict(defaults or {})
    if preset is not None:
        if preset not in presets:
            raise TaggerError(f"unknown preset {preset!r}; choose from: {', '.join(sorted(presets))}")
        values.update(presets[preset])
    if file is not None:
        try:
            loaded = json.loads(Path(file).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise TaggerError("no such file", str(file)) from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise TaggerError(f"not a JSON config: {e}", str(file)) from None
        if not isinstance(loaded, dict):
            raise TaggerError("a config file must hold one JSON object", str(file))
        values.update({k: (tuple(v) if isinstance(v, list) else v) for k, v in loaded.items()})
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise TaggerError(f"--set takes key=value, not {item!r}")
        values[key.strip()] = value.strip()
    return config_from_dict(cls, values, "--set" if overrides else (str(file) if file else None))


def config_from_dict(cls: type[C], values: dict[str, Any], where: str | None = None) -> C:
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


def config_to_dict(config: Any) -> dict[str, Any]:
    return dataclasses.asdict(config)
