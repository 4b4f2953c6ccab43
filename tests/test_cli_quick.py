"""``tagger tag --model FILE ...`` without click (tagger/cli/quick.py): which arguments it takes,
that it does what the click command does with them, errors included."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest

from tagger.api import Model
from tagger.cli import quick
from tests.helpers import DATA, assert_one_line_error, run


@pytest.mark.parametrize("argv, expected", [
    (["tag", "--model", "m", "a.txt"], quick.Plain(["m"], None, None, ["a.txt"])),
    (["tag", "--model=m", "--threads=2", "-q", "-o", "out.conllu"], quick.Plain(["m"], 2, "out.conllu", [], True)),
    (["tag", "--quiet", "--model", "m", "--model", "n", "--output", "o", "a", "b"],
     quick.Plain(["m", "n"], None, "o", ["a", "b"], True)),
    (["tag", "--model", "m", "-"], quick.Plain(["m"], None, None, ["-"])),
    (["tag"], quick.Plain()), (["tag", "-q", "a.txt"], quick.Plain([], None, None, ["a.txt"], True)),  # the shipped model
])
def test_plain_calls_are_taken(argv, expected):
    assert quick.parse(argv) == expected


@pytest.mark.parametrize("argv", [
    [], ["train", "--model", "m"], ["tag", "--help"],
    ["tag", "--model", "m", "--help"], ["tag", "--model", "m", "--format", "text"], ["tag", "--model", "m", "-f", "text"],
    ["tag", "--model"], ["tag", "--model", "m", "--threads", "0"], ["tag", "--model", "m", "--threads", "two"],
    ["tag", "--model", "m", "--threads", "1", "--threads", "2"], ["tag", "--model", "m", "-o", "a", "-o", "b"],
    ["tag", "--model", "m", "-o=a"], ["tag", "--model", "m", "--quiet=yes"], ["tag", "--model", "m", "-", "a.txt"],
    ["tag", "--model", "m", "--", "a.txt"], ["tag", "--model", "m", "-o", ""],
])
def test_anything_else_is_left_to_click(argv):
    assert quick.parse(argv) is None


def test_an_output_that_is_a_folder_is_left_to_click(tmp_path):
    assert quick.parse(["tag", "--model", "m", "-o", str(tmp_path)]) is None


def test_every_option_it_does_not_take_has_the_default_it_runs_with():
    """The quick route passes device and precision ``auto`` and no beam to :func:`tagger.load`,
    and :meth:`Model.tag_file` its own defaults: the click command's for every option it does
    not take. A new option of ``tagger tag`` fails here until the quick route knows of it."""
    from tagger.cli.tag import command

    taken = {"model_paths", "quiet", "inputs", "output", "threads"}
    given = command.make_context("tag", ["--model", "m"]).params  # what click passes the command
    defaults = {name: value for name, value in given.items() if name not in taken}
    keywords = ("columns", "supertag_in", "top_k", "beta", "chunk_size", "on_error", "allow_missing_columns",
                "show_attention", "presegmented")
    assert set(defaults) == {"device", "precision", "beam", "constrained", "input_format", "input_format_alias",
                             "output_format", *keywords}
    signature = inspect.signature(Model.tag_file).parameters
    assert {name: defaults[name] for name in keywords} == {name: signature[name].default for name in keywords}
    assert (defaults["device"], defaults["precision"], defaults["beam"], defaults["constrained"]) == ("auto", "auto",
                                                                                                   None, None)
    assert (defaults["input_format"], defaults["input_format_alias"], defaults["output_format"]) == ("auto", None, None)
    assert signature["input_format"].default == "auto" and signature["format"].default is None


def _both(*args: str) -> tuple:
    """A call by the quick route and the same call through click (``--format auto`` is not one
    the quick route takes)."""
    return run("tag", *args), run("tag", "--format", "auto", *args)


def test_it_writes_what_the_click_command_writes(sample_tagger, tmp_path):
    quick_run, click_run = _both("--model", str(sample_tagger), "--threads", "1", str(DATA / "sample.conllu"))
    assert quick_run.returncode == click_run.returncode == 0, click_run.stderr
    assert quick_run.stdout == click_run.stdout and quick_run.stdout.count(b"\n\n") >= 2


def test_without_a_model_it_runs_the_shipped_one_with_the_click_commands_note():
    raw = b"The cat sat on the mat. It purred.\n"
    quick_run, click_run = run("tag", stdin=raw), run("tag", "--format", "auto", stdin=raw)
    assert quick_run.returncode == click_run.returncode == 0, click_run.stderr
    assert (quick_run.stdout, quick_run.stderr) == (click_run.stdout, click_run.stderr)
    assert b"shipped English model 'en'" in quick_run.stderr and b"\tpurred\t" in quick_run.stdout
    assert run("tag", "-q", stdin=raw).stderr == b""


@pytest.mark.parametrize("case", ["model", "input"])
def test_its_errors_are_the_click_commands(sample_tagger, tmp_path, case):
    missing = str(tmp_path / "missing.file")
    args = ("--model", missing) if case == "model" else ("--model", str(sample_tagger), missing)
    quick_run, click_run = _both(*args)
    assert_one_line_error(quick_run, Path(missing).name)
    assert (quick_run.returncode, quick_run.stderr) == (click_run.returncode, click_run.stderr)


def test_ctrl_c_while_the_modules_load_is_one_line_and_130():
    """An interrupt before the commands' own guard (the modules still loading) ends as one does
    after it: ``interrupted`` and status 130, no traceback (a fresh process: its ``tagger.cli.main``
    is the entry point, not the submodule of that name)."""
    import subprocess

    code = ("from tagger.cli import quick\n"
            "def interrupted(argv):\n    raise KeyboardInterrupt\n"
            "quick.run = interrupted\n"
            "import tagger.cli\ntagger.cli.main()\n")
    done = subprocess.run([sys.executable, "-c", code, "tag", "--model", "x.tagger"], capture_output=True, text=True)
    assert done.returncode == 130 and done.stderr == "interrupted\n"
