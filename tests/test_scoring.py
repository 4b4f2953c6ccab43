"""Scoring as typed functions (``tagger.scoring``), corpora read in one place
(``formats.read_corpus``, one reading of ``--columns``), one punctuation rule, constituency trees
on ``Sentence``, and the typed training fields (issue 15)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from tagger import formats, model_file
from tagger.cli.main import cli
from tagger.config import build_config
from tagger.corpus.records import Sentence
from tagger.corpus.trees import Tree
from tagger.errors import TaggerError
from tagger.evaluation import punct_flags, score_parsing
from tagger.models import MODELS, TASK_MODELS
from tagger.models.skip_lstm import PRESETS, SkipLSTMTagger, TaggerConfig
from tagger.tasks import TASKS
from tests.test_cli_evaluate import GOLD, PRED  # the same two sentences, gold and predicted
from tagger.scoring import AUTO_COLUMNS, TASK_COLUMNS, EvaluationResult, evaluate_files, model_targets

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample.conllu"
AUTO_SAMPLE = ROOT / "data" / "sample.auto"



def invoke(*args: str | Path, stdin: str | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=stdin)


def error_line(result) -> str:
    """The one ``error:`` line of a failed command (and nothing else on stderr)."""
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture
def gold_pred(tmp_path: Path) -> tuple[Path, Path]:
    gold, pred = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold.write_text(GOLD, encoding="utf-8")
    pred.write_text(PRED, encoding="utf-8")
    return gold, pred


# --- scoring as typed functions -------------------------------------------------------------------------


def test_evaluate_files_returns_the_column_and_the_metrics(gold_pred):
    gold, pred = gold_pred
    result = evaluate_files(str(gold), str(pred))
    assert isinstance(result, EvaluationResult) and result.column == "upos"
    assert list(result.metrics) == ["tagging", "parsing"]
    assert (result.tagging.tokens, result.tagging.correct) == (5, 3)
    counts = result.parsing.all
    assert (counts.words, counts.heads, counts.both) == (5, 4, 3)  # nsubj:pass = nsubj; Run: root vs nsubj
    assert (result.parsing.no_punct.words, result.parsing.no_punct.both) == (4, 3)
    assert evaluate_files(gold, pred, task="dep").to_dict() == {"column": None, "parsing": result.parsing.to_dict()}
    assert evaluate_files(gold, pred, column="xpos").tagging.correct == 5


def test_cli_prints_what_the_function_returns(gold_pred):
    gold, pred = gold_pred
    shown = invoke("evaluate", "--gold", gold, "--pred", pred, "--json", "--train", gold)
    assert shown.exit_code == 0, shown.output
    words = {w for s in formats.read(gold) for w in s.words}
    expected = evaluate_files(gold, pred, train_words=words).to_dict()
    assert json.loads(shown.stdout) == {"gold": str(gold), "pred": str(pred), **expected}


def test_tag_column_fallbacks_are_the_tasks(gold_pred, tmp_path):
    # One order for `train` and `evaluate`: the task registry's.
    assert TASK_COLUMNS == {"pos": ("upos", "xpos", "tag", "supertag"), "dep": (), "ccg": ("supertag", "tag"),
                            "const": (), "pipeline": (), "tokenize": (), "lemma": ("lemma",)}
    assert TASK_COLUMNS["pos"] == TASKS["pos"].columns and AUTO_COLUMNS == ("upos", "xpos", "tag", "supertag", "lemma")
    gold, pred = gold_pred
    no_upos = tmp_path / "no-upos.conllu"
    no_upos.write_text(re.sub(r"\t(DET|NOUN|VERB|PUNCT)\t", "\t_\t", PRED), encoding="utf-8")
    assert evaluate_files(gold, no_upos, task="pos").column == "xpos"
    with pytest.raises(TaggerError, match=r"no CCG column \(supertag or tag\) present in both gold and predicted"):
        evaluate_files(gold, pred, task="ccg")


class Declares:
    """What scoring asks of a model: the columns it fills."""

    def __init__(self, *columns: str) -> None:
        self.output_columns = list(columns)


def test_the_scored_column_is_the_one_the_model_declares():
    assert model_targets(Declares("upos"), None, "m") == ("upos", False)
    assert model_targets(Declares("head", "deprel"), None, "m") == (None, True)
    assert model_targets(Declares("upos", "xpos"), "xpos", "m") == ("xpos", False)
    # a model of several columns: every one is scored, unless --column names some
    assert model_targets(Declares("upos", "xpos", "feats"), None, "m") == ("upos,xpos,feats", False)
    assert model_targets(Declares("upos", "xpos", "feats"), "feats, upos", "m") == ("feats,upos", False)
    with pytest.raises(TaggerError, match="--column upos,lemma: this model predicts upos and xpos, not lemma"):
        model_targets(Declares("upos", "xpos"), "upos,lemma", "m")
    with pytest.raises(TaggerError, match="--column upos: this model predicts no tag column, not upos"):
        model_targets(Declares("head", "deprel"), "upos", "m")


def untrained_tagger(path: Path, column: str, sentences: list[Sentence], meta: dict) -> Path:
    torch.manual_seed(0)
    config = build_config(TaggerConfig, PRESETS, "fast", overrides=["layers=1", "hidden=8", "word_dim=8",
                                                                     f"column={column}"])
    model_file.save(path, SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, sentences)).eval(), meta)
    return path


def test_split_scores_the_test_sections_of_the_models_task(tmp_path):
    """A CCG model with --split wsj is scored on section 23 (CCGbank's test section), not on the
    POS sections 22-24 that were taken whenever --task was not given."""
    derivations = AUTO_SAMPLE.read_text(encoding="utf-8").strip().split("\n")
    folder = tmp_path / "AUTO"
    folder.mkdir()
    for i, name in enumerate(("wsj_0001", "wsj_0201", "wsj_1901", "wsj_2201", "wsj_2301")):  # one sentence each
        (folder / f"{name}.auto").write_text("\n".join(derivations[2 * (i % 4):2 * (i % 4) + 2]) + "\n", encoding="utf-8")
    sentences = list(formats.read(AUTO_SAMPLE))
    model = untrained_tagger(tmp_path / "ccg.tagger", "supertag", sentences, {"task": "ccg"})
    shown = invoke("evaluate", "--model", model, "--split", "wsj", folder, "--json", "--device", "cpu")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["tagging"]["tokens"] == len(sentences[0])  # wsj_2301 alone, not wsj_2201 too


def test_columns_layout_applies_to_column_files_found_by_extension(tmp_path):
    """--columns with `--format auto` was dropped: .tsv files were read as form=1,tag=2 and the
    word column scored as tags (100%, silently)."""
    gold, pred = tmp_path / "gold.tsv", tmp_path / "pred.tsv"
    gold.write_text("1\tThe\tDET\n2\tdog\tNOUN\n\n", encoding="utf-8")
    pred.write_text("1\tThe\tDET\n2\tdog\tVERB\n\n", encoding="utf-8")
    shown = invoke("evaluate", "--gold", gold, "--pred", pred, "--columns", "form=2,upos=3", "--json")
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.stdout)
    assert data["column"] == "upos" and (data["tagging"]["tokens"], data["tagging"]["correct"]) == (2, 1)


def test_a_bad_column_spec_is_one_error_in_every_command(gold_pred, tmp_path):
    gold, pred = gold_pred
    model = untrained_tagger(tmp_path / "toy.tagger", "upos", list(formats.read(SAMPLE)), {})
    message = "error: bad column spec 'form=0': 'form=0' is not name=N (N = 1, 2, ...)"
    for command in (["evaluate", "--gold", gold, "--pred", pred], ["convert", "--to", "conllu", gold],
                    ["tag", "--model", model, gold], ["train", "--train", gold, "--out", tmp_path / "x.tagger"]):
        assert error_line(invoke(*command, "--columns", "form=0")) == message, command
    assert not (tmp_path / "x.tagger").exists()


# --- reading corpora ------------------------------------------------------------------------------------


def test_read_corpus_is_what_train_and_evaluate_read(monkeypatch):
    from tagger.training.run import DataSpec, read_sentences

    text = ("1\tThe\t_\tDET\tDT\t_\t2\tdet\t_\tsupertag=NP/N\n2\tcat\t_\tNOUN\tNN\t_\t0\troot\t_\tsupertag=N\n\n"
            "1\tHi\t_\tINTJ\tUH\t_\t0\troot\t_\t_\n\n")
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    first, second = formats.read_corpus("-")
    assert first.columns["supertag"] == ["NP/N", "N"] and first.columns["misc"] == ["_", "_"]
    assert not second.has("supertag")
    assert read_sentences(DataSpec(str(SAMPLE), max_sentences=3)) == formats.read_corpus(SAMPLE, max_sentences=3)
    assert len(formats.read_corpus(SAMPLE, max_sentences=3)) == 3


def test_a_column_layout_goes_to_column_files_only(tmp_path):
    tsv = tmp_path / "a.tsv"
    tsv.write_text("x\tThe\tDET\n\n", encoding="utf-8")
    both = formats.read_corpus([tsv, SAMPLE], "auto", "form=2,upos=3")
    assert both[0].words == ["The"] and both[0].columns == {"upos": ["DET"]}
    assert both[1:] == formats.read_corpus(SAMPLE)
    with pytest.raises(TaggerError, match="the 'conllu' format has no option 'columns'"):
        formats.read(SAMPLE, "conllu", columns="form=1")


# --- one punctuation rule -------------------------------------------------------------------------------


def test_the_parser_and_evaluate_share_one_punctuation_rule():
    ud = Sentence(["Hi", ",", "you"], {"upos": ["INTJ", "PUNCT", "PRON"], "xpos": ["UH", ",", "PRP"]})
    ptb = Sentence(["Hi", ",", "you", "."], {"xpos": ["UH", ",", "PRP", "."]})
    assert punct_flags(ud) == [False, True, False] and punct_flags(ptb) == [False, True, False, True]
    gold = list(formats.read(SAMPLE))
    cls = MODELS[TASK_MODELS["dep"]]
    config = build_config(cls.Config, cls.PRESETS, cls.default_preset, None,
                          ["hidden=8", "word_dim=8", "tag_dim=8", "label_dim=8", "precompute=10"])
    parser = cls(config, cls.vocabs_from(config, gold))
    guesses = [([i for i in range(len(s))], ["dep"] * len(s)) for s in gold]  # each word on its left neighbour
    pred = [Sentence(s.words, {"head": h, "deprel": r}) for s, (h, r) in zip(gold, guesses)]
    assert parser.metric(gold, guesses).to_dict() == score_parsing(gold, pred).to_dict()


# --- constituency trees ---------------------------------------------------------------------------------


def test_mrg_trees_are_plain_and_written_back_bracket_for_bracket(shared_data):
    files = sorted((shared_data / "ptb-wsj-sample" / "combined").glob("*.mrg"))[:25]
    for path in files:
        sentences = list(formats.read(path))
        for sentence in sentences:
            assert isinstance(sentence.tree, Tree) and sentence.raw is None
            leaves = [(tag, word) for tag, word in sentence.tree.leaves() if tag != "-NONE-"]
            assert leaves == list(zip(sentence.columns["xpos"], sentence.words))
        out = io.StringIO()
        formats.write(sentences, out, "mrg")
        brackets = re.compile(r"[()]|[^\s()]+")
        original = path.read_text(encoding="utf-8")
        assert brackets.findall(out.getvalue()) == brackets.findall(original), path


def test_a_tree_is_a_label_over_trees_and_words():
    (sentence,) = formats.read(io.StringIO("( (S (NP (DT a) (NN b)) (X (-NONE- *T*)) (VBZ c)) )\n"), "mrg")
    np = Tree("NP", (Tree("DT", ("a",)), Tree("NN", ("b",))))
    assert sentence.tree == Tree("", (Tree("S", (np, Tree("X", (Tree("-NONE-", ("*T*",)),)), Tree("VBZ", ("c",)))),))
    assert sentence.tree.leaves() == [("DT", "a"), ("NN", "b"), ("-NONE-", "*T*"), ("VBZ", "c")]
    assert Sentence(["a"]).tree is None and all(s.tree is None for s in formats.read(SAMPLE))


# --- typed training fields ------------------------------------------------------------------------------


class Quiet:
    def note(self, message: str) -> None: ...
    def epoch_start(self, epoch: int, batches: int) -> None: ...
    def step(self, loss: float, tokens: int) -> None: ...
    def epoch_end(self, record: dict) -> None: ...


def test_train_request_takes_typed_epochs_batch_and_patience(tmp_path):
    from tagger.training.run import DataSpec, TrainRequest, train
    from tagger.training.trainer import RunOptions

    out = tmp_path / "m.tagger"
    request = TrainRequest(task="pos", train=DataSpec(str(SAMPLE)), dev=None, out=str(out), max_epochs=1,
                           batch_size=4, patience=2, overrides=("layers=1", "hidden=8", "word_dim=8"),
                           options=RunOptions(device="cpu"))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        summary = train(request, Quiet())
    finally:
        torch.set_num_threads(threads)
    training = model_file.configs_of(model_file.read_archive(out))[1]  # the model file keeps the training config
    assert summary["epochs"] == 1 and (training["max_epochs"], training["batch_size"], training["patience"]) == (1, 4, 2)


def test_a_tagged_files_one_tag_is_scored_as_the_column_named(tmp_path, capsys):
    """``word/TAG`` names no column (its tag is read as XPOS): ``--column upos`` scores it against
    the gold UPOS, with a note; without one, a note says how to; a CoNLL file's own columns are
    never renamed."""
    gold = Path("data/sample.conllu")
    sentences = [s for s in formats.read(gold) if len(s)]
    pred = tmp_path / "pred.tagged"
    pred.write_text("".join(" ".join(f"{w}/{t}" for w, t in zip(s.words, s.columns["upos"])) + "\n" for s in sentences),
                    encoding="utf-8")
    result = evaluate_files(gold, pred, column="upos")
    assert result.column == "upos" and result.metrics["tagging"].accuracy == 1.0
    assert "its one tag column is scored as upos" in capsys.readouterr().err
    xpos_only = tmp_path / "pred.conllu"
    xpos_only.write_text(gold.read_text(encoding="utf-8"), encoding="utf-8")
    blanked = [Sentence(s.words, {"xpos": s.columns["xpos"]}, raw=s.raw) for s in formats.read(xpos_only)]
    with pytest.raises(TaggerError, match="predicted file has no 'upos' column"):
        from tagger.scoring import evaluate_sentences
        evaluate_sentences(sentences, blanked, column="upos")
    with pytest.raises(TaggerError, match="no 'nonesuch'"):
        evaluate_files(gold, pred, column="nonesuch")
    assert "scored as nonesuch" not in capsys.readouterr().err  # no note for what is then refused


def test_columns_name_the_layout_of_the_predicted_file_only(tmp_path):
    """``--columns`` with a CoNLL-U gold and a columns prediction: the layout is the prediction's
    (the gold's reader refused the option)."""
    gold = Path("data/sample.conllu")
    sentences = [s for s in formats.read(gold) if len(s)]
    pred = tmp_path / "pred.tsv"
    pred.write_text("".join("".join(f"{w}\t1\t{t}\t1\n" for w, t in zip(s.words, s.columns["upos"])) + "\n"
                            for s in sentences), encoding="utf-8")
    result = evaluate_files(gold, pred, pred_format="columns", columns="form=1,upos=3", column="upos")
    assert result.metrics["tagging"].accuracy == 1.0


def test_a_columns_file_without_its_layout_is_refused_with_no_note_of_a_guess(tmp_path, capsys):
    """Scoring takes no guessed layout (msuper output: word, tag count, tag, probability): one
    error, not a note that it will be read one way and then the error."""
    pred = tmp_path / "out.tsv"
    pred.write_text("The\tx\tDET\t1\ncat\tx\tNOUN\t1\n\n", encoding="utf-8")
    with pytest.raises(TaggerError, match="reading the 'columns' format needs --columns"):
        evaluate_files(Path("data/sample.conllu"), pred)
    assert "note:" not in capsys.readouterr().err
    pred = tmp_path / "out.msuper"
    pred.write_text("The\t1\tDET\t1\ncat\t1\tNOUN\t1\n\n", encoding="utf-8")  # msuper output: said so
    with pytest.raises(TaggerError, match="this is tagger tag's msuper output"):
        evaluate_files(Path("data/sample.conllu"), pred)
    assert "note:" not in capsys.readouterr().err


def test_supertags_written_to_xpos_are_scored_with_supertag_in_xpos(tmp_path):
    """``tagger tag --supertag-in xpos`` output (the supertag in XPOS, the POS in MISC) against an
    AUTO-like gold: ``--supertag-in xpos`` reads them back; without it, the error says so."""
    gold = tmp_path / "gold.conllu"
    gold.write_text("1\tFive\t_\t_\tCD\t_\t_\t_\t_\tsupertag=N/N\n2\tthings\t_\t_\tNNS\t_\t_\t_\t_\tsupertag=N\n\n",
                    encoding="utf-8")
    pred = tmp_path / "pred.conllu"
    pred.write_text("1\tFive\t_\t_\tN/N\t_\t_\t_\t_\txpos=CD\n2\tthings\t_\t_\tNP\t_\t_\t_\t_\txpos=NNS\n\n", encoding="utf-8")
    with pytest.raises(TaggerError, match="no 'supertag' column to score .*supertags in XPOS: --supertag-in xpos"):
        evaluate_files(gold, pred, column="supertag")
    result = evaluate_files(gold, pred, column="supertag", supertag_in="xpos")
    assert result.metrics["tagging"].correct == 1 and result.metrics["tagging"].tokens == 2
    with pytest.raises(TaggerError, match="--supertag-in must be one of misc, xpos"):
        evaluate_files(gold, pred, supertag_in="upos")
