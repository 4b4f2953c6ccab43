"""The full pipeline on gold tokens, as users run it: nothing gold but the words (issue 18).

Each system reads the dev and test files with LEMMA, UPOS, XPOS, FEATS, HEAD, DEPREL and DEPS
blanked (IDs, FORM, multi-word token lines and MISC kept) and fills them; the official CoNLL 2018
scorer (``../shared/tools/conll18_ud_eval.py``) scores the output against the gold file, all words.

    python bench/bench_pipeline.py --udpipe --out-dir pipe            # UDPipe 1: its tagger feeds its parser
    python bench/bench_pipeline.py --ours en.model --out-dir pipe     # ours: one pipeline model file
    python bench/bench_pipeline.py --ours pos.tagger --ours dep.model --out-dir pipe   # chained stages

UDPipe 1 (``ufal.udpipe``, the ``bench`` extra) is trained here on the same train/dev files with its
default tagger and parser options (tokenizer off: gold tokens), as its own documentation trains a
model; its tagger feeds its parser as it does by default. One JSON object per system on stdout
(training seconds, the scorer's F1 per metric, sentences/s of the whole process over test).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
SHARED = HERE.parents[2] / "shared"
DATA = SHARED / "data" / "ud-english-ewt"
SCORER = SHARED / "tools" / "conll18_ud_eval.py"
METRICS = ("UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS", "MLAS", "BLEX")


def byte_compile() -> None:
    """Write the bytecode (``__pycache__``) of tagger and of these scripts (the UDPipe runs' timed
    processes start here) before anything is timed, as ``pip install`` does for its users:
    where ``PYTHONDONTWRITEBYTECODE`` is set (as on this project's machines), every process would
    otherwise compile its sources anew, 0.07-0.09 s a ``tagger`` process (measured in session 18
    on the AMX Xeon)."""
    import compileall

    for folder in (HERE.parents[1] / "tagger", HERE.parent):
        compileall.compile_dir(str(folder), quiet=1)


def blank(text: str) -> str:
    """CoNLL-U ``text`` with what a tagger or parser predicts replaced by ``_`` (cols 3-9)."""
    out = []
    for line in text.splitlines():
        if line and not line.startswith("#"):
            cols = line.split("\t")
            if len(cols) == 10 and "." not in cols[0]:
                if "-" not in cols[0]:
                    cols[2:9] = ["_"] * 7
                line = "\t".join(cols)
            elif len(cols) == 10:  # an empty node (enhanced graphs only): not a word
                continue
        out.append(line)
    return "\n".join(out) + "\n"


def score(gold: Path, system: Path) -> dict[str, float]:
    """The official scorer's F1 (percent) per metric."""
    result = subprocess.run([sys.executable, str(SCORER), "-v", str(gold), str(system)], check=True,
                            capture_output=True, text=True).stdout
    scores = {}
    for line in result.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) >= 4 and parts[0] in METRICS:
            scores[parts[0]] = float(parts[3])
    return scores


def udpipe(args: argparse.Namespace, out_dir: Path, parts: dict[str, Path]) -> dict:
    from ufal import udpipe as u  # type: ignore[import-not-found]

    path = out_dir / "udpipe1-pipeline.model"
    result: dict = {"system": "udpipe1", "model_file": str(path), "train_seconds": None}
    if not path.exists():
        error = u.ProcessingError()
        start = time.perf_counter()
        # "none" tokenizer: gold tokens; default tagger and parser options ("" = UDPipe's defaults)
        data = u.Trainer.train("morphodita_parsito", load(u, args.train), load(u, args.dev), "none",
                               args.udpipe_tagger, args.udpipe_parser, error)
        if error.occurred():
            raise RuntimeError(error.message)
        result["train_seconds"] = round(time.perf_counter() - start, 1)
        path.write_bytes(data if isinstance(data, bytes) else data.encode("latin-1"))
    model = u.Model.load(str(path))
    for part, gold in parts.items():
        text = blank(gold.read_text(encoding="utf-8"))
        start = time.perf_counter()
        pipeline = u.Pipeline(model, "conllu", u.Pipeline.DEFAULT, u.Pipeline.DEFAULT, "conllu")
        error = u.ProcessingError()
        output = pipeline.process(text, error)
        seconds = time.perf_counter() - start
        if error.occurred():
            raise RuntimeError(error.message)
        system = out_dir / f"udpipe1-{part}.conllu"
        system.write_text(output, encoding="utf-8")
        result[part] = score(gold, system)
        result[f"{part}_seconds"] = round(seconds, 2)
    return result


def load(u, path: str):
    reader = u.InputFormat.newConlluInputFormat()
    reader.setText(Path(path).read_text(encoding="utf-8"))
    error, sentences, sentence = u.ProcessingError(), u.Sentences(), u.Sentence()
    while reader.nextSentence(sentence, error):
        sentences.append(sentence)
        sentence = u.Sentence()
    if error.occurred():
        raise RuntimeError(error.message)
    return sentences


def ours(args: argparse.Namespace, out_dir: Path, parts: dict[str, Path]) -> dict:
    """``tagger tag --model M [--model M2 ...]`` as a user runs it, one process per file."""
    result: dict = {"system": "tagger", "models": args.ours, "threads": args.threads}
    for part, gold in parts.items():
        blanked = out_dir / f"blank-{part}.conllu"
        blanked.write_text(blank(gold.read_text(encoding="utf-8")), encoding="utf-8")
        system = out_dir / f"tagger-{part}.conllu"
        command = [sys.executable, "-m", "tagger", "tag", *sum((["--model", m] for m in args.ours), []),
                   str(blanked), "-o", str(system), "--threads", str(args.threads)]
        start = time.perf_counter()
        subprocess.run(command, check=True)
        result[f"{part}_seconds"] = round(time.perf_counter() - start, 2)
        result[part] = score(gold, system)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", default=str(DATA / "en_ewt-ud-train.conllu"))
    parser.add_argument("--dev", default=str(DATA / "en_ewt-ud-dev.conllu"))
    parser.add_argument("--test", default=str(DATA / "en_ewt-ud-test.conllu"))
    parser.add_argument("--out-dir", default="pipeline-bench")
    parser.add_argument("--udpipe", action="store_true", help="train (or reuse) and score UDPipe 1's pipeline")
    parser.add_argument("--udpipe-tagger", default="", help="UDPipe tagger options ('' = its defaults)")
    parser.add_argument("--udpipe-parser", default="", help="UDPipe parser options ('' = its defaults)")
    parser.add_argument("--ours", action="append", default=[], help="a model file; repeat to chain stages")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = {"dev": Path(args.dev), "test": Path(args.test)}
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    if args.udpipe:
        print(json.dumps({**udpipe(args, out_dir, parts), "cpu": cpu, "load": os.getloadavg()[0]}), flush=True)
    if args.ours:
        print(json.dumps({**ours(args, out_dir, parts), "cpu": cpu, "load": os.getloadavg()[0]}), flush=True)


if __name__ == "__main__":
    main()
