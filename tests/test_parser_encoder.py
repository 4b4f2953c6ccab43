"""The transition parser's contextual features (``encoder=bilstm``): shapes and training, trees
from decoding, the per-token rows against the plain products, an encoder taken from a tagger,
bootstrapping with an encoder, model files (with an encoder, and older ones without)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch
from torch.nn import functional as F

from tagger import model_file
from tagger.config import build_configs
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.inference import predict
from tagger.models.skip_lstm import SkipLSTMTagger
from tagger.models.transition_parser import ParserConfig, TransitionParser
from tagger.models.transition_parser.decoder import EmbeddingInputs, TokenInputs
from tests.helpers import invoke
from tests.test_parser import TRAIN, assert_tree, make, randomise

FIXTURES = Path(__file__).parent / "fixtures"
#: A small encoder that reads everything it can: words, caps, characters, a character CNN, the tags.
SMALL = {"encoder": "bilstm", "encoder_layers": 2, "encoder_hidden": 6, "encoder_word_dim": 5, "encoder_char_dim": 3,
         "encoder_char_length": 2, "encoder_char_cnn": 4, "encoder_tag_dim": 3, "word_dim": 7, "tag_dim": 5,
         "label_dim": 4, "hidden": 9}
VARIANTS = [("ffn", "replace", 18), ("ffn", "beside", 6), ("lstm", "replace", 4), ("gru", "beside", 18),
            ("elman", "replace", 6)]


def encoded(arch: str = "ffn", features: str = "replace", slots: int = 18, train=TRAIN, **overrides) -> TransitionParser:
    return make(arch, train, **{**SMALL, "features": features, "encoder_slots": slots, **overrides})


def random_sentences(model: TransitionParser, count: int, seed: int) -> list[Sentence]:
    rng = random.Random(seed)
    pool = [w for s in TRAIN for w in s.words] + ["unseen", "Zzz", "42", "a-very-long-unseen-word"]
    tags = ["DET", "NOUN", "VERB", "PUNCT", "XYZ", "_"]
    lengths = [1, 2, 3, 120] + [rng.randint(1, 30) for _ in range(count - 4)]
    return [Sentence([rng.choice(pool) for _ in range(n)], {"upos": [rng.choice(tags) for _ in range(n)]})
            for n in lengths]


@pytest.mark.parametrize("arch,features,slots", VARIANTS)
def test_training_step_reaches_the_encoder(arch: str, features: str, slots: int) -> None:
    model = encoded(arch, features, slots)
    model.train()
    batch = model.collate(TRAIN)
    # every tree is trained on (the non-projective one lifted), each sentence a row of the encoder's batch
    assert batch.kept == list(range(len(TRAIN))) and batch.encoder.types.shape == (len(TRAIN), max(map(len, TRAIN)))
    assert batch.encoder.gather.shape == batch.words.shape  # a vector for every global position
    scores = model(batch)
    assert scores.shape == (2 * batch.n_tokens, model.n_actions)
    loss = model.loss(scores, batch)
    loss.backward()
    assert torch.isfinite(loss)
    assert model.slot_weight.shape == (12, slots, model.hidden.out_features)
    for name in ("encoder.rnn.layers.0.w_x", "encoder.rnn.layers.1.w_h", "encoder.input.word.weight",
                 "encoder.input.cnn.weight", "encoder.tag_emb.weight", "encoder.root", "slot_weight", "hidden.weight"):
        grad = dict(model.named_parameters())[name].grad
        assert grad is not None and grad.abs().sum() > 0, name
    assert (model.word_emb is None) == (features == "replace")
    assert model.encoder.null.grad is not None  # empty slots read it


@pytest.mark.parametrize("arch,features,slots", VARIANTS)
def test_decode_gives_single_rooted_trees_and_the_rows_change_nothing(arch: str, features: str, slots: int) -> None:
    model = encoded(arch, features, slots, precompute=6)
    randomise(model, seed=len(arch) + slots)
    model.eval()
    sentences = random_sentences(model, 30, seed=slots)
    predictions = predict(model, sentences, max_tokens=300)
    for s, (heads, rels) in zip(sentences, predictions):
        assert_tree(heads, len(s))
        assert [r == "root" for r in rels] == [h == 0 for h in heads]
    model.config.precompute = 0  # the plain products: the same trees
    assert predict(model, sentences, max_tokens=300) == predictions
    model.config.precompute = 6
    assert [model.decode(model.collate([s], with_gold=False))[0] for s in sentences[:6]] == predictions[:6]


@pytest.mark.parametrize("features", ["replace", "beside"])
def test_per_token_rows_equal_the_plain_products(features: str) -> None:
    """In evaluation, the training path (rows per token and slot, summed per configuration) and
    decoding's per-batch rows give what x · W gives, x the concatenated features."""
    model = encoded("ffn", features, 6)
    randomise(model, seed=5)
    model.eval()
    batch = model.collate(TRAIN)
    positions = batch.positions[batch.valid]
    with torch.no_grad():
        word_x = model.word_rows(batch.words) if model.word_emb is not None else None
        plain = model.hidden(model.embed(positions, word_x, batch.tags, batch.labels)) \
            + model.plain_encoded(positions, model.token_vectors(batch))
        assert torch.allclose(model(batch), model.output(F.relu(plain)), atol=1e-5)
        rows, products = TokenInputs(model, batch), EmbeddingInputs(model, batch)
        for inputs in (rows, products):
            inputs.attach(positions[:5, 6], torch.tensor([0, 1, 2, 0, 1]))  # some child slots get labels
        assert torch.allclose(rows.pre(positions), products.pre(positions), atol=1e-5)
        # the encoder reads the sentence in context: a word's vector depends on its neighbours
        vectors = model.token_vectors(batch)
        cat = TRAIN[0].words.index("cat")
        other = model.collate([Sentence(["The", "cat", "ran"], {"upos": ["DET", "NOUN", "VERB"]})], with_gold=False)
        assert not torch.allclose(vectors[batch.bases[0] + 1 + cat], model.token_vectors(other)[other.bases[0] + 2])


