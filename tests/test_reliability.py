"""Issue 5: resumable training, safe model files, bounded streaming, multi-process training.

Training runs are real ``tagger train`` processes on a few hundred EWT sentences with a tiny
model (2 layers of 16), one thread each; they skip when ../shared/data is absent.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pickle
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tagger import __version__, formats, model_file
from tagger.cli.main import cli
from tagger.config import build_config, build_configs
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.models.skip_lstm import PRESETS, SkipLSTMTagger, TaggerConfig
from tagger.tagging import SkipReport, tag
from tagger.training import checkpoint
from tagger.training.distributed import agree, gather, shard
from tests.helpers import first_blocks  # noqa: F401 - kept importable from here

ROOT = Path(__file__).resolve().parents[1]
EWT = Path(__file__).resolve().parents[2] / "shared" / "data" / "ud-english-ewt"
needs_ewt = pytest.mark.skipif(not (EWT / "en_ewt-ud-train.conllu").exists(), reason="needs ../shared/data")
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
TINY = ["--set", "layers=2", "--set", "hidden=16", "--set", "word_dim=16", "--threads", "1", "--quiet", "--json"]


@pytest.fixture
def ewt(ewt_sample) -> tuple[Path, Path]:
    """(train, dev): conftest's first 400 EWT train and 150 dev sentences."""
    return ewt_sample


def train_command(data: tuple[Path, Path], out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tagger", "train", "--train", str(data[0]), "--dev", str(data[1]), "--out", str(out),
            *TINY, *extra]


def trainer_state(directory: Path) -> dict | None:
    try:
        return torch.load(directory / checkpoint.NAME, map_location="cpu", weights_only=True)["trainer"]
    except Exception:  # noqa: BLE001 - not written yet
        return None


def wait_for(process: subprocess.Popen, directory: Path, wanted, timeout: float = 120) -> dict:
    """Poll the checkpoint in ``directory`` until its trainer state satisfies ``wanted``. A file is
    read once (reading one takes tens of ms: polling must not take the trainer's CPU)."""
    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline:
        try:
            stat = (directory / checkpoint.NAME).stat()
            version = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            version = None
        if version is not None and version != seen:
            seen = version
            state = trainer_state(directory)
            if state is not None and wanted(state):
                return state
        if process.poll() is not None:
            pytest.fail(f"training ended (exit {process.returncode}) before the wanted checkpoint: "
                        f"{process.stderr.read().decode()[-2000:]}")
        time.sleep(0.03)
    process.kill()
    pytest.fail("no such checkpoint in time")


def finish(process: subprocess.Popen, timeout: float = 300) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out.decode(), err.decode()


# --- 1. checkpoints: kill (and Ctrl-C) at any moment, resume, same model -------------------------


