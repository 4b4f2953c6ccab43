"""The skip-connection BiLSTM tagger: input features, the recurrent scan, configs, training, model files."""

from __future__ import annotations

import dataclasses
import io
import json
import pickle

import pytest
import torch

from tagger import model_file
from tagger.config import build_config, build_configs, resolve_preset
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.models.skip_lstm import PRESETS, SkipLSTMTagger, TaggerConfig
from tagger.modules.input_layer import CAPS_FIRST, CAPS_LOWER, CAPS_MIXED, CAPS_NONE, CAPS_UPPER, caps_class, char_slots, normalize
from tagger.modules.recurrent import CellSpec, StackedBiRNN, padding_mask
from tagger.tagging import tag
from tagger.training.trainer import RunOptions, evaluate, fit


def test_normalize_and_caps():
    assert normalize("Year-2024") == "year-9999"
    assert [caps_class(w) for w in ("dog", "Dog", "DOG", "iPhone", "1,000", "I")] == [
        CAPS_LOWER, CAPS_FIRST, CAPS_UPPER, CAPS_MIXED, CAPS_NONE, CAPS_UPPER]


def test_char_slots_pad_short_words():
    slots = char_slots("cat", 5)
    assert slots[:3] == ["c", "a", "t"] and slots[5:][-3:] == ["c", "a", "t"]
    assert len(set(slots[3:5] + slots[5:7])) == 1  # one padding symbol
    assert char_slots("tagging", 5) == list("taggi") + list("gging")


def test_padding_mask_covers_the_backward_scans_leading_padding():
    mask = padding_mask(torch.tensor([4, 2, 3]), 4)  # [P=2, 2, B, 1], direction 1 reversed
    assert mask.squeeze(-1).tolist() == [[[1, 1, 1], [1, 0, 0]], [[1, 1, 1], [1, 0, 1]]]
    assert padding_mask(torch.tensor([4, 4]), 4) is None


SPECS = [
    CellSpec(),
    CellSpec(skip="output", gate="recurrent"),
    CellSpec(skip="output", gate="none"),
    CellSpec(skip="internal", gate="recurrent"),
    CellSpec(skip="gates"),
    CellSpec(skip="output", gate="recurrent", skip_map="sigmoid", forget_bias=5.0),
    CellSpec(cell="block", gate="input"),
    CellSpec(cell="block", gate="hidden", skip_map="tanh"),
    CellSpec(cell="block", gate="skip"),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.cell}-{s.skip}-{s.gate}-{s.skip_map}")
def test_padding_never_leaks_into_real_positions(spec):
    """A sentence's outputs are the same alone and in a padded batch with a longer one."""
    torch.manual_seed(0)
    rnn = StackedBiRNN(6, 4, 4, spec).eval()
    long, short = torch.randn(7, 1, 6), torch.randn(3, 1, 6)  # time-major
    batch = torch.cat([long, torch.cat([short, torch.randn(4, 1, 6)])], 1)
    together = rnn(batch, torch.tensor([7, 3]))
    assert torch.allclose(together[:3, 1], rnn(short, torch.tensor([3]))[:, 0], atol=1e-6)
    assert torch.allclose(together[:, 0], rnn(long, torch.tensor([7]))[:, 0], atol=1e-6)
    with torch.no_grad():  # the inference path writes the products in place: same numbers
        assert torch.allclose(rnn(batch, torch.tensor([7, 3]))[:3, 1], together[:3, 1], atol=1e-6)


def test_backward_direction_reads_the_future():
    torch.manual_seed(0)
    rnn = StackedBiRNN(3, 2, 1, CellSpec()).eval()
    x = torch.randn(5, 1, 3)
    y = x.clone()
    y[4, 0] += 1.0  # change the last word only
    a, b = rnn(x, torch.tensor([5]))[:, 0], rnn(y, torch.tensor([5]))[:, 0]
    assert torch.allclose(a[:4, :2], b[:4, :2])  # forward states before it are unchanged
    assert not torch.allclose(a[0, 2:], b[0, 2:])  # the backward state of word 1 sees it