@pytest.mark.parametrize("overrides", [{}, {"encoder_window": 3}, {"encoder_tag_dim": 0, "encoder_char_cnn": 0}])
def test_the_encoders_evaluation_path_equals_its_training_path(overrides: dict) -> None:
    """In evaluation the first layer's input projection is made once per distinct word (and
    tag), as the tagger does; without dropout it is what the per-token path gives."""
    model = encoded("ffn", "replace", 6, encoder_dropout=0.0, rare_word_dropout=0.0, **overrides)
    randomise(model, seed=8)
    with torch.no_grad():  # padding rows stay zero in training (padding_idx): make them so again
        for table in (model.encoder.input.word, model.encoder.input.caps, model.encoder.input.char,
                      model.encoder.input.cnn_char):
            if table is not None:
                table.weight[0] = 0
    model.eval()
    batch = model.collate(random_sentences(model, 12, seed=2), with_gold=False)
    with torch.no_grad():
        fast = model.token_vectors(batch)
        plain = model.train().token_vectors(batch)  # no dropout anywhere: the same function
    assert torch.allclose(fast, plain, atol=1e-5)


def test_config_is_checked_and_the_default_is_no_encoder() -> None:
    assert ParserConfig().encoder == "none" and make().encoder is None and make().slot_weight is None
    for bad, match in (({"encoder": "cnn"}, "encoder must be"), ({"features": "both"}, "features must be"),
                       ({"encoder": "bilstm", "encoder_slots": 19}, "encoder_slots"),
                       ({"encoder": "bilstm", "encoder_window": 2}, "odd"),
                       ({"encoder": "bilstm", "encoder_word_dim": 0, "encoder_caps_dim": 0, "encoder_char_dim": 0},
                        "must read the words"), ({"encoder_subwords": "syllables"}, "encoder_subwords must be")):
        with pytest.raises(ValueError, match=match):
            ParserConfig(**bad)
    config, training = build_configs(TransitionParser, TransitionParser.PRESETS, "bilstm")
    assert config.encoder == "bilstm" and training.optimizer == "adam"
    assert build_configs(TransitionParser, TransitionParser.PRESETS, "bilstm-lstm")[0].arch == "lstm"


# ----------------------------------------------------------------------------- from a tagger
def tiny_tagger(**overrides) -> SkipLSTMTagger:
    values = {"layers": 3, "hidden": 6, "word_dim": 5, "char_dim": 3, "char_length": 2, "char_cnn": 4, **overrides}
    config, _ = build_configs(SkipLSTMTagger, SkipLSTMTagger.PRESETS, "fast", overrides=[f"{k}={v}" for k, v in values.items()])
    torch.manual_seed(3)
    tagger = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, TRAIN))
    randomise(tagger, seed=9)  # no weight left at its initialisation
    return tagger


