"""Mixed precision in training (``--set amp=bf16|fp16``, :mod:`tagger.training.amp`): the forward
pass runs in the lower type, the weights stay float32, and ``off`` is float32 throughout."""

from __future__ import annotations

import json

import pytest
import torch

from tagger import archive
from tagger.config import TrainingConfig
from tagger.corpus.records import Sentence
from tagger.models.skip_lstm import SkipLSTMTagger, TaggerConfig
from tagger.training.amp import MixedPrecision
from tagger.training.trainer import make_optimizer, update
from tests.helpers import assert_one_line_error, invoke

TOY = [Sentence("the dog runs".split(), {"upos": ["DET", "NOUN", "VERB"]}),
       Sentence("a cat sleeps here".split(), {"upos": ["DET", "NOUN", "VERB", "ADV"]})]


def one_update(mode: str) -> tuple[float, SkipLSTMTagger]:
    config = TaggerConfig(layers=1, hidden=8, word_dim=8)
    torch.manual_seed(0)
    model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, TOY))
    model.train()
    optimizer = make_optimizer(model.parameters(), TrainingConfig())
    seen: list[torch.dtype] = []
    hook = model.output.register_forward_hook(lambda module, args, out: seen.append(out.dtype))
    loss = update(model, model, optimizer, [model.collate(TOY)], 5.0, MixedPrecision(mode, torch.device("cpu")))
    hook.remove()
    assert seen == [{"off": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[mode]]
    return loss, model


@pytest.mark.parametrize("mode", ["bf16", "fp16"])
def test_the_forward_pass_runs_in_the_lower_type_and_the_weights_stay_float32(mode):
    reference, _ = one_update("off")
    loss, model = one_update(mode)
    assert loss != reference and loss == pytest.approx(reference, rel=0.02)
    assert all(p.dtype == torch.float32 for p in model.parameters())


def test_amp_is_a_training_setting_and_other_values_are_one_line_errors(tmp_path):
    done = invoke("train", "--train", "data/sample.conllu", "--dev", "data/heldout.conllu", "--out", tmp_path / "m",
                  "--max-epochs", "1", "--set", "amp=bf16", "--set", "hidden=8", "--threads", "1", "--json")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["epochs"] == 1 and archive.read(tmp_path / "m")["training"]["amp"] == "bf16"
    refused = invoke("train", "--train", "data/sample.conllu", "--out", tmp_path / "n", "--set", "amp=fp8")
    assert_one_line_error(refused, "amp must be off, bf16 or fp16")