def test_skip_sources():
    spec = CellSpec(skip="output")
    assert StackedBiRNN(10, 4, 4, spec).sources == [None, None, (1,), (2,)]
    assert StackedBiRNN(4, 4, 3, spec).sources == [None, (0,), (1,)]  # input size = cell size: h^0 usable
    assert StackedBiRNN(10, 4, 4, spec, skip_span=0).sources == [None, (1,), (1,), (1,)]
    assert StackedBiRNN(10, 4, 4, spec, skip_span=2).sources == [None, None, None, (1,)]
    assert StackedBiRNN(10, 4, 6, spec, composition="nested").sources == [None, None, (1,), (2,), (3, 1), (4, 2)]
    assert StackedBiRNN(10, 4, 7, spec, 2, composition="nested").sources[3:] == [(1,), (2,), (3,), (4, 1)]
    assert StackedBiRNN(10, 4, 3, spec, composition="adjacent").sources == [None, (1,), (2,)]
    cells = CellSpec(skip="internal", source="internal")
    assert StackedBiRNN(4, 4, 3, cells, composition="adjacent").sources == [None, (1,), (2,)]  # no c^0
    assert StackedBiRNN(10, 4, 4, CellSpec()).sources == [None] * 4


def test_config_errors_and_presets():
    config, training = build_configs(SkipLSTMTagger, PRESETS, "wu2016-7x512", overrides=["lr=0.01", "window_gates=false"])
    assert (config.layers, config.hidden, training.lr, config.window_gates) == (7, 512, 0.01, False)
    for name in PRESETS:  # every preset is a valid config
        assert build_config(TaggerConfig, PRESETS, name).layers >= 1
    assert build_config(TaggerConfig, PRESETS, "small").hidden == 64
    with pytest.raises(TaggerError, match="unknown config key"):
        build_config(TaggerConfig, PRESETS, None, overrides=["hiden=3"])
    with pytest.raises(TaggerError, match="unknown preset"):
        build_config(TaggerConfig, PRESETS, "wu2099")
    with pytest.raises(TaggerError, match="layers must be int"):
        build_config(TaggerConfig, PRESETS, None, overrides=["layers=many"])
    with pytest.raises(TaggerError, match="skip must be one of"):
        build_config(TaggerConfig, PRESETS, None, overrides=["skip=sideways"])


TOY = [
    Sentence("the dog runs".split(), {"upos": ["DET", "NOUN", "VERB"]}),
    Sentence("a cat sleeps".split(), {"upos": ["DET", "NOUN", "VERB"]}),
    Sentence("the big dog barks loudly".split(), {"upos": ["DET", "ADJ", "NOUN", "VERB", "ADV"]}),
    Sentence("dogs bark".split(), {"upos": ["NOUN", "VERB"]}),
]


def toy_model(sentences=TOY, **overrides) -> SkipLSTMTagger:
    values = {"layers": 3, "hidden": 8, "word_dim": 8, "optimizer": "adam", "lr": 0.05, "batch_size": 2, "max_epochs": 40,
              "patience": 0, "lr_halving": False, "input_dropout": 0.0, "hidden_dropout": 0.0, **overrides}
    config, training = build_configs(SkipLSTMTagger, PRESETS, None, overrides=[f"{k}={v}" for k, v in values.items()])
    model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, sentences))
    model.training_config = training  # what the tests give fit()
    return model


class Quiet:
    def epoch_start(self, epoch, batches): pass
    def step(self, loss, tokens): pass
    def epoch_end(self, record): pass


def test_toy_training_learns_and_saves_best(tmp_path):
    torch.manual_seed(0)
    model = toy_model()
    saved = []
    state = fit(model, TOY, TOY, model.training_config, RunOptions(), lambda meta: saved.append(meta), Quiet())
    assert state.best_score == 1.0 and saved[-1]["dev_score"] == 1.0
    assert evaluate(model, TOY).score == 1.0


