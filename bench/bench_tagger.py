"""Tagger benchmark: accuracy, training and tagging speed, peak RSS, against NLTK's perceptron.

Prints one JSON object per result (see ../shared/BENCHMARKS.md). Examples:

    python bench/bench_tagger.py --column upos --max-minutes 28            # train + measure
    python bench/bench_tagger.py --column upos --model upos.tagger         # measure a trained model
    python bench/bench_tagger.py --column upos --model upos.tagger --peers nltk

Speed figures are the median of --repeats runs; the perceptron is trained and timed in the
same run, on the same split, so that its figures are a same-machine reference.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EWT = ROOT.parent / "shared" / "data" / "ud-english-ewt"


def emit(record: dict) -> None:
    record.setdefault("machine", f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus")
    print(json.dumps(record), flush=True)


def child_peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def run_cli(args: list[str], stdin: Path | None = None) -> tuple[float, str]:
    """Run ``tagger ARGS`` as a whole process; (wall seconds, stdout)."""
    start = time.perf_counter()
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as inp:
        done = subprocess.run([sys.executable, "-m", "tagger", *args], stdin=inp, capture_output=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"tagger {' '.join(args)} failed:\n{done.stderr.decode()[-2000:]}")
    return wall, done.stdout.decode()


def column_of(model, sentence, prediction, column: str) -> list[str]:
    """The tags of ``column`` in one prediction (a tagger of several columns predicts them all)."""
    from tagger.corpus.records import Sentence

    scratch = Sentence(sentence.words, {})
    model.annotate(scratch, prediction)
    return scratch.columns[column]


def fp32_accuracy(model, sentences, column: str, dtype) -> float:
    """Test accuracy with float32 products (then back to ``dtype``), to show what bf16 changes."""
    from tagger.inference import predict

    model.set_precision(None)
    try:
        predicted = predict(model, sentences)
    finally:
        model.set_precision(dtype)
    gold = [t for s in sentences for t in s.column(column)]
    tags = (t for s, p in zip(sentences, predicted) for t in column_of(model, s, p, column))
    return round(100 * sum(map(str.__eq__, gold, tags)) / len(gold), 2)


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", default=str(EWT / "en_ewt-ud-train.conllu"))
    parser.add_argument("--dev", default=str(EWT / "en_ewt-ud-dev.conllu"))
    parser.add_argument("--test", default=str(EWT / "en_ewt-ud-test.conllu"))
    parser.add_argument("--format", default="auto")
    parser.add_argument("--column", default="upos")
    parser.add_argument("--preset", default="fast")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--model", help="Measure this model instead of training one.")
    parser.add_argument("--max-minutes", type=float, default=30.0)
    parser.add_argument("--max-sentences", type=int)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peers", default="", help="Comma-separated: nltk")
    parser.add_argument("--speed-file", help="File tagged through the CLI for speed (default: --train).")
    parser.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"),
                        help="Inference matrix products, for accuracy, model-only and CLI speed alike (auto: bf16 "
                             "where the CPU multiplies it natively). With bf16 the fp32 accuracy is reported too.")
    return parser


def main() -> None:
    args = arguments().parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from tagger import formats, model_file
    from tagger.evaluation.metrics import TagMetric
    from tagger.inference import predict
    from tagger.modules.precision import apply

    reduced = bool(args.max_sentences) or args.max_minutes < 30
    model_path = args.model
    if model_path is None:
        model_path = tempfile.mktemp(suffix=".tagger")
        cmd = ["train", "--task", "pos", "--column", args.column, "--train", args.train, "--dev", args.dev,
               "--out", model_path, "--preset", args.preset, "--max-minutes", str(args.max_minutes),
               "--threads", str(args.threads), "--json", "--format", args.format]
        for item in args.overrides:
            cmd += ["--set", item]
        if args.max_sentences:
            cmd += ["--max-sentences", str(args.max_sentences)]
        wall, out = run_cli(cmd)
        summary = json.loads(out.strip().splitlines()[-1])
        emit({"bench": "tagger-train", "column": args.column, "preset": args.preset, "overrides": args.overrides,
              "reduced": reduced, "max_minutes": args.max_minutes, "max_sentences": args.max_sentences,
              "wall_s": round(wall, 1), "epochs": summary["epochs"], "best_dev": summary["best_dev"],
              "train_tokens_per_s": summary["train_tokens_per_second"], "threads": args.threads,
              "peak_rss_mb": round(child_peak_rss_mb())})

    model, meta = model_file.load(model_path)
    dtype = apply(model, args.precision)
    train = list(formats.read(args.train, args.format))
    test = list(formats.read(args.test, args.format))
    train_words = {w for s in train for w in s.words}
    n_test_tokens = sum(len(s) for s in test)

    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        predictions = predict(model, test)
        times.append(time.perf_counter() - start)
    metric = TagMetric()
    for sentence, predicted in zip(test, predictions):
        metric.update(sentence.words, sentence.column(args.column), column_of(model, sentence, predicted, args.column),
                      train_words)
    emit({"bench": "tagger-accuracy", "model": model_path, "column": args.column, "config": meta.get("epoch"),
          "test": args.test, "accuracy": round(100 * metric.accuracy, 2),
          "unseen_accuracy": round(100 * metric.unseen_accuracy, 2), "sentence_accuracy": round(100 * metric.sentence_accuracy, 2),
          "dev": round(100 * meta.get("dev_score", float("nan")), 2), "trained_epochs": meta.get("epoch"),
          "model_only_tokens_per_s": round(n_test_tokens / statistics.median(times)), "threads": args.threads,
          "precision": "bf16" if dtype is not None else "fp32",
          **({"fp32_accuracy": fp32_accuracy(model, test, args.column, dtype)} if dtype is not None else {})})

    speed_file = Path(args.speed_file or args.train)
    speed_tokens = sum(len(s) for s in formats.read(speed_file, args.format))
    walls = [run_cli(["tag", "--model", model_path, "--threads", str(args.threads), "--precision", args.precision,
                      str(speed_file)])[0] for _ in range(args.repeats)]
    emit({"bench": "tagger-cli-speed", "file": str(speed_file), "tokens": speed_tokens,
          "wall_s": round(statistics.median(walls), 2), "tokens_per_s": round(speed_tokens / statistics.median(walls)),
          "threads": args.threads, "precision": args.precision, "peak_rss_mb": round(child_peak_rss_mb())})

    if "nltk" in args.peers.split(","):
        nltk_peer(args, train, test, train_words, speed_file, speed_tokens)

def nltk_peer(args: argparse.Namespace, train: list, test: list, train_words: set, speed_file: Path,
              speed_tokens: int) -> None:
    """NLTK's averaged perceptron trained on the same split and timed in this process."""
    from nltk.tag.perceptron import PerceptronTagger

    from tagger import formats
    from tagger.evaluation.metrics import TagMetric

    n_test_tokens = sum(len(s) for s in test)
    tagger = PerceptronTagger(load=False)
    start = time.perf_counter()
    tagger.train([list(zip(s.words, s.column(args.column))) for s in train], nr_iter=5)
    train_wall = time.perf_counter() - start
    peer_times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        tagged = tagger.tag_sents([s.words for s in test])
        peer_times.append(time.perf_counter() - start)
    peer = TagMetric()
    for sentence, out in zip(test, tagged):
        peer.update(sentence.words, sentence.column(args.column), [t for _, t in out], train_words)
    speed_sents = [s.words for s in formats.read(speed_file, args.format)]
    start = time.perf_counter()
    tagger.tag_sents(speed_sents)
    speed_wall = time.perf_counter() - start
    emit({"bench": "peer-nltk-perceptron", "column": args.column, "accuracy": round(100 * peer.accuracy, 2),
          "unseen_accuracy": round(100 * peer.unseen_accuracy, 2), "sentence_accuracy": round(100 * peer.sentence_accuracy, 2),
          "train_s": round(train_wall, 1), "test_tokens_per_s": round(n_test_tokens / statistics.median(peer_times)),
          "speed_file_tokens_per_s_in_process": round(speed_tokens / speed_wall)})


if __name__ == "__main__":
    main()
