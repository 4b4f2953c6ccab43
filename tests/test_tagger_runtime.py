"""The skip-LSTM tagger without torch (tagger.runtime.skip_lstm): the labels of the torch model
and the bytes of its `tagger tag` output, for tiny models trained here on EWT sentences (one
column, three columns, four layers with another window); other configurations are left to torch;
the path never imports torch."""

from __future__ import annotations

import dataclasses
import gc
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import tagger
from tagger import engines, formats, model_file
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.inference import predict
from tagger.models.skip_lstm import RARE, TaggerConfig
from tagger.modules import fused
from tagger.runtime import pipeline
from tagger.runtime import skip_lstm as runtime
from tagger.runtime.pool import Pool
from tagger.runtime.kernels import NUMPY, Kernel
from tagger.runtime.tokenizer import read_archive
from tests.conftest import EWT
from tests.helpers import first_blocks, invoke

ROOT = Path(__file__).resolve().parents[1]

#: Tiny models, each trained for four epochs on 80 EWT sentences: name -> (column, --set overrides).
MODELS = {
    "upos": ("upos", ("hidden=16", "word_dim=16", "char_dim=4")),
    "three": ("upos,xpos,feats", ("hidden=16", "word_dim=16", "char_dim=4")),
    "deep": ("upos", ("layers=4", "hidden=12", "word_dim=8", "caps_dim=0", "char_length=3", "window=5",
                      "window_gates=false")),
    "plain": ("upos", ("skip=none", "hidden=16", "word_dim=16")),  # not computed here: torch runs it
    "units": ("upos", ("hidden=16", "word_dim=16", "char_dim=4", "subwords=pieces,suffixes,prefixes", "subword_dim=8")),
    # a tag dictionary in both columns, from words seen once (the decoding of every model: lexicon=auto's choice)
    "lexicon": ("upos,xpos", ("hidden=16", "word_dim=16", "char_dim=4", "lexicon=1")),
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> dict[str, Path]:
    if not (EWT / "en_ewt-ud-train.conllu").exists():
        pytest.skip("needs ../shared/data")
    from tagger.training.run import DataSpec, TrainRequest, train

    class Quiet:
        def epoch_start(self, epoch, batches): pass
        def step(self, loss, tokens): pass
        def epoch_end(self, record): pass
        def note(self, message): pass

    folder = tmp_path_factory.mktemp("runtime")
    train_file, dev_file = folder / "train.conllu", folder / "dev.conllu"
    train_file.write_text(first_blocks(EWT / "en_ewt-ud-train.conllu", 80), encoding="utf-8")
    dev_file.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 20), encoding="utf-8")
    torch.set_num_threads(1)
    paths = {}
    for name, (column, overrides) in MODELS.items():
        paths[name] = folder / f"{name}.tagger"
        train(TrainRequest(task="pos", train=DataSpec(str(train_file)), dev=DataSpec(str(dev_file)),
                           out=str(paths[name]), column=column, max_epochs=2, batch_size=8,
                           overrides=("lr=0.01", *overrides)), Quiet())
    tokenizer = ("--task", "tokenize", "--train", train_file, "--dev", dev_file, "--out", folder / "tok.model",
                 "--max-epochs", "3", "--threads", "1", "--quiet", "--batch-size", "4", *(
                     arg for value in ("hidden=16", "segment=48", "context=8", "char_dim=8", "lr=0.02")
                     for arg in ("--set", value)))
    done = invoke("train", *tokenizer)
    assert done.exit_code == 0, done.stderr
    paths["tokenizer"] = folder / "tok.model"
    return paths


def _sentences() -> list[Sentence]:
    """EWT dev sentences, a one-word one, one of 150 words, and unknown words and characters."""
    dev = list(formats.read(io.StringIO(first_blocks(EWT / "en_ewt-ud-dev.conllu", 120)), "conllu"))
    long = [w for s in dev[:20] for w in s.words][:150]
    odd = "Zqxvwt ÆØÅ-ø 1,234,567 ☃☃ a b c ZZZZZ McDonald'S ¿¡".split()
    return dev + [Sentence(["Hello"]), Sentence(long), Sentence(odd), Sentence([])]


