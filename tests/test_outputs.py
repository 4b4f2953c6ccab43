"""What a user sees: every prediction lands where the output format shows it, and a format that
cannot hold a prediction is refused with one line (``tagger tag`` and ``tagger convert``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from tagger import formats, model_file
from tagger.cli.main import cli
from tagger.config import build_config
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats.placement import check_output, map_columns, place
from tagger.models.skip_lstm import PRESETS, SkipLSTMTagger, TaggerConfig
from tagger.models.transition_parser import PRESETS as PARSER_PRESETS
from tagger.models.transition_parser import ParserConfig, TransitionParser

DATA = Path(__file__).resolve().parents[1] / "data"
CONLLU = DATA / "sample.conllu"


def run(*args: object, stdin: str | bytes | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=stdin)


def one_error(result) -> str:
    """The single ``error: ...`` line of a failed run (no traceback)."""
    assert result.exit_code == 1, (result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def conllu_rows(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


def saved_tagger(path: Path, column: str, sentences: list[Sentence], forced: str) -> Path:
    """An untrained tiny tagger of ``column`` whose every prediction is ``forced``."""
    overrides = [f"column={column}", "layers=1", "hidden=8", "word_dim=8"]
    config = build_config(TaggerConfig, PRESETS, None, overrides=overrides)
    model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, sentences)).eval()
    with torch.no_grad():
        model.output.bias[model.tag_vocab.index(forced)] = 100.0
    model_file.save(path, model, {})
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("output-models")
    ud = list(formats.read(CONLLU))
    ccg = list(formats.read(DATA / "sample.auto"))
    config = build_config(ParserConfig, PARSER_PRESETS, "ffn", overrides=["hidden=8", "word_dim=8", "tag_dim=8",
                                                                          "label_dim=8", "precompute=10"])
    parser = TransitionParser(config, TransitionParser.vocabs_from(config, ud))
    model_file.save(folder / "dep.model", parser, {})
    return {
        "ccg": saved_tagger(folder / "ccg.tagger", "supertag", ccg, "N"),
        "upos": saved_tagger(folder / "upos.tagger", "upos", ud, "NOUN"),
        "dep": folder / "dep.model",
    }


# --- the mapping itself (no model) -----------------------------------------------------------


def test_supertag_goes_to_misc_replacing_an_old_value():
    s = Sentence(["a", "b"], {"xpos": ["DT", "NN"], "misc": ["SpaceAfter=No|supertag=XX", "_"],
                              "supertag": ["NP/N", "N"]})
    placed, fields = place(s, "conllu", "misc", ["supertag"])
    assert placed.columns["misc"] == ["SpaceAfter=No|supertag=NP/N", "supertag=N"]
    assert placed.columns["xpos"] == ["DT", "NN"] and fields == {"misc"}


def test_supertag_in_xpos_moves_the_pos_tag_to_misc_or_cpostag():
    s = Sentence(["a"], {"xpos": ["DT"], "misc": ["supertag=XX"], "supertag": ["NP/N"]})
    placed, fields = place(s, "conllu", "xpos", ["supertag"])
    assert placed.columns["xpos"] == ["NP/N"] and placed.columns["misc"] == ["xpos=DT"]
    assert fields == {"xpos", "misc"}
    placed, fields = place(s, "conllx", "xpos", ["supertag"])
    assert placed.columns["xpos"] == ["NP/N"] and placed.columns["upos"] == ["DT"] and fields == {"xpos", "upos"}


def test_the_predicted_column_is_the_pos_tag_of_one_tag_formats():
    gold = {"upos": ["DET", "NOUN"], "xpos": ["DT", "NN"], "supertag": ["NP/N", "N"]}
    s = Sentence(["a", "b"], dict(gold))
    for fmt in ("tagged", "pipe", "pos"):
        assert place(s, fmt, shown=["upos"])[0].columns["xpos"] == ["DET", "NOUN"]
    assert place(s, "tagged", shown=["supertag"])[0].columns["xpos"] == ["NP/N", "N"]
    piped = place(s, "pipe", shown=["supertag"])[0]  # pipe has a field of its own for supertags
    assert piped.columns["xpos"] == ["DT", "NN"] and piped.columns["supertag"] == ["NP/N", "N"]
    assert s.columns == gold  # the record itself is left alone


def test_a_generic_column_goes_to_xpos_or_else_to_misc():
    s = Sentence(["a"], {"tag": ["T1"]})
    placed, fields = place(s, "conllu", shown=["tag"])
    assert placed.columns["xpos"] == ["T1"] and fields == {"xpos"}
    assert place(s, "conllx", shown=["tag"])[0].columns["xpos"] == ["T1"]
    assert place(s, "pipe", shown=["tag"])[0].columns["xpos"] == ["T1"]
    with_xpos = Sentence(["a"], {"xpos": ["DT"], "tag": ["T1"], "chunk": ["B-NP"]})
    kept = place(with_xpos, "conllu")[0]  # convert: a real XPOS is never overwritten
    assert kept.columns["xpos"] == ["DT"] and kept.columns["misc"] == ["tag=T1|chunk=B-NP"]
    predicted, fields = place(with_xpos, "conllu", shown=["tag"])  # tag: the prediction wins XPOS
    assert predicted.columns["xpos"] == ["T1"] and predicted.columns["misc"] == ["chunk=B-NP"] and fields == {"xpos"}
    with pytest.raises(TaggerError, match="CoNLL-X has no MISC column for the 'tag' column"):
        place(with_xpos, "conllx")
    feats = Sentence(["a"], {"xpos": ["DT"], "morph": ["Case=Nom|Number=Sing"]}, source="x.tsv", line=3)
    with pytest.raises(TaggerError, match="which MISC cannot carry") as info:
        place(feats, "conllu")
    assert (info.value.file, info.value.line) == ("x.tsv", 3)


@pytest.mark.parametrize("columns, fmt, supertag_in, message", [
    (["head", "deprel"], "tagged", "misc", "no place for the dependency tree"),
    (["head", "deprel"], "pipe", "misc", "no place for the dependency tree"),
    (["head", "deprel"], "msuper", "misc", "no place for the dependency tree"),
    (["supertag"], "conllx", "misc", "use --supertag-in xpos"),
    (["a", "b"], "conllx", "misc", "one generic column"),
    (["upos"], "conllu", "nowhere", "--supertag-in must be one of"),
    # a parser and a constituency parser chained: one format holds both (each other one pointed at the other)
    (["upos", "head", "deprel", "tree"], "trees", "misc", "both the dependency tree .* use --output-format jsonl$"),
    (["upos", "head", "deprel", "tree"], "conllu", "misc", "both the dependency tree .* use --output-format jsonl$"),
])
def test_check_output_refuses_what_a_format_cannot_hold(columns, fmt, supertag_in, message):
    with pytest.raises(TaggerError, match=message):
        check_output(columns, fmt, supertag_in)


@pytest.mark.parametrize("columns, fmt, supertag_in", [
    (["head", "deprel"], "conllu", "misc"), (["head", "deprel"], "conllx", "misc"), (["head", "deprel"], "jsonl", "misc"),
    (["supertag"], "conllx", "xpos"), (["supertag"], "tagged", "misc"), (["tag"], "pipe", "misc"),
    (["head", "deprel", "tree"], "jsonl", "misc"),
])
def test_check_output_accepts_what_a_format_holds(columns, fmt, supertag_in):
    check_output(columns, fmt, supertag_in)


def test_map_columns_brings_a_generic_column_back_out_of_conll():
    s = Sentence(["a"], {"tag": ["T1"], "chunk": ["B-NP"]})
    conllu = map_columns(s, "columns", "conllu", "misc")
    assert conllu.columns["xpos"] == ["T1"] and conllu.columns["misc"] == ["chunk=B-NP"]
    back = map_columns(conllu, "conllu", "columns", "misc", ["form", "tag", "chunk"])
    assert back.columns["tag"] == ["T1"] and back.columns["chunk"] == ["B-NP"]


def test_mrg_writer_refuses_a_sentence_without_a_tree():
    out = io.StringIO()
    with pytest.raises(TaggerError, match="no bracketed tree"):
        formats.write([Sentence(["x", "y"], {"xpos": ["A", "B"]})], out, "mrg")
    assert out.getvalue() == ""


# --- tagger tag ------------------------------------------------------------------------------


def test_ccg_supertags_are_in_the_default_conllu_output(models):
    result = run("tag", "--model", models["ccg"], "--threads", "1", stdin="The cat sat .\n")
    assert result.exit_code == 0, result.stderr
    rows = conllu_rows(result.stdout)
    assert len(rows) == 4 and all(row[9] == "supertag=N" and row[4] == "_" for row in rows)


def test_ccg_supertag_replaces_the_one_in_conllu_misc_and_nothing_else_changes(models):
    lines = ["# sent_id = 1", "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\tSpaceAfter=No|supertag=XX",
             "2\tcat\tcat\tNOUN\tNN\t_\t0\troot\t_\t_"]
    result = run("tag", "--model", models["ccg"], "--threads", "1", stdin="\n".join(lines) + "\n\n")
    assert result.exit_code == 0, result.stderr
    expected = [lines[0], lines[1].replace("supertag=XX", "supertag=N"), lines[2].replace("\t_\t_", "\t_\tsupertag=N")]
    assert result.stdout == "\n".join(expected) + "\n\n"


def test_ccg_supertag_in_xpos_as_convert_puts_it(models):
    text = "1\tThe\tthe\tDET\tDT\t_\t_\t_\t_\tsupertag=XX\n\n"
    result = run("tag", "--model", models["ccg"], "--supertag-in", "xpos", "--threads", "1", stdin=text)
    assert result.exit_code == 0, result.stderr
    assert conllu_rows(result.stdout) == [["1", "The", "the", "DET", "N", "_", "_", "_", "_", "xpos=DT"]]
    result = run("tag", "--model", models["ccg"], "--output-format", "conllx", "--supertag-in", "xpos",
                 "--threads", "1", stdin="The cat\n")
    assert result.exit_code == 0, result.stderr
    assert [row[4] for row in conllu_rows(result.stdout)] == ["N", "N"]


def test_ccg_supertags_in_tagged_output(models):
    result = run("tag", "--model", models["ccg"], "--output-format", "tagged", "--threads", "1", stdin="The cat\n")
    assert result.exit_code == 0 and result.stdout == "The/N cat/N\n", result.stderr


def test_ccg_to_conllx_without_supertag_in_xpos_is_refused_before_reading(models, tmp_path):
    missing = tmp_path / "missing.txt"
    result = run("tag", "--model", models["ccg"], "--output-format", "conllx", missing)
    assert "use --supertag-in xpos" in one_error(result) and result.stdout == ""


@pytest.mark.parametrize("fmt, expected", [("pipe", "The|NOUN|_ cat|NOUN|_ sat|NOUN|_"),
                                           ("tagged", "The/NOUN cat/NOUN sat/NOUN")])
def test_pos_model_output_shows_the_prediction_not_the_gold_xpos(models, fmt, expected):
    result = run("tag", "--model", models["upos"], "--output-format", fmt, "--threads", "1", CONLLU)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith(expected)


@pytest.mark.parametrize("fmt", ["msuper", "tagged", "pipe"])
def test_parser_to_a_format_without_trees_is_refused_before_reading(models, fmt, tmp_path):
    result = run("tag", "--model", models["dep"], "--output-format", fmt, tmp_path / "missing.conllu")
    assert "no place for the dependency tree" in one_error(result) and result.stdout == ""


@pytest.mark.slow
def test_generic_column_model_is_visible_in_every_output_format(tmp_path):
    model = tmp_path / "tag.tagger"
    result = run("train", "--task", "pos", "--format", "columns", "--columns", "form=1,tag=2", "--train",
                 DATA / "sample.tsv", "--dev", DATA / "sample.tsv", "--out", model, "--max-epochs", "1", "--quiet",
                 "--threads", "1", "--set", "layers=1", "--set", "hidden=8", "--set", "word_dim=8")
    assert result.exit_code == 0, result.stderr

    def tag(fmt: str) -> str:
        done = run("tag", "--model", model, "--output-format", fmt, "--threads", "1", stdin="The cat sat .\n")
        assert done.exit_code == 0, done.stderr
        return done.stdout

    tags = json.loads(tag("jsonl"))["tag"]
    assert [row[4] for row in conllu_rows(tag("conllu"))] == tags
    assert [row[4] for row in conllu_rows(tag("conllx"))] == tags
    assert tag("pipe") == " ".join(f"{w}|{t}|_" for w, t in zip("The cat sat .".split(), tags)) + "\n"
    assert tag("tagged") == " ".join(f"{w}/{t}" for w, t in zip("The cat sat .".split(), tags)) + "\n"


# --- tagger convert --------------------------------------------------------------------------


def test_convert_puts_a_generic_tag_column_in_xpos_and_back(tmp_path):
    result = run("convert", "--columns", "form=1,tag=2", "--to", "conllu", DATA / "sample.tsv")
    assert result.exit_code == 0, result.stderr
    rows = conllu_rows(result.stdout)
    assert rows[0][:5] == ["1", "The", "_", "_", "DET"] and all(row[4] != "_" for row in rows)
    conllu = tmp_path / "tag.conllu"
    conllu.write_text(result.stdout, encoding="utf-8")
    back = run("convert", "--to", "columns", "--columns", "form=1,tag=2", conllu)
    assert back.exit_code == 0, back.stderr
    original = [line.split("\t")[:2] for line in (DATA / "sample.tsv").read_text().splitlines()
                if line and not line.startswith("#")]
    assert [line.split("\t") for line in back.stdout.splitlines() if line] == original


def test_convert_extra_generic_columns_go_to_misc(tmp_path):
    tsv = tmp_path / "chunks.tsv"
    tsv.write_text("The\tDET\tDT\tB-NP\ncat\tNOUN\tNN\tI-NP\n\n", encoding="utf-8")
    result = run("convert", "--columns", "form=1,upos=2,xpos=3,chunk=4", "--to", "conllu", tsv)
    assert result.exit_code == 0, result.stderr
    assert [row[3:5] + row[9:] for row in conllu_rows(result.stdout)] == [["DET", "DT", "chunk=B-NP"],
                                                                          ["NOUN", "NN", "chunk=I-NP"]]


def test_convert_to_mrg_without_a_tree_is_refused():
    result = run("convert", "--to", "mrg", CONLLU)
    assert "no bracketed tree" in one_error(result) and result.stdout == ""
    assert "no bracketed tree" in one_error(run("convert", "--to", "trees", CONLLU))
    trees = run("convert", "--to", "trees", DATA / "sample.mrg")
    assert trees.exit_code == 0 and len(trees.stdout.splitlines()) == 4
    pretty = run("convert", "--to", "mrg", DATA / "sample.mrg")  # laid out as the file is
    assert pretty.exit_code == 0 and pretty.stdout == (DATA / "sample.mrg").read_text(encoding="utf-8")