@pytest.mark.parametrize("tag_dim,units", [(0, False), (3, False), (0, True)])
def test_an_encoder_from_a_tagger_takes_its_shape_vocabularies_and_weights(tag_dim: int, units: bool) -> None:
    tagger = tiny_tagger(**({"subwords": "suffixes", "subword_dim": 3} if units else {}))
    config = ParserConfig(**{**SMALL, "encoder": "none", "encoder_layers": 1, "encoder_tag_dim": tag_dim})
    vocabs = TransitionParser.vocabs_from(config, TRAIN[:2])
    parser = TransitionParser.with_encoder(config, vocabs, tagger)
    c, t = parser.config, tagger.config
    assert (c.encoder, c.encoder_layers, c.encoder_hidden, c.encoder_window, c.encoder_char_cnn) == ("bilstm", 3, 6, 3, 4)
    assert c.encoder_tag_dim == tag_dim and c.hidden == 9  # the parser's own options stay
    assert parser.vocabs["encoder_words"] == tagger.vocabs["words"] and parser.vocabs["words"] == vocabs["words"]
    assert parser.vocabs.get("encoder_subwords") == tagger.vocabs.get("subwords")  # the tagger's subword units, if any
    assert (parser.encoder.input.subword is not None) == units
    mine = parser.encoder.state_dict()
    for name, value in tagger.state_dict().items():
        if name.startswith(("input.", "rnn.")):
            if name == "rnn.layers.0.w_x" and tag_dim:
                assert torch.equal(mine[name][:, : value.shape[1]], value)
                assert mine[name].shape[1] == value.shape[1] + tag_dim  # the tag rows keep their initialisation
                assert not torch.equal(mine[name][:, value.shape[1]:], torch.zeros_like(mine[name][:, value.shape[1]:]))
            else:
                assert torch.equal(mine[name], value), name
    # a word is featurised as the tagger does it
    assert parser.encoder.featurizer.token("Cat") == tagger.featurizer.token("Cat")
    parser.eval()
    assert len(predict(parser, TRAIN)) == len(TRAIN)


def test_an_encoder_from_what_cannot_give_one_is_refused() -> None:
    config = ParserConfig(**SMALL)
    vocabs = TransitionParser.vocabs_from(config, TRAIN)
    with pytest.raises(ValueError, match="cell='block'"):
        TransitionParser.with_encoder(config, vocabs, tiny_tagger(cell="block", skip="none", gate="input"))
    with pytest.raises(ValueError, match="skip_lstm tagger, not a transition_parser"):
        TransitionParser.with_encoder(config, vocabs, make())
    with pytest.raises(TaggerError, match="takes no encoder"):
        SkipLSTMTagger.with_encoder(tiny_tagger().config, {}, tiny_tagger())


def test_train_with_encoder_from_a_tagger_on_the_command_line(tmp_path: Path) -> None:
    tagger = tmp_path / "pos.tagger"
    done = invoke("train", "--task", "pos", "--train", "data/sample.conllu", "--out", str(tagger), "--max-epochs", "1",
                  "--set", "layers=2", "--set", "hidden=8", "--set", "word_dim=8", "--threads", "1", "--quiet")
    assert done.exit_code == 0, done.output
    parser = tmp_path / "dep.model"
    done = invoke("train", "--task", "dep", "--preset", "bilstm", "--encoder-from", str(tagger), "--train",
                  "data/sample.conllu", "--dev", "data/heldout.conllu", "--out", str(parser), "--max-epochs", "2",
                  "--set", "hidden=16", "--set", "word_dim=8", "--set", "tag_dim=8", "--set", "label_dim=8",
                  "--threads", "1", "--json")
    assert done.exit_code == 0, done.output
    assert f"encoder initialised from {tagger}" in json.loads(done.stdout)["notes"]
    model, _ = model_file.load(parser)
    assert (model.config.encoder, model.config.encoder_layers, model.config.encoder_hidden) == ("bilstm", 2, 8)
    done = invoke("train", "--task", "dep", "--encoder-from", str(parser), "--train", "data/sample.conllu",
                  "--out", str(tmp_path / "x"), "--max-epochs", "1")
    assert done.exit_code != 0 and "skip_lstm tagger" in done.output and "Traceback" not in done.output
    done = invoke("train", "--task", "pos", "--encoder-from", str(tagger), "--train", "data/sample.conllu",
                  "--out", str(tmp_path / "y"), "--max-epochs", "1")
    assert done.exit_code != 0 and "takes no encoder" in done.output