def _text_input(tmp_path: Path) -> Path:
    path = tmp_path / "in.txt"
    path.write_text("I saw it\n\nZqxvwt ÆØÅ-ø said 1,234 things .\nGo\n" + " ".join(["word"] * 120) + "\n",
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["upos", "three", "deep", "units", "lexicon"])
def test_numpy_labels_are_the_torch_models_labels(trained, name):
    numpy_model = runtime.load(trained[name])
    assert numpy_model is not None
    torch_model, _ = model_file.load(trained[name])
    sentences = _sentences()
    theirs = predict(torch_model, sentences)
    mine = numpy_model.tag([s.words for s in sentences])
    columns = MODELS[name][0].split(",")
    if len(columns) == 1:
        theirs = [{columns[0]: labels} for labels in theirs]
    else:
        theirs = [labels or {c: [] for c in columns} for labels in theirs]  # an empty sentence's []
    assert mine == theirs
    assert len({label for labels in mine for label in labels[columns[0]]}) >= 6  # a model that tells words apart
    assert mine[-1] == {c: [] for c in columns} and len(mine[-3][columns[0]]) == 150
    if name == "lexicon":  # its dictionaries are the model's, and change labels here
        assert numpy_model.arrays.lexicons == [torch_model.lexicons[key] for key in ("tags", "tags:xpos")]
        free = runtime.from_archive({**runtime.read_archive(trained[name]), "config": {
            **runtime.read_archive(trained[name])["config"], "lexicon": "0"}})
        assert free.arrays.lexicons == [None, None] and free.tag([s.words for s in sentences]) != mine


BF16 = [pytest.param(k, id=fused.KERNELS[k]) for k in range(1, (fused._fastscan.bf16_kernel() if fused._fastscan else 0) + 1)]
F32 = [pytest.param(k, id=fused.F32_KERNELS[k]) for k in range(1, (fused._fastscan.f32_kernel() if fused._fastscan else 0) + 1)]


@pytest.mark.skipif(not F32, reason="the C steps are not built")
@pytest.mark.parametrize("kernel", F32)
@pytest.mark.parametrize("name", ["upos", "three", "deep", "units", "lexicon"])
def test_the_float32_kernels_give_the_labels_and_scores_of_numpy(trained, name, kernel):
    exact, fast = runtime.load(trained[name]), runtime.load(trained[name], Kernel(f32=kernel))
    assert fast.kernel == Kernel(f32=kernel) and exact.kernel == NUMPY
    sentences = [s.words for s in _sentences()]
    assert fast.tag(sentences, threads=2) == exact.tag(sentences)
    batch = [words for words in sentences[:40] if words]
    expected = exact.scores_fused(batch, exact.word_rows(list(dict.fromkeys(w for s in batch for w in s))))
    got = fast.scores_packed(batch, fast.word_rows(list(dict.fromkeys(w for s in batch for w in s))))
    finite = np.isfinite(expected)
    assert (finite == np.isfinite(got)).all()  # padding and RARE never chosen, in both
    np.testing.assert_allclose(got[finite], expected[finite], atol=1e-4 * np.abs(expected[finite]).max())


I8 = int(fused._fastscan.i8_kernel()) if fused._fastscan else 0
#: the kernels of lower precision this CPU runs: bf16 (AVX512-BF16, AMX), int8 (AVX2, AVX-VNNI)
LOW = [pytest.param(Kernel(bf16=k), id=fused.KERNELS[k]) for k in range(1, len(BF16) + 1)] + [
    pytest.param(Kernel(f32=len(F32), i8=k), id=f"i8-{fused.I8_KERNELS[k]}") for k in range(1, I8 + 1)
    if fused._fastscan.i8_kernel_runs(k)]


