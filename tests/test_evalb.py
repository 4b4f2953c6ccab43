"""EVALB's bracket scores (tagger.evaluation.evalb): its own sample reproduced byte for byte, its
parameter files, its rules one at a time, and the metric object."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tagger import formats
from tagger.cli.main import cli
from tagger.corpus.trees import Tree
from tagger.errors import TaggerError
from tagger.evaluation.evalb import (
    COLLINS,
    ERROR,
    OK,
    SKIP,
    BracketMetric,
    EvalbParams,
    read_params,
    render_errors,
    render_evalb,
    score_sentence,
    score_trees,
)

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "evalb-sample"


@pytest.fixture
def sample() -> Path:
    if not SAMPLE.is_dir():
        pytest.skip(f"EVALB sample not found at {SAMPLE}")
    return SAMPLE


def trees(path: Path) -> list[Tree | None]:
    """The sentences of an EVALB file, a line each (a blank line: an empty test, EVALB's skip)."""
    return [s.tree for s in formats.read(path, "trees", blank_lines=True)]


def tree(text: str) -> Tree:
    (sentence,) = formats.read(io.StringIO(text), "trees")
    assert sentence.tree is not None
    return sentence.tree


@pytest.mark.parametrize("prm, rsl", [("COLLINS.prm", "collins.rsl"), ("sample.prm", "sample.rsl")])
def test_evalb_sample_reproduced_exactly(sample, prm, rsl):
    """Every per-sentence row, the totals line and both summaries, as the C program printed them
    (and, for COLLINS.prm, its stderr: the error sentences)."""
    gold, test = trees(sample / "sample.gld"), trees(sample / "sample.tst")
    assert len(gold) == len(test) == 24
    metric = score_trees(gold, test, read_params(sample / prm))
    assert render_evalb(metric) == (sample / rsl).read_text()
    if prm == "COLLINS.prm":
        assert render_errors(metric) == (sample / "collins.err").read_text()
        assert (metric.all.recall, metric.all.precision) == pytest.approx((100 * 82 / 94, 100 * 82 / 91))
        assert [r.status for r in metric.rows].count(SKIP) == 2 and len(metric.errors) == 6
        assert metric.rows[21].length == 44 and metric.short.sentences == 23  # over CUTOFF_LEN: "All" only


def test_collins_is_collins_prm(sample):
    assert read_params(sample / "COLLINS.prm") == COLLINS
    params = read_params(sample / "sample.prm")
    assert params.eq_labels == (("T", "TT"),) and params.eq_words == (("This", "this"),)
    assert "." not in params.delete_labels and params.labeled and params.max_error == 10


@pytest.mark.parametrize("line, message", [
    ("SPEED 3", "unknown EVALB parameter 'SPEED'"),
    ("  LABELED 1", "unknown EVALB parameter ''"),
    ("EQ_LABEL ADVP", "EQ_LABEL needs two values"),
    ("CUTOFF_LEN forty", "CUTOFF_LEN needs an integer"),
    ("DEBUG", "DEBUG needs an integer"),
])
def test_parameter_file_errors_name_file_and_line(tmp_path, line, message):
    path = tmp_path / "my.prm"
    path.write_text(f"# comment\n\nLABELED 0   \n{line}\n")
    with pytest.raises(TaggerError) as info:
        read_params(path)
    assert (info.value.file, info.value.line) == (str(path), 4) and message in info.value.message
    path.write_text("LABELED 0\nQUOTE_LABEL POS\nCUTOFF_LEN 20 words\nDELETE_LABEL_FOR_LENGTH -NONE-\n#EQ_WORD a b\n")
    assert read_params(path) == EvalbParams(labeled=False, cutoff_len=20, quote_labels=("POS",),
                                            delete_labels_for_length=("-NONE-",))


GOLD = "(S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (PRT (RP down)) (-NONE- *T*)) (. .))"


def test_the_rules_one_at_a_time():
    gold = tree(GOLD)
    same = score_sentence(gold, gold)
    # S, NP, VP, PRT; the full stop and the trace are not scored; the stop counts in the length.
    assert (same.status, same.length, same.matched, same.gold, same.test, same.words, same.correct_tags) == \
        (OK, 5, 4, 4, 4, 4, 4)
    # Function tags cut, ADVP = PRT, the punctuation tag not scored, a wrong tag counted.
    test = tree("(S (NP (DT The) (NN cat)) (VP (VBN sat) (ADVP (RP down))) (: .))")
    row = score_sentence(gold, test)
    assert (row.matched, row.test, row.correct_tags, row.crossing) == (4, 4, 3, 0)
    # A crossing bracket, and one over only deleted leaves (gone).
    test = tree("(S (DT The) (X (NN cat) (VBD sat)) (PRT (RP down)) (Y (. .)))")
    row = score_sentence(gold, test)
    assert (row.matched, row.gold, row.test, row.crossing) == (2, 4, 3, 1)
    relabelled = tree("(S (NP (DT The) (NN cat)) (X (VBD sat) (PRT (RP down))) (. .))")
    assert score_sentence(gold, relabelled).matched == 3
    assert score_sentence(gold, relabelled, replace(COLLINS, labeled=False)).matched == 4
    # Errors: other words, another length; an empty test: skipped.
    assert score_sentence(gold, tree(GOLD.replace("cat", "dog"))).error == "Words unmatch (cat|dog)"
    assert score_sentence(gold, tree(GOLD.replace("(. .)", "(NN .)"))).error == "Length unmatch (4|5)"
    assert score_sentence(gold, None) == score_sentence(gold, []) == score_sentence(gold, [], id=1)
    assert score_sentence(gold, None).status == SKIP and score_sentence(None, gold).status == ERROR


def test_the_unlabelled_outer_bracket_is_a_wrapper():
    """``( (S ...) )`` scores as ``(S ...)``, and under COLLINS.prm as ``(TOP (S ...))``."""
    bare = tree(GOLD)
    wrapped, top = tree(f"( {GOLD} )"), tree(f"(TOP {GOLD})")
    test = tree("(S (DT The) (X (NN cat) (VBD sat)) (PRT (RP down)) (. .))")
    expected = score_sentence(bare, test)
    assert score_sentence(wrapped, tree(f"( {test.bracketed()} )")) == expected
    assert score_sentence(top, test) == expected == score_sentence(wrapped, test)
    keep_top = replace(COLLINS, delete_labels=COLLINS.delete_labels[1:])
    assert score_sentence(top, test, keep_top).gold == expected.gold + 1  # TOP kept: one more bracket
    assert score_sentence(wrapped, test, keep_top).gold == expected.gold  # never the unlabelled one
    # Several trees on a line: one sentence, no bracket around them.
    assert score_sentence(tree("(A (P a)) (B (Q b))"), [tree("(A (P a))"), tree("(B (Q b))")]).matched == 2


def test_a_dropped_quote_is_put_back_with_quote_labels():
    """The Ellis fix: gold tags the quote POS, the parser '' (a deleted label): EVALB put the
    word back where QUOTE_LABEL names the tags, rather than call the lengths different."""
    gold = tree("(S (NP (NP (NNP Kim) (POS ')) (NN dog)) (VP (VBD ran)))")
    test = tree("(S (NP (NP (NNP Kim) ('' ')) (NN dog)) (VP (VBD ran)))")
    assert score_sentence(gold, test).error == "Length unmatch (4|3)"
    params = EvalbParams(delete_labels=COLLINS.delete_labels, quote_labels=("POS", "''"))
    row = score_sentence(gold, test, params)
    assert (row.status, row.words, row.correct_tags, row.matched, row.gold, row.test) == (OK, 4, 3, 4, 4, 4)


def test_evalb_stops_after_max_error_errors():
    gold, wrong = tree(GOLD), tree(GOLD.replace("cat", "dog"))
    metric = score_trees([gold] * 3, [wrong, wrong, gold], EvalbParams(max_error=1))
    assert len(metric.errors) == 2 and metric.all.valid == 1  # the 2nd error is still scored, as EVALB
    with pytest.raises(TaggerError, match="sentence 3: Words unmatch.*error 3, where EVALB stops") as info:
        score_trees([gold] * 3, [wrong] * 3, EvalbParams(max_error=1), "p.trees", [5, 6, 7])
    assert (info.value.file, info.value.line) == ("p.trees", 7)
    with pytest.raises(TaggerError, match="has 2 trees, the gold one 3"):
        score_trees([gold] * 3, [gold] * 2)


def test_metric_starts_empty_adds_and_orders():
    gold, test = tree(GOLD), tree("(S (DT The) (X (NN cat) (VBD sat)) (PRT (RP down)) (. .))")
    empty = BracketMetric()
    assert empty.score == 0.0 and empty.score_name == "bracket F1" and empty.params == COLLINS
    perfect, worse = BracketMetric(), BracketMetric()
    perfect.update(gold, gold)
    row = worse.update(gold, test)
    assert row.id == 1 and perfect.score == 1.0 and worse < perfect
    both = perfect + worse
    assert [r.id for r in both.rows] == [1, 2] and both.all.matched == 6 and perfect.all.sentences == 1
    assert sum([perfect, worse]).to_dict() == both.to_dict()
    assert both.score == pytest.approx(2 * 6 / (8 + 7))
    summary = both.to_dict()
    assert summary["cutoff_len"] == 40 and summary["all"]["f1"] == pytest.approx(100 * both.score)
    assert summary["all"]["valid_sentences"] == 2 and summary["short"] == summary["all"]
    other = BracketMetric(EvalbParams())
    other.update(gold, gold)
    assert (BracketMetric() + other).params == other.params == sum([other]).params  # an empty side: the other's
    with pytest.raises(ValueError, match="different parameters"):
        perfect + other


def test_no_brackets_at_all_prints_evalb_nan():
    metric = BracketMetric()
    metric.update(tree("(NN a)"), tree("(NN a)"))
    text = render_evalb(metric)
    assert "Bracketing FMeasure       =   -nan" in text and metric.score == 0.0
    assert "\n      1     1   100.00\n" in text  # no bracket totals when there are none


# --- tagger evaluate ---------------------------------------------------------------------------------------


def evaluate(*args) -> Result:
    return CliRunner().invoke(cli, ["evaluate", *map(str, args)])


def test_cli_prints_evalb_report_exactly(sample):
    """One-tree-a-line files are detected as such and read line by line, as EVALB reads them."""
    result = evaluate("--gold", sample / "sample.gld", "--pred", sample / "sample.tst", "--evalb")
    assert result.exit_code == 0, result.output
    assert result.stdout == (sample / "collins.rsl").read_text() and result.stderr == (sample / "collins.err").read_text()
    result = evaluate("--gold", sample / "sample.gld", "--pred", sample / "sample.tst", "--evalb",
                      "--evalb-params", sample / "sample.prm")
    assert result.stdout == (sample / "sample.rsl").read_text()
    scores = json.loads(evaluate("--gold", sample / "sample.gld", "--pred", sample / "sample.tst", "--json").stdout)
    assert scores["column"] is None and scores["evalb_params"] == "COLLINS.prm (built in)"
    assert scores["const"]["all"]["f1"] == pytest.approx(88.648648) and scores["const"]["short"]["recall"] == 80.0
    table = evaluate("--gold", sample / "sample.gld", "--pred", sample / "sample.tst", "--task", "const")
    assert table.exit_code == 0 and "bracket F1 %" in table.stdout and "88.65" in table.stdout and "len<=40" in table.stdout


WSJ = ["wsj_0001.mrg", "wsj_0002.mrg", "wsj_0003.mrg"]


def test_cli_scores_mrg_against_trees(shared_data, tmp_path):
    folder = shared_data / "ptb-wsj-sample" / "combined"
    gold = tmp_path / "gold.mrg"
    gold.write_text("".join((folder / name).read_text() for name in WSJ))
    pred = tmp_path / "pred.trees"
    converted = CliRunner().invoke(cli, ["convert", "--to", "trees", str(gold)])
    assert converted.exit_code == 0
    pred.write_text(converted.stdout)
    scores = json.loads(evaluate("--gold", gold, "--pred", pred, "--json").stdout)["const"]["all"]
    assert (scores["f1"], scores["complete_match"], scores["tagging_accuracy"]) == (100.0, 100.0, 100.0)
    assert scores["valid_sentences"] == 33 and scores["gold_brackets"] == scores["matched_brackets"] > 600
    # One NP relabelled QP and one bracket (ADJP) removed, in the first sentence: 11 brackets there.
    lines = converted.stdout.splitlines()
    lines[0] = lines[0].replace("(NP (CD 61) (NNS years))", "(QP (CD 61) (NNS years))")
    lines[0] = lines[0].replace("(ADJP (QP (CD 61) (NNS years)) (JJ old))", "(QP (CD 61) (NNS years)) (JJ old)")
    pred.write_text("\n".join(lines) + "\n")
    result = evaluate("--gold", gold, "--pred", pred, "--evalb")
    first = result.stdout.splitlines()[3].split()
    assert first[:8] == ["1", "18", "0", "81.82", "90.00", "9", "11", "10"]
    worse = json.loads(evaluate("--gold", gold, "--pred", pred, "--json").stdout)["const"]["all"]
    assert worse["matched_brackets"] == scores["matched_brackets"] - 2
    assert worse["test_brackets"] == scores["test_brackets"] - 1 and worse["f1"] < 100.0
    # Tagging is still there to ask for.
    tagging = json.loads(evaluate("--gold", gold, "--pred", pred, "--task", "pos", "--json").stdout)
    assert tagging["column"] == "xpos" and tagging["tagging"]["accuracy"] == 100.0


def test_cli_const_errors(tmp_path):
    conllu = tmp_path / "a.conllu"
    conllu.write_text("1\ta\t_\tX\t_\t_\t0\troot\t_\t_\n\n")
    trees = tmp_path / "a.trees"
    trees.write_text("(S (X a))\n")
    assert "gold file has no trees" in evaluate("--gold", conllu, "--pred", trees, "--task", "const").output
    assert "no trees were scored" in evaluate("--gold", conllu, "--pred", conllu, "--evalb").output
    assert evaluate("--gold", trees, "--pred", trees, "--evalb", "--json").exit_code == 2
    for decoding in (["--beam", "5"], ["--constrained"]):  # not ignored: they are a model's
        refused = evaluate("--gold", trees, "--pred", trees, *decoding)
        assert refused.exit_code == 2 and "need --model" in refused.output
    bad = tmp_path / "bad.prm"
    bad.write_text("LABELLED 1\n")
    result = evaluate("--gold", trees, "--pred", trees, "--evalb-params", bad)
    assert result.exit_code == 1 and f"{bad}:1: unknown EVALB parameter 'LABELLED'" in result.output


class TreeModel:
    """A stand-in for a model that parses into :attr:`Sentence.tree`."""

    name = "const"
    reads_raw_text = False
    input_columns: tuple[str, ...] = ()
    known_input_values: dict = {}
    output_columns = ("tree",)

    def annotate(self, sentence, prediction) -> None:
        sentence.tree = prediction

    def set_decoding(self, beam=None, constrained=None) -> None:
        pass


def test_a_model_that_fills_trees_is_scored_by_evalb(monkeypatch, tmp_path):
    import tagger.inference
    import tagger.model_file
    import tagger.modules.precision
    # evaluate predicts through inference.annotate, which calls inference.predict

    data = tmp_path / "dev.trees"
    data.write_text(f"{GOLD}\n( {GOLD} )\n")
    flat = tree("(S (DT The) (NN cat) (VBD sat) (RP down) (. .))")
    monkeypatch.setattr(tagger.model_file, "load", lambda path, device: (TreeModel(), {}))
    monkeypatch.setattr(tagger.modules.precision, "apply", lambda model, precision, in_place: model)
    monkeypatch.setattr(tagger.inference, "predict", lambda model, sentences, *rest: [flat, tree(GOLD)])
    result = evaluate("--model", "m.tagger", data, "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)["const"]["all"]
    assert (scores["matched_brackets"], scores["gold_brackets"], scores["test_brackets"]) == (5, 8, 5)
    monkeypatch.setattr(tagger.inference, "predict", lambda model, sentences, *rest: [None, None])  # no trees made
    scores = json.loads(evaluate("--model", "m.tagger", data, "--json").stdout)["const"]["all"]
    assert scores["skip_sentences"] == 2  # the gold trees are never taken for the model's
