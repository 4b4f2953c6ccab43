"""Peer for the constituency parser (issue 16): SuPar's CRF constituency parser (``crf-con``,
Zhang et al. 2020) trained and scored on the PTB WSJ sample split, CPU only, offline.

Split (``../shared/BENCHMARKS.md``): train wsj_0001-0159, dev 0160-0179, test 0180-0199. Trees
are prepared as our parser sees them: ``-NONE-`` empty elements and the constituents left empty
removed, function tags and co-indices stripped (``NP-SBJ-1`` -> ``NP``, ``NP=2`` -> ``NP``,
``PRT|ADVP`` -> ``PRT``; labels starting with ``-`` such as ``-LRB-`` kept). SuPar reads and
writes one tree per line under a ``(TOP ...)`` root (its PTB convention; ``TOP`` is in its
evaluation's deleted labels); the gold and predicted files this script leaves for
``tagger evaluate --gold G --pred P`` have the WSJ ``( (S ...))`` root instead (unlabelled outer
bracket), exactly the same trees otherwise. Predicted trees keep the gold POS tags of their input
file (SuPar copies the preterminals of the tree it is given; the model reads only words and
characters, so the tags are neither used nor predicted: score brackets, not tags).

Model: SuPar's published LSTM configuration for ``ptb.crf.con.lstm.char`` (word embeddings
trained from scratch, min_freq 2, plus a character LSTM; 3-layer BiLSTM of 400, span MLP 500,
label MLP 100, dropout .33; Adam lr 2e-3, betas (.9, .9), eps 1e-12, decay .75 every 5000
steps; 5000-token batches; MBR decoding) but with NO pretrained embeddings (no GloVe offline).
Training keeps SuPar's best-dev checkpoint. ``--max-minutes`` stops it before an epoch that would
end past the budget (judged by the last epoch's time); the checkpoint kept is then the best dev
epoch so far, and the summary says ``"reduced": true``: a budget-stopped run (or one with
``--max-sentences``) is a reduced result, below what SuPar reaches when trained to convergence.

SuPar's own F1 (reported as ``supar_dev``/``supar_test``) is labelled span F1 over all sentences
(no length cutoff), with EVALB's COLLINS.prm deletions: labels ``TOP S1 -NONE- , : `` '' . ? !``
and the empty root label are not scored, punctuation words (by their gold tag) are not counted in
span positions, and ``ADVP`` equals ``PRT``. Score the written files with our EVALB scorer too.

Decoding speed: the best checkpoint loaded once, then the test file parsed three times (median):
``predict`` is SuPar's public ``predict`` (read the file, numericalise, decode, write);
``model`` is SuPar's batched decoding alone on an already numericalised dataset. Threads: the
``--threads`` torch intra-op and inter-op threads (run with ``OMP_NUM_THREADS`` equal to it).

SuPar does not go beside our own install: it pulls transformers, stanza and nltk, and SuPar 1.1.4
(the latest) calls ``torch.load`` without ``weights_only`` (refused by torch >= 2.6 for its
pickled fields; this script sets ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1``, its own files only). Use
a separate venv outside the repository, torch pinned to the CPU wheel first::

    python -m venv /work/supar-venv
    /work/supar-venv/bin/pip install torch==2.13.0+cpu    # the CPU wheel, before anything else
    echo torch==2.13.0+cpu > /tmp/c.txt
    /work/supar-venv/bin/pip install -c /tmp/c.txt supar==1.1.4 'conllu>=4.5'   # conllu: our reader
    OMP_NUM_THREADS=1 /work/supar-venv/bin/python bench/bench_const_peer.py \\
        --out /work/peer-out --max-minutes 60 --threads 1 > /work/peer-out/run.log 2>&1

Everything written goes under ``--out`` (data/, model, pred-*.mrg, summary.json); the JSON summary
is also the last line on stdout, SuPar's log on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

# SuPar 1.1.4's own torch.load calls predate torch's weights_only default (read at call time).
os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
os.environ.setdefault("TQDM_MININTERVAL", "60")  # SuPar's progress bars: keep the log short

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # our reader, when run with the venv's python from anywhere

from tagger import formats  # noqa: E402
from tagger.corpus.trees import Tree  # noqa: E402
from tagger.formats.mrg import TRACE, to_string  # noqa: E402

try:
    import supar
    import torch
    from supar import CRFConstituencyParser
    from supar.utils import Dataset
except ImportError as error:  # run with the wrong python
    sys.exit(f"bench_const_peer.py needs supar ({error}); install it in its own venv as the module docstring says")

DATA = REPO.parent / "shared" / "data" / "ptb-wsj-sample" / "combined"
#: split name -> first and last wsj file number
SPLIT = {"train": (1, 159), "dev": (160, 179), "test": (180, 199)}
#: SuPar's published LSTM training configuration (its ptb.crf.con.lstm.char config); model sizes
#: are the CRFConstituencyModel defaults (3 x 400 BiLSTM, char LSTM, span MLP 500, label MLP 100).
CONFIG = {"encoder": "lstm", "feat": ["char"], "embed": None, "n_embed": 100, "min_freq": 2, "fix_len": 20,
          "lr": 2e-3, "mu": 0.9, "nu": 0.9, "eps": 1e-12, "weight_decay": 0.0, "clip": 5.0,
          "decay": 0.75, "decay_steps": 5000, "batch_size": 5000, "buckets": 32, "patience": 100,
          "update_steps": 1, "mbr": True}


def normalise_label(label: str) -> str:
    """``NP-SBJ-1``/``NP=2``/``PRT|ADVP`` -> ``NP``/``NP``/``PRT``; ``-LRB-`` (a leading ``-``) as is."""
    if label.startswith("-"):
        return label
    for mark in "|=-":
        label = label.split(mark, 1)[0]
    return label


def normalise(tree: Tree) -> Tree | None:
    """``tree`` without empty elements, without constituents left empty, labels stripped;
    None when nothing is left."""
    if tree.is_preterminal:
        return None if tree.label == TRACE else Tree(normalise_label(tree.label), tree.children)
    children = tuple(kept for kept in (normalise(child) for child in tree.children if isinstance(child, Tree))
                     if kept is not None)
    return Tree(normalise_label(tree.label), children) if children else None


def rooted(tree: Tree, root: str) -> str:
    """One line: ``tree``'s children under ``root`` (``TOP`` for SuPar, ``""`` for ``( (S ...))``)."""
    return to_string(Tree(root, tree.children))