@pytest.mark.skipif(not LOW, reason="no bf16 or int8 kernel on this CPU")
@pytest.mark.parametrize("kernel", LOW)
@pytest.mark.parametrize("name", ["upos", "three", "deep", "units", "lexicon"])
def test_the_bf16_and_int8_kernels_give_the_float32_labels_but_for_a_few(trained, name, kernel):
    exact, low = runtime.load(trained[name]), runtime.load(trained[name], kernel)
    assert low.kernel == kernel and exact.kernel == NUMPY
    if kernel.i8:  # every product in int8, the per-word rows at a scale per word
        assert low.arrays.layers[0].packed_h.tiles.dtype == np.int8
        assert low.packed_first.tiles.dtype == np.int8 and low.packed_first.scale == 1.0
    sentences = [s.words for s in _sentences()]
    columns = MODELS[name][0].split(",")
    mine, theirs = low.tag(sentences, threads=2), exact.tag(sentences)
    same = [a == b for m, t in zip(mine, theirs) for c in columns for a, b in zip(m[c], t[c])]
    assert len(same) > 2500 and sum(same) / len(same) > 0.99
    assert mine[-1] == {c: [] for c in columns} and len(mine[-3][columns[0]]) == 150
    batch = [words for words in sentences[:40] if words]
    expected = exact.scores_fused(batch, exact.word_rows(list(dict.fromkeys(w for s in batch for w in s))))
    got = low.scores_packed(batch, low.word_rows(list(dict.fromkeys(w for s in batch for w in s))))
    finite = np.isfinite(expected)
    assert (finite == np.isfinite(got)).all()  # padding and RARE never chosen, in both
    lengths = np.array([len(s) for s in batch])
    real = (np.arange(expected.shape[0])[:, None] < lengths)[..., None] & finite
    difference, scale = np.abs(got[real] - expected[real]), np.abs(expected[real]).max()
    assert difference.max() < 0.05 * scale and difference.mean() < 0.005 * scale


@pytest.mark.skipif(not F32, reason="the C steps are not built")
def test_the_first_layers_rows_shared_out_among_the_pools_threads_are_the_same(trained):
    kinds = [Kernel(f32=len(F32))] + ([Kernel(f32=len(F32), i8=I8)] if I8 else [])
    forms = list(dict.fromkeys(w for s in _sentences() for w in s.words))
    assert len(forms) >= 3 * runtime.PART_ROWS  # three parts and more
    for kernel in kinds:
        model = runtime.load(trained["three"], kernel)
        f = model.features(forms)[1:]
        alone, shared = (np.full((len(f), model.first.shape[1]), np.nan, np.float32) for _ in range(2))
        model.first_products(f, alone)
        with Pool(2) as pool:
            model.first_products(f, shared, pool)
        np.testing.assert_array_equal(shared, alone)


@pytest.mark.skipif(not F32, reason="the C steps are not built")
def test_a_full_table_of_word_rows_starts_again_with_the_chunks_words_it_held(trained, monkeypatch):
    sentences = [s.words for s in _sentences() if s.words]
    chunks = [sentences[i : i + 15] for i in range(0, len(sentences), 15)]
    kernel = Kernel(f32=len(F32))
    whole = runtime.load(trained["three"], kernel)
    expected = whole.tag(sentences)  # one table: every word's row computed once
    model = runtime.load(trained["three"], kernel)
    room = 300  # rows a table (row 0 included)
    row_bytes = model.first.shape[1] * 4 + (0 if model.gates_w is None else model.gates_w.shape[1] * 4)
    monkeypatch.setattr(runtime, "KEPT_BYTES", (room - 1) * row_bytes)
    computed, first_products = [], model.first_products
    monkeypatch.setattr(model, "first_products", lambda f, out, pool=None: computed.append(len(f)) or first_products(f, out, pool))
    labels, tables = [], set()
    for chunk in chunks:
        labels += model.finish(model.start(chunk))
        tables.add(id(model.kept))
    assert labels == expected and len(tables) >= 3  # started again twice or more
    for form, row in model.kept.rows.items():  # the copied rows are the words' own
        np.testing.assert_array_equal(model.kept.tables[row], whole.kept.tables[whole.kept.rows[form]])
        assert model.kept.ids[form] == whole.kept.ids[form]
    held, rows, emptied = set(), 0, 0  # the rows computed: with a restart keeping a chunk's held words, and emptying
    for chunk in chunks:
        forms = set(w for s in chunk for w in s)
        if len(held) + 1 + len(forms - held) > room:
            held &= forms
        rows += len(forms - held)
        held |= forms
    held = set()
    for chunk in chunks:
        forms = set(w for s in chunk for w in s)
        if len(held) + 1 + len(forms - held) > room:
            held = set()
        emptied += len(forms - held)
        held |= forms
    assert sum(computed) == rows < emptied


