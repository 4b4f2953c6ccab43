"""One tagger, several columns (``--column upos,xpos,feats``): config, FEATS per bundle and per
feature, training on EWT, tagging every column, scoring every column, and the files of
``aux_column`` models written before it (tests/fixtures/make_skip_aux_format3.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import torch

from tagger import model_file
from tagger.config import build_config, build_configs
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.inference import predict
from tagger.models.skip_lstm import PRESETS, SkipLSTMTagger, TaggerConfig
from tagger.models.skip_lstm.model import join_features, split_features
from tagger.training.run import check_columns
from tagger.training.trainer import RunOptions, fit
from tests.conftest import EWT
from tests.helpers import assert_one_line_error, first_blocks, invoke

FIXTURES = Path(__file__).parent / "fixtures"

# ------------------------------------------------------------------------------------ config


def test_column_lists_parse_and_refuse_what_cannot_be_learned():
    config = TaggerConfig(column=" upos, xpos ,feats")
    assert config.columns == ["upos", "xpos", "feats"] and config.column == "upos,xpos,feats"
    assert TaggerConfig().columns == ["upos"]
    for overrides, message in ((["column=upos,xpos,upos"], "column names 'upos' twice"),
                               (["column=upos,,feats"], "column must name one column or several"),
                               (["column=upos,xpos", "aux_column=xpos"], "aux_column must differ from the columns learned"),
                               (["aux_column=xpos,feats"], "use --column upos,xpos,feats"),
                               (["feats_mode=joint"], "feats_mode must be one of bundle, feature")):
        with pytest.raises(TaggerError, match=message):
            build_config(TaggerConfig, PRESETS, None, overrides=overrides)


def test_cli_refuses_a_repeated_column_and_one_the_data_lacks_in_one_line(tmp_path):
    base = ["train", "--task", "pos", "--train", "data/sample.conllu", "--out", tmp_path / "m.tagger", "--max-epochs", "1",
            "--threads", "1"]
    assert_one_line_error(invoke(*base, "--column", "upos,xpos,upos"), "error: --column: column names 'upos' twice")
    assert_one_line_error(invoke(*base, "--column", "upos,"), "error: --column: column must name one column")
    assert_one_line_error(invoke(*base, "--set", "column=upos,upos"), "error: --set: column names 'upos' twice")
    assert_one_line_error(invoke(*base, "--column", "xpos", "--set", "column=upos,upos"), "error: --set: column names")
    ablate = ["ablate", "--table", "wu2017-t2", "--rows", "wu2017-t2-both", "--train", "data/sample.conllu",
              "--dev", "data/sample.conllu", "--test", "data/sample.conllu", "--out-dir", tmp_path / "ab", "--budget-minutes",
              "0.1"]
    assert_one_line_error(invoke(*ablate, "--column", "upos,upos"), "error: --column: column names 'upos' twice")
    assert_one_line_error(invoke(*base, "--column", "upos,supertag"), "data/sample.conllu:", "no 'supertag' annotation",
                          "choose another with --column")
    assert not (tmp_path / "m.tagger").exists()


def test_feats_may_be_all_underscore_in_a_sentence_but_not_everywhere():
    config = TaggerConfig(column="upos,feats")
    with_feats = Sentence(["dogs", "bark"], {"upos": ["NOUN", "VERB"], "feats": ["Number=Plur", "_"]}, "t.conllu", 1)
    without = Sentence(["Hi", "!"], {"upos": ["INTJ", "PUNCT"], "feats": ["_", "_"]}, "t.conllu", 4)
    check_columns(SkipLSTMTagger, config, [with_feats, without], "t.conllu")  # "_": no features, a value
    with pytest.raises(TaggerError, match="no 'feats' annotation in any sentence"):
        check_columns(SkipLSTMTagger, config, [without], "t.conllu")
    no_field = Sentence(["Hi"], {"upos": ["INTJ"]}, "t.tsv", 7)  # a format without FEATS at all
    with pytest.raises(TaggerError, match="no 'feats' annotation in this sentence") as error:
        check_columns(SkipLSTMTagger, config, [with_feats, no_field], "t.tsv")
    assert str(error.value).startswith("t.tsv:7: ")


def test_a_parser_refuses_data_without_the_pos_it_reads_in_any_sentence():
    """A parser reads its tag_column's POS as input: '_' in some sentences trains (tags unknown
    there), none anywhere is refused at training, as tagging the same file would be (found on
    the WSJ .dp sample: XPOS only, trained to LAS 0 on UPOS)."""
    from tagger.models.transition_parser import ParserConfig, TransitionParser

    xpos_only = [Sentence(["dogs", "bark"], {"xpos": ["NNS", "VBP"], "upos": ["_", "_"], "head": [2, 0],
                                             "deprel": ["nsubj", "root"]}, "wsj.dp", 1)]
    with pytest.raises(TaggerError, match="no 'upos' annotation in any sentence, and the transition_parser model "
                                          r"reads it; it has xpos \(choose another with --column\)"):
        check_columns(TransitionParser, ParserConfig(), xpos_only, "wsj.dp", "tag_column")
    check_columns(TransitionParser, ParserConfig(tag_column="xpos"), xpos_only, "wsj.dp", "tag_column")
    tagged = Sentence(["Hi"], {"upos": ["INTJ"], "head": [0], "deprel": ["root"]}, "t.conllu", 5)
    check_columns(TransitionParser, ParserConfig(), xpos_only + [tagged], "t.conllu", "tag_column")  # some: fine


# ------------------------------------------------------------------------------------ FEATS

TOY = [
    Sentence("the dog runs".split(), {"upos": ["DET", "NOUN", "VERB"],
                                      "feats": ["Definite=Def|PronType=Art", "Number=Sing",
                                                "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"]}),
    Sentence("a cat sleeps".split(), {"upos": ["DET", "NOUN", "VERB"],
                                      "feats": ["Definite=Ind|PronType=Art", "Number=Sing",
                                                "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"]}),
    Sentence("dogs bark loudly".split(), {"upos": ["NOUN", "VERB", "ADV"],
                                          "feats": ["Number=Plur", "Mood=Ind|Number=Plur|Tense=Pres|VerbForm=Fin", "_"]}),
    Sentence("the cats slept".split(), {"upos": ["DET", "NOUN", "VERB"],
                                        "feats": ["Definite=Def|PronType=Art", "Number=Plur",
                                                  "Mood=Ind|Number=Plur|Tense=Past|VerbForm=Fin"]}),
]


def test_feature_bundles_split_and_join_in_the_ud_order():
    assert split_features("_") == {} and join_features([]) == "_"
    assert split_features("Number[psor]=Sing|Person=3") == {"Number[psor]": "Sing", "Person": "3"}
    assert join_features([("VerbForm", "Fin"), ("Number", "Sing"), ("number", "x"), ("Number[psor]", "Plur"),
                          ("Abbr", "Yes")]) == "Abbr=Yes|Number=Sing|number=x|Number[psor]=Plur|VerbForm=Fin"
    for bundle in ("Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", "PronType=Int,Rel", "Typo=Yes"):
        assert join_features(list(split_features(bundle).items())) == bundle


def toy_model(mode: str, sentences=TOY, column="upos,feats", epochs=12) -> SkipLSTMTagger:
    values = {"column": column, "feats_mode": mode, "layers": 2, "hidden": 8, "word_dim": 8, "optimizer": "adam",
              "lr": 0.1, "batch_size": 2, "max_epochs": epochs, "patience": 0, "lr_halving": False, "input_dropout": 0.0,
              "hidden_dropout": 0.0, "rare_word_dropout": 0.0}
    config, training = build_configs(SkipLSTMTagger, PRESETS, None, overrides=[f"{k}={v}" for k, v in values.items()])
    model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, sentences))
    model.training_config = training
    return model


class Quiet:
    def epoch_start(self, epoch, batches): pass
    def step(self, loss, tokens): pass
    def epoch_end(self, record): pass


def test_per_feature_heads_encode_and_decode_feats_round_trip(tmp_path):
    torch.manual_seed(0)
    model = toy_model("feature")
    names = [h.feature for h in model.heads[1:]]
    assert names == ["Definite", "Mood", "Number", "Person", "PronType", "Tense", "VerbForm"]
    assert model.vocabs["feats:Number"] == ["_", "Plur", "Sing"] and model.vocabs["feats:Person"] == ["_", "3"]
    assert [h.start for h in model.heads] == [0, model.n_tags, model.n_tags + 3, model.n_tags + 5, model.n_tags + 8,
                                              model.n_tags + 10, model.n_tags + 12, model.n_tags + 15]
    batch = model.collate(TOY)
    assert batch.more_tags.shape == (7, 4, 3)
    number = names.index("Number")
    assert batch.more_tags[number, 2].tolist() == [1, 1, 0]  # Plur, Plur, none
    assert batch.more_tags[names.index("Tense"), 3, 2].item() == model.vocabs["feats:Tense"].index("Past")
    # scores that put each head's gold label first decode to the gold columns: every bundle back, in order
    scores = torch.full((4, 3, model.heads[-1].stop), -5.0)
    for head, ids in zip(model.heads, [batch.tags, *batch.more_tags]):
        scores[..., head.start : head.stop].scatter_(-1, ids.clamp(min=0).unsqueeze(-1), 5.0)
    model.eval().forward = lambda batch: scores  # (reads `scores` when called: set anew below)
    decoded = model.decode(model.collate(TOY, with_gold=False))
    assert decoded == [{"upos": s.columns["upos"], "feats": s.columns["feats"]} for s in TOY]
    unordered = Sentence(["runs"], {"upos": ["VERB"], "feats": ["VerbForm=Fin|Person=3|Mood=Ind"]})
    ids = [model.collate([unordered]).tags, *model.collate([unordered]).more_tags]
    scores = torch.full((1, 1, model.heads[-1].stop), -5.0)
    for head, gold in zip(model.heads, ids):
        scores[..., head.start + gold.clamp(min=0).item()] = 5.0
    assert model.decode(model.collate([unordered], with_gold=False)) == [{"upos": ["VERB"],
                                                                          "feats": ["Mood=Ind|Person=3|VerbForm=Fin"]}]
    del model.forward
    decoded = model.decode(model.collate(TOY, with_gold=False))
    model_file.save(tmp_path / "f.tagger", model, {})
    loaded, _ = model_file.load(tmp_path / "f.tagger")
    assert loaded.decode(loaded.collate(TOY, with_gold=False)) == decoded
    assert all(b == "_" or b == join_features(list(split_features(b).items())) for d in decoded for b in d["feats"])
    # a feature value never seen in training is left out of the loss; an unknown feature is dropped
    odd = Sentence(["dogs"], {"upos": ["NOUN"], "feats": ["Number=Dual|Foreign=Yes"]})
    assert model.collate([odd]).more_tags[:, 0, 0].tolist() == [0, 0, -100, 0, 0, 0, 0]


def test_bundle_mode_learns_whole_feats_values_and_the_first_column_is_always_whole():
    torch.manual_seed(0)
    model = toy_model("bundle")
    assert [(h.column, h.key) for h in model.heads] == [("upos", "tags"), ("feats", "tags:feats")]
    assert "Mood=Ind|Number=Plur|Tense=Pres|VerbForm=Fin" in model.vocabs["tags:feats"]
    state = fit(model, TOY, TOY, model.training_config, RunOptions(), lambda meta: None, Quiet())
    assert state.best_score == 1.0 and state.metric_name == "mean accuracy"  # measured: from epoch 10 (seeds 0-2)
    assert model.eval().decode(model.collate(TOY, with_gold=False)) == [
        {"upos": s.columns["upos"], "feats": s.columns["feats"]} for s in TOY]
    first = toy_model("feature", column="feats,upos")  # the main column keeps one softmax (multi-tagging reads it)
    assert [(h.column, h.key) for h in first.heads] == [("feats", "tags"), ("upos", "tags:upos")]


def test_an_empty_sentence_gets_empty_columns():
    model = toy_model("feature").eval()
    sentences = [Sentence([], {}), Sentence(["dogs"], {})]
    predictions = predict(model, sentences)
    for sentence, prediction in zip(sentences, predictions):
        model.annotate(sentence, prediction)
    assert sentences[0].columns == {"upos": [], "feats": []} and len(sentences[1].columns["feats"]) == 1


# ------------------------------------------------------------------------------------ on EWT


@pytest.fixture(scope="module")
def ewt_multi(tmp_path_factory):
    """A tiny tagger of upos,xpos,feats (the default, FEATS by bundle; one layer of 32) trained
    through the Python training path on the first 200 EWT training sentences, 4 epochs; dev: the
    first 60 dev sentences."""
    if not (EWT / "en_ewt-ud-train.conllu").exists():
        pytest.skip("needs ../shared/data")
    from tagger.training.run import DataSpec, TrainRequest, train

    folder = tmp_path_factory.mktemp("multicol")
    train_file, dev_file = folder / "train.conllu", folder / "dev.conllu"
    train_file.write_text(first_blocks(EWT / "en_ewt-ud-train.conllu", 200), encoding="utf-8")
    dev_file.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 60), encoding="utf-8")
    records = []

    class Record(Quiet):
        def epoch_end(self, record): records.append(record)
        def note(self, message): pass

    torch.set_num_threads(1)
    request = TrainRequest(task="pos", train=DataSpec(str(train_file)), dev=DataSpec(str(dev_file)),
                           out=str(folder / "multi.tagger"), column="upos,xpos,feats", max_epochs=4,
                           overrides=("layers=1", "hidden=32", "word_dim=32", "lr=0.02", "batch_size=8"))
    summary = train(request, Record())
    return folder, summary, records


def test_a_short_ewt_run_learns_and_decodes_the_three_columns(ewt_multi):
    folder, summary, records = ewt_multi
    assert summary["dev_metric"] == "mean accuracy" and set(records[-1]["parts"]) == {"upos", "xpos", "feats"}
    best = max(records, key=lambda r: r["dev"])
    # each column's tag dictionary chosen on dev after training: the saved model's dev score, never below the epoch's
    assert set(summary["decoding"]) == {"upos", "xpos", "feats"}
    assert summary["best_dev"] >= 100 * best["dev"] - 1e-9
    assert best["dev"] == pytest.approx(sum(best["parts"].values()) / 3)
    # measured (seed 1): upos 0.76, xpos 0.72, feats 0.75; "_" everywhere would give feats 0.32 on these words
    assert best["parts"]["upos"] > 0.65 and best["parts"]["xpos"] > 0.6 and best["parts"]["feats"] > 0.6
    model, meta = model_file.load(folder / "multi.tagger")
    assert model.output_columns == ["upos", "xpos", "feats"] and meta["dev_metric"] == "mean accuracy"
    from tagger import formats

    dev = list(formats.read(str(folder / "dev.conllu")))
    predicted = predict(model, dev)
    assert all(set(p) == {"upos", "xpos", "feats"} and all(len(v) == len(s) for v in p.values())
               for s, p in zip(dev, predicted))
    bundles = {b for p in predicted for b in p["feats"]}
    assert any("|" in b for b in bundles) and "_" in bundles and len(bundles) >= 10
    assert bundles <= set(model.vocabs["tags:feats"][1:])  # by bundle: one seen in training, never <pad>


def test_tag_fills_every_column_and_leaves_the_rest_of_conllu_as_it_was(ewt_multi):
    folder, _, _ = ewt_multi
    model, dev = folder / "multi.tagger", folder / "dev.conllu"
    done = invoke("tag", "--model", model, "--threads", "1", dev)
    assert done.exit_code == 0, done.stderr
    before, after = dev.read_text(encoding="utf-8").split("\n"), done.stdout.split("\n")
    assert len(before) == len(after)
    changed = set()
    for old, new in zip(before, after):
        if not old[:1].isdigit():
            assert old == new  # comments, blank lines
            continue
        a, b = old.split("\t"), new.split("\t")
        if not a[0].isdigit():  # a multiword token line: as it was
            assert old == new
        changed |= {i for i, (x, y) in enumerate(zip(a, b)) if x != y}
    assert changed == {3, 4, 5}  # UPOS, XPOS, FEATS; ID, FORM, LEMMA, HEAD, DEPREL, DEPS, MISC untouched
    # fp32 on both sides: --top-k takes torch, which --precision auto runs in bf16 on a CPU with native bf16
    records = [json.loads(line) for line in invoke("tag", "--model", model, "--output-format", "jsonl", "--threads", "1",
                                                   "--precision", "fp32", dev).stdout.splitlines()]
    assert set(records[0]) == {"words", "upos", "xpos", "feats"}
    tagged = invoke("tag", "--model", model, "--output-format", "tagged", "--threads", "1", dev).stdout.splitlines()
    assert [token.rsplit("/", 1)[1] for token in tagged[0].split()] == records[0]["upos"]  # the first column
    multi = [json.loads(line) for line in invoke("tag", "--model", model, "--top-k", "2", "--threads", "1",
                                                 "--precision", "fp32", dev).stdout.splitlines()]
    assert [m["upos"] for m in multi] == [r["upos"] for r in records]
    assert [m["feats"] for m in multi] == [r["feats"] for r in records]  # the other columns as without multi-tagging
    assert [[tags[0][0] for tags in m["multitags"]] for m in multi] == [r["upos"] for r in records]


def test_evaluate_reports_each_column_their_mean_and_all_tags(ewt_multi):
    folder, summary, _ = ewt_multi
    model, dev = folder / "multi.tagger", folder / "dev.conllu"
    done = invoke("evaluate", "--model", model, dev, "--json", "--threads", "1", "--precision", "fp32")
    assert done.exit_code == 0, done.stderr
    result = json.loads(done.stdout)
    tagging = result["tagging"]
    assert result["column"] == "upos,xpos,feats" and set(tagging["columns"]) == {"upos", "xpos", "feats"}
    accuracies = [tagging["columns"][c]["accuracy"] for c in ("upos", "xpos", "feats")]
    assert tagging["accuracy"] == pytest.approx(sum(accuracies) / 3) == pytest.approx(summary["best_dev"])
    assert 0 < tagging["all_tags"]["accuracy"] <= min(accuracies)
    table = invoke("evaluate", "--model", model, dev, "--top", "2", "--threads", "1").stdout
    for line in ("tagging (upos, xpos, feats)", "all tags", "mean of the columns", "tagging (feats)"):
        assert line in table
    one = json.loads(invoke("evaluate", "--model", model, dev, "--json", "--column", "feats", "--threads", "1",
                            "--precision", "fp32").stdout)  # as above: auto is bf16 on a CPU that has it natively
    assert one["column"] == "feats" and one["tagging"]["accuracy"] == pytest.approx(accuracies[2])
    pred = folder / "pred.conllu"
    pred.write_text(invoke("tag", "--model", model, "--threads", "1", "--precision", "fp32", dev).stdout, encoding="utf-8")
    files = json.loads(invoke("evaluate", "--gold", dev, "--pred", pred, "--column", "upos,xpos,feats", "--json").stdout)
    assert files["tagging"]["accuracy"] == pytest.approx(tagging["accuracy"])
    import tagger

    api = tagger.evaluate(str(model), str(dev), precision="fp32")
    assert api["score"] == pytest.approx(tagging["accuracy"]) and api["columns"] == ["upos", "xpos", "feats"]
    assert api["tagging"]["columns"]["xpos"]["accuracy"] == pytest.approx(accuracies[1])
    info = json.loads(invoke("info", model, "--json").stdout)
    assert info["columns"] == ["upos", "xpos", "feats"] and set(info["history"][0]["parts"]) == {"upos", "xpos", "feats"}
    assert "columns" in invoke("info", model).stdout


def test_a_multi_column_tagger_retags_every_column_a_parser_reads(ewt_multi):
    from tagger import formats
    from tagger.training.run import retag

    folder, _, _ = ewt_multi
    sentences = list(formats.read(str(folder / "dev.conllu")))[:5]
    model, _ = model_file.load(folder / "multi.tagger")
    expected = predict(model, sentences)
    retag(str(folder / "multi.tagger"), "upos", sentences)
    assert [s.columns["upos"] for s in sentences] == [p["upos"] for p in expected]
    assert [s.columns["feats"] for s in sentences] == [p["feats"] for p in expected]


def test_every_ewt_feats_bundle_survives_the_per_feature_heads(ewt_multi):
    """Per feature on real data: gold FEATS encoded for the heads and decoded again are the gold
    FEATS, every one of the 200 sentences' bundles (feats_mode=feature, untrained weights)."""
    from tagger import formats

    folder, _, _ = ewt_multi
    sentences = list(formats.read(str(folder / "train.conllu")))
    config = build_config(TaggerConfig, PRESETS, None, overrides=["column=upos,xpos,feats", "feats_mode=feature",
                                                                  "layers=1", "hidden=8"])
    model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, sentences)).eval()
    assert len(model.output_heads["feats"]) >= 15
    batch = model.collate(sentences)
    scores = torch.full((*batch.tags.shape, model.heads[-1].stop), -5.0)
    for head, ids in zip(model.heads, [batch.tags, *batch.more_tags]):
        scores[..., head.start : head.stop].scatter_(-1, ids.clamp(min=0).unsqueeze(-1), 5.0)
    model.forward = lambda batch: scores
    decoded = model.decode(model.collate(sentences, with_gold=False))
    for column in ("upos", "xpos", "feats"):
        assert [d[column] for d in decoded] == [s.columns[column] for s in sentences]