def test_a_parser_that_reads_no_pos_declares_no_input_columns_and_refuses_a_pos_model(tmp_path: Path) -> None:
    """``features=replace`` with ``encoder_tag_dim=0`` (preset ``bilstm-words``): no POS read, so no
    column asked of the input and nothing for ``--pos-model`` to retag; any other setting reads it."""
    for preset, reads in (("bilstm-words", []), ("bilstm-tags", ["upos"]), ("bilstm", ["upos"]), ("ffn", ["upos"])):
        config = build_configs(TransitionParser, TransitionParser.PRESETS, preset)[0]
        assert TransitionParser.pos_columns(config) == reads, preset
        assert TransitionParser.pos_column(config) == (reads[0] if reads else None)
    model = encoded("ffn", "replace", 6, encoder_tag_dim=0)
    assert model.input_columns == [] and encoded("ffn", "replace", 6).input_columns == ["upos"]
    done = invoke("train", "--task", "dep", "--preset", "bilstm-words", "--pos-model", str(tmp_path / "pos.tagger"),
                  "--train", "data/sample.conllu", "--out", str(tmp_path / "dep.model"), "--max-epochs", "1")
    assert done.exit_code == 1 and "reads no POS" in done.output and "Traceback" not in done.output


# ----------------------------------------------------------------------------- bootstrapping
@pytest.mark.parametrize("arch", ["lstm", "gru", "elman"])
def test_bootstrap_copies_the_encoder_and_the_slot_weights_gate_by_gate(arch: str) -> None:
    ffn = encoded("ffn", "beside", 6)
    randomise(ffn, seed=2)
    rnn = TransitionParser(ParserConfig(**{**SMALL, "arch": arch, "features": "beside", "encoder_slots": 6}), ffn.vocabs)
    before = rnn.slot_weight.detach().clone()
    rnn.bootstrap(ffn, [rnn.gates[0]])
    size = rnn.config.hidden
    assert torch.equal(rnn.slot_weight[..., :size], ffn.slot_weight)
    assert torch.equal(rnn.slot_weight[..., size:], before[..., size:])  # the gates not chosen
    for name, value in ffn.encoder.state_dict().items():
        assert torch.equal(rnn.encoder.state_dict()[name], value), name
    assert torch.equal(rnn.word_emb.weight, ffn.word_emb.weight)
    rnn.eval()
    for s, (heads, _) in zip(TRAIN, predict(rnn, TRAIN)):
        assert_tree(heads, len(s))


def test_bootstrap_with_an_encoder_refuses_what_does_not_fit() -> None:
    ffn = encoded("ffn", "replace", 6)
    with pytest.raises(ValueError, match="encoder_slots differs.*add --set encoder_slots=6"):
        TransitionParser(ParserConfig(**{**SMALL, "arch": "lstm", "features": "replace", "encoder_slots": 4}),
                         ffn.vocabs).bootstrap(ffn)
    with pytest.raises(ValueError, match="encoder differs"):
        TransitionParser(ParserConfig(arch="lstm", word_dim=7, tag_dim=5, label_dim=4, hidden=9), ffn.vocabs).bootstrap(ffn)
    vocabs = {**ffn.vocabs, "encoder_words": ffn.vocabs["encoder_words"][:-1]}
    with pytest.raises(ValueError, match="encoder_words vocabulary differs"):
        TransitionParser(ParserConfig(**{**SMALL, "arch": "lstm", "features": "replace", "encoder_slots": 6}),
                         vocabs).bootstrap(ffn)


# ----------------------------------------------------------------------------- model files
def test_a_parser_with_an_encoder_round_trips(tmp_path: Path) -> None:
    model = encoded("lstm", "beside", 6)
    randomise(model, seed=4)
    model.eval()
    model_file.save(tmp_path / "p.model", model, {})
    archive = model_file.read_archive(tmp_path / "p.model")
    assert archive["config"]["encoder"] == "bilstm" and "encoder_words" in archive["vocabs"]
    assert any(k.startswith("encoder.rnn.") for k in archive["state_dict"]) and "slot_weight" in archive["state_dict"]
    loaded, _ = model_file.load(tmp_path / "p.model")
    sentences = random_sentences(model, 10, seed=1)
    assert predict(loaded, sentences) == predict(model, sentences)


