"""A pipe named as a file (bash's ``<(command)``, a FIFO) is read once: the format sniffed from
its start and the rest read from the same stream, as stdin is. Opening the path again after
sniffing used to lose the start: plain text came out empty with status 0, CoNLL-U failed on a
line cut in two, a FIFO hung. Training refuses a pipe (it reads its data more than once)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

import pytest

from tests.helpers import DATA, ROOT, run

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or not hasattr(os, "mkfifo"), reason="needs bash and pipes")


def piped(*args: str | os.PathLike, through: os.PathLike) -> subprocess.CompletedProcess:
    """``python -m tagger ARGS <(cat THROUGH)`` in bash: the file's bytes through a pipe named
    /dev/fd/N."""
    command = " ".join(shlex.quote(os.fspath(a)) for a in (sys.executable, "-m", "tagger", *args))
    return subprocess.run(["bash", "-c", f"{command} <(cat {shlex.quote(os.fspath(through))})"], capture_output=True,
                          cwd=ROOT, timeout=120, env={**os.environ, "OMP_NUM_THREADS": "1"})


def test_tag_reads_a_pipe_of_plain_text_and_of_conllu_as_it_reads_the_file(sample_tagger, tmp_path):
    text = tmp_path / "words.txt"
    text.write_text("The cat sat .\nIt purred .\n", encoding="utf-8")
    for source in (text, DATA / "sample.conllu"):
        from_file = run("tag", "--model", str(sample_tagger), str(source))
        through = piped("tag", "--model", sample_tagger, through=source)
        assert from_file.returncode == through.returncode == 0, through.stderr
        assert through.stdout == from_file.stdout and through.stdout.count(b"\n") > 5


def test_convert_and_evaluate_read_a_pipe(tmp_path):
    text = tmp_path / "words.txt"
    text.write_text("O gato .\n", encoding="utf-8")
    converted = piped("convert", "--to", "conllu", through=text)
    assert converted.returncode == 0 and converted.stdout.decode().splitlines()[:3] == [
        "1\tO\t_\t_\t_\t_\t_\t_\t_\t_", "2\tgato\t_\t_\t_\t_\t_\t_\t_\t_", "3\t.\t_\t_\t_\t_\t_\t_\t_\t_"]
    scored = piped("evaluate", "--json", "--pred", DATA / "sample.conllu", "--gold", through=DATA / "sample.conllu")
    assert scored.returncode == 0, scored.stderr
    assert b'"accuracy": 100.0' in scored.stdout


def test_training_refuses_a_pipe_in_one_line(tmp_path):
    done = piped("train", "--task", "pos", "--out", tmp_path / "m.tagger", "--max-epochs", "1", "--train",
                 through=DATA / "sample.conllu")
    assert done.returncode == 1 and not (tmp_path / "m.tagger").exists()
    assert done.stderr.decode().strip().endswith("a pipe can be read once only: write it to a file first")
    assert len(done.stderr.decode().strip().splitlines()) == 1
