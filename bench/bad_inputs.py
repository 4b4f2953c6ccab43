"""Issue 31's bad-input matrix: ``tagger`` run as a user runs it, on inputs it must refuse or survive.

Every case is a real ``tagger`` process (or a shell pipe around one) in a scratch folder, with
tiny models trained there first (a tagger, a CCG supertagger, a parser, a tokenizer and a
constituency parser; about a minute on one core). Each case is judged on:

- **traceback**: ``Traceback`` on stderr;
- **unclear**: a refusal that is not one ``error: ...`` line with a non-zero exit (notes and
  warnings before it are allowed), or an exit 2 (click's usage code) for a refusal that is not
  about the command line;
- **silently wrong**: a case that must be refused exits 0, or a case that must work does not, or
  its output check fails;
- **special file replaced**: the scratch folder's character devices (clones of /dev/null and
  /dev/full, made with ``mknod`` when running as root), FIFO and symlink are no longer what they
  were after the case ran. The system's own /dev files are never named as an output.

Usage::

    python bench/bad_inputs.py [--jobs 2] [--markdown table.md] [--keep DIR] [-k SUBSTRING]

It prints one row per group and the totals, and exits 1 if any count is not 0.
"""

from __future__ import annotations

import argparse
import gzip
import os
import pickle
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
EWT = SHARED / "ud-english-ewt"
WSJ = SHARED / "ptb-wsj-sample" / "combined"
PY = [sys.executable, "-m", "tagger"]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT), "COLUMNS": "200"}

TAGGER_SET = ["--set", "layers=2", "--set", "hidden=16", "--set", "word_dim=16", "--threads", "1", "--quiet"]
PARSER_SET = ["--threads", "1", "--quiet", "--set", "hidden=32", "--set", "word_dim=16", "--set", "tag_dim=16",
              "--set", "label_dim=16", "--set", "precompute=100"]
TOKENIZER_SET = ["--threads", "1", "--quiet", "--set", "hidden=32", "--set", "segment=48", "--set", "context=8",
                 "--set", "char_dim=16", "--set", "min_char_count=1", "--batch-size", "4", "--patience", "0"]
CONST_SET = ["--set", "layers=1", "--set", "hidden=32", "--set", "word_dim=16", "--set", "symbol_dim=16",
             "--set", "attention_dim=16", "--threads", "1", "--quiet"]


@dataclass
class Case:
    """One run: ``argv`` (a list: ``tagger ARGS``; a string: a bash pipeline, ``T`` for tagger)."""

    group: str
    name: str
    argv: list[str] | str
    expect: str = "error"  # "error": refused in one line; "ok": exit 0; "either": no traceback, no silence
    stdin: bytes | None = None
    check: Callable[["Outcome"], str | None] | None = None  # a reason it is wrong, or None
    usage: bool = False  # a refusal about the command line itself: exit 2 is right


@dataclass
class Outcome:
    case: Case
    code: int
    out: bytes
    err: str
    seconds: float
    problems: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------- scratch folder


def train(work: Path, name: str, *args: str) -> Path:
    out = work / name
    if out.exists():  # --keep DIR of an earlier run: its models are reused
        return out
    done = subprocess.run([*PY, "train", *args, "--out", str(out)], cwd=ROOT, env=ENV, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"could not train {name}: {done.stderr.strip()}")
    return out


def conllu(*rows: str) -> str:
    """A CoNLL-U sentence from 'ID FORM UPOS HEAD DEPREL' rows."""
    lines = []
    for row in rows:
        i, form, upos, head, rel = row.split()
        lines.append("\t".join([i, form, "_", upos, "_", "_", head, rel, "_", "_"]))
    return "\n".join(lines) + "\n\n"


GOOD = conllu("1 The DET 2 det", "2 cat NOUN 3 nsubj", "3 sat VERB 0 root", "4 . PUNCT 3 punct")
CYCLE = conllu("1 The DET 2 det", "2 cat NOUN 3 nsubj", "3 sat VERB 2 root", "4 . PUNCT 3 punct")
TWO_ROOTS = conllu("1 The DET 0 root", "2 cat NOUN 0 root", "3 sat VERB 2 dep")


