"""Benchmark of the seq2seq constituency parser (Vinyals et al. 2015) on the PTB WSJ sample.

Split as ../shared/BENCHMARKS.md says: wsj_0001-0159 train, 0160-0179 dev, 0180-0199 test.
Trains a model (``--max-minutes`` of training, the preset of ``--preset``) or takes one
(``--model``), then for each beam width of ``--beams``: labelled bracket F1 as EVALB with
COLLINS.prm on dev and test, the share of outputs that needed repair, and decoding speed in
sentences/s on test, through the model alone (numbering + batched beam search, no file reading;
median of ``--repeats``) and through the CLI (``tagger tag`` on the test sentences as text, the
whole process: start, model load, reading, writing; with the decoding the model file says).
Each beam is scored unconstrained (the paper's decoding, then repair) and constrained to
well-formed trees (``--constrained``). Predicted trees of a peer (SuPar's
``crf-con``, see ``bench/bench_const_peer.py``) given with ``--peer-dev``/``--peer-test`` are
scored by the same scorer beside ours. One JSON object per result on stdout, progress on stderr.

    python bench/bench_const.py --max-minutes 60 --out-dir runs      # train, then score and time
    python bench/bench_const.py --model runs/const.model --peer-test /work/peer-out/test.pred.trees

A run whose training stopped on ``--max-minutes``/``--max-epochs``/``--max-sentences`` says so
in its results (``"reduced"``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from tagger import formats, model_file
from tagger.corpus.records import Sentence
from tagger.devices import cpu_name
from tagger.evaluation.evalb import COLLINS, BracketMetric
from tagger.formats.ptb import sample_split
from tagger.inference import predict
from tagger.training import run
from tagger.training.run import DataSpec, TrainRequest
from tagger.training.trainer import RunOptions

from bench_parser import StderrReporter  # bench/ is this script's folder: the parser bench's progress lines

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ptb-wsj-sample" / "combined"


def emit(result: dict) -> None:
    print(json.dumps(result), flush=True)


def bracket_f1(gold: list, predicted_trees: list) -> dict:
    """EVALB (COLLINS.prm) summary of predicted trees against the gold sentences."""
    metric = BracketMetric(COLLINS)
    for sentence, tree in zip(gold, predicted_trees):
        metric.update(sentence.tree, tree)
    scores = metric.to_dict()
    short = f"len<={scores['cutoff_len']}"
    every = scores["all"]
    return {"f1": _round(every["f1"]), "recall": _round(every["recall"]), "precision": _round(every["precision"]),
            "complete_match": _round(every["complete_match"]), f"f1_{short}": _round(scores["short"]["f1"]),
            "sentences": every["valid_sentences"], "errors": every["error_sentences"]}


def retagged(pos_model: str, sentences: list) -> list:
    """Copies of ``sentences`` (words and columns, no trees) with the XPOS of the tagger ``pos_model``."""
    copies = [Sentence(list(s.words), dict(s.columns)) for s in sentences]
    run.retag(pos_model, "xpos", copies)
    return copies


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def parse(model, sentences: list, max_tokens: int) -> tuple[list, int]:
    """The repaired trees of ``sentences`` and how many needed repair."""
    predictions = predict(model, sentences, max_tokens)
    trees, repaired = [], 0
    for sentence, prediction in zip(sentences, predictions):
        tree, fixed = model.tree(sentence, prediction)
        trees.append(tree)
        repaired += fixed
    return trees, repaired


def model_speed(model, sentences: list, repeats: int, max_tokens: int) -> float:
    """Sentences/s of numbering + batched decoding (median of ``repeats``)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        predict(model, sentences, max_tokens)
        times.append(time.perf_counter() - start)
    return len(sentences) / statistics.median(times)


