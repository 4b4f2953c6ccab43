"""Where two threads' gain over one goes (issue 33): the same model in one process, one and two
threads taking turns, on what `tagger tag` does with parts taken away.

    TAGGER_CPU=avx2 python bench/thread_scaling.py --model fast.tagger --repeats 4

Modes (each timed in one process, the model loaded anew for every run):
- ``pipeline``: `tagger tag`'s own loop (``tagger.runtime.pipeline._tag_here``) over sentences
  parsed before the clock starts, written to /dev/null: start-up and reading taken away;
- ``nowrite``: the same, writing taken away too;
- ``batches``: the first --sentences sentences tagged by the tagger's ``tag`` after a first,
  untimed, call has computed their words' first-layer rows: the batches alone.

Prints, per mode, the wall and CPU seconds of each run and the median of each pair's own ratio
one thread over two (the order alternating), as JSON lines.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from tagger import formats
from tagger.runtime import pipeline, skip_lstm

EWT = Path(__file__).resolve().parents[2] / "shared" / "data" / "ud-english-ewt" / "en_ewt-ud-train.conllu"


def timed(run) -> tuple[float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - start, time.process_time() - cpu


def one(mode: str, plain, kernel, sentences, threads: int, count: int) -> tuple[float, float]:
    chain = pipeline.load(plain, kernel)
    if mode == "batches":
        tagger, words = chain.models[0], [s.words for s in sentences[:count]]
        tagger.tag(words, threads)  # the words' rows, kept: the timed call runs the batches alone
        return timed(lambda: tagger.tag(words, threads))
    return timed(lambda: pipeline._tag_here(chain, iter(sentences), os.devnull, "conllu", "misc", 1000, threads,
                                            one_blas=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--file", default=str(EWT))
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--sentences", type=int, default=4000)
    parser.add_argument("--modes", default="pipeline,nowrite,batches")
    args = parser.parse_args()
    plain = pipeline.headers([args.model], peek=False)
    kernel = skip_lstm.kernel_for("auto", False, pipeline.widest(plain))
    sentences = list(formats.read(args.file, "conllu"))
    write = pipeline.write_chunk
    for mode in args.modes.split(","):
        pipeline.write_chunk = (lambda *a, **k: None) if mode == "nowrite" else write
        runs: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
        for repeat in range(args.repeats):
            for threads in (1, 2) if repeat % 2 == 0 else (2, 1):
                runs[threads].append(one(mode, plain, kernel, sentences, threads, args.sentences))
        print(json.dumps({"mode": mode, "kernel": repr(kernel),
                          "one_wall_s": [round(w, 2) for w, _ in runs[1]], "two_wall_s": [round(w, 2) for w, _ in runs[2]],
                          "one_cpu_s": [round(c, 2) for _, c in runs[1]], "two_cpu_s": [round(c, 2) for _, c in runs[2]],
                          "one_over_two_paired": round(statistics.median(a[0] / b[0] for a, b in zip(runs[1], runs[2])), 3)}),
              flush=True)
    pipeline.write_chunk = write


if __name__ == "__main__":
    main()