def files(work: Path) -> None:
    """The bad (and a few good) input files every case reads."""
    text = {
        "good.conllu": GOOD * 3,
        "bad_id.conllu": GOOD + GOOD.replace("2\tcat", "x\tcat"),
        "bad_head.conllu": GOOD + GOOD.replace("\t3\tnsubj", "\t30\tnsubj"),
        "head_word.conllu": GOOD.replace("\t3\tnsubj", "\tthree\tnsubj"),
        "nine_cols.conllu": GOOD.replace("\t_\n", "\n", 1),
        "cycles.conllu": CYCLE * 4,
        "two_roots.conllu": TWO_ROOTS * 4,
        "comments_only.conllu": "# sent_id = 1\n# text = nothing\n",
        "empty.conllu": "",
        "crlf.conllu": GOOD.replace("\n", "\r\n"),
        "bom.conllu": "\ufeff" + GOOD,
        "crlf.txt": "The cat sat .\r\nA dog ran .\r\n",
        "emoji.txt": "I love 👩\u200d👩\u200d👧 and 🇫🇷 !\n",
        "plain.txt": "The cat sat on the mat .\nDogs bark .\n",
        "not_a_model.txt": "hello\n",
        "short.mrg": "( (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)) )\n",
        "xx.trees": "( (S (NP (XX The) (XX cat)) (VP (XX sat)) (XX .)) )\n",
        "columns.tsv": "The\tDET\nlong\tADJ\n\n",
        "bad.json": "{not json",
        "unknown_key.json": '{"no_such_key": 1}',
    }
    for name, body in text.items():
        (work / name).write_text(body, encoding="utf-8", newline="")
    (work / "latin1.conllu").write_bytes(GOOD.replace("cat", "caf\xe9").encode("latin-1"))
    (work / "binary.conllu").write_bytes(bytes(range(256)) * 8)
    (work / "long_line.txt").write_text(" ".join(["word"] * 300_000) + "\n", encoding="utf-8")
    (work / "conllu_dir").mkdir()
    (work / "conllu_dir" / "a.conllu").write_text(GOOD, encoding="utf-8")
    with gzip.open(work / "good.conllu.gz", "wt", encoding="utf-8") as f:
        f.write(GOOD)


class Evil:
    def __reduce__(self):
        return (os.system, ("touch EVIL_RAN",))


