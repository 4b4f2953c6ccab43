"""Raw text in, on any UD treebank: our pipeline against UDPipe 1's, trained on the same data in the same run (issue 35).

    python bench/bench_ud.py --out-dir ud ud-japanese-gsd ud-vietnamese-vtb ud-portuguese-bosque ud-english-ewt
    python bench/bench_ud.py --out-dir ud --minutes 20 ud-vietnamese-vtb      # our per-stage training budget
    python bench/bench_ud.py --out-dir ud --ours en ud-english-ewt            # the shipped model as ours, not trained

For each treebank folder (under ``../shared/data``, or a path) it:

1. splits the data: the treebank's train and dev files, or, where there is no train file
   (Japanese GSD and Portuguese Bosque here), the first 85 % of dev to train on and the rest as dev;
2. trains ours, ``tagger train --task pipeline`` (a tokenizer, one tagger of UPOS, XPOS and FEATS,
   a parser: one model file), ``--max-minutes`` per stage, and UDPipe 1's tokenizer, tagger and
   parser with its default options (``ufal.udpipe``, the ``bench`` extra), on the same files; a
   model already in ``--out-dir`` is reused;
3. runs both on the raw test text rebuilt from ``# text`` and ``# newpar``
   (:func:`bench_tokenizer.raw_text`) as whole processes, timed (median of ``--repeats``, the two systems taking turns);
4. scores both with the official CoNLL 2018 scorer.

It prints one JSON line per system and treebank, then one markdown table: treebank × system ×
Tokens, Sentences, Words, UPOS, UFeats, LAS F1 and characters per second.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from bench_pipeline import SHARED, byte_compile, load  # bench/ is this script's folder
from bench_tokenizer import _cpu, interleaved, measure, raw_text

SHOWN = ("Tokens", "Sentences", "Words", "UPOS", "UFeats", "LAS")
#: The share of dev trained on where a treebank has no train file.
TRAIN_SHARE = 0.85


def blocks(path: Path) -> list[str]:
    return [b for b in path.read_text(encoding="utf-8").split("\n\n") if b.strip()]


def splits(folder: Path, out: Path) -> tuple[Path, Path, Path, str]:
    """(train, dev, test) files of a treebank folder, and how train and dev were made."""
    def one(pattern: str) -> Path | None:
        return next(iter(sorted(folder.glob(pattern))), None)

    train, dev, test = one("*-ud-train.conllu"), one("*-ud-dev.conllu"), one("*-ud-test.conllu")
    if test is None or dev is None:
        raise SystemExit(f"{folder}: needs a *-ud-dev.conllu and a *-ud-test.conllu file")
    if train is not None:
        return train, dev, test, "train / dev"
    sentences = blocks(dev)
    cut = int(len(sentences) * TRAIN_SHARE)
    train, held = out / "train.conllu", out / "dev.conllu"
    train.write_text("\n\n".join(sentences[:cut]) + "\n\n", encoding="utf-8")
    held.write_text("\n\n".join(sentences[cut:]) + "\n\n", encoding="utf-8")
    return train, held, test, f"dev's first {cut} sentences / its other {len(sentences) - cut}"


def train_ours(train: Path, dev: Path, out: Path, minutes: float, threads: int, extra: list[str]) -> float | None:
    """``tagger train --task pipeline`` (and ``extra`` arguments); its minutes (None: reused)."""
    if out.exists():
        return None
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tagger", "train", "--task", "pipeline", "--train", str(train), "--dev",
                    str(dev), "--out", str(out), "--max-minutes", str(minutes), "--threads", str(threads), "--seed",
                    "1", "--quiet", *extra], check=True)
    return round((time.perf_counter() - start) / 60, 1)


def train_udpipe(train: Path, dev: Path, out: Path) -> float | None:
    """UDPipe 1's tokenizer, tagger and parser with its defaults, one model file; its minutes."""
    if out.exists():
        return None
    from ufal import udpipe as u  # type: ignore[import-not-found]

    error = u.ProcessingError()
    start = time.perf_counter()
    data = u.Trainer.train("morphodita_parsito", load(u, str(train)), load(u, str(dev)), "", "", "", error)
    if error.occurred():
        raise SystemExit(f"UDPipe training failed: {error.message}")
    out.write_bytes(data if isinstance(data, bytes) else data.encode("latin-1"))
    return round((time.perf_counter() - start) / 60, 1)


def treebank(name: str, args: argparse.Namespace) -> list[dict]:
    folder = Path(name) if Path(name).is_dir() else SHARED / "data" / name
    out = Path(args.out_dir) / folder.name
    out.mkdir(parents=True, exist_ok=True)
    train, dev, test, how = splits(folder, out)
    raw = out / "test.txt"
    raw.write_text(raw_text(test.read_text(encoding="utf-8")), encoding="utf-8")
    ours, theirs = out / "tagger.model", out / "udpipe1.model"
    ours_minutes = train_ours(train, dev, ours, args.minutes, args.threads, args.set) if not args.ours else None
    ours = args.ours or ours
    udpipe_minutes = train_udpipe(train, dev, theirs) if not args.no_udpipe else None
    runs = [("tagger", [sys.executable, "-m", "tagger", "tag", "--quiet", "--threads", str(args.threads), "--model",
                        str(ours)], out / "tagger.conllu")]
    if not args.no_udpipe:
        lean = Path(__file__).resolve().parent / "udpipe_run.py"  # a process that imports UDPipe alone
        runs.append(("udpipe1", [sys.executable, str(lean), "pipeline", str(theirs)],
                     out / "udpipe1.conllu"))
    times = interleaved(runs, raw, args.repeats)  # the two systems taking turns
    minutes = {"tagger": ours_minutes, "udpipe1": udpipe_minutes}
    records = [{**measure(system, command, test, raw, output, times[system]), "train_minutes": minutes[system]}
               for system, command, output in runs]
    for record in records:
        record.update({"treebank": folder.name, "split": how, "train_sentences": len(blocks(train))})
        print(json.dumps({**record, "cpu": _cpu(), "threads": args.threads}), flush=True)
    return records


def table(records: list[dict]) -> str:
    head = ["treebank", "system", *(f"{m} F1" for m in SHOWN), "chars/s", "training min"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        scores = r["official"]
        rows.append("| " + " | ".join([r["treebank"], r["system"], *(f"{scores[m]:.2f}" if m in scores else "-" for m in SHOWN),
                                       f"{r['chars_per_s']:,}", str(r.get("train_minutes") or "reused")]) + " |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("treebanks", nargs="*", help="folders under ../shared/data (or paths)")
    parser.add_argument("--out-dir", default="ud-bench")
    parser.add_argument("--minutes", type=float, default=15.0, help="our training budget per stage (--max-minutes)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-udpipe", action="store_true", help="leave UDPipe 1 out")
    parser.add_argument("--set", action="append", default=[], metavar="ARG",
                        help="one more argument to our `tagger train` (repeatable), e.g. --set=--preset --set=bilstm-tags")
    parser.add_argument("--ours", metavar="MODEL", help="run this model file (or shipped name, e.g. en) as ours instead of training one")
    args = parser.parse_args()
    byte_compile()
    records = [record for name in args.treebanks for record in treebank(name, args)]
    print(table(records))


if __name__ == "__main__":
    main()