def test_how_an_input_is_tagged_follows_the_precision_and_the_cpu(trained, monkeypatch):
    header = read_archive(trained["upos"], peek=True)
    monkeypatch.setattr(runtime, "f32_kernel", lambda: 2)
    monkeypatch.setattr(runtime.kernels, "i8_kernel", lambda: 1)
    here = Kernel(f32=2)  # float32 here: by the float32 kernels
    for kernel in (0, 2):
        monkeypatch.setattr(runtime, "bf16_kernel", lambda: kernel)
        monkeypatch.setattr(runtime, "cpu_has_bf16", lambda: kernel > 0)
        assert runtime.products(header, "fp32", small=False) == here  # float32 asked: float32 here
        assert runtime.products(header, "auto", small=True) == NUMPY  # a small input: the first line at once
        # on a large input, the bf16 kernels where they run, else int8 products (issue 33)
        assert runtime.products(header, "auto", small=False) == (Kernel(bf16=kernel) if kernel else Kernel(f32=2, i8=1))
        assert runtime.products(header, "bf16", small=False) == (Kernel(bf16=kernel) if kernel else None)
        assert runtime.products(read_archive(trained["plain"], peek=True), "fp32", small=True) is None
    monkeypatch.setattr(runtime, "cpu_has_bf16", lambda: True)
    monkeypatch.setattr(runtime, "bf16_kernel", lambda: 1)  # AVX512-BF16's dot products, but VNNI's int8 ones win
    for i8, expected in [(3, Kernel(f32=2, i8=3)), (2, Kernel(f32=2, i8=2)), (1, Kernel(bf16=1))]:
        monkeypatch.setattr(runtime.kernels, "i8_kernel", lambda: i8)
        assert runtime.products(header, "auto", small=False) == expected
        assert runtime.products(header, "bf16", small=False) == Kernel(bf16=1)  # bf16 asked: bf16
    monkeypatch.setattr(runtime.kernels, "i8_kernel", lambda: 1)  # AVX512-BF16 alone (no kernel): torch for wide models
    monkeypatch.setattr(runtime, "bf16_kernel", lambda: 0)
    assert runtime.products(header, "auto", small=False) == here  # hidden 16 ≤ NUMPY_HIDDEN
    wide = {**header, "config": {**header["config"], "hidden": 128}}
    assert runtime.products(wide, "auto", small=False) is None
    monkeypatch.setattr(runtime, "bf16_kernel", lambda: 1 / 0)  # a small input never waits for the kernel's choice
    assert runtime.products(header, "auto", small=True) == NUMPY and runtime.products(header, "fp32", small=False) == here
    monkeypatch.setattr(runtime, "bf16_kernel", lambda: 0)
    monkeypatch.setattr(runtime, "cpu_has_bf16", lambda: False)
    monkeypatch.setattr(runtime.kernels, "i8_kernel", lambda: 0)  # TAGGER_I8_KERNEL=none: float32
    assert runtime.products(wide, "auto", small=False) == here
    monkeypatch.setattr(runtime, "f32_kernel", lambda: 0)  # TAGGER_F32_KERNEL=none: numpy a step at a time
    assert runtime.products(header, "fp32", small=False) == NUMPY
    monkeypatch.setattr(runtime.kernels, "i8_kernel", lambda: 1)  # int8 only beside the float32 kernels
    assert runtime.products(header, "auto", small=False) == NUMPY
    monkeypatch.setattr(runtime, "_fastscan", None)
    assert runtime.products(header, "fp32", small=False) is None and runtime.products(header, "fp32", small=True) == NUMPY


