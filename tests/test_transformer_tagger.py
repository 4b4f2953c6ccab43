"""A pretrained transformer under the skip-LSTM tagger (``--encoder``, issue 36): training and
tagging with a tiny BERT built in the test, the model file self-contained (it loads and tags with
the BERT's folder gone), frozen and fine-tuned encoders, the evaluation path against the
training path, the encoder's learning rate and warm-up, gradient accumulation, and what refuses it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers")

import tagger  # noqa: E402
from tagger import engines, formats, model_file  # noqa: E402
from tagger.config import TrainingConfig, build_configs  # noqa: E402
from tagger.models.skip_lstm import SkipLSTMTagger  # noqa: E402
from tagger.training.trainer import make_optimizer, parameter_groups, set_rates, update  # noqa: E402
from tests.helpers import ROOT, assert_one_line_error, first_blocks, invoke  # noqa: E402
from tests.test_transformer_encoder import make_tiny_bert  # noqa: E402

TRAIN = ROOT / "data" / "ewt-train.conllu"
SMALL = ("hidden=12", "word_dim=8", "char_dim=3", "transformer_dim=6")


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> str:
    return make_tiny_bert(tmp_path_factory.mktemp("bert"), positions=40)


def small_model(bert: str, tmp_path: Path, tune: bool = False, **overrides) -> SkipLSTMTagger:
    """A tagger of :data:`SMALL` over the tiny BERT, its vocabularies from 30 training sentences."""
    values = [*SMALL, f"transformer={bert}", f"transformer_tune={str(tune).lower()}",
              *(f"{key}={value}" for key, value in overrides.items())]
    config, _ = build_configs(SkipLSTMTagger, SkipLSTMTagger.PRESETS, "fast", overrides=values)
    sentences = sentences_of(30)
    torch.manual_seed(1)
    model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, sentences))
    model.load_transformer()
    return model


def sentences_of(count: int) -> list:
    import io

    return list(formats.read(io.StringIO(first_blocks(TRAIN, count)), "conllu"))


def test_train_and_tag_with_an_encoder_and_the_file_needs_no_folder(bert, tmp_path):
    folder = Path(shutil.copytree(bert, tmp_path / "my-bert"))
    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    train.write_text(first_blocks(TRAIN, 60), encoding="utf-8")
    dev.write_text(first_blocks(ROOT / "data" / "ewt-dev.conllu", 15), encoding="utf-8")
    done = invoke("train", "--task", "pos", "--train", train, "--dev", dev, "--out", tmp_path / "pos.tagger",
                  "--encoder", folder, "--max-epochs", "2", "--quiet", "--json", *(a for v in SMALL for a in ("--set", v)))
    assert done.exit_code == 0, done.stderr
    assert "transformer" in done.stdout and "loaded" in done.stdout  # the note of load_transformer
    shutil.rmtree(folder)  # the model file keeps the encoder's config, tokenizer and weights
    archive = model_file.read_archive(tmp_path / "pos.tagger")
    assert archive["config"]["transformer"] == str(folder) and "transformer_files" in archive["vocabs"]
    assert any(key.startswith("transformer.model.") for key in archive["state_dict"])
    assert not engines.choose([tmp_path / "pos.tagger"]).runtime  # torch tags it: the runtimes have no transformer
    tagged = invoke("tag", "--model", tmp_path / "pos.tagger", dev)
    assert tagged.exit_code == 0, tagged.stderr
    rows = [line.split("\t") for line in tagged.stdout.splitlines() if line[:1].isdigit() and "-" not in line.split("\t")[0]]
    assert len(rows) > 100 and {row[3] for row in rows} <= set(archive["vocabs"]["tags"])
    model = tagger.load(tmp_path / "pos.tagger")
    assert model.module.transformer is not None


def test_the_evaluation_path_equals_the_training_path(bert, tmp_path):
    model = small_model(bert, tmp_path, window=3).eval()
    batch = model.collate(sentences_of(6), with_gold=False)
    fast = model(batch)  # the first layer's projection per distinct word, the transformer's part per token
    types = batch.types.t()
    hidden = model.rnn(model.token_input(batch, types, model.transformer_input(batch)), batch.lengths)
    slow = model.output(hidden).transpose(0, 1)
    inside = batch.types > 0
    assert torch.allclose(fast[inside], slow[inside], atol=1e-4)


@pytest.mark.parametrize("tune", [False, True])
def test_a_frozen_encoder_stays_and_a_tuned_one_trains_at_its_own_rate(bert, tmp_path, tune):
    model = small_model(bert, tmp_path, tune=tune)
    config = TrainingConfig(lr=0.1, encoder_lr=0.01, encoder_warmup=4)
    groups = parameter_groups(model, config)
    assert len(groups) == (2 if tune else 1)
    optimizer = make_optimizer(groups, config)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    model.train()
    batch = model.collate(sentences_of(8))
    for step in range(2):
        set_rates(optimizer, config.lr, step)
        if tune:
            assert optimizer.param_groups[1]["lr"] == pytest.approx(0.01 * (step + 1) / 4)
        assert optimizer.param_groups[0]["lr"] == pytest.approx(0.1)
        update(model, model, optimizer, [batch], 5.0)
    after = model.state_dict()
    moved = {k for k in before if not torch.equal(before[k], after[k])}
    assert any(k.startswith("transformer.model.") for k in moved) == tune
    assert {"transformer.mix", "transformer.scale", "transformer_proj.weight"} <= moved


def test_accumulated_batches_make_the_update_of_their_union():
    config, _ = build_configs(SkipLSTMTagger, SkipLSTMTagger.PRESETS, "fast",
                              overrides=["hidden=8", "word_dim=8", "input_dropout=0", "hidden_dropout=0",
                                         "rare_word_dropout=0"])
    sentences = sentences_of(12)
    models = []
    for _ in range(2):
        torch.manual_seed(3)
        models.append(SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, sentences)).train())
    training = TrainingConfig(lr=0.5)
    first, second = (make_optimizer(parameter_groups(m, training), training) for m in models)
    update(models[0], models[0], first, [models[0].collate(sentences[:5]), models[0].collate(sentences[5:])], 0)
    update(models[1], models[1], second, [models[1].collate(sentences)], 0)
    for (name, a), b in zip(models[0].named_parameters(), models[1].parameters()):
        assert torch.allclose(a, b, atol=1e-5), name
    assert any(not torch.equal(a, b) for a, b in zip(models[0].parameters(), SkipLSTMTagger(
        config, SkipLSTMTagger.vocabs_from(config, sentences)).parameters()))  # an update happened


def test_encoder_where_it_has_no_place_is_one_line(tmp_path, bert):
    done = invoke("train", "--task", "dep", "--train", TRAIN, "--out", tmp_path / "dep.model", "--encoder", bert,
                  "--max-epochs", "1")  # the FFN parser has no BiLSTM encoder to put it under
    assert_one_line_error(done, "--encoder", "bilstm-words")
    done = invoke("train", "--task", "tokenize", "--train", TRAIN, "--out", tmp_path / "tok.model", "--encoder", bert,
                  "--max-epochs", "1")
    assert_one_line_error(done, "--encoder", "tokenizer")
    missing = invoke("train", "--task", "pos", "--train", TRAIN, "--out", tmp_path / "p.tagger", "--encoder",
                     str(tmp_path / "no-such-folder"), "--max-epochs", "1")
    assert missing.exit_code != 0 and "Traceback" not in missing.stderr


def test_a_parser_takes_the_taggers_transformer_with_its_encoder(bert, tmp_path):
    """``bilstm-words`` from a tagger with a transformer (what --task pipeline --encoder trains):
    the encoder carries the transformer, its files and weights; evaluation equals training's path;
    the torch-free runtime leaves it to torch; the file round-trips."""
    from tagger.inference import predict
    from tagger.models.transition_parser import ParserConfig, TransitionParser
    from tagger.models.transition_parser.export import supported

    source = small_model(bert, tmp_path, window=3)
    sentences = sentences_of(30)
    config = ParserConfig(encoder="bilstm", features="replace", encoder_slots=6, hidden=12, label_dim=4,
                          encoder_dropout=0.0)
    parser = TransitionParser.with_encoder(config, TransitionParser.vocabs_from(config, sentences), source)
    encoder = parser.encoder
    assert encoder.transformer is not None and parser.config.encoder_transformer == source.config.transformer
    assert torch.equal(encoder.transformer.mix, source.transformer.mix)
    assert torch.equal(encoder.rnn.layers[0].w_x, source.rnn.layers[0].w_x)
    assert not supported(parser.config)
    parser.eval()
    batch = parser.collate(sentences[:6], with_gold=False)
    fast = encoder(batch.encoder, batch.tags, batch.bases, batch.lengths)
    encoder.train()
    encoder.rare_word_dropout, encoder.transformer.frozen = 0.0, False  # the training path, nothing random
    slow = encoder(batch.encoder, batch.tags, batch.bases, batch.lengths)
    encoder.transformer.frozen = True
    assert torch.allclose(fast, slow, atol=1e-4)
    parser.eval()
    model_file.save(tmp_path / "dep.model", parser, {})
    loaded, _ = model_file.load(tmp_path / "dep.model")
    assert predict(loaded, sentences[:8]) == predict(parser, sentences[:8])


def test_a_pipeline_with_an_encoder_gives_it_to_the_tagger_and_its_parser(bert, tmp_path):
    train = tmp_path / "train.conllu"
    train.write_text(first_blocks(TRAIN, 40), encoding="utf-8")
    done = invoke("train", "--task", "pipeline", "--encoder", bert, "--preset", "bilstm-words", "--train", train,
                  "--out", tmp_path / "pipe.model", "--max-epochs", "1", "--threads", "1", "--quiet",
                  "--set", "encoder_hidden=8", "--set", "hidden=12", "--pos-set", "hidden=8", "--pos-set", "word_dim=8",
                  "--pos-set", "transformer_dim=6")
    assert done.exit_code == 0, done.stderr
    stages = model_file.read_archive(tmp_path / "pipe.model")["stages"]
    assert [s["name"] for s in stages] == ["tokenizer", "skip_lstm", "transition_parser"]
    assert stages[1]["config"]["transformer"] == bert and stages[2]["config"]["encoder_transformer"] == bert
    assert "encoder_transformer_files" in stages[2]["vocabs"]
    name = "transformer.model.embeddings.word_embeddings.weight"  # frozen in both: stored once
    assert stages[1]["state_dict"][name].data_ptr() == stages[2]["state_dict"]["encoder." + name].data_ptr()
    tagged = invoke("tag", "--model", tmp_path / "pipe.model", stdin="Dogs bark. The cat sat on the mat.\n")
    assert tagged.exit_code == 0, tagged.stderr
    heads = [line.split("\t")[6] for line in tagged.stdout.splitlines() if line[:1].isdigit() and "-" not in line.split("\t")[0]]
    assert heads and heads.count("0") == tagged.stdout.count("# text = ")  # each sentence one root



def test_a_parser_trained_with_an_encoder_of_its_own(bert, tmp_path):
    train = tmp_path / "train.conllu"
    train.write_text(first_blocks(TRAIN, 40), encoding="utf-8")
    done = invoke("train", "--task", "dep", "--preset", "bilstm-words", "--encoder", bert, "--train", train,
                  "--out", tmp_path / "dep.model", "--max-epochs", "1", "--threads", "1", "--json",
                  "--set", "encoder_hidden=8", "--set", "hidden=12", "--set", "encoder_transformer_dim=6")
    assert done.exit_code == 0, done.stderr
    assert "loaded under the encoder" in done.stdout
    archive = model_file.read_archive(tmp_path / "dep.model")
    assert archive["config"]["encoder_transformer"] == bert and "encoder_transformer_files" in archive["vocabs"]
    from transformers import AutoModel

    pretrained = AutoModel.from_pretrained(bert).state_dict()["embeddings.word_embeddings.weight"]
    assert torch.equal(archive["state_dict"]["encoder.transformer.model.embeddings.word_embeddings.weight"], pretrained)
    tagged = invoke("tag", "--model", tmp_path / "dep.model", ROOT / "data" / "ewt-dev.conllu")
    assert tagged.exit_code == 0, tagged.stderr


def test_a_ccg_supertagger_trains_and_tags_with_an_encoder(bert, tmp_path):
    """``--task ccg --encoder``: the supertagger of CCGbank AUTO files takes it as the POS tagger does."""
    out = tmp_path / "ccg.tagger"
    done = invoke("train", "--task", "ccg", "--train", ROOT / "data" / "sample.auto", "--out", out, "--encoder", bert,
                  "--max-epochs", "1", "--set", "rare_tag_count=1", "--quiet", "--json",
                  *(a for v in SMALL for a in ("--set", v)))
    assert done.exit_code == 0, done.stderr
    archive = model_file.read_archive(out)
    assert archive["config"]["transformer"] == bert and archive["meta"]["task"] == "ccg"
    tagged = invoke("tag", "--model", out, "--format", "auto", ROOT / "data" / "sample.auto")
    assert tagged.exit_code == 0, tagged.stderr
    assert tagged.stdout.strip() and set(tagged.stdout.split()) & set(archive["vocabs"]["tags"])
