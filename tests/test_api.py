"""The Python API (tagger.load / Model.tag / tag_file / train / evaluate / BatchTagger): the
same predictions and bytes as the CLI, input order kept, one thread in worker processes."""

from __future__ import annotations

import io
import json
import multiprocessing
import random
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

import tagger
from tagger import api, formats
from tagger.cli.main import cli
from tagger.errors import TaggerError

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
SMALL = {"layers": 2, "hidden": 16, "word_dim": 16, "lr": 0.01, "lr_halving": False}


def run_cli(*args: str) -> None:
    """``tagger ARGS`` in this process; fails the test with its output if it fails."""
    done = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert done.exit_code == 0, done.output


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, dict, list]:
    """A tiny POS tagger trained through the API, its summary, and its epoch records."""
    path = tmp_path_factory.mktemp("api") / "pos.tagger"
    epochs: list = []
    summary = tagger.train(task="pos", train=DATA / "sample.conllu", dev=DATA / "heldout.conllu", out=path,
                           settings=SMALL, max_epochs=3, patience=0, threads=1, device="cpu", on_epoch=epochs.append)
    return path, summary, epochs


@pytest.fixture(scope="module")
def pos_model(trained) -> Path:
    return trained[0]


@pytest.fixture(scope="module")
def parser_model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("api") / "dep.model"
    tagger.train(task="dep", train=DATA / "sample.conllu", dev=DATA / "heldout.conllu", out=path, max_epochs=2,
                 settings={"word_dim": 8, "tag_dim": 8, "label_dim": 8, "hidden": 16}, threads=1, device="cpu")
    return path


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_tag_gives_the_records_tagger_tag_writes(pos_model, tmp_path):
    out = tmp_path / "cli.jsonl"
    run_cli("tag", "--model", str(pos_model), str(DATA / "heldout.txt"), "--output-format", "jsonl", "-o", str(out))
    lines = [line.split() for line in (DATA / "heldout.txt").read_text(encoding="utf-8").splitlines() if line.split()]
    records = tagger.load(pos_model).tag(lines)
    assert records == jsonl(out)
    assert set(records[0]) == {"words", "upos"} and records[0]["words"] == lines[0]


def test_tag_keeps_input_order_over_mixed_lengths_and_chunks(pos_model, monkeypatch):
    vocabulary = [w for s in formats.read(str(DATA / "sample.conllu")) for w in s.words]
    rng = random.Random(7)
    sentences = [[rng.choice(vocabulary) for _ in range(rng.choice([0, 1, 2, 5, 17, 40, 90]))] for _ in range(60)]
    model = tagger.load(pos_model)
    one_by_one = [model.tag([sentence])[0] for sentence in sentences]
    monkeypatch.setattr(api, "CHUNK_SIZE", 7)  # several chunks, and within them several length batches
    monkeypatch.setattr(api, "MAX_TOKENS", 64)
    together = model.tag(sentences)
    assert [r["words"] for r in together] == sentences
    assert together == one_by_one
    assert all(len(r["upos"]) == len(r["words"]) for r in together)


def test_tag_takes_sentence_records_and_leaves_them_unchanged(pos_model):
    gold = list(formats.read(str(DATA / "heldout.conllu")))
    before = [dict(s.columns) for s in gold]
    model = tagger.load(pos_model)
    assert model.tag(gold) == model.tag([s.words for s in gold])
    assert [s.columns for s in gold] == before


def test_tag_refuses_strings_in_one_line(pos_model):
    model = tagger.load(pos_model)
    with pytest.raises(TaggerError, match="list of token strings"):
        model.tag(["The", "cat", "sat"])
    with pytest.raises(TaggerError, match="sentence 2"):
        model.tag([["The", "cat"], "The cat"])
    with pytest.raises(TaggerError, match="not one string: model.tag_lines takes lines of text"):
        model.tag("The cat sat")
    for wrong, said in ((None, "not NoneType"), (5, "not int 5"), ([["a"], 5], "sentence 2: .* not int")):
        with pytest.raises(TaggerError, match=said):
            model.tag(wrong)
    assert model.tag([[], ["The"]])[0] == {"words": [], "upos": []}  # an empty sentence: nothing to tag