def test_same_seed_same_weights():
    def run():
        torch.manual_seed(3)
        model = toy_model(max_epochs=3, rare_word_dropout=0.5, input_dropout=0.3)
        fit(model, TOY, TOY, model.training_config, RunOptions(seed=3), lambda meta: None, Quiet())
        return model.state_dict()

    a, b = run(), run()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_rare_tags_map_to_rare_and_are_never_output():
    sentences = TOY + [Sentence(["xylophone"], {"upos": ["X"]})]
    config = build_config(TaggerConfig, PRESETS, None, overrides=["rare_tag_count=2", "layers=1", "hidden=4"])
    vocabs = SkipLSTMTagger.vocabs_from(config, sentences)
    assert "X" not in vocabs["tags"] and "<rare>" in vocabs["tags"]
    model = SkipLSTMTagger(config, vocabs).eval()
    with torch.no_grad():
        model.output.bias[model.tag_vocab.index("<rare>")] = 100.0  # make RARE the best score
    assert "<rare>" not in model.decode(model.collate(sentences, with_gold=False))[0]


def test_model_file_round_trip(tmp_path):
    torch.manual_seed(0)
    model = toy_model(max_epochs=2).eval()
    path = tmp_path / "m.tagger"
    model_file.save(path, model, {"dev_score": 0.5})
    loaded, meta = model_file.load(path)
    batch = model.collate(TOY, with_gold=False)
    assert meta["dev_score"] == 0.5
    assert loaded.decode(batch) == model.decode(batch)
    assert torch.equal(loaded(batch), model(batch))


def test_bad_model_files_are_refused(tmp_path):
    not_ours = tmp_path / "text.tagger"
    not_ours.write_text("hello")
    with pytest.raises(TaggerError, match="not a tagger model file"):
        model_file.load(not_ours)
    with pytest.raises(TaggerError, match="no such model file"):
        model_file.load(tmp_path / "missing.tagger")
    model = toy_model(max_epochs=1)
    good = tmp_path / "good.tagger"
    model_file.save(good, model, {})
    truncated = tmp_path / "truncated.tagger"
    truncated.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    with pytest.raises(TaggerError, match="truncated"):
        model_file.load(truncated)
    newer = tmp_path / "newer.tagger"
    archive = torch.load(good, weights_only=True)
    archive["format_version"] = model_file.FORMAT_VERSION + 1
    torch.save(archive, newer)
    with pytest.raises(TaggerError, match=r"format 4.*newer.*format 3"):
        model_file.load(newer)


class Exploit:
    def __reduce__(self):
        return (print, ("this ran code",))


def test_crafted_pickle_cannot_run_code(tmp_path, capsys):
    evil = tmp_path / "evil.tagger"
    torch.save({"format_version": 1, "state_dict": {}, "payload": Exploit()}, evil)
    with pytest.raises(TaggerError, match="could run code"):
        model_file.load(evil)
    assert "this ran code" not in capsys.readouterr().out
    plain = tmp_path / "plain.pickle"
    plain.write_bytes(pickle.dumps(Exploit()))
    with pytest.raises(TaggerError):
        model_file.load(plain)
    assert "this ran code" not in capsys.readouterr().out


def test_tag_streams_in_order_and_keeps_output_before_an_error():
    torch.manual_seed(0)
    model = toy_model(max_epochs=1).eval()

    def sentences():
        for i in range(7):
            yield Sentence(["the"] * (1 + i % 3) + [f"w{i}"], {})
        raise TaggerError("invalid UTF-8", "<stdin>", 8)

    out = io.StringIO()
    with pytest.raises(TaggerError):
        tag(model, sentences(), out, "jsonl", chunk_size=3)
    lines = out.getvalue().splitlines()
    assert [json.loads(line)["words"][-1] for line in lines] == [f"w{i}" for i in range(7)]


@pytest.mark.slow
def test_short_real_training_run_on_ewt(ewt_tagger):
    """conftest's ``ewt_tagger``: ``fast`` with 2 layers of 64, 4 epochs on the first 400 EWT
    train sentences, scored on the first 150 of dev."""
    history = ewt_tagger.history
    assert history[-1]["loss"] < history[0]["loss"] / 2
    assert ewt_tagger.best_score > 0.75  # most-frequent-tag-per-word on 400 sentences gets ~0.7 on dev; we must learn context
    _, meta = model_file.load(ewt_tagger.path)  # the best epoch's model was saved
    assert meta["dev_score"] == ewt_tagger.best_score