def test_a_stream_is_tagged_with_fewer_collections_and_the_thresholds_come_back(trained, tmp_path, monkeypatch):
    from tagger.corpus.batching import FEWER_COLLECTIONS
    from tagger.runtime import tokenizer
    from tagger.tokenization import stream

    before, seen = gc.get_threshold(), []
    fewer = (max(before[0], FEWER_COLLECTIONS), *before[1:])
    monkeypatch.setattr(runtime.NumpyTagger, "finish", lambda self, tagging, finish=runtime.NumpyTagger.finish:
                        seen.append(gc.get_threshold()) or finish(self, tagging))
    counts = pipeline.tag_file([str(trained["upos"])], [str(_text_input(tmp_path))], str(tmp_path / "out.conllu"))
    assert counts["sentences"] == 4 and seen == [fewer] and gc.get_threshold() == before
    monkeypatch.setattr(stream, "write_sentences", lambda *args, write=stream.write_sentences:
                        seen.append(gc.get_threshold()) or write(*args))  # the tokenizer's runtime alone too
    tokenizer.tag_file(str(trained["tokenizer"]), [str(_text_input(tmp_path))], str(tmp_path / "tokens.conllu"))
    assert seen[1:] == [fewer] and gc.get_threshold() == before


@pytest.mark.skipif(not F32, reason="the C steps are not built")
def test_numpys_blas_has_one_thread_while_the_kernels_tag_a_stream_and_gets_its_own_back(trained, tmp_path, monkeypatch):
    import threadpoolctl

    def blas() -> list[int]:
        return [pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]
    seen: list[list[int]] = []
    monkeypatch.setattr(runtime.NumpyTagger, "finish", lambda self, tagging, finish=runtime.NumpyTagger.finish:
                        seen.append(blas()) or finish(self, tagging))
    conllu = tmp_path / "in.conllu"
    conllu.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 60), encoding="utf-8")
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):  # a user's setting: numpy's BLAS, 2 threads
        before = blas()
        if not before:
            pytest.skip("numpy's BLAS is not one threadpoolctl knows")
        assert set(before) == {2}
        pipeline.tag_file([str(trained["upos"])], [str(conllu)], str(tmp_path / "long.out"))  # the kernels
        assert seen and all(threads == [1] * len(before) for threads in seen) and blas() == before
        seen.clear()
        pipeline.tag_file([str(trained["upos"])], [str(_text_input(tmp_path))], str(tmp_path / "short.out"))
        assert seen == [before]  # a first line at once: numpy a step at a time, left as it was


@pytest.mark.parametrize("name", ["upos", "three"])
def test_tag_file_writes_the_torch_paths_bytes_for_conllu_and_text(trained, name, tmp_path):
    conllu = tmp_path / "in.conllu"
    conllu.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 60), encoding="utf-8")
    full = tagger.load(trained[name], "cpu", 1, "fp32", engine="torch")
    for source in (conllu, _text_input(tmp_path)):
        counts = pipeline.tag_file([str(trained[name])], [str(source)], str(tmp_path / "fast.out"))
        assert counts is not None and counts["sentences"] >= 4
        full.tag_file(str(source), tmp_path / "full.out")
        assert (tmp_path / "fast.out").read_bytes() == (tmp_path / "full.out").read_bytes()


