"""Raw text in (issue 19): UDPipe 1's tokenizer against ours, scored as the CoNLL 2018 shared task scores.

The raw test text is rebuilt from the gold CoNLL-U file (:func:`raw_text`: each sentence's
``# text``, the sentences of a paragraph on one line, a blank line at each ``# newpar`` and
``# newdoc``). Each system reads it as a whole process (model loading and start-up included),
``--repeats`` times (median; the systems take turns, one run of each and again), and writes
CoNLL-U; the official scorer
(``../shared/tools/conll18_ud_eval.py``) and ``tagger evaluate --gold --pred --json`` score it.

    python bench/bench_tokenizer.py --out-dir tok-bench                      # UDPipe 1's side only
    python bench/bench_tokenizer.py --out-dir tok-bench --ours tok.model     # and ours
    python bench/bench_tokenizer.py --out-dir tok-bench --ours tok.model \\
        --pipeline "tok.model pos.tagger dep.model" --udpipe-pipeline-model pipe/udpipe1-pipeline.model

UDPipe 1 (``ufal.udpipe``) trains its tokenizer only (tagger and parser ``none``) on the same
train/dev files, with ``--udpipe-tokenizer`` options ('' = its defaults), once per ``--out-dir``.
With ``--pipeline``, ours runs ``tagger tag --model TOK --model POS --model DEP`` on the raw text,
UDPipe 1 its tokenizer followed by its default tagger and parser (the model
``bench/bench_pipeline.py --udpipe`` trains: components are trained apart in UDPipe 1, so this
is its default pipeline), in one process; both are scored (LAS F1 and the rest).

Output: one JSON line per system, then a markdown table. Speeds are characters and gold tokens
of the test text per second of the whole process, median of ``--repeats``.
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

from bench_pipeline import DATA, SCORER, byte_compile, load  # bench/ is this script's folder

ROOT = Path(__file__).resolve().parents[1]
#: The official scorer's metrics, in its order.
METRICS = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS",
           "CLAS", "MLAS", "BLEX")
#: The columns of the table.
SHOWN = ("Tokens", "Sentences", "Words", "UPOS", "LAS")


def raw_text(conllu: str) -> str:
    """The raw text of a CoNLL-U file: each sentence's ``# text`` (rebuilt from its tokens and
    ``SpaceAfter=No`` where it has none), the sentences of a paragraph joined by a space on one
    line, paragraphs (``# newpar``, ``# newdoc``) separated by a blank line."""
    paragraphs: list[list[str]] = []
    for block in conllu.split("\n\n"):
        lines = [line for line in block.split("\n") if line]
        if not any(not line.startswith("#") for line in lines):
            continue
        comments = [line for line in lines if line.startswith("#")]
        if not paragraphs or any(c.startswith(("# newpar", "# newdoc")) for c in comments):
            paragraphs.append([])
        text = next((c.split("=", 1)[1].strip() for c in comments if c.startswith("# text =")), None)
        paragraphs[-1].append(text if text is not None else _text_of_tokens(lines))
    return "".join(" ".join(sentences) + "\n\n" for sentences in paragraphs)


def _text_of_tokens(lines: list[str]) -> str:
    """A sentence's text from its token lines (multiword ranges, and words outside them)."""
    out, last = [], 0
    for line in lines:
        cols = line.split("\t")
        if line.startswith("#") or len(cols) != 10 or "." in cols[0]:
            continue
        if "-" in cols[0]:
            first, last = (int(x) for x in cols[0].split("-"))
        elif int(cols[0]) <= last:
            continue
        out.append(cols[1] + ("" if "SpaceAfter=No" in cols[9].split("|") else " "))
    return "".join(out).strip()


def gold_tokens(conllu: str) -> int:
    """Tokens of a CoNLL-U text: multiword ranges and the words outside them."""
    count, last = 0, 0
    for line in conllu.splitlines():
        cols = line.split("\t")
        if line.startswith("#") or len(cols) != 10 or "." in cols[0]:
            continue
        if "-" in cols[0]:
            last = int(cols[0].split("-")[1])
            count += 1
        elif int(cols[0]) > last:
            count += 1
            last = 0
    return count


def with_heads(conllu: str) -> str | None:
    """A tokenizer's CoNLL-U (HEAD ``_``) with each word attached to the one before (the first to
    the root), which the official scorer needs to read a file; None if it has heads."""
    out, changed = [], False
    for line in conllu.splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit() and cols[6] == "_":
            cols[6], cols[7], changed = str(int(cols[0]) - 1), "root" if cols[0] == "1" else "dep", True
            line = "\t".join(cols)
        out.append(line)
    return "\n".join(out) + "\n" if changed else None


def official(gold: Path, system: Path) -> dict[str, float]:
    """The official scorer's F1 (percent) per metric; of a file without heads (a tokenizer's), only
    Tokens, Sentences and Words (on a copy with heads filled in)."""
    filled = with_heads(system.read_text(encoding="utf-8"))
    if filled is not None:
        system = system.with_suffix(".heads.conllu")
        system.write_text(filled, encoding="utf-8")
    done = subprocess.run([sys.executable, str(SCORER), "-v", str(gold), str(system)], capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1]}
    scores = {}
    for line in done.stdout.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) >= 4 and parts[0] in (METRICS[:3] if filled is not None else METRICS):
            scores[parts[0]] = float(parts[3])
    return scores