@pytest.mark.parametrize("window_gates,char_cnn", [(True, 0), (False, 0), (True, 6), (False, 6)])
def test_per_word_first_layer_equals_the_window_input(window_gates, char_cnn):
    """Evaluation computes layer 1's input products once per distinct word: same scores as
    building the gated window input token by token (the character CNN included)."""
    torch.manual_seed(0)
    model = toy_model(window_gates=window_gates, char_cnn=char_cnn, char_cnn_max=4).eval()
    batch = model.collate(TOY + [Sentence("the dog the dog".split(), {"upos": ["DET", "NOUN"] * 2})])
    assert batch.words.shape[0] < batch.types.numel()  # repeated words share a row
    assert (batch.spelled is None) == (char_cnn == 0)
    types = batch.types.t()
    with torch.no_grad():
        spelling = model.input.spelling(batch.spelled)[types] if char_cnn else None
        x = model.input(batch.words[types], batch.caps[types], batch.chars[types], spelling)
        expected = model.output(model.rnn(x, batch.lengths)).transpose(0, 1)
        got = model(batch)
    real = batch.types > 0
    assert torch.allclose(got[real], expected[real], atol=1e-5)


@pytest.mark.parametrize("max_bytes", [48 << 20, 1])
def test_word_rows_kept_across_batches_are_exact_and_follow_weight_updates(max_bytes):
    """The per-word first-layer products are reused by later batches (keyed by spelling); a
    table too small for two batches is emptied and refilled; an update of the weights (here an
    optimizer step) makes every kept row stale."""
    from tagger.modules.input_layer import WordRows

    torch.manual_seed(0)
    model = toy_model(**CNN).eval()
    model.input.word_rows = rows = WordRows(max_bytes)
    first, second = model.collate(TOY[:2]), model.collate(TOY[2:] + [Sentence("the cat".split(), {"upos": ["DET", "NOUN"]})])

    def scores(batch, cache: bool):
        plain = dataclasses.replace(batch, forms=batch.forms if cache else None)
        with torch.no_grad():
            return model(plain)

    scores(first, cache=True)
    assert set(rows.slots) == set(first.forms) or max_bytes == 1
    real = second.types > 0
    assert torch.allclose(scores(second, True)[real], scores(second, False)[real], atol=1e-6)
    assert "the" in rows.slots and ("cat" in rows.slots)  # "the" was kept from the first batch (or refilled)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    model.loss(model(first), first).backward()
    optimizer.step()
    model.eval()
    assert torch.allclose(scores(second, True)[real], scores(second, False)[real], atol=1e-6)


def test_read_ahead_keeps_order_passes_errors_on_and_stops_with_its_consumer():
    import threading

    from tagger.corpus.batching import read_ahead

    def items():
        yield from range(5)
        raise TaggerError("bad byte", "<stdin>", 6)

    got = []
    with pytest.raises(TaggerError, match="bad byte"):
        for item in read_ahead(items()):
            got.append(item)
    assert got == [0, 1, 2, 3, 4]
    endless = read_ahead(iter(int, 1))  # never ends
    assert next(endless) == 0
    endless.close()
    for thread in threading.enumerate():
        if thread.name == "read-ahead":
            thread.join(timeout=2)
    assert not any(t.name == "read-ahead" for t in threading.enumerate())


CNN = {"char_cnn": 6, "char_cnn_width": 3, "char_cnn_max": 4, "char_length": 2}


