"""Jackknifing (``tagger train --task dep --jackknife K``): folds, the plan of jobs, the stamps
that decide reuse, the taggers' predictions put into the parser's data, the refusals, and one
real run of K = 2 on EWT slices (taggers in processes of their own), run again to reuse them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tagger import formats, model_file
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.inference import predict
from tagger.training import jackknife
from tagger.training.jackknife import Jackknife, JackknifeSettings
from tagger.training.run import Data
from tests.conftest import EWT
from tests.helpers import assert_one_line_error, first_blocks, invoke

SAMPLE = "data/sample.conllu"
#: A tiny parser, one epoch.
PARSER = ["--max-epochs", "1", "--set", "hidden=16", "--set", "word_dim=8", "--set", "tag_dim=8",
          "--set", "label_dim=8", "--set", "precompute=50"]
#: Tiny taggers, one epoch.
TAGGERS = ["--pos-set", "max_epochs=1", "--pos-set", "layers=1", "--pos-set", "hidden=16", "--pos-set", "word_dim=16"]


def sentence(words: str, upos: str) -> Sentence:
    return Sentence(words.split(), {"upos": upos.split(), "head": [0] * len(words.split())})


# -- folds, jobs, stamps ---------------------------------------------------------------------------

def test_folds_are_index_mod_k_and_each_sentence_is_held_out_once():
    sentences = [sentence(f"w{i}", "X") for i in range(7)]
    assert [jackknife.fold_of(i, 3) for i in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    rest, held = jackknife.fold_split(sentences, 1, 3)
    assert [s.words[0] for s in held] == ["w1", "w4"]
    assert [s.words[0] for s in rest] == ["w0", "w2", "w3", "w5", "w6"]
    held_out = [s.words[0] for k in range(3) for s in jackknife.fold_split(sentences, k, 3)[1]]
    assert sorted(held_out) == sorted(s.words[0] for s in sentences)  # every sentence once
    assert jackknife.tagger_names(3) == ["fold01", "fold02", "fold03", "all"]
    assert jackknife.tagger_names(100)[:2] == ["fold001", "fold002"]


def test_plan_jobs_fills_the_cores():
    assert jackknife.plan_jobs(11, None, None, cpus=16) == (11, 1)  # one thread each, all at once
    assert jackknife.plan_jobs(11, None, 2, cpus=16) == (8, 2)  # --threads 2: as many as fit
    assert jackknife.plan_jobs(11, 3, None, cpus=16) == (3, 5)  # --jobs 3: the cores split between them
    assert jackknife.plan_jobs(3, None, None, cpus=16) == (3, 5)  # no more jobs than taggers
    assert jackknife.plan_jobs(11, None, 1, cpus=2) == (2, 1)
    assert jackknife.plan_jobs(11, None, 4, cpus=2) == (1, 4)


def test_the_digest_follows_words_and_learnt_columns_only():
    train, dev = [sentence("The cat", "DET NOUN")], [sentence("Dogs", "NOUN")]
    digest = jackknife.data_digest(train, dev, ["upos"])
    assert jackknife.data_digest([sentence("The cat", "DET NOUN")], dev, ["upos"]) == digest
    other_heads = sentence("The cat", "DET NOUN")
    other_heads.columns["head"] = [2, 0]
    assert jackknife.data_digest([other_heads], dev, ["upos"]) == digest  # heads do not make taggers differ
    assert jackknife.data_digest([sentence("The cat", "DET VERB")], dev, ["upos"]) != digest
    assert jackknife.data_digest([sentence("The dog", "DET NOUN")], dev, ["upos"]) != digest
    assert jackknife.data_digest(train + dev, [], ["upos"]) != digest  # a dev sentence is not a training one


def write_finished(folder: Path, stamp: dict, fold: int | None = 0) -> None:
    folder.mkdir(parents=True)
    (folder / jackknife.MODEL).write_bytes(b"model")
    (folder / jackknife.TAGS).write_text("{}")
    (folder / jackknife.RESULT).write_text(json.dumps({"identity": stamp, "fold": fold}))


def test_a_tagger_is_reused_only_with_the_same_stamp_and_files(tmp_path):
    stamp = jackknife.identity("fold01", 2, ["upos"], "abc", {"model": {"hidden": 16}, "training": {}}, 1)
    write_finished(tmp_path / "fold01", stamp)
    assert jackknife.finished(tmp_path / "fold01", stamp)["fold"] == 0
    for other in (jackknife.identity("fold01", 2, ["upos"], "abc", {"model": {"hidden": 32}, "training": {}}, 1),
                  jackknife.identity("fold01", 2, ["upos"], "abd", {"model": {"hidden": 16}, "training": {}}, 1),
                  jackknife.identity("fold01", 3, ["upos"], "abc", {"model": {"hidden": 16}, "training": {}}, 1),
                  jackknife.identity("fold01", 2, ["upos"], "abc", {"model": {"hidden": 16}, "training": {}}, 2),
                  jackknife.identity("fold01", 2, ["upos"], "abc", {"model": {"hidden": 16}, "training": {}}, 1,
                                     "glove-6b-50d")):  # trained with pretrained vectors: another tagger
        assert jackknife.finished(tmp_path / "fold01", other) is None
    assert "embeddings" not in stamp  # stamps of taggers without vectors are as they were
    (tmp_path / "fold01" / jackknife.TAGS).unlink()
    assert jackknife.finished(tmp_path / "fold01", stamp) is None  # killed between model and tags


# -- the predictions put into the parser's data ------------------------------------------------------

def fake_jackknife(tmp_path: Path, data: Data, tags: dict[str, list[list[str]]]) -> Jackknife:
    """A finished K = 2 jackknife over ``data`` whose taggers predicted ``tags`` (by tagger name)."""
    for name, sentences in tags.items():
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / jackknife.TAGS).write_text(json.dumps({"columns": ["upos"], "sentences": [
            [t.split()] for t in sentences]}))
    return Jackknife(2, ["upos"], tmp_path, jackknife.data_digest(data.train, data.dev, ["upos"]),
                     JackknifeSettings(2), {"model": {}, "training": {}})


def three_and_one() -> Data:
    train = [sentence("a b", "X Y"), sentence("c", "Z"), sentence("d e", "X X")]
    return Data(train, [sentence("f g", "Y Y")], "dev")


def test_apply_puts_each_folds_tags_into_its_sentences_and_dev_from_the_all_train_tagger(tmp_path):
    data = three_and_one()
    # fold01 holds sentences 0 and 2, fold02 sentence 1; "all" tags dev.
    done = fake_jackknife(tmp_path, data, {"fold01": ["X X", "X Y"], "fold02": ["Q"], "all": ["Y N"]})
    accuracy = jackknife.apply(done, data)
    assert [s.columns["upos"] for s in data.train] == [["X", "X"], ["Q"], ["X", "Y"]]
    assert [s.columns["head"] for s in data.train] == [[0, 0], [0], [0, 0]]  # the gold tree stays
    assert data.dev[0].columns["upos"] == ["Y", "N"]
    assert accuracy == {"train": {"upos": pytest.approx(2 / 5)}, "dev": {"upos": 0.5}}


def test_apply_refuses_changed_data_and_tags_of_other_sentences(tmp_path):
    data = three_and_one()
    done = fake_jackknife(tmp_path / "a", data, {"fold01": ["X X", "X Y"], "fold02": ["Q"], "all": ["Y N"]})
    data.train[1].columns["upos"] = ["W"]
    with pytest.raises(TaggerError, match="data changed while the jackknife's taggers trained"):
        jackknife.apply(done, data)
    data = three_and_one()
    done = fake_jackknife(tmp_path / "b", data, {"fold01": ["X X", "X"], "fold02": ["Q"], "all": ["Y N"]})
    with pytest.raises(TaggerError, match="not the tags of these sentences") as error:
        jackknife.apply(done, data)
    assert error.value.file.endswith("fold01/tags.json")


# -- refusals ------------------------------------------------------------------------------------

def test_what_cannot_be_jackknifed_is_refused_in_one_line_before_anything_trains(tmp_path):
    base = ["train", "--task", "dep", "--train", SAMPLE, "--dev", SAMPLE, "--out", tmp_path / "dep.model"]
    assert_one_line_error(invoke(*base, "--jackknife", "2", "--pos-model", tmp_path / "x.tagger"),
                          "--jackknife trains its own taggers: leave out --pos-model")
    assert_one_line_error(invoke("train", "--task", "pos", "--train", SAMPLE, "--out", tmp_path / "p",
                                 "--jackknife", "2"), "the skip_lstm model of --task pos reads none")
    assert_one_line_error(invoke(*base, "--jackknife", "9"), "--jackknife 9 needs at least 9 training sentences, "
                                                              "there are 8")
    assert_one_line_error(invoke(*base, "--jackknife", "2", "--pos-set", "nope=1"),
                          "the jackknife's taggers: unknown config key(s): nope")
    assert_one_line_error(invoke(*base, "--jackknife", "2", "--set", "tag_column=xpos", "--pos-set", "column=upos"),
                          "the jackknife's taggers learn column=xpos (what the parser reads), not column=upos")
    no_xpos = tmp_path / "no-xpos.conllu"
    no_xpos.write_text("1\tDogs\tdog\tNOUN\t_\t_\t2\tnsubj\t_\t_\n2\tbark\tbark\tVERB\t_\t_\t0\troot\t_\t_\n\n" * 2)
    assert_one_line_error(invoke(*base[:4], no_xpos, "--dev", no_xpos, *base[7:], "--jackknife", "2",
                                 "--set", "tag_column=xpos"),
                          "no-xpos.conllu:1: the jackknife's taggers learn xpos: no 'xpos' annotation")
    assert not (tmp_path / "dep.model.jackknife").exists() and not (tmp_path / "dep.model").exists()
    done = invoke(*base, "--jackknife", "1")
    assert done.exit_code == 2 and "--jackknife" in done.stderr and "1 is not in the range x>=2" in done.stderr
    done = invoke(*base, "--pos-set", "max_epochs=1", "--jobs", "2")
    assert done.exit_code == 2 and "--pos-set, --jobs: only with --jackknife K" in done.stderr


# -- a real run ----------------------------------------------------------------------------------

@pytest.fixture
def ewt_slices(tmp_path) -> tuple[Path, Path]:
    """The first 40 sentences of EWT train and 15 of dev."""
    if not (EWT / "en_ewt-ud-train.conllu").exists():
        pytest.skip("needs ../shared/data")
    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    train.write_text(first_blocks(EWT / "en_ewt-ud-train.conllu", 40), encoding="utf-8")
    dev.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 15), encoding="utf-8")
    return train, dev


def saved_tags(folder: Path) -> list[list[str]]:
    return [tags[0] for tags in json.loads((folder / jackknife.TAGS).read_text())["sentences"]]


@pytest.mark.slow
def test_jackknife_trains_the_parser_on_tags_of_taggers_that_never_saw_them_and_reuses_them(ewt_slices, tmp_path):
    train, dev = ewt_slices
    out = tmp_path / "dep.model"
    command = ["train", "--task", "dep", "--train", train, "--dev", dev, "--out", out, "--jackknife", "2",
               *TAGGERS, *PARSER, "--threads", "1", "--jobs", "2", "--json"]
    done = invoke(*command)
    assert done.exit_code == 0, (done.stderr, done.exception)
    summary = json.loads(done.stdout)["jackknife"]
    work = tmp_path / "dep.model.jackknife"
    assert summary["folds"] == 2 and summary["columns"] == ["upos"] and summary["work_dir"] == str(work)
    assert [t["name"] for t in summary["taggers"]] == ["fold01", "fold02", "all"]
    assert not any(t["reused"] for t in summary["taggers"]) and summary["jobs"] == 2
    # (both are rounded to tenths, each by up to 0.05: a run whose tagging after training is quick can round below)
    assert all(t["seconds"] > 0 and t["wall_seconds"] >= t["seconds"] - 0.1 for t in summary["taggers"])
    assert summary["tagger_seconds"] == pytest.approx(sum(t["seconds"] for t in summary["taggers"]), abs=0.2)
    assert "tagger fold01 (1/2): training" in done.stderr and "tagger all done: dev accuracy" in done.stderr

    # Each fold was tagged by the tagger that left it out, dev by the one trained on all of train.
    gold_train, gold_dev = list(formats.read(str(train))), list(formats.read(str(dev)))
    for k, name in enumerate(["fold01", "fold02"]):
        tagger, meta = model_file.load(work / name / jackknife.MODEL)
        held = gold_train[k::2]
        assert meta["train_sentences"] == len(gold_train) - len(held)  # it never saw its fold
        assert saved_tags(work / name) == predict(tagger, held)
    tagger, meta = model_file.load(work / "all" / jackknife.MODEL)
    assert meta["train_sentences"] == len(gold_train)
    assert saved_tags(work / "all") == predict(tagger, gold_dev)
    predicted = saved_tags(work / "fold01") + saved_tags(work / "fold02")
    gold = [s.columns["upos"] for s in gold_train[0::2] + gold_train[1::2]]
    assert predicted != gold  # one epoch of a tiny tagger: the parser learnt from predicted tags

    # The parser's file says so; tagger info shows it.
    _, meta = model_file.load(out)
    entry = meta["jackknife"]
    assert meta["pos_model"] == str(work / "all" / jackknife.MODEL) and meta["pos_model_column"] == "upos"
    assert entry["folds"] == 2 and entry["tagger_overrides"] == ["max_epochs=1", "layers=1", "hidden=16",
                                                                 "word_dim=16"]
    assert entry["tagger_config"]["model"]["hidden"] == 16 and entry["tagger_config"]["model"]["column"] == "upos"
    tokens = sum(len(s) for s in gold_train)
    correct = sum(p == g for ps, gs in zip(predicted, gold) for p, g in zip(ps, gs))
    assert entry["train_accuracy"]["upos"] == pytest.approx(correct / tokens)
    assert summary["train_accuracy"]["upos"] == pytest.approx(100 * correct / tokens, abs=0.01)
    assert entry["dev_accuracy"]["upos"] == pytest.approx(summary["taggers"][2]["accuracy"] / 100, abs=1e-4)
    info = invoke("info", out)
    assert info.exit_code == 0 and "2 folds, taggers fast + max_epochs=1" in " ".join(info.stdout.split())

    # The same command again: the taggers are reused, nothing of theirs is rewritten.
    stamps = {name: (work / name / jackknife.MODEL).stat().st_mtime_ns for name in ("fold01", "fold02", "all")}
    again = invoke(*command)
    assert again.exit_code == 0, again.stderr
    assert "tagger fold01 (1/2): done before (held-out accuracy" in again.stderr and ": training" not in again.stderr
    assert all(t["reused"] for t in json.loads(again.stdout)["jackknife"]["taggers"])
    assert {name: (work / name / jackknife.MODEL).stat().st_mtime_ns for name in stamps} == stamps
    assert json.loads(again.stdout)["best_dev"] == json.loads(done.stdout)["best_dev"]  # the same tags


def test_a_tagger_of_other_settings_is_trained_again_and_says_why(tmp_path):
    """What a rerun with changed ``--pos-set`` finds in a tagger's folder: the old result, model,
    tags and checkpoint are deleted before it trains (never mixed with this run's)."""
    folder = tmp_path / "work" / "fold01"
    old = jackknife.identity("fold01", 2, ["upos"], "abc", {"model": {"hidden": 16}, "training": {"lr": 0.1}}, 1)
    write_finished(folder, old)
    (folder / jackknife.SPEC).write_text(json.dumps({"identity": old}))
    (folder / "last.ckpt").write_bytes(b"ckpt")
    new = {**old, "config": {"model": {"hidden": 16}, "training": {"lr": 0.2}}}
    from tagger.training.run import DataSpec, TrainRequest

    request = TrainRequest(task="dep", train=DataSpec(SAMPLE), dev=None, out=str(tmp_path / "dep.model"),
                           jackknife=JackknifeSettings(2))
    chosen = jackknife._Plan(2, ["upos"], "abc", new["config"], tmp_path / "work", 8)
    lines: list[str] = []
    assert jackknife._prepare(request, chosen, "fold01", new, 1, lines.append) is False  # nothing to resume
    assert lines == [f"tagger fold01: the one in {folder} was trained with other config: training it again"]
    assert sorted(os.listdir(folder)) == ["config.json", "spec.json"]
    assert json.loads((folder / jackknife.SPEC).read_text())["identity"] == new
    assert json.loads((folder / jackknife.CONFIG).read_text()) == new["config"]

    # Files without a spec (a folder copied or half deleted) are not trusted either.
    (folder / jackknife.SPEC).unlink()
    (folder / "last.ckpt").write_bytes(b"ckpt")
    lines.clear()
    jackknife._prepare(request, chosen, "fold01", new, 1, lines.append)
    assert lines == [f"tagger fold01: last.ckpt in {folder} without a spec (another run's?) deleted"]
    assert not (folder / "last.ckpt").exists()


def test_jackknife_taggers_of_any_columns_check_them_before_anything_trains(tmp_path):
    """The pipeline's entry: taggers of columns the caller names (here one the data lacks)."""
    from tagger.training.run import DataSpec, TrainRequest

    plain = tmp_path / "plain.conllu"
    plain.write_text("1\tDogs\tdog\tNOUN\t_\t_\t2\tnsubj\t_\t_\n2\tbark\tbark\tVERB\t_\t_\t0\troot\t_\t_\n\n" * 3)
    request = TrainRequest(task="dep", train=DataSpec(str(plain)), dev=None, out=str(tmp_path / "m"),
                           jackknife=JackknifeSettings(2))
    with pytest.raises(TaggerError, match="the jackknife's taggers learn xpos: no 'xpos' annotation"):
        jackknife.jackknife_taggers(request, ["xpos"])
    assert not (tmp_path / "m.jackknife").exists()


def test_the_jackknifed_taggers_take_the_pretrained_vectors_too(ewt_slices, tmp_path):
    train, dev = ewt_slices
    words = list(dict.fromkeys(line.split("\t")[1].lower() for line in train.read_text(encoding="utf-8").splitlines()
                               if line and not line.startswith("#")))
    vectors = tmp_path / "v.txt"  # 8 dimensions
    vectors.write_text("".join(f"{w} " + " ".join(str((i * 7 + j) % 5 - 2) for j in range(8)) + "\n"
                               for i, w in enumerate(words)), encoding="utf-8")
    out = tmp_path / "dep.model"
    done = invoke("train", "--task", "dep", "--train", train, "--dev", dev, "--out", out, "--jackknife", "2",
                  *TAGGERS, *PARSER, "--threads", "1", "--embeddings", vectors)
    assert done.exit_code == 0, (done.stderr, done.exception)
    work = tmp_path / "dep.model.jackknife"
    for name in ("fold01", "fold02", "all"):
        tagger, meta = model_file.load(work / name / jackknife.MODEL)
        assert tagger.input.pretrained is not None and meta["embeddings"] == str(vectors)
        assert json.loads((work / name / jackknife.RESULT).read_text())["identity"]["embeddings"] == str(vectors)
    parser, meta = model_file.load(out)  # the parser's static words get a frozen table of their own
    assert parser.word_pretrained is not None and parser.config.pretrained_dim == 8 and meta["embeddings"] == str(vectors)


def test_the_jackknifed_tags_are_scored_as_tagger_evaluate_scores_them_feats_underscores_too(tmp_path):
    from tagger.cli.info import jackknife_text
    from tagger.training.jobs import write_json

    gold = [Sentence(["a", "b"], {"upos": ["X", "_"], "feats": ["_", "Case=Nom"]})]
    write_json(tmp_path / "tags.json", {"columns": ["upos", "feats"], "sentences": [[["X", "Y"], ["_", "_"]]]})
    counts: dict[str, list[int]] = {}
    jackknife._retag(gold, tmp_path / "tags.json", ["upos", "feats"], counts)
    assert counts == {"upos": [1, 1], "feats": [1, 2]}  # UPOS '_' is no tag; FEATS '_' is "no features"
    entry = {"folds": 2, "columns": ["upos", "feats"], "train_accuracy": {"upos": 90.0, "feats": 80.0},
             "dev_accuracy": {"upos": 91.0, "feats": 81.0}, "fold_accuracies": [84.0, 86.0], "tagger_preset": "fast"}
    line = jackknife_text(entry)  # a fold tagger's one score (its columns' mean) shown once, not under each column
    assert "UPOS train 90.00 %, dev 91.00 %; FEATS train 80.00 %, dev 81.00 %" in line
    assert "each fold's tagger on its fold (the mean of its columns) 84.00, 86.00" in line
    one = jackknife_text({**entry, "columns": ["upos"]})
    assert "UPOS train 90.00 % (folds 84.00, 86.00), dev 91.00 %" in one
