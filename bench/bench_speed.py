"""Tagging speed of `tagger tag` (whole process) against NLTK's averaged perceptron (issue 20).

    python bench/bench_speed.py --model upos.tagger --threads 2 --repeats 3

Per repeat, interleaved: `tagger tag --model M --threads T FILE > /dev/null` as a whole process
(start-up, model load, CoNLL-U in and out), then the perceptron's in-process ``tag_sents`` on the
same file's words. The perceptron is trained on --train's words and --column (5 iterations, as in
bench/bench_tagger.py) once and kept in --nltk-cache. Also the time to the first output line of
`echo "a b c" | tagger tag --model M`. Prints one JSON object: medians, their ratio, every
single figure, the CPU, whether it multiplies bf16 natively, and the load average before and after.
On a shared machine the wall times move with the other jobs; the CPU seconds of both sides
(``ours_cpu_s``: the whole `tagger tag` process, all its threads; ``nltk_cpu_s``) and their
ratio (``cpu_time_ratio``) move less, and with one thread they are what a quiet machine's wall
times would be. To measure here what another kind of CPU runs, set ``TAGGER_CPU`` (``avx2``,
``avx-vnni``, ``avx512-vnni``: tagger.options.as_cpu) for the run or for a ``--variant``. With
``--also-threads N``, each repeat also runs `tagger tag --threads N`: the speed-up of --threads
over N measured in the same runs (``threads_speedup``), not in two runs minutes apart. The
``paired_*`` figures are medians of each repeat's own ratio (:func:`paired`), steadier than the
ratio of medians where the machine's speed drifts. With ``--also-halves``, each repeat also runs
two `tagger tag --threads 1` processes at once, each on half of the file's sentences (cut at the
blank line nearest the middle byte): the most any sharing of the sentences between two cores can
give on this machine (nothing shared, no lock), to hold the two-thread figure against.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_pipeline import byte_compile  # bench/ is this script's folder

ROOT = Path(__file__).resolve().parents[1]
EWT = ROOT.parent / "shared" / "data" / "ud-english-ewt"


def cpu() -> dict:
    """The CPU model and whether it has native bf16 products (avx512_bf16 or amx_bf16)."""
    try:
        info = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return {"cpu": platform.processor() or platform.machine(), "bf16_native": None}
    model = re.search(r"^model name\s*:\s*(.*)$", info, re.M)
    flags = set(re.search(r"^flags\s*:\s*(.*)$", info, re.M).group(1).split())
    return {"cpu": model.group(1) if model else platform.machine(), "cpus": os.cpu_count(),
            "bf16_native": bool(flags & {"avx512_bf16", "amx_bf16"}), "avx512": "avx512f" in flags}


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def tagger_command(model: str, threads: int, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "tagger", "tag", "--model", model, "--threads", str(threads), *extra]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def whole_process(model: str, threads: int, path: Path, extra: list[str],
                  env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of `tagger tag` on ``path``, output to /dev/null (``env``: variables
    set for it)."""
    cpu_start = children_cpu()
    start = time.perf_counter()
    with open(path, "rb") as inp:
        done = subprocess.run(tagger_command(model, threads, extra), stdin=inp, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False, env={**os.environ, **(env or {})})
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"tagger tag failed:\n{done.stderr.decode()[-2000:]}")
    return wall, children_cpu() - cpu_start


