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
    # The same counts computed here from the parser's own output (`tagger tag`) and the gold file.
    parsed = run("tag", "--model", str(ffn), "data/sample.conllu")
    assert parsed.returncode == 0, parsed.stderr.decode()
    counts = {"all_words": [0, 0, 0], "no_punct": [0, 0, 0]}  # words, right heads, right heads and labels
    for gold, pred in zip(formats.read("data/sample.conllu"), formats.read(io.BytesIO(parsed.stdout), "conllu")):
        for upos, gh, gr, ph, pr in zip(gold.columns["upos"], gold.columns["head"], gold.columns["deprel"],
                                        pred.columns["head"], pred.columns["deprel"]):
            for convention in ("all_words",) + (("no_punct",) if upos != "PUNCT" else ()):
                right = [1, gh == ph, gh == ph and gr.split(":")[0] == pr.split(":")[0]]
                counts[convention] = [a + b for a, b in zip(counts[convention], right)]
    for convention, (words, heads, both) in counts.items():
        got = parsing[convention]
        assert (got["words"], got["uas_correct"], got["las_correct"]) == (words, heads, both), convention
        assert got["las"] == pytest.approx(100 * both / words)
    assert parsing["all_words"]["words"] > parsing["no_punct"]["words"] > 0


def test_bootstrap_from_a_tagger_is_refused(models, tmp_path):
    _, _, pos = models
    done = run("train", "--task", "dep", "--arch", "lstm", "--bootstrap", str(pos), "--train", "data/sample.conllu",
               "--dev", "data/sample.conllu", "--out", str(tmp_path / "x.model"), *FAST)
    assert done.returncode == 1
    assert done.stderr.decode() == f"error: {pos}: --bootstrap needs a trained transition_parser model, not a skip_lstm\n"


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