@pytest.mark.parametrize("arch", ["ffn", "lstm"])
def test_a_parser_file_written_before_the_encoder_loads_and_parses_as_it_did(arch: str) -> None:
    """tests/fixtures/make_parser_ee4164c.py wrote these with the code of commit ee4164c."""
    path = FIXTURES / f"parser-{arch}-ee4164c.model"
    archive = model_file.read_archive(path)
    assert "encoder" not in archive["config"] and not any(k.startswith("encoder.") for k in archive["state_dict"])
    model, meta = model_file.load(path)
    assert meta["note"] == "written by tagger ee4164c"
    assert model.config.encoder == "none" and model.encoder is None
    expected = json.loads((FIXTURES / "parser-ee4164c-expected.json").read_text())[arch]
    toy = [Sentence(s.words, dict(s.columns)) for s in (TRAIN[0], TRAIN[2])]
    toy.append(Sentence("Dogs bark at 99 cats".split(), {"head": [2, 0, 5, 5, 2], "upos": "NOUN VERB ADP NUM NOUN".split(),
                                                          "deprel": "nsubj root case nummod obl".split()}))
    with torch.no_grad():
        scores = model(model.collate(toy))
    assert torch.allclose(scores, torch.tensor(expected["scores"]), atol=2e-6)
    parses = [list(map(list, p)) for p in model.decode(model.collate(toy, with_gold=False))]
    assert parses == expected["parses"]
    for precompute in (0, 6):
        model.config.precompute = precompute
        assert [list(map(list, p)) for p in predict(model, toy)] == expected["parses"]


def test_load_embeddings_with_an_encoder() -> None:
    words, vectors = ["cat", "dog", "nope"], torch.arange(15.0).view(3, 5)
    model = encoded("ffn", "replace", 4, vectors="init")  # no static word embeddings: the encoder's (5 dims)
    assert model.load_embeddings(words, vectors) == 2
    assert torch.equal(model.encoder.input.word.weight[model.encoder.word_vocab.index("cat")], vectors[0])
    beside = encoded("ffn", "beside", 4, word_dim=5, vectors="init")  # both tables are 5 wide: both get them
    assert beside.load_embeddings(words, vectors) == 2
    assert torch.equal(beside.word_emb.weight[beside.word_vocab.stoi["dog"]], vectors[1])
    assert torch.equal(beside.encoder.input.word.weight[beside.encoder.word_vocab.index("dog")], vectors[1])
    with pytest.raises(TaggerError, match="encoder_word_dim is 5; add --set encoder_word_dim=7"):
        model.load_embeddings(words, torch.zeros(3, 7))
    frozen = encoded("ffn", "beside", 4, word_dim=5)  # the default: the static words get a frozen table
    assert frozen.load_embeddings(words, vectors) == 3  # cat, dog and the unseen "nope"
    assert frozen.word_pretrained is not None and frozen.vocabs["pretrained"] == ["nope"]
    assert torch.equal(frozen.encoder.input.word.weight[frozen.encoder.word_vocab.index("dog")], vectors[1])
    no_words = encoded("ffn", "beside", 4, word_dim=5, encoder_word_dim=0)  # an encoder of characters only
    assert no_words.load_embeddings(words, vectors) == 3 and no_words.word_pretrained is not None
    # the default with no static words: the encoder's input gets the frozen table, of any width
    table = encoded("ffn", "replace", 4)
    assert table.load_embeddings(words, torch.zeros(3, 7) + 1) == 3 and table.config.encoder_pretrained_dim == 7
    assert table.vocabs["encoder_pretrained"] == ["nope"] and table.encoder.input.pretrained is not None
    assert table.encoder.featurizer.token("nope")[0] == len(table.encoder.word_vocab)  # its row, after the words'
    assert float(table.encoder.input.word.weight.detach()[table.encoder.word_vocab.index("cat")].abs().sum()) == 0.0


pytestmark = pytest.mark.usefixtures("one_thread")  # conftest
