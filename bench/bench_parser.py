"""Benchmark of the transition parser (Elkaref & Bohnet 2017) on UD English EWT, gold POS.

Trains, in order: the FFN; an LSTM from random initialisation; an LSTM bootstrapped from that FFN
(all gates by default); GRU and Elman (random and bootstrapped). Each model keeps its best dev
checkpoint; that checkpoint is scored on dev and test (UAS/LAS over all words, CoNLL 2018, and
without punctuation, the paper's convention) and timed decoding the test file (model only:
numbering + batched greedy decoding, no file reading; median of 3), with and without the
Chen & Manning precomputed ``W·e`` rows. One JSON object per result on stdout, progress on stderr.

    python bench/bench_parser.py                                  # everything, full training
    python bench/bench_parser.py --minutes ffn=8,lstm-boot=5 --models ffn,lstm-boot   # reduced

A run with ``--max-minutes``/``--minutes``/``--max-sentences``/``--max-epochs`` says so in each
result (``"reduced"``). UDPipe 1 (``ufal.udpipe``) is run as a peer when importable.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from tagger import model_file
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats import conll
from tagger.inference import predict
from tagger.models.transition_parser import TransitionParser
from tagger.training import run
from tagger.training.run import DataSpec, TrainRequest, retag
from tagger.training.trainer import RunOptions

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ud-english-ewt"
#: name -> (arch, bootstrapped from the FFN?)
MODELS = {
    "ffn": ("ffn", False),
    "lstm": ("lstm", False),
    "lstm-boot": ("lstm", True),
    "gru": ("gru", False),
    "gru-boot": ("gru", True),
    "elman": ("elman", False),
    "elman-boot": ("elman", True),
}


class StderrReporter:
    def __init__(self, name: str):
        self.name = name

    def epoch_start(self, epoch: int, batches: int) -> None:
        print(f"[{self.name}] epoch {epoch}: {batches} batches", file=sys.stderr, flush=True)

    def step(self, loss: float, tokens: int) -> None:
        pass

    def epoch_end(self, record: dict) -> None:
        print(f"[{self.name}] {json.dumps(record)}", file=sys.stderr, flush=True)

    def note(self, message: str) -> None:
        print(f"[{self.name}] {message}", file=sys.stderr, flush=True)


def scores(model: TransitionParser, sentences: list, gold: list | None = None) -> dict:
    """UAS/LAS of parsing ``sentences``, against ``gold`` when given (the same sentences with
    gold POS: punctuation is always decided by the gold UPOS)."""
    metric = model.metric(gold or sentences, predict(model, sentences, 4096))
    return {"uas": round(100 * metric.uas_no_punct, 2), "las": round(100 * metric.las_no_punct, 2),
            "uas_with_punct": round(100 * metric.uas, 2), "las_with_punct": round(100 * metric.las, 2),
            "words": metric.no_punct.words, "words_with_punct": metric.all.words}


def speed(model: TransitionParser, sentences: list, repeats: int, max_tokens: int) -> dict:
    """Median decoding speed (collate + decode, batched) over ``repeats`` runs, after a warm-up."""
    predict(model, sentences[:100], max_tokens)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        predict(model, sentences, max_tokens)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    tokens = sum(len(s) for s in sentences)
    return {"sentences_per_s": round(len(sentences) / median), "tokens_per_s": round(tokens / median),
            "seconds": round(median, 3), "runs": [round(t, 3) for t in times]}


def speeds(model: TransitionParser, sentences: list, repeats: int, max_tokens: int) -> dict:
    with_rows = speed(model, sentences, repeats, max_tokens)
    precompute = model.config.precompute
    words = model.precomputed_words()
    model.config.precompute = 0
    try:
        without = speed(model, sentences, repeats, max_tokens)
    finally:
        model.config.precompute = precompute
    return {**with_rows, "precomputed_words": words, "without_precompute": without,
            "precompute_speedup": round(without["seconds"] / with_rows["seconds"], 2)}


def parse_minutes(spec: str | None) -> dict[str, float]:
    out = {}
    for item in (spec or "").split(","):
        if item.strip():
            name, _, value = item.partition("=")
            out[name.strip()] = float(value)
    return out


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", default=str(DATA / "en_ewt-ud-train.conllu"))
    parser.add_argument("--dev", default=str(DATA / "en_ewt-ud-dev.conllu"))
    parser.add_argument("--test", default=str(DATA / "en_ewt-ud-test.conllu"))
    parser.add_argument("--models", default="ffn,lstm,lstm-boot,gru,gru-boot,elman,elman-boot",
                        help=f"comma-separated, from {', '.join(MODELS)} (empty: only the UDPipe peer)")
    parser.add_argument("--gates", default="", help="gates to bootstrap (e.g. i,j,f,o); default all")
    parser.add_argument("--max-minutes", type=float, help="training time limit per model")
    parser.add_argument("--minutes", help="per-model limits, e.g. ffn=8,lstm-boot=5 (override --max-minutes)")
    parser.add_argument("--max-sentences", type=int, help="use only the first N training sentences")
    parser.add_argument("--max-epochs", type=int)
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="config key=value")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (machines here are shared)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=4096, help="decoding batch size in words")
    parser.add_argument("--out-dir", help="where to keep the model files (default: a temporary folder)")
    parser.add_argument("--ffn-model", help="use this trained FFN (for the -boot models) instead of training one")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pos-model", help="also score every model on dev and test with this tagger's predicted POS")
    parser.add_argument("--pos-column", default="upos", help="the column --pos-model predicts (upos or xpos)")
    parser.add_argument("--score-only", action="store_true",
                        help="train nothing: score the models already in --out-dir (NAME.model)")
    parser.add_argument("--no-udpipe", action="store_true", help="skip the UDPipe 1 peer")
    parser.add_argument("--udpipe-options", default="",
                        help="extra UDPipe parser options, e.g. 'embedding_upostag=0;embedding_feats=0;"
                             "embedding_xpostag=20' (FORM + XPOS only, like ours with tag_column=xpos)")
    parser.add_argument("--udpipe-name", default="udpipe1", help="name of the UDPipe result and model file")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = arguments()
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {unknown}; choose from {list(MODELS)}")
    minutes = parse_minutes(args.minutes)
    out_dir = Path(args.out_dir or tempfile.mkdtemp(prefix="bench_parser_"))
    out_dir.mkdir(parents=True, exist_ok=True)

    train = run.read_sentences(DataSpec(args.train, max_sentences=args.max_sentences))  # what train_model trains on
    dev, test = list(conll.read(args.dev)), list(conll.read(args.test))
    print(json.dumps({"bench": "parser", "train": args.train, "train_sentences": len(train),
                      "train_words": sum(map(len, train)), "dev_sentences": len(dev), "test_sentences": len(test),
                      "nonprojective_train_trees": TransitionParser.count_nonprojective(train),
                      "threads": args.threads, "torch": torch.__version__, "pos": "gold " + next((o.split("=", 1)[1] for o in args.overrides if o.startswith("tag_column=")), "upos")}), flush=True)

    predicted: dict[str, list] = {}  # dev/test with predicted UPOS
    gold_parts = {"dev": dev, "test": test}
    if args.pos_model:
        for part, sentences in (("dev", dev), ("test", test)):
            predicted[part] = [Sentence(s.words, dict(s.columns), s.source, s.line, s.raw) for s in sentences]
            retag(args.pos_model, args.pos_column, predicted[part])
            gold = [t for s in sentences for t in s.columns[args.pos_column]]
            guess = [t for s in predicted[part] for t in s.columns[args.pos_column]]
            print(json.dumps({"pos_model": args.pos_model, "part": part,
                              "column": args.pos_column, "accuracy": round(100 * sum(map(str.__eq__, gold, guess)) / len(gold), 2)}), flush=True)

    ffn_path = Path(args.ffn_model) if args.ffn_model else None
    for name in names:
        path = out_dir / f"{name}.model"
        if args.score_only:
            result = score_saved(name, path, dev, test, predicted, gold_parts)
        else:
            result = bench_model(args, name, path, ffn_path, minutes.get(name, args.max_minutes), train, gold_parts,
                                 predicted)
            ffn_path = path if name == "ffn" and "skipped" not in result else ffn_path
        print(json.dumps(result), flush=True)

    if not args.no_udpipe:
        udpipe_peer(args, train, dev, test, out_dir, predicted)


def score_saved(name: str, path: Path, dev: list, test: list, predicted: dict[str, list], gold_parts: dict) -> dict:
    """The scores of the model already in ``path`` (``--score-only``)."""
    if not path.exists():
        return {"model": name, "skipped": f"{path} does not exist"}
    best, meta = model_file.load(path)
    result = {"model": name, "model_file": str(path), "epochs": meta.get("epoch"),
              "dev": scores(best, dev), "test": scores(best, test)}
    for part, sentences in predicted.items():
        result[f"{part}_predicted_pos"] = scores(best, sentences, gold_parts[part])
    return result


def bench_model(args: argparse.Namespace, name: str, path: Path, ffn_path: Path | None, limit: float | None,
                train: list, gold_parts: dict[str, list], predicted: dict[str, list]) -> dict:
    """Train model ``name`` into ``path``, then score and time its best checkpoint."""
    arch, boot = MODELS[name]
    if boot and (ffn_path is None or not ffn_path.exists()):
        return {"model": name, "skipped": "needs a trained FFN: put ffn first in --models or give --ffn-model"}
    try:
        summary = train_model(args, name, path, ffn_path if boot else None, limit)
    except TaggerError as e:  # e.g. gates this FFN cannot give
        return {"model": name, "skipped": e.message}
    best, _ = model_file.load(path)
    training = model_file.configs_of(model_file.read_archive(path))[1]
    reduced = []
    if args.max_sentences:
        reduced.append(f"first {len(train)} training sentences")
    if limit is not None:
        reduced.append(f"training stopped after {limit:g} minutes")
    if args.max_epochs:
        reduced.append(f"at most {args.max_epochs} epochs")
    dev, test = gold_parts["dev"], gold_parts["test"]
    return {
        "model": name, "arch": arch, "bootstrapped_from": str(ffn_path) if boot else None,
        "gates": (args.gates or "all") if boot else None,
        "reduced": "; ".join(reduced) or None,
        "train_sentences": len(train), **TransitionParser.training_meta(best.config, train)[0],
        "epochs": summary["epochs"], "best_epoch": summary["best_epoch"],
        "train_seconds": summary["seconds"],
        "train_tokens_per_s": summary["train_tokens_per_second"],
        "dev": scores(best, dev), "test": scores(best, test),
        **{f"{part}_predicted_pos": scores(best, sentences, gold_parts[part]) for part, sentences in predicted.items()},
        "speed_test": speeds(best, test, args.repeats, args.max_tokens),
        "threads": args.threads,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "config": {k: training[k] for k in ("batch_size", "lr", "momentum")}
        | {k: getattr(best.config, k) for k in ("dropout", "input_dropout", "bptt", "hidden", "precompute", "rare_word_dropout")},
        "model_file": str(path),
    }


def train_model(args: argparse.Namespace, name: str, path: Path, ffn: Path | None, limit: float | None) -> dict:
    """Train model ``name`` into ``path`` as ``tagger train --task dep`` does (the same data,
    config and model builders and loop: :func:`tagger.training.run.train`), bootstrapped from
    ``ffn`` when given; its summary."""
    arch, _ = MODELS[name]
    overrides = [f"arch={arch}", *args.overrides] + ([f"max_epochs={args.max_epochs}"] if args.max_epochs else [])
    request = TrainRequest(task="dep", train=DataSpec(args.train, max_sentences=args.max_sentences),
                           dev=DataSpec(args.dev), out=str(path), model=TransitionParser.name, preset=arch,
                           overrides=tuple(overrides), bootstrap=str(ffn) if ffn else None, gates=args.gates or None,
                           options=RunOptions(seed=args.seed, max_minutes=limit))
    return run.train(request, StderrReporter(name), say=lambda line: print(f"[{name}] {line}", file=sys.stderr))


def udpipe_peer(args, train, dev, test, out_dir: Path, predicted: dict[str, list]) -> None:
    """UDPipe 1's parser (Straka et al. 2016) trained on the same data with gold POS, when
    installed; scored with gold POS and, given ``predicted``, with the same predicted POS as ours.
    With its default options it reads FORM, UPOS and FEATS (``embedding_xpostag`` and
    ``embedding_lemma`` default to 0); ``--udpipe-options`` changes which columns it reads."""
    try:
        from ufal import udpipe  # type: ignore[import-not-found]
    except ImportError:
        print(json.dumps({"model": "udpipe1", "skipped": "ufal.udpipe is not importable (pip install -e '.[bench]')"}))
        return
    try:
        def load(path: str, limit: int | None = None):
            reader = udpipe.InputFormat.newConlluInputFormat()
            reader.setText(Path(path).read_text(encoding="utf-8"))
            error, sentences, sentence = udpipe.ProcessingError(), udpipe.Sentences(), udpipe.Sentence()
            while reader.nextSentence(sentence, error) and (limit is None or len(sentences) < limit):
                sentences.append(sentence)
                sentence = udpipe.Sentence()
            return sentences

        iterations = "3" if (args.max_minutes or args.minutes or args.max_sentences) else "10"
        path = out_dir / f"{args.udpipe_name}.model"
        options = ";".join(o for o in (f"iterations={iterations}", args.udpipe_options) if o)
        train_seconds = None
        if not (args.score_only and path.exists()):
            error = udpipe.ProcessingError()
            start = time.perf_counter()
            data = udpipe.Trainer.train("morphodita_parsito", load(args.train, args.max_sentences), load(args.dev),
                                        "none", "none", options, error)
            if error.occurred():
                raise RuntimeError(error.message)
            train_seconds = round(time.perf_counter() - start, 1)
            path.write_bytes(data if isinstance(data, bytes) else data.encode("latin-1"))
        model = udpipe.Model.load(str(path))
        error = udpipe.ProcessingError()
        pipeline = udpipe.Pipeline(model, "conllu", udpipe.Pipeline.NONE, udpipe.Pipeline.DEFAULT, "conllu")
        result = {"model": args.udpipe_name, "model_file": str(path), "train_seconds": train_seconds,
                  "udpipe_parser_options": options if train_seconds is not None else "as trained",
                  "parser_iterations": int(iterations) if train_seconds is not None else "as trained"}
        parts = [("dev", dev, Path(args.dev).read_text(encoding="utf-8")), ("test", test, Path(args.test).read_text(encoding="utf-8"))]
        for part, sentences in predicted.items():
            buffer = io.StringIO()
            conll.write(sentences, buffer)
            parts.append((f"{part}_predicted_pos", sentences, buffer.getvalue()))
        for part, sentences, text in parts:
            start = time.perf_counter()
            output = pipeline.process(text, error)
            seconds = time.perf_counter() - start
            parsed = list(conll.read_string(output)) if hasattr(conll, "read_string") else _read_text(output)
            predictions = [(s.columns["head"], s.columns["deprel"]) for s in parsed]
            gold = dev if part.startswith("dev") else test  # punctuation by gold UPOS
            metric = TransitionParser.metric(None, gold, predictions)  # metric needs no model state
            result[part] = {"uas": round(100 * metric.uas_no_punct, 2), "las": round(100 * metric.las_no_punct, 2),
                            "uas_with_punct": round(100 * metric.uas, 2), "las_with_punct": round(100 * metric.las, 2)}
            result[f"{part}_sentences_per_s"] = round(len(sentences) / seconds)
        print(json.dumps(result), flush=True)
    except Exception as e:  # a peer failing must not hide the results above
        print(json.dumps({"model": args.udpipe_name, "skipped": f"failed: {type(e).__name__}: {e}"}))


def _read_text(text: str) -> list:
    with tempfile.NamedTemporaryFile("w", suffix=".conllu", delete=False, encoding="utf-8") as f:
        f.write(text)
    try:
        return list(conll.read(f.name))
    finally:
        os.unlink(f.name)


if __name__ == "__main__":
    main()
