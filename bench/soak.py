"""Soak: tag the EWT train file 20 times in one process; the memory must stay flat.

    python bench/soak.py                               # an untrained 2x16 tagger, 20 passes
    python bench/soak.py --model pos.tagger --passes 50 --malloc fixed

Each pass streams the whole file through :func:`tagger.tagging.tag` (read, tag, write CoNLL-U
to a sink that discards it) and prints the RSS after the pass and the peak so far. The first
pass fills what is filled once (the featurizer's memo of word types, torch's kernels); from then
on a leak would show as a steady climb. ``--malloc fixed`` pins glibc's mmap threshold so that
the RSS is not blurred by the allocator's heap reuse (see bench/stream_rss.py). Exit status 1
if the RSS after the last pass exceeds that after the second by more than ``--tolerance``
percent.
"""

from __future__ import annotations

import argparse
import ctypes
import io
import json
import os
import resource
import sys
import time
from pathlib import Path

EWT_TRAIN = Path(__file__).resolve().parents[2] / "shared" / "data" / "ud-english-ewt" / "en_ewt-ud-train.conllu"


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Sink(io.TextIOBase):
    """Counts what is written and keeps none of it."""

    def __init__(self) -> None:
        self.chars = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.chars += len(text)
        return len(text)


def fix_malloc() -> None:
    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(-3, 131072)  # M_MMAP_THRESHOLD: fixed, so no dynamic adjustment
    libc.mallopt(-1, 131072)  # M_TRIM_THRESHOLD


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=EWT_TRAIN)
    parser.add_argument("--model", type=Path, help="a model file (default: untrained 2x16 tagger on the file's words)")
    parser.add_argument("--passes", type=int, default=20)
    parser.add_argument("--malloc", choices=["default", "fixed"], default="default")
    parser.add_argument("--tolerance", type=float, default=10.0, help="allowed RSS growth, pass 2 -> last, in percent")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.file.exists():
        print(f"no such file: {args.file}", file=sys.stderr)
        return 2
    if args.malloc == "fixed":
        fix_malloc()
    import torch

    torch.set_num_threads(1)
    from tagger import formats, model_file
    from tagger.tagging import tag

    if args.model:
        model, _ = model_file.load(args.model)
    else:
        from tagger.config import build_config
        from tagger.models.skip_lstm import PRESETS, SkipLSTMTagger, TaggerConfig

        torch.manual_seed(0)
        config = build_config(TaggerConfig, PRESETS, "fast", overrides=["layers=2", "hidden=16", "word_dim=16"])
        model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, list(formats.read(args.file)))).eval()
    start_rss = rss_mib()
    rows = []
    for number in range(1, args.passes + 1):
        started = time.monotonic()
        counts = tag(model, formats.read(args.file), Sink(), "conllu")
        rows.append({"pass": number, "sentences": counts["sentences"], "seconds": round(time.monotonic() - started, 2),
                     "rss_mib": round(rss_mib(), 1), "peak_mib": round(peak_mib(), 1)})
        if not args.json:
            r = rows[-1]
            print(f"pass {number:>3}: {r['sentences']:,} sentences in {r['seconds']:.1f}s  "
                  f"RSS {r['rss_mib']:.1f} MiB  peak {r['peak_mib']:.1f} MiB", flush=True)
    base = rows[1]["rss_mib"] if len(rows) > 1 else rows[0]["rss_mib"]
    growth = 100 * (rows[-1]["rss_mib"] - base) / base
    peak_growth = 100 * (rows[-1]["peak_mib"] - rows[min(1, len(rows) - 1)]["peak_mib"]) / rows[min(1, len(rows) - 1)]["peak_mib"]
    ok = growth <= args.tolerance
    if args.json:
        print(json.dumps({"file": str(args.file), "malloc": args.malloc, "rss_before_mib": round(start_rss, 1),
                          "passes": rows, "growth_percent": round(growth, 1), "peak_growth_percent": round(peak_growth, 1),
                          "ok": ok}))
    else:
        print(f"RSS before the first pass {start_rss:.1f} MiB; after pass 2 {base:.1f} MiB, after pass {len(rows)} "
              f"{rows[-1]['rss_mib']:.1f} MiB: {growth:+.1f}% (peak {peak_growth:+.1f}%; tolerance {args.tolerance}%)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
