"""Every preset of every model family trains one step and scores dev (issue 31, item 2); of
presets whose resolved values are the same, the first stands for the others.

26 of the 60 tagger presets once crashed at their first dev evaluation: in evaluation the first
layer's input projection is computed per distinct word and the input itself was not built, but
where the input is as wide as the layers (3 × 155 = 465 in every ``wu2017-*`` preset) a later
layer's shortcut reads it (h^0). So each preset runs here, at tiny sizes (``--set``) that keep
what shapes the network: layer count, cells, shortcuts, gates, window, character length, and
whether the input is exactly as wide as the layers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

from tagger.config import resolve_preset
from tagger.models import MODELS
from tagger.models.skip_lstm import SkipLSTMTagger, TaggerConfig
from tagger.models.transition_parser.config import ParserConfig
from tagger.modules.input_layer import InputLayer
from tests.helpers import invoke

#: One training step (one sentence, one batch, one epoch) on one thread, then dev scored.
ONE_STEP = ["--max-epochs", "1", "--max-sentences", "1", "--threads", "1", "--quiet", "--json"]
#: The layers' size where the input is narrower or wider than them (never a tiny input's width).
NARROW = 8


def _width(window: int, word: int, caps: int, char: int, length: int, cnn: int, extra: int = 0) -> int:
    """The recurrent stack's input width, as the model's own input layer makes it."""
    return InputLayer(2, 2, word, caps, char, length, window, True, cnn_filters=cnn, cnn_dim=max(char, 1)).output_size + extra


def _hidden(full_width: int, full_hidden: int, tiny_width: int) -> int:
    """The tiny layers' size: the tiny input's width where the preset's input is as wide as its
    layers (the input is then a shortcut source), else :data:`NARROW`."""
    assert tiny_width != NARROW
    return tiny_width if full_width == full_hidden else NARROW


def _settings(values: dict[str, Any]) -> list[str]:
    return [arg for key, value in values.items() for arg in ("--set", f"{key}={value}")]


def tagger_sizes(preset: str) -> dict[str, int]:
    """Tiny sizes for a skip-LSTM tagger preset (see the module text)."""
    full = TaggerConfig(**resolve_preset(MODELS["skip_lstm"].PRESETS, preset)[0])
    tiny = {"word_dim": min(full.word_dim, 2), "caps_dim": min(full.caps_dim, 1), "char_dim": min(full.char_dim, 1),
            "char_cnn": min(full.char_cnn, 3), "char_cnn_dim": 0}
    sizes = (full.window, full.word_dim, full.caps_dim, full.char_dim, full.char_length, full.char_cnn)
    tiny_sizes = (full.window, tiny["word_dim"], tiny["caps_dim"], tiny["char_dim"], full.char_length, tiny["char_cnn"])
    return {**tiny, "hidden": _hidden(_width(*sizes), full.hidden, _width(*tiny_sizes))}


def parser_sizes(preset: str) -> dict[str, int]:
    """Tiny sizes for a transition-parser preset, its BiLSTM encoder's included."""
    full = ParserConfig(**resolve_preset(MODELS["transition_parser"].PRESETS, preset)[0])
    tiny = {"hidden": 16, "word_dim": 8, "tag_dim": 8, "label_dim": 8, "precompute": 100,
            "encoder_word_dim": min(full.encoder_word_dim, 4), "encoder_caps_dim": min(full.encoder_caps_dim, 1),
            "encoder_char_dim": min(full.encoder_char_dim, 1), "encoder_char_cnn": min(full.encoder_char_cnn, 3),
            "encoder_tag_dim": min(full.encoder_tag_dim, 4)}
    width = _width(full.encoder_window, full.encoder_word_dim, full.encoder_caps_dim, full.encoder_char_dim,
                   full.encoder_char_length, full.encoder_char_cnn, full.encoder_tag_dim)
    tiny_width = _width(full.encoder_window, tiny["encoder_word_dim"], tiny["encoder_caps_dim"], tiny["encoder_char_dim"],
                        full.encoder_char_length, tiny["encoder_char_cnn"], tiny["encoder_tag_dim"])
    return {**tiny, "encoder_hidden": _hidden(width, full.encoder_hidden, tiny_width)}


#: Per family: its task, training and dev data, and its presets' tiny sizes.
FAMILIES = {
    "skip_lstm": ("pos", "data/sample.conllu", "data/heldout.conllu", tagger_sizes),
    "transition_parser": ("dep", "data/sample.conllu", "data/heldout.conllu", parser_sizes),
    "seq2seq": ("const", "data/sample.mrg", "data/sample.mrg",
                lambda _: {"hidden": 16, "word_dim": 8, "symbol_dim": 8, "attention_dim": 8}),
    "tokenizer": ("tokenize", "data/sample.conllu", "data/heldout.conllu", lambda _: {"hidden": 8, "char_dim": 4}),
}