def test_char_cnn_is_off_by_default_and_adds_only_its_own_parameters():
    plain, cnn = toy_model(), toy_model(**CNN)
    assert plain.config.char_cnn == 0 and plain.collate(TOY).spelled is None
    assert not any("cnn" in key for key in plain.state_dict())
    added = set(cnn.state_dict()) - set(plain.state_dict())
    assert added == {"input.cnn_char.weight", "input.cnn.weight", "input.cnn.bias"}
    assert cnn.input.feature_size == plain.input.feature_size - 2 * 3 * plain.config.char_dim + 6  # char_length 5 → 2
    assert cnn.input.cnn_char.embedding_dim == cnn.config.char_dim  # char_cnn_dim 0: char_dim's size
    assert resolve_preset(PRESETS, "fast-cnn") == ({**resolve_preset(PRESETS, "fast")[0], "char_cnn": 50, "char_cnn_width": 3}, resolve_preset(PRESETS, "fast")[1])
    with pytest.raises(TaggerError, match="char_cnn needs a character size"):
        build_config(TaggerConfig, PRESETS, None, overrides=["char_cnn=8", "char_dim=0"])
    for bad in ("char_cnn=-1", "char_cnn_width=0", "char_cnn_max=0", "char_cnn_dim=-2"):
        with pytest.raises(TaggerError):
            build_config(TaggerConfig, PRESETS, None, overrides=[bad])
    assert build_config(TaggerConfig, PRESETS, None, overrides=["char_cnn=8", "char_dim=0", "char_cnn_dim=7"]).cnn_dim == 7


def test_char_cnn_spelling_keeps_both_ends_and_ignores_batch_padding():
    from tagger.modules.input_layer import CHAR_BOW, CHAR_EOW, spelling

    assert spelling("dog", 4) == [CHAR_BOW, "d", "o", "g", CHAR_EOW]
    assert spelling("barks", 4) == [CHAR_BOW, "b", "a", "k", "s", CHAR_EOW]
    assert spelling("loudly", 3) == [CHAR_BOW, "l", "o", "y", CHAR_EOW]  # first ⌈3/2⌉, last ⌊3/2⌋
    torch.manual_seed(0)
    model = toy_model(**CNN).eval()
    alone, mixed = model.collate([Sentence(["a"], {"upos": ["DET"]})]), model.collate(TOY[2:])
    assert alone.spelled.shape[1] == 3 and mixed.spelled.shape[1] == 6  # <w> a </w>; <w> 4 chars </w>
    with torch.no_grad():
        assert torch.equal(model.input.spelling(alone.spelled)[0], torch.zeros(6))  # the padding row
        one = model.input.spelling(alone.spelled)[1]
        padded = torch.cat([alone.spelled, torch.zeros(2, 5, dtype=torch.long)], 1)  # longer padding
        assert torch.allclose(model.input.spelling(padded)[1], one, atol=1e-6)
        assert not torch.allclose(model.input.spelling(mixed.spelled)[1:], one.expand(len(mixed.spelled) - 1, 6))


def test_char_cnn_vocab_covers_every_character_and_maps_unseen_ones_to_unk():
    sentences = TOY + [Sentence(["xylophonequest"], {"upos": ["NOUN"]})]
    slots_only = build_config(TaggerConfig, PRESETS, None, overrides=["char_length=2"])
    assert "q" not in SkipLSTMTagger.vocabs_from(slots_only, sentences)["chars"]  # the middle of a long word
    config = build_config(TaggerConfig, PRESETS, None, overrides=["char_length=2", "char_cnn=4", "layers=1", "hidden=4"])
    vocabs = SkipLSTMTagger.vocabs_from(config, sentences)
    assert set("xylophonequestbarkslouddogs") <= set(vocabs["chars"]) and {"<w>", "</w>"} <= set(vocabs["chars"])
    torch.manual_seed(0)
    model = SkipLSTMTagger(config, vocabs).eval()
    batch = model.collate([Sentence(["the", "naïve", "d€g"], {})], with_gold=False)
    unk = model.featurizer.chars.unk_index
    chars = model.featurizer.chars
    assert batch.spelled[2].tolist() == chars.indices(["<w>", "n", "a"]) + [unk] + chars.indices(["v", "e", "</w>"])
    assert batch.spelled[3].tolist()[:5] == [chars.index("<w>"), chars.index("d"), unk, chars.index("g"), chars.index("</w>")]
    assert len(model.decode(batch)[0]) == 3


