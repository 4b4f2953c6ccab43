"""What a user sees must be right (issue 14): one unit and one name for the same thing in every
command, files written like any other file, plain errors, and output that says what happened."""

from __future__ import annotations

import json
import os
import re
import stat
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from tagger import model_file
from tagger.formats import read_corpus
from tagger.cli.main import cli
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError

ROOT = Path(__file__).resolve().parents[1]
SAMPLE, HELDOUT = str(ROOT / "data" / "sample.conllu"), str(ROOT / "data" / "heldout.conllu")
TINY = ["--max-epochs", "1", "--set", "hidden=16", "--set", "layers=1", "--set", "word_dim=16", "--threads", "1"]


def invoke(*args: str, stdin: str | None = None):
    """The CLI in this process, as a user runs it (stdout and stderr are not terminals)."""
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


def one_line_error(result, *fragments: str) -> str:
    assert result.exit_code != 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def train(out: Path, *extra: str):
    result = invoke("train", "--task", "pos", "--train", SAMPLE, "--out", str(out), *TINY, *extra)
    assert result.exit_code == 0, result.output
    return result


@contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(scope="module")
def tagger_model(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("models") / "pos.tagger"
    train(out, "--dev", HELDOUT, "--json")
    return out


# 9. --dev is optional: a deterministic, spread-out slice of the training data is held out.

def toy(n: int) -> list[Sentence]:
    return [Sentence([f"w{i}"], {"upos": ["X"]}, "t.conllu", i + 1) for i in range(n)]


def test_hold_out_takes_every_20th_sentence_and_never_trains_on_it():
    from tagger.training.run import hold_out

    train_part, dev = hold_out(toy(45))
    assert [s.line for s in dev] == [20, 40]
    assert len(train_part) == 43 and not {s.line for s in dev} & {s.line for s in train_part}
    assert hold_out(toy(45)) == (train_part, dev)  # the same on every run
    train_part, dev = hold_out(toy(8))  # fewer than 20: still one dev sentence
    assert [s.line for s in dev] == [8] and len(train_part) == 7
    with pytest.raises(TaggerError, match="give --dev"):
        hold_out(toy(1))


def test_train_without_dev_holds_out_part_of_train_and_says_so(tmp_path):
    out = tmp_path / "m.tagger"
    result = train(out, "--json")
    summary = json.loads(result.stdout)
    assert summary["dev_held_out"] and summary["dev_sentences"] == 1 and summary["train_sentences"] == 7
    meta = model_file.read_archive(out)["meta"]
    assert meta["dev_sentences"] == 1 and meta["train_sentences"] == 7 and "not trained on" in meta["dev"]
    lines = train(tmp_path / "n.tagger").stderr.splitlines()
    assert "on 1 held-out training sentence" in lines[-1]
    # the first line says what the run trains and selects on, the model's size, where it runs
    words = [len(s) for s in read_corpus(SAMPLE)]
    held = words[19::20] or words[-1:]
    lines = [line for line in lines if line.startswith("training on ")]
    assert lines[0].startswith(f"training on 7 sentences ({sum(words) - sum(held):,} words), "
                               f"dev 1 held-out training sentence ({sum(held):,} word")
    assert re.search(r"; [\d,]+ trainable weights; cpu, \d+ threads?$", lines[0]), lines[0]
    assert "every 20th sentence" in invoke("train", "--help").output


def test_dev_same_as_train_warns(tmp_path):
    result = train(tmp_path / "m.tagger", "--dev", SAMPLE, "--quiet")
    assert any(line.startswith("warning: --dev is the --train data") for line in result.stderr.splitlines())


# 12. --device: one line naming the valid devices, from tagger.devices.

def test_resolve_device_refuses_unknown_names_in_one_line():
    from tagger.devices import resolve_device

    assert resolve_device("cpu") == "cpu" and resolve_device("auto") in ("cpu", "cuda")
    with pytest.raises(TaggerError, match=r"--device gpu: not a device name; use one of auto, cpu, cuda, cuda:N"):
        resolve_device("gpu")
    if not torch.backends.mps.is_built():
        with pytest.raises(TaggerError, match="no MPS"):
            resolve_device("mps")
    if not torch.cuda.is_available():
        with pytest.raises(TaggerError, match="no CUDA device"):
            resolve_device("cuda:1")


def test_bad_device_is_one_line_in_every_command(tagger_model, tmp_path):
    one_line_error(invoke("tag", "--model", str(tagger_model), "--device", "gpu", stdin="a b\n"), "cpu, cuda")
    one_line_error(invoke("evaluate", "--model", str(tagger_model), HELDOUT, "--device", "gpu"), "cpu, cuda")
    one_line_error(invoke("train", "--train", SAMPLE, "--out", str(tmp_path / "m"), "--device", "gpu"), "cpu, cuda")


# 14. A file that is not a model says so; "could run code" only for real foreign pickles.

def test_text_file_given_as_model_is_not_a_model_file(tmp_path):
    with pytest.raises(TaggerError) as caught:
        model_file.read_archive(SAMPLE)
    assert "not a tagger model file" in str(caught.value) and "run code" not in str(caught.value)
    empty = tmp_path / "empty.tagger"
    empty.write_bytes(b"")
    with pytest.raises(TaggerError, match="not a tagger model file"):
        model_file.read_archive(empty)
    line = one_line_error(invoke("info", SAMPLE), "not a tagger model file")
    assert "run code" not in line


def test_pickle_with_foreign_globals_is_refused_as_code(tmp_path):
    path = tmp_path / "evil.tagger"
    torch.save({"format_version": 1, "state_dict": {}, "payload": os.getcwd}, path)
    with pytest.raises(TaggerError, match="could run code"):
        model_file.read_archive(path)


# 15. Model files and `tag -o` output honour the umask.

def test_model_file_honours_umask_and_keeps_an_existing_files_mode(tmp_path):
    path = tmp_path / "m.bin"
    with umask(0o022):
        model_file.atomic_save({"x": 1}, path)
    assert mode(path) == 0o644
    with umask(0o077):
        model_file.atomic_save({"x": 1}, tmp_path / "private.bin")
        model_file.atomic_save({"x": 2}, path)  # rewriting keeps the file's mode, as open() does
    assert mode(tmp_path / "private.bin") == 0o600 and mode(path) == 0o644


def test_trained_model_and_tag_output_honour_umask(tagger_model, tmp_path):
    with umask(0o022):
        assert mode(tagger_model) == 0o644 or pytest.fail(oct(mode(tagger_model)))
        out = tmp_path / "tagged.conllu"
        assert invoke("tag", "--model", str(tagger_model), "-o", str(out), stdin="a b\n").exit_code == 0
    assert mode(out) == 0o644


# 16. Every command that writes a file creates its missing parent folders, and says so.

def test_tag_output_creates_missing_folders(tagger_model, tmp_path):
    out = tmp_path / "new" / "deeper" / "tagged.conllu"
    result = invoke("tag", "--model", str(tagger_model), "-o", str(out), stdin="a b\n")
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("1\ta\t")
    blocked = tmp_path / "file"
    blocked.write_text("")
    one_line_error(invoke("tag", "--model", str(tagger_model), "-o", str(blocked / "x"), stdin="a b\n"), "not a folder")


def test_help_says_missing_folders_are_created():
    for command, option in (("tag", "-o"), ("train", "--out"), ("convert", "-o")):
        text = " ".join(invoke(command, "--help").output.split())
        assert "parent folders are created" in text, (command, option)


# 17. Scores in percent everywhere, with the metric's name beside them.

def test_train_json_and_info_give_percent_with_metric_name(tmp_path):
    out = tmp_path / "m.tagger"
    summary = json.loads(train(out, "--dev", HELDOUT, "--max-epochs", "2", "--json").stdout)
    stored = model_file.read_archive(out)["meta"]["dev_score"]  # files store fractions
    assert summary["dev_metric"] == "accuracy" and summary["best_dev"] == pytest.approx(100 * stored)
    assert summary["best_dev"] > 1  # 22/81 = 27.16, not 0.2716
    info = json.loads(invoke("info", str(out), "--json").stdout)
    assert info["meta"]["dev_score"] == pytest.approx(summary["best_dev"]) and info["meta"]["dev_metric"] == "accuracy"
    assert all(r["dev"] > 1 and r["metric"] == "accuracy" for r in info["history"] if r["dev"] > 0.01)


def test_info_history_marks_the_saved_epoch_as_best(tmp_path):
    out = tmp_path / "m.tagger"
    train(out, "--dev", HELDOUT, "--max-epochs", "3")
    saved = model_file.read_archive(out)["meta"]
    assert [r["epoch"] for r in saved["history"] if r.get("best")] == [saved["epoch"]]  # the file itself
    info = json.loads(invoke("info", str(out), "--json").stdout)
    assert [r["epoch"] for r in info["history"] if r.get("best")] == [info["meta"]["epoch"]]


def test_info_marks_the_saved_epoch_of_files_written_before_it_was_marked(tmp_path):
    from tagger.cli.info import describe

    old = {"format_version": 1, "tagger_version": "0.1.0", "name": "transition_parser", "config": {}, "vocabs": {},
           "state_dict": {"w": torch.zeros(2)},
           "meta": {"task": "dep", "dev_score": 0.6, "epoch": 2,
                    "history": [{"epoch": 1, "dev": 0.5, "best": True}, {"epoch": 2, "dev": 0.6}]}}
    path = tmp_path / "old.model"
    torch.save(old, path)
    assert [r.get("best", False) for r in describe(str(path))["history"]] == [False, True]


def test_old_model_files_show_their_fraction_scores_in_percent(tmp_path):
    from tagger.cli.info import describe

    old = {"format_version": 1, "tagger_version": "0.1.0", "name": "transition_parser", "config": {}, "vocabs": {},
           "state_dict": {"w": torch.zeros(2)},
           "meta": {"task": "dep", "dev_score": 0.937, "history": [{"epoch": 1, "dev": 0.5}],
                    "train": "/a-long-folder" * 10 + "/train.conllu"}}
    path = tmp_path / "old.model"
    torch.save(old, path)
    info = describe(str(path))
    assert info["meta"]["dev_score"] == pytest.approx(93.7) and info["meta"]["dev_metric"] == "LAS (no punct)"
    assert info["history"][0]["dev"] == pytest.approx(50.0)
    table = invoke("info", str(path)).stdout
    assert "93.70 %" in table and "LAS (no punct)" in table
    assert "/a-long-folder" * 10 + "/train.conllu" in table  # not wrapped at 80 columns when piped


# 18. The same option has the same name in every command.

def test_format_is_the_input_format_option_everywhere(tagger_model):
    tagged = invoke("tag", "--model", str(tagger_model), "--format", "text", stdin="a b\n")
    assert tagged.exit_code == 0 and tagged.stdout.startswith("1\ta\t")
    old = invoke("tag", "--model", str(tagger_model), "--input-format", "text", stdin="a b\n")  # hidden alias
    assert old.exit_code == 0 and old.stdout == tagged.stdout
    assert invoke("tag", "--model", str(tagger_model), "-f", "text", stdin="a b\n").stdout == tagged.stdout
    for command in ("train", "tag", "evaluate"):
        text = invoke(command, "--help").output
        assert "-f, --format" in text and "--input-format" not in text, command


def test_evaluate_column_is_free_text_checked_against_the_data(tmp_path):
    data = tmp_path / "d.tsv"
    data.write_text("a\tX\nb\tY\n\n")
    result = invoke("evaluate", "--gold", str(data), "--pred", str(data), "--format", "columns",
                    "--columns", "form=1,pos=2", "--column", "pos", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tagging"]["accuracy"] == 100.0
    one_line_error(invoke("evaluate", "--gold", SAMPLE, "--pred", SAMPLE, "--column", "bogus"),
                   "no 'bogus' column", "upos")


def test_evaluate_column_with_a_model_must_be_what_it_predicts(tagger_model):
    one_line_error(invoke("evaluate", "--model", str(tagger_model), HELDOUT, "--column", "xpos"), "predicts upos")


# 19. --quiet, no wrapped lines, plurals, the resume line, --top 0.

def test_quiet_prints_only_the_summary_line_unwrapped(tmp_path):
    out = tmp_path / ("a-rather-long-folder-name-" * 4) / "model.tagger"
    result = train(out, "--dev", HELDOUT, "--quiet")
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("best dev accuracy ") and lines[0].endswith(f"model written to {out}")
    assert re.search(r" 1 epoch \(\d+ updates?\) in ", lines[0])  # not "1 epochs"
    short = train(tmp_path / "q.tagger", "--dev", HELDOUT, "-q")  # -q, as tagger tag's
    assert len(short.stderr.splitlines()) == 1 and short.stderr.startswith("best dev accuracy ")


def test_resume_says_where_it_resumes(tmp_path):
    args = ("--dev", HELDOUT, "--checkpoint-dir", str(tmp_path / "ckpt"), "--resume")
    assert "no checkpoint in" in train(tmp_path / "m.tagger", *args).stderr
    resumed = train(tmp_path / "m.tagger", *args, "--max-epochs", "2")
    assert "resuming from epoch 2, batch 0" in resumed.stderr
    assert "2 epochs (" in resumed.stderr.splitlines()[-1]


def test_evaluate_top_0_hides_the_confusions(tagger_model):
    shown = invoke("evaluate", "--model", str(tagger_model), HELDOUT).stdout
    assert "most confused" in shown
    hidden = invoke("evaluate", "--model", str(tagger_model), HELDOUT, "--top", "0").stdout
    assert "most confused" not in hidden and "per tag" not in hidden and "token accuracy" in hidden


def test_a_piped_table_is_as_wide_as_it_needs_unless_columns_is_exported(tmp_path, monkeypatch):
    """Piped, `tagger info`'s table keeps a long path whole; a COLUMNS the user exports is obeyed
    (rich's rule: the width they asked for)."""
    path = tmp_path / "old.model"
    torch.save({"format_version": 1, "tagger_version": "0.1.0", "name": "transition_parser", "config": {}, "vocabs": {},
                "state_dict": {"w": torch.zeros(2)}, "meta": {"task": "dep", "train": "/a-long-folder" * 10}}, path)
    monkeypatch.delenv("COLUMNS", raising=False)
    wide = invoke("info", str(path)).stdout
    assert "/a-long-folder" * 10 in wide and max(map(len, wide.splitlines())) > 150
    monkeypatch.setenv("COLUMNS", "60")
    narrow = invoke("info", str(path)).stdout
    table = [line for line in narrow.splitlines() if line[:1] in "┌│└"]
    assert "/a-long-folder" * 10 not in narrow and table and max(map(len, table)) <= 60


def test_training_without_a_terminal_logs_lines_through_a_long_epoch(monkeypatch):
    """A log file (no bar) gets a line a minute into an epoch and then every five, with the
    batches done and the time left; a terminal's bar shows none of them; --quiet none."""
    import io

    from rich.console import Console

    from tagger.progress import RichReporter

    clock = iter(range(0, 10_000, 30))  # each call of the clock: 30 s later
    monkeypatch.setattr("tagger.progress.time.monotonic", lambda: next(clock))
    stream = io.StringIO()
    reporter = RichReporter(Console(file=stream, width=200), bar=False)
    reporter.epoch_start(1, 40)
    for _ in range(40):
        reporter.step(0.5, 100)
    lines = stream.getvalue().splitlines()
    # steps at 30 s, 60 s, ...: the first line at 60 s (2 batches), then 300 s on (12, 22, 32)
    assert [line.split("  ")[2] for line in lines] == ["2/40 batches", "12/40 batches", "22/40 batches", "32/40 batches"]
    assert lines[0].startswith("epoch   1  2/40 batches  loss 0.5000") and "about 19 min left" in lines[0]
    quiet = io.StringIO()
    reporter = RichReporter(Console(file=quiet), bar=False, quiet=True)
    reporter.epoch_start(1, 40)
    for _ in range(40):
        reporter.step(0.5, 100)
    assert quiet.getvalue() == ""
