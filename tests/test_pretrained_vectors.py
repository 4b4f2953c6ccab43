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
        tagger = runtime.load(path, kernel)
        assert tagger.arrays.pretrained.dtype == np.float16  # kept as stored: a row made float32 where read
        mine = tagger.tag([s.words for s in dev])
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


# ----------------------------------------------------------------------------- the parser's encoder (issue 34: every family)
@pytest.fixture(scope="module")
def parser_with_table(vectors_and_model):
    """A ``bilstm-words`` parser whose encoder starts from the tagger with the table (as
    ``--task pipeline --embeddings`` builds it), trained one epoch, and its file."""
    vectors, tagger_file, train, _ = vectors_and_model
    out = tagger_file.parent / "p.model"
    done = invoke("train", "--task", "dep", "--preset", "bilstm-words", "--train", train, "--dev", train, "--out", out,
                  "--encoder-from", tagger_file, "--embeddings", vectors, "--max-epochs", "1", "--threads", "1",
                  "--set", "hidden=32", "--quiet")
    assert done.exit_code == 0, done.stderr
    return out


def test_a_parser_encoder_from_a_tagger_with_a_table_keeps_it_and_its_words(vectors_and_model, parser_with_table):
    tagger = archive.read(vectors_and_model[1])
    parser = archive.read(parser_with_table)
    assert parser["config"]["encoder_pretrained_dim"] == 12
    assert parser["vocabs"]["encoder_pretrained"] == tagger["vocabs"]["pretrained"]
    assert np.array_equal(parser["state_dict"]["encoder.input.pretrained"], tagger["state_dict"]["input.pretrained"])
    assert parser["state_dict"]["encoder.input.pretrained"].dtype == np.float16  # frozen: not trained, still fp16


def test_the_parser_reads_an_unseen_word_through_its_vector(parser_with_table):
    model, _ = model_file.load(parser_with_table)
    encoder = model.encoder
    ids = [encoder.featurizer.token(word)[0] for word in [*UNSEEN, "zzyzx"]]
    assert all(i >= len(encoder.word_vocab) for i in ids[:3]) and ids[3] == 1  # table rows; the last is UNK
    with torch.no_grad():
        vectors = encoder.input.word_vectors(torch.tensor(ids))
    assert not torch.equal(vectors[0], vectors[3]) and not torch.equal(vectors[0], vectors[1])
    sentence = Sentence(["the", UNSEEN[0], "sat"], {})
    assert len(predict(model, [sentence])[0][0]) == 3  # it parses a sentence with such a word


def test_a_pipeline_stores_a_table_its_stages_share_once(tmp_path, vectors_and_model, parser_with_table):
    tagger, parser = model_file.read_archive(vectors_and_model[1]), model_file.read_archive(parser_with_table)
    separate = tmp_path / "separate.model"
    model_file.atomic_save({"stages": [tagger, parser]}, separate)  # two copies of the table
    shared = tmp_path / "pipe.model"
    model_file.save_pipeline(shared, [tagger, parser], {})
    table_bytes = tagger["state_dict"]["input.pretrained"].numel() * 2
    assert separate.stat().st_size - shared.stat().st_size > 0.9 * table_bytes
    loaded, _ = model_file.load(shared)
    assert torch.equal(loaded.stages[0].input.pretrained, loaded.stages[1].encoder.input.pretrained)


def test_half_weights_halve_the_file_share_the_table_and_keep_the_parses(tmp_path, vectors_and_model, parser_with_table):
    """The shipped model's storage (bench/build_default_model.py): float32 weights as float16,
    read back as float32 by torch and the runtimes alike."""
    tagger, parser = model_file.read_archive(vectors_and_model[1]), model_file.read_archive(parser_with_table)
    full, half = tmp_path / "full.model", tmp_path / "half.model"
    model_file.save_pipeline(full, [tagger, parser], {})
    model_file.atomic_save(model_file.half_weights(model_file.read_archive(full)), half)
    assert half.stat().st_size < 0.6 * full.stat().st_size
    stored = archive.read(half)["stages"]
    assert stored[0]["state_dict"]["rnn.layers.0.w_h"].dtype == np.float16
    a, _ = model_file.load(full)
    b, _ = model_file.load(half)
    assert b.stages[0].rnn.layers[0].w_h.dtype == torch.float32
    dev = list(formats.read(io.StringIO(first_blocks(EWT / "en_ewt-ud-dev.conllu", 30)), "conllu"))
    tags_a, tags_b = predict(a.stages[0], dev), predict(b.stages[0], dev)
    agree = sum(x == y for s, t in zip(tags_a, tags_b) for x, y in zip(s, t)) / sum(len(s) for s in tags_a)
    assert agree > 0.97  # only the stored values are rounded (10-bit mantissa)
    alone = tmp_path / "half.tagger"  # the torch-free runtime reads such a file too, as torch does
    model_file.atomic_save(model_file.half_weights(tagger), alone)
    assert [m["upos"] for m in runtime.load(alone).tag([s.words for s in dev])] == tags_b
