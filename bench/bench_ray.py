"""The Ray Data recipe of docs/api.md run on this machine: EWT test as plain text (one sentence
per line) -> ``read_text`` -> ``map_batches(tagger.BatchTagger)`` on N workers -> CoNLL-U files;
checked byte for byte against ``tagger tag`` on the same text, with both throughputs.

    pip install -e '.[scale]'
    python bench/bench_ray.py --model pos.tagger                 # 2 workers, EWT test
    python bench/bench_ray.py --model pos.tagger --workers 4 --batch-size 500

Prints one JSON object per measurement (tokens/s: words tagged per wall-clock second, model
loading and, for Ray, worker start-up included; ``ray.init`` not). Exits 1 if the outputs differ.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EWT_TEST = ROOT.parent / "shared" / "data" / "ud-english-ewt" / "en_ewt-ud-test.conllu"


def emit(record: dict) -> None:
    record.setdefault("machine", f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus")
    print(json.dumps(record), flush=True)


def write_text(conllu: Path, out: Path) -> int:
    """The sentences of ``conllu`` as plain text, one per line; returns the number of words."""
    sys.path.insert(0, str(ROOT))
    from tagger import formats

    words = 0
    with out.open("w", encoding="utf-8") as f:
        for sentence in formats.read(str(conllu)):
            f.write(" ".join(sentence.words) + "\n")
            words += len(sentence)
    return words


def run_cli(model: str, text: Path, out: Path, threads: int) -> float:
    """Seconds ``tagger tag`` takes on ``text`` (process start included)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tagger", "tag", "--model", model, "--format", "text", "--threads",
                    str(threads), str(text), "-o", str(out)], check=True, cwd=ROOT)
    return time.perf_counter() - start


def conllu_sink(folder: Path):
    """A Ray Data sink writing each write task's rows of CoNLL-U, joined, to one file of
    ``folder`` (Ray names it ``..._TASK.conllu``, the task index zero-padded: the files sort in
    task order, which is input order under ``preserve_order``)."""
    from ray.data.datasource import BlockBasedFileDatasink

    class ConlluSink(BlockBasedFileDatasink):
        def write_block_to_file(self, block, file) -> None:
            file.write("".join(block.to_arrow().column("conllu").to_pylist()).encode("utf-8"))

    return ConlluSink(str(folder), file_format="conllu")


def worker_threads(model: str) -> dict:
    """What a Ray worker that loads the model sees: whether it is taken for a worker process,
    and torch's threads after ``tagger.load`` without ``threads=``."""
    import ray

    @ray.remote(num_cpus=1)
    def probe() -> dict:
        import torch

        import tagger

        torch.set_num_threads(2)  # as if Ray had not set OMP_NUM_THREADS=1: the load must bring it to 1
        tagger.load(model)
        return {"worker_detected": tagger.in_worker_process(), "worker_torch_threads": torch.get_num_threads()}

    return ray.get(probe.remote())


def run_ray(model: str, text: Path, folder: Path, workers: int, batch_size: int) -> tuple[float, dict]:
    """Seconds the recipe takes on ``text`` with ``workers`` single-CPU actors (each one torch
    thread: :func:`tagger.api.set_threads` sees a Ray worker)."""
    import ray

    import tagger

    # One logical CPU beyond the actors' for the read and write tasks: with none left they wait
    # behind the actors, which wait for their input, for ever.
    ray.init(num_cpus=workers + 1, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    ray.data.DataContext.get_current().execution_options.preserve_order = True  # rows written in input order
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        probed = worker_threads(model)
        start = time.perf_counter()
        (ray.data.read_text(str(text))
         .map_batches(tagger.BatchTagger, fn_constructor_kwargs={"model_path": model}, batch_size=batch_size,
                      compute=ray.data.ActorPoolStrategy(size=workers), num_cpus=1)
         .write_datasink(conllu_sink(folder)))
        return time.perf_counter() - start, probed
    finally:
        ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="A tagger model file.")
    parser.add_argument("--data", type=Path, default=EWT_TEST, help="CoNLL-U file whose words are tagged.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=1000, help="Lines per map_batches batch.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text, cli_out, folder = Path(tmp) / "in.txt", Path(tmp) / "cli.conllu", Path(tmp) / "ray"
        words = write_text(args.data, text)
        base = {"data": str(args.data), "words": words, "model": args.model}
        for threads in sorted({1, args.workers}):
            seconds = run_cli(args.model, text, cli_out, threads)
            emit({**base, "run": f"tagger tag --threads {threads}", "seconds": round(seconds, 2),
                  "tokens_per_second": round(words / seconds)})
        seconds, probed = run_ray(args.model, text, folder, args.workers, args.batch_size)
        parts = sorted(folder.glob("*.conllu"))
        ray_bytes = b"".join(part.read_bytes() for part in parts)
        same = ray_bytes == cli_out.read_bytes()
        emit({**base, "run": f"ray data, {args.workers} workers x 1 thread, batch {args.batch_size}",
              "seconds": round(seconds, 2), "tokens_per_second": round(words / seconds), "files": len(parts),
              "byte_identical_to_tagger_tag": same, **probed})
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