def test_train_refuses_wrong_arguments_in_one_line(tmp_path):
    with pytest.raises(TaggerError, match="settings takes a dict of config keys and values"):
        tagger.train(task="pos", train=DATA / "sample.conllu", out=tmp_path / "m", settings=["hidden=16"])
    with pytest.raises(TaggerError, match="seed must be a number"):
        tagger.train(task="pos", train=DATA / "sample.conllu", out=tmp_path / "m", seed="abc")


def test_load_refuses_wrong_arguments_in_one_line(pos_model):
    for arguments, said in (({"precision": "fp8"}, "precision must be one of auto, fp32, bf16, not 'fp8'"),
                            ({"threads": 0}, "threads must be a whole number of at least 1"),
                            ({"threads": 1.5}, "threads must be"), ({"path": 5}, "load takes a model file's path"),
                            ({"path": []}, "no model file given")):
        with pytest.raises(TaggerError, match=said):
            tagger.load(**{"path": pos_model, **arguments})


def test_tag_refuses_a_token_no_format_can_hold_and_keeps_spaces_inside_one(pos_model):
    model = tagger.load(pos_model)
    for tokens, where in ((["The", ""], "token 2"), (["a\tb"], "token 1"), (["The", "cat\n"], "token 2")):
        with pytest.raises(TaggerError, match=f"sentence 2, {where}: .* is not a word"):
            model.tag([["The", "cat"], tokens])
    assert model.tag([["New York", "sleeps"]])[0]["words"] == ["New York", "sleeps"]  # Vietnamese words hold spaces


def test_multitags_are_those_of_tagger_tag(pos_model, tmp_path):
    out = tmp_path / "multi.jsonl"
    run_cli("tag", "--model", str(pos_model), str(DATA / "sample.txt"), "--top-k", "3", "-o", str(out))
    lines = [line.split() for line in (DATA / "sample.txt").read_text(encoding="utf-8").splitlines()]
    assert tagger.load(pos_model).tag(lines, top_k=3) == jsonl(out)


@pytest.mark.parametrize("name,output_format", [("sample.conllu", None), ("heldout.txt", None),
                                                ("sample.txt", "tagged")])
def test_tag_file_writes_the_bytes_of_tagger_tag(pos_model, tmp_path, name, output_format):
    cli_out, api_out = tmp_path / "cli.out", tmp_path / "api.out"
    extra = ["--output-format", output_format] if output_format else []
    run_cli("tag", "--model", str(pos_model), str(DATA / name), "-o", str(cli_out), *extra)
    counts = tagger.load(pos_model).tag_file(DATA / name, api_out, format=output_format)
    assert api_out.read_bytes() == cli_out.read_bytes() and cli_out.stat().st_size > 0
    assert counts["sentences"] == len(list(formats.read(str(DATA / name))))
    stream = io.StringIO()  # streams in and out, as an engine hands a file's bytes over
    tagger.load(pos_model).tag_file(io.BytesIO((DATA / name).read_bytes()), stream, format=output_format)
    assert stream.getvalue().encode("utf-8") == cli_out.read_bytes()


def test_batch_tagger_rows_join_to_tagger_tag_output(pos_model, tmp_path):
    text = tmp_path / "in.txt"
    lines = (DATA / "heldout.txt").read_text(encoding="utf-8").splitlines()
    lines.insert(3, "   ")  # a blank row (Ray's read_text keeps lines of spaces): no sentence, as in `tagger tag`
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cli_out = tmp_path / "cli.conllu"
    run_cli("tag", "--model", str(pos_model), str(text), "--format", "text", "-o", str(cli_out))
    batch_tagger = tagger.BatchTagger(str(pos_model))
    rows = []
    for start in range(0, len(lines), 5):  # batches as an engine hands them over
        batch = batch_tagger({"text": lines[start:start + 5]})
        assert len(batch["conllu"]) == len(lines[start:start + 5])
        rows += batch["conllu"]
    assert rows[3] == "" and "".join(rows) == cli_out.read_text(encoding="utf-8")