@pytest.mark.slow
@needs_ewt
def test_interrupt_kill_and_resume_give_the_uninterrupted_weights(ewt, tmp_path):
    # 200 sentences, 25 batches an epoch; a checkpoint every 60 ms, so several in each epoch
    common = ["--max-sentences", "200", "--max-epochs", "2", "--batch-size", "8", "--seed", "7",
              "--checkpoint-minutes", "0.001"]
    reference = subprocess.Popen(train_command(ewt, tmp_path / "ref.tagger", "--checkpoint-dir", str(tmp_path / "ref"),
                                               *common), env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ck = tmp_path / "ck"
    command = train_command(ewt, tmp_path / "m.tagger", "--checkpoint-dir", str(ck), *common)

    # Ctrl-C mid-epoch 1: a checkpoint at a batch boundary, exit status 130, a message saying so.
    run = subprocess.Popen(command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(run, ck, lambda s: s["epoch"] == 1 and s["batch"] > 0)
    run.send_signal(signal.SIGINT)
    code, _, err = finish(run)
    assert code == 130, err
    assert "checkpoint saved" in err and "--resume" in err
    interrupted = trainer_state(ck)  # (1, k > 0); (2, 0) only if the signal came during epoch 1's end
    assert (interrupted["epoch"], interrupted["batch"] > 0) in ((1, True), (2, False))

    # Resume, then SIGKILL as soon as there is a mid-epoch checkpoint in epoch 2 (lands anywhere).
    run = subprocess.Popen(command + ["--resume"], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(run, ck, lambda s: s["epoch"] == 2 and s["batch"] > 0)
    run.send_signal(signal.SIGKILL)
    run.wait()

    code, out, err = finish(subprocess.Popen(command + ["--resume"], env=ENV, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE))
    assert code == 0, err
    ref_code, ref_out, ref_err = finish(reference)
    assert ref_code == 0, ref_err

    final = torch.load(ck / checkpoint.NAME, weights_only=True)
    expected = torch.load(tmp_path / "ref" / checkpoint.NAME, weights_only=True)
    assert final["trainer"]["epoch"] == expected["trainer"]["epoch"] == 3
    for name, tensor in expected["state_dict"].items():  # the final weights, bit for bit
        assert torch.equal(final["state_dict"][name], tensor), name
    best, best_ref = model_file.read_archive(tmp_path / "m.tagger"), model_file.read_archive(tmp_path / "ref.tagger")
    for name, tensor in best_ref["state_dict"].items():  # the kept (best) model, bit for bit
        assert torch.equal(best["state_dict"][name], tensor), name
    history = [(r["epoch"], r["loss"], r["dev"], r["lr"]) for r in final["trainer"]["history"]]
    assert history == [(r["epoch"], r["loss"], r["dev"], r["lr"]) for r in expected["trainer"]["history"]]
    assert json.loads(out)["best_dev"] == json.loads(ref_out)["best_dev"]


#: What a checkpoint's "trainer" entry holds: checkpoints written by earlier versions have exactly these.
TRAINER_KEYS = {"epoch", "batch", "lr", "best_score", "best_epoch", "metric_name", "prev_error", "elapsed", "tokens",
                "steps", "epoch_loss", "epoch_tokens", "history", "world", "rng", "average"}


@pytest.mark.parametrize("amp", ["off", "fp16"])
def test_fit_interrupted_in_process_resumes_to_the_uninterrupted_run(tmp_path, amp):
    """Ctrl-C inside ``fit`` (delivered after the 3rd update: epoch 2, batch 1) leaves a checkpoint
    from which ``fit`` ends with the uninterrupted run's weights, weight average, history (lr
    schedule included) and final checkpoint, bit for bit; the checkpoint keeps its keys (with
    mixed precision's loss scaling, ``amp=fp16``, also the scaler's state)."""
    from tagger.training.trainer import Interrupted, RunOptions, fit

    config, training = build_configs(SkipLSTMTagger, PRESETS, "fast", overrides=[
        "layers=1", "hidden=8", "word_dim=8", "batch_size=1", "max_epochs=2", "average=0.9", "halve_threshold=0.9",
        "min_epoch_updates=0", f"amp={amp}"])  # every pass of the toy corpus an epoch, so that lr halves after the first
    keys = TRAINER_KEYS | ({"scaler"} if amp == "fp16" else set())

    def run(folder: Path, reporter, resume: bool = False) -> tuple[SkipLSTMTagger, list]:
        torch.manual_seed(0)
        model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, TOY))
        saved: list = []
        fit(model, TOY, TOY, training, RunOptions(seed=5, checkpoint_dir=folder, resume=resume),
            lambda meta: saved.append({k: v.clone() for k, v in model.state_dict().items()}), reporter)
        return model, saved

    class SigintAt(Quiet):
        def __init__(self, step: int):
            self.steps, self.at = 0, step

        def step(self, loss, tokens):
            self.steps += 1
            if self.steps == self.at:
                signal.raise_signal(signal.SIGINT)

    reference, best_reference = run(tmp_path / "ref", Quiet())
    with pytest.raises(Interrupted) as caught:
        run(tmp_path / "ck", SigintAt(3))
    assert (caught.value.epoch, caught.value.batch, caught.value.checkpoint) == (2, 1, tmp_path / "ck")
    assert set(trainer_state(tmp_path / "ck")) == keys
    resumed, best_resumed = run(tmp_path / "ck", Quiet(), resume=True)

    for name, tensor in reference.state_dict().items():
        assert torch.equal(resumed.state_dict()[name], tensor), name
    for name, tensor in best_reference[-1].items():  # the saved (averaged) best
        assert torch.equal(best_resumed[-1][name], tensor), name
    final, expected = (torch.load(d / checkpoint.NAME, weights_only=True)["trainer"] for d in (tmp_path / "ck", tmp_path / "ref"))
    assert set(final) == keys
    if amp == "fp16":  # the scale grows after a number of clean steps: the resumed run counted them on
        assert final["scaler"] == expected["scaler"] and final["scaler"]["_growth_tracker"] == 4
    assert [{**r, "seconds": 0} for r in final["history"]] == [{**r, "seconds": 0} for r in expected["history"]]
    assert expected["lr"] == training.lr / 2  # the schedule halved lr after epoch 2 (from epoch 1's error, restored)
    assert all(torch.equal(a, b) for a, b in zip(final["average"], expected["average"]))
    assert {k: v for k, v in final.items() if k not in ("history", "average", "rng", "elapsed")} == \
        {k: v for k, v in expected.items() if k not in ("history", "average", "rng", "elapsed")}


def test_a_run_stopped_by_its_budget_and_resumed_is_the_run_not_stopped(tmp_path, monkeypatch):
    """A budget's end mid-epoch scores that part of an epoch (it may be the best so far), but the
    part neither halves the learning rate nor counts as an epoch: resumed, the run ends with the
    weights and rate of the run that was never stopped."""
    from tagger.training import trainer
    from tagger.training.trainer import RunOptions, fit

    config, training = build_configs(SkipLSTMTagger, PRESETS, "fast", overrides=[
        "layers=1", "hidden=8", "word_dim=8", "batch_size=1", "max_epochs=3", "halve_threshold=0.9",
        "min_epoch_updates=0"])
    steps = {"done": 0, "stop": None}

    class Counting(Quiet):
        def step(self, loss, tokens):
            steps["done"] += 1

    monkeypatch.setattr(trainer.Budget, "out_of_time", lambda self: steps["stop"] is not None and steps["done"] >= steps["stop"])

    def run(folder: Path, stop: int | None, resume: bool = False) -> tuple[SkipLSTMTagger, object]:
        torch.manual_seed(0)
        steps.update(done=0, stop=stop)
        model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, TOY))
        state = fit(model, TOY, TOY, training, RunOptions(seed=5, checkpoint_dir=folder, resume=resume),
                    lambda meta: None, Counting())
        return model, state

    reference, expected = run(tmp_path / "ref", None)
    _, stopped = run(tmp_path / "ck", 3)  # epoch 2, after its first update
    assert [(r["epoch"], r["complete"]) for r in stopped.history] == [(1, True), (2, False)]
    assert stopped.lr == training.lr  # no halving from half an epoch's score
    resumed, state = run(tmp_path / "ck", None, resume=True)
    for name, tensor in reference.state_dict().items():
        assert torch.equal(resumed.state_dict()[name], tensor), name
    assert state.lr == expected.lr and state.steps == expected.steps


