"""Build the shipped English pipeline (``tagger/resources/en.model``, issue 37) from ../shared/data.

    python bench/build_default_model.py --out-dir build            # train, compact, score; compare with the shipped one
    python bench/build_default_model.py --out-dir build --install  # and put it in tagger/resources/

1. Trains ``tagger train --task pipeline`` on UD English EWT train (dev for model selection) with
   :data:`TRAIN_ARGS`: a tokenizer (``medium``: on EWT test Words F1 99.20 against the default ``fast``'s 98.96, and faster than UDPipe 1's tokenizer), one tagger of UPOS, XPOS and FEATS whose word embeddings start
   from GloVe 6B 50d (the ``vectors`` extra), and a ``bilstm-words`` parser started from that tagger.
   About 80 minutes on one thread; a finished run in ``--out-dir`` is reused.
2. Writes ``OUT/en.model``: the same model with its weights stored as float16
   (:func:`tagger.model_file.half_weights`; half the file) and a ``card`` in its meta (what it is,
   its licence, how it was built, its scores), which ``tagger info en`` shows.
3. Scores it on the raw EWT test text (rebuilt from ``# text`` and ``# newpar``) with the official
   CoNLL 2018 scorer, and on the gold-tokenised test file, as a user runs it (whole processes).
4. Compares the scores with the shipped model's card: a difference beyond :data:`NOISE` is
   printed and the exit status is 1 (the check that a fresh build scores what the shipped one does).

The comparison with UDPipe 1 trained in the same run is ``bench/bench_tokenizer.py --pipeline
OUT/en.model --udpipe-pipeline-model ...`` (docs/default-model.md).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench_pipeline import DATA, blank  # bench/ is this script's folder
from bench_tokenizer import official, raw_text

ROOT = Path(__file__).resolve().parents[1]
RESOURCES = ROOT / "tagger" / "resources"
#: The training command's arguments after ``tagger train``, DATA standing for the treebank's folder.
TRAIN_ARGS = ("--task pipeline --train {data}/en_ewt-ud-train.conllu --dev {data}/en_ewt-ud-dev.conllu "
              "--embeddings glove-6b-50d --pos-set word_dim=50 --pos-set max_epochs=15 --tokenizer-preset medium --max-minutes 50 "
              "--seed 1")
#: Scores compared with the shipped model's (percent): a fresh build differs from it by seed-level
#: noise at most (EWT test; a run's seed moves LAS by up to ~0.9, UPOS by ~0.2: docs/benchmarks.md).
NOISE = {"Tokens": 0.3, "Sentences": 2.0, "UPOS": 0.5, "XPOS": 0.5, "UFeats": 0.6, "LAS": 1.5}


def train(out_dir: Path, threads: int) -> tuple[Path, float | None]:
    """The trained pipeline (reused where a finished one is there) and its training minutes."""
    full = out_dir / "en-fp32.model"
    if full.exists():
        return full, None
    args = TRAIN_ARGS.format(data=DATA).split() + ["--out", str(full), "--threads", str(threads), "--json"]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tagger", "train", *args], cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"training failed (exit {done.returncode})")
    return full, round((time.perf_counter() - start) / 60, 1)


def tag(model: Path, source: Path, out: Path, threads: int) -> float:
    """``tagger tag --model MODEL SOURCE > OUT`` as a user runs it; its wall seconds."""
    start = time.perf_counter()
    with open(out, "wb") as sink:
        done = subprocess.run([sys.executable, "-m", "tagger", "tag", "--model", str(model), "--quiet", "--threads",
                               str(threads), str(source)], stdout=sink, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"tagger tag failed on {source}")
    return time.perf_counter() - start


def score(model: Path, work: Path, threads: int) -> dict[str, dict[str, float]]:
    """Official F1 on the raw test text, and on the gold-tokenised test file (columns 3-9 blanked)."""
    gold = DATA / "en_ewt-ud-test.conllu"
    text = gold.read_text(encoding="utf-8")
    raw, blanked = work / "test.txt", work / "test.blank.conllu"
    raw.write_text(raw_text(text), encoding="utf-8")
    blanked.write_text(blank(text), encoding="utf-8")
    seconds = tag(model, raw, work / "test.raw.pred.conllu", threads)
    from_raw = official(gold, work / "test.raw.pred.conllu")
    tag(model, blanked, work / "test.gold-tokens.pred.conllu", threads)
    from_gold = official(gold, work / "test.gold-tokens.pred.conllu")
    keep = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "UAS", "LAS")
    return {"raw text": {k: from_raw[k] for k in keep if k in from_raw},
            "gold tokens": {k: from_gold[k] for k in ("UPOS", "XPOS", "UFeats", "UAS", "LAS") if k in from_gold},
            "raw text seconds": {"whole process": round(seconds, 2), "characters": len(raw.read_text())}}


def card(scores: dict[str, dict[str, float]], minutes: float | None, threads: int) -> dict[str, object]:
    """What ``tagger info en`` shows of the model, beside its stages."""
    return {
        "name": "en (the default of tagger tag and tagger.load())",
        "trained on": "UD English EWT v2.16: train (12,544 sentences); dev (2,001) for model selection",
        "licence": "CC BY-SA 4.0, as the treebank (tagger/resources/en.LICENSE.txt)",
        "EWT test, raw text (official CoNLL 2018 scorer, F1)": scores["raw text"],
        "EWT test, gold tokens (F1)": scores["gold tokens"],
        "training command": "tagger train " + TRAIN_ARGS.format(data="../shared/data/ud-english-ewt")
                            + f" --threads {threads} --out en.model",
        "training minutes": minutes if minutes is not None else "(reused a finished run)",
        "built by": "python bench/build_default_model.py --install (docs/default-model.md); weights stored as float16",
    }


def portable(archive: dict, out_dir: Path) -> dict:
    """``archive`` with the paths its meta names (the treebank's files, the stages' work files)
    relative: to ``../shared/data`` as the repository sees it, or to the build folder."""
    def relative(value: object) -> object:
        if not isinstance(value, str) or not value.startswith("/"):
            return value
        path = Path(value)
        if path.is_relative_to(DATA.parent.parent):
            return str(Path("../shared") / path.relative_to(DATA.parent.parent))
        return str(path.relative_to(out_dir)) if path.is_relative_to(out_dir) else path.name

    out = {**archive, "meta": {key: relative(value) for key, value in archive["meta"].items()}}
    if isinstance(archive.get("stages"), list):
        out["stages"] = [portable(stage, out_dir) for stage in archive["stages"]]
    return out


def compare(scores: dict[str, dict[str, float]], shipped: Path) -> list[str]:
    """The scores of :data:`NOISE` where this build differs from the shipped model by more."""
    from tagger import model_file

    if not shipped.exists():
        return [f"no shipped model at {shipped} to compare with"]
    theirs = model_file.read_archive(shipped)["meta"].get("card", {}).get("EWT test, raw text (official CoNLL 2018 scorer, F1)", {})
    return [f"{name}: {scores['raw text'][name]:.2f} here, {theirs[name]:.2f} shipped (noise {limit})"
            for name, limit in NOISE.items() if name in theirs and abs(scores["raw text"][name] - theirs[name]) > limit]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", default="default-model")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--install", action="store_true", help="copy the new model into tagger/resources/")
    parser.add_argument("--training-minutes", help="what the card says of a reused run's training time")
    args = parser.parse_args()
    out_dir = Path(args.out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    full, minutes = train(out_dir, args.threads)
    from tagger import model_file

    compact = out_dir / "en.model"
    archive = portable(model_file.half_weights(model_file.read_archive(full)), out_dir)
    minutes = minutes if minutes is not None else args.training_minutes
    model_file.atomic_save(archive, compact)
    scores = score(compact, out_dir, args.threads)
    archive["meta"] = {**archive["meta"], "card": card(scores, minutes, args.threads)}
    model_file.atomic_save(archive, compact)
    differs = compare(scores, RESOURCES / "en.model")
    print(json.dumps({"model": str(compact), "megabytes": round(compact.stat().st_size / 2**20, 2),
                      "training_minutes": minutes, **scores, "differs_from_shipped": differs}, indent=1))
    if args.install:
        shutil.copyfile(compact, RESOURCES / "en.model")
        print(f"installed {RESOURCES / 'en.model'}", file=sys.stderr)
    sys.exit(1 if differs and not args.install else 0)


if __name__ == "__main__":
    main()
