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


#: the LSTM cell as one loop, as it was before its exponentials got loops of their own
ONE_LOOP = r"""
static inline __attribute__((always_inline)) void cell_one_loop(
        int64_t H, const float *restrict zi, const float *restrict zf, const float *restrict zo,
        const float *restrict zg, const float *restrict zs, float *restrict c, float *restrict h,
        const float *restrict k, float m, int kmode) {
    for (int64_t j = 0; j < H; j++) {
        float i = sigmoid(zi[j]), f = sigmoid(zf[j]), o = sigmoid(zo[j]);
        float next = f * c[j] + i * tanh_(zs[j]);
        float out = o * tanh_(next);
        if (kmode == 1) out += sigmoid(zg[j]) * k[j];
        if (kmode == 2) out += k[j];
        if (kmode == 3) out += o * k[j];
        c[j] = next * m;
        h[j] = out * m;
    }
}
"""

COMPARE = r"""
enum { H = 128, G = 5 * H };
/* as the kernels call it: inlined into a function of its own, for each shortcut form */
#define CALLER(name, cellf)                                                                                \
    __attribute__((noinline)) void name(float *z, int gates, float *c, float *h, const float *k, float m, \
                                        int kmode) {                                                       \
        float *zg = z + (gates - 1) * H, *zs = z + gates * H;                                              \
        switch (kmode) {                                                                                   \
        case 0: cellf(H, z, z + H, z + 2 * H, zg, zs, c, h, k, m, 0); break;                               \
        case 1: cellf(H, z, z + H, z + 2 * H, zg, zs, c, h, k, m, 1); break;                               \
        case 2: cellf(H, z, z + H, z + 2 * H, zg, zs, c, h, k, m, 2); break;                               \
        default: cellf(H, z, z + H, z + 2 * H, zg, zs, c, h, k, m, 3); break;                              \
        }                                                                                                  \
    }
CALLER(one, cell_one_loop)
CALLER(split, cell)
int main(void) {
    static float z0[G], z[G], c0[H], c1[H], c2[H], h1[H], h2[H], k[H];
    unsigned seed = 1;
    int differ = 0;
    for (int j = 0; j < G; j++) { seed = seed * 1103515245u + 12345u; z0[j] = ((seed >> 8) % 20001) / 1000.0f - 10.0f; }
    for (int j = 0; j < H; j++) { c0[j] = (j % 17) / 4.0f - 2.0f; k[j] = (j % 7) / 7.0f - 0.5f; }
    for (int kmode = 0; kmode < 4; kmode++) {
        for (int gates = 3; gates <= 4; gates++) { /* γ's row the fourth, or (three rows) o's */
            memcpy(c1, c0, sizeof c0); memcpy(c2, c0, sizeof c0); memcpy(z, z0, sizeof z0);
            one(z0, gates, c1, h1, k, 0.5f + (kmode & 1) * 0.5f, kmode);
            split(z, gates, c2, h2, k, 0.5f + (kmode & 1) * 0.5f, kmode);
            if (memcmp(c1, c2, sizeof c1) || memcmp(h1, h2, sizeof h1)) { differ = 1; printf("kmode %d gates %d\n", kmode, gates); }
        }
    }
    printf("%s\n", differ ? "differ" : "same");
    return 0;
}
"""


@pytest.mark.parametrize("compiler, flags", [("gcc", []), ("gcc", ["-mavx2", "-mfma"]), ("gcc", ["-mavx512f", "-mavx2", "-mfma"]),
                                             ("clang", []), ("clang", ["-mavx2", "-mfma"])])
def test_the_cells_loops_of_their_own_give_the_one_loops_floats(compiler, flags, tmp_path):
    # the cell's σ and tanh rows in loops of their own (faster vectorised) compute each element as
    # the one loop did; built with setup.py's flags at -O3, run here (x86-64)
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} is not installed")
    text = SOURCE.read_text()
    start, end = text.index("static inline float fast_exp"), text.index("static inline float bf16_to_float")
    cell_at = text.index("static inline __attribute__((always_inline)) void cell(")
    cell_end = text.index("CLONES\nstatic void row(")
    program = tmp_path / "cell.c"
    program.write_text("#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n" + text[start:end]
                       + ONE_LOOP + text[cell_at:cell_end] + COMPARE)
    binary = tmp_path / "cell"
    done = subprocess.run([compiler, "-O3", *FLAGS[1:5], *flags, str(program), "-o", str(binary)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0 and flags:
        pytest.skip(f"{compiler} {' '.join(flags)} cannot build here: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-3000:]
    ran = subprocess.run([str(binary)], capture_output=True, text=True, check=False)
    if ran.returncode != 0 and flags:
        pytest.skip(f"this CPU cannot run {' '.join(flags)}")
    assert ran.stdout.strip().endswith("same"), ran.stdout