# --- 2. model files ------------------------------------------------------------------------------


TOY = [Sentence("the dog runs".split(), {"upos": ["DET", "NOUN", "VERB"]}),
       Sentence("a cat sleeps here".split(), {"upos": ["DET", "NOUN", "VERB", "ADV"]})]


def toy_model() -> SkipLSTMTagger:
    torch.manual_seed(0)
    config = build_config(TaggerConfig, PRESETS, "fast", overrides=["layers=1", "hidden=8", "word_dim=8"])
    return SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, TOY)).eval()


@pytest.fixture(scope="module")
def toy_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "toy.tagger"
    model_file.save(path, toy_model(), {})
    return path


class Payload:
    """Unpickling this would create the file ``marker``."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_model_files_and_checkpoints_are_read_with_weights_only(toy_file, tmp_path, monkeypatch):
    calls = []
    real_load = torch.load

    def spy(*args, **kwargs):
        calls.append(kwargs.get("weights_only"))
        return real_load(*args, **kwargs)

    from tagger import archive

    reads = []
    real_read = archive.read
    monkeypatch.setattr(torch, "load", spy)
    monkeypatch.setattr(archive, "read", lambda *args, **kwargs: reads.append(args) or real_read(*args, **kwargs))
    model_file.load(toy_file)  # the torch-free reader: plain data and tensors only, every other global refused
    assert len(reads) == 1 and not calls and archive.read(toy_file) is not None
    model = toy_model()
    checkpoint.save(tmp_path, model, torch.optim.SGD(model.parameters(), lr=0.1), {"epoch": 1})
    checkpoint.read(tmp_path)
    assert len(calls) >= 1 and all(flag is True for flag in calls)


def test_crafted_model_file_is_refused_by_the_cli_without_running_code(tmp_path):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.tagger"
    torch.save({"format_version": 1, "state_dict": {}, "name": "skip_lstm", "payload": Payload(str(marker))}, evil)
    result = CliRunner().invoke(cli, ["tag", "--model", str(evil)], input="a b c\n")
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {evil}: refused") and "could run code" in lines[0]
    raw = tmp_path / "raw.pickle"
    raw.write_bytes(pickle.dumps(Payload(str(marker))))
    with pytest.raises(TaggerError):
        model_file.load(raw)
    assert not marker.exists()


def test_model_saved_on_gpu_loads_on_cpu(tmp_path, monkeypatch):
    """Storages tagged ``cuda:0`` (what ``torch.save`` writes for GPU tensors) load on the CPU."""
    path = tmp_path / "gpu.tagger"
    archive = torch.load(_saved(tmp_path), weights_only=True)
    with monkeypatch.context() as patch:
        patch.setattr(torch.serialization, "location_tag", lambda storage: "cuda:0")
        model_file.atomic_save(archive, path)
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(path, weights_only=True)  # the file really asks for a GPU
    model, _ = model_file.load(path)
    assert next(model.parameters()).device.type == "cpu"
    batch = model.collate(TOY, with_gold=False)
    assert model.decode(batch) == toy_model().decode(batch)


def _saved(folder: Path) -> Path:
    path = folder / "cpu.tagger"
    model_file.save(path, toy_model(), {"dev_score": 0.5})
    return path


def test_incompatible_model_file_names_both_versions(tmp_path):
    archive = torch.load(_saved(tmp_path), weights_only=True)
    archive.update(format_version=model_file.FORMAT_VERSION + 1, tagger_version="9.9.9")
    newer = tmp_path / "newer.tagger"
    torch.save(archive, newer)
    with pytest.raises(TaggerError) as caught:
        model_file.load(newer)
    message = str(caught.value)
    assert f"format {model_file.FORMAT_VERSION + 1}" in message and "9.9.9" in message
    assert f"format {model_file.FORMAT_VERSION}" in message and __version__ in message
    saved = torch.load(_saved(tmp_path), weights_only=True)
    assert saved["format_version"] == model_file.FORMAT_VERSION and saved["tagger_version"] == __version__


# --- 3. streaming --------------------------------------------------------------------------------

#: Runs in a fresh process with glibc's mmap threshold pinned (MALLOC_MMAP_THRESHOLD_): glibc's
#: dynamic threshold otherwise lets freed chunk buffers stay in the heap, which moves the RSS by
#: tens of MiB at random (bench/stream_rss.py shows both). Sentence i starts with i's digits
#: spelled out, then words of a fixed 2,000-word vocabulary.
RSS_SCRIPT = textwrap.dedent("""
    import io, json, os, sys, torch
    torch.set_num_threads(1)
    from tagger import formats
    from tagger.config import build_config
    from tagger.corpus.records import Sentence
    from tagger.models.skip_lstm import PRESETS, SkipLSTMTagger, TaggerConfig
    from tagger.tagging import tag
    DIGITS = "zero one two three four five six seven eight nine".split()
    def lines(n):
        for i in range(n):
            words = [DIGITS[int(d)] for d in str(i)] + [f"w{(i * 7919 + j * 104729) % 2000}" for j in range(2 + i % 7)]
            yield (" ".join(words) + "\\n").encode()
    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    class Sink(io.TextIOBase):
        def __init__(self): self.next, self.ok, self.peak = 0, True, 0
        def writable(self): return True
        def write(self, text):
            words = [t.rsplit("/", 1)[0] for t in text.split()]
            digits = "".join(str(DIGITS.index(w)) for w in words[:8] if w in DIGITS)
            self.ok = self.ok and int(digits) == self.next
            self.next += 1
            return len(text)
        def flush(self): self.peak = max(self.peak, rss())
    torch.manual_seed(0)
    config = build_config(TaggerConfig, PRESETS, "fast", overrides=["layers=2", "hidden=16", "word_dim=16"])
    vocab = [Sentence(DIGITS + [f"w{i}" for i in range(k, k + 100)], {"upos": ["X"] * 110}) for k in range(0, 2000, 100)]
    model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, vocab)).eval()
    result = {}
    for n in map(int, sys.argv[1:]):
        sink = Sink()
        counts = tag(model, formats.read(lines(n), "text"), sink, "tagged", chunk_size=500)
        result[n] = {"peak": sink.peak, "in_order": sink.ok and sink.next == n == counts["sentences"]}
    print(json.dumps(result))