def _threads_in_child(path: str) -> tuple[bool, int, int]:
    torch.set_num_threads(2)
    tagger.load(path)
    default = torch.get_num_threads()
    tagger.load(path, threads=3)
    return tagger.in_worker_process(), default, torch.get_num_threads()


def test_one_thread_by_default_in_a_worker_process(pos_model):
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(_threads_in_child, (str(pos_model),)) == (True, 1, 3)
    before = torch.get_num_threads()
    tagger.load(pos_model)
    assert not tagger.in_worker_process() and torch.get_num_threads() == before


def test_a_ray_worker_is_a_worker_process(monkeypatch):
    ray = types.SimpleNamespace(WORKER_MODE=1, get_runtime_context=lambda: types.SimpleNamespace(
        worker=types.SimpleNamespace(mode=ray_mode)))
    ray_mode = 1
    monkeypatch.setitem(sys.modules, "ray", ray)
    assert api.in_worker_process()
    ray_mode = 0  # the driver (SCRIPT_MODE)
    assert not api.in_worker_process()


def test_train_returns_its_summary_and_writes_the_model(trained):
    path, summary, epochs = trained
    assert summary["model"] == str(path) and path.is_file()
    assert (summary["task"], summary["name"], summary["dev_metric"]) == ("pos", "skip_lstm", "accuracy")
    assert summary["epochs"] == 3 == len(epochs) and summary["dev_held_out"] is False
    assert 0 < summary["best_dev"] <= 100 and summary["train_sentences"] == 8
    best = max(epochs, key=lambda record: record["dev"])
    # the saved model's dev score, its tag dictionary chosen on dev after training: never below the best epoch's
    assert summary["best_dev"] == pytest.approx(tagger.evaluate(path, DATA / "heldout.conllu", precision="fp32")["score"])
    assert summary["best_dev"] >= 100 * best["dev"] - 1e-9
    model = tagger.load(path)
    assert (model.module.config.hidden, model.module.config.layers, model.output_columns) == (16, 2, ["upos"])


