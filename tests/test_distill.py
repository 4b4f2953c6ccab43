"""Knowledge distillation (``tagger distill``, :mod:`tagger.training.distill`): a student tagger
trained on its teachers' averaged distributions is an ordinary tagger file; the soft targets are
those distributions; teachers that do not agree on what they predict are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch.nn import functional as F

import tagger
from tagger import model_file
from tagger.errors import TaggerError
from tagger.models.base import SoftTargets
from tagger.training.distill import DistillCollate, load_teachers, soft_table
from tagger.training.run import read_sentences, DataSpec
from tests.helpers import SMALL, assert_one_line_error, invoke

SAMPLE, HELDOUT = "data/sample.conllu", "data/heldout.conllu"
#: The student: smaller than the teachers (SMALL: 2 × 16).
STUDENT = ["--set", "layers=1", "--set", "hidden=8", "--set", "word_dim=8", "--threads", "1"]


def train_teacher(out: Path, *args: str) -> Path:
    done = invoke("train", "--train", SAMPLE, "--dev", HELDOUT, "--out", out, "--max-epochs", "15", "--patience", "0",
                  "--set", "lr=0.01", "--quiet", "--json", *SMALL, *args)
    assert done.exit_code == 0, (done.stderr, done.exception)
    return out


@pytest.fixture(scope="module")
def teachers(tmp_path_factory) -> list[Path]:
    """Two tiny UPOS taggers of data/sample.conllu, differing in their seed."""
    folder = tmp_path_factory.mktemp("teachers")
    return [train_teacher(folder / f"t{seed}.tagger", "--seed", str(seed)) for seed in (1, 2)]


def test_a_student_trains_and_is_an_ordinary_tagger_naming_its_teachers(teachers, tmp_path):
    out = tmp_path / "student.tagger"
    done = invoke("distill", "--teacher", teachers[0], teachers[1], "--train", SAMPLE, "--dev", HELDOUT, "--out", out,
                  "--max-epochs", "3", "--json", *STUDENT)
    assert done.exit_code == 0, (done.stderr, done.exception)
    summary = json.loads(done.stdout)
    assert summary["model"] == str(out) and summary["epochs"] == 3 and summary["updates"] > 0 and summary["dev_metric"] == "accuracy"
    assert [t["model"] for t in summary["teachers"]] == [str(t.resolve()) for t in teachers]
    assert summary["top_k"] == 8 and summary["gold_weight"] == 0.5 and 0 < summary["kept_mass"] <= 100
    assert set(summary["decoding"]["upos"]["dev_right"]) >= {"0", "1"}  # its tag dictionary chosen on dev, as train's
    # the teachers' dev accuracies are theirs: each is what `tagger evaluate` gives it on dev
    for teacher, entry in zip(teachers, summary["teachers"]):
        assert entry["dev"] == pytest.approx(tagger.evaluate(str(teacher), HELDOUT, precision="fp32")["score"])

    model = tagger.load(out, precision="fp32")
    tagged = model.tag([["The", "dog", "sat", "."]])
    assert len(tagged[0]["upos"]) == 4 and set(tagged[0]["upos"]) <= set(model_file.load(teachers[0])[0].distribution_labels)
    assert tagger.evaluate(model, HELDOUT)["score"] == pytest.approx(summary["best_dev"])
    _, meta = model_file.load(out)
    assert [t["model"] for t in meta["distilled_from"]] == [str(t.resolve()) for t in teachers]
    assert meta["distillation"]["teachers_dev_score"] == pytest.approx(summary["ensemble_dev"] / 100)
    info = invoke("info", "--json", out)
    assert info.exit_code == 0 and json.loads(info.stdout)["meta"]["distilled_from"][1]["model"] == str(teachers[1].resolve())
    shown = invoke("info", out)
    assert "distilled_from" in shown.stdout and teachers[0].name in shown.stdout
    evaluated = invoke("evaluate", "--model", out, HELDOUT, "--json")
    assert evaluated.exit_code == 0, evaluated.stderr


def direct_average(models, sentence, temperature: float) -> dict[str, torch.Tensor]:
    """Per label, the teachers' mean probability of it per word, from their own ``distribution``."""
    total: dict[str, torch.Tensor] = {}
    for model in models:
        probs = model.distribution(model.collate([sentence], with_gold=False))[0]  # [n, C]
        probs = probs.pow(1 / temperature)
        probs = probs / probs.sum(-1, keepdim=True)
        for j, label in enumerate(model.distribution_labels):
            total[label] = total.get(label, 0) + probs[:, j] / len(models)
    return total


