"""Lemmas learned as edit rules (:mod:`tagger.corpus.lemmas`): the rules torch-free on inline
pairs and on every treebank's lemmas; a tagger of UPOS and LEMMA trained on EWT, its lemmas in
CoNLL-U from both engines, scored by ``tagger evaluate``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tagger.corpus.features import canonical
from tagger.corpus.lemmas import SEP, apply, rule
from tests.helpers import DATA, ROOT, SMALL, invoke

SHARED = ROOT.parent / "shared" / "data"


@pytest.mark.parametrize("word, lemma, case", [
    ("gemacht", "machen", "l"),  # cut a prefix and a suffix, add a suffix
    ("Running", "run", "l"),  # the lemma in lower case: the same rule as for "running"
    ("running", "run", "l"),
    ("Paris", "Paris", "k"),  # the word's case kept
    ("iPhone", "iPhone", "k"),
    ("PARIS", "Paris", "t"),
    ("nasa", "NASA", "u"),
    ("went", "go", "l"),  # nothing shared: the whole word replaced
    ("İstanbul", "İstanbul", "l"),  # lower case longer than the word: edits on the word as it is
    ("a\x1fb", "ab", "x"),  # the separator in a word: the lemma kept whole
])
def test_a_rule_makes_the_lemma_of_its_word(word, lemma, case):
    made = rule(word, lemma)
    assert made[0] == case and apply(word, made) == lemma


def test_rules_generalise_and_never_cut_what_a_word_lacks():
    assert rule("Running", "run") == rule("running", "run")
    assert apply("walked", rule("jumped", "jump")) == "walk"
    assert apply("Studies", rule("flies", "fly")) == "study"
    assert apply("sing", rule("jumped", "jump")) == "sing"  # no "ed" to cut: the word itself
    assert apply("x", rule("x", "_")) == "_" and rule("_", "_") != "_"  # an unannotated lemma; the word "_"
    assert apply("cafe\u0301", rule("café", "café")) == "café"  # decomposed text read composed, as the taggers do
    assert SEP not in apply("walked", rule("jumped", "jump"))


@pytest.mark.parametrize("path", ["ud-english-ewt/en_ewt-ud-dev.conllu", "ud-japanese-gsd/ja_gsd-ud-dev.conllu",
                                  "ud-portuguese-bosque/pt_bosque-ud-dev.conllu", "ud-vietnamese-vtb/vi_vtb-ud-dev.conllu"])
def test_every_lemma_of_a_treebank_is_made_again_by_its_rule(path):
    from tagger.formats import read_corpus

    if not (SHARED / path).exists():
        pytest.skip("needs ../shared/data")
    pairs = [(w, l) for s in read_corpus(SHARED / path) for w, l in zip(s.words, s.columns["lemma"])]
    wrong = [(w, l) for w, l in pairs if apply(w, rule(w, l)) != (l if l == "_" and w != "_" else canonical(l))]
    assert len(pairs) > 10_000 and wrong == []
    assert len({rule(w, l) for w, l in pairs}) < len(pairs) / 20  # rules repeat: they are classes to learn


@pytest.fixture(scope="module")
def lemma_tagger(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lemma") / "lemma.tagger"
    result = invoke("train", "--task", "pos", "--column", "upos,lemma", "--train", str(DATA / "ewt-train.conllu"),
                    "--dev", str(DATA / "ewt-dev.conllu"), "--out", str(out), "--max-epochs", "6", *SMALL, "--json")
    assert result.exit_code == 0, result.output
    return out


def test_a_tagger_learns_lemmas_and_writes_them_in_conllu(lemma_tagger, tmp_path):
    import tagger
    from tagger.formats import read_corpus

    test = DATA / "ewt-test.conllu"
    out = tmp_path / "out.conllu"
    assert invoke("tag", "--model", str(lemma_tagger), "-q", str(test), "--output", str(out)).exit_code == 0
    predicted, gold = read_corpus(out), read_corpus(test)
    lemmas = [l for s in predicted for l in s.columns["lemma"]]
    assert SEP not in "".join(lemmas) and "_" not in set(lemmas) - {"_" for s in gold for w in s.words if w == "_"}
    right = sum(p == g for s, t in zip(predicted, gold) for p, g in zip(s.columns["lemma"], t.columns["lemma"]))
    assert right / len(lemmas) > 0.8  # measured 0.86; copying the word lower-cased gives 0.74 of these words
    # both engines write the same lemmas
    words = [s.words for s in gold]
    runtime = [r["lemma"] for r in tagger.load(str(lemma_tagger)).tag(words)]
    reference = [r["lemma"] for r in tagger.load(str(lemma_tagger), engine="torch").tag(words)]
    assert runtime == reference == [s.columns["lemma"] for s in predicted]
    scores = json.loads(invoke("evaluate", "--model", str(lemma_tagger), str(test), "--json").stdout)
    assert scores["column"] == "upos,lemma"
    assert scores["tagging"]["columns"]["lemma"]["accuracy"] == pytest.approx(100 * right / len(lemmas))


def test_lemmas_are_no_tags_to_list(lemma_tagger, tmp_path):
    assert invoke("train", "--task", "lemma", "--train", str(DATA / "ewt-train.conllu"), "--dev",
                  str(DATA / "ewt-dev.conllu"), "--out", str(tmp_path / "l.tagger"), "--max-epochs", "1",
                  *SMALL, "--quiet").exit_code == 0
    result = invoke("tag", "--model", str(tmp_path / "l.tagger"), "--top-k", "2", "-q", str(DATA / "ewt-test.conllu"))
    assert result.exit_code != 0 and "first column is lemma" in result.output
    assert invoke("tag", "--model", str(lemma_tagger), "--top-k", "2", "-q", "--output-format", "jsonl",
                  str(DATA / "ewt-test.conllu")).exit_code == 0  # upos first: its tags listed