def test_the_cli_takes_the_numpy_path_and_past_the_switch_gives_all_to_torch(trained, tmp_path, monkeypatch):
    text = _text_input(tmp_path).read_text(encoding="utf-8")
    calls = []
    numpy_start = runtime.NumpyTagger.start
    monkeypatch.setattr(runtime.NumpyTagger, "start",
                        lambda self, words, pool=None: calls.append(len(words)) or numpy_start(self, words, pool))
    done = invoke("tag", "--model", trained["three"], "--threads", "1", "--output-format", "tagged", stdin=text)
    assert done.exit_code == 0, done.stderr
    assert calls == [4]  # the four sentences, at once (the blank line is none)
    lines = tagger.load(trained["three"], "cpu", 1, "fp32", engine="torch").tag_lines(text.splitlines(), "tagged")
    assert done.stdout == "".join(lines)
    conllu = tmp_path / "in.conllu"
    conllu.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 30), encoding="utf-8")
    tokens = sum(len(s) for s in formats.read(conllu))
    tagger.load(trained["upos"], "cpu", 1, "fp32", engine="torch").tag_file(str(conllu), tmp_path / "full.out")
    full = (tmp_path / "full.out").read_bytes()
    if runtime._fastscan is not None:  # with the C steps, any input stays here, chunk by chunk, in threads
        counts = pipeline.tag_file([str(trained["upos"])], [str(conllu)], str(tmp_path / "long.out"), switch_tokens=100,
                                  chunk_size=12, threads=2)
        assert counts == {"sentences": 30, "tokens": tokens} and calls == [4, 12, 12, 6]
        assert (tmp_path / "long.out").read_bytes() == full
        del calls[1:]
    monkeypatch.setattr(runtime, "_fastscan", None)  # numpy alone: past the switch, torch
    counts = pipeline.tag_file([str(trained["upos"])], [str(conllu)], str(tmp_path / "switched.out"), switch_tokens=100)
    assert counts == {"sentences": 30, "tokens": tokens} and calls == [4]
    assert (tmp_path / "switched.out").read_bytes() == full
    # more than one chunk: torch, which writes each chunk as it is read (a process fed sentence by sentence)
    counts = pipeline.tag_file([str(trained["upos"])], [str(conllu)], str(tmp_path / "chunks.out"), chunk_size=29)
    assert counts == {"sentences": 30, "tokens": tokens} and calls == [4]
    assert (tmp_path / "chunks.out").read_bytes() == full
    assert pipeline.tag_file([str(trained["upos"])], [str(conllu)], str(tmp_path / "one.out"), chunk_size=31)
    assert calls == [4, 30] and (tmp_path / "one.out").read_bytes() == full


def test_a_tokenizer_before_the_tagger_gives_the_torch_pipelines_bytes(trained, tmp_path, monkeypatch):
    raw = tmp_path / "raw.txt"
    raw.write_text("I saw it. Did you?\n\nThe cat sat on the mat, didn't it? Yes.\n", encoding="utf-8")
    conllu = tmp_path / "in.conllu"
    conllu.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 30), encoding="utf-8")
    paths = [str(trained["tokenizer"]), str(trained["three"])]
    full = tagger.load(paths, "cpu", 1, "fp32", engine="torch")
    for source, switch in ((raw, runtime.SWITCH_TOKENS), (conllu, runtime.SWITCH_TOKENS), (raw, 3), (conllu, 100)):
        counts = pipeline.tag_file(paths, [str(source)], str(tmp_path / "fast.out"), switch_tokens=switch)
        assert counts is not None and counts["sentences"] >= 2
        full.tag_file(str(source), tmp_path / "full.out")
        assert (tmp_path / "fast.out").read_bytes() == (tmp_path / "full.out").read_bytes()
    assert pipeline.tag_file(paths[::-1], [str(raw)], str(tmp_path / "x.out")) is None  # a tagger, then a tokenizer
    done = invoke("tag", "--model", paths[0], "--model", paths[1], stdin=raw.read_bytes())
    assert done.exit_code == 0, done.stderr
    full.tag_file(str(raw), tmp_path / "full.out")
    assert done.stdout == (tmp_path / "full.out").read_text(encoding="utf-8")


def test_a_reader_error_comes_after_the_sentences_before_it_as_on_the_torch_path(trained, tmp_path):
    bad = tmp_path / "bad.conllu"
    good = first_blocks(EWT / "en_ewt-ud-dev.conllu", 3)
    bad.write_text(good + "1\tword\n\n", encoding="utf-8")
    with pytest.raises(TaggerError) as fast:
        pipeline.tag_file([str(trained["upos"])], [str(bad)], str(tmp_path / "fast.out"))
    with pytest.raises(TaggerError) as full:
        tagger.load(trained["upos"], "cpu", 1, "fp32", engine="torch").tag_file(str(bad), tmp_path / "full.out")
    assert str(fast.value) == str(full.value)
    assert (tmp_path / "fast.out").read_bytes() == (tmp_path / "full.out").read_bytes()
    assert (tmp_path / "fast.out").read_text(encoding="utf-8").count("\n\n") == 3