def first_line(model: str, threads: int, extra: list[str], text: bytes = b"a b c\n") -> float:
    """Seconds from starting `tagger tag` on ``text`` (stdin) to its first output line."""
    start = time.perf_counter()
    process = subprocess.Popen(tagger_command(model, threads, extra), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    process.stdin.write(text)
    process.stdin.close()
    line = process.stdout.readline()
    wall = time.perf_counter() - start
    process.stdout.read()
    if process.wait() != 0 or not line:
        raise SystemExit("tagger tag gave no output for a 3-word input")
    return wall


def halves(path: Path, folder: Path) -> tuple[Path, Path]:
    """``path`` cut in two at the blank line nearest its middle byte, written to ``folder``."""
    data = path.read_bytes()
    cut = data.find(b"\n\n", len(data) // 2) + 2
    if cut < 2:
        raise SystemExit(f"{path}: no blank line after its middle to cut it at")
    first, second = folder / "first-half.conllu", folder / "second-half.conllu"
    first.write_bytes(data[:cut])
    second.write_bytes(data[cut:])
    return first, second


def both_at_once(model: str, parts: tuple[Path, Path], extra: list[str]) -> float:
    """Wall seconds of two one-thread `tagger tag` processes run at once, one on each part."""
    start = time.perf_counter()
    running = [subprocess.Popen(tagger_command(model, 1, extra), stdin=open(part, "rb"), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE) for part in parts]
    failed = [p.stderr.read().decode()[-2000:] for p in running if p.wait() != 0]
    if failed:
        raise SystemExit(f"tagger tag failed:\n{failed[0]}")
    return time.perf_counter() - start


def paired(over: list[float], under: list[float]) -> float:
    """The median of the repeats' own ratios ``over[i] / under[i]``: each repeat runs both back to
    back, so a machine whose speed drifts between repeats (a shared VM's moved 25% within
    minutes in session 27) moves both sides of each ratio alike."""
    return round(statistics.median(a / b for a, b in zip(over, under)), 3)


def perceptron(train: Path, column: str, cache: Path):
    """NLTK's averaged perceptron trained on ``train`` (5 iterations), kept in ``cache``."""
    from nltk.tag.perceptron import PerceptronTagger

    from tagger import formats

    stamp = [str(train.resolve()), train.stat().st_size, train.stat().st_mtime_ns, column]
    if cache.exists():
        with open(cache, "rb") as f:
            kept = pickle.load(f)
        if kept["stamp"] == stamp:
            return kept["tagger"]
    tagger = PerceptronTagger(load=False)
    tagger.train([list(zip(s.words, s.column(column))) for s in formats.read(train)], nr_iter=5)
    with open(cache, "wb") as f:
        pickle.dump({"stamp": stamp, "tagger": tagger}, f)
    return tagger


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--file", default=str(EWT / "en_ewt-ud-train.conllu"), help="What is tagged (CoNLL-U).")
    parser.add_argument("--train", default=str(EWT / "en_ewt-ud-train.conllu"), help="The perceptron's training data.")
    parser.add_argument("--column", default="upos")
    parser.add_argument("--threads", type=int, default=1, help="torch's threads in `tagger tag` (NLTK has one).")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--set", dest="extra", action="append", default=[],
                        help="One more argument to `tagger tag` (e.g. --set=--precision --set=fp32).")
    parser.add_argument("--nltk-cache", default="/tmp/tagger-bench-perceptron.pickle")
    parser.add_argument("--no-peer", action="store_true", help="Only `tagger tag`.")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME:VAR=VALUE[,VAR=VALUE]",
                        help="Also `tagger tag` with these environment variables, in every repeat (interleaved), "
                             "e.g. before:TAGGER_F32_KERNEL=none; reported under variants, its ratio to NLTK in the same run.")
    parser.add_argument("--also-threads", type=int, action="append", default=[], metavar="N",
                        help="Also `tagger tag --threads N` in every repeat (interleaved): --threads' speed-up over N.")
    parser.add_argument("--also-halves", action="store_true",
                        help="Also two `tagger tag --threads 1` at once, each on half the sentences, in every repeat.")
    args = parser.parse_args()
    byte_compile()
    folder = Path(tempfile.mkdtemp(prefix="bench-speed-"))
    parts = halves(Path(args.file), folder) if args.also_halves else None

    from tagger import formats

    path = Path(args.file)
    sentences = [s.words for s in formats.read(path)]
    tokens = sum(map(len, sentences))
    peer = None if args.no_peer else perceptron(Path(args.train), args.column, Path(args.nltk_cache))
    before = load()
    ours, theirs, first, ours_cpu, theirs_cpu = [], [], [], [], []
    variants = {name: dict(pair.split("=", 1) for pair in spec.split(",")) for name, spec in
                (variant.split(":", 1) for variant in args.variant)}
    variant_walls: dict[str, list[float]] = {name: [] for name in variants}
    other_walls: dict[int, list[float]] = {n: [] for n in args.also_threads}
    half_walls: list[float] = []
    for _ in range(args.repeats):
        wall, cpu_s = whole_process(args.model, args.threads, path, args.extra)
        ours.append(wall)
        ours_cpu.append(cpu_s)
        for n, walls in other_walls.items():
            walls.append(whole_process(args.model, n, path, args.extra)[0])
        if parts is not None:
            half_walls.append(both_at_once(args.model, parts, args.extra))
        for name, env in variants.items():
            variant_walls[name].append(whole_process(args.model, args.threads, path, args.extra, env)[0])
        if peer is not None:
            start, cpu_start = time.perf_counter(), time.process_time()
            peer.tag_sents(sentences)
            theirs.append(time.perf_counter() - start)
            theirs_cpu.append(time.process_time() - cpu_start)
        first.append(first_line(args.model, args.threads, args.extra))
    record = {
        "bench": "tagger-tag-speed", "model": args.model, "file": str(path), "tokens": tokens, "threads": args.threads,
        "extra": args.extra, "ours_tokens_per_s": round(tokens / statistics.median(ours)),
        "ours_wall_s": [round(w, 2) for w in ours], "ours_cpu_s": [round(w, 2) for w in ours_cpu], "first_line_s": round(statistics.median(first), 3),
        "first_line_all_s": [round(w, 3) for w in first],
    }
    if peer is not None:
        record |= {"nltk_tokens_per_s": round(tokens / statistics.median(theirs)),
                   "nltk_wall_s": [round(w, 2) for w in theirs], "nltk_cpu_s": [round(w, 2) for w in theirs_cpu],
                   "ratio": round(statistics.median(theirs) / statistics.median(ours), 3),
                   "paired_ratio": paired(theirs, ours),
                   "cpu_time_ratio": round(statistics.median(theirs_cpu) / statistics.median(ours_cpu), 3)}
    if variants:
        record["variants"] = {name: {"env": variants[name], "tokens_per_s": round(tokens / statistics.median(walls)),
                                     "wall_s": [round(w, 2) for w in walls],
                                     "ratio": round(statistics.median(theirs) / statistics.median(walls), 3) if theirs else None,
                                     "ours_over_variant": round(statistics.median(walls) / statistics.median(ours), 3),
                                     "paired_ours_over_variant": paired(walls, ours)}
                              for name, walls in variant_walls.items()}
    if other_walls:
        record["threads_speedup"] = {str(n): {"tokens_per_s": round(tokens / statistics.median(walls)),
                                              "wall_s": [round(w, 2) for w in walls],
                                              "speedup": round(statistics.median(walls) / statistics.median(ours), 3),
                                              "paired_speedup": paired(walls, ours)}
                                     for n, walls in other_walls.items()}
    if half_walls:
        record["halves"] = {"wall_s": [round(w, 2) for w in half_walls],
                            "speedup": round(statistics.median(other_walls[1]) / statistics.median(half_walls), 3)
                            if 1 in other_walls else None,
                            "paired_speedup": paired(other_walls[1], half_walls) if 1 in other_walls else None,
                            "paired_over_ours": paired(half_walls, ours)}
    shutil.rmtree(folder)
    record |= {**cpu(), "load_before": before, "load_after": load()}
    print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