def test_char_cnn_trains_and_round_trips_through_the_model_file(tmp_path):
    torch.manual_seed(0)
    model = toy_model(**CNN).train()
    batch = model.collate(TOY)
    model.loss(model(batch), batch).backward()
    cnn = model.input
    assert cnn.cnn.weight.grad.abs().sum() > 0 and cnn.cnn.bias.grad.abs().sum() > 0
    used = batch.spelled.unique()
    assert (cnn.cnn_char.weight.grad[used[used > 0]].abs().sum(1) > 0).all()
    assert cnn.cnn_char.weight.grad[0].abs().sum() == 0  # padding stays zero
    fit(model, TOY, TOY, model.training_config, RunOptions(), lambda meta: None, Quiet())
    model.eval()
    assert evaluate(model, TOY).score == 1.0
    path = tmp_path / "cnn.tagger"
    model_file.save(path, model, {})
    loaded, _ = model_file.load(path)
    assert loaded.config.char_cnn == 6 and loaded.config.char_cnn_max == 4
    unseen = [Sentence("the extraordinary dogs slept".split(), {})]
    for sentences in (TOY, unseen):
        batch = model.collate(sentences, with_gold=False)
        assert torch.equal(loaded.collate(sentences, with_gold=False).spelled, batch.spelled)
        # not bit for bit: ``model`` reuses word rows computed with other batches (WordRows)
        assert torch.allclose(loaded(batch), model(batch), atol=1e-6)
        assert loaded.decode(batch) == model.decode(batch)


@pytest.mark.parametrize("cell,gate", [("lstm", "recurrent"), ("block", "input")])
def test_bf16_inference_products_stay_close_to_fp32_and_follow_weight_updates(cell, gate):
    """--precision bf16 rounds only the products' inputs: scores stay within bf16 rounding of the
    float32 ones, training is untouched (float32 gradients), and the bf16 weight copies are
    remade after an update."""
    from tagger.modules.precision import Lowered, resolve

    torch.manual_seed(0)
    model = toy_model(cell=cell, skip="none" if cell == "block" else "output", gate=gate, **CNN).eval()
    batch = model.collate(TOY)
    real = batch.types > 0

    def scores(dtype):
        model.set_precision(dtype)
        with torch.inference_mode():
            return model(batch)

    fp32, bf16 = scores(None), scores(torch.bfloat16)
    assert not torch.equal(fp32[real], bf16[real])  # the bf16 path really ran
    assert torch.allclose(fp32[real], bf16[real], atol=0.05, rtol=0.02)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    model.loss(model(batch), batch).backward()
    assert all(p.grad is None or p.grad.dtype == torch.float32 for p in model.parameters())
    optimizer.step()
    model.eval()
    assert torch.allclose(scores(None)[real], scores(torch.bfloat16)[real], atol=0.05, rtol=0.02)
    assert resolve("fp32") is None and resolve("bf16") is torch.bfloat16
    with pytest.raises(ValueError):
        resolve("fp8")
    lowered, weight = Lowered(), torch.ones(2, 2)
    first = lowered(weight, torch.bfloat16)
    assert lowered(weight, torch.bfloat16) is first
    weight.add_(1)
    assert lowered(weight, torch.bfloat16)[0, 0] == 2 and lowered(weight, None) is weight


def test_weight_average_follows_the_updates_and_is_what_dev_scores_and_saves():
    from tagger.training.trainer import WeightAverage

    net = torch.nn.Linear(1, 1, bias=False)
    torch.nn.init.zeros_(net.weight)
    average = WeightAverage(net, decay=0.5)
    with torch.no_grad():
        net.weight.fill_(4.0)
    average.update(step=100)  # decay min(0.5, 101/110) = 0.5: halfway from 0 to 4
    with average.swapped_in():
        assert net.weight.item() == 2.0
    assert net.weight.item() == 4.0  # the trained weights come back

    torch.manual_seed(0)
    model = toy_model(average=0.99)
    saved = []
    state = fit(model, TOY, TOY, model.training_config, RunOptions(),
                lambda meta: saved.append({k: v.clone() for k, v in model.state_dict().items()}), Quiet())
    assert state.best_score == 1.0 and state.steps == 40 * 2
    trained = model.state_dict()
    assert any(not torch.equal(saved[-1][k], trained[k]) for k in trained)  # the average was saved, not the last weights


