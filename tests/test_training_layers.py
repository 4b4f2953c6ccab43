"""Training in layers (issue 32, item 6): the request and data specs at the bottom, the stamped-job
protocol written once (:mod:`tagger.training.jobs`), the single-model runner with hooks, one
dispatcher at the top; ``tagger train`` and :func:`tagger.train` build their request through
the same function; no import circles in training, and nothing in it imports the API or the CLI."""

from __future__ import annotations

import ast
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tagger.errors import TaggerError
from tagger.training import jobs
from tagger.training.request import DataSpec, JackknifeSettings, TrainRequest, build_request, request_from_json, \
    request_to_json

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = str(ROOT / "data" / "sample.conllu")
#: The training layer, bottom to top: a module imports only those before it (and lower packages).
LAYERS = ["tagger.training.request", "tagger.training.trainer", "tagger.training.jobs", "tagger.training.run",
          "tagger.training.jackknife", "tagger.training.members", "tagger.training.pipeline",
          "tagger.training.distill", "tagger.training.dispatch", "tagger.ablation", "tagger.api"]


def _graph():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("tagger")
    # tagger/__init__.py resolves tagger.train, tagger.load lazily from tagger.api. Nothing inside
    # imports the package itself (the version is in tagger.version; tests/test_layers.py checks
    # that and the whole layer order), so this only keeps such an import from hiding a chain here.
    graph.remove_import(importer="tagger", imported="tagger.api")
    return graph


def test_the_training_layers_point_one_way():
    graph = _graph()
    for lower, higher in itertools.combinations(LAYERS, 2):
        assert graph.find_shortest_chain(lower, higher) is None, (lower, higher)
    training = sorted(m for m in graph.modules if m.startswith("tagger.training"))
    for module in training:
        for above in ("tagger.api", "tagger.ablation", "tagger.cli"):
            assert graph.find_shortest_chain(module, above) is None, (module, above)
    for a, b in itertools.permutations(training + ["tagger.ablation", "tagger.api", "tagger.ensembling"], 2):
        assert not (graph.find_shortest_chain(a, b) and graph.find_shortest_chain(b, a)), (a, b)


def test_the_request_layer_imports_no_torch():
    code = "import sys, tagger.training.request, tagger.training.jobs; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.stdout.split() == ["False"], done.stderr


FILES = ["tagger/training", "tagger/ablation.py", "tagger/ensembling.py", "tagger/cli/train.py", "tagger/cli/ablate.py",
         "tagger/cli/distill.py", "tagger/cli/ensemble.py", "tagger/cli/presets.py"]


def test_no_training_function_is_over_80_lines():
    paths = [p for f in FILES for p in ((ROOT / f).glob("*.py") if (ROOT / f).is_dir() else [ROOT / f])]
    long = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                if node.end_lineno - start + 1 > 80:
                    long.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert not long


def test_cli_and_api_build_the_same_request(monkeypatch, tmp_path):
    """``tagger train`` and :func:`tagger.train` give the dispatcher equal requests for equal options."""
    from click.testing import CliRunner

    import tagger
    from tagger.cli import train as cli_train
    from tagger.cli.main import cli
    from tagger.training import dispatch

    seen: list[TrainRequest] = []

    def record(request, reporter, say=None, data=None):
        seen.append(request)
        return {}

    monkeypatch.setattr(dispatch, "train", record)
    monkeypatch.setattr(cli_train, "train", record)
    monkeypatch.setattr(cli_train, "run_and_report", lambda request, quiet, as_json: record(request, None))
    out = str(tmp_path / "dep.model")
    done = CliRunner().invoke(cli, ["train", "--task", "dep", "--train", SAMPLE, "--dev", SAMPLE, "--out", out,
                                    "--max-epochs", "2", "--set", "hidden=8", "--jackknife", "3", "--pos-set",
                                    "max_epochs=1", "--jobs", "2", "--threads", "1", "--seed", "4"])
    assert done.exit_code == 0, done.output
    tagger.train(task="dep", train=SAMPLE, dev=SAMPLE, out=out, max_epochs=2, settings={"hidden": 8}, jackknife=3,
                 pos_settings={"max_epochs": 1}, jobs=2, threads=1, seed=4)
    assert len(seen) == 2 and seen[0] == seen[1]
    assert seen[0].max_epochs == 2 and seen[0].overrides == ("hidden=8",)
    assert seen[0].jackknife == JackknifeSettings(3, overrides=("max_epochs=1",), jobs=2, threads=1)


