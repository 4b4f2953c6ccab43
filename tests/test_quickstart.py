"""The README's first command, as a newcomer runs it: train on the samples, tag and score
held-out sentences that the model never saw (an honest score, not the training data's)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.helpers import invoke

ROOT = Path(__file__).resolve().parents[1]


def quickstart_commands() -> list[list[str]]:
    """The `tagger ...` steps of the README's first indented command line (after the installs)."""
    line = next(l.strip() for l in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
                if l.startswith("    pip install") and "tagger train" in l)
    steps = [shlex.split(step.strip()) for step in line.split("&&")]
    return [step for step in steps if step[0] == "tagger"]


def sentences(path: Path) -> set[str]:
    return {" ".join(line.split()) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def test_heldout_sample_shares_no_sentence_with_the_training_sample():
    train = {" ".join(m.group(1).split()) for m in re.finditer(r"^# text = (.*)$", (ROOT / "data/sample.conllu").read_text(), re.M)}
    held = {m.group(1) for m in re.finditer(r"^# text = (.*)$", (ROOT / "data/heldout.conllu").read_text(), re.M)}
    assert len(held) == 12 and not train & held
    assert not sentences(ROOT / "data/sample.txt") & sentences(ROOT / "data/heldout.txt")


@pytest.mark.slow
def test_readme_quickstart_scores_held_out_text(tmp_path):
    """The README's steps with its own arguments, through the CLI in this process (click's runner;
    real processes of ``tagger tag`` and ``evaluate`` are tested in test_cli_*)."""
    commands = quickstart_commands()
    assert [c[1] for c in commands] == ["train", "tag", "evaluate"]
    assert "data/heldout.conllu" in commands[0] and "data/heldout.conllu" in commands[2]
    outputs = []
    for command in commands:
        args = [a if not a.endswith(".tagger") else str(tmp_path / a) for a in command[1:]]
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
    assert 20 < accuracy < 90  # an honest score on unseen sentences: neither 100 nor noise
