"""Issue 31, items 1, 3 and 4: what a model writer may replace (a device, a FIFO, a symbolic link,
a folder), no "model written" when none was, and no parser saved untrained when every training
tree is skipped (each reason counted)."""

from __future__ import annotations

import copy
import math
import os
import stat
import threading
from pathlib import Path

import pytest
import torch

from tagger import model_file
from tagger.errors import TaggerError
from tagger.models.transition_parser import TransitionParser
from tagger.training import distill as distilling
from tagger.training import run as running
from tagger.training import trainer
from tests.helpers import DATA, SMALL, assert_one_line_error, invoke

ROOT_ONLY = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mknod needs root")
TRAIN = ["--train", DATA / "sample.conllu", "--dev", DATA / "heldout.conllu"]
PARSER = ["--task", "dep", "--threads", "1", "--set", "hidden=16", "--set", "word_dim=16", "--set", "tag_dim=16",
          "--set", "label_dim=16", "--set", "precompute=10"]


def char_device(path: Path, minor: int = 3) -> Path:
    """A character device node like /dev/null (1, 3) or /dev/full (1, 7) at ``path``."""
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    return path


def is_device(path: Path, minor: int = 3) -> bool:
    st = os.lstat(path)
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, minor)


# ----------------------------------------------------------------------------- item 1: what --out names
@ROOT_ONLY
def test_train_out_a_null_device_is_written_through_not_replaced(tmp_path):
    node = char_device(tmp_path / "x")
    result = invoke("train", *TRAIN, "--out", node, "--max-epochs", "1", *SMALL)
    assert result.exit_code == 0, result.output
    assert is_device(node), "the device node was replaced by a regular file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x"]  # no temporary file left beside it


@ROOT_ONLY
def test_a_full_device_is_a_one_line_error_and_stays_a_device(tmp_path):
    node = char_device(tmp_path / "full", minor=7)
    with pytest.raises(TaggerError, match="No space left on device") as caught:
        model_file.atomic_save({"x": torch.zeros(100_000)}, node)
    assert caught.value.file == str(node) and is_device(node, minor=7)


@ROOT_ONLY
def test_a_block_device_is_refused_untouched(tmp_path):
    node = tmp_path / "disk"
    os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(7, 200))
    with pytest.raises(TaggerError, match="block device"):
        model_file.atomic_save({"x": 1}, node)
    assert stat.S_ISBLK(os.lstat(node).st_mode)


def test_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    model_file.atomic_save({"x": torch.arange(5)}, fifo)
    reader.join(10)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    tmp_copy = tmp_path / "copy.pt"
    tmp_copy.write_bytes(got[0])
    assert torch.load(tmp_copy, weights_only=True)["x"].tolist() == [0, 1, 2, 3, 4]


def test_a_symbolic_link_keeps_linking_and_its_target_is_replaced(tmp_path):
    (tmp_path / "models").mkdir()
    target = tmp_path / "models" / "real.model"
    target.write_bytes(b"old")
    link = tmp_path / "link.model"
    link.symlink_to(Path("models") / "real.model")
    model_file.atomic_write(link, lambda f: f.write(b"new"))
    assert link.is_symlink() and os.readlink(link) == os.path.join("models", "real.model")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["real.model"]
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "models" / "later.model")
    model_file.atomic_write(dangling, lambda f: f.write(b"made"))  # as open(link, "w") creates its target
    assert dangling.is_symlink() and (tmp_path / "models" / "later.model").read_bytes() == b"made"


def test_a_folder_or_a_file_as_folder_is_a_one_line_error(tmp_path):
    with pytest.raises(TaggerError, match="is a folder") as caught:
        model_file.atomic_write(tmp_path, lambda f: f.write(b"x"))
    assert "\n" not in str(caught.value)
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(TaggerError, match="a folder on its path is a file"):
        model_file.atomic_write(tmp_path / "file" / "last.ckpt", lambda f: f.write(b"x"))
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(TaggerError, match="cannot write"):
        model_file.atomic_write(loop, lambda f: f.write(b"x"))


# ----------------------------------------------------------------------------- item 3: no false "written"
def no_epochs(configs):
    """``configs`` with max_epochs 0 in the training config, whatever the config checks allow:
    the run's own guard is under test."""
    def wrapped(*args, **kwargs):
        config, training = configs(*args, **kwargs)
        training = copy.copy(training)
        object.__setattr__(training, "max_epochs", 0)
        return config, training
    return wrapped


def test_train_that_runs_no_epoch_says_so_and_leaves_the_old_file(tmp_path, monkeypatch):
    out = tmp_path / "existing.tagger"
    out.write_bytes(b"old model")
    monkeypatch.setattr(running, "configs", no_epochs(running.configs))
    result = invoke("train", *TRAIN, "--out", out, "--quiet", *SMALL)  # (quiet: no line of the run's start)
    assert_one_line_error(result, str(out), "no epoch ran (max_epochs is 0", "no model was written")
    assert "model written" not in result.output and out.read_bytes() == b"old model"


def test_distill_that_runs_no_epoch_says_so(tmp_path, monkeypatch):
    teacher = tmp_path / "teacher.tagger"
    assert invoke("train", *TRAIN, "--out", teacher, "--max-epochs", "1", *SMALL).exit_code == 0
    out = tmp_path / "student.tagger"
    out.write_bytes(b"old model")
    monkeypatch.setattr(distilling, "configs", no_epochs(distilling.configs))
    result = invoke("distill", "--teacher", teacher, *TRAIN, "--out", out, "--quiet", *SMALL)
    assert_one_line_error(result, str(out), "no epoch ran (max_epochs is 0")
    assert out.read_bytes() == b"old model"


