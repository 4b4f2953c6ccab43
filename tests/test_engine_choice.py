"""The engine is chosen under the API (tagger.engines): ``tagger.load(...).tag_file(...)`` runs the
engine ``tagger tag`` runs (the torch-free runtime for a skip-LSTM tagger on the CPU, torch for the
rest) and writes the same bytes, at every precision."""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tagger
from tagger import engines, model_file
from tagger.errors import TaggerError
from tagger.runtime import skip_lstm as runtime
from tests.helpers import invoke

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


@pytest.fixture
def runtime_calls(monkeypatch) -> list[int]:
    """The sentences of each chunk the torch-free tagger starts on."""
    calls: list[int] = []
    start = runtime.NumpyTagger.start
    monkeypatch.setattr(runtime.NumpyTagger, "start",
                        lambda self, words, pool=None: calls.append(len(words)) or start(self, words, pool))
    return calls


@pytest.mark.parametrize("precision", ["fp32", "bf16", "auto"])
@pytest.mark.parametrize("name", ["sample.conllu", "heldout.txt"])
def test_the_api_runs_the_engine_of_tagger_tag_and_writes_its_bytes(sample_tagger, tmp_path, runtime_calls,
                                                                     precision, name):
    cli_out, api_out = tmp_path / "cli.out", tmp_path / "api.out"
    done = invoke("tag", "--model", sample_tagger, "--precision", precision, "--threads", "1", DATA / name,
                  "-o", cli_out)
    assert done.exit_code == 0, done.stderr
    by_cli = list(runtime_calls)
    model = tagger.load(sample_tagger, "auto", 1, precision)
    assert model.engine is not None and model.engine.runtime and model._module is None  # no torch model yet
    counts = model.tag_file(DATA / name, api_out)
    assert api_out.read_bytes() == cli_out.read_bytes() and cli_out.stat().st_size > 0
    assert runtime_calls[len(by_cli):] == by_cli  # the same engine, chunk for chunk (none: torch in both)
    assert counts["sentences"] == sum(by_cli) or not by_cli
    torch_out = tmp_path / "torch.out"
    tagger.load(sample_tagger, "cpu", 1, precision, engine="torch").tag_file(DATA / name, torch_out)
    if precision == "fp32":  # the runtime's float32 products give torch's labels
        assert torch_out.read_bytes() == cli_out.read_bytes()


def test_what_load_chooses(sample_tagger, ffn_parser, monkeypatch):
    assert tagger.load(sample_tagger).engine.runtime
    assert tagger.load(sample_tagger, device="auto").engine.runtime
    assert tagger.load(sample_tagger, engine="torch").engine is None
    assert tagger.load(ffn_parser).engine is None  # a parser the runtimes do not compute (static features): torch
    assert tagger.load([sample_tagger, ffn_parser]).engine is None  # ... after a tagger too
    assert engines.choose([sample_tagger] * 3).runtime  # taggers side by side
    assert not engines.choose([sample_tagger] * (engines.RUNTIME_FILES + 1)).runtime  # more files: torch
    assert not engines.choose([sample_tagger], device="cuda").runtime
    assert not engines.choose([sample_tagger], beam=3).runtime and not engines.choose([sample_tagger], constrained=True).runtime
    assert not engines.choose([DATA / "sample.conllu"]).runtime  # not a model file: torch, which says so
    with pytest.raises(TaggerError, match="engine must be one of"):
        tagger.load(sample_tagger, engine="numpy")
    from tagger import archive  # a tokenizer alone, and before a tagger, go to the runtimes too

    headers = {"tok.model": {"name": "tokenizer", "config": {"recurrent": "torch"}}, "pos.tagger": archive.read(sample_tagger, peek=True)}
    monkeypatch.setattr(archive, "read", lambda path, peek=False: headers.get(Path(path).name))
    assert engines.runs(["tok.model"]) and engines.runs(["tok.model", "pos.tagger"])
    assert not engines.runs(["pos.tagger", "tok.model"]) and not engines.runs(["other.model"])


def test_options_the_runtime_does_not_write_go_to_torch_with_the_same_model(sample_tagger, tmp_path, runtime_calls):
    model = tagger.load(sample_tagger, threads=1)
    model.tag_file(DATA / "sample.conllu", tmp_path / "multi.jsonl", top_k=2)
    model.tag_file(DATA / "sample.conllu", tmp_path / "skip.conllu", on_error="skip")
    model.tag_file(io.BytesIO((DATA / "sample.conllu").read_bytes()), tmp_path / "stream.conllu")  # a stream in: torch
    assert runtime_calls == []
    with open(DATA / "sample.conllu", "rb") as stream:  # but a file's (or a pipe's) binary stream, as stdin's: the runtimes
        model.tag_file(stream, tmp_path / "file-stream.conllu")
    assert len(runtime_calls) == 1 and (tmp_path / "file-stream.conllu").read_bytes() == (tmp_path / "stream.conllu").read_bytes()
    runtime_calls.clear()
    assert runtime_calls == [] and model._module is not None
    model.tag_file(DATA / "sample.conllu", tmp_path / "fast.conllu")
    assert runtime_calls and (tmp_path / "fast.conllu").read_bytes() == (tmp_path / "stream.conllu").read_bytes()
    # past the runtime's switch it falls back on torch: this model's own module, not a second load
    assert model._torch_model(list(model.engine.paths), "cpu", 1, "auto") is model.module
    # a tokenizer's fallback asks without a precision (fp32): loaded once, then kept
    tokenizer = model._torch_model([str(sample_tagger)], "cpu", 1)
    assert tokenizer is not model.module and model._torch_model([str(sample_tagger)], "cpu", 1) is tokenizer