""")


def test_tagging_memory_does_not_grow_with_input_size():
    """Peak RSS while tagging 30,000 sentences exceeds that while tagging 3,000 by < 8 MiB.

    Bound: the 27,000 extra sentences would take ~23 MiB if each were kept (a read Sentence with
    its word list and strings is ~890 bytes, measured with tracemalloc), and so would any leak of
    more than 152 KiB per 500-sentence chunk (54 more chunks); what is legitimately held (one
    chunk of 500 sentences, its tensors and output: well under 8 MiB) is the same at both sizes.
    The first 3,000 also warm the featurizer's memo and torch. Measured: 0 to ~1 MiB apart.
    bench/stream_rss.py does 10k/100k/1M sentences through the CLI."""
    env = {**ENV, "MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}
    done = subprocess.run([sys.executable, "-c", RSS_SCRIPT, "3000", "30000"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    small, large = result["3000"], result["30000"]
    assert small["in_order"] and large["in_order"]
    assert large["peak"] - small["peak"] < 8 * 2**20, (small, large)


def test_broken_pipe_ends_quietly(toy_file):
    process = subprocess.Popen([sys.executable, "-m", "tagger", "tag", "--model", str(toy_file), "--threads", "1",
                                "--chunk-size", "10"], env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)

    def feed() -> None:
        try:
            process.stdin.write(("the dog runs\n" * 20_000).encode())
            process.stdin.close()
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    assert process.stdout.readline().startswith(b"1\tthe\t")
    process.stdout.close()  # like `| head -1`
    err = process.stderr.read()
    assert process.wait(timeout=120) == 0
    assert err.decode().strip() == ""


BAD_CONLLU = """# sent_id = 1
1\tthe\t_\t_\t_\t_\t_\t_\t_\t_
2\tdog\t_\t_\t_\t_\t_\t_\t_\t_

