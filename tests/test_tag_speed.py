"""The speed work of issue 20 changes no output: the in-place inference scan, batches in threads,
the kept word rows, the numbering of a batch; and `tagger tag` imports only what it needs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tagger.corpus.records import Sentence
from tagger.inference import predict
from tagger.modules import recurrent
from tagger.modules.input_layer import WordRows
from tagger.modules.recurrent import CellSpec, StackedBiRNN
from tests.test_tagger import TOY, toy_model
from tests.test_zoo_cells import CASES

ROOT = Path(__file__).resolve().parents[1]
EWT_TEST = ROOT.parent / "shared" / "data" / "ud-english-ewt" / "en_ewt-ud-test.conllu"


@pytest.mark.parametrize("hidden", [16, 7])
@pytest.mark.parametrize("spec,setup", CASES)
def test_inference_scan_gives_the_autograd_scans_outputs_bit_for_bit(spec, setup, hidden, monkeypatch):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    size = hidden if setup["input_size"] == 4 else 10  # the "d=h" cases need input size = hidden
    model = StackedBiRNN(size, hidden, setup["layers"], CellSpec(**spec), skip_span=setup["skip_span"],
                         composition=setup["composition"])
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.5)
    model.eval()
    monkeypatch.setattr(recurrent, "FUSED", False)  # the torch inference scan (the C step: test_fused_scan.py)
    x, lengths = torch.randn(9, 6, size), torch.tensor([9, 2, 5, 1, 9, 7])
    with torch.no_grad():
        fast = model(x, lengths)
        monkeypatch.setattr(recurrent, "_scan_inference", recurrent._scan)
        plain = model(x, lengths)
    assert torch.equal(fast, plain)


def test_batches_in_threads_give_the_one_thread_output_and_restore_the_thread_count():
    torch.manual_seed(0)
    model = toy_model().eval()
    sentences = TOY * 3 + [Sentence([], {})] + [Sentence("the dog barked at the cat".split(), {})]
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        model.input.word_rows = WordRows()
        alone = predict(model, sentences, max_tokens=8)  # several batches
        torch.set_num_threads(2)
        model.input.word_rows = WordRows()
        together = predict(model, sentences, max_tokens=8)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)
    assert together == alone and together[len(TOY) * 3] == []


def test_in_threads_keeps_order_raises_an_items_error_and_restores_the_thread_count():
    from tagger.inference import in_threads

    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        assert list(in_threads(lambda n: (n * n, torch.get_num_threads()), range(6), 2)) == [(n * n, 1) for n in range(6)]

        def fail(n):
            if n == 2:
                raise ValueError("item 2")
            return n

        with pytest.raises(ValueError, match="item 2"):
            list(in_threads(fail, range(6), 2))
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


def test_kept_word_rows_give_the_uncached_scores_exactly_and_keep_the_most_used_words():
    torch.manual_seed(0)
    model = toy_model().eval()
    row_bytes = 2 * 3 * model.rnn.layers[0].w_x.shape[-1] * 4 + 9 * 4
    model.input.word_rows = rows = WordRows(max_bytes=12 * row_bytes)  # room for 11 words
    common = Sentence("the the dog".split(), {})
    batches = [[common, Sentence(f"the w{i} x{i} y{i} z{i}".split(), {})] for i in range(4)]
    with torch.no_grad():
        for sentences in batches:
            batch = model.collate(sentences, with_gold=False)
            uncached = model(type(batch)(**{**batch.__dict__, "forms": None}))
            assert torch.equal(model(batch), uncached)
    assert "the" in rows.slots and "dog" in rows.slots and len(rows.slots) <= 11


def test_kept_word_rows_grow_with_the_text_and_stay_exact():
    """A short input does not pay for zeroing ``max_bytes`` of rows: room for 4,096 words at
    first, doubled as new words come, the kept rows carried over (tagger tag's first line)."""
    torch.manual_seed(0)
    model = toy_model().eval()
    model.input.word_rows = rows = WordRows()  # 48 MB: room for far more than 4,096 toy words
    with torch.no_grad():
        batch = model.collate(TOY, with_gold=False)
        model(batch)
        assert rows.tables.shape[1] == 4096 and len(rows.slots) == len(batch.forms)
        for start in range(0, 5000, 1000):  # 5,000 new words: the room doubles once
            sentences = [Sentence([f"w{i}" for i in range(k, k + 50)], {}) for k in range(start, start + 1000, 50)]
            batch = model.collate(sentences + TOY, with_gold=False)
            uncached = model(type(batch)(**{**batch.__dict__, "forms": None}))
            assert torch.equal(model(batch), uncached)
    assert rows.tables.shape[1] == 8192 and len(rows.slots) > 5000 and "w0" in rows.slots


def test_collate_numbers_words_by_first_appearance_and_pads_with_zero():
    model = toy_model().eval()
    batch = model.collate([Sentence("the cat".split(), {}), Sentence("a cat the dog".split(), {})], with_gold=False)
    assert batch.forms == ["the", "cat", "a", "dog"]
    assert batch.types.tolist() == [[1, 2, 0, 0], [3, 2, 1, 4]]
    assert batch.words.shape == (5,) and batch.chars.shape == (5, 2 * model.config.char_length)
    assert batch.lengths.tolist() == [2, 4] and batch.words[0] == 0 and batch.chars[0].eq(0).all()


def test_tagger_tag_imports_no_report_training_or_zoo_module():
    code = ("import sys, tagger.cli.tag; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'rich' or m.startswith(("
            "'tagger.training', 'tagger.ablation', 'tagger.evaluation.report', 'tagger.plots'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.skipif(not EWT_TEST.exists(), reason="needs UD English EWT")
def test_one_and_two_threads_tag_ewt_test_alike(tmp_path):
    """A model trained for a moment on EWT test: `tagger tag` with 1 and 2 threads writes the same bytes."""
    from tagger import formats, model_file

    sentences = list(formats.read(EWT_TEST))[:400]
    torch.manual_seed(0)
    model = toy_model(sentences, max_epochs=1, hidden=32).eval()
    path = tmp_path / "m.tagger"
    model_file.save(path, model, {})
    outputs = []
    for threads in ("1", "2"):
        done = subprocess.run([sys.executable, "-m", "tagger", "tag", "--model", str(path), "--threads", threads,
                               str(EWT_TEST)], capture_output=True, cwd=ROOT, timeout=300)
        assert done.returncode == 0, done.stderr.decode()
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and len(outputs[0]) > 1_000_000
