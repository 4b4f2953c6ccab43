"""Issue 31, items 6, 12 (parts) and 13: a full disk is one line in every writer, ``tag -o`` never
truncates an existing file before there is output, ``tag -`` is stdin, ``evaluate | head`` ends
quietly, the malicious-model refusal exits 1, counts in messages agree with their nouns,
``convert DIR`` reads a folder of ``.conllu``, and ``tagger tag`` draws a progress bar on a
terminal's stderr, and nothing elsewhere."""

from __future__ import annotations

import errno
import os
import pickle
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tagger.cli.main import cli
from tagger.errors import TaggerError
from tagger.formats.base import open_output
from tests.helpers import DATA, ROOT, assert_one_line_error, invoke

FULL = Path("/dev/full")
needs_full = pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")
SAMPLE = DATA / "sample.conllu"
NO_SPACE = os.strerror(errno.ENOSPC)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory) -> Path:
    """A tokenizer trained for one epoch (its output does not matter here)."""
    out = tmp_path_factory.mktemp("tok") / "tok.model"
    done = invoke("train", "--task", "tokenize", "--train", DATA / "tokenize-fr.conllu", "--out", out,
                  "--max-epochs", "1", "--threads", "1", "--quiet", "--json", "--set", "hidden=16",
                  "--set", "segment=32", "--set", "context=4", "--set", "char_dim=8", "--set", "min_char_count=1")
    assert done.exit_code == 0, done.stderr
    return out


def tag_runs(model: Path, tok: Path) -> dict[str, list]:
    """``tagger tag`` through each of its engines: the torch-free tagger, torch (``--on-error
    skip`` goes there), the torch-free tokenizer."""
    return {"runtime": ["tag", "--model", model, SAMPLE], "torch": ["tag", "--model", model, "--on-error", "skip", SAMPLE],
            "tokenizer": ["tag", "--model", tok, DATA / "sample.txt"]}


def cli_to(stream_path: Path, args: list, capsys) -> tuple[int, str]:
    """``tagger ARGS`` in this process with stdout opened on ``stream_path``: (status, stderr)."""
    with open(stream_path, "w", encoding="utf-8") as stdout:
        saved, sys.stdout = sys.stdout, stdout
        try:
            with pytest.raises(SystemExit) as ended:
                cli.main([str(a) for a in args], prog_name="tagger")
        finally:
            sys.stdout = saved
            try:
                stdout.close()
            except OSError:
                pass
    return ended.value.code, capsys.readouterr().err


