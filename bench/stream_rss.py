"""Peak memory of ``tagger tag`` streaming N generated sentences: it must not grow with N.

Each size runs ``python -m tagger tag`` in a fresh process (``--threads 1``), fed N generated
sentences on stdin by a thread while this process reads the output and checks that sentence i
comes back i-th (sentence i starts with the digits of i spelled as words: ``four two ...``, then
2-8 words from a fixed vocabulary of ``--vocab`` words). The peak RSS is the child's
``ru_maxrss``.

    python bench/stream_rss.py                          # 10k, 100k, 1M sentences
    python bench/stream_rss.py --sizes 10000,100000 --malloc both --json

What to expect, and why:

* Memory held by ``tagger tag`` is: the interpreter, torch and the model (a constant), one chunk
  of ``--chunk-size`` sentences with their tensors and output (bounded), and the tagger's memo of
  featurised word types (``InputFeaturizer``: one entry per distinct word form, capped at 500,000
  entries). With a fixed vocabulary (the default here, as in real text whose new types thin out)
  nothing grows with N. ``--unique`` adds a never-seen token to every sentence to show that
  memo filling up (it levels off at its cap).
* glibc's malloc moves its mmap threshold dynamically, so freed chunk buffers are sometimes kept
  in the heap: the peak RSS wanders by some tens of MiB from run to run, independently of N.
  ``--malloc fixed`` pins the threshold (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``)
  and the RSS is then flat to the MiB; ``both`` runs each size both ways.

Target (issue 5): peak RSS at the largest size within 10% of the smallest. Exit status 1 if the
output order is wrong or the target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

DIGITS = "zero one two three four five six seven eight nine".split()
FIXED_MALLOC = {"MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}


def sentence(i: int, vocab: int, unique: bool = False) -> str:
    """Sentence ``i``: the digits of i as words, then 2-8 words of a ``vocab``-word vocabulary."""
    words = [DIGITS[int(d)] for d in str(i)]
    words += [f"w{(i * 7919 + j * 104729) % vocab}" for j in range(2 + i % 7)]
    if unique:
        words.append(f"u{i}")
    return " ".join(words)


def sentence_id(line: bytes) -> int:
    """The number a tagged output line starts with (its ``word/TAG`` tokens' digit words)."""
    digits = []
    for token in line.split():
        word = token.rsplit(b"/", 1)[0].decode()
        if word not in DIGITS:
            break
        digits.append(str(DIGITS.index(word)))
    return int("".join(digits)) if digits else -1


def tiny_model(path: Path, vocab: int) -> None:
    """An untrained 2x16 tagger knowing the generated vocabulary (speed and memory only)."""
    import torch

    from tagger import model_file
    from tagger.config import build_config
    from tagger.corpus.records import Sentence
    from tagger.models.skip_lstm import PRESETS, SkipLSTMTagger, TaggerConfig

    torch.manual_seed(0)
    config = build_config(TaggerConfig, PRESETS, "fast", overrides=["layers=2", "hidden=16", "word_dim=16"])
    words = DIGITS + [f"w{i}" for i in range(vocab)]
    tags = ["NUM", "NOUN", "VERB", "DET"]
    examples = [Sentence(words[i : i + 50], {"upos": [tags[j % 4] for j in range(len(words[i : i + 50]))]})
                for i in range(0, len(words), 50)]
    model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, examples))
    model_file.save(path, model.eval(), {"note": "untrained, for bench/stream_rss.py"})


def run(model: Path, n: int, vocab: int, chunk_size: int, malloc: str, unique: bool) -> dict:
    """Tag n generated sentences in a fresh ``tagger tag`` process; its peak RSS and checks."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    if malloc == "fixed":
        env.update(FIXED_MALLOC)
    command = [sys.executable, "-m", "tagger", "tag", "--model", str(model), "--input-format", "text",
               "--output-format", "tagged", "--threads", "1", "--chunk-size", str(chunk_size)]
    started = time.monotonic()
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    def feed() -> None:
        try:
            for start in range(0, n, 1000):
                block = "".join(sentence(i, vocab, unique) + "\n" for i in range(start, min(n, start + 1000)))
                child.stdin.write(block.encode())
            child.stdin.close()
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    count, in_order, samples = 0, True, []
    for line in child.stdout:
        if in_order and sentence_id(line) != count:
            in_order = False
        count += 1
        if count % max(1, n // 20) == 0:
            try:
                status = Path(f"/proc/{child.pid}/status").read_text()
                samples.append(int(next(l for l in status.splitlines() if l.startswith("VmRSS")).split()[1]) // 1024)
            except (OSError, StopIteration):
                pass
    writer.join()
    stderr = child.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - started
    return {"sentences": n, "malloc": malloc, "seconds": round(seconds, 1), "sentences_per_second": round(n / seconds),
            "peak_rss_mib": round(usage.ru_maxrss / 1024, 1), "rss_samples_mib": samples,
            "output_sentences": count, "in_order": in_order and count == n, "exit": child.returncode,
            "stderr": stderr.strip()[-500:]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated sentence counts")
    parser.add_argument("--model", type=Path, help="a model file (default: an untrained 2x16 tagger)")
    parser.add_argument("--vocab", type=int, default=2000, help="filler vocabulary size")
    parser.add_argument("--chunk-size", type=int, default=1000)
    parser.add_argument("--malloc", choices=["default", "fixed", "both"], default="default")
    parser.add_argument("--unique", action="store_true", help="add a never-seen word to every sentence")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or Path(tmp) / "tiny.tagger"
        if args.model is None:
            tiny_model(model, args.vocab)
        modes = ["default", "fixed"] if args.malloc == "both" else [args.malloc]
        results = []
        for mode in modes:
            for n in sizes:
                result = run(model, n, args.vocab, args.chunk_size, mode, args.unique)
                results.append(result)
                if not args.json:
                    print(f"{n:>9,} sentences  malloc {mode:<7}  {result['seconds']:>7.1f}s  "
                          f"{result['sentences_per_second']:>6,}/s  peak RSS {result['peak_rss_mib']:>7.1f} MiB  "
                          f"order {'ok' if result['in_order'] else 'WRONG'}  exit {result['exit']}", flush=True)
    ok = all(r["in_order"] and r["exit"] == 0 for r in results)
    growth = {}
    for mode in modes:
        peaks = [r["peak_rss_mib"] for r in results if r["malloc"] == mode]
        growth[mode] = round(100 * (peaks[-1] - peaks[0]) / peaks[0], 1)
        ok = ok and growth[mode] <= 10.0
    if args.json:
        print(json.dumps({"results": results, "growth_percent": growth, "ok": ok}))
    else:
        for mode, value in growth.items():
            print(f"peak RSS growth {sizes[0]:,} -> {sizes[-1]:,} sentences (malloc {mode}): {value:+.1f}% (target <= 10%)")
        for r in results:
            if r["stderr"]:
                print(f"stderr of the {r['sentences']:,} run: {r['stderr']}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