def ours_scored(gold: Path, system: Path) -> dict[str, float]:
    """``tagger evaluate --gold --pred --json``: F1 (percent) per metric, named as the scorer names them."""
    done = subprocess.run([sys.executable, "-m", "tagger", "evaluate", "--gold", str(gold.resolve()),
                           "--pred", str(system.resolve()), "--aligned", "--json"], capture_output=True, text=True,
                          cwd=ROOT)
    if done.returncode != 0:
        return {"error": done.stderr.strip()}
    aligned = json.loads(done.stdout)["aligned"]
    return {name: aligned[name]["f1"] for name in METRICS if name in aligned}


def timed(command: list[str], stdin: Path, stdout: Path, repeats: int) -> list[float]:
    """Wall seconds of ``repeats`` runs of ``command`` (stdin from, stdout to the files)."""
    times = []
    for _ in range(repeats):
        with open(stdin, "rb") as inp, open(stdout, "wb") as out:
            start = time.perf_counter()
            done = subprocess.run(command, stdin=inp, stdout=out, stderr=subprocess.PIPE, cwd=ROOT)
            times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr.decode()[-2000:]}")
    return times


def train_udpipe_tokenizer(args: argparse.Namespace, path: Path) -> float | None:
    """Train UDPipe 1's tokenizer alone (tagger, parser ``none``) unless ``path`` exists; its seconds."""
    if path.exists():
        return None
    from ufal import udpipe as u  # type: ignore[import-not-found]

    error = u.ProcessingError()
    start = time.perf_counter()
    data = u.Trainer.train("morphodita_parsito", load(u, args.train), load(u, args.dev), args.udpipe_tokenizer,
                           "none", "none", error)
    if error.occurred():
        raise SystemExit(f"UDPipe training failed: {error.message}")
    seconds = time.perf_counter() - start
    path.write_bytes(data if isinstance(data, bytes) else data.encode("latin-1"))
    return round(seconds, 1)


def interleaved(runs: list[tuple[str, list[str], Path]], raw: Path, repeats: int) -> dict[str, list[float]]:
    """Wall seconds of ``repeats`` runs of each ``(name, command, output)`` on the raw text, the
    systems taking turns (one run of each, then again), so that a machine busy with something
    else slows all of them alike."""
    times: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    for _ in range(repeats):
        for name, command, out in runs:
            times[name] += timed(command, raw, out, 1)
    return times


def measure(name: str, command: list[str], gold: Path, raw: Path, out: Path, times: list[float]) -> dict:
    """A system's record: its ``times`` on the raw text and its output scored both ways."""
    seconds = statistics.median(times)
    chars, tokens = len(raw.read_text(encoding="utf-8")), gold_tokens(gold.read_text(encoding="utf-8"))
    return {"system": name, "command": " ".join(command), "seconds": [round(t, 2) for t in times],
            "chars_per_s": round(chars / seconds), "tokens_per_s": round(tokens / seconds),
            "official": official(gold, out), "tagger_evaluate": ours_scored(gold, out)}


