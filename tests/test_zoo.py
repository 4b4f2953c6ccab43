"""The ablation zoo: every row of the two tagging papers is a preset that builds and trains
(docs/zoo.md). The variants' equations are checked against a naive implementation in
test_zoo_cells.py."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from tagger.config import build_configs
from tagger.corpus.records import Sentence
from tagger.models.skip_lstm import SkipLSTMTagger
from tagger.models.skip_lstm.presets import PRESETS, TABLES

TOY = [
    Sentence("the dog runs fast".split(), {"xpos": ["DT", "NN", "VBZ", "RB"]}),
    Sentence("a cat sleeps".split(), {"xpos": ["DT", "NN", "VBZ"]}),
    Sentence("Dogs bark at 99 cats".split(), {"xpos": ["NNS", "VBP", "IN", "CD", "NNS"]}),
]
ROWS = [name for name, preset in PRESETS.items() if "table" in preset]


def test_every_table_has_the_papers_rows():
    counts = Counter(PRESETS[name]["table"] for name in ROWS)
    assert counts == {"wu2016-t1": 4, "wu2016-t2": 10, "wu2016-t3": 5, "wu2017-t1": 4, "wu2017-t2": 10,
                      "wu2017-t3": 7, "wu2017-t4": 5, "wu2017-t5": 7}
    assert set(counts) == set(TABLES)
    for name in ROWS:
        preset = PRESETS[name]
        assert preset["row"] and preset["description"] and isinstance(preset["paper_dev"], float), name
        assert 90 < preset["paper_dev"] < 96 and 90 < preset["paper_test"] < 96, name


def config_of(name: str, **sizes):
    values = {"hidden": 6, "word_dim": 6, "char_dim": 2, "optimizer": "adam", "batch_size": 3, **sizes}
    return build_configs(SkipLSTMTagger, PRESETS, name, overrides=[f"{k}={v}" for k, v in values.items()])


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_builds_and_takes_a_training_step(name):
    """At its own depth and cell, with small sizes: one Adam step changes the parameters and
    lowers the loss on the batch it saw; decoding gives one tag per word."""
    torch.manual_seed(0)
    config, training = config_of(name, column="xpos", input_dropout=0.0, hidden_dropout=0.0, init_scale=1.0)
    assert (config.layers, config.cell_spec) == (config_of(name)[0].layers, config_of(name)[0].cell_spec)
    model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, TOY))
    batch = model.collate(TOY)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(2):
        model.train()
        loss = model.loss(model(batch), batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    if config.cell_spec.gate != "bernoulli" or not config.cell_spec.places:  # a random gate: no order
        assert losses[1] < losses[0], name
    model.eval()
    assert [len(tags) for tags in model.decode(model.collate(TOY, with_gold=False))] == [4, 3, 5]


def test_layers_and_hidden_apply_to_every_preset():
    for name in PRESETS:
        config, _ = build_configs(SkipLSTMTagger, PRESETS, name, overrides=["layers=3", "hidden=32"])
        assert (config.layers, config.hidden) == (3, 32)


def test_rows_say_what_they_change():
    spec = lambda name: config_of(name)[0].cell_spec  # noqa: E731
    assert spec("wu2016-t2-rhn").cell == "rhn" and config_of("wu2016-t2-rhn")[0].layers == 1
    assert (spec("wu2016-t2-hlstm").source, config_of("wu2016-t2-hlstm")[0].composition) == ("internal", "adjacent")
    assert spec("wu2017-t2-block-share").gate == "output"
    assert spec("wu2017-t1-7").skip == "both"  # a block with skip=none is the full shortcut block
    assert spec("wu2017-t2-both-separate").places == ("internal", "output")
    assert config_of("wu2017-t5-window0")[0].window == 1


def test_combinations_that_mean_nothing_are_refused():
    from tagger.modules.recurrent import CellSpec
    for bad, message in (
        (dict(cell="rhn", skip="output"), "takes no shortcut"),
        (dict(cell="block", skip="gates"), "LSTM variant"),
        (dict(skip="output", source="separate"), "needs cell=lstm and skip=both"),
        (dict(skip="both", source="separate", gate="recurrent"), "gate=input"),
        (dict(skip="both", gate="none", mix="highway"), "needs a gate"),
        (dict(skip="output", gate="input", ungated="output"), "leaves no gated place"),
        (dict(skip="output", gate="input", ungated="internal"), "no shortcut enters there"),
    ):
        with pytest.raises(ValueError, match=message):
            CellSpec(**bad)