@pytest.mark.parametrize("temperature", [1.0, 2.0])
def test_the_soft_targets_are_the_teachers_averaged_distributions(teachers, temperature):
    loaded = load_teachers([str(t) for t in teachers])
    sentences = read_sentences(DataSpec(SAMPLE))
    # the student numbers the labels otherwise (reversed, one more): they are matched by name
    labels = ["EXTRA"] + loaded.labels["upos"][::-1]
    ids = {label: i for i, label in enumerate(labels)}
    table = soft_table(loaded, sentences, {"upos": ids}, temperature, top_k=len(labels))["upos"]
    for index in (0, 5):
        sentence, start = sentences[index], table.starts[index]
        expected = direct_average(loaded.models, sentence, temperature)
        for word in range(len(sentence)):
            got = {labels[i]: p for i, p in zip(table.ids[start + word].tolist(), table.probs[start + word].tolist())}
            assert got.get("EXTRA", 0.0) == 0.0
            for label, probs in expected.items():
                assert got[label] == pytest.approx(float(probs[word]), abs=1e-5), (index, word, label)
    # top 3: the three most probable labels of the average, renormalised
    top = soft_table(loaded, sentences, {"upos": ids}, temperature, top_k=3)["upos"]
    expected = direct_average(loaded.models, sentences[0], temperature)
    # (labels of probability 0, those a teacher's tag dictionary rules out, tie: any may fill the top 3)
    best = [label for label in sorted(expected, key=lambda label: -float(expected[label][0]))[:3]
            if float(expected[label][0]) > 0]
    mass = sum(float(expected[label][0]) for label in best)
    kept = {labels[i]: p for i, p in zip(top.ids[0].tolist(), top.probs[0].tolist()) if p > 0}
    assert kept == pytest.approx({label: float(expected[label][0]) / mass for label in best}, abs=1e-5)


def test_the_soft_loss_is_the_cross_entropy_to_the_soft_targets(teachers):
    student, _ = model_file.load(teachers[0])
    sentences = read_sentences(DataSpec(SAMPLE))[:3]
    batch = student.collate(sentences)
    with torch.no_grad():
        everything = student(batch)
    scores, gold = everything[..., : len(student.distribution_labels)], batch.tags

    def loss(soft: SoftTargets) -> float:
        return float(student.loss(everything, student.with_soft_targets(batch, {"upos": soft})))

    # one-hot soft targets on the gold tags: the gold cross-entropy (at T = 2: T² × that of scores / 2)
    onehot = SoftTargets(gold.clamp(min=0).unsqueeze(-1), (gold >= 0).float().unsqueeze(-1))
    expected = float(F.cross_entropy(scores.flatten(0, 1), gold.flatten(), ignore_index=-100))
    assert loss(onehot) == pytest.approx(expected, rel=1e-5)
    expected2 = 4 * float(F.cross_entropy((scores / 2).flatten(0, 1), gold.flatten(), ignore_index=-100))
    assert loss(SoftTargets(onehot.ids, onehot.probs, temperature=2.0)) == pytest.approx(expected2, rel=1e-5)
    # gold_weight mixes w × gold + (1 − w) × soft: here both are the same
    assert loss(SoftTargets(onehot.ids, onehot.probs, gold_weight=0.3)) == pytest.approx(expected, rel=1e-5)
    # a uniform target over two labels: the mean of their negative log-probabilities
    mask = gold >= 0
    two = SoftTargets(torch.stack([gold.clamp(min=0), torch.ones_like(gold)], -1), mask.float().unsqueeze(-1).expand(-1, -1, 2) / 2)
    log_probs = scores.log_softmax(-1)
    both = log_probs.gather(-1, gold.clamp(min=0).unsqueeze(-1)).squeeze(-1) + log_probs[..., 1]  # [B, T]
    expected3 = -both[mask].sum() / 2 / mask.sum()
    assert loss(two) == pytest.approx(float(expected3), rel=1e-5)


