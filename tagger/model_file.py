"""One model file: ``{format_version, tagger_version, name, config, training, vocabs, state_dict, meta}``.

``config`` is the model config (the network's hyper-parameters), ``training`` the training
config it was trained with (None when not known). Format 1 files (tagger 0.1, up to issue 15)
kept both in one flat ``config``: they still load, split by field names (:func:`configs_of`).

Plain data only (dicts, lists, strings, numbers, tensors), written atomically and read by the
torch-free reader :func:`tagger.archive.read` (its arrays made tensors here), or, for what it
does not take, ``torch.load(weights_only=True)``: a model file can never run code, and loads on
CPU whatever device trained it. Scores in ``meta`` (``dev_score``, each history record's ``dev``) are
fractions (0-1), in every format version; ``tagger info`` shows them as percentages.
"""

from __future__ import annotations

import os
import pickle
import stat
import tempfile
import warnings
from pathlib import Path
from typing import IO, Any, Callable

import numpy as np
import torch

from tagger.version import __version__
from tagger import archive as plain
from tagger.errors import TaggerError
from tagger.modules import init
from tagger.formats.base import umask_mode  # noqa: F401 - the mode a new file gets, here as before

FORMAT_VERSION = 3  # 3: the ablation zoo's layer (tagger.models.skip_lstm.upgrade reads 2)

#: How every file ``torch.save`` writes begins: a zip archive (torch >= 1.6) or a pickle (older).
MAGIC = (b"PK\x03\x04", b"\x80")


def atomic_save(obj: Any, path: str | os.PathLike) -> None:
    """``torch.save`` to ``path`` atomically (:func:`atomic_write`)."""
    atomic_write(path, lambda f: torch.save(obj, f))


def atomic_write(path: str | os.PathLike, write: Callable[[IO[bytes]], Any]) -> None:
    """``write`` a temporary file in the same folder, fsync, then rename it over ``path``: a kill
    leaves the old file or the new one, never half of one.

    What ``path`` names is checked first (:func:`write_target`): a symbolic link has its target
    replaced (the link stays a link); a character device or FIFO (``--out /dev/null``) is written
    through, as ``open(path, "w")`` would, never replaced; a folder or any other special file is
    a one-line error. Missing parent folders are created; the file gets the mode ``open(path,
    "w")`` would give it (an existing file's own, else the umask's), not the 0600 of a temporary
    file. A failed write (a full disk) is a one-line error that leaves the old file."""
    name = os.fspath(path)
    target, through = write_target(name)
    if through:
        try:
            with open(target, "wb") as f:
                write(f)
        except OSError as e:
            raise TaggerError(f"cannot write: {e.strerror or e}", name) from None
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except (FileExistsError, NotADirectoryError):
        raise TaggerError("cannot write: a folder on its path is a file", name) from None
    except OSError as e:
        raise TaggerError(f"cannot write: {e.strerror}", name) from None
    try:
        os.fchmod(fd, stat.S_IMODE(target.stat().st_mode) if target.exists() else umask_mode())
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise TaggerError(f"cannot write: {e.strerror or e}", name) from None
        raise


def write_target(path: str) -> tuple[Path, bool]:
    """Where writing ``path`` lands, symbolic links followed, and whether it is written through
    (True: an existing character device or FIFO, which no rename may replace) rather than
    replaced by a renamed temporary file (False: a regular file, or nothing yet). A folder, a
    block device or a socket is a one-line error."""
    target = Path(os.path.realpath(path))
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return target, False
    except NotADirectoryError:
        raise TaggerError("cannot write: a folder on its path is a file", path) from None
    except OSError as e:
        raise TaggerError(f"cannot write: {e.strerror}", path) from None
    if stat.S_ISREG(mode):
        return target, False
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return target, True
    if stat.S_ISDIR(mode):
        raise TaggerError("is a folder: give the name of a file to write", path)
    kind = "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "a special file"
    raise TaggerError(f"refused to write over {kind}: give the name of a regular file", path)


