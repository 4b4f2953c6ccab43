"""One fast parser taught by a slow one (issue 34's one-parser LAS): self-training on text no one
annotated, parsed by a stronger teacher.

1. The unlabeled text: the sentences of ``--unlabeled`` (any corpus ``tagger`` reads; default the
   PTB WSJ sample's tagged files, 3,896 sentences), its words only, PTB's bracket and quote
   tokens written as the characters UD writes (``-LRB-`` as ``(``, ```` `` ```` as ``"``) and
   PTB's empty elements (``-NONE-``) left out: ``OUT/unlabeled.conllu``.
2. The teacher (``--teacher``: a model file, e.g. a pipeline with a pretrained transformer
   under its tagger and parsers) parses it: ``OUT/train/teacher.conllu``, beside a link to the
   gold training file (``--train``).
3. The student: ``tagger train --task dep`` on that folder (gold and teacher trees) with the
   given arguments after ``--``, e.g. the shipped model's parser recipe: ``--preset bilstm-words
   --encoder-from TAGGER --embeddings glove-6b-50d --max-minutes 60 --seed 1``.
4. Scored as users run it: ``--tagger`` then the student on the gold-tokenised test file (columns
   3-9 blanked), the official CoNLL 2018 scorer; one JSON line.

Steps whose output is there are reused.

    python bench/self_train_parser.py --out-dir st --teacher minilm-ens3-pipe.model --tagger en-tagger.model \\
        -- --preset bilstm-words --encoder-from en-tagger.model --embeddings glove-6b-50d --max-minutes 60 --seed 1 --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench_pipeline import DATA, SCORER, blank  # bench/ is this script's folder
from bench_tokenizer import official

SHARED = DATA.parents[1]
#: PTB tokens that UD writes as characters.
PTB_TOKENS = {"-LRB-": "(", "-RRB-": ")", "-LCB-": "{", "-RCB-": "}", "-LSB-": "[", "-RSB-": "]", "``": '"', "''": '"'}


def unlabeled(source: str, out: Path) -> int:
    """Write the words of ``source``'s sentences as CoNLL-U (every other column ``_``); their number."""
    from tagger.formats import read_corpus

    blocks = []
    for sentence in read_corpus(source):
        tags = sentence.columns.get("xpos") or [None] * len(sentence)
        words = [PTB_TOKENS.get(word, word) for word, tag in zip(sentence.words, tags) if tag != "-NONE-"]
        if words:
            rows = "".join(f"{i}\t{word}\t_\t_\t_\t_\t_\t_\t_\t_\n" for i, word in enumerate(words, 1))
            blocks.append(f"# sent_id = unlabeled-{len(blocks) + 1}\n{rows}")
    out.write_text("\n".join(blocks) + "\n", encoding="utf-8")
    return len(blocks)


def run(command: list[str], stdout: Path | None = None) -> float:
    start = time.perf_counter()
    with open(stdout, "wb") if stdout else open(os.devnull, "wb") as sink:
        done = subprocess.run(command, stdout=sink)
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}")
    return round(time.perf_counter() - start, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--teacher", required=True, help="the model file that parses the unlabeled text")
    parser.add_argument("--tagger", required=True, help="the tagger before the student when it is scored")
    parser.add_argument("--unlabeled", default=str(SHARED / "data" / "ptb-wsj-sample" / "tagged"))
    parser.add_argument("--train", default=str(DATA / "en_ewt-ud-train.conllu"))
    parser.add_argument("--dev", default=str(DATA / "en_ewt-ud-dev.conllu"))
    parser.add_argument("--test", default=str(DATA / "en_ewt-ud-test.conllu"))
    parser.add_argument("student", nargs=argparse.REMAINDER, help="-- then tagger train's arguments for the student")
    args = parser.parse_args()
    out = Path(args.out_dir).resolve()
    (out / "train").mkdir(parents=True, exist_ok=True)
    record: dict = {"teacher": args.teacher, "unlabeled": args.unlabeled}
    words = out / "unlabeled.conllu"
    if not words.exists():
        record["unlabeled_sentences"] = unlabeled(args.unlabeled, words)
    taught = out / "train" / "teacher.conllu"
    if not taught.exists():
        record["teacher_seconds"] = run([sys.executable, "-m", "tagger", "tag", "--quiet", "--model", args.teacher,
                                         str(words)], taught)
    gold = out / "train" / Path(args.train).name
    if not gold.exists():
        gold.symlink_to(Path(args.train).resolve())
    student = out / "student.model"
    if not student.exists():
        extra = [a for a in args.student if a != "--"]
        record["student_seconds"] = run([sys.executable, "-m", "tagger", "train", "--task", "dep", "--train",
                                         str(out / "train"), "--dev", args.dev, "--out", str(student), *extra])
    test = Path(args.test)
    blanked = out / "test.blank.conllu"
    blanked.write_text(blank(test.read_text(encoding="utf-8")), encoding="utf-8")
    predicted = out / "test.pred.conllu"
    run([sys.executable, "-m", "tagger", "tag", "--quiet", "--threads", "1", "--model", args.tagger, "--model",
         str(student), str(blanked)], predicted)
    scores = official(test, predicted)
    record["test (gold tokens, official scorer)"] = {k: scores[k] for k in ("UPOS", "XPOS", "UFeats", "UAS", "LAS")}
    print(json.dumps(record))


if __name__ == "__main__":
    assert SCORER.exists(), SCORER
    main()