def test_the_collate_wrapper_gives_each_sentence_its_own_rows(teachers):
    loaded = load_teachers([str(t) for t in teachers])
    sentences = read_sentences(DataSpec(SAMPLE))
    student, _ = model_file.load(teachers[0])
    ids = {label: i for i, label in enumerate(student.distribution_labels)}
    table = soft_table(loaded, sentences, {"upos": ids}, 1.0, top_k=4)
    batch = DistillCollate(student, sentences, table, 1.0, 0.0)([sentences[6], sentences[2]])
    for b, index in enumerate((6, 2)):
        n, start = len(sentences[index]), table["upos"].starts[index]
        assert torch.equal(batch.soft["upos"].ids[b, :n], table["upos"].ids[start : start + n].long())
        assert torch.equal(batch.soft["upos"].probs[b, :n], table["upos"].probs[start : start + n])
        assert float(batch.soft["upos"].probs[b, n:].abs().sum()) == 0.0  # padding adds nothing to the loss


def test_teachers_that_disagree_on_what_they_predict_are_refused(teachers, tmp_path):
    xpos = train_teacher(tmp_path / "xpos.tagger", "--column", "xpos", "--max-epochs", "1")
    fewer = train_teacher(tmp_path / "fewer.tagger", "--max-sentences", "1", "--max-epochs", "1")
    both = train_teacher(tmp_path / "both.tagger", "--column", "upos,xpos", "--max-epochs", "1")
    common = ["--train", SAMPLE, "--dev", HELDOUT, "--out", tmp_path / "s.tagger", *STUDENT]
    assert_one_line_error(invoke("distill", "--teacher", teachers[0], xpos, *common),
                          "predicts xpos", "must predict the same column")
    assert_one_line_error(invoke("distill", "--teacher", teachers[0], "--teacher", fewer, *common),
                          "labels differ", "it lacks", "same label set")
    taught = invoke("distill", "--teacher", both, "--train", SAMPLE, "--dev", HELDOUT, "--out", tmp_path / "first.tagger",
                    "--max-epochs", "1", "--column", "upos", *STUDENT)
    assert taught.exit_code == 0, taught.stderr  # a tagger of several columns teaches the one asked for
    assert model_file.read_archive(tmp_path / "first.tagger")["config"]["column"] == "upos"
    assert_one_line_error(invoke("distill", "--teacher", teachers[0], *common, "--set", "column=upos,xpos"),
                          "does not predict xpos (it predicts upos)", "every teacher must predict")
    assert_one_line_error(invoke("distill", "--teacher", both, "--teacher", xpos, *common, "--column", "upos"),
                          "does not predict upos (it predicts xpos)", str(xpos))
    assert_one_line_error(invoke("distill", "--teacher", teachers[0], *common, "--gold-weight", "1"), "--gold-weight")
    assert not (tmp_path / "s.tagger").exists()
    with pytest.raises(TaggerError, match="list of model files"):
        tagger.distill(teachers=str(teachers[0]), train=SAMPLE, out=tmp_path / "s.tagger")


def test_a_column_named_twice_is_refused_naming_the_option_it_came_from(teachers, tmp_path):
    common = ["--teacher", teachers[0], "--train", SAMPLE, "--dev", HELDOUT, "--out", tmp_path / "s.tagger", *STUDENT]
    twice = "column names 'upos' twice"
    assert_one_line_error(invoke("distill", *common, "--column", "upos,upos"), f"error: --column: {twice}")
    assert_one_line_error(invoke("distill", *common, "--set", "column=upos,upos"), f"error: --set: {twice}")
    assert not (tmp_path / "s.tagger").exists()