def test_label_smoothing_and_middle_dropout_are_options_of_the_one_model():
    torch.manual_seed(0)
    model = toy_model(layers=3, middle_dropout=0.4, hidden_dropout=0.1)
    assert [d.p for d in model.rnn.dropouts] == [0.1, 0.4, 0.1]
    batch = model.collate(TOY)
    scores = torch.randn(*batch.tags.shape, len(model.tag_vocab)) * 3
    plain = model.loss(scores, batch)
    model.config = dataclasses.replace(model.config, label_smoothing=0.2)
    smoothed = model.loss(scores, batch)
    # (1-ε)·CE(gold) + ε·mean over the classes of −log p
    log_p = scores.flatten(0, 1).log_softmax(-1)[batch.tags.flatten() != -100]
    expected = 0.8 * plain - 0.2 * log_p.mean(-1).mean()
    assert torch.allclose(smoothed, expected, atol=1e-6)
    assert not torch.allclose(smoothed, plain)


def test_aux_column_is_learned_beside_the_column_and_never_output(tmp_path):
    sentences = [Sentence(s.words, {**s.columns, "xpos": [{"DET": "DT", "NOUN": "NN", "VERB": "VBZ", "ADJ": "JJ", "ADV": "RB"}[t]
                                                         for t in s.column("upos")]}) for s in TOY]
    torch.manual_seed(0)
    model = toy_model(sentences, aux_column="xpos", aux_weight=1.0)
    aux = model.heads[-1]
    assert (aux.key, aux.output, aux.start, aux.stop) == ("aux_tags", False, model.n_tags, model.n_tags + 6)
    assert len(model.vocabs["aux_tags"]) == 6 and model.output.out_features == model.n_tags + 6
    assert model.output_columns == ["upos"]
    batch = model.collate(sentences)
    assert batch.more_tags.shape == (1, *batch.tags.shape)
    state = fit(model, sentences, sentences, model.training_config, RunOptions(), lambda meta: None, Quiet())
    assert state.best_score == 1.0
    assert model.decode(model.collate(sentences, with_gold=False))[2] == ["DET", "ADJ", "NOUN", "VERB", "ADV"]
    model.eval()
    scores = model(batch)
    aux_best = scores[..., model.n_tags :].argmax(-1)[2].tolist()
    assert [model.labels["aux_tags"].itos[i] for i in aux_best] == ["DT", "JJ", "NN", "VBZ", "RB"]  # the aux head learned too
    path = tmp_path / "aux.tagger"
    model_file.save(path, model, {})
    loaded, _ = model_file.load(path)
    assert loaded.decode(loaded.collate(sentences, with_gold=False)) == model.decode(model.collate(sentences, with_gold=False))
    with pytest.raises(TaggerError, match="aux_column must differ"):
        build_config(TaggerConfig, PRESETS, None, overrides=["aux_column=upos"])


def test_subword_units_are_the_pieces_of_spaced_tokens_and_proper_affixes():
    from tagger.corpus.features import subword_units

    kinds = ("pieces", "suffixes", "prefixes")
    assert subword_units("thành phố", ("pieces",), 4) == ["p:thành", "p:phố"]
    assert subword_units("Hà  Nội", ("pieces",), 4) == ["p:hà", "p:nội"]  # lowercased, runs of spaces as one
    assert subword_units("phố", ("pieces",), 4) == []  # one piece: the word embedding's
    assert subword_units("Dogs", ("suffixes", "prefixes"), 3) == ["s:s", "s:gs", "s:ogs", "b:d", "b:do", "b:dog"]
    assert subword_units("cat", ("suffixes",), 4) == ["s:t", "s:at"]  # never the whole word
    assert subword_units("a", kinds, 4) == [] and subword_units("1984", ("suffixes",), 2) == ["s:9", "s:99"]
    assert subword_units("New York", kinds, 2)[:2] == ["p:new", "p:york"]