def archive(model: Any, training: Any = None, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The plain data of a model file (and the model part of a training checkpoint): ``model``'s
    name, config, vocabularies and weights (on the CPU), the ``training`` config, ``meta``."""
    from tagger.config import config_to_dict

    return {
        "format_version": FORMAT_VERSION,
        "tagger_version": __version__,
        "name": model.name,
        "config": config_to_dict(model.config),
        "training": config_to_dict(training) if training is not None else None,
        "vocabs": {k: list(v) for k, v in model.vocabs.items()},
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "meta": meta if meta is not None else {},
    }


def save(path: str | os.PathLike, model: torch.nn.Module, meta: dict[str, Any], training: Any = None) -> None:
    """Write ``model`` (a :class:`tagger.models.base.Model`) with ``meta`` and the ``training`` config."""
    atomic_save(archive(model, training, meta), path)


def read_archive(path: str | os.PathLike) -> dict[str, Any]:
    """The archive's plain data, checked, its tensors on the CPU; a :class:`TaggerError` for
    anything not ours. Read by :func:`tagger.archive.read` (torch-free, weights only), else by
    ``torch.load(weights_only=True)`` (older layouts; the refusals and their messages). A shipped
    model's name (``en``) stands for its file wherever a model file is read (a teacher, a
    ``--bootstrap``: where it is no model of the kind wanted, the reader of that option says so)."""
    from tagger import resources

    name = resources.model_path(path)
    check_magic(name)
    archive = plain.read(name)
    archive = _tensors(archive) if archive is not None else _torch_load(name)
    if not isinstance(archive, dict) or "format_version" not in archive or "state_dict" not in archive:
        raise TaggerError("not a tagger model file", name)
    version = archive["format_version"]
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise TaggerError(
            f"model file format {version} (written by tagger {archive.get('tagger_version', '?')}) is newer than "
            f"this tagger {__version__} reads (format {FORMAT_VERSION}); upgrade tagger",
            name,
        )
    return archive


def _torch_load(name: str) -> Any:
    """``torch.load(weights_only=True)`` of what :func:`tagger.archive.read` does not take, its
    errors one line."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.load(name, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise TaggerError("no such model file", name) from None
    except IsADirectoryError:
        raise TaggerError("is a directory, not a model file", name) from None
    except pickle.UnpicklingError as e:
        reason = next((line.strip() for line in str(e).splitlines() if "Unsupported" in line or "GLOBAL" in line), "")
        raise TaggerError("refused: not a plain-data tagger model file; loading it could run code"
                          + (f" ({reason.split('. Please')[0].rstrip('.')})" if reason else ""), name) from None
    except Exception as e:  # noqa: BLE001 - torch raises many types for corrupt or truncated archives
        raise TaggerError(f"not a tagger model file, or truncated ({type(e).__name__})", name) from None


