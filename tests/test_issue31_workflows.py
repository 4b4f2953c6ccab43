"""Issue 31, items 9-12 (parts): the documented workflows that did not work.

9. trees tagged ``XX`` (a constituency parser on plain text) or with UPOS could not be scored
   against gold ``.mrg`` trees (COLLINS.prm deletes punctuation by its PTB tag);
10. ``--pos-model`` took a tagger of any column as the parser's POS;
11. ``tag --format columns`` without ``--columns`` read CoNLL-U's ID as the word, and a column
    file's own header was ignored;
12. ``--task pipeline --max-epochs`` did not reach its tagger and tokenizer; a missing-heads hint
    named ``--column``; docs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tagger import formats, model_file
from tagger.corpus.trees import Tree
from tagger.errors import TaggerError
from tests.helpers import DATA, ROOT, assert_one_line_error, invoke

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest

UPOS = {".": "PUNCT", ",": "PUNCT", "DT": "DET", "NN": "NOUN", "NNS": "NOUN", "NNP": "PROPN", "IN": "ADP",
        "TO": "PART", "VB": "VERB", "VBD": "VERB", "VBP": "VERB", "JJ": "ADJ", "RB": "ADV", "CD": "NUM", "UH": "INTJ"}


def parsed_trees(retag) -> str:
    """``data/sample.mrg`` as a parser gives it over the gold words: one tree a line, no
    ``-NONE-`` leaves (nor the constituents left empty), every tag put through ``retag``."""
    lines = []
    for sentence in formats.read(DATA / "sample.mrg"):
        text = re.sub(r"\((\S+) \(-NONE- [^()]*\)\) ?", "", sentence.tree.bracketed())
        lines.append(re.sub(r"\((\S+) ([^()\s]+)\)", lambda m: f"({retag(m.group(1))} {m.group(2)})", text))
    return "\n".join(lines) + "\n"


def pair(tmp_path: Path, retag, copies: int = 1) -> tuple[Path, Path]:
    gold, pred = tmp_path / "gold.mrg", tmp_path / "parsed.trees"
    gold.write_text((DATA / "sample.mrg").read_text(encoding="utf-8") * copies, encoding="utf-8")
    pred.write_text(parsed_trees(retag) * copies, encoding="utf-8")
    return gold, pred


# --- 9. scoring trees of another tagset -------------------------------------------------------------


@pytest.mark.parametrize("retag", [lambda tag: "XX", lambda tag: UPOS[tag]], ids=["XX", "UPOS"])
def test_trees_of_another_tagset_are_scored_with_the_gold_tags_and_a_note(tmp_path, retag):
    gold, pred = pair(tmp_path, retag, copies=3)  # 12 sentences: past EVALB's MAX_ERROR 10
    done = invoke("evaluate", "--gold", gold, "--pred", pred, "--json")
    assert done.exit_code == 0, done.output
    const = json.loads(done.stdout)["const"]
    assert const["preterminals"] == "gold"
    assert (const["all"]["valid_sentences"], const["all"]["error_sentences"]) == (12, 0)
    assert const["all"]["f1"] == pytest.approx(100.0)  # the brackets are the gold ones
    note = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(note) == 1 and note[0].startswith(f"note: {pred}: its trees' part-of-speech tags")
    assert "gold tags in their place" in note[0] and "XPOS tagger" in note[0]
    table = invoke("evaluate", "--gold", gold, "--pred", pred)
    assert table.exit_code == 0 and "tagging accuracy % (gold tags)" in table.stdout
    evalb = invoke("evaluate", "--gold", gold, "--pred", pred, "--evalb")
    assert evalb.exit_code == 0 and "Number of Valid sentence  =     12" in evalb.stdout


def test_predicted_preterminals_are_evalbs_errors_with_the_cause_and_the_fix(tmp_path):
    gold, pred = pair(tmp_path, lambda tag: "XX", copies=3)
    done = invoke("evaluate", "--gold", gold, "--pred", pred, "--preterminals", "predicted")
    assert_one_line_error(done, "Length unmatch", "where EVALB stops", "words whose tag the parameter file deletes",
                          "--preterminals gold")


def test_a_length_unmatch_of_empty_elements_the_parameter_file_keeps_says_so(tmp_path):
    """Gold trees with -NONE- against a parse without them, scored with a parameter file that
    does not delete -NONE-: the hint names the empty elements, not punctuation or --preterminals."""
    gold = tmp_path / "gold.trees"
    gold.write_text("".join(f"(S (NP (-NONE- *)) (NP (NN w{i})) (VP (VB go)))\n" for i in range(12)))
    pred = tmp_path / "pred.trees"
    pred.write_text("".join(f"(S (NP (NN w{i})) (VP (VB go)))\n" for i in range(12)))
    prm = tmp_path / "keep.prm"
    prm.write_text("MAX_ERROR 10\nLABELED 1\nDELETE_LABEL TOP\n")
    done = invoke("evaluate", "--gold", gold, "--pred", pred, "--evalb-params", prm, "--preterminals", "gold")
    assert_one_line_error(done, "Length unmatch", "empty elements (-NONE-)", "DELETE_LABEL -NONE-")
    assert "--preterminals gold scores" not in done.output


def test_a_ptb_taggers_errors_are_no_other_tagset(tmp_path):
    wrong = iter(range(1000))
    gold, pred = pair(tmp_path, lambda tag: "VB" if tag == "NN" and next(wrong) == 0 else tag)
    done = invoke("evaluate", "--gold", gold, "--pred", pred, "--json")
    assert done.exit_code == 0 and done.stderr == "", done.output
    const = json.loads(done.stdout)["const"]
    assert const["preterminals"] == "predicted" and const["all"]["correct_tags"] == const["all"]["words"] - 1
    forced = json.loads(invoke("evaluate", "--gold", gold, "--pred", pred, "--json", "--preterminals", "gold").stdout)
    assert forced["const"]["preterminals"] == "gold"
    assert forced["const"]["all"]["correct_tags"] == forced["const"]["all"]["words"]


def test_gold_preterminals_go_on_the_same_words_only():
    from tagger.evaluation.evalb import foreign_tags, with_gold_preterminals

    gold = Tree("", (Tree("S", (Tree("NP", (Tree("-NONE-", ("*",)),)), Tree("VB", ("Go",)), Tree(".", ("!",)))),))
    test = Tree("", (Tree("S", (Tree("XX", ("Go",)), Tree("XX", ("!",)))),))
    assert with_gold_preterminals(gold, test) == Tree("", (Tree("S", (Tree("VB", ("Go",)), Tree(".", ("!",)))),))
    other = Tree("S", (Tree("XX", ("Stop",)), Tree("XX", ("!",))))
    assert with_gold_preterminals(gold, other) is other  # other words: EVALB's error, as before
    assert with_gold_preterminals(gold, None) is None
    assert foreign_tags([gold], [test]) == ["XX"] and foreign_tags([gold], [gold]) is None


# --- a tiny tagger and parser, saved untrained ---------------------------------------------------


def saved_tagger(path: Path, column: str, data: str) -> Path:
    from tagger.models.skip_lstm import SkipLSTMTagger, TaggerConfig

    config = TaggerConfig(column=column, layers=1, hidden=8, word_dim=8, char_dim=4)
    model_file.save(path, SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, list(formats.read(DATA / data)))),
                    {})
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    from tagger.models.transition_parser import ParserConfig, TransitionParser

    folder = tmp_path_factory.mktemp("models")
    config = ParserConfig(tag_column="upos", hidden=8, word_dim=8, tag_dim=8, label_dim=8, precompute=50)
    sentences = list(formats.read(DATA / "sample.conllu"))
    model_file.save(folder / "dep.model", TransitionParser(config, TransitionParser.vocabs_from(config, sentences)), {})
    return {"ccg": saved_tagger(folder / "ccg.tagger", "supertag", "sample.auto"),
            "upos": saved_tagger(folder / "upos.tagger", "upos", "sample.conllu"), "dep": folder / "dep.model"}


# --- 10. --pos-model of another column -----------------------------------------------------------------


def test_a_supertagger_is_no_parsers_pos_model(models, tmp_path):
    from tagger.training.run import retag

    with pytest.raises(TaggerError, match="this tagger predicts supertag, not the upos the parser reads"):
        retag(str(models["ccg"]), "upos", list(formats.read(DATA / "sample.conllu")))
    out = tmp_path / "dep.model"
    done = invoke("train", "--task", "dep", "--train", "data/sample.conllu", "--pos-model", models["ccg"], "--out", out,
                  "--max-epochs", "1", "--threads", "1")
    assert_one_line_error(done, "--pos-model", "predicts supertag", "give a tagger of upos")
    assert not out.exists()


def test_a_parser_chained_after_a_supertagger_is_refused(models):
    done = invoke("tag", "--model", models["ccg"], "--model", models["dep"], stdin="The cat sat .\n")
    assert_one_line_error(done, "the input has no UPOS")
    assert done.stdout == ""


# --- 11. column files: --format columns without a layout, and a file's own header --------------------


def test_tag_refuses_format_columns_without_a_layout_as_convert_does(models, tmp_path):
    done = invoke("tag", "--model", models["upos"], "--format", "columns", "data/sample.conllu")
    assert_one_line_error(done, "data/sample.conllu:", "reading the 'columns' format needs --columns")
    assert done.stdout == ""
    convert = invoke("convert", "--from", "columns", "--to", "conllu", "data/sample.conllu")
    assert_one_line_error(convert, "reading the 'columns' format needs --columns")
    train = invoke("train", "--task", "pos", "--format", "columns", "--train", "data/sample.conllu", "--out",
                   tmp_path / "never.tagger", "--max-epochs", "1")
    assert_one_line_error(train, "reading the 'columns' format needs --columns")
    given = invoke("tag", "--model", models["upos"], "--format", "columns", "--columns", "form=2", "data/sample.conllu")
    assert given.exit_code == 0 and given.stdout.splitlines()[0].split("\t")[1] == "The"


def test_tag_reads_a_column_file_by_its_own_header(models):
    rows = [line.split("\t") for line in (DATA / "sample.tsv").read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]
    for args in (["data/sample.tsv"], ["--format", "columns", "data/sample.tsv"]):
        done = invoke("tag", "--model", models["upos"], *args)
        assert done.exit_code == 0, done.output
        out = [line.split("\t") for line in done.stdout.splitlines() if line and not line.startswith("#")]
        assert [(r[1], r[4]) for r in out] == [(r[0], r[2]) for r in rows]  # words, and XPOS from column 3
    piped = invoke("tag", "--model", models["upos"], stdin=(DATA / "sample.tsv").read_text(encoding="utf-8"))
    assert piped.exit_code == 0 and "as its header says (--columns form=1,upos=2,xpos=3)" in piped.stderr
    converted = invoke("convert", "--to", "conllu", "data/sample.tsv")  # convert reads the header too
    assert converted.exit_code == 0 and converted.stdout.startswith("1\tThe\t_\tDET\tDT\t"), converted.output
    [first] = list(formats.read(DATA / "sample.tsv"))[:1]
    assert first.columns["upos"][:2] == ["DET", "NOUN"] and first.columns["xpos"][:2] == ["DT", "NN"]


def test_a_bad_layout_in_a_header_is_one_line(models, tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("# comment\n# read with --columns form=1,form=2\nThe\tDT\n\n", encoding="utf-8")
    assert_one_line_error(invoke("tag", "--model", models["upos"], path), f"{path}:2:", "the header's --columns",
                          "'form' given twice")


# --- 12. --task pipeline --max-epochs, hints, docs ----------------------------------------------------


class _Stop(Exception):
    pass


def test_pipeline_max_epochs_caps_its_taggers_and_tokenizer(monkeypatch, tmp_path):
    from tagger.training import jackknife, pipeline, run
    from tagger.training.run import Data, DataSpec, TrainRequest

    seen: dict[str, object] = {}

    def taggers(request, columns, say):
        seen["taggers"] = request
        raise _Stop

    monkeypatch.setattr(jackknife, "jackknife_taggers", taggers)
    sample = DataSpec(str(DATA / "sample.conllu"))
    for pos_set, epochs in (((), 1), (("max_epochs=3",), 3)):
        request = TrainRequest(task="pipeline", train=sample, dev=sample, out=str(tmp_path / "en.model"), max_epochs=1,
                               jackknife=jackknife.JackknifeSettings(0, overrides=pos_set))
        with pytest.raises(_Stop):
            pipeline.train(request, None, lambda line: None)
        chosen = seen["taggers"]
        data = Data(list(formats.read(DATA / "sample.conllu")), [], "")
        _, training = jackknife.tagger_configs(chosen, ["upos"], data)
        assert training.max_epochs == epochs
    monkeypatch.setattr(run, "train", lambda request, reporter, say: seen.update(tokenizer=request))
    pipeline.train_tokenizer(request, tmp_path, None, lambda line: None)
    assert seen["tokenizer"].task == "tokenize" and seen["tokenizer"].max_epochs == 1


def test_missing_heads_do_not_suggest_another_column(tmp_path):
    path = tmp_path / "no-heads.conllu"
    path.write_text("1\tThe\t_\tDET\tDT\t_\t_\t_\t_\t_\n2\tcat\t_\tNOUN\tNN\t_\t_\t_\t_\t_\n\n", encoding="utf-8")
    done = invoke("train", "--task", "dep", "--train", path, "--dev", path, "--out", tmp_path / "d.model",
                  "--max-epochs", "1")
    assert_one_line_error(done, "no 'head' annotation", "learns from it")
    assert "--column" not in done.stderr


def test_docs_name_the_real_options_and_what_crlf_and_a_bom_become(models, tmp_path):
    assert "--input-format" not in (DATA / "README.md").read_text(encoding="utf-8")
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert ("CoNLL-U input comes back byte for byte with only the predicted columns changed, but for two "
            "things") in readme
    assert "a leading BOM is dropped and CRLF line ends are read as LF" in readme
    crlf = tmp_path / "crlf.conllu"
    crlf.write_bytes(b"\xef\xbb\xbf" + (DATA / "sample.conllu").read_bytes().replace(b"\n", b"\r\n"))
    plain = invoke("tag", "--model", models["upos"], DATA / "sample.conllu")
    windows = invoke("tag", "--model", models["upos"], crlf)
    assert windows.exit_code == 0 and windows.stdout_bytes == plain.stdout_bytes  # as the README says