def test_build_request_checks_and_fills_in():
    with pytest.raises(TaggerError, match="max_epochs must be"):
        build_request(task="pos", train=SAMPLE, out="m", max_epochs=0)
    with pytest.raises(TaggerError, match="gates: only with bootstrap"):
        build_request(task="dep", train=SAMPLE, out="m", gates="i,j")
    with pytest.raises(TaggerError, match="seed must be a number, not 'abc'"):
        build_request(task="pos", train=SAMPLE, out="m", seed="abc")
    pipeline = build_request(task="pipeline", train=[SAMPLE], out="m", checkpoint_dir="ck")
    assert pipeline.jackknife == JackknifeSettings(0) and pipeline.train.path == [Path(SAMPLE)]
    assert pipeline.options.checkpoint_dir == Path("ck") and pipeline.dev is None
    assert request_from_json(json.loads(json.dumps(request_to_json(pipeline)))) == pipeline


def test_the_model_is_never_written_over_a_file_the_run_reads(tmp_path, monkeypatch):
    from tagger.training.distill import DistillRequest

    monkeypatch.chdir(tmp_path)
    for name in ("train.conllu", "dev.conllu", "teacher.tagger"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    for out in ("train.conllu", "./dev.conllu", str(tmp_path / "train.conllu")):
        with pytest.raises(TaggerError, match="which this run reads: the model would replace it"):
            build_request(task="pos", train="train.conllu", dev="dev.conllu", out=out)
    with pytest.raises(TaggerError, match="teacher.tagger, which this run reads"):
        DistillRequest(("teacher.tagger",), DataSpec("train.conllu"), None, "teacher.tagger")
    assert build_request(task="pos", train="train.conllu", dev="dev.conllu", out="new.tagger").out == "new.tagger"
    assert (tmp_path / "train.conllu").read_text(encoding="utf-8") == "x"


def test_config_values_of_the_wrong_kind_are_one_line_errors():
    from tagger.config import TrainingConfig, config_from_dict

    with pytest.raises(TaggerError, match="optimizer must be sgd or adam, not 'foo'"):
        config_from_dict(TrainingConfig, {"optimizer": "foo"}, "--set")
    with pytest.raises(TaggerError, match="max_epochs must be int, not True"):  # JSON's true is no number
        config_from_dict(TrainingConfig, {"max_epochs": True}, "cfg.json")


def test_the_single_model_runner_refuses_what_needs_the_dispatcher(tmp_path):
    from tagger.training import run

    spec = DataSpec(SAMPLE)
    with pytest.raises(TaggerError, match="dispatch"):
        run.train(TrainRequest(task="dep", train=spec, dev=spec, out=str(tmp_path / "m"),
                               jackknife=JackknifeSettings(2)), None)
    with pytest.raises(TaggerError, match="dispatch"):
        run.train(TrainRequest(task="pipeline", train=spec, dev=spec, out=str(tmp_path / "m")), None)


# -- the stamped-job protocol --------------------------------------------------------------------

def _job(tmp_path: Path, stamp: dict, key: str = "identity") -> jobs.Job:
    folder = tmp_path / "job"
    return jobs.Job("job", "nowhere", folder / "spec.json", folder / "log", 1, result=folder / "result.json",
                    stamp=stamp, stamp_key=key, checkpoint=folder / "last.ckpt")


def test_a_spec_of_another_stamp_clears_the_folder(tmp_path):
    job = _job(tmp_path, {"seed": 1})
    restart = jobs.clear_stale(job, ("last.ckpt",))
    assert restart == jobs.Restart(None, True, [])  # nothing there yet
    jobs.write_json(job.spec, {"identity": {"seed": 1}})
    job.checkpoint.write_bytes(b"x")
    assert jobs.clear_stale(job, ("last.ckpt",)).deleted == [] and job.checkpoint.exists()  # ours: resumes
    other = _job(tmp_path, {"seed": 2})
    restart = jobs.clear_stale(other, ("last.ckpt",))
    assert restart.stale and restart.previous == {"identity": {"seed": 1}} and restart.deleted == ["last.ckpt"]
    # without a spec: not trusted, unless the caller keeps such folders (the ablation's rows)
    job.spec.unlink()
    job.checkpoint.write_bytes(b"x")
    assert jobs.clear_stale(job, ("last.ckpt",), keep_without_spec=True).deleted == []
    assert jobs.clear_stale(job, ("last.ckpt",)).deleted == ["last.ckpt"]


def test_a_result_counts_only_with_its_stamp(tmp_path):
    job = _job(tmp_path, {"seed": 1}, key="run")
    job.result.parent.mkdir(parents=True)
    jobs.write_json(job.result, {"run": {"seed": 2}, "score": 1})
    assert jobs.stamped(job.result, job.stamp, "run") is None
    jobs.write_json(job.result, {"run": {"seed": 1}, "score": 1})
    assert jobs.stamped(job.result, job.stamp, "run") == {"run": {"seed": 1}, "score": 1}
    job.result.write_text("{not json")
    assert jobs.stamped(job.result, job.stamp, "run") is None


def test_child_main_is_one_line_per_outcome(capsys):
    from tagger.training.trainer import Interrupted

    def fails(spec: str):
        raise TaggerError("bad spec", spec)

    def stops(spec: str):
        raise Interrupted(Path("ck"), 2, 5)

    assert jobs.child_main(["s.json"], fails) == 1
    assert capsys.readouterr().err.strip() == "error: s.json: bad spec"
    assert jobs.child_main(["s.json"], stops) == 130
    assert capsys.readouterr().err.strip() == "interrupted at epoch 2, batch 5; checkpoint in ck"
    assert jobs.child_main(["s.json"], stops, explain_interrupt=False) == 130
    assert capsys.readouterr().err == ""
    assert jobs.child_main(["s.json"], lambda spec: {"n": 3}, lambda result: f"n={result['n']}") == 0
    assert capsys.readouterr().err.strip() == "done: n=3"


def test_run_stamped_collects_results_and_failures(tmp_path):
    """Two real processes: one writes its stamped result (its checkpoint is then deleted), one fails."""
    module = tmp_path / "toyjob.py"
    module.write_text("import json, sys\nfrom pathlib import Path\n"
                      "spec = json.loads(Path(sys.argv[1]).read_text())\n"
                      "if spec['fail']:\n    print('error: it failed', file=sys.stderr); sys.exit(1)\n"
                      "Path(spec['result']).write_text(json.dumps({'identity': spec['identity'], 'ok': True}))\n")
    made = [jobs.Job(name, "toyjob", tmp_path / name / "spec.json", tmp_path / name / "log", 1,
                     result=tmp_path / name / "result.json", stamp={"n": name}, checkpoint=tmp_path / name / "ck")
            for name in ("good", "bad")]
    ended: list[tuple] = []

    def start(job: jobs.Job) -> None:
        jobs.clear_stale(job, ())
        job.checkpoint.write_bytes(b"x")
        jobs.write_json(job.spec, {"identity": job.stamp, "fail": job.name == "bad", "result": str(job.result)})

    import os

    os.environ["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    try:
        outcome = jobs.run_stamped(made, 2, start, lambda job, result, error: ended.append((job.name, result, error)),
                                   poll_seconds=0.05)
    finally:
        os.environ["PYTHONPATH"] = os.environ["PYTHONPATH"].split(os.pathsep, 1)[1]
    assert outcome.done == {"good": {"identity": {"n": "good"}, "ok": True}} and outcome.failed == ["bad"]
    assert sorted(ended) == [("bad", None, "error: it failed"), ("good", outcome.done["good"], None)]
    assert not made[0].checkpoint.exists() and made[1].checkpoint.exists()


def test_a_bootstrap_source_of_other_data_is_warned_of():
    from tagger.training.run import bootstrap_gaps

    theirs = {"words": ["<pad>", "<unk>", "o", "gato"], "labels": ["root", "det", "nsubj"]}
    assert bootstrap_gaps({"words": ["<pad>", "<unk>", "o", "gato"], "labels": ["det", "root"]}, theirs, "ffn.model") == []
    ours = {"words": ["<pad>", "<unk>", "猫", "が", "寝る", "の"], "labels": ["root", "nsubj:outer", "csubj:outer↑root"],
            "plain_labels": ["2"]}  # a lifted label (after plain_labels) is not one to warn of
    assert bootstrap_gaps(ours, theirs, "ffn.model") == [
        "warning: --bootstrap ffn.model: 67% of the training words are not in its vocabulary, which this parser takes: "
        "it reads them as unknown (was it trained on other data?)",
        "warning: --bootstrap ffn.model: 1 relations of the training data are not among its labels (nsubj:outer): this "
        "parser can never predict them"]
    assert bootstrap_gaps({**ours, "words": theirs["words"] + ["猫"]}, theirs, "ffn.model")[0].endswith("predict them")


def test_a_checkpoint_of_another_run_is_not_resumed(tmp_path, monkeypatch):
    """--resume takes a checkpoint only of the same run (:func:`run_stamp`): other data, column,
    settings or seed are refused in one line; how long it goes on may change."""
    from tagger.training import checkpoint, run

    train = tmp_path / "train.conllu"
    train.write_text("1\ta\t_\tX\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    folder = tmp_path / "ck"
    monkeypatch.setattr(checkpoint, "read", lambda directory: {"trainer": {"epoch": 2, "batch": 5}})

    def resumed(**changes):
        options = {"checkpoint_dir": str(folder), "resume": True, "seed": 1, **changes.pop("options", {})}
        changes.setdefault("out", str(tmp_path / "m"))
        return run._resumed(build_request(task="pos", train=str(train), **options, **changes), lambda line: None)

    assert resumed(options={"resume": False}) is None and (folder / run.RUN_STAMP).is_file()  # started afresh: stamped
    assert resumed() == {"trainer": {"epoch": 2, "batch": 5}}
    assert resumed(max_epochs=9, overrides=["patience=2"]) is not None  # only how long it goes on changes
    for changes, named in (({"column": "xpos"}, "column"), ({"overrides": ["hidden=32"]}, "settings"),
                           ({"options": {"seed": 2}}, "seed"), ({"out": str(tmp_path / "other")}, "out")):
        with pytest.raises(TaggerError, match=f"another run \\(not the same {named}\\)"):
            resumed(**changes)
    train.write_text(train.read_text(encoding="utf-8") * 2, encoding="utf-8")
    with pytest.raises(TaggerError, match="not the same train"):
        resumed()


def test_a_model_or_checkpoint_that_cannot_be_written_is_refused_before_training(tmp_path, monkeypatch):
    from tagger.training import request

    locked = tmp_path / "locked"  # a read-only folder (a read-only mount: root too is refused there)
    locked.mkdir()
    monkeypatch.setattr(request.os, "access", lambda path, mode: os.fspath(path) != os.fspath(locked))
    with pytest.raises(TaggerError, match=r"cannot write here \(.*locked is not writable\)"):
        request.refuse_unwritable(locked / "sub" / "m.tagger")
    with pytest.raises(TaggerError, match="not writable"):
        build_request(task="pos", train=SAMPLE, out=tmp_path / "m", checkpoint_dir=locked / "ck")
    request.refuse_unwritable(tmp_path / "new" / "deeper" / "m.tagger", None)  # folders made later, in a writable one


def test_one_sentence_left_by_max_sentences_names_the_option():
    from tagger.training.request import read_data

    with pytest.raises(TaggerError, match="--max-sentences 1 leaves one sentence: none can be held out as dev"):
        read_data(build_request(task="pos", train=SAMPLE, out="m", max_sentences=1))


def test_dev_values_never_seen_in_training_are_warned_of_for_parsers_too():
    from types import SimpleNamespace

    from tagger.corpus.records import Sentence
    from tagger.training.run import unseen_dev_values

    train = [Sentence(["a", "b"], {"upos": ["X", "Y"], "deprel": ["root", "dep"]})]
    dev = [Sentence(["a", "b"], {"upos": ["X", "Y"], "deprel": ["xroot", "xdep"]})]  # another label set
    parser = SimpleNamespace(kind="parser", output_columns=["head", "deprel"])
    [warning] = unseen_dev_values(parser, train, dev)
    assert warning.startswith("warning: 100% of the dev deprel values never occur in the training data (xroot, xdep")
    assert unseen_dev_values(parser, train, train) == []
    assert unseen_dev_values(SimpleNamespace(kind="parser", output_columns=["tree"]), train, dev) == []
