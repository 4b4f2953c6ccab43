"""``--device`` names: checked here once, for every command, into a name torch accepts."""

from __future__ import annotations

import platform
import re

import torch

from tagger.errors import TaggerError

_CUDA = re.compile(r"cuda(?::(\d+))?")


def mps_built() -> bool:
    """Whether this torch build has Apple's Metal (MPS) backend at all."""
    backend = getattr(torch.backends, "mps", None)  # absent from some torch builds
    return backend is not None and backend.is_built()


def device_names() -> list[str]:
    """The ``--device`` values this torch build knows, for help and error messages."""
    return ["auto", "cpu", "cuda", "cuda:N"] + (["mps"] if mps_built() else [])


def resolve_device(device: str) -> str:
    """``device`` checked and resolved (``auto``: ``cuda`` when a GPU is present, else ``cpu``);
    a one-line :class:`TaggerError` for a name torch does not know or a device that is absent."""
    name = device.strip().lower()
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cpu":
        return name
    cuda = _CUDA.fullmatch(name)
    if cuda:
        if not torch.cuda.is_available():
            raise TaggerError(f"--device {device}: no CUDA device is available (try --device cpu)")
        index = int(cuda.group(1) or 0)
        if index >= torch.cuda.device_count():
            raise TaggerError(f"--device {device}: there are only {torch.cuda.device_count()} CUDA device(s), "
                              f"cuda:0 to cuda:{torch.cuda.device_count() - 1}")
        return name
    if name == "mps":
        if not mps_built():
            raise TaggerError(f"--device {device}: this torch build has no MPS (Apple GPU) support; "
                              f"use one of {', '.join(device_names())}")
        if not torch.backends.mps.is_available():
            raise TaggerError(f"--device {device}: no MPS device is available (try --device cpu)")
        return name
    raise TaggerError(f"--device {device}: not a device name; use one of {', '.join(device_names())}")


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what :mod:`platform` says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"