def test_other_configurations_are_left_to_torch_with_the_same_output(trained, tmp_path):
    path = trained["plain"]
    assert not runtime.supported(read_archive(path, peek=True)) and runtime.load(path) is None
    source = _text_input(tmp_path)
    assert pipeline.tag_file([str(path)], [str(source)], str(tmp_path / "fast.out")) is None
    assert not (tmp_path / "fast.out").exists()  # nothing read or written
    done = invoke("tag", "--model", path, "--threads", "1", source)
    assert done.exit_code == 0, done.stderr
    tagger.load(path, "cpu", 1, "fp32", engine="torch").tag_file(str(source), tmp_path / "full.out")
    assert done.stdout == (tmp_path / "full.out").read_text(encoding="utf-8")
    header = read_archive(trained["upos"], peek=True)
    for change in ({"char_cnn": 8}, {"gate": "input"}, {"cell": "block"}, {"shiny_new_option": 1}):
        assert not runtime.supported({**header, "config": {**header["config"], **change}}), change
    assert not runtime.supported({**header, "format_version": model_file.FORMAT_VERSION + 1})
    three = read_archive(trained["three"], peek=True)
    assert not runtime.supported({**three, "config": {**three["config"], "feats_mode": "feature"}})
    assert runtime.supported(three) and runtime.supported({**header, "config": {**header["config"], "feats_mode": "feature"}})


def test_what_the_runtime_knows_of_the_model_is_the_models():
    """One schema: the runtime validates a model file with the family's own config class and the
    one check beside it (no copied allow-lists, no state-dict keys of its own)."""
    from tagger.models.skip_lstm import config as schema, export

    assert runtime.RARE is RARE and runtime.FORMAT_VERSIONS[-1] == model_file.FORMAT_VERSION
    assert runtime.supports_fast_path is schema.supports_fast_path and runtime.export is export.export
    assert not hasattr(runtime, "FIXED") and not hasattr(runtime, "OTHER")
    assert set(schema.FAST_PATH) <= {f.name for f in dataclasses.fields(TaggerConfig)}
    assert "rnn.layers" not in Path(runtime.__file__).read_text(encoding="utf-8")
    assert schema.supports_fast_path(TaggerConfig()) and not schema.supports_fast_path(TaggerConfig(skip="none"))
    header = {"name": "skip_lstm", "format_version": model_file.FORMAT_VERSION}
    values = dataclasses.asdict(TaggerConfig())
    assert runtime.supported({**header, "config": values})
    assert not runtime.supported({**header, "config": {**values, "hidden": "many"}})  # the config class refuses it
    assert not runtime.supported({**header, "config": {k: v for k, v in values.items() if k != "gate"}})


def test_a_parser_after_them_and_a_pipeline_file_give_the_torch_pipelines_bytes(trained, tmp_path):
    """A tokenizer, a tagger and a ``bilstm-words`` parser (tagger.runtime.parser), as three files
    and as one pipeline file, on raw text and on CoNLL-U, as the torch pipeline writes them."""
    from tests.test_parser_runtime import make_small_parser

    model_file.save(tmp_path / "dep.model", make_small_parser(), {})
    paths = [str(trained["tokenizer"]), str(trained["three"]), str(tmp_path / "dep.model")]
    model_file.save_pipeline(tmp_path / "all.model", [model_file.read_archive(p) for p in paths], {})
    raw, conllu = _text_input(tmp_path), tmp_path / "in.conllu"
    conllu.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 30), encoding="utf-8")
    for models in (paths, [str(tmp_path / "all.model")]):
        assert engines.choose(models).runtime
        full = tagger.load(models, "cpu", 1, "fp32", engine="torch")
        for source, switch in ((raw, runtime.SWITCH_TOKENS), (conllu, runtime.SWITCH_TOKENS), (conllu, 100)):
            counts = pipeline.tag_file(models, [str(source)], str(tmp_path / "fast.out"), switch_tokens=switch)
            assert counts is not None and counts["sentences"] >= 2
            full.tag_file(str(source), tmp_path / "full.out")
            assert (tmp_path / "fast.out").read_bytes() == (tmp_path / "full.out").read_bytes()
        parsed = list(formats.read(tmp_path / "fast.out", "conllu"))
        assert all(s.columns["head"].count(0) == 1 and "_" not in s.columns["deprel"] for s in parsed if len(s))
    assert pipeline.tag_file(paths[1:] + paths[:1], [str(raw)], str(tmp_path / "x.out")) is None  # tokenizer last


