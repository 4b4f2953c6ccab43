"""The ablation zoo: ``tagger presets`` (every family's presets, the papers' rows among them) and
``tagger ablate`` (train a table's rows, resume, report, plot), on a fixture table of two rows
injected into the skip-LSTM presets, so that the tests do not depend on the papers' data."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from tagger import ablation
from tagger.ablation import AblationRequest
from tagger.errors import TaggerError
from tagger.models import MODELS
from tagger.models.skip_lstm import presets as zoo_presets
from tests.conftest import EWT
from tests.helpers import assert_one_line_error, first_blocks, invoke

TABLE = "fx2099-t1"
ROWS = {
    "fx-plain": {"based_on": "fast", "table": TABLE, "case": "", "row": "no skip: plain stacked LSTM",
                 "description": "fixture row:\n  no skip", "model": {"skip": "none"},
                 "paper_dev": 93.5, "paper_test": None},
    "fx-skip": {"based_on": "fast", "table": TABLE, "case": "gated skip (case 1)",
                "row": "skip to the output: h = h~ + g⊙k", "description": "fixture row: skip to the output",
                "model": {"skip": "output", "gate": "none"}, "paper_dev": 94.1, "paper_test": 94.3},
    "fx-skip-gated": {"based_on": "fx-skip", "table": TABLE, "case": "gated skip (case 1)",
                      "row": "with gate", "description": "fixture row: gated", "model": {"gate": "recurrent"},
                      "paper_dev": 94.2, "paper_test": 94.4},
}
TABLES = {TABLE: {"paper": "Fixture & Co 2099", "file": "999", "number": 1, "title": "fixture topologies",
                  "data": "UD EWT slices"}}
FIELDS = {"name", "family", "table", "case", "row", "paper_dev", "paper_test", "description", "scan", "model",
          "training", "paper_vectors"}


@pytest.fixture
def zoo(monkeypatch):
    """The fixture table: its rows added to the skip-LSTM presets (the dict the model class and the
    presets module share), its entry as the only table."""
    for name, entry in ROWS.items():
        monkeypatch.setitem(MODELS["skip_lstm"].PRESETS, name, entry)
    monkeypatch.setattr(zoo_presets, "TABLES", TABLES, raising=False)
    return list(ROWS)


# -- tagger presets ----------------------------------------------------------------------------

def test_list_presets_gives_every_family_zoo_first_with_rows_and_scan(zoo):
    presets = ablation.list_presets()
    families = [p["family"] for p in presets]
    assert families[0] == "skip_lstm" and set(families) == set(MODELS)
    assert families == sorted(families, key=lambda f: (f != "skip_lstm", f))  # grouped, zoo first
    by_name = {p["name"]: p for p in presets if p["family"] == "skip_lstm"}
    gated = by_name["fx-skip-gated"]
    assert set(gated) == FIELDS | {"source"}
    assert gated["model"]["skip"] == "output" and gated["model"]["gate"] == "recurrent"  # based_on resolved
    assert gated["training"]["optimizer"] == "adam"  # from fast, two links up
    assert gated["source"] == "fx2099 T1 · case 1 · with gate"
    assert by_name["fx-plain"]["source"] == "fx2099 T1 · no skip" and by_name["fast"]["source"] == ""
    assert by_name["fx-plain"]["description"] == "fixture row: no skip"  # one line
    assert {p["scan"] for p in presets if p["family"] == "skip_lstm"} == {"fast"}
    assert {p["scan"] for p in presets if p["family"] != "skip_lstm"} == {"-"}
    assert [p["name"] for p in ablation.list_presets(table=TABLE)] == zoo
    assert {p["family"] for p in ablation.list_presets("seq2seq")} == {"seq2seq"}
    with pytest.raises(TaggerError, match=f"unknown table 'nope'; tables: {TABLE}"):
        ablation.list_presets(table="nope")


def test_the_papers_presets_say_which_vectors_the_paper_used():
    from tagger.ablation import paper_vectors

    assert "200-dimensional GloVe" in paper_vectors("wu2016-t2-output") and "100-dimensional GloVe" in paper_vectors("wu2017-t1-7")
    assert "word2vec" in paper_vectors("vinyals2015") and paper_vectors("fast") is None
    listed = {p["name"]: p for p in ablation.list_presets()}
    assert "GloVe" in listed["wu2016-7x512"]["paper_vectors"] and "GloVe" in listed["lstm-paper"]["paper_vectors"]


def test_presets_command_names_json_filters_and_plain_text(zoo):
    done = invoke("presets", "--names")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == [p["name"] for p in ablation.list_presets()]
    done = invoke("presets", "--json", "--table", TABLE)
    listed = json.loads(done.stdout)
    assert [p["name"] for p in listed] == zoo and all(set(p) == FIELDS for p in listed)
    assert listed[1]["paper_test"] == 94.3 and listed[0]["paper_test"] is None
    assert listed[1]["case"].endswith("(case 1)")
    done = invoke("presets", "--model", "transition_parser", "--names")
    assert done.stdout.split() == list(MODELS["transition_parser"].PRESETS)
    lines = invoke("presets", "--table", TABLE).stdout.splitlines()  # not a terminal: plain, aligned
    assert lines[0].split()[:2] == ["name", "family"] and len(lines) == 1 + len(zoo)
    scan = lines[0].index("scan")
    assert all(line[scan:scan + 4] == "fast" for line in lines[1:])
    assert "fx2099 T1 · case 1 · skip to the output" in lines[2] and "fixture row: skip to the output" in lines[2]
    assert_one_line_error(invoke("presets", "--table", "nope"), "unknown table 'nope'", TABLE)
    assert invoke("presets", "--model", "nope").exit_code == 2  # click's choice


def test_presets_api_is_the_listing(zoo):
    import tagger

    assert tagger.presets(table=TABLE) == ablation.list_presets(table=TABLE)


# -- the table, from results -------------------------------------------------------------------

def fake_result(name: str, dev: float, test: float, run: dict) -> dict:
    return {"preset": name, "dev": dev, "test": test, "epochs": 2, "seconds": 12.0, "tokens_per_second": 900,
            "run": run}


def test_table_report_and_markdown_in_the_papers_layout(zoo, tmp_path):
    request = AblationRequest(TABLE, str(tmp_path), "t.conllu", "d.conllu", "e.conllu", 5, column="xpos",
                              overrides=("hidden=64", "layers=4", "hidden=32"), jobs=2, threads=4)
    run = ablation.identity(request)
    assert run["overrides"] == ["hidden=32", "layers=4"]  # the last of a repeated key, sorted
    ablation.write_text_atomic(tmp_path / "fx-skip.json", json.dumps(fake_result("fx-skip", 91.234, 90.5, run)))
    report = ablation.table_report(TABLE, ablation.load_results(tmp_path), ablation.run_settings(request))
    assert [r["preset"] for r in report["rows"]] == zoo
    assert report["rows"][1]["dev"] == 91.234 and report["rows"][0]["dev"] is None
    shown = ablation.display_rows(report)
    assert shown[0] == ["", "no skip: plain stacked LSTM", "93.50", "…", "…", "…", "fx-plain"]
    assert shown[1][:6] == ["gated skip (case 1)", "skip to the output: h = h~ + g⊙k", "94.10", "94.30", "91.23",
                            "90.50"]
    assert shown[2][0] == ""  # the case is named on its first row only
    markdown = ablation.render_markdown(report)
    lines = markdown.splitlines()
    assert lines[0] == "# Fixture & Co 2099, Table 1: fixture topologies (paper: UD EWT slices)"
    settings = lines[2]
    for fragment in ("column xpos", "budget 5 min per row", "seed 1", "overrides: hidden=32, layers=4",
                     f"CPU {ablation.cpu_name()}", "threads 2 per row × 2 rows", os.path.abspath("t.conllu")):
        assert fragment in settings, fragment
    assert lines[4] == "| Case | Variant | paper dev | paper test | our dev | our test | preset |"
    assert lines[7] == ("| gated skip (case 1) | skip to the output: h = h~ + g⊙k | 94.10 | 94.30 | 91.23 | 90.50 "
                        "| `fx-skip` |")
    assert len(lines) == 9


def test_report_mode_prints_and_rewrites_the_table_without_training(zoo, tmp_path):
    request = AblationRequest(TABLE, str(tmp_path), "t.conllu", "d.conllu", "e.conllu", 5)
    ablation.write_text_atomic(tmp_path / "fx-plain.json",
                               json.dumps(fake_result("fx-plain", 88.0, 87.0, ablation.identity(request))))
    done = invoke("ablate", "--table", TABLE, "--out-dir", tmp_path, "--report")
    assert done.exit_code == 0, done.output
    assert "fixture topologies" in done.stdout and "88.00" in done.stdout and "…" in done.stdout
    row = "| no skip: plain stacked LSTM | 93.50 | … | 88.00 | 87.00 | `fx-plain` |"
    assert row in (tmp_path / "table.md").read_text()
    done = invoke("ablate", "--table", TABLE, "--out-dir", tmp_path, "--report", "--json")
    report = json.loads(done.stdout)
    assert report == json.loads((tmp_path / "table.json").read_text())
    assert [r["dev"] for r in report["rows"]] == [88.0, None, None] and report["settings"]["budget_minutes"] == 5
    assert_one_line_error(invoke("ablate", "--table", "nope", "--out-dir", tmp_path, "--report"), "tables: " + TABLE)


def test_bad_requests_fail_before_anything_runs(zoo, tmp_path):
    data = str(tmp_path / "d.conllu")
    Path(data).write_text("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n")
    done = invoke("ablate", "--table", TABLE, "--out-dir", tmp_path / "o", "--train", data)
    assert done.exit_code == 2 and "missing --dev, --test, --budget-minutes" in done.stderr
    base = ["ablate", "--table", TABLE, "--out-dir", tmp_path / "o", "--train", data, "--dev", data, "--test", data,
            "--budget-minutes", "1"]
    assert_one_line_error(invoke(*base[:2], "nope", *base[3:]), "unknown table 'nope'")
    assert_one_line_error(invoke(*base, "--rows", "fx-plain,fx-x"), "--rows: fx-x not in table", "fx-skip-gated")
    assert_one_line_error(invoke(*base, "--set", "nope=1"), "unknown config key(s): nope")
    assert_one_line_error(invoke(*base, "--set", "layers=0"), "layers must be between 1 and 64")
    assert_one_line_error(invoke(*base, "--device", "gpu"), "--device gpu: not a device name")
    assert_one_line_error(invoke(*base[:8], tmp_path / "none.conllu", *base[9:]), "none.conllu: no such file")
    assert not (tmp_path / "o").exists()
    assert ablation.threads_per_job(8, 3) == 2 and ablation.threads_per_job(1, 2) == 1
    assert ablation.threads_per_job(None, 1) == (os.cpu_count() or 1)


# -- a real run --------------------------------------------------------------------------------

@pytest.fixture
def ewt_slices(tmp_path) -> tuple[Path, Path, Path]:
    """The first 120, 40 and 40 sentences of EWT train, dev and test."""
    if not (EWT / "en_ewt-ud-train.conllu").exists():
        pytest.skip("needs ../shared/data")
    paths = []
    for part, n in (("train", 120), ("dev", 40), ("test", 40)):
        path = tmp_path / f"{part}.conllu"
        path.write_text(first_blocks(EWT / f"en_ewt-ud-{part}.conllu", n), encoding="utf-8")
        paths.append(path)
    return tuple(paths)


@pytest.mark.slow
def test_ablate_trains_rows_in_parallel_resumes_and_refuses_other_runs(zoo, ewt_slices, tmp_path):
    import tagger

    train, dev, test = ewt_slices
    out = tmp_path / "zoo"
    command = ["ablate", "--table", TABLE, "--rows", "fx-plain,fx-skip", "--column", "xpos", "--train", train,
               "--dev", dev, "--test", test, "--budget-minutes", "1", "--jobs", "2", "--threads", "2",
               "--out-dir", out, "--set", "layers=3", "--set", "hidden=8", "--set", "word_dim=16",
               "--set", "max_epochs=1", "--set", "optimizer=sgd", "--set", "lr=0.05",
               "--set", "lexicon=0"]  # (after one epoch a tag dictionary would give both rows its own labels)
    done = invoke(*command, "--json")
    assert done.exit_code == 0, (done.stderr, done.exception)
    for index, name in ((1, "fx-plain"), (2, "fx-skip")):
        assert f"row {index}/2 {name}: training (budget 1 min, 1 thread)" in done.stderr
        assert f"row {index}/2 {name} done: dev " in done.stderr
    results = {name: json.loads((out / f"{name}.json").read_text()) for name in ("fx-plain", "fx-skip")}
    for name, result in results.items():
        assert (out / result["model_file"]).exists() and result["model_file"] == f"{name}.model"
        assert result["model"]["layers"] == 3 and result["model"]["hidden"] == 8  # model keys over the preset
        assert result["model"]["column"] == "xpos" and result["model"]["skip"] == ROWS[name]["model"]["skip"]
        assert result["training"]["optimizer"] == "sgd" and result["training"]["lr"] == 0.05  # training keys too
        assert result["epochs"] == 1 and result["seed"] == 1 and result["threads"] == 1
        assert 1 < result["dev"] <= 100 and 1 < result["test"] <= 100  # percent
        scored = tagger.evaluate(out / f"{name}.model", test, precision="fp32")
        assert result["test"] == pytest.approx(scored["score"]) and scored["columns"] == ["xpos"]
        assert not (out / "ckpt" / name / "last.ckpt").exists()  # a finished row keeps no checkpoint
    assert results["fx-plain"]["dev"] != results["fx-skip"]["dev"]  # the rows differ (3 layers: k reaches layer 3)
    report = json.loads(done.stdout)
    assert report == json.loads((out / "table.json").read_text())
    assert [r["dev"] for r in report["rows"]] == [results["fx-plain"]["dev"], results["fx-skip"]["dev"], None]
    markdown = (out / "table.md").read_text()
    assert f"| {results['fx-skip']['test']:.2f} | `fx-skip` |" in markdown and "`fx-skip-gated` |" in markdown
    assert "Fixture & Co 2099, Table 1" in done.stderr and "our test" in done.stderr  # the table on stderr

    # Again: both rows are done, nothing is trained or rewritten.
    stamps = {name: (out / f"{name}.json").stat().st_mtime_ns for name in results}
    done = invoke(*command)
    assert done.exit_code == 0, done.stderr
    assert "row 1/2 fx-plain: done before (dev" in done.stderr and ": training (" not in done.stderr
    assert {name: (out / f"{name}.json").stat().st_mtime_ns for name in results} == stamps

    # One result deleted: only that row runs again, to the same scores (a CPU run repeats exactly).
    (out / "fx-skip.json").unlink()
    done = invoke(*command)
    assert done.exit_code == 0, done.stderr
    assert "row 1/2 fx-plain: done before" in done.stderr and "row 2/2 fx-skip: training" in done.stderr
    assert (out / "fx-plain.json").stat().st_mtime_ns == stamps["fx-plain"]
    again = json.loads((out / "fx-skip.json").read_text())
    assert (again["dev"], again["test"]) == (results["fx-skip"]["dev"], results["fx-skip"]["test"])

    # Another seed in the same folder: refused, not mixed in.
    other = [*command[:-2], "--seed", "2", *command[-2:]]
    assert_one_line_error(invoke(*other), "fx-plain.json", "another run", "seed 2 here, 1 there")

    if importlib.util.find_spec("matplotlib") is not None:
        picture = tmp_path / "table.png"
        done = invoke("ablate", "--table", TABLE, "--out-dir", out, "--report", "--plot", picture)
        assert done.exit_code == 0, done.stderr
        assert picture.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_a_failing_row_is_reported_with_its_logs_error(zoo, tmp_path):
    """A row whose process fails (here: its training file is not CoNLL-U) says so with its log's
    error line; the table is still written, and the run ends in one error naming the row and its log."""
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tx\n\n")
    request = AblationRequest(TABLE, str(tmp_path / "o"), str(bad), str(bad), str(bad), 1, rows=("fx-plain",),
                              overrides=("layers=1", "hidden=4"), threads=1)
    lines: list[str] = []
    report = ablation.run_table(request, lines.append)
    assert report["failed"] == ["fx-plain"] and report["rows"][0]["dev"] is None
    assert lines[0] == "row 1/1 fx-plain: training (budget 1 min, 1 thread)"
    assert lines[1].startswith("row 1/1 fx-plain failed: error: ") and "bad.conllu" in lines[1]
    error = ablation.failure(report, request.out_dir)
    assert error is not None and "1 row failed (fx-plain)" in str(error) and "ckpt/fx-plain/train.log" in str(error)
    assert not (tmp_path / "o" / "fx-plain.json").exists() and (tmp_path / "o" / "table.md").exists()


def test_a_rows_start_says_resuming_only_for_a_checkpoint_it_keeps(zoo, ewt_slices, monkeypatch, tmp_path):
    """A row with a checkpoint of the same run resumes; one whose checkpoint was another run's
    (other settings: :func:`clear_stale` deletes it) trains again and says so, not "resuming"."""
    train, dev, test = ewt_slices
    monkeypatch.setattr(ablation, "run_stamped", lambda jobs, parallel, start, *rest, **options: [
        start(job) for job in jobs])  # only each row's start: nothing is trained

    def started(overrides: tuple[str, ...]) -> str:
        request = AblationRequest(TABLE, str(tmp_path / "o"), str(train), str(dev), str(test), 1,
                                  rows=("fx-plain",), overrides=overrides, threads=1)
        checkpoint = ablation.work_dir(request.out_dir, "fx-plain") / "last.ckpt"
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        checkpoint.write_bytes(b"ckpt")
        lines: list[str] = []
        ablation.run_table(request, lines.append)
        return lines[0]

    assert started(("hidden=16",)) == "row 1/1 fx-plain: resuming (budget 1 min, 1 thread)"  # no spec: kept
    assert started(("hidden=16",)) == "row 1/1 fx-plain: resuming (budget 1 min, 1 thread)"  # same run
    line = started(("hidden=24",))
    assert line == "row 1/1 fx-plain: training again: other settings (budget 1 min, 1 thread)"
    assert not (ablation.work_dir(tmp_path / "o", "fx-plain") / "last.ckpt").exists()


def test_a_picture_that_could_not_be_written_is_refused_before_any_work(tmp_path):
    from tagger.plots import check_picture_path

    with pytest.raises(TaggerError, match="must end in one of"):
        check_picture_path(tmp_path / "table.gif", "--plot")
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(TaggerError, match="cannot make the folder"):
        check_picture_path(blocker / "sub" / "table.png", "--plot")
    check_picture_path(tmp_path / "new" / "table.png", "--plot")  # the folder --out-dir will also make
    assert (tmp_path / "new").is_dir()


def vector_file(train: Path, path: Path) -> Path:
    """Three-dimensional vectors of every (lowercased) word of ``train``."""
    words = list(dict.fromkeys(w.lower() for line in train.read_text(encoding="utf-8").splitlines()
                               if line and not line.startswith("#") for w in [line.split("\t")[1]]))
    path.write_text("".join(f"{w} {i % 7 - 3} 0.5 {i % 3}\n" for i, w in enumerate(words)), encoding="utf-8")
    return path


def test_ablate_gives_every_row_the_vectors_and_keeps_runs_with_others_apart(zoo, ewt_slices, tmp_path):
    train, dev, test = ewt_slices
    vectors = vector_file(train, tmp_path / "v.txt")
    out = tmp_path / "zoo"
    command = ["ablate", "--table", TABLE, "--rows", "fx-plain", "--column", "upos", "--train", train, "--dev", dev,
               "--test", test, "--budget-minutes", "1", "--out-dir", out, "--set", "layers=2", "--set", "hidden=8",
               "--set", "word_dim=8", "--set", "max_epochs=1", "--threads", "1"]
    done = invoke(*command, "--embeddings", vectors)
    assert done.exit_code == 0, (done.stderr, done.exception)
    result = json.loads((out / "fx-plain.json").read_text())
    assert result["run"]["embeddings"] == str(vectors), result["run"]
    from tagger import archive

    assert archive.read(out / result["model_file"])["config"]["pretrained_dim"] == 3  # the row's model has the table
    assert f"vectors: {vectors}" in (out / "table.md").read_text()
    assert_one_line_error(invoke(*command), "fx-plain.json", "another run")  # without the vectors: not mixed in


# -- paper 004's tables: the transition parser's rows ---------------------------------------

def test_paper_004s_tables_are_parser_rows_with_the_papers_figures():
    """Tables 3-5 of Elkaref & Bohnet 2017: per case (random, pre-trained) the paper's rows with
    its dev LAS; the bootstrapped rows start from the FFN row of their own table and case."""
    counts = {"elkaref2017-t3": 14, "elkaref2017-t4": 14, "elkaref2017-t5": 12}
    presets = MODELS["transition_parser"].PRESETS
    for table, count in counts.items():
        rows = ablation.table_rows(table)
        assert len(rows) == count and ablation.get_table(table)["family"] == "transition_parser"
        for name in rows:
            entry = presets[name]
            glove = name.endswith("-glove")
            assert entry["vectors"] is glove and entry["case"] == ("Pre-trained embeddings" if glove else "Random embeddings")
            if entry.get("bootstrap"):
                source = presets[entry["bootstrap"]]
                assert entry["bootstrap"] in rows and source["row"] == "FFN baseline" and source["vectors"] is glove
    t4 = {presets[n]["row"]: presets[n] for n in ablation.table_rows("elkaref2017-t4") if n.endswith("-glove")}
    assert t4["bootstrapped f gate"]["paper_dev"] == 91.22 and t4["bootstrapped f gate"]["gates"] == "f"
    assert t4["FFN baseline"]["paper_uas"] == 92.76 and t4["bootstrapped all gates"]["gates"] is None
    t5 = {presets[n]["row"]: presets[n] for n in ablation.table_rows("elkaref2017-t5") if n.endswith("-random")}
    assert t5["bootstrapped z gate"]["paper_dev"] == 87.90
    shown = ablation.display_rows(ablation.table_report("elkaref2017-t3", {}, {}))
    assert shown[0][:4] == ["Random embeddings", "FFN baseline", "89.85", ablation.NOT_REPORTED]
    assert shown[7][:3] == ["Pre-trained embeddings", "FFN baseline", "90.47"]
    listed = invoke("presets", "--table", "elkaref2017-t5", "--json")
    assert listed.exit_code == 0, listed.stderr
    assert [p["name"] for p in json.loads(listed.stdout)] == ablation.table_rows("elkaref2017-t5")


def test_a_parser_table_refuses_what_its_rows_cannot_do(tmp_path):
    data = "data/sample.conllu"
    base = ["ablate", "--table", "elkaref2017-t3", "--out-dir", tmp_path / "o", "--train", data, "--dev", data,
            "--test", data, "--budget-minutes", "1"]
    assert_one_line_error(invoke(*base), "elkaref2017-t3-ffn-glove", "read pre-trained vectors", "--embeddings")
    assert_one_line_error(invoke(*base, "--rows", "elkaref2017-t3-lstm-boot-random"),
                          "starts from row elkaref2017-t3-ffn-random's model")
    assert_one_line_error(invoke(*base, "--task", "pos", "--rows", "elkaref2017-t3-ffn-random"),
                          "transition_parser presets (tasks: dep")
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_ablate_trains_paper_004s_rows_the_bootstrapped_after_their_ffn(ewt_slices, tmp_path):
    """Random and pre-trained FFN rows, and LSTMs bootstrapped from each: the pre-trained rows
    get the vectors (the bootstrapped one through its FFN's weights), the random ones none."""
    from tagger import archive, model_file

    train, dev, test = ewt_slices
    vectors = vector_file(train, tmp_path / "v.txt")
    out = tmp_path / "e3"
    rows = [f"elkaref2017-t3-{row}-{case}" for case in ("random", "glove") for row in ("ffn", "lstm-boot")]
    done = invoke("ablate", "--table", "elkaref2017-t3", "--rows", ",".join(rows), "--train", train, "--dev", dev,
                  "--test", test, "--budget-minutes", "1", "--jobs", "2", "--threads", "2", "--out-dir", out,
                  "--embeddings", vectors, "--set", "hidden=16", "--set", "word_dim=8", "--set", "tag_dim=8",
                  "--set", "label_dim=8", "--set", "max_epochs=1", "--json")
    assert done.exit_code == 0, (done.stderr, done.exception)
    lines = done.stderr.splitlines()
    started = {name: next(i for i, line in enumerate(lines) if f"{name}: training" in line) for name in rows}
    finished = {name: next(i for i, line in enumerate(lines) if f"{name} done: dev" in line) for name in rows}
    for case in ("random", "glove"):  # each LSTM starts after its FFN ended
        assert started[f"elkaref2017-t3-lstm-boot-{case}"] > finished[f"elkaref2017-t3-ffn-{case}"]
    tables = {}
    for name in rows:
        result = json.loads((out / f"{name}.json").read_text())
        assert result["run"]["task"] == "dep" and 0 <= result["dev"] <= 100 and 0 <= result["test"] <= 100
        tables[name] = archive.read(out / result["model_file"])["config"]["pretrained_dim"]
    assert tables == {rows[0]: 0, rows[1]: 0, rows[2]: 3, rows[3]: 3}
    _, meta = model_file.load(out / f"{rows[3]}.model")
    assert meta["bootstrapped_from"] == str(out / f"{rows[2]}.model") and meta["gates"] == "all"
    assert "embeddings" not in meta  # it took the FFN's table with its weights
    report = json.loads(done.stdout)
    assert report["paper_test_reported"] is False and [r["dev"] is not None for r in report["rows"]].count(True) == 4