def test_subwords_auto_embeds_pieces_only_where_tokens_hold_spaces():
    from collections import Counter

    from tagger.corpus.features import subword_kinds_for, subword_vocabs

    assert subword_kinds_for("auto", 32, Counter({"thành phố": 2, "và": 98})) == ("pieces",)  # 2% of tokens
    assert subword_kinds_for("auto", 32, Counter({"New York": 1, "the": 199})) == ()  # 0.5%
    assert subword_kinds_for("suffixes,prefixes", 32, Counter({"the": 1})) == ("suffixes", "prefixes")
    assert subword_kinds_for("pieces", 0, Counter({"a b": 1})) == () and subword_kinds_for("", 8, Counter({"a b": 1})) == ()
    units, kinds = subword_vocabs("auto", 8, 4, Counter({"thành phố": 2, "phố cổ": 3, "và": 5}))
    assert kinds == ["pieces"] and units == ["<pad>", "<unk>", "p:phố", "p:cổ", "p:thành"]  # most frequent first
    with pytest.raises(TaggerError, match="subwords must be"):
        build_config(TaggerConfig, PRESETS, None, overrides=["subwords=syllables"])
    plain = toy_model()  # English-like toy data: no unit vocabulary, no parameters, the features as before
    assert "subwords" not in plain.vocabs and plain.input.subword is None and plain.collate(TOY).units is None


SPACED = [
    Sentence(["Thanh", "bắt chuyện", "với", "thành phố"], {"upos": ["PROPN", "VERB", "ADP", "NOUN"]}),
    Sentence(["Hùng", "nói", "chuyện", "với", "bạn"], {"upos": ["PROPN", "VERB", "NOUN", "ADP", "NOUN"]}),
    Sentence(["phố", "đông"], {"upos": ["NOUN", "ADJ"]}),
]


def test_subword_bags_average_the_known_units_of_each_distinct_word(tmp_path):
    torch.manual_seed(0)
    model = toy_model(SPACED, subword_dim=4).eval()
    assert model.vocabs["subword_kinds"] == ["pieces"]  # auto: a third of the tokens hold a space
    assert set(model.vocabs["subwords"][2:]) == {"p:bắt", "p:chuyện", "p:thành", "p:phố"}
    assert model.input.subword.weight.shape == (6, 4)
    assert model.input.feature_size == toy_model(SPACED, subwords="").input.feature_size + 4
    batch = model.collate([Sentence(["chuyện phố", "bắt", "Thành Lạng"], {})], with_gold=False)
    stoi = model.featurizer.units.stoi
    assert batch.units.tolist() == [[0, 0], [stoi["p:chuyện"], stoi["p:phố"]], [0, 0], [stoi["p:thành"], 0]]
    with torch.no_grad():
        bags = model.input.bag(batch.units)
        table = model.input.subword.weight
        assert torch.allclose(bags[1], (table[stoi["p:chuyện"]] + table[stoi["p:phố"]]) / 2)
        assert torch.equal(bags[2], torch.zeros(4)) and torch.allclose(bags[3], table[stoi["p:thành"]])
    model.train()
    batch = model.collate(SPACED)
    model.loss(model(batch), batch).backward()
    assert model.input.subword.weight.grad[2:].abs().sum(1).gt(0).all()  # every unit of the training words
    assert model.input.subword.weight.grad[:2].abs().sum() == 0  # padding, UNK (an unknown unit is left out)
    model.eval()
    path = tmp_path / "units.tagger"
    model_file.save(path, model, {})
    loaded, _ = model_file.load(path)
    unseen = [Sentence(["chuyện phố", "bắt", "Thành Lạng", "đông"], {})]
    batch = model.collate(unseen, with_gold=False)
    assert torch.equal(loaded.collate(unseen, with_gold=False).units, batch.units)
    assert torch.allclose(loaded(batch), model(batch), atol=1e-6)