def test_a_parser_reading_the_taggers_tags_gives_the_torch_pipelines_bytes(trained, tmp_path):
    """A ``bilstm-tags`` parser (its encoder reads ``upos+feats``) after a tokenizer and the
    tagger of those columns, as one pipeline file: the parser starts once the tagger is done, on
    its tags, and writes the torch pipeline's bytes, on raw text and on CoNLL-U, its tags
    replaced by the tagger's. The same parser with no tagger before it (the tags from the input)
    is left to torch."""
    from tagger.models.transition_parser import ParserConfig, TransitionParser
    from tests.test_parser import randomise
    from tests.test_parser_runtime import SMALL, ewt

    config = ParserConfig(**SMALL, encoder_tag_dim=3, tag_column="upos+feats")
    dep = TransitionParser(config, TransitionParser.vocabs_from(config, ewt(200)))
    randomise(dep, seed=7)
    model_file.save(tmp_path / "dep.model", dep.eval(), {})
    paths = [str(trained["tokenizer"]), str(trained["three"]), str(tmp_path / "dep.model")]
    model_file.save_pipeline(tmp_path / "all.model", [model_file.read_archive(p) for p in paths], {})
    raw, conllu = _text_input(tmp_path), tmp_path / "in.conllu"
    conllu.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 30), encoding="utf-8")
    models = [str(tmp_path / "all.model")]
    assert engines.choose(models).runtime
    full = tagger.load(models, "cpu", 1, "fp32", engine="torch")
    for source in (raw, conllu):
        counts = pipeline.tag_file(models, [str(source)], str(tmp_path / "fast.out"))
        assert counts is not None and counts["sentences"] >= 2
        full.tag_file(str(source), tmp_path / "full.out")
        assert (tmp_path / "fast.out").read_bytes() == (tmp_path / "full.out").read_bytes()
    assert pipeline.tag_file([str(tmp_path / "dep.model")], [str(conllu)], str(tmp_path / "x.out")) is None
    assert not engines.choose([str(tmp_path / "dep.model")]).runtime
    stages = pipeline.headers([str(trained["upos"]), str(tmp_path / "dep.model")])  # FEATS from no tagger: torch's
    assert not pipeline.runs(stages) and pipeline.runs(pipeline.headers(paths[1:]))


@pytest.mark.parametrize("tokenizer", [False, True])
def test_tagging_a_small_input_imports_no_torch(trained, tmp_path, tokenizer):
    source = _text_input(tmp_path)
    models = [str(trained["tokenizer"])] * tokenizer + [str(trained["three"])]
    if tokenizer:  # and a parser after the tagger (tagger.runtime.parser)
        from tests.test_parser_runtime import make_small_parser

        model_file.save(tmp_path / "dep.model", make_small_parser(), {})
        models.append(str(tmp_path / "dep.model"))
    code = ("import sys; from tagger.runtime.pipeline import tag_file; "
            f"counts = tag_file({models!r}, [{str(source)!r}], None); "
            "assert counts['sentences'] >= 2, counts; assert 'torch' not in sys.modules, 'torch imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert ("# text = I saw it\n1\tI\t_\t" in done.stdout) == tokenizer and "1\tI\t_\t" in done.stdout


def test_tagger_tag_to_a_pipe_imports_no_rich(trained, tmp_path):
    """``tagger tag`` whose stderr is no terminal shows no bar, and so does not import rich (a
    tenth of a small input's process); ``FORCE_COLOR`` makes rich take stderr for a terminal, and
    then it is asked."""
    source = _text_input(tmp_path)
    command = [sys.executable, "-X", "importtime", "-m", "tagger", "tag", "--model", str(trained["tokenizer"]), str(source)]
    piped = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120,
                           env={k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")})
    assert piped.returncode == 0 and "# text = I saw it" in piped.stdout, piped.stderr
    assert "| rich" not in piped.stderr and "| tagger.runtime" in piped.stderr
    forced = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120,
                            env={**os.environ, "FORCE_COLOR": "1"})
    assert forced.returncode == 0 and "| rich.console" in forced.stderr