def one_error_line(err: str, *fragments: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in lines[0], err


# 6. A full disk.

@needs_full
def test_a_full_stdout_is_one_line_in_every_writer(sample_tagger, tokenizer, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    runs = {**tag_runs(sample_tagger, tokenizer), "convert": ["convert", "--to", "pipe", SAMPLE],
            "evaluate": ["evaluate", "--gold", SAMPLE, "--pred", SAMPLE],
            "evaluate --json": ["evaluate", "--json", "--gold", SAMPLE, "--pred", SAMPLE],
            "info": ["info", sample_tagger]}
    for name, args in runs.items():
        code, err = cli_to(FULL, args, capsys)
        assert code == 1, (name, err)
        one_error_line(err, "stdout", NO_SPACE)


@needs_full
def test_a_full_output_file_is_one_line_and_the_device_stays(sample_tagger, tokenizer):
    runs = {**tag_runs(sample_tagger, tokenizer), "convert": ["convert", "--to", "pipe", SAMPLE]}
    for name, args in runs.items():
        assert_one_line_error(invoke(*args, "-o", FULL), str(FULL), NO_SPACE)
    assert stat.S_ISCHR(os.stat(FULL).st_mode)


@needs_full
def test_a_full_stdout_at_the_interpreters_last_flush_is_one_line():
    """What is still buffered when the command returns (a small JSON object) is flushed while
    the command group can still report it, not by the interpreter (status 120)."""
    with open(FULL, "wb") as full:
        done = subprocess.run([sys.executable, "-m", "tagger", "convert", "--to", "pipe", str(SAMPLE)], stdout=full,
                              stderr=subprocess.PIPE, cwd=ROOT, timeout=120)
    assert done.returncode == 1
    one_error_line(done.stderr.decode(), "stdout", NO_SPACE)


def test_a_failed_write_leaves_the_existing_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "out.conllu"
    target.write_text("old\n")
    stream = open_output(target)

    def full(text: str) -> int:
        raise OSError(errno.ENOSPC, NO_SPACE)

    monkeypatch.setattr(stream.stream, "write", full)
    with pytest.raises(TaggerError, match=NO_SPACE) as caught:
        stream.write("new\n")
    assert str(target) in str(caught.value)
    stream.close()
    assert target.read_text() == "old\n" and os.listdir(tmp_path) == ["out.conllu"]


def test_output_replaces_a_links_target_and_keeps_the_files_mode(tmp_path):
    from tagger.formats.base import OutputFile

    real = tmp_path / "real.conllu"
    real.write_text("old\n")
    real.chmod(0o640)
    link = tmp_path / "link.conllu"
    link.symlink_to(real.name)
    with OutputFile(link) as stream:
        stream.write("new\n")
        assert real.read_text() == "old\n"  # replaced when it is closed
    assert link.is_symlink() and real.read_text() == "new\n" and stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["link.conllu", "real.conllu"]


def test_tag_o_on_malformed_input_keeps_the_existing_file(sample_tagger, tokenizer, tmp_path):
    import tagger

    out = tmp_path / "tagged.conllu"
    out.write_text("precious\n")
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tThe\n\n")
    bad_text = tmp_path / "bad.txt"
    bad_text.write_bytes(b"\xff not UTF-8\n")
    for args in (["tag", "--model", sample_tagger, bad], ["tag", "--model", tokenizer, bad_text],
                 ["convert", "--to", "conllu", bad]):
        assert_one_line_error(invoke(*args, "-o", out))
        assert out.read_text() == "precious\n", args
    for engine in ("auto", "torch"):  # the engine tagger tag runs (tagger.engines), and torch
        with pytest.raises(TaggerError):
            tagger.load(sample_tagger, "cpu", 1, engine=engine).tag_file(str(bad), out)
        assert out.read_text() == "precious\n"
    assert sorted(os.listdir(tmp_path)) == ["bad.conllu", "bad.txt", "tagged.conllu"]  # no temporary file left


def test_tag_o_keeps_what_came_before_an_error(sample_tagger, tmp_path):
    """--on-error fail: "stop after writing what came before", on either engine."""
    import tagger

    bad = tmp_path / "half.conllu"
    bad.write_text(SAMPLE.read_text() + "1\tThe\n\n")
    expected = invoke("tag", "--model", sample_tagger, SAMPLE).stdout
    out = tmp_path / "out.conllu"
    for attempt in ("cli", "auto", "torch"):  # tagger tag, the API's choice of engine (the same), torch
        out.write_text("precious\n")
        if attempt == "cli":
            assert_one_line_error(invoke("tag", "--model", sample_tagger, bad, "-o", out), "half.conllu")
        else:
            with pytest.raises(TaggerError):
                tagger.load(sample_tagger, "cpu", 1, engine=attempt).tag_file(str(bad), out)
        assert out.read_text() == expected


# 12. Smaller things.

def test_tag_dash_is_stdin(sample_tagger):
    text = SAMPLE.read_text()
    expected = invoke("tag", "--model", sample_tagger, stdin=text)
    dashed = invoke("tag", "--model", sample_tagger, "-", stdin=text)
    assert dashed.exit_code == 0 and dashed.stdout == expected.stdout != "", dashed.stderr
    mixed = invoke("tag", "--model", sample_tagger, "-", SAMPLE, stdin=text)
    assert mixed.exit_code == 2 and "'-'" in mixed.stderr


def test_evaluate_into_a_closed_pipe_ends_quietly_with_0():
    """``tagger evaluate ... | head -1``: rich's console exited 1 on a closed pipe."""
    process = subprocess.Popen([sys.executable, "-m", "tagger", "evaluate", "--gold", str(SAMPLE), "--pred",
                                str(SAMPLE)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    process.stdout.close()  # before it writes anything (it imports for longer than this takes)
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0 and err == "", err


def test_the_malicious_model_refusal_exits_1_not_the_usage_code(tmp_path):
    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {tmp_path / 'ran'}",))

    evil = tmp_path / "evil.model"
    evil.write_bytes(pickle.dumps(Evil()))
    for args in (["tag", "--model", evil, DATA / "sample.txt"], ["info", evil],
                 ["evaluate", "--model", evil, SAMPLE]):
        done = invoke(*args)
        assert done.exit_code == 1, (args, done.stderr)
        assert_one_line_error(done, "could run code")
    assert not (tmp_path / "ran").exists()


def test_counts_agree_with_their_nouns(tmp_path):
    one = tmp_path / "one.conllu"
    one.write_text(SAMPLE.read_text().split("\n\n")[0] + "\n\n")
    for extra in ([], ["--gold-tokens"]):
        done = invoke("evaluate", "--gold", SAMPLE, "--pred", one, *extra)
        assert_one_line_error(done, "after 1 sentence,")
    columns = tmp_path / "one.tsv"
    columns.write_text("word\n\n")
    done = invoke("convert", "--from", "columns", "--columns", "form=1,xpos=2", "--to", "conllu", columns)
    assert_one_line_error(done, "1 column,")


def test_convert_reads_a_folder_of_conllu(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.conllu").write_text(SAMPLE.read_text())
    done = invoke("convert", "--to", "conllu", folder)
    assert done.exit_code == 0, done.stderr
    assert done.stdout == invoke("convert", "--to", "conllu", SAMPLE).stdout
    (tmp_path / "empty").mkdir()
    assert_one_line_error(invoke("convert", "--to", "conllu", tmp_path / "empty"), "no files of a known format")


# 13. Progress.

@pytest.fixture
def plain_terminal_env(monkeypatch):
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_no_terminal_no_progress(sample_tagger, tokenizer, tmp_path, plain_terminal_env):
    for name, args in tag_runs(sample_tagger, tokenizer).items():
        done = invoke(*args, "-o", tmp_path / f"{name}.out")
        assert done.exit_code == 0 and done.stderr == "", (name, done.stderr)


def test_a_terminal_gets_a_bar_and_the_same_output(sample_tagger, tokenizer, tmp_path, plain_terminal_env):
    sentences = SAMPLE.read_text().count("\n\n")
    expected = {name: invoke(*args).stdout for name, args in tag_runs(sample_tagger, tokenizer).items()}
    plain_terminal_env.setenv("TTY_COMPATIBLE", "1")
    plain_terminal_env.setenv("TTY_INTERACTIVE", "1")
    for name, args in tag_runs(sample_tagger, tokenizer).items():
        out = tmp_path / f"{name}.out"
        done = invoke(*args, "-o", out)
        assert done.exit_code == 0, done.stderr
        assert out.read_text() == expected[name]
        size = os.path.getsize(args[-1])
        assert "tagging" in done.stderr and re.search(rf"{size}/{size} bytes|/{size / 1000:.1f} kB", done.stderr), \
            (name, done.stderr)
        count = expected[name].count("\n\n")
        assert f" {count} sentence{'s' * (count != 1)} " in done.stderr, (name, done.stderr)
    piped = invoke("tag", "--model", sample_tagger, "-o", tmp_path / "piped.out", stdin=SAMPLE.read_text())
    assert "tagging" in piped.stderr and f" {sentences} sentences " in piped.stderr  # (stdin: by sentences)


def test_the_meter_reads_the_offset_of_the_open_input(tmp_path):
    from tagger.progress import InputMeter

    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_bytes(b"x" * 1000)
    second.write_bytes(b"y" * 500)
    meter = InputMeter([str(first), str(second)])
    assert meter.total == 1500 and meter.position() == 0
    with open(first, "rb", buffering=0) as f:
        f.read(300)
        assert meter.position() == 300
    with open(second, "rb", buffering=0) as f:
        f.read(100)
        assert meter.position() == 1100  # the file before it: read whole
    assert InputMeter([str(tmp_path)]).total == 1500