def _resolved(family: str, preset: str) -> str:
    return json.dumps(resolve_preset(MODELS[family].PRESETS, preset), sort_keys=True)


def _distinct(family: str) -> list[str]:
    """The presets of ``family`` whose resolved values no earlier one has (paper 004's table rows
    repeat a few architectures many times)."""
    seen: dict[str, str] = {}
    for preset in MODELS[family].PRESETS:
        seen.setdefault(_resolved(family, preset), preset)
    return list(seen.values())


CASES = [(family, preset) for family in FAMILIES for preset in _distinct(family)]


def _train(tmp_path, family: str, preset: str, sizes: dict[str, Any]) -> dict[str, Any]:
    task, train, dev, _ = FAMILIES[family]
    out = tmp_path / "model"
    done = invoke("train", "--task", task, "--model", family, "--preset", preset, "--train", train, "--dev", dev,
                  "--out", out, *ONE_STEP, *_settings(sizes))
    assert done.exit_code == 0, (done.stderr, done.exception)
    assert out.is_file()
    return json.loads(done.stdout)


@pytest.mark.parametrize(("family", "preset"), CASES, ids=[f"{f}:{p}" for f, p in CASES])
def test_preset_trains_and_scores_dev(tmp_path, one_thread, family, preset):
    summary = _train(tmp_path, family, preset, FAMILIES[family][3](preset))
    assert summary["name"] == family and summary["train_sentences"] == 1 and summary["dev_sentences"] > 1, summary
    assert summary["epochs"] == summary["best_epoch"] == 1, summary  # dev scored after the step


def test_every_preset_is_run():
    """All of them, and the tiny sizes keep the inputs as wide as the layers where they were."""
    assert len(MODELS["skip_lstm"].PRESETS) >= 60 and len([c for c in CASES if c[0] == "skip_lstm"]) >= 50
    assert {family for family, _ in CASES} == set(MODELS)
    run = {(family, _resolved(family, preset)) for family, preset in CASES}
    assert all((family, _resolved(family, preset)) in run for family in MODELS for preset in MODELS[family].PRESETS)
    assert ("transition_parser", "elkaref2017-t3-gru-random") in CASES  # a row of paper 004 no other preset is
    wide = [p for p in MODELS["skip_lstm"].PRESETS if tagger_sizes(p)["hidden"] != NARROW]
    assert "wu2017-9x465" in wide and len(wide) >= 26


def test_parser_encoder_as_wide_as_its_input(tmp_path, one_thread):
    """The parser's BiLSTM encoder had the same fault: a shortcut reading an input as wide as the layers."""
    sizes = {**parser_sizes("bilstm"), "encoder_tag_dim": 0, "encoder_window": 1}
    sizes["encoder_hidden"] = _width(1, sizes["encoder_word_dim"], sizes["encoder_caps_dim"], sizes["encoder_char_dim"],
                                     5, sizes["encoder_char_cnn"])
    _train(tmp_path, "transition_parser", "bilstm", sizes)


def test_shortcut_from_the_input_in_evaluation():
    """Evaluation (the first layer's products per distinct word) scores as the per-token input does."""
    from tagger import formats

    sentences = list(formats.read("data/sample.conllu", "conllu"))
    config = TaggerConfig(**{**resolve_preset(MODELS["skip_lstm"].PRESETS, "wu2017-9x465")[0], "layers": 3,
                             **tagger_sizes("wu2017-9x465")})
    model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, sentences)).eval()
    assert model.rnn.reads_input and model.rnn.sources[0] is None
    batch = model.collate(sentences)
    with torch.no_grad():
        scores = model(batch)
        per_token = model.output(model.rnn(model.token_input(batch, batch.types.t()), batch.lengths)).transpose(0, 1)
    torch.testing.assert_close(scores, per_token)


def test_runtime_declines_an_input_as_wide_as_the_layers(tmp_path, one_thread):
    """The torch-free runtime computes skip=output, gate=recurrent LSTMs, but not with the input as
    a shortcut source: it leaves such a model to torch, whose tags ``tagger tag`` then writes."""
    from tagger.runtime import skip_lstm as runtime

    sizes = {**tagger_sizes("wu2017-t2-wu2016"), "layers": 3}
    _train(tmp_path, "skip_lstm", "wu2017-t2-wu2016", sizes)
    model = tmp_path / "model"
    assert runtime.supported(runtime.read_archive(model, peek=True))  # the configuration alone looks computable
    assert runtime.load(model) is None
    default = invoke("tag", "--model", model, "data/heldout.conllu")
    by_torch = invoke("tag", "--model", model, "--on-error", "skip", "data/heldout.conllu")
    assert default.exit_code == by_torch.exit_code == 0, (default.stderr, by_torch.stderr)
    assert default.stdout == by_torch.stdout and default.stdout.count("\n") > 100
