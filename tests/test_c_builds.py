"""The C steps (tagger/modules/_fastscan.c) build wherever `pip install` may run: with GCC and with
clang, for x86-64 (with and without the bf16 kernels) and for aarch64, where it has only the plain
C float32 kernels, vectorised by the compiler for NEON. Compile-only (no aarch64 machine runs
them here); each compiler that is not installed is skipped (`.ci/run` installs Debian's
gcc-aarch64-linux-gnu and clang where apt-get can)."""

from __future__ import annotations

import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "tagger" / "modules" / "_fastscan.c"
#: setup.py's flags (but -O1: the same code, and compiling at -O3 five times takes half a minute),
#: and every warning
FLAGS = ["-O1", "-fno-math-errno", "-fno-trapping-math", "-freciprocal-math", "-fno-signed-zeros", "-fPIC", "-Wall",
         "-Werror=implicit-function-declaration", "-Werror=incompatible-pointer-types", "-Werror=return-type"]

BUILDS = {
    "gcc x86-64": (["gcc"], []),
    "gcc x86-64 without bf16 kernels": (["gcc"], ["-DTAGGER_NO_BF16_KERNELS"]),
    "clang x86-64": (["clang"], []),
    "gcc aarch64": (["aarch64-linux-gnu-gcc"], []),
    "clang aarch64": (["clang", "--target=aarch64-linux-gnu"], []),
}


def _symbols(path: Path) -> str:
    nm = shutil.which("nm")
    return subprocess.run([nm, str(path)], capture_output=True, text=True, check=True).stdout if nm else ""


@pytest.mark.parametrize("name", list(BUILDS))
def test_the_c_steps_compile(name, tmp_path):
    command, extra = BUILDS[name]
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    if "aarch64" in name and command[0] == "clang" and not Path("/usr/aarch64-linux-gnu/include").is_dir():
        pytest.skip("no aarch64 C library headers (libc6-dev-arm64-cross)")
    out = tmp_path / "fastscan.o"
    done = subprocess.run([*command, *FLAGS, *extra, f"-I{sysconfig.get_paths()['include']}", "-c", str(SOURCE),
                           "-o", str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    warnings = [line for line in done.stderr.splitlines() if "warning:" in line]
    assert not warnings, "\n".join(warnings)
    symbols = _symbols(out)
    if symbols:
        assert "PyInit__fastscan" in symbols


def test_a_build_from_other_sources_is_set_aside_and_said_once(capsys):
    from types import SimpleNamespace

    from tagger.modules import fused

    assert fused.current(None) is None
    same = SimpleNamespace(VERSION=fused.C_VERSION)
    assert fused.current(same) is same and capsys.readouterr().err == ""
    for stale in (SimpleNamespace(), SimpleNamespace(VERSION=fused.C_VERSION - 1)):  # before VERSION, or older
        assert fused.current(stale) is None
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "pip install -e ." in err and f"this code's {fused.C_VERSION}" in err
    built = pytest.importorskip("tagger.modules._fastscan")  # the checkout's build: of these sources
    assert built.VERSION == fused.C_VERSION and fused._fastscan is built