def read_split(data: Path, first: int, last: int, limit: int | None) -> list[Tree]:
    """The normalised trees of wsj_{first..last}.mrg in order (the first ``limit`` of them)."""
    trees: list[Tree] = []
    for number in range(first, last + 1):
        for sentence in formats.read(str(data / f"wsj_{number:04d}.mrg"), fmt="mrg"):
            tree = normalise(sentence.tree)
            if tree is not None:
                trees.append(tree)
    return trees[:limit]


def prepare(data: Path, out: Path, limit: int | None) -> dict[str, dict]:
    """Write ``out/data/{split}.top.pid`` (SuPar's input) and ``out/gold-{split}.mrg``
    (``( (S ...))`` root) for each split; their paths and sizes."""
    (out / "data").mkdir(parents=True, exist_ok=True)
    files: dict[str, dict] = {}
    for split, (first, last) in SPLIT.items():
        trees = read_split(data, first, last, limit)
        supar_file, gold_file = out / "data" / f"{split}.top.pid", out / f"gold-{split}.mrg"
        supar_file.write_text("".join(rooted(tree, "TOP") + "\n" for tree in trees))
        gold_file.write_text("".join(rooted(tree, "") + "\n" for tree in trees))
        files[split] = {"supar": str(supar_file), "gold": str(gold_file), "sentences": len(trees),
                        "words": sum(len(tree.leaves()) for tree in trees)}
    return files


class BudgetSpent(Exception):
    """Raised at the start of an epoch that would end past the training deadline."""


class TimedCRFConstituencyParser(CRFConstituencyParser):
    """SuPar's crf-con, unchanged but for a deadline checked before each training epoch: an epoch
    is not started when the previous one (train + SuPar's dev and test evaluation) took longer
    than the time left. SuPar saves the best-dev checkpoint between epochs, so stopping there
    loses nothing."""

    deadline = float("inf")

    def _train(self, loader):
        now = time.monotonic()
        if self.epoch_starts and now + (now - self.epoch_starts[-1]) > self.deadline:
            raise BudgetSpent
        self.epoch_starts.append(now)
        super()._train(loader)


def train(files: dict[str, dict], path: Path, max_minutes: float, max_epochs: int) -> dict:
    """Build and train crf-con into ``path`` (best dev epoch kept); what happened."""
    start = time.monotonic()
    parser = TimedCRFConstituencyParser.build(path=str(path), build=True, checkpoint=False,
                                                 train=files["train"]["supar"], **CONFIG)
    parser.deadline = start + 60 * max_minutes
    parser.epoch_starts = []
    stopped = False
    try:
        parser.train(train=files["train"]["supar"], dev=files["dev"]["supar"], test=files["test"]["supar"],
                     epochs=max_epochs, verbose=True, **CONFIG)
    except BudgetSpent:
        stopped = True
    minutes = (time.monotonic() - start) / 60
    starts = parser.epoch_starts
    epoch_minutes = [(b - a) / 60 for a, b in zip(starts, starts[1:])]
    return {"epochs": parser.epoch - 1, "best_epoch": parser.best_e, "stopped_by_budget": stopped,
            "train_minutes": round(minutes, 2), "epoch_minutes_median": round(statistics.median(epoch_minutes), 2)
            if epoch_minutes else None}