def test_a_tagger_of_several_columns_teaches_each_of_them(tmp_path):
    """A teacher of UPOS and XPOS teaches a student of both: each column's soft targets are its
    distribution of that column, and the student's loss learns each from its own."""
    teacher = train_teacher(tmp_path / "both.tagger", "--column", "upos,xpos", "--max-epochs", "4")
    loaded = load_teachers([str(teacher)])
    assert loaded.columns == ["upos", "xpos"]
    model = loaded.models[0]
    sentences = read_sentences(DataSpec(SAMPLE))
    ids = {c: {label: i for i, label in enumerate(model.soft_labels(c))} for c in loaded.columns}
    tables = soft_table(loaded, sentences, ids, 1.0, top_k=1)
    given = model.distributions(model.collate(sentences[:1], with_gold=False))
    n = len(sentences[0])
    for column in ("upos", "xpos"):
        assert tables[column].ids[:n, 0].tolist() == given[column][0, :n].argmax(-1).tolist()
    assert model.soft_labels("xpos") != model.soft_labels("upos")

    # the loss: one-hot soft targets on the gold XPOS give the gold loss; others another
    batch = model.collate(sentences[:3])
    with torch.no_grad():
        scores = model(batch)
    gold = batch.more_tags[0]
    onehot = SoftTargets(gold.clamp(min=0).unsqueeze(-1), (gold >= 0).float().unsqueeze(-1))
    plain = float(model.loss(scores, batch))
    assert float(model.loss(scores, model.with_soft_targets(batch, {"xpos": onehot}))) == pytest.approx(plain, rel=1e-5)
    other = SoftTargets(torch.ones_like(onehot.ids), onehot.probs)
    assert float(model.loss(scores, model.with_soft_targets(batch, {"xpos": other}))) != pytest.approx(plain, rel=1e-3)
    with pytest.raises(TaggerError, match="feats"):
        model.with_soft_targets(batch, {"feats": onehot})

    out = tmp_path / "s.tagger"
    done = invoke("distill", "--teacher", teacher, "--train", SAMPLE, "--dev", HELDOUT, "--out", out,
                  "--max-epochs", "2", "--json", *STUDENT)
    assert done.exit_code == 0, (done.stderr, done.exception)
    summary = json.loads(done.stdout)
    assert summary["soft_columns"] == ["upos", "xpos"] and "for upos, xpos" in summary["notes"][0]
    assert summary["dev_metric"] == "mean accuracy"
    # the teacher's dev score is the mean of its two columns' accuracies, as evaluate gives it
    assert summary["teachers"][0]["dev"] == pytest.approx(tagger.evaluate(str(teacher), HELDOUT, precision="fp32")["score"])
    student = tagger.load(out, precision="fp32")
    tagged = student.tag([["The", "dog", "sat", "."]])[0]
    assert len(tagged["upos"]) == len(tagged["xpos"]) == 4
    assert model_file.read_archive(out)["config"]["column"] == "upos,xpos"


def test_the_python_api_distils(teachers, tmp_path):
    records = []
    summary = tagger.distill(teachers=teachers, train=SAMPLE, dev=HELDOUT, out=tmp_path / "api.tagger", max_epochs=2,
                             column="upos", gold_weight=0.0, temperature=2.0, top_k=4, threads=1, on_epoch=records.append,
                             settings={"layers": 1, "hidden": 8, "word_dim": 8})
    assert summary["epochs"] == 2 == len(records) and summary["top_k"] == 4 and summary["temperature"] == 2.0
    assert summary["soft_columns"] == ["upos"]
    with pytest.raises(TaggerError, match="does not predict xpos"):
        tagger.distill(teachers=teachers, train=SAMPLE, dev=HELDOUT, out=tmp_path / "x.tagger", column="upos,xpos")
    _, meta = model_file.load(tmp_path / "api.tagger")
    assert meta["distillation"]["gold_weight"] == 0.0 and len(meta["distilled_from"]) == 2


