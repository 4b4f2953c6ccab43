"""The README's quick start, as a newcomer runs it: the first command tags raw text with the
shipped model (tests/test_default_model.py runs it); the second trains on the EWT excerpts in
data/, tags, and scores test sentences that the model never saw (an honest score)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.helpers import invoke

ROOT = Path(__file__).resolve().parents[1]


def readme_command(needle: str) -> str:
    """The README's first indented command line holding ``needle``."""
    return next(l.strip() for l in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
                if l.startswith("    ") and needle in l)


def quickstart_commands() -> list[list[str]]:
    """The `tagger ...` steps of the README's train/tag/evaluate command line."""
    steps = [shlex.split(step.strip()) for step in readme_command("tagger train").split("&&")]
    return [step for step in steps if step[0] == "tagger"]


def test_the_first_command_installs_then_tags_raw_text_with_the_shipped_model():
    first = next(l.strip() for l in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
                 if l.startswith("    pip install"))
    steps = [step.strip() for step in first.split("&&")]
    assert steps[:2] == ["pip install torch==2.13.0", "pip install -e ."]
    assert steps[2].startswith("echo ") and steps[2].endswith("| tagger tag")  # no --model: the shipped one


def test_the_ewt_excerpts_are_disjoint_small_and_attributed():
    texts = {name: set(re.findall(r"^# text = (.*)$", (ROOT / f"data/ewt-{name}.conllu").read_text(), re.M))
             for name in ("train", "dev", "test")}
    assert [len(texts[n]) for n in ("train", "dev", "test")] >= [490, 100, 200]
    # EWT repeats a few short lines across its splits ("Thank you.", an e-mail footer); nothing more
    assert len(texts["test"] & (texts["train"] | texts["dev"])) <= 0.03 * len(texts["test"])
    assert sum(f.stat().st_size for f in (ROOT / "data").iterdir()) < 2**20  # data/ stays under 1 MB
    notice = (ROOT / "data/README.md").read_text(encoding="utf-8")
    assert "CC BY-SA 4.0" in notice and "Stanford" in notice and "ewt-train.conllu" in notice


def sentences(path: Path) -> set[str]:
    return {" ".join(line.split()) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def test_heldout_sample_shares_no_sentence_with_the_training_sample():
    train = {" ".join(m.group(1).split()) for m in re.finditer(r"^# text = (.*)$", (ROOT / "data/sample.conllu").read_text(), re.M)}
    held = {m.group(1) for m in re.finditer(r"^# text = (.*)$", (ROOT / "data/heldout.conllu").read_text(), re.M)}
    assert len(held) == 12 and not train & held
    assert not sentences(ROOT / "data/sample.txt") & sentences(ROOT / "data/heldout.txt")


@pytest.mark.slow
def test_readme_quickstart_scores_held_out_text(tmp_path):
    """The README's steps with its own arguments (training capped at 4 epochs here), through the
    CLI in this process (click's runner; real processes of ``tagger tag`` and ``evaluate`` are
    tested in test_cli_*)."""
    commands = quickstart_commands()
    assert [c[1] for c in commands] == ["train", "tag", "evaluate"]
    assert "data/ewt-train.conllu" in commands[0] and "data/ewt-test.conllu" in commands[2]
    outputs = []
    for command in commands:
        args = [a if not a.endswith(".tagger") else str(tmp_path / a) for a in command[1:]]
        if args[0] == "train":
            args += ["--max-epochs", "4", "--threads", "1"]
        stdin = None
        if "<" in args:  # shell redirection: the file goes to stdin
            at = args.index("<")
            stdin, args = (ROOT / args[at + 1]).read_bytes(), args[:at] + args[at + 2:]
        done = invoke(*args, stdin=stdin)
        assert done.exit_code == 0, (done.stderr, done.exception)
        outputs.append(done.stdout)
    tagged = [line.split("\t") for line in outputs[1].splitlines() if line and not line.startswith("#")]
    assert len(tagged) == 81 and all(row[3] != "_" for row in tagged)  # every held-out word tagged
    accuracy = float(re.search(r"token accuracy\s*│\s*([\d.]+)", outputs[2]).group(1))
    assert 60 < accuracy < 95  # four epochs on 500 sentences: a real score on unseen ones, not 100
