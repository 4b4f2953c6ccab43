"""Speed of every ablation-zoo variant's recurrent layers against the ``fast`` preset's, at the
same size (docs/zoo.md, "Speed").

Each preset's :class:`StackedBiRNN` is built from its own config with ``--layers``/``--hidden``
overriding the preset's (the size the issue compares at), fed the same random input (``--input``
wide: the 2017 paper's 465 by default, for every row, so that only the cell differs) and timed
for a training step (forward and backward) and for inference (``torch.no_grad``, eval mode), on
a batch of ``--batch`` sentences with lengths drawn like UD EWT's (mean ~17, max ``--steps``).
Rounds go through every variant in turn, ``--rounds`` times; a variant's time is its median.
Input-layer rows (2017 Table 5) have their base's cell and are timed all the same.

    OMP_NUM_THREADS=1 python bench/bench_zoo.py --layers 4 --hidden 64 > zoo-speed.jsonl

One JSON object per preset on stdout (ms per step, µs per token, ratio to ``fast``), a markdown
table on stderr.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch

from tagger.config import build_configs
from tagger.devices import cpu_name
from tagger.models.skip_lstm import SkipLSTMTagger
from tagger.models.skip_lstm.presets import PRESETS
from tagger.modules.recurrent import StackedBiRNN


def build(name: str, layers: int, hidden: int, width: int) -> StackedBiRNN:
    config, _ = build_configs(SkipLSTMTagger, PRESETS, name, overrides=[f"layers={layers}", f"hidden={hidden}"])
    return StackedBiRNN(width, hidden, config.layers, config.cell_spec, config.skip_span, (), config.init_scale,
                        config.composition)


def time_once(rnn: StackedBiRNN, x: torch.Tensor, lengths: torch.Tensor, train: bool) -> float:
    start = time.perf_counter()
    if train:
        rnn.train()
        rnn(x, lengths).sum().backward()
    else:
        rnn.eval()
        with torch.no_grad():
            rnn(x, lengths)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--input", type=int, default=465)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--presets", help="comma-separated names (default: fast and every zoo row)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    names = args.presets.split(",") if args.presets else ["fast"] + [n for n, p in PRESETS.items() if "table" in p]
    torch.manual_seed(0)
    lengths = torch.clamp(torch.poisson(torch.full((args.batch,), 17.0)).long(), 1, args.steps)
    lengths[0] = int(lengths.max())
    x = torch.randn(int(lengths.max()), args.batch, args.input, requires_grad=True)
    tokens = int(lengths.sum())
    models = {name: build(name, args.layers, args.hidden, args.input) for name in names}
    times: dict[str, dict[str, list[float]]] = {name: {"train": [], "infer": []} for name in names}
    for name in names:  # warm-up
        for mode in ("train", "infer"):
            time_once(models[name], x, lengths, mode == "train")
    for _ in range(args.rounds):
        for name in names:
            for mode in ("train", "infer"):
                times[name][mode].append(time_once(models[name], x, lengths, mode == "train"))
    base = {mode: statistics.median(times["fast"][mode]) if "fast" in times else None for mode in ("train", "infer")}
    print("| preset | layers | train ms/batch | ratio to fast | inference ms/batch | ratio to fast |", file=sys.stderr)
    print("|---|---|---|---|---|---|", file=sys.stderr)
    for name in names:
        row = {"preset": name, "layers": len(models[name].layers), "hidden": args.hidden,
               "input": args.input, "batch": args.batch, "tokens": tokens, "threads": args.threads, "cpu": cpu_name(),
               "rounds": args.rounds}
        for mode in ("train", "infer"):
            median = statistics.median(times[name][mode])
            row[f"{mode}_ms"] = round(median * 1e3, 2)
            row[f"{mode}_us_per_token"] = round(median * 1e6 / tokens, 2)
            row[f"{mode}_ratio"] = round(median / base[mode], 2) if base[mode] else None
        print(json.dumps(row), flush=True)
        print(f"| {name} | {row['layers']} | {row['train_ms']} | {row['train_ratio']} | {row['infer_ms']} | "
              f"{row['infer_ratio']} |", file=sys.stderr)


if __name__ == "__main__":
    main()
