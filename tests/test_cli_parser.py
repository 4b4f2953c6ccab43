"""The parser through the CLI: train, bootstrap, chain after the tagger, evaluate, unlabelled data."""

from __future__ import annotations

import io
import json

import pytest

from tagger import formats
from tests.test_cli_tagger import SMALL, assert_one_line_error, run

FAST = ["--max-epochs", "3", "--threads", "1", "--quiet", "--json", "--set", "hidden=32", "--set", "word_dim=16",
        "--set", "tag_dim=16", "--set", "label_dim=16", "--set", "precompute=100"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parsers")
    ffn, lstm, pos = folder / "ffn.model", folder / "lstm.model", folder / "pos.tagger"
    for args in (
        ["--task", "dep", "--out", str(ffn), *FAST],
        ["--task", "dep", "--arch", "lstm", "--bootstrap", str(ffn), "--gates", "i,j,f,o", "--out", str(lstm), *FAST],
        ["--task", "pos", "--out", str(pos), "--max-epochs", "2", "--quiet", *SMALL],
    ):
        done = run("train", "--train", "data/sample.conllu", "--dev", "data/sample.conllu", *args)
        assert done.returncode == 0, done.stderr.decode()
    return ffn, lstm, pos


def test_raw_text_through_tagger_and_parser_gives_trees(models):
    _, lstm, pos = models
    tagged = run("tag", "--model", str(pos), stdin=b"The cat sat on the mat .\nDogs bark\n")
    assert tagged.returncode == 0, tagged.stderr.decode()
    parsed = run("tag", "--model", str(lstm), stdin=tagged.stdout)
    assert parsed.returncode == 0, parsed.stderr.decode()
    sentences = list(formats.read(io.BytesIO(parsed.stdout), "conllu"))
    assert [len(s) for s in sentences] == [7, 2]
    for sentence in sentences:
        heads = sentence.column("head")
        assert heads.count(0) == 1 and all(0 <= h <= len(sentence) for h in heads)
        assert sentence.has("upos")  # the tagger's column survives the parser


def test_evaluate_parser_gives_both_conventions(models):
    ffn, _, _ = models
    done = run("evaluate", "--model", str(ffn), "data/sample.conllu", "--json")
    assert done.returncode == 0, done.stderr.decode()
    parsing = json.loads(done.stdout)["parsing"]
    assert parsing["all_words"]["words"] > parsing["no_punct"]["words"] > 0
    assert 0 <= parsing["no_punct"]["las"] <= parsing["no_punct"]["uas"] <= 100


def test_bootstrap_from_a_tagger_is_refused(models, tmp_path):
    _, _, pos = models
    done = run("train", "--task", "dep", "--arch", "lstm", "--bootstrap", str(pos), "--train", "data/sample.conllu",
               "--dev", "data/sample.conllu", "--out", str(tmp_path / "x.model"), *FAST)
    assert done.returncode != 0 and "Traceback" not in done.stderr.decode()


def test_unlabelled_dp_file_trains_an_unlabelled_parser(tmp_path):
    out = tmp_path / "dp.model"
    done = run("train", "--task", "dep", "--column", "xpos", "--train", "data/sample.dp", "--dev", "data/sample.dp",
               "--out", str(out), *FAST)
    assert done.returncode == 0, done.stderr.decode()
    done = run("tag", "--model", str(out), "--output-format", "conllu", "data/sample.dp")
    sentences = list(formats.read(io.BytesIO(done.stdout), "conllu"))
    assert all(s.column("head").count(0) == 1 for s in sentences)


def test_parser_without_heads_is_a_one_line_error(tmp_path):
    assert_one_line_error(run("train", "--task", "dep", "--train", "data/sample.txt", "--dev", "data/sample.conllu",
                              "--out", str(tmp_path / "x.model"), *FAST), "head")