def bad_models(work: Path, tagger: Path) -> None:
    raw = tagger.read_bytes()
    (work / "truncated.model").write_bytes(raw[: len(raw) // 3])
    (work / "empty.model").write_bytes(b"")
    (work / "evil.model").write_bytes(pickle.dumps(Evil()))
    (work / "zip.model").write_bytes(b"PK\x03\x04" + b"\0" * 100)
    flipped = bytearray(raw)  # one byte of the largest tensor's data flipped: its zip checksum fails
    with zipfile.ZipFile(tagger) as archive:
        member = max((i for i in archive.infolist() if "/data/" in i.filename), key=lambda i: i.file_size)
    start = member.header_offset + 30 + int.from_bytes(raw[member.header_offset + 26 : member.header_offset + 28], "little")
    start += int.from_bytes(raw[member.header_offset + 28 : member.header_offset + 30], "little")
    flipped[start + member.file_size // 2] ^= 0xFF
    (work / "corrupt.model").write_bytes(bytes(flipped))


def specials(work: Path) -> dict[str, str]:
    """The special outputs: name -> what it must stay ('chr', 'fifo', 'link')."""
    kinds = {}
    if os.geteuid() == 0:
        os.mknod(work / "null_node", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        os.mknod(work / "full_node", stat.S_IFCHR | 0o666, os.makedev(1, 7))
        kinds.update(null_node="chr", full_node="chr")
    (work / "link_target.model").write_bytes(b"old")
    os.symlink("link_target.model", work / "link.model")
    kinds["link.model"] = "link"
    return kinds


def kind_of(path: Path) -> str:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    return "link" if stat.S_ISLNK(mode) else "chr" if stat.S_ISCHR(mode) else "fifo" if stat.S_ISFIFO(mode) else "file"


# ----------------------------------------------------------------------------- checks


def still(path: str, what: str) -> Callable[[Outcome], str | None]:
    return lambda o: None if Path(path).exists() and Path(path).read_text(errors="replace") == what else \
        f"{path} changed"


def stdout_has(*fragments: str) -> Callable[[Outcome], str | None]:
    def check(o: Outcome) -> str | None:
        text = o.out.decode("utf-8", "replace")
        missing = [f for f in fragments if f not in text]
        return f"stdout lacks {missing}" if missing else None
    return check


def err_has(*fragments: str) -> Callable[[Outcome], str | None]:
    def check(o: Outcome) -> str | None:
        missing = [f for f in fragments if f.lower() not in o.err.lower()]
        return f"stderr lacks {missing}" if missing else None
    return check


def longest_sentence(limit: int) -> Callable[[Outcome], str | None]:
    """CoNLL-U on stdout: no sentence over ``limit`` words."""
    def check(o: Outcome) -> str | None:
        longest = run_ = 0
        for line in o.out.decode("utf-8", "replace").splitlines():
            run_ = run_ + 1 if line and line[0].isdigit() else 0
            longest = max(longest, run_)
        return f"a sentence of {longest} words" if longest > limit else None
    return check


def both(*checks: Callable[[Outcome], str | None]) -> Callable[[Outcome], str | None]:
    return lambda o: next((r for r in (c(o) for c in checks) if r), None)


def is_model(path: str) -> Callable[[Outcome], str | None]:
    return lambda o: None if Path(path).stat().st_size > 1000 else f"{path} holds no model"


# ----------------------------------------------------------------------------- the cases


def cases(m: dict[str, str]) -> list[Case]:
    return writer_cases(m) + number_cases(m) + corpus_cases(m) + model_cases(m) + text_cases(m) + workflow_cases(m)


def writer_cases(m: dict[str, str]) -> list[Case]:
    tag, parse, tok = m["tagger"], m["parser"], m["tokenizer"]
    train = ["train", "--train", str(ROOT / "data/sample.conllu"), "--dev", str(ROOT / "data/heldout.conllu"),
             "--max-epochs", "1", *TAGGER_SET]
    out = [
        Case("writers", "train --out a symlink", [*train, "--out", "link.model"], "ok", check=is_model("link_target.model")),
        Case("writers", "train --out a folder", [*train, "--out", "conllu_dir"], usage=True),
        Case("writers", "train --max-epochs 0 onto a model", [*train, "--max-epochs", "0", "--out", "old.model"],
             check=still("old.model", "old model"), usage=True),
        Case("writers", "train --set max_epochs=-1 onto a model", [*train, "--set", "max_epochs=-1", "--out", "old.model"],
             check=still("old.model", "old model"), usage=True),
        Case("writers", "tag -o existing.conllu, malformed input", ["tag", "--model", tag, "bad_id.conllu", "-o", "old.conllu"],
             check=lambda o: None if Path("old.conllu").stat().st_size > 0 else "old.conllu truncated to 0 bytes"),
        Case("writers", "tag > /dev/full", f"T tag --model {tag} good.conllu > /dev/full"),
        Case("writers", "tag (tokenizer) > /dev/full", f"T tag --model {tok} plain.txt > /dev/full"),
        Case("writers", "convert > /dev/full", "T convert --to pos good.conllu > /dev/full"),
        Case("writers", "evaluate > /dev/full", "T evaluate --gold good.conllu --pred good.conllu > /dev/full"),
        Case("writers", "info > /dev/full", f"T info {tag} > /dev/full"),
        Case("writers", "convert -o a folder", ["convert", "--to", "pos", "good.conllu", "-o", "conllu_dir"], usage=True),
    ]
    if os.geteuid() == 0:
        out += [
            Case("writers", "train --out a /dev/null node", [*train, "--out", "null_node"], "ok"),
            Case("writers", "train --out a /dev/full node", [*train, "--out", "full_node"]),
            Case("writers", "ensemble --out a /dev/null node", ["ensemble", parse, parse, "--out", "null_node"], "ok"),
            Case("writers", "distill --out a /dev/null node",
                 ["distill", "--teacher", tag, "--train", str(ROOT / "data/sample.conllu"), "--dev",
                  str(ROOT / "data/heldout.conllu"), "--max-epochs", "1", "--out", "null_node", *TAGGER_SET], "ok"),
            Case("writers", "tag -o a /dev/full node", ["tag", "--model", tag, "good.conllu", "-o", "full_node"]),
            Case("writers", "convert -o a /dev/full node", ["convert", "--to", "pos", "good.conllu", "-o", "full_node"]),
        ]
    return out


SKIP_LSTM_BAD = ["lr=-1", "lr=0", "weight_decay=-1", "input_dropout=1.5", "hidden_dropout=-0.1", "label_smoothing=1.5",
                 "char_length=-1", "window=0", "window=2", "momentum=-1", "clip=-1", "rare_word_dropout=2",
                 "halve_threshold=-1", "min_lr=-1", "aux_weight=-1", "word_dim=-1", "patience=-1", "max_epochs=0",
                 "lr=abc", "no_such_key=1", "layers=0", "hidden=-4", "batch_size=0"]


def number_cases(m: dict[str, str]) -> list[Case]:
    train = ["train", "--train", str(ROOT / "data/sample.conllu"), "--dev", str(ROOT / "data/heldout.conllu"),
             "--out", "never.model", "--max-epochs", "1", "--quiet"]
    dep = [*train[:-3], "--task", "dep", "--max-epochs", "1", "--quiet"]
    out = [Case("numbers", f"train --set {kv}", [*train, "--set", kv], check=no_file("never.model"), usage=True)
           for kv in SKIP_LSTM_BAD]
    out += [Case("numbers", f"train --task dep --set {kv}", [*dep, "--set", kv], check=no_file("never.model"), usage=True)
            for kv in ["lr=-1", "hidden=0", "dropout=1.5", "max_epochs=-1"]]
    for opt, value in [("--threads", "-1"), ("--threads", "0"), ("--max-sentences", "-3"), ("--max-sentences", "0"),
                       ("--max-minutes", "0"), ("--max-minutes", "-1"), ("--batch-size", "0"), ("--patience", "-1")]:
        out.append(Case("numbers", f"train {opt} {value}", [*train, opt, value], check=no_file("never.model"), usage=True))
    out += [
        Case("numbers", "train --gates without --bootstrap", [*dep, "--arch", "lstm", "--gates", "input"], usage=True),
        Case("numbers", "train --config bad.json", [*train, "--config", "bad.json"], usage=True),
        Case("numbers", "train --config with an unknown key", [*train, "--config", "unknown_key.json"], usage=True),
        Case("numbers", "train --preset no-such", [*train, "--preset", "no-such"], usage=True),
        Case("numbers", "tag --threads -2", ["tag", "--model", m["tagger"], "--threads", "-2", "plain.txt"], usage=True),
        Case("numbers", "tag --chunk-size 0", ["tag", "--model", m["tagger"], "--chunk-size", "0", "plain.txt"], usage=True),
        Case("numbers", "api train(settings={'lr': -1})",
             ["python", "-c", "import tagger\nfrom tagger.errors import TaggerError\ntry:\n tagger.train(train="
              f"'{ROOT}/data/sample.conllu', out='never.model', settings={{'lr': -1}})\nexcept TaggerError as e:\n"
              " raise SystemExit(f'error: {e}')"], check=err_has("lr")),
    ]
    return out


def no_file(path: str) -> Callable[[Outcome], str | None]:
    return lambda o: f"{path} was written" if Path(path).exists() else None


def corpus_cases(m: dict[str, str]) -> list[Case]:
    tag, parse = m["tagger"], m["parser"]
    bad = ["bad_id.conllu", "bad_head.conllu", "nine_cols.conllu", "binary.conllu", "latin1.conllu"]
    out = [Case("corpora", f"tag {name}", ["tag", "--model", tag, name], check=err_has(name)) for name in bad]
    out += [Case("corpora", f"train on {name}", ["train", "--train", name, "--out", "never.model", "--max-epochs", "1",
                                                 *TAGGER_SET], check=both(err_has(name), no_file("never.model")))
            for name in [*bad, "empty.conllu", "comments_only.conllu"]]
    for name in bad:
        out += [
            Case("corpora", f"evaluate --gold good --pred {name}", ["evaluate", "--gold", "good.conllu", "--pred", name],
                 check=err_has(name)),
            Case("corpora", f"evaluate --gold {name} --pred good", ["evaluate", "--gold", name, "--pred", "good.conllu"],
                 check=err_has(name)),
            Case("corpora", f"evaluate --model on {name}", ["evaluate", "--model", tag, name], check=err_has(name)),
            Case("corpora", f"convert {name}", ["convert", "--to", "conllu", name], check=err_has(name)),
            Case("corpora", f"tag {name} with a parser", ["tag", "--model", parse, name], check=err_has(name)),
            Case("corpora", f"tag {name} through tagger and parser", ["tag", "--model", tag, "--model", parse, name],
                 check=err_has(name)),
            Case("corpora", f"train a parser on {name}", ["train", "--task", "dep", "--train", name, "--out", "never.model",
                                                         "--max-epochs", "1", *PARSER_SET], check=no_file("never.model")),
            Case("corpora", f"tag {name} --on-error skip", ["tag", "--model", tag, "--on-error", "skip", name], "either",
                 check=lambda o: None if o.code != 0 or "skip" in o.err.lower() or "line" in o.err.lower()
                 else "skipped without saying so"),
        ]
    out += [
        Case("corpora", "tag a parser: HEAD not a number", ["tag", "--model", parse, "head_word.conllu"],
             check=err_has("head_word.conllu")),
        Case("corpora", "train a parser on cycles only", ["train", "--task", "dep", "--train", "cycles.conllu",
                                                          "--out", "never.model", "--max-epochs", "1", *PARSER_SET],
             check=both(err_has("cycle"), no_file("never.model"))),
        Case("corpora", "train a parser on two-root trees only", ["train", "--task", "dep", "--train", "two_roots.conllu",
                                                                  "--out", "never.model", "--max-epochs", "1",
                                                                  *PARSER_SET], check=no_file("never.model")),
        Case("corpora", "evaluate --pred malformed", ["evaluate", "--gold", "good.conllu", "--pred", "bad_id.conllu"],
             check=err_has("bad_id.conllu")),
        Case("corpora", "evaluate --gold missing", ["evaluate", "--gold", "missing.conllu", "--pred", "good.conllu"],
             usage=True),
        Case("corpora", "convert malformed", ["convert", "--to", "pos", "bad_id.conllu"], check=err_has("bad_id.conllu")),
        Case("corpora", "tag a missing file", ["tag", "--model", tag, "missing.conllu"], usage=True),
        Case("corpora", "tag a gzipped corpus", ["tag", "--model", tag, "good.conllu.gz"], "either"),
    ]
    return out


def model_cases(m: dict[str, str]) -> list[Case]:
    out = []
    for name in ["truncated.model", "corrupt.model", "empty.model", "evil.model", "zip.model", "not_a_model.txt", "good.conllu",
                 "missing.model", "conllu_dir"]:
        evil_not_run = lambda o: "the pickle ran code" if Path("EVIL_RAN").exists() else None  # noqa: E731
        out.append(Case("models", f"tag --model {name}", ["tag", "--model", name, "plain.txt"], check=evil_not_run,
                        usage=name in ("missing.model", "conllu_dir")))
        out.append(Case("models", f"info {name}", ["info", name], check=evil_not_run,
                        usage=name in ("missing.model", "conllu_dir")))
    for name in ["truncated.model", "empty.model", "evil.model", "zip.model", "not_a_model.txt", "good.conllu"]:
        evil_not_run = lambda o: "the pickle ran code" if Path("EVIL_RAN").exists() else None  # noqa: E731
        sample = str(ROOT / "data/sample.conllu")
        out += [
            Case("models", f"evaluate --model {name}", ["evaluate", "--model", name, "good.conllu"], check=evil_not_run),
            Case("models", f"tag after a good model: {name}", ["tag", "--model", m["tagger"], "--model", name, "plain.txt"],
                 check=evil_not_run),
            Case("models", f"train --pos-model {name}", ["train", "--task", "dep", "--train", sample, "--pos-model", name,
                                                         "--out", "never.model", "--max-epochs", "1", *PARSER_SET],
                 check=both(evil_not_run, no_file("never.model"))),
            Case("models", f"ensemble with {name}", ["ensemble", m["parser"], name, "--out", "never.model"],
                 check=both(evil_not_run, no_file("never.model"))),
            Case("models", f"distill --teacher {name}", ["distill", "--teacher", name, "--train", sample, "--out",
                                                         "never.model", "--max-epochs", "1", *TAGGER_SET],
                 check=both(evil_not_run, no_file("never.model"))),
        ]
    out += [
        Case("models", "evaluate --model evil.model", ["evaluate", "--model", "evil.model", "good.conllu"]),
        Case("models", "ensemble of one parser", ["ensemble", m["parser"], "--out", "never.model"], usage=True),
        Case("models", "ensemble of a tagger", ["ensemble", m["tagger"], m["tagger"], "--out", "never.model"]),
        Case("models", "train --pos-model a CCG supertagger",
             ["train", "--task", "dep", "--train", str(ROOT / "data/sample.conllu"), "--pos-model", m["ccg"],
              "--out", "never.model", "--max-epochs", "1", *PARSER_SET], check=no_file("never.model")),
        Case("models", "tag a parser after a CCG supertagger", ["tag", "--model", m["ccg"], "--model", m["parser"],
                                                                "plain.txt"]),
    ]
    return out


def text_cases(m: dict[str, str]) -> list[Case]:
    tag, tok = m["tagger"], m["tokenizer"]
    return [
        Case("text", "tag CRLF CoNLL-U", ["tag", "--model", tag, "crlf.conllu"], "ok", check=stdout_has("cat")),
        Case("text", "tag CoNLL-U with a BOM", ["tag", "--model", tag, "bom.conllu"], "ok", check=stdout_has("The")),
        Case("text", "tag CRLF text", ["tag", "--model", tag, "crlf.txt"], "ok", check=stdout_has("dog")),
        Case("text", "tokenize emoji ZWJ and flags", ["tag", "--model", tok, "emoji.txt"], "ok",
             check=lambda o: None if all(f"\t{g}" in o.out.decode() or f"{g}\t" in o.out.decode() or
                                         g in o.out.decode().split("\t")
                                         for g in ("👩\u200d👩\u200d👧", "🇫🇷"))
             and not any(line.split("\t")[1:2] in (["\u200d"], ["🇫"]) for line in o.out.decode().splitlines())
             else "a grapheme cluster split"),
        Case("text", "tag one 300,000-word line", ["tag", "--model", tag, "long_line.txt"], "either",
             check=longest_sentence(10_000)),
        Case("text", "tokenize one 300,000-word line", ["tag", "--model", tok, "long_line.txt"], "either",
             check=longest_sentence(10_000)),
        Case("text", "convert one 300,000-word line", ["convert", "--to", "conllu", "long_line.txt"], "either",
             check=longest_sentence(10_000)),
        Case("text", "tag - reads stdin", ["tag", "--model", tag, "-"], "ok", stdin=b"The cat sat .\n",
             check=stdout_has("cat")),
        Case("text", "convert - reads stdin", ["convert", "--from", "conllu", "--to", "pos", "-"], "ok",
             stdin=GOOD.encode(), check=stdout_has("cat")),
        Case("text", "tag empty stdin", ["tag", "--model", tag], "ok", stdin=b""),
    ]


def workflow_cases(m: dict[str, str]) -> list[Case]:
    tag = m["tagger"]
    return [
        Case("workflows", "tag --format columns without --columns on CoNLL-U",
             ["tag", "--model", tag, "--format", "columns", "good.conllu"], usage=True),
        Case("workflows", "tag data/sample.tsv honours its header", ["tag", "--model", tag, str(ROOT / "data/sample.tsv")],
             "ok", check=stdout_has("1\tThe\t")),
        Case("workflows", "convert --to conllu a folder of .conllu", ["convert", "--to", "conllu", "conllu_dir"], "either",
             check=lambda o: "says '.txt'" if ".txt" in o.err else None),
        Case("workflows", "evaluate | head -1", "T evaluate --gold good.conllu --pred good.conllu | head -1", "ok"),
        Case("workflows", "tag | head -1", f"T tag --model {tag} {ROOT}/data/heldout.conllu | head -1", "ok"),
        Case("workflows", "const: XX preterminals against gold .mrg", ["evaluate", "--gold", "short.mrg", "--pred", "xx.trees"],
             "either", check=lambda o: None if o.code == 0 or any(w in o.err for w in ("XPOS", "preterminal", "tagger"))
             else "no cause or fix named"),
        Case("workflows", "const model on plain text, scored", f"T tag --model {m['const']} plain.txt > p.trees && "
             "printf '( (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)) )\\n"
             "( (S (NP (NNS Dogs)) (VP (VBP bark)) (. .)) )\\n' > g.mrg && T evaluate --gold g.mrg --pred p.trees", "ok"),
    ]


# ----------------------------------------------------------------------------- running and judging

MAX_RSS_MB = 2000  # any case above this broke "memory stays flat"


def prepare(fixtures: Path, case_dir: Path) -> dict[str, str]:
    """A case's own folder: the fixtures hard-linked, the files it may overwrite fresh, the specials."""
    case_dir.mkdir()
    for path in fixtures.iterdir():
        if path.is_file():
            os.link(path, case_dir / path.name)
    (case_dir / "conllu_dir").mkdir()
    (case_dir / "conllu_dir" / "a.conllu").write_text(GOOD, encoding="utf-8")
    (case_dir / "old.model").write_text("old model")
    (case_dir / "old.conllu").write_text(GOOD)
    return specials(case_dir)


def run_case(case: Case, case_dir: Path, kinds: dict[str, str]) -> Outcome:
    if isinstance(case.argv, str):
        tagger = " ".join(PY)
        command = re.sub(r"(^|\| |&& |; )T ", lambda m: m.group(1) + tagger + " ", case.argv)  # T: tagger
        argv = ["bash", "-c", "set -o pipefail; " + command]
    elif case.argv[0] == "python":
        argv = [sys.executable, *case.argv[1:]]
    else:
        argv = [*PY, *case.argv]
    (case_dir / ".stdin").write_bytes(case.stdin or b"")
    start = time.perf_counter()
    with open(case_dir / ".stdin", "rb") as i, open(case_dir / ".stdout", "wb") as o, open(case_dir / ".stderr", "wb") as e:
        proc = subprocess.Popen(argv, stdin=i if case.stdin is not None else subprocess.DEVNULL, stdout=o, stderr=e,
                                cwd=case_dir, env=ENV)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    outcome = Outcome(case, proc.returncode, (case_dir / ".stdout").read_bytes(),
                      (case_dir / ".stderr").read_text(errors="replace"), time.perf_counter() - start)
    judge(outcome, case_dir, kinds, usage.ru_maxrss / 1024)
    return outcome


def judge(o: Outcome, case_dir: Path, kinds: dict[str, str], rss_mb: float) -> None:
    case = o.case
    if "Traceback" in o.err:
        o.problems.append("traceback")
    errors = [line for line in o.err.splitlines() if line.startswith("error:") or line.startswith("Error:")]
    if case.expect == "error" or (case.expect == "either" and o.code != 0):
        if o.code == 0:
            o.problems.append("silently wrong: accepted")
        elif len(errors) != 1 and "Traceback" not in o.err:
            o.problems.append(f"unclear: {len(errors)} error lines")
        elif o.code == 2 and not case.usage:
            o.problems.append("unclear: exit 2 (usage) for a refusal of content")
    elif case.expect == "ok" and o.code != 0:
        o.problems.append(f"silently wrong: exit {o.code}")
    if case.check is not None and "Traceback" not in o.err:
        cwd = os.getcwd()
        os.chdir(case_dir)
        try:
            reason = case.check(o)
        finally:
            os.chdir(cwd)
        if reason:
            o.problems.append(f"silently wrong: {reason}")
    for name, kind in kinds.items():
        if kind_of(case_dir / name) != kind:
            o.problems.append(f"special file replaced: {name} is now a {kind_of(case_dir / name)}")
    if rss_mb > MAX_RSS_MB:
        o.problems.append(f"memory: {rss_mb:.0f} MB")


def build(work: Path) -> dict[str, str]:
    """The fixtures and the tiny models (in ``work``); returns the models' paths."""
    sample, heldout = str(ROOT / "data/sample.conllu"), str(ROOT / "data/heldout.conllu")
    models = {
        "tagger": train(work, "pos.tagger", "--train", sample, "--dev", heldout, "--max-epochs", "3", *TAGGER_SET),
        "ccg": train(work, "ccg.tagger", "--task", "ccg", "--train", str(ROOT / "data/sample.auto"), "--max-epochs", "2", "--set", "rare_tag_count=1",
                     *TAGGER_SET),
        "parser": train(work, "dep.model", "--task", "dep", "--train", sample, "--dev", heldout, "--max-epochs", "2",
                        *PARSER_SET),
        "tokenizer": train(work, "tok.model", "--task", "tokenize", "--train", str(ROOT / "data/tokenize-fr.conllu"),
                           "--max-epochs", "2", *TOKENIZER_SET),
        "const": train(work, "const.model", "--task", "const", "--train", str(WSJ / "wsj_0003.mrg"), "--dev",
                       str(WSJ / "wsj_0004.mrg"), "--max-epochs", "1", *CONST_SET),
    }
    fixtures = work / "fixtures"
    shutil.rmtree(fixtures, ignore_errors=True)
    fixtures.mkdir()
    files(fixtures)
    bad_models(fixtures, models["tagger"])
    return {name: str(path) for name, path in models.items()}


def table(outcomes: list[Outcome]) -> str:
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[o.case.group].append(o)
    kinds = ["traceback", "unclear", "silently wrong", "special file replaced", "memory"]
    rows = ["| group | cases | " + " | ".join(kinds) + " |", "|---|---|" + "---|" * len(kinds)]
    for group, items in [*groups.items(), ("**total**", outcomes)]:
        counts = [sum(any(p.startswith(k) for p in o.problems) for o in items) for k in kinds]
        rows.append(f"| {group} | {len(items)} | " + " | ".join(map(str, counts)) + " |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--markdown", help="also write the table here")
    parser.add_argument("--keep", help="work in this folder and keep it (default: a temporary one, removed)")
    parser.add_argument("-k", dest="select", help="only the cases whose name holds this")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="tagger-bad-inputs-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        started = time.perf_counter()
        models = build(work)
        print(f"models trained in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        todo = [c for c in cases(models) if not args.select or args.select in c.name]
        lock = threading.Lock()

        def one(index_case: tuple[int, Case]) -> Outcome:
            index, case = index_case
            case_dir = work / f"case{index:03d}"
            shutil.rmtree(case_dir, ignore_errors=True)
            kinds = prepare(work / "fixtures", case_dir)
            outcome = run_case(case, case_dir, kinds)
            with lock:
                mark = "ok " if not outcome.problems else "BAD"
                first = next((line for line in outcome.err.splitlines() if line.strip()), "")[:110]
                print(f"{mark} [{outcome.code}] {case.group}: {case.name}: {'; '.join(outcome.problems) or first}",
                      file=sys.stderr)
            return outcome

        with ThreadPoolExecutor(args.jobs) as pool:
            outcomes = list(pool.map(one, enumerate(todo)))
        text = table(outcomes)
        print(text)
        print(f"{len(outcomes)} cases in {time.perf_counter() - started:.0f} s")
        if args.markdown:
            Path(args.markdown).write_text(text + "\n", encoding="utf-8")
        return 1 if any(o.problems for o in outcomes) else 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
