"""Pretrained vectors in the skip-LSTM tagger (issue 34): the frozen table (Dozat & Manning's sum
of a fixed, projected pretrained vector and the trained embedding) for words seen in training or
not, stored in fp16 in the model file, read by the torch model and the torch-free runtime alike;
``vectors=init`` initialises the training words' embeddings only, as before."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from tagger import archive, formats, model_file
from tagger.corpus.records import Sentence
from tagger.inference import predict
from tagger.runtime import skip_lstm as runtime
from tagger.runtime.kernels import Kernel
from tests.conftest import EWT
from tests.helpers import first_blocks, invoke

UNSEEN = ["quokka", "wombat", "numbat"]  # in the vectors, not in the training sentences


@pytest.fixture(scope="module")
def vectors_and_model(tmp_path_factory):
    if not (EWT / "en_ewt-ud-train.conllu").exists():
        pytest.skip("needs ../shared/data")
    folder = tmp_path_factory.mktemp("vectors")
    train = folder / "train.conllu"
    train.write_text(first_blocks(EWT / "en_ewt-ud-train.conllu", 60), encoding="utf-8")
    words = list(dict.fromkeys(w.lower() for s in formats.read(train) for w in s.words))
    rng = np.random.default_rng(0)
    vectors = folder / "vectors.txt.gz"
    import gzip

    with gzip.open(vectors, "wt", encoding="utf-8") as out:  # the unseen words first: the most frequent
        for word in UNSEEN + words[::2]:
            out.write(word + " " + " ".join(f"{x:.4f}" for x in rng.standard_normal(12)) + "\n")
    model = folder / "m.tagger"
    done = invoke("train", "--train", train, "--dev", train, "--out", model, "--max-epochs", "2", "--embeddings",
                  vectors, "--set", "hidden=16", "--set", "word_dim=16", "--set", "char_dim=4", "--set", "lr=0.01",
                  "--quiet")
    assert done.exit_code == 0, done.stderr
    return vectors, model, train, words


def test_the_frozen_table_covers_training_words_and_unseen_ones_in_fp16(vectors_and_model):
    _, model, _, words = vectors_and_model
    plain = archive.read(model)
    table, project = plain["state_dict"]["input.pretrained"], plain["state_dict"]["input.project.weight"]
    assert plain["config"]["pretrained_dim"] == 12 and table.dtype == np.float16 and project.shape == (16, 12)
    vocab = plain["vocabs"]["words"]
    assert plain["vocabs"]["pretrained"][:3] == UNSEEN and not set(plain["vocabs"]["pretrained"]) & set(vocab)
    assert table.shape == (len(vocab) + len(plain["vocabs"]["pretrained"]), 12)
    covered = [w for w in vocab[2:] if w in set(words[::2])]
    assert covered and all(table[vocab.index(w)].any() for w in covered)
    assert not table[:2].any()  # PAD and UNK: no vector


def test_an_unseen_word_with_a_vector_is_not_unk(vectors_and_model):
    _, path, _, _ = vectors_and_model
    model, _ = model_file.load(path)
    model.eval()
    ids = torch.tensor([model.featurizer.token(w)[0] for w in ["quokka", "wombat", "xyzzy", "qwerty"]])
    assert ids[0] >= len(model.word_vocab) and ids[2] == ids[3] == 1  # beyond the trained rows; UNK
    with torch.no_grad():
        e = model.input.word_vectors(ids)
    assert not torch.equal(e[0], e[2]) and not torch.equal(e[0], e[1]) and torch.equal(e[2], e[3])
    with torch.no_grad():  # the trained part of an unseen word is UNK's
        assert torch.allclose(e[0] - model.input.project(model.input.pretrained[ids[0]].float()), e[2])


def test_the_torch_free_runtime_gives_the_torch_models_labels(vectors_and_model):
    _, path, _, _ = vectors_and_model
    torch_model, _ = model_file.load(path)
    dev = list(formats.read(io.StringIO(first_blocks(EWT / "en_ewt-ud-dev.conllu", 40)), "conllu"))
    dev.append(Sentence(["The", "quokka", "and", "the", "wombat", "saw", "a", "numbat", "."]))
    theirs = predict(torch_model, dev)
    for kernel in (runtime.NUMPY, Kernel(f32=1)):
        mine = runtime.load(path, kernel).tag([s.words for s in dev])
        assert [m["upos"] for m in mine] == theirs


def test_init_only_sets_the_training_words_rows(tmp_path, vectors_and_model):
    vectors, _, train, _ = vectors_and_model
    out = tmp_path / "init.tagger"
    done = invoke("train", "--train", train, "--dev", train, "--out", out, "--max-epochs", "1", "--embeddings", vectors,
                  "--set", "vectors=init", "--set", "word_dim=12", "--set", "hidden=16", "--set", "lr=1e-12", "--quiet")
    assert done.exit_code == 0, done.stderr
    plain = archive.read(out)
    assert plain["config"]["pretrained_dim"] == 0 and "input.pretrained" not in plain["state_dict"]
    assert "pretrained" not in plain["vocabs"]


def test_a_model_without_vectors_keeps_its_weights_and_random_draws():
    from tagger.models.skip_lstm import SkipLSTMTagger, TaggerConfig

    vocabs = {"words": ["<pad>", "<unk>", "a"], "chars": ["<pad>", "<unk>", "a"], "tags": ["<pad>", "X"]}
    torch.manual_seed(3)
    plain = SkipLSTMTagger(TaggerConfig(hidden=8, word_dim=4), vocabs)
    assert plain.input.pretrained is None and "input.pretrained" not in plain.state_dict()
    torch.manual_seed(3)
    again = SkipLSTMTagger(TaggerConfig(hidden=8, word_dim=4, vectors="init"), vocabs)
    assert all(torch.equal(a, b) for a, b in zip(plain.state_dict().values(), again.state_dict().values()))


def test_a_model_without_a_table_ignores_the_vocabularies_pretrained_words():
    """A student built from a teacher's vocabularies (which hold the table's words) but without
    the table never looks those words up: they are UNK to it."""
    from tagger.models.skip_lstm import SkipLSTMTagger, TaggerConfig

    vocabs = {"words": ["<pad>", "<unk>", "a"], "chars": ["<pad>", "<unk>", "a"], "tags": ["<pad>", "X"],
              "pretrained": ["quokka"]}
    student = SkipLSTMTagger(TaggerConfig(hidden=8, word_dim=4), vocabs)
    assert student.featurizer.token("quokka")[0] == 1 and "pretrained" not in student.vocabs
    with_table = SkipLSTMTagger(TaggerConfig(hidden=8, word_dim=4, pretrained_dim=3), vocabs)
    assert with_table.featurizer.token("quokka")[0] == 3 and tuple(with_table.input.pretrained.shape) == (4, 3)


def test_info_shows_the_source_the_rows_and_the_coverage(vectors_and_model):
    vectors, model, _, _ = vectors_and_model
    done = invoke("info", model, "--json")
    assert done.exit_code == 0, done.stderr
    meta = __import__("json").loads(done.stdout)["meta"]
    assert meta["embeddings"] == str(vectors)
    shown = meta["pretrained vectors"]
    assert "× 12 (fp16)" in shown and "words beyond the training words" in shown and "training words have a vector" in shown