def supar_scores(parser: CRFConstituencyParser, file: str) -> dict:
    """SuPar's own evaluation of ``file`` (see the module docstring for what it leaves out)."""
    loss, metric = parser.evaluate(file, verbose=False, mbr=True)
    return {"lf": round(100 * metric.lf, 2), "lp": round(100 * metric.lp, 2), "lr": round(100 * metric.lr, 2),
            "uf": round(100 * metric.uf, 2), "lcm": round(100 * metric.lcm, 2), "loss": round(loss, 4)}


def write_pred(supar_pred: Path, gold: Path, pred: Path) -> None:
    """SuPar's ``(TOP ...)`` output rewritten with the ``( (S ...))`` root, checked word by word
    against ``gold``."""
    predicted = [s.tree for s in formats.read(str(supar_pred), fmt="mrg")]
    golds = [s.tree for s in formats.read(str(gold), fmt="mrg")]
    if len(predicted) != len(golds):
        raise SystemExit(f"{supar_pred}: {len(predicted)} trees for {len(golds)} gold trees")
    for number, (p, g) in enumerate(zip(predicted, golds), 1):
        if [w for _, w in p.leaves()] != [w for _, w in g.leaves()]:
            raise SystemExit(f"{supar_pred}: tree {number} has other words than {gold}")
    pred.write_text("".join(rooted(tree, "") + "\n" for tree in predicted))


def decode(parser: CRFConstituencyParser, files: dict[str, dict], out: Path, runs: int) -> dict:
    """Parse dev and test into ``out/pred-{split}.mrg``; time parsing the test file."""
    for split in ("dev", "test"):
        supar_pred = out / "data" / f"{split}.pred.top.pid"
        parser.predict(files[split]["supar"], pred=str(supar_pred), mbr=True, verbose=False)
        write_pred(supar_pred, Path(files[split]["gold"]), out / f"pred-{split}.mrg")
    test = files["test"]["supar"]
    whole = []
    for _ in range(runs):
        began = time.perf_counter()
        parser.predict(test, pred=str(out / "data" / "test.timed.top.pid"), mbr=True, verbose=False)
        whole.append(time.perf_counter() - began)
    parser.transform.eval()
    dataset = Dataset(parser.transform, test)
    dataset.build(5000, 8)  # SuPar's predict defaults: 5000-token batches, 8 buckets
    alone = []
    for _ in range(runs):
        began = time.perf_counter()
        parser._predict(dataset.loader)
        alone.append(time.perf_counter() - began)
    n, words = files["test"]["sentences"], files["test"]["words"]
    result = {"test_sentences": n, "test_words": words, "runs": runs}
    for name, seconds in (("predict", whole), ("model", alone)):
        median = statistics.median(seconds)
        result[name] = {"seconds": round(median, 3), "sentences_per_s": round(n / median, 1),
                        "words_per_s": round(words / median, 1)}
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="folder for data, model and predictions (not the repo)")
    parser.add_argument("--data", type=Path, default=DATA, help="folder of wsj_0001.mrg .. wsj_0199.mrg")
    parser.add_argument("--max-minutes", type=float, default=60.0, help="training budget (whole epochs)")
    parser.add_argument("--max-epochs", type=int, default=5000, help="SuPar's epochs (its default: 5000)")
    parser.add_argument("--max-sentences", type=int, default=None, help="first N trees of each split (smoke runs)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (set OMP_NUM_THREADS to match)")
    parser.add_argument("--runs", type=int, default=3, help="timed parses of the test file (median)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(args.threads)
    torch.manual_seed(1)

    args.out.mkdir(parents=True, exist_ok=True)
    files = prepare(args.data, args.out, args.max_sentences)
    model_path = args.out / "crf-con.model"
    training = train(files, model_path, args.max_minutes, args.max_epochs)

    best = CRFConstituencyParser.load(str(model_path))
    summary = {
        "bench": "const-peer", "parser": "supar crf-con (BiLSTM + char LSTM, no pretrained embeddings, MBR)",
        "data": str(args.data), "split": {s: {"sentences": f["sentences"], "words": f["words"]} for s, f in files.items()},
        **training,
        "reduced": training["stopped_by_budget"] or args.max_sentences is not None,
        "max_minutes": args.max_minutes, "max_sentences": args.max_sentences,
        "supar_dev": supar_scores(best, files["dev"]["supar"]),
        "supar_test": supar_scores(best, files["test"]["supar"]),
        "supar_metric": "labelled span F1, all sentences; deletes TOP S1 -NONE- , : `` '' . ? ! and the empty "
                        "label, punctuation (gold tag) not counted in positions, ADVP=PRT",
        "decode": decode(best, files, args.out, args.runs),
        "threads": args.threads, "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "supar": supar.__version__, "torch": torch.__version__, "python": platform.python_version(),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus",
        "config": CONFIG,
        "files": {"model": str(model_path),
                  **{f"gold_{s}": files[s]["gold"] for s in ("dev", "test")},
                  **{f"pred_{s}": str(args.out / f"pred-{s}.mrg") for s in ("dev", "test")}},
        "root": "( (S ...)) in gold_*/pred_* (SuPar's own files under data/ use (TOP ...))",
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
