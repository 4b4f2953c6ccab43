"""Forward-pass efficiency of the tagger: achieved FLOP/s over this machine's matmul peak.

The peak is ``torch.mm`` of two 2048×2048 fp32 matrices in the same process (best of 10);
the forward's FLOPs are counted by ``torch.utils.flop_counter`` (matrix products only, so the
elementwise gate arithmetic is not credited) and its time is the median of --repeats.

    python bench/bench_flops.py --preset wu2016-7x512 --batch 64 --length 25
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch
from torch.utils.flop_counter import FlopCounterMode

from tagger.config import build_config
from tagger.models.skip_lstm import PRESETS, SkipLSTMTagger, TaggerBatch, TaggerConfig


def matmul_peak(repeats: int = 10) -> float:
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    for _ in range(3):
        torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * 2048**3 / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="wu2016-7x512")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--length", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    config = build_config(TaggerConfig, PRESETS, args.preset)
    vocabs = {"words": ["<pad>", "<unk>"] + [f"w{i}" for i in range(20000)], "chars": ["<pad>", "<unk>"] + [chr(97 + i) for i in range(80)],
              "tags": ["<pad>"] + [f"T{i}" for i in range(50)], "rare_word_from": ["20000"]}
    model = SkipLSTMTagger(config, vocabs).to(args.device).eval()
    B, T = args.batch, args.length
    # every token a distinct word: the first layer's per-word precomputation gains nothing here
    U = B * T
    batch = TaggerBatch(torch.arange(1, U + 1).view(B, T), torch.randint(2, 20000, (U + 1,)), torch.randint(1, 6, (U + 1,)),
                        torch.randint(1, 80, (U + 1, 2 * config.char_length)), torch.full((B,), T), None,
                        torch.randint(1, 80, (U + 1, 10)) if config.char_cnn else None).to(torch.device(args.device))  # 8-letter words
    with torch.inference_mode():
        with FlopCounterMode(display=False) as counter:
            model(batch)
        flops = counter.get_total_flops()
        model(batch)
        times = []
        for _ in range(args.repeats):
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            start = time.perf_counter()
            model(batch)
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
    peak = matmul_peak()
    achieved = flops / statistics.median(times)
    print(json.dumps({"bench": "tagger-flops", "preset": args.preset, "layers": config.layers, "hidden": config.hidden,
                      "batch": B, "length": T, "threads": args.threads, "forward_gflop": round(flops / 1e9, 2),
                      "forward_s": round(statistics.median(times), 4), "achieved_gflops": round(achieved / 1e9, 1),
                      "matmul_peak_gflops": round(peak / 1e9, 1), "fraction_of_peak": round(achieved / peak, 3),
                      "tokens_per_s": round(B * T / statistics.median(times))}))


if __name__ == "__main__":
    main()