def table(records: list[dict]) -> str:
    """A markdown table: speed and the official scorer's F1 of each system."""
    head = ["system", "chars/s", "tokens/s", *(f"{m} F1" for m in SHOWN), "max |ours - official|"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        scores = r["official"]
        diffs = [abs(r["tagger_evaluate"][m] - v) for m, v in scores.items() if m in r["tagger_evaluate"]]
        cells = [r["system"], f"{r['chars_per_s']:,}", f"{r['tokens_per_s']:,}",
                 *(f"{scores[m]:.2f}" if m in scores else "-" for m in SHOWN),
                 f"{max(diffs):.4f}" if diffs else "-"]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", default=str(DATA / "en_ewt-ud-train.conllu"))
    parser.add_argument("--dev", default=str(DATA / "en_ewt-ud-dev.conllu"))
    parser.add_argument("--test", default=str(DATA / "en_ewt-ud-test.conllu"))
    parser.add_argument("--out-dir", default="tokenizer-bench")
    parser.add_argument("--udpipe-tokenizer", default="", help="UDPipe tokenizer options ('' = its defaults)")
    parser.add_argument("--no-udpipe", action="store_true", help="leave UDPipe 1 out")
    parser.add_argument("--ours", metavar="TOK", help="our tokenizer model (`tagger train --task tokenize`)")
    parser.add_argument("--pipeline", metavar="'TOK POS DEP'", help="our raw-text pipeline's model files, in order")
    parser.add_argument("--udpipe-pipeline-model", metavar="FILE",
                        help="UDPipe 1's tagger+parser model for --pipeline (bench_pipeline.py --udpipe trains it)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    byte_compile()
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    gold = Path(args.test)
    raw = out_dir / "test.txt"
    raw.write_text(raw_text(gold.read_text(encoding="utf-8")), encoding="utf-8")
    udpipe = [sys.executable, str(Path(__file__).resolve().parent / "udpipe_run.py"), "tokenize"]  # a lean process
    context = {"cpu": _cpu(), "threads": args.threads, "repeats": args.repeats}
    runs: list[tuple[str, list[str], Path]] = []  # (system, command, output), timed taking turns
    extra: dict[str, dict] = {}
    if not args.no_udpipe:
        model = out_dir / "udpipe1-tokenizer.model"
        train_seconds = train_udpipe_tokenizer(args, model)
        runs.append(("udpipe1 tokenizer", [*udpipe, str(model)], out_dir / "udpipe1-tokenized.conllu"))
        extra["udpipe1 tokenizer"] = {"train_seconds": train_seconds, "options": args.udpipe_tokenizer or "defaults"}
        if args.pipeline and args.udpipe_pipeline_model:
            runs.append(("udpipe1 pipeline", [*udpipe, str(model), args.udpipe_pipeline_model],
                         out_dir / "udpipe1-pipeline.conllu"))
    tagger = [sys.executable, "-m", "tagger", "tag", "--threads", str(args.threads)]
    if args.ours:
        if Path(args.ours).exists():
            runs.append(("tagger tokenizer", [*tagger, "--model", args.ours], out_dir / "tagger-tokenized.conllu"))
        else:
            print(f"note: no tokenizer model {args.ours}; our side left out", file=sys.stderr)
    if args.pipeline:
        models = args.pipeline.split()
        missing = [m for m in models if not Path(m).exists()]
        if missing:
            print(f"note: no model {', '.join(missing)}; our pipeline left out", file=sys.stderr)
        else:
            runs.append(("tagger pipeline", [*tagger, *sum((["--model", m] for m in models), [])],
                         out_dir / "tagger-pipeline.conllu"))
    times = interleaved(runs, raw, args.repeats)
    records = [{**measure(name, command, gold, raw, out, times[name]), **extra.get(name, {})}
               for name, command, out in runs]
    for record in records:
        print(json.dumps({**record, **context, "load": os.getloadavg()[0]}), flush=True)
    print(table(records))


def _cpu() -> str:
    return next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")


if __name__ == "__main__":
    main()