def cli_speed(model_path: Path, sentences: list, beam: int, constrained: bool, threads: int, repeats: int) -> float:
    """Sentences/s of ``tagger tag`` on the sentences as text, whole process (median of ``repeats``)."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write("".join(" ".join(s.words) + "\n" for s in sentences))
        text = f.name
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        command = [sys.executable, "-m", "tagger", "tag", "--model", str(model_path), "--beam", str(beam),
                   "--constrained" if constrained else "--unconstrained", "--threads", str(threads), text]
        done = subprocess.run(command, capture_output=True, env=env)
        times.append(time.perf_counter() - start)
        if done.returncode:
            raise SystemExit(done.stderr.decode())
    os.unlink(text)
    return len(sentences) / statistics.median(times)


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DATA), help="the folder of wsj_NNNN.mrg files")
    parser.add_argument("--model", help="score and time this model instead of training one")
    parser.add_argument("--preset", default=None, help="the preset to train (default: the const task's)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="config key=value")
    parser.add_argument("--embeddings", help="pretrained word vectors: a file or a package name (as tagger train takes)")
    parser.add_argument("--pos-model", help="a tagger of XPOS whose tags a model reading them (--set tag_dim=N) "
                        "trains, selects and parses on (dev and test retagged; --no-cli then)")
    parser.add_argument("--max-minutes", type=float, help="training time limit")
    parser.add_argument("--max-epochs", type=int)
    parser.add_argument("--max-sentences", type=int, help="use only the first N training sentences")
    parser.add_argument("--beams", default="1,10", help="beam widths to score and time")
    parser.add_argument("--constrained", default="off,on",
                        help="decode unconstrained (off: the paper's, then repair) and/or constrained to well-formed trees (on)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (machines here are shared)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=2048, help="decoding batch size in words")
    parser.add_argument("--no-cli", action="store_true", help="skip the timing through `tagger tag`")
    parser.add_argument("--out-dir", help="where to keep the model file (default: a temporary folder)")
    parser.add_argument("--peer-name", default="supar-crf-con")
    parser.add_argument("--peer-dev", help="a peer's predicted dev trees (one per line), scored beside ours")
    parser.add_argument("--peer-test", help="a peer's predicted test trees")
    parser.add_argument("--seed", type=int, default=1)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = arguments().parse_args(argv)
    torch.set_num_threads(args.threads)
    parts = sample_split(sorted(Path(args.data).glob("wsj_*.mrg")))
    dev = formats.read_corpus(parts["dev"], "mrg")
    test = formats.read_corpus(parts["test"], "mrg")
    reduced = bool(args.max_minutes or args.max_epochs or args.max_sentences)
    inputs = {"dev": retagged(args.pos_model, dev), "test": retagged(args.pos_model, test)} if args.pos_model \
        else {"dev": dev, "test": test}
    path = Path(args.model) if args.model else None
    training: dict = {}
    if path is None:
        out_dir = Path(args.out_dir or tempfile.mkdtemp(prefix="bench-const-"))
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / "const.model"
        overrides = tuple(args.overrides) + ((f"max_epochs={args.max_epochs}",) if args.max_epochs else ())
        request = TrainRequest("const", DataSpec(parts["train"], "mrg", max_sentences=args.max_sentences),
                               DataSpec(parts["dev"], "mrg"), str(path), preset=args.preset, overrides=overrides,
                               embeddings=args.embeddings, pos_model=args.pos_model, options=RunOptions(seed=args.seed, max_minutes=args.max_minutes))
        training = run.train(request, StderrReporter("const"))
    model, meta = model_file.load(path)
    base = {"model": str(path), "preset": args.preset if not args.model else None, "epochs": len(meta.get("history", [])),
            "best_epoch": meta.get("epoch"), "embeddings": args.embeddings, "pos_model": args.pos_model, "overrides": list(args.overrides), "train_seconds": training.get("seconds"), "threads": args.threads,
            "reduced": reduced, "cpu": cpu_name()}
    for constrained, width in [(c == "on", int(b)) for c in args.constrained.split(",") for b in args.beams.split(",")]:
        model.set_decoding(width, constrained)
        result = {"system": "seq2seq", "beam": width, "constrained": constrained, **base}
        for name, gold in (("dev", dev), ("test", test)):
            trees, repaired = parse(model, inputs[name], args.max_tokens)
            scores = bracket_f1(gold, trees)
            result[name] = scores
            result[f"{name}_repaired_percent"] = round(100.0 * repaired / len(gold), 2)
        result["model_sentences_per_s"] = round(model_speed(model, inputs["test"], args.repeats, args.max_tokens), 1)
        if not args.no_cli:
            result["cli_sentences_per_s"] = round(cli_speed(path, test, width, constrained, args.threads, args.repeats), 1)
        emit(result)
    for name, gold, predicted in (("dev", dev, args.peer_dev), ("test", test, args.peer_test)):
        if predicted:
            trees = [s.tree for s in formats.read_corpus(predicted, "trees")]
            emit({"system": args.peer_name, "split": name, "file": predicted, name: bracket_f1(gold, trees)})


if __name__ == "__main__":
    main()
