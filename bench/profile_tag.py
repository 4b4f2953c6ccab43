"""Where `tagger tag` spends its time, stage by stage, in one process without read-ahead (issue 20).

    python bench/profile_tag.py --model upos.tagger --threads 1 [FILE]

Prints one JSON object of seconds: start-up (`import torch`, and the command's imports with
torch, each in a fresh interpreter), loading the model, reading FILE (CoNLL-U), and per chunk of
--chunk-size sentences as `tagger tag` does it: numbering and featurising the batches
(``collate``), the forward pass (with --threads 1 split into the first layer, per distinct word,
the recurrent layers and the output layer with decoding; with more, batches run in threads as
`tagger tag` runs them, and only the whole is timed), writing the predictions into the records, and
writing CoNLL-U (to memory). With --torch-profile N, also the N costliest torch operators.

With --runtime, the path `tagger tag` takes without torch (tagger.runtime.skip_lstm; with
--precision auto on a CPU with AMX, the bf16 kernels): start-up without torch, loading, reading,
and per chunk the first layer's per-word rows and window sums, the upper layers' input products,
the recurrent layers (one C call each; with the int8 and float32 kernels an upper layer's input
product runs inside its scan, timed as one), the output products, the rest of tagging
(batching, argmax, labels), and writing.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
EWT = ROOT.parent / "shared" / "data" / "ud-english-ewt"


def import_seconds(statement: str, repeats: int = 3) -> float:
    """Median wall seconds of a fresh interpreter running ``statement`` (less an empty one)."""
    def run(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        return time.perf_counter() - start
    walls = sorted(run(statement) - run("pass") for _ in range(repeats))
    return round(walls[len(walls) // 2], 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", default=str(EWT / "en_ewt-ud-train.conllu"))
    parser.add_argument("--model", required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--precision", default="auto")
    parser.add_argument("--chunk-size", type=int, default=1000)
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument("--torch-profile", type=int, default=0, metavar="N")
    parser.add_argument("--runtime", action="store_true", help="profile the torch-free path")
    args = parser.parse_args()
    if args.runtime:
        print(json.dumps(profile_runtime(args), indent=1), flush=True)
        return

    seconds: dict[str, float] = defaultdict(float)
    imports = {"import torch": import_seconds("import torch"),
               "import the command, torch included": import_seconds("import tagger.cli.tag")}

    import torch

    from tagger import api, formats
    from tagger.corpus.batching import chunks, token_batches
    from tagger.inference import in_threads
    from tagger.tagging import MAX_TOKENS, write_chunk

    max_tokens = args.max_tokens or MAX_TOKENS
    start = time.perf_counter()
    model = api.load(args.model, threads=args.threads, precision=args.precision).module
    seconds["load the model"] = time.perf_counter() - start
    start = time.perf_counter()
    sentences = list(formats.read(args.file))
    seconds["read CoNLL-U"] = time.perf_counter() - start
    tokens = sum(map(len, sentences))

    rnn_forward = model.rnn.forward
    first_layer = model.input.project_by_type

    def timed(name, function):
        def call(*a, **k):
            begin = time.perf_counter()
            try:
                return function(*a, **k)
            finally:
                seconds[name] += time.perf_counter() - begin
        return call

    model.rnn.forward = timed("forward: recurrent layers", rnn_forward)
    model.input.project_by_type = timed("forward: first layer (per distinct word)", first_layer)
    profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) if args.torch_profile else None
    if profiler:
        profiler.__enter__()
    with torch.inference_mode():
        for chunk in chunks(sentences, args.chunk_size):
            predictions = [None] * len(chunk)
            groups = token_batches([len(s) for s in chunk], max_tokens)
            begin = time.perf_counter()
            batches = [model.collate([chunk[i] for i in ids], with_gold=False) for ids in groups]
            seconds["collate (numbering, features)"] += time.perf_counter() - begin

            def decode(batch):
                with torch.inference_mode():
                    return model.decode(batch)

            begin = time.perf_counter()
            workers = args.threads if model.batches_in_threads else 1
            for ids, decoded in zip(groups, in_threads(decode, batches, workers)):
                for i, result in zip(ids, decoded):
                    predictions[i] = result
            seconds["forward and decode"] += time.perf_counter() - begin
            begin = time.perf_counter()
            for sentence, prediction in zip(chunk, predictions):
                model.annotate(sentence, prediction)
            seconds["annotate the records"] += time.perf_counter() - begin
            begin = time.perf_counter()
            write_chunk(chunk, None, model, io.StringIO(), "conllu")
            seconds["write CoNLL-U"] += time.perf_counter() - begin
    if profiler:
        profiler.__exit__(None, None, None)
    if args.threads == 1:  # with batches in threads the parts overlap: only their total is wall time
        inner = seconds["forward: recurrent layers"] + seconds["forward: first layer (per distinct word)"]
        seconds["forward: output layer and decoding"] = seconds.pop("forward and decode") - inner
    else:
        seconds = {k: v for k, v in seconds.items() if not k.startswith("forward:")}
    seconds = {**imports, **seconds}
    total = sum(v for k, v in seconds.items() if k != "import torch")
    out = {"file": args.file, "tokens": tokens, "threads": args.threads, "max_tokens": max_tokens,
           "seconds": {k: round(v, 3) for k, v in seconds.items()}, "total": round(total, 2),
           "load": [round(x, 2) for x in os.getloadavg()]}
    if profiler:
        ops = sorted(profiler.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)[: args.torch_profile]
        out["torch_ops_s"] = {e.key: [round(e.self_cpu_time_total / 1e6, 3), e.count] for e in ops}
    print(json.dumps(out, indent=1), flush=True)


def profile_runtime(args: argparse.Namespace) -> dict:
    """The stages of the torch-free path (see the module text), seconds."""
    seconds: dict[str, float] = defaultdict(float)
    seconds["start-up: the command's imports, no torch"] = import_seconds(
        "import tagger.cli.main, tagger.runtime.skip_lstm")

    from tagger import formats
    from tagger.corpus.batching import chunks
    from tagger.formats.placement import write_chunk
    from tagger.runtime import kernels, skip_lstm
    from tagger.runtime.tokenizer import read_archive

    kernel = skip_lstm.products(read_archive(args.model, peek=True), args.precision, small=False)
    if kernel is None:
        raise SystemExit("this model and precision go to torch: profile without --runtime")
    inside = {"word rows": False}  # a product made inside the per-word rows is theirs

    def timed(name, function, owner=False):
        def call(*a, **k):
            begin = time.perf_counter()
            inside["word rows"] |= owner
            try:
                return function(*a, **k)
            finally:
                if owner or not inside["word rows"]:
                    seconds[name] += time.perf_counter() - begin
                inside["word rows"] &= not owner
        return call

    start = time.perf_counter()
    model = skip_lstm.load(args.model, kernel)
    seconds["load the model"] = time.perf_counter() - start
    start = time.perf_counter()
    sentences = list(formats.read(args.file))
    seconds["read CoNLL-U"] = time.perf_counter() - start
    parts = ("first layer: per-word rows", "first layer: window sums", "input products of the upper layers",
             "recurrent layers", "upper layers: input products inside their scans", "output products")
    if args.threads == 1:
        model.word_rows = timed("first layer: per-word rows", model.word_rows, owner=True)
        fast = skip_lstm._fastscan
        skip_lstm._fastscan = SimpleNamespace(**{name: getattr(fast, name) for name in dir(fast)})
        skip_lstm._fastscan.window_sum = timed("first layer: window sums", fast.window_sum)
        kernels.scan = timed("recurrent layers", kernels.scan)
        kernels.scan_upper = timed("upper layers: input products inside their scans", kernels.scan_upper)
        product = kernels.product
        output = timed("output products", product)
        upper = timed("input products of the upper layers", product)
        kernels.product = lambda kernel, a, b, *rest, **named: (output if b is model.packed_out else upper)(
            kernel, a, b, *rest, **named)
    for chunk in chunks(sentences, args.chunk_size):
        begin = time.perf_counter()
        labels = model.tag([s.words for s in chunk], args.threads)
        seconds["tagging"] += time.perf_counter() - begin
        begin = time.perf_counter()
        for sentence, columns in zip(chunk, labels):
            sentence.columns.update(columns)
        seconds["annotate the records"] += time.perf_counter() - begin
        begin = time.perf_counter()
        write_chunk(chunk, None, model, io.StringIO(), "conllu")
        seconds["write CoNLL-U"] += time.perf_counter() - begin
    if args.threads == 1:
        seconds["tagging: the rest (batching, argmax, labels)"] = seconds.pop("tagging") - sum(
            seconds[name] for name in parts)
    total = sum(seconds.values())
    return {"file": args.file, "tokens": sum(map(len, sentences)), "threads": args.threads,
            "kernel": kernel.name, "seconds": {k: round(v, 3) for k, v in seconds.items()}, "total": round(total, 2),
            "load": [round(x, 2) for x in os.getloadavg()]}


if __name__ == "__main__":
    main()