def _tensors(value: Any) -> Any:
    """``value`` (plain data of :func:`tagger.archive.read`) with its numpy arrays as tensors."""
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value)
    if isinstance(value, dict):
        return type(value)((key, _tensors(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(_tensors(item) for item in value)
    return value


def check_magic(name: str) -> None:
    """A plain one-line error for a file that is no torch archive at all (a corpus, a text file),
    before ``torch.load`` reads it as a pickle."""
    try:
        with open(name, "rb") as f:
            head = f.read(4)
    except FileNotFoundError:
        raise TaggerError("no such model file", name) from None
    except IsADirectoryError:
        raise TaggerError("is a directory, not a model file", name) from None
    except OSError as e:
        raise TaggerError(f"cannot read: {e.strerror}", name) from None
    if not head.startswith(MAGIC):
        raise TaggerError("not a tagger model file" + (" (it is empty)" if not head else ""), name)


def configs_of(archive: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The ``(model config, training config)`` values of an archive of any format; the training
    part is None when the file does not record it."""
    from tagger.config import split_flat

    if archive["format_version"] < 2:  # one flat config held both
        model, training = split_flat(archive.get("config", {}))
        return model, training
    return archive.get("config", {}), archive.get("training")


def upgrades() -> dict[str, Any]:
    """Per model family, the function that turns an older file's ``(config, state_dict, format
    version)`` into what this format's model reads."""
    from tagger.models.skip_lstm.upgrade import upgrade
    from tagger.models.transition_parser.upgrade import upgrade as parser_upgrade

    return {"skip_lstm": upgrade, "transition_parser": parser_upgrade}


def save_pipeline(path: str | os.PathLike, stages: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    """Write a pipeline model file: the :func:`archive` of each stage, in the order they run
    (:class:`tagger.pipeline.Pipeline`), each with its own config, vocabularies, weights and meta.
    A frozen table of pretrained vectors that several stages hold alike (the tagger's, and the
    parser encoder's taken from it) is stored once (:func:`share_tables`)."""
    atomic_save({
        "format_version": FORMAT_VERSION,
        "tagger_version": __version__,
        "name": PIPELINE,
        "stages": share_tables(stages),
        "state_dict": {},  # the weights are the stages'
        "meta": meta,
    }, path)


#: The state dict entries that are frozen tables of pretrained vectors (never trained, so equal in
#: every model that took them from the same tagger).
FROZEN_TABLES = ("input.pretrained", "encoder.input.pretrained")


def share_tables(archives: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``archives`` with each frozen table (:data:`FROZEN_TABLES`, in stages and ensemble
    members) and each transformer weight (:func:`_shared_kind`) that equals an earlier one
    replaced by that very tensor: ``torch.save`` writes a
    storage once however many tensors use it, and :func:`tagger.archive.read` reads it once."""
    seen: dict[str, list[torch.Tensor]] = {}

    def shared(archive: dict[str, Any]) -> dict[str, Any]:
        state = dict(archive["state_dict"])
        for key, table in state.items():
            kind = _shared_kind(key)
            if kind is None or not isinstance(table, torch.Tensor):
                continue
            tables = seen.setdefault(kind, [])
            same = next((t for t in tables if t.shape == table.shape and t.dtype == table.dtype and torch.equal(t, table)), None)
            state[key] = same if same is not None else table
            if same is None:
                tables.append(table)
        out = {**archive, "state_dict": state}
        if isinstance(archive.get("members"), list):
            out["members"] = [shared(member) for member in archive["members"]]
        return out

    return [shared(archive) for archive in archives]


def _shared_kind(key: str) -> str | None:
    """What a state dict entry may equal in another stage: a frozen table of pretrained vectors
    (:data:`FROZEN_TABLES`), or a weight of a pretrained transformer (``transformer.model.*``,
    the tagger's and its parser encoder's: equal while neither was fine-tuned); None for the rest."""
    if key in FROZEN_TABLES:
        return "table"
    at = key.find(TRANSFORMER_WEIGHTS)
    return key[at:] if at >= 0 else None


#: Where a pretrained transformer's own weights are in a state dict (a tagger's, a parser encoder's).
TRANSFORMER_WEIGHTS = "transformer.model."


def half_weights(archive: dict[str, Any]) -> dict[str, Any]:
    """``archive`` (a model file's plain data, a pipeline's or an ensemble's included) with every
    float32 weight stored as float16: half the file, for the shipped model
    (``bench/build_default_model.py``). Readers need nothing new: torch's ``load_state_dict``
    and the runtimes' exporters take every weight back to float32, so only the stored values are
    rounded (10 bits of mantissa; the bf16 kernels already multiply with 7)."""
    out = dict(archive)
    out["state_dict"] = {key: value.half() if value.dtype == torch.float32 else value
                         for key, value in archive["state_dict"].items()}
    for part in ("stages", "members"):
        if isinstance(archive.get(part), list):
            out[part] = share_tables([half_weights(item) for item in archive[part]])
    return out


#: The ``name`` of a pipeline model file (:func:`save_pipeline`).
PIPELINE = "pipeline"
#: The ``name`` of a parser ensemble (:func:`save_ensemble`; a model file or a pipeline's stage).
ENSEMBLE = "parser_ensemble"


def ensemble_archive(members: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """The plain data of a parser ensemble: the :func:`archive` of each member parser, in order
    (:class:`tagger.models.transition_parser.ensemble.ParserEnsemble`)."""
    return {
        "format_version": FORMAT_VERSION,
        "tagger_version": __version__,
        "name": ENSEMBLE,
        "members": members,
        "state_dict": {},  # the weights are the members'
        "meta": meta,
    }


def save_ensemble(path: str | os.PathLike, members: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    """Write a parser ensemble's model file (:func:`ensemble_archive`)."""
    atomic_save(ensemble_archive(members, meta), path)


def load(path: str | os.PathLike, device: str | torch.device = "cpu") -> tuple[torch.nn.Module, dict[str, Any]]:
    """The model in eval mode on ``device``, and the archive's ``meta``; a pipeline file's
    stages as one :class:`tagger.pipeline.Pipeline`."""
    archive = read_archive(path)
    name = os.fspath(path)
    if archive.get("name") == PIPELINE:
        from tagger.pipeline import Pipeline

        stages = archive.get("stages")
        if not isinstance(stages, list) or not stages or not all(isinstance(s, dict) and "state_dict" in s for s in stages):
            raise TaggerError("a pipeline model file without stages", name)
        return Pipeline([model_of(stage, name) for stage in stages]).to(device).eval(), archive.get("meta", {})
    return model_of(archive, name).to(device).eval(), archive.get("meta", {})


def model_of(archive: dict[str, Any], name: str) -> torch.nn.Module:
    """The model of one archive (a model file's, or a pipeline stage's), upgraded from older formats."""
    from tagger.config import config_from_dict
    from tagger.models import MODELS

    if archive.get("name") == ENSEMBLE:
        from tagger.models.transition_parser.ensemble import ParserEnsemble, check_members

        members = archive.get("members")
        if not isinstance(members, list) or not all(isinstance(m, dict) and "state_dict" in m for m in members):
            raise TaggerError("a parser ensemble without its parsers", name)
        parsers = [model_of(member, name) for member in members]
        check_members(parsers, [f"{name} (parser {k + 1})" for k in range(len(parsers))])
        return ParserEnsemble(parsers)
    cls = MODELS.get(archive.get("name"))
    if cls is None:
        raise TaggerError(f"unknown model type {archive.get('name')!r}", name)
    values, state = configs_of(archive)[0], archive["state_dict"]
    upgrade = upgrades().get(cls.name)
    if upgrade is not None:
        values, state = upgrade(values, state, archive["format_version"])
    config = config_from_dict(cls.Config, values, name, from_file=True)
    with init.loading():  # the file's weights replace any initialisation
        model = cls(config, archive["vocabs"])
    try:
        model.load_state_dict(state)
    except RuntimeError as e:
        raise TaggerError(f"weights do not fit the model: {str(e).splitlines()[0]}", name) from None
    return model.eval()
