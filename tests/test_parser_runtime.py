"""The transition parser without torch (:mod:`tagger.runtime.parser`): the trees of the torch
decoder, on EWT sentences and random ones, with every product kernel built here; which
configurations it takes. (A tokenizer, a tagger and such a parser in a pipeline:
tests/test_tagger_runtime.py.)"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from tagger import archive, formats, model_file
from tagger.corpus.records import Sentence
from tagger.inference import predict
from tagger.models.transition_parser import ParserConfig, TransitionParser
from tagger.models.transition_parser.export import export, supported
from tagger.modules import fused
from tagger.runtime import parser as runtime
from tagger.runtime.kernels import NUMPY, Kernel, f32_kernel
from tests.conftest import EWT
from tests.helpers import first_blocks
from tests.test_parser import randomise

#: A small ``bilstm-words`` parser: three encoder layers (the third with the shortcut), a window
#: of three words, slots s0 s1 s2 b0 b1 b2 reading the encoder.
SMALL = {"encoder": "bilstm", "features": "replace", "encoder_slots": 6, "encoder_layers": 3, "encoder_hidden": 8,
         "encoder_word_dim": 6, "encoder_char_dim": 3, "encoder_char_length": 2, "encoder_window": 3,
         "label_dim": 4, "hidden": 12, "lift_min_count": 1}
KERNELS = [pytest.param(NUMPY, id="numpy")] + (
    [pytest.param(Kernel(f32=f32_kernel()), id="f32")] if fused._fastscan is not None else [])


def ewt(count: int) -> list[Sentence]:
    if not (EWT / "en_ewt-ud-dev.conllu").exists():
        pytest.skip("needs ../shared/data")
    return list(formats.read(io.StringIO(first_blocks(EWT / "en_ewt-ud-dev.conllu", count)), "conllu"))


def make_small_parser() -> TransitionParser:
    """The parser of :data:`SMALL`, its vocabularies from 200 EWT dev sentences, its weights random."""
    train = ewt(200)
    config = ParserConfig(**SMALL)
    model = TransitionParser(config, TransitionParser.vocabs_from(config, train))
    randomise(model, seed=5)
    return model.eval()


@pytest.fixture(scope="module")
def small_parser() -> TransitionParser:
    return make_small_parser()


def test_which_parsers_it_takes() -> None:
    assert supported(ParserConfig(**SMALL))
    assert supported(ParserConfig(**SMALL, encoder_tag_dim=3))  # bilstm-tags: the tags' rows join the first layer's
    for other in ({"features": "beside"}, {"arch": "lstm"}, {"encoder_char_cnn": 4},
                  {"encoder_skip": "none"}):
        assert not supported(ParserConfig(**{**SMALL, **other})), other
    assert not supported(ParserConfig())  # the FFN over static word and tag embeddings: torch


STATES = [pytest.param(True, id="c-states")] * (fused._fastscan is not None) + [pytest.param(False, id="python-states")]


@pytest.mark.parametrize("c_states", STATES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_its_trees_are_the_torch_parsers(small_parser: TransitionParser, kernel: Kernel, c_states: bool,
                                         monkeypatch) -> None:
    monkeypatch.setattr(runtime, "C_STATES", c_states)
    model = small_parser
    assert model.lifts  # lifted labels moved back at the end, as torch does
    sentences = ewt(120)[100:] + [Sentence(["Hello"]), Sentence([w for s in ewt(10) for w in s.words][:130]),
                                  Sentence("Zqxvwt ÆØÅ-ø 1,234 ☃ McDonald'S".split())]
    theirs = predict(model, sentences)
    parser = runtime.NumpyParser(export(model.config, model.vocabs, model.state_dict()), kernel)
    mine = parser.tag([s.words for s in sentences])
    assert [(m["head"], m["deprel"]) for m in mine] == [(list(h), list(r)) for h, r in theirs]
    assert len({label for m in mine for label in m["deprel"]}) >= 5  # a model that makes varied decisions
    assert parser.tag([[]]) == [{"head": [], "deprel": []}]


def test_a_model_file_of_another_kind_is_not_taken(tmp_path: Path, small_parser: TransitionParser) -> None:
    model_file.save(tmp_path / "dep.model", small_parser, {})
    plain = archive.read(tmp_path / "dep.model")
    assert runtime.runs(plain) and runtime.from_archive(plain) is not None
    assert not runtime.runs({**plain, "format_version": 99})  # a newer file: torch, which says so
    assert runtime.from_archive({**plain, "state_dict": {**plain["state_dict"], "extra": np.zeros(1)}}) is None


@pytest.mark.skipif(fused._fastscan is None, reason="the C steps are not built")
def test_the_row_sums_refuse_an_index_outside_the_table() -> None:
    table, out = np.ones((4, 16), dtype=np.float32), np.empty((1, 16), dtype=np.float32)
    index = np.array([[0, 3]], dtype=np.int64)
    runtime.NumpyParser.hidden(table, index, out)
    assert (out == 2).all()
    with pytest.raises(ValueError, match="outside the table"):
        fused._fastscan.bag_sum(1, 2, 16, 3, table.ctypes.data, index.ctypes.data, 1, out.ctypes.data)


def test_an_encoder_with_subword_units_gives_the_torch_parsers_trees() -> None:
    train = ewt(200)
    config = ParserConfig(**SMALL, encoder_subwords="suffixes,prefixes", encoder_subword_dim=4)
    model = TransitionParser(config, TransitionParser.vocabs_from(config, train))
    assert model.vocabs["encoder_subword_kinds"] == ["suffixes", "prefixes"] and "s:ing" in model.vocabs["encoder_subwords"]
    randomise(model, seed=5)
    model.eval()
    assert model.encoder.input.subword.weight.shape[1] == 4
    sentences = ewt(120)[100:] + [Sentence("Zqxvwt ÆØÅ-ø 1,234 ☃ McDonald'S".split())]
    theirs = predict(model, sentences)
    mine = runtime.NumpyParser(export(model.config, model.vocabs, model.state_dict()), KERNELS[-1].values[0]).tag(
        [s.words for s in sentences])
    assert [(m["head"], m["deprel"]) for m in mine] == [(list(h), list(r)) for h, r in theirs]
    plain = TransitionParser(ParserConfig(**SMALL), TransitionParser.vocabs_from(ParserConfig(**SMALL), train))
    assert "encoder_subwords" not in plain.vocabs and plain.encoder.input.subword is None  # auto: English has no spaced tokens


@pytest.mark.parametrize("c_states", STATES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_an_encoder_reading_the_tags_gives_the_torch_parsers_trees(kernel: Kernel, c_states: bool, monkeypatch) -> None:
    """``bilstm-tags``: the encoder reads ``upos+feats`` tags beside the words. Each tag's part of
    the first layer's product is a row (``ParserArrays.tag_rows``), added to the words' window
    sums; an unseen tag reads as ``<unk>``, as in torch; the trees are torch's. Without the tags
    it refuses (no silently different trees)."""
    monkeypatch.setattr(runtime, "C_STATES", c_states)
    train = ewt(200)
    config = ParserConfig(**SMALL, encoder_tag_dim=3, tag_column="upos+feats")
    model = TransitionParser(config, TransitionParser.vocabs_from(config, train))
    randomise(model, seed=7)
    model.eval()
    sentences = ewt(130)[100:]
    odd = Sentence("Zqxvwt ÆØÅ-ø 1,234".split())
    odd.columns.update(upos=["NOUN", "ZZZ", "NUM"], feats=["Number=Sing", "_", "NumType=Card"])  # ZZZ+_: unseen
    sentences.append(odd)
    theirs = predict(model, sentences)
    parser = runtime.NumpyParser(export(model.config, model.vocabs, model.state_dict()), kernel)
    assert parser.input_columns == ["upos", "feats"] and parser.tag_rows.shape[1] == 2
    columns = [{"upos": s.columns["upos"], "feats": s.columns["feats"]} for s in sentences]
    mine = parser.tag([s.words for s in sentences], columns)
    assert [(m["head"], m["deprel"]) for m in mine] == [(list(h), list(r)) for h, r in theirs]
    shuffled = [{"upos": c["upos"][::-1], "feats": c["feats"][::-1]} for c in columns]
    other = parser.tag([s.words for s in sentences], shuffled)
    assert [m["head"] for m in other] != [m["head"] for m in mine]  # the tags are read
    with pytest.raises(ValueError, match="reads upos\\+feats"):
        parser.tag([s.words for s in sentences])