def test_evaluate_scores_the_models_own_predictions(pos_model, tmp_path):
    gold = list(formats.read(str(DATA / "heldout.conllu")))
    predicted = tagger.load(pos_model).tag(gold)
    pairs = [(g, p) for s, r in zip(gold, predicted) for g, p in zip(s.columns["upos"], r["upos"])]
    result = tagger.evaluate(pos_model, DATA / "heldout.conllu")
    assert result["score"] == pytest.approx(100 * sum(g == p for g, p in pairs) / len(pairs))
    assert (result["score_name"], result["columns"], result["tagging"]["tokens"]) == ("accuracy", ["upos"], len(pairs))
    done = CliRunner().invoke(cli, ["evaluate", "--model", str(pos_model), str(DATA / "heldout.conllu"), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["tagging"]["accuracy"] == pytest.approx(result["score"])
    with pytest.raises(TaggerError, match="no gold 'upos'"):
        tagger.evaluate(pos_model, DATA / "sample.txt")
    # as the command: unseen words (those not in the training file, here given) and multi-tagging
    seen = {word for sentence in formats.read(str(DATA / "sample.conllu")) for word in sentence.words}
    done = CliRunner().invoke(cli, ["evaluate", "--model", str(pos_model), str(DATA / "heldout.conllu"), "--json",
                                    "--beta", "0.1", "--train", str(DATA / "sample.conllu")])
    result = tagger.evaluate(pos_model, DATA / "heldout.conllu", beta=0.1, train_words=seen)
    command = json.loads(done.stdout)
    assert result["tagging"]["unseen"] == command["tagging"]["unseen"] and result["tagging"]["unseen"]["tokens"] > 0
    assert result["multitag"] == command["multitag"] and result["multitag"]["beta"] == 0.1
    for beta in (1.5, float("nan"), -0.5):  # as the command refuses them
        with pytest.raises(TaggerError, match="must be between 0 and 1"):
            tagger.evaluate(pos_model, DATA / "heldout.conllu", beta=beta)


def test_parser_records_are_heads_and_labels_as_tagger_tag_writes(parser_model, tmp_path):
    out = tmp_path / "parsed.jsonl"
    run_cli("tag", "--model", str(parser_model), str(DATA / "heldout.conllu"), "--output-format", "jsonl",
            "-o", str(out))
    model = tagger.load(parser_model)
    records = model.tag(list(formats.read(str(DATA / "heldout.conllu"))))
    assert records == jsonl(out) and set(records[0]) == {"words", "head", "deprel"}
    assert all(isinstance(h, int) for h in records[0]["head"])
    with pytest.raises(TaggerError, match="the input has no UPOS.*pass allow_missing_columns=True"):
        model.tag([["The", "cat", "sat", "on", "the", "mat"]])
    first = next(iter(formats.read(str(DATA / "heldout.conllu"))))
    assert model.tag([[], first]) == [{"words": [], "head": [], "deprel": []}, records[0]]  # no words, no tree to parse
    result = tagger.evaluate(model, DATA / "heldout.conllu")
    assert result["score_name"].startswith("LAS") and result["parsing"]["all_words"]["words"] > 0


def test_a_taggers_records_feed_a_parser(pos_model, parser_model):
    """model.tag takes the records model.tag gives: their columns are the parser's input (a
    record's keys were read as its tokens: 'words', 'upos')."""
    sentences = list(formats.read(str(DATA / "heldout.conllu")))
    tagged = tagger.load(pos_model).tag([s.words for s in sentences])
    parser = tagger.load(parser_model)
    parsed = parser.tag(tagged)
    by_hand = parser.tag([formats.Sentence(r["words"], {"upos": r["upos"]}) for r in tagged])
    assert parsed == by_hand and [r["words"] for r in parsed] == [s.words for s in sentences]
    with pytest.raises(TaggerError, match="sentence 1: its 'upos' holds 1 values for 3 words"):
        parser.tag([{"words": ["a", "b", "c"], "upos": ["X"]}])
    with pytest.raises(TaggerError, match="sentence 1: a record given to model.tag needs its 'words'"):
        parser.tag([{"tokens": ["a"]}])


def test_input_in_another_tag_set_is_warned_of(parser_model, capsys):
    """A parser given tags it never saw in training (CoNLL-X CPOSTAG for a UPOS parser) reads
    them as unknown: a warning says so, once; its own tag set says nothing."""
    sentences = list(formats.read(str(DATA / "heldout.conllu")))
    parser = tagger.load(parser_model)
    parser.tag(sentences)
    assert capsys.readouterr().err == ""
    other = [formats.Sentence(s.words, {"upos": ["N" if u == "NOUN" else "V" if u == "VERB" else "Misc"
                                                 for u in s.columns["upos"]]}) for s in sentences]
    parser.tag(other)
    err = capsys.readouterr().err
    assert err.count("warning: ") == 1 and "of the input's UPOS values ('" in err and "never saw in training" in err


def test_import_tagger_does_not_import_torch():
    # nor does the API module: tagger.load chooses the engine first (tagger.engines), torch only where needed
    code = ("import sys, tagger; print('torch' in sys.modules, callable(tagger.load), 'torch' in sys.modules, "
            "'numpy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.stdout.split() == ["False", "True", "False", "False"], done.stderr
