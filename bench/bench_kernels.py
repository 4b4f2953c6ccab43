"""The product kernels of the torch-free tagger (bf16, issue 20; float32, issue 33) against numpy's
float32 on this CPU.

    python bench/bench_kernels.py [--model upos.tagger] [--repeats 3]

Prints one JSON object: the CPU, which kernels it runs and which `tagger tag` takes by default
(``tagger.runtime.bf16.bf16_kernel``, with the measurement ``dot_products_pay`` that decides the
AVX512-BF16 kernel where there is no AMX), and GFLOP/s (best of 20) of the products the `fast`
model makes: an upper layer's input projection, one recurrent step, a chunk's per-word rows, by
numpy float32 (one BLAS thread) and by each kernel this CPU runs, float32 (plain C, AVX2, AVX-512),
int8 (AVX2, AVX-VNNI; codes of tanh(x), as a layer's outputs) and bf16. With --model, also the whole `tagger tag` of EWT train at one thread per way of
multiplying (``TAGGER_F32_KERNEL`` none / generic / avx2 / avx512 with ``--precision fp32``;
``TAGGER_BF16_KERNEL`` avx512-bf16 / amx, and none: torch's bf16; ``TAGGER_CPU=avx2`` /
``avx-vnni``: each int8 kernel, as on a CPU with AVX2 alone / and AVX-VNNI), medians of --repeats: what to
measure on a CPU where the default choice (``tagger.runtime.kernels``) was not measured.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: as `tagger tag` runs it

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EWT = ROOT.parent / "shared" / "data" / "ud-english-ewt"

from tagger.modules import fused  # noqa: E402
from tagger.modules import packing  # noqa: E402
from tagger.runtime import bf16, kernels  # noqa: E402

#: (what, M, K, N) of the `fast` preset's products
SHAPES = [("upper layer's input projection", 1024, 256, 1280), ("one recurrent step", 64, 128, 640),
          ("a chunk's per-word rows", 2000, 305, 3072)]


def products(has: int, f32: int, i8: int) -> dict:
    rng = np.random.default_rng(0)
    out = {}
    for what, m, k, n in SHAPES:
        x, w = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
        result = np.empty((m, n), dtype=np.float32)
        flops = 2 * m * k * n
        row = {"numpy float32": round(flops / bf16.best_seconds(lambda: np.matmul(x, w, out=result), 20) / 1e9, 1)}
        a, packed = bf16.rows(m, k), bf16.pack(w)
        a[:m, :k] = bf16.to_bf16(x)
        for kernel in range(1, has + 1):
            row[fused.KERNELS[kernel]] = round(
                flops / bf16.best_seconds(lambda: bf16.product(kernel, a, packed, result), 20) / 1e9, 1)
        panels = packing.pack(w, f32=True)
        for number in range(1, f32 + 1):
            way = kernels.Kernel(f32=number)
            row[way.name] = round(
                flops / bf16.best_seconds(lambda: kernels.product(way, x, panels, result), 20) / 1e9, 1)
        for number in [k for k in range(1, i8 + 1) if fused._fastscan.i8_kernel_runs(k)]:
            way = kernels.Kernel(f32=f32, i8=number)  # the layers' outputs, within ±1, as codes; K padded to 4
            quantised = packing.pack_i8(w, packing.scale_for(1.0), way.weight_max)
            codes = np.full((m, quantised.k), packing.ZERO, dtype=np.uint8)
            codes[:, :k] = packing.codes(np.tanh(x), quantised.scale)
            row[way.name] = round(
                flops / bf16.best_seconds(lambda: kernels.product(way, codes, quantised, result), 20) / 1e9, 1)
        out[f"{what} [{m}×{k}]·[{k}×{n}]"] = row
    return out


def whole(model: str, repeats: int, has: int, f32: int, i8: int) -> dict:
    ways = [(f"float32 kernel {fused.F32_KERNELS[k]}", {"TAGGER_F32_KERNEL": fused.F32_KERNELS[k]},
             ["--precision", "fp32"]) for k in range(f32 + 1)]
    ways += [(f"bf16 kernel {fused.KERNELS[k]}", {"TAGGER_BF16_KERNEL": fused.KERNELS[k]}, []) for k in range(1, has + 1)]
    ways += [("torch's bf16 (no kernel)", {"TAGGER_BF16_KERNEL": "none"}, [])]
    ways += [(f"int8 kernel {fused.I8_KERNELS[k]}, as such a CPU", {"TAGGER_CPU": fused.I8_KERNELS[k]}, [])
             for k in range(1, i8 + 1) if fused._fastscan.i8_kernel_runs(k)]
    seconds: dict[str, list[float]] = {name: [] for name, _, _ in ways}
    for _ in range(repeats):  # interleaved
        for name, env, extra in ways:
            with open(EWT / "en_ewt-ud-train.conllu", "rb") as source:
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "tagger", "tag", "--model", model, "--threads", "1", *extra],
                               stdin=source, stdout=subprocess.DEVNULL, check=True, cwd=ROOT,
                               env={**os.environ, **env})
                seconds[name].append(round(time.perf_counter() - start, 2))
    return {name: {"median_s": statistics.median(times), "all_s": times} for name, times in seconds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="a `fast` tagger, for the whole-process times")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    has = int(fused._fastscan.bf16_kernel()) if fused._fastscan is not None else 0
    f32 = int(fused._fastscan.f32_kernel()) if fused._fastscan is not None else 0
    i8 = int(fused._fastscan.i8_kernel()) if fused._fastscan is not None and f32 else 0
    info = Path("/proc/cpuinfo").read_text(errors="replace") if Path("/proc/cpuinfo").exists() else ""
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "?")
    out = {"bench": "product-kernels", "cpu": name, "cpus": os.cpu_count(), "kernels_here": fused.KERNELS[has],
           "f32_kernels_here": fused.F32_KERNELS[f32], "i8_kernels_here": fused.I8_KERNELS[i8],
           "default": (kernels.Kernel(bf16=bf16.bf16_kernel()) or kernels.Kernel(f32=kernels.f32_kernel())).name,
           "dot_products_pay": bf16.dot_products_pay() if has >= 1 else None,
           "gflops": products(has, f32, i8)}
    if args.model:
        out["tagger_tag_1_thread"] = whole(args.model, args.repeats, has, f32, i8)
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