def test_no_best_dev_score_is_no_model_written(tmp_path):
    out = tmp_path / "m"
    out.write_bytes(b"old")
    state = trainer.TrainState(history=[{"epoch": 1, "dev": math.nan}])
    with pytest.raises(TaggerError, match="no epoch's dev score could be compared"):
        trainer.check_saved(str(out), 0, state, 1, resumed=False)
    trainer.check_saved(str(out), 1, state, 1, resumed=False)  # a save this run: fine
    trainer.check_saved(str(out), 0, trainer.TrainState(best_epoch=3), 3, resumed=True)  # saved before the resume
    out.unlink()
    with pytest.raises(TaggerError, match=r"the best epoch \(3\) was saved before the resume, to this file, which is no "):
        trainer.check_saved(str(out), 0, trainer.TrainState(best_epoch=3, history=[{"epoch": 3, "dev": 0.5}]), 3, True)
    with pytest.raises(TaggerError, match=r"could be compared \(50.00, nan\)"):  # percent, as every score shown
        trainer.check_saved(str(out), 0, trainer.TrainState(history=[{"epoch": 1, "dev": 0.5}, {"epoch": 2, "dev": math.nan}]),
                            2, resumed=False)


# ----------------------------------------------------------------------------- item 4: nothing to train on
def broken_trees(tmp_path: Path, cycles: int) -> Path:
    """data/sample.conllu (8 trees) with every tree broken: the first ``cycles`` get a cycle (the
    root word headed by word 1, or 2), the others every word a root."""
    blocks = (DATA / "sample.conllu").read_text(encoding="utf-8").strip().split("\n\n")
    out = []
    for k, block in enumerate(blocks):
        lines = []
        for line in block.split("\n"):
            cells = line.split("\t")
            if len(cells) == 10 and cells[0].isdigit():
                if k < cycles and cells[6] == "0":
                    cells[6] = "2" if cells[0] == "1" else "1"
                elif k >= cycles:
                    cells[6] = "0"
            lines.append("\t".join(cells))
        out.append("\n".join(lines))
    path = tmp_path / "broken.conllu"
    path.write_text("\n\n".join(out) + "\n\n", encoding="utf-8")
    return path


def test_tree_problem_names_each_reason():
    from tagger.transitions import tree_problem

    assert tree_problem([2, 3, 0]) is None
    assert tree_problem([2, 1, 0]) == tree_problem([1]) == tree_problem([2, 3, 1]) == "cycle"
    assert tree_problem([0, 0]) == "several roots"
    assert tree_problem([-1, 0]) == tree_problem([5, 0]) == "missing heads"
    assert tree_problem([0, 4, 1, 1]) == "non-projective"


def test_a_parser_with_every_tree_skipped_is_refused_naming_the_file_and_reasons(tmp_path):
    train = broken_trees(tmp_path, cycles=5)
    out = tmp_path / "dep.model"
    result = invoke("train", *PARSER, "--train", train, "--dev", DATA / "heldout.conllu", "--out", out,
                    "--max-epochs", "1", "--set", "several_roots=skip")  # (attach would learn the 3 several-root trees)
    assert_one_line_error(result, str(train), "no training tree to learn from", "all 8",
                          "5 with a cycle", "3 with several roots")
    assert not out.exists()


def test_the_skip_note_tells_a_cycle_from_several_roots(tmp_path):
    from tagger.corpus.records import Sentence
    from tagger.models.transition_parser.config import ParserConfig

    def tree(heads):
        return Sentence([f"w{i}" for i in range(len(heads))], {"head": heads, "deprel": ["dep"] * len(heads)})

    good, cycle, roots, crossing = tree([0, 1]), tree([2, 1]), tree([0, 0]), tree([0, 4, 1, 1])
    lift = ParserConfig()
    facts, notes = TransitionParser.training_meta(lift, [good, cycle, roots, crossing])
    assert facts["nonprojective_skipped"] == 2 and notes[-1] == (
        "2 training trees will be skipped (of 4): 1 with a cycle, 1 with several roots")
    skip = ParserConfig(nonprojective="skip")
    facts, notes = TransitionParser.training_meta(skip, [good, crossing, crossing, cycle])
    assert facts["nonprojective_skipped"] == 3 and notes == [
        "3 training trees will be skipped (of 4): 2 non-projective, 1 with a cycle"]
    assert TransitionParser.training_meta(skip, [good, cycle])[1] == [
        "1 training tree with a cycle will be skipped (of 2)"]
    with pytest.raises(TaggerError, match="nonprojective=lift"):
        TransitionParser.training_meta(skip, [crossing])


def test_an_epoch_that_trains_on_nothing_saves_nothing(tmp_path, monkeypatch):
    """The loop's own guard, whatever a family's checks before it miss: every tree skipped in
    the batches (the parser's check of its trees switched off here)."""
    monkeypatch.setattr(TransitionParser, "training_meta", classmethod(lambda cls, config, sentences: ({}, [])))
    train = broken_trees(tmp_path, cycles=8)
    out = tmp_path / "dep.model"
    result = invoke("train", *PARSER, "--train", train, "--dev", DATA / "heldout.conllu", "--out", out,
                    "--max-epochs", "1", "--quiet")
    assert_one_line_error(result, str(train), "nothing to train on")
    assert not out.exists()
