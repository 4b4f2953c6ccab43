"""Benchmark of a trained tokenizer (``tagger train --task tokenize``) on a gold CoNLL-U file.

1. The raw text of the gold file: each paragraph's sentences (``# text``) joined by a space (none
   after a last token with ``SpaceAfter=No``), paragraphs (``# newpar``, ``# newdoc``) by a blank
   line (:func:`tagger.tokenization.labels.labelled_text`), written to ``OUT/raw.txt``.
2. ``tagger tag --model MODEL --threads 1 < raw.txt > OUT/pred.conllu``, timed as a whole process
   (median of ``--runs``), also on the raw text repeated ``--repeat`` times (start-up then counts
   less); characters per second.
3. Scored with the CoNLL 2018 shared task's script (``--eval``; HEAD ``_`` filled with a
   placeholder tree first, :func:`with_heads`, in both files): tokens, sentences, words F1; and a check that the
   output's tokens and spacing give back the raw text exactly.

    python bench/bench_tokenize.py --model ewt.tok --gold en_ewt-ud-test.conllu --out-dir /tmp/tokbench

One JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tagger import formats
from tagger.tokenization.labels import conllu_blocks, labelled_text, rebuild_text, text_sentence

EVAL = Path(__file__).resolve().parents[2] / "shared" / "tools" / "conll18_ud_eval.py"


def raw_text(gold: Path) -> str:
    """The running text of ``gold`` (see the module text), ending with a line break."""
    return labelled_text(text_sentence(s) for s in formats.read(str(gold), "conllu")).text + "\n"


def timed_tag(model: Path, text_file: Path, out: Path, runs: int) -> float:
    """Median wall-clock seconds of ``tagger tag`` over ``text_file``, one thread, whole process."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        with open(text_file, "rb") as stdin, open(out, "wb") as stdout:
            subprocess.run([sys.executable, "-m", "tagger", "tag", "--model", str(model), "--threads", "1"], stdin=stdin,
                           stdout=stdout, check=True, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def with_heads(conllu: str) -> str:
    """A tokenizer's output with a placeholder tree (word 1 the root, the others on it) where HEAD
    is ``_``: the CoNLL 2018 script refuses a HEAD it cannot parse, and tokens, sentences and
    words do not depend on it."""
    out = []
    for line in conllu.splitlines():
        fields = line.split("\t")
        if len(fields) == 10 and fields[0].isdigit() and fields[6] == "_":
            fields[6], fields[7] = ("0", "root") if fields[0] == "1" else ("1", "dep")
            line = "\t".join(fields)
        out.append(line)
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, type=Path)
    parser.add_argument("--gold", required=True, type=Path)
    parser.add_argument("--out-dir", required=True, type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--eval", type=Path, default=EVAL)
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    raw = raw_text(args.gold)
    raw_file, pred = args.out_dir / "raw.txt", args.out_dir / "pred.conllu"
    raw_file.write_text(raw, encoding="utf-8")
    seconds = timed_tag(args.model, raw_file, pred, args.runs)
    output = pred.read_text(encoding="utf-8")
    result = {"model": str(args.model), "gold": str(args.gold), "characters": len(raw),
              "rebuilt_exactly": rebuild_text(conllu_blocks(output.splitlines())) == raw,
              "seconds": round(seconds, 3), "chars_per_second": round(len(raw) / seconds)}
    if args.repeat > 1:
        big = args.out_dir / f"raw-x{args.repeat}.txt"
        big.write_text("\n".join([raw] * args.repeat), encoding="utf-8")
        big_seconds = timed_tag(args.model, big, args.out_dir / "big.conllu", args.runs)
        result.update({f"x{args.repeat}_characters": len(raw) * args.repeat + args.repeat - 1,
                       f"x{args.repeat}_seconds": round(big_seconds, 3),
                       f"x{args.repeat}_chars_per_second": round((len(raw) * args.repeat) / big_seconds)})
    if args.eval.exists():
        scored, gold = args.out_dir / "pred-heads.conllu", args.out_dir / "gold-heads.conllu"
        scored.write_text(with_heads(output), encoding="utf-8")
        gold.write_text(with_heads(args.gold.read_text(encoding="utf-8")), encoding="utf-8")  # fixtures have no trees
        done = subprocess.run([sys.executable, str(args.eval), "-v", str(gold), str(scored)], capture_output=True,
                              text=True)
        if done.returncode:
            sys.exit(f"{args.eval}: {done.stderr.strip().splitlines()[-1]}")
        for line in done.stdout.splitlines():
            name, *cells = [cell.strip() for cell in line.split("|")]
            if name in ("Tokens", "Sentences", "Words", "UPOS", "LAS"):
                result[name.lower() + "_f1"] = float(cells[2])
    print(json.dumps(result))


if __name__ == "__main__":
    main()
