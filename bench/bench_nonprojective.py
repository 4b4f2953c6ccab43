"""Non-projective trees (issue 18): score parser model files on EWT dev and time their decoding.

For each model file: dev UAS/LAS (no punctuation and all words), recall/precision of the
non-projective arcs (:class:`tagger.evaluation.metrics.NonprojectiveCounts`), its labels and
actions, and the speed of decoding the dev file (model only: numbering + batched greedy
decoding + deprojectivisation, no file reading, as ``bench_parser.py`` times it). The timed runs
are interleaved across the models (model 1, 2, 3, 1, 2, 3, ...) and the median of each model's
runs is reported, so load on a shared machine falls on all of them alike. A lifting model is
also timed with deprojectivisation switched off (its projective parse only), which splits its
cost into the wider output layer and the moving back of arcs. One JSON object per model on stdout.

    python bench/bench_nonprojective.py skip.model lift.model --threads 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from tagger import model_file
from tagger.formats import conll
from tagger.inference import predict
from tagger.models.transition_parser.ensemble import ParserEnsemble

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ud-english-ewt"


def scores(model, dev: list) -> dict:
    metric = model.metric(dev, predict(model, dev, 4096))
    nonprojective = metric.nonprojective
    return {"uas": round(100 * metric.uas_no_punct, 2), "las": round(100 * metric.las_no_punct, 2),
            "uas_all_words": round(100 * metric.uas, 2), "las_all_words": round(100 * metric.las, 2),
            "nonprojective_gold_arcs": nonprojective.gold,
            "nonprojective_recall": round(100 * nonprojective.recall, 2),
            "nonprojective_labelled_recall": round(100 * nonprojective.labelled_recall, 2),
            "nonprojective_predicted_arcs": nonprojective.predicted,
            "nonprojective_precision": round(100 * nonprojective.precision, 2) if nonprojective.predicted else None}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+")
    parser.add_argument("--dev", default=str(DATA / "en_ewt-ud-dev.conllu"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=4096, help="decoding batch size in words")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    dev = list(conll.read(args.dev))
    words = sum(map(len, dev))
    loaded = {path: model_file.load(path) for path in args.models}
    results = {}
    runs: dict[str, list[float]] = {}
    for path, (model, meta) in loaded.items():
        parsers = len(model.members) if isinstance(model, ParserEnsemble) else 1
        model = model.first if isinstance(model, ParserEnsemble) else model  # an ensemble's labels: its first parser's
        results[path] = {"model": path, "parsers": parsers, "nonprojective": model.config.nonprojective,
                         "lift_min_count": model.config.lift_min_count if model.config.nonprojective == "lift" else None,
                         "labels": model.n_labels, "lifted_labels": sum(h is not None for h in model.lifted_from),
                         "actions": model.n_actions, "best_epoch": meta.get("epoch"),
                         **{k: v for k, v in meta.items() if k.startswith("nonprojective_")},
                         "dev": scores(loaded[path][0], dev)}
        predict(loaded[path][0], dev[:200], args.max_tokens)  # warm-up
        runs[path] = []
        if model.lifts:  # (the first parser's, for an ensemble)
            runs[path + " (no deprojectivisation)"] = []
    for _ in range(args.repeats):
        for path, (model, _) in loaded.items():
            start = time.perf_counter()
            predict(model, dev, args.max_tokens)
            runs[path].append(time.perf_counter() - start)
            first = model.first if isinstance(model, ParserEnsemble) else model  # it deprojectivises
            if first.lifts:
                first.lifts = False
                start = time.perf_counter()
                predict(model, dev, args.max_tokens)
                runs[path + " (no deprojectivisation)"].append(time.perf_counter() - start)
                first.lifts = True
    for path in loaded:
        for key, name in ((path, "speed"), (path + " (no deprojectivisation)", "speed_without_deprojectivisation")):
            if key in runs:
                median = statistics.median(runs[key])
                results[path][name] = {"sentences_per_s": round(len(dev) / median), "tokens_per_s": round(words / median),
                                       "seconds": round(median, 3), "runs": [round(t, 3) for t in runs[key]]}
        results[path]["threads"] = args.threads
        print(json.dumps(results[path]), flush=True)


if __name__ == "__main__":
    main()