# ------------------------------------------------------------------------------------ old files


def test_an_aux_column_file_of_format_3_tags_as_before():
    """Written by the code before multi-column taggers (tests/fixtures/make_skip_aux_format3.py):
    it still fills only its column, with the same tags and the same probabilities."""
    if not (EWT / "en_ewt-ud-dev.conllu").exists():
        pytest.skip("needs ../shared/data")
    path = FIXTURES / "skip-aux-format3.model"
    expected = json.loads((FIXTURES / "skip-aux-format3-expected.json").read_text())
    assert model_file.read_archive(path)["format_version"] == expected["format_version"] == 3
    model, _ = model_file.load(path)
    assert model.output_columns == ["upos"] and model.config.aux_column == "xpos"
    assert [(h.key, h.output) for h in model.heads] == [("tags", True), ("aux_tags", False)]
    assert model.distribution_labels == expected["labels"]
    from tagger import formats

    text = first_blocks(EWT / "en_ewt-ud-dev.conllu", 6)
    sentences = list(formats.read(io.BytesIO(text.encode()), "conllu"))
    probs = predict(model, sentences, decode=lambda batch: list(model.distribution(batch)))
    for got, want in zip(probs, expected["upos"]):
        assert torch.allclose(got[: len(want)], torch.tensor(want), atol=2e-6)
    done = invoke("tag", "--model", path, "--threads", "1", "--precision", "fp32", stdin=text)
    assert done.exit_code == 0, done.stderr
    assert done.stdout == (FIXTURES / "skip-aux-format3-expected.conllu").read_text(encoding="utf-8")


def test_training_warns_of_tokens_whose_tag_is_missing_but_not_of_features_that_are_none():
    """A tagger learns '_' as a tag where some tokens of a sentence have none: a warning says so
    (found on EWT with every third XPOS blanked: it then predicted '_' for most dev tokens);
    FEATS's '_' is a value (no features) and is not warned of."""
    from types import SimpleNamespace

    from tagger.training.run import unannotated_tokens

    train = [Sentence(["a", "b", "c"], {"xpos": ["DT", "_", "NN"], "feats": ["_", "_", "Number=Sing"]}),
             Sentence(["d"], {"xpos": ["VB"], "feats": ["_"]})]
    tagger = SimpleNamespace(kind="tagger", output_columns=["xpos", "feats"])
    warnings = unannotated_tokens(tagger, train)
    assert len(warnings) == 1 and warnings[0].startswith("warning: 1 of the 4 training tokens (25.0%) have no xpos ('_')")
    assert unannotated_tokens(SimpleNamespace(kind="parser", output_columns=["head"]), train) == []
    assert unannotated_tokens(tagger, train[1:]) == []