# sent_id = 2
1\ta\t_\t_\t_\t_\t_\t_\t_\t_
x\tcat\t_\t_\t_\t_\t_\t_\t_\t_

1\tdogs\t_\t_\t_\t_\t_\t_\t_\t_
2\tbark\t_\t_\t_\t_\t_\t_\t_\t_
"""


def test_on_error_skip_reports_line_numbers_and_carries_on(toy_file, tmp_path):
    path = tmp_path / "bad.conllu"
    path.write_text(BAD_CONLLU, encoding="utf-8")
    runner = CliRunner()
    skipped = runner.invoke(cli, ["tag", "--model", str(toy_file), "--on-error", "skip", str(path)])
    assert skipped.exit_code == 0, skipped.output
    words = [line.split("\t")[1] for line in skipped.stdout.splitlines() if line and not line.startswith("#")]
    assert words == ["the", "dog", "dogs", "bark"]
    assert f"warning: {path}:7: bad ID 'x' (skipped the sentence at lines 5-7)" in skipped.stderr
    assert "1 malformed sentence skipped" in skipped.stderr
    failed = runner.invoke(cli, ["tag", "--model", str(toy_file), str(path)])
    assert failed.exit_code == 1
    assert [line.split("\t")[1] for line in failed.stdout.splitlines() if line and not line.startswith("#")] == ["the", "dog"]
    assert f"error: {path}:7: bad ID 'x'" in failed.stderr


@pytest.mark.parametrize("fmt, data, good, bad", [
    ("conllu", BAD_CONLLU.encode(), 2, [(5, 7)]),
    ("columns", b"a\tX\nb\tY\n\nc\n\nd\tZ\n", 2, [(4, 4)]),
    ("dp", b"a\tX\t0\nb\tY\t9\n\nc\tX\t0\n", 1, [(1, 2)]),
    ("text", b"a b\n\xff c\nd e\n", 2, [(2, 2)]),
    ("tagged", b"a/X b/Y\nc d/Z\ne/X\n", 2, [(2, 2)]),
    ("pipe", b"a|X|N b|Y|S\nc\nd|X|N\n", 2, [(2, 2)]),
    ("conllu", b"1\ta\t_\t_\t_\t_\t_\t_\t_\t_\n\n1\t\xff\t_\t_\t_\t_\t_\t_\t_\t_\n2\tb\t_\t_\t_\t_\t_\t_\t_\t_\n", 1, [(3, 4)]),
])
def test_readers_skip_a_bad_sentence_and_go_on(fmt, data, good, bad):
    seen = []
    layout = {"columns": "form=1,tag=2"} if fmt == "columns" else {}  # a named columns format needs its layout
    sentences = list(formats.read(io.BytesIO(data), fmt, on_error=lambda e, a, b: seen.append((a, b)), **layout))
    assert len(sentences) == good and seen == bad
    with pytest.raises(TaggerError):  # the default is unchanged: the first error ends the reading
        list(formats.read(io.BytesIO(data), fmt, **layout))


BYTES = st.lists(st.one_of(st.binary(max_size=12), st.sampled_from(
    [b"\n", b"\n\n", b"\t", b" ", b"1\t", b"2\t", b"_\t", b"\xff", b"/X", b"|N|S", b"#", b"-", b"0"])), max_size=40)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=BYTES.map(b"".join), fmt=st.sampled_from(["auto", "conllu", "columns", "dp", "text", "tagged", "pipe"]),
       on_error=st.sampled_from(["fail", "skip"]))
def test_tag_on_random_bytes_writes_or_fails_cleanly(data, fmt, on_error):
    model = _fuzz_model()
    report = SkipReport(io.StringIO())
    out = io.StringIO()
    layout = {"columns": "form=1,tag=2"} if fmt == "columns" else {}  # a named columns format needs its layout
    sentences = formats.read(io.BytesIO(data), fmt, on_error=report if on_error == "skip" else None, **layout)
    try:
        counts = tag(model, sentences, out, "conllu", chunk_size=3, on_error=on_error)
    except TaggerError as e:
        assert e.message and (e.line is None or e.line >= 1)
        assert on_error != "skip" or fmt == "auto", e.message  # a skipping block reader never stops (no input is no error)
        return
    assert counts["sentences"] == out.getvalue().count("\n\n")
    for line in report.stream.getvalue().splitlines():
        assert line.startswith("warning: <stdin>:") and "skipped the sentence at line" in line


_FUZZ_MODEL: list = []


def _fuzz_model() -> SkipLSTMTagger:
    if not _FUZZ_MODEL:
        _FUZZ_MODEL.append(toy_model())
    return _FUZZ_MODEL[0]


# --- 4. multi-process training -------------------------------------------------------------------


def test_shard_pads_to_equal_steps_and_covers_every_batch():
    batches = [[i] for i in range(7)]
    shards = [shard(batches, rank, 3) for rank in range(3)]
    assert [len(s) for s in shards] == [3, 3, 3]
    assert sorted(b[0] for s in shards for b in s) == [0, 0, 1, 1, 2, 3, 4, 5, 6]  # wrapped around, like DistributedSampler
    assert shard(batches, 0, 1) == batches
    assert shard([[0]], 1, 4) == [[0]]
    assert agree(True, False) == (True, False) and gather("x") == ["x"]  # single process: no communication


NO_DROPOUT = ["--set", "input_dropout=0", "--set", "hidden_dropout=0", "--set", "rare_word_dropout=0",
              "--set", "lexicon=0"]  # (and the scores of the weights alone: no tag dictionary chosen after training)


@pytest.mark.slow
@needs_ewt
def test_two_process_ddp_is_one_process_with_the_same_total_batch(ewt, tmp_path):
    """torchrun, 2 CPU processes (gloo), 8 sentences each: the run completes, only rank 0 writes
    and prints, and (without dropout, so that no randomness differs) its final weights are those
    of one process taking each step on the union of the two ranks' batches, averaging their
    losses; its dev accuracy is within noise of a 1-process run with batch size 16."""
    epochs, seed, sentences = 3, 1, 200
    args = [*train_command(ewt, tmp_path / "two.tagger", "--batch-size", "8", "--checkpoint-dir", str(tmp_path / "ck"),
                           "--max-epochs", str(epochs), "--seed", str(seed), "--set", "lr=0.01", "--set", "lr_halving=false",
                           "--patience", "0", "--max-sentences", str(sentences), *NO_DROPOUT)[4:]]
    two = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                          "-m", "tagger", "train", *args], env=ENV, capture_output=True, text=True, timeout=300)
    assert two.returncode == 0, two.stderr[-3000:]
    summaries = [json.loads(line) for line in two.stdout.splitlines() if line.startswith("{")]
    assert len(summaries) == 1 and summaries[0]["processes"] == 2  # only rank 0 prints
    assert [p.name for p in tmp_path.glob("*.tagger")] == ["two.tagger"]
    final = torch.load(tmp_path / "ck" / checkpoint.NAME, weights_only=True)
    assert final["trainer"]["world"] == 2 and len(final["trainer"]["rng"]) == 2

    from tagger.config import TrainingConfig, config_from_dict
    from tagger.corpus.batching import bucket_batches
    from tagger.training.trainer import RunOptions, evaluate, fit, make_optimizer

    train, dev = (list(formats.read(path)) for path in ewt)
    train = train[:sentences]
    config, training = config_from_dict(TaggerConfig, final["config"]), config_from_dict(TrainingConfig, final["training"])

    def fresh() -> SkipLSTMTagger:
        torch.manual_seed(seed)  # as tagger train does before building the model
        return SkipLSTMTagger(config, final["vocabs"])

    emulated = fresh()
    optimizer = make_optimizer(emulated.parameters(), training)
    lengths = [len(sentence) for sentence in train]
    for epoch in range(1, epochs + 1):
        ranks = [shard(bucket_batches(lengths, 8, random.Random(seed * 100_003 + epoch)), rank, 2) for rank in (0, 1)]
        for pair in zip(*ranks):
            optimizer.zero_grad()
            for ids in pair:
                batch = emulated.collate([train[i] for i in ids])
                (emulated.loss(emulated(batch), batch) / 2).backward()
            torch.nn.utils.clip_grad_norm_(emulated.parameters(), training.clip)
            optimizer.step()
    for name, tensor in emulated.state_dict().items():  # in fact bit for bit: halving is exact
        assert torch.allclose(final["state_dict"][name], tensor, rtol=1e-5, atol=1e-7), name
    ddp_dev = summaries[0]["best_dev"] / 100  # the summary gives percent
    assert abs(evaluate(emulated, dev).score - ddp_dev) < 0.002

    one = fresh()
    single = dataclasses.replace(training, batch_size=16)
    state = fit(one, train, dev, single, RunOptions(seed=seed), lambda meta: None, Quiet())
    # Same recipe, not the same numbers (a 16-sentence batch of one length bucket vs two 8-sentence
    # buckets): on this tiny unconverged 3-epoch run on 200 sentences that moves dev accuracy by -1.7
    # to +4.0 points over seeds 1-5 (one process minus two; -1.7 for seed 1); on 400 sentences by
    # -0.6 to +5.3 (3.0 apart for seed 1), at 8 epochs by -2.1 to +1.6. docs/scaling.md: full size.
    assert abs(state.best_score - ddp_dev) < 0.06, (state.best_score, ddp_dev)


class Quiet:
    def epoch_start(self, epoch, batches): pass
    def step(self, loss, tokens): pass
    def epoch_end(self, record): pass


def test_weights_that_are_no_longer_numbers_end_training_in_one_line_and_save_nothing():
    from tagger.training.trainer import TrainState, score_epoch

    model = torch.nn.Linear(2, 2)
    state = TrainState(epoch=2, best_epoch=1, epoch_loss=float("nan"), epoch_tokens=10)
    with torch.no_grad():
        model.weight[0, 0] = float("inf")
    with pytest.raises(TaggerError, match=r"training diverged in epoch 2: its weights became inf or nan \(loss nan\); "
                                          r"the model of epoch 1 is kept"):
        score_epoch(model, [], state, True, 1.0, 100)
    state.best_epoch = 0
    with pytest.raises(TaggerError, match="no model was saved"):
        score_epoch(model, [], state, True, 1.0, 100)
