"""The parser through the CLI: train, bootstrap, chain after the tagger, evaluate, unlabelled data.

The commands run in this process (click's runner); conftest trains the FFN parser and the tagger
once per session."""

from __future__ import annotations

import io
import json

import pytest

from tagger import formats
from tests.helpers import FAST, assert_one_line_error, invoke


@pytest.fixture(scope="module")
def models(ffn_parser, sample_tagger, tmp_path_factory):
    """(FFN parser, LSTM parser bootstrapped from it through ``--bootstrap --gates``, POS tagger)."""
    lstm = tmp_path_factory.mktemp("parsers") / "lstm.model"
    done = invoke("train", "--train", "data/sample.conllu", "--dev", "data/sample.conllu", "--task", "dep", "--arch", "lstm",
                  "--bootstrap", ffn_parser, "--gates", "i,j,f,o", "--out", lstm, *FAST)
    assert done.exit_code == 0, done.output
    return ffn_parser, lstm, sample_tagger


def test_raw_text_through_tagger_and_parser_gives_trees(models):
    _, lstm, pos = models
    tagged = invoke("tag", "--model", pos, stdin=b"The cat sat on the mat .\nDogs bark\n")
    assert tagged.exit_code == 0, tagged.output
    parsed = invoke("tag", "--model", lstm, stdin=tagged.stdout_bytes)
    assert parsed.exit_code == 0, parsed.output
    sentences = list(formats.read(io.BytesIO(parsed.stdout_bytes), "conllu"))
    assert [len(s) for s in sentences] == [7, 2]
    for sentence in sentences:
        heads = sentence.column("head")
        assert heads.count(0) == 1 and all(0 <= h <= len(sentence) for h in heads)
        assert sentence.has("upos")  # the tagger's column survives the parser


def test_evaluate_parser_gives_both_conventions(models):
    ffn, _, _ = models
    done = invoke("evaluate", "--model", ffn, "data/sample.conllu", "--json")
    assert done.exit_code == 0, done.output
    parsing = json.loads(done.stdout)["parsing"]
    # The same counts computed here from the parser's own output (`tagger tag`) and the gold file.
    parsed = invoke("tag", "--model", ffn, "data/sample.conllu")
    assert parsed.exit_code == 0, parsed.output
    counts = {"all_words": [0, 0, 0], "no_punct": [0, 0, 0]}  # words, right heads, right heads and labels
    for gold, pred in zip(formats.read("data/sample.conllu"), formats.read(io.BytesIO(parsed.stdout_bytes), "conllu")):
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
    done = invoke("train", "--task", "dep", "--arch", "lstm", "--bootstrap", pos, "--train", "data/sample.conllu",
                  "--dev", "data/sample.conllu", "--out", tmp_path / "x.model", *FAST)
    assert done.exit_code == 1 and isinstance(done.exception, SystemExit)
    assert done.stderr == f"error: {pos}: --bootstrap needs a trained transition_parser model, not a skip_lstm\n"


def test_unlabelled_dp_file_trains_an_unlabelled_parser(tmp_path):
    out = tmp_path / "dp.model"
    done = invoke("train", "--task", "dep", "--column", "xpos", "--train", "data/sample.dp", "--dev", "data/sample.dp",
                  "--out", out, *FAST)
    assert done.exit_code == 0, done.output
    done = invoke("tag", "--model", out, "--output-format", "conllu", "data/sample.dp")
    sentences = list(formats.read(io.BytesIO(done.stdout_bytes), "conllu"))
    assert all(s.column("head").count(0) == 1 for s in sentences)


def test_parser_without_heads_is_a_one_line_error(tmp_path):
    assert_one_line_error(invoke("train", "--task", "dep", "--train", "data/sample.txt", "--dev", "data/sample.conllu",
                                 "--out", tmp_path / "x.model", *FAST), "head")