def test_the_api_tags_a_small_input_without_torch_or_the_parser_runtime_and_numpy_gets_one_blas_thread(sample_tagger, tmp_path):
    code = ("import os, sys, tagger; m = tagger.load(sys.argv[1]); m.tag_file(sys.argv[2], sys.argv[3]); "
            "print('torch' in sys.modules, os.environ.get('OPENBLAS_NUM_THREADS'), 'tagger.runtime.parser' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", code, str(sample_tagger), str(DATA / "heldout.txt"),
                           str(tmp_path / "out.conllu")], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "1", "False"]  # nor the parser's runtime, with no parser to run
    assert (tmp_path / "out.conllu").stat().st_size > 0


def test_a_peek_is_read_once_per_file_and_anew_when_the_file_changes(sample_tagger, tmp_path):
    """``archive.read(peek=True)`` keeps each file's last peek: asked again, the same dict; once
    the file is replaced by another model, that model's data."""
    import shutil

    from tagger import archive

    path = tmp_path / "m.tagger"
    shutil.copy(sample_tagger, path)
    first = archive.read(path, peek=True)
    assert first is not None and archive.read(path, peek=True) is first
    assert archive.read(path)["state_dict"] is not None  # a full read is never the peek
    model, meta = model_file.load(path)
    model_file.save(path, model, {**meta, "note": "saved again"})
    again = archive.read(path, peek=True)
    assert again is not first and again["meta"]["note"] == "saved again"
    path.write_bytes(b"not a model")
    assert archive.read(path, peek=True) is None


def test_a_full_read_fills_the_peek_with_writable_arrays_and_leaves_the_peek_as_it_was(sample_tagger, tmp_path,
                                                                                      monkeypatch):
    """A full read after a peek unpickles nothing again: it is the peek with each tensor read
    (the same arrays torch loads), in containers of its own, arrays a trainer may write."""
    import shutil

    import torch

    from tagger import archive

    path = tmp_path / "m.tagger"
    shutil.copy(sample_tagger, path)
    peek = archive.read(path, peek=True)
    assert all(isinstance(value, archive.Unread) for value in peek["state_dict"].values())
    loads = []
    monkeypatch.setattr(archive._Unpickler, "load", lambda self: loads.append(1) or pickle.Unpickler.load(self))
    full = archive.read(path)
    assert not loads  # the pickle was not unpickled again
    expected = torch.load(path, map_location="cpu", weights_only=True)["state_dict"]
    assert list(full["state_dict"]) == list(expected)
    for name, array in full["state_dict"].items():
        assert array.flags.writeable and np.array_equal(array, expected[name].numpy()), name
    full["vocabs"]["words"].append("changed")
    full["state_dict"].popitem()
    assert peek["vocabs"]["words"][-1] != "changed" and len(peek["state_dict"]) == len(expected)
    assert archive.read(path, peek=True) is peek


def test_a_first_line_of_a_few_words_imports_no_pool_tokenizer_stream_or_torch(sample_tagger):
    """What a tagger's first line of three words costs: no thread pool (``concurrent.futures``
    and its ``logging``), no tokenizer's stream module, no torch; the words are tagged all the same."""
    code = ("import io, sys; from tagger.cli import quick; sys.stdin = io.TextIOWrapper(io.BytesIO(b'a b c\\n')); "
            "assert quick.run(['tag', '--model', sys.argv[1]]); "
            "print(sorted(m for m in ('concurrent.futures', 'tagger.tokenization.stream', 'tagger.runtime.pool', "
            "'torch') if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, str(sample_tagger)], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert [line.split("\t")[1] for line in done.stdout.splitlines() if line] == ["a", "b", "c"]
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_only_a_few_hundred_tokens_skip_the_kernels_and_without_them_numpy_still_tags(sample_tagger, tmp_path,
                                                                                      monkeypatch):
    """Up to ``NUMPY_TOKENS`` numpy multiplies (the first line at once); past them, within one
    chunk, the kernels do (their packing pays: docs/tagger.md); without kernels such an input is
    still tagged here, by numpy, rather than by torch."""
    from tagger.runtime import pipeline

    asked: list[bool] = []

    def spy(precision, small, hidden):
        asked.append(small)
        return real(precision, small, hidden)

    real = pipeline.kernel_for
    monkeypatch.setattr(pipeline, "kernel_for", spy)
    small, larger = ROOT / "data" / "sample.conllu", ROOT / "data" / "ewt-dev.conllu"  # 54 and 1,299 tokens
    for path in (small, larger):
        pipeline.tag_file([str(sample_tagger)], [str(path)], str(tmp_path / f"{path.stem}.conllu"), threads=1,
                          precision="fp32")
    assert asked[:2] == [True, False]  # (without the C steps built, the larger input asks again, as small)
    monkeypatch.setattr(pipeline, "kernel_for", lambda precision, small, hidden: real(precision, small, hidden)
                        if small else None)  # as where no kernel is built
    counts = pipeline.tag_file([str(sample_tagger)], [str(larger)], str(tmp_path / "numpy.conllu"), threads=1,
                               precision="fp32", load_torch=lambda *args: pytest.fail("torch was loaded"))
    assert counts["tokens"] == 1299
    assert (tmp_path / "numpy.conllu").read_bytes() == (tmp_path / "ewt-dev.conllu").read_bytes()  # fp32 both ways