def test_a_student_takes_pretrained_vectors_as_tagger_train_does(teachers, tmp_path):
    """``--embeddings``: the student gets the frozen table (its unseen words beyond the training
    words) and its file names the source, as a tagger trained with ``tagger train`` would."""
    vectors = tmp_path / "vectors.txt"
    words = ["quokka", "the", "dog", "numbat"]
    vectors.write_text("".join(f"{w} {' '.join(str(0.1 * (i + j)) for j in range(6))}\n" for i, w in enumerate(words)),
                       encoding="utf-8")
    out = tmp_path / "s.tagger"
    done = invoke("distill", "--teacher", teachers[0], "--train", SAMPLE, "--dev", HELDOUT, "--out", out,
                  "--max-epochs", "1", "--embeddings", vectors, "--json", *STUDENT)
    assert done.exit_code == 0, (done.stderr, done.exception)
    assert any(note.endswith("word vectors loaded") for note in json.loads(done.stdout)["notes"])
    model, meta = model_file.load(out)
    assert meta["embeddings"] == str(vectors) and model.config.pretrained_dim == 6
    assert {"quokka", "numbat"} <= set(model.vocabs["pretrained"])
    bad = tmp_path / "bad.txt"
    bad.write_text("the 0.1 0.2\ndog 0.3\n", encoding="utf-8")
    refused = invoke("distill", "--teacher", teachers[0], "--train", SAMPLE, "--dev", HELDOUT, "--out",
                     tmp_path / "b.tagger", "--max-epochs", "1", "--embeddings", bad, *STUDENT)
    assert_one_line_error(refused, str(bad))


def test_unlabeled_text_is_labelled_by_the_teachers_and_learnt_from(teachers, tmp_path):
    """``--unlabeled``: sentences without annotation join the training data with the teachers'
    best labels (and their distributions as soft targets); their words join the student's."""
    from tagger.training.distill import pseudo_labelled

    loaded = load_teachers([str(teachers[0])])
    text = read_sentences(DataSpec("data/heldout.txt", "text"))
    labelled = pseudo_labelled(loaded, text)
    model = loaded.models[0]
    expected = [[model.distribution_labels[j] for j in row[: len(s)]]
                for s, row in zip(text, model.distribution(model.collate(text, with_gold=False)).argmax(-1).tolist())]
    assert [s.words for s in labelled] == [s.words for s in text]
    assert [s.column("upos") for s in labelled] == expected

    out = tmp_path / "s.tagger"
    done = invoke("distill", "--teacher", teachers[0], "--train", SAMPLE, "--dev", HELDOUT, "--out", out,
                  "--max-epochs", "1", "--unlabeled", "data/heldout.txt", "--json", *STUDENT)
    assert done.exit_code == 0, (done.stderr, done.exception)
    summary = json.loads(done.stdout)
    plain = read_sentences(DataSpec(SAMPLE))
    assert summary["train_sentences"] == len(plain) + len(text) and f"{len(text)} of them unlabeled" in summary["notes"][0]
    student, meta = model_file.load(out)
    assert meta["unlabeled"].endswith("heldout.txt")
    from tagger.modules.input_layer import normalize

    only_there = {normalize(w) for s in text for w in s.words} - {normalize(w) for s in plain for w in s.words}
    assert only_there and only_there <= set(student.vocabs["words"])
    missing = invoke("distill", "--teacher", teachers[0], "--train", SAMPLE, "--out", tmp_path / "m.tagger",
                     "--unlabeled", tmp_path / "none.txt", *STUDENT)
    assert_one_line_error(missing, "none.txt")


def test_a_dev_file_with_another_tag_set_is_warned_of(tmp_path):
    """``tagger train``: when most dev values of a column never occur in training (UD Vietnamese
    VTB's dev writes XPOS ``ADV`` where its train writes ``Adv``), a warning says so; a dev file
    of the training tag set gets none."""
    lines = Path(HELDOUT).read_text(encoding="utf-8").splitlines()
    cased = [line if line.startswith("#") or not line else
             "\t".join(f.lower() if i == 4 else f for i, f in enumerate(line.split("\t"))) for line in lines]
    dev = tmp_path / "dev.conllu"
    dev.write_text("\n".join(cased) + "\n", encoding="utf-8")
    args = ["--train", SAMPLE, "--out", tmp_path / "m.tagger", "--max-epochs", "1", "--column", "xpos", *STUDENT]
    warned = invoke("train", "--dev", dev, *args)
    assert warned.exit_code == 0, warned.stderr
    assert "of the dev xpos values never occur in the training data (" in warned.stderr
    plain = invoke("train", "--dev", HELDOUT, *args)
    assert plain.exit_code == 0 and "never occur" not in plain.stderr


def test_a_temperature_that_is_no_number_is_refused():
    from tagger.training.distill import DistillRequest

    for temperature in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(TaggerError, match="--temperature must be a positive number"):
            DistillRequest(("t.tagger",), DataSpec("train.conllu"), None, "out.tagger", temperature=temperature)
