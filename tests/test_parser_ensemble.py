"""Parser ensembles: several transition parsers decoding together (summed log-probabilities),
in a model file of their own or as a pipeline's last stage; ``tagger ensemble`` makes one from
trained parsers, ``tagger train --task pipeline --parsers N`` trains the set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch.nn import functional as F

from tagger import model_file
from tagger.formats import read_corpus
from tagger.inference import predict
from tagger.models.transition_parser import decoder
from tagger.models.transition_parser.ensemble import ParserEnsemble
from tagger.pipeline import Pipeline
from tests.conftest import train_in_process
from tests.helpers import FAST, invoke

SAMPLE = "data/sample.conllu"


@pytest.fixture(scope="module")
def parsers(tmp_path_factory) -> list[Path]:
    """Three tiny FFN parsers of data/sample.conllu, seeds 1-3 (the first is lstm: members may differ in arch)."""
    folder = tmp_path_factory.mktemp("members")
    paths = []
    for seed, arch in ((1, "lstm"), (2, "ffn"), (3, "ffn")):
        path = folder / f"p{seed}.model"
        train_in_process("--task", "dep", "--train", SAMPLE, "--dev", SAMPLE, "--out", str(path), "--arch", arch,
                         "--seed", str(seed), *FAST)
        paths.append(path)
    return paths


def _trees(model, sentences):
    return predict(model, sentences)


def test_one_member_decodes_as_the_parser_alone(parsers):
    parser, _ = model_file.load(parsers[1])
    sentences = list(read_corpus(SAMPLE, "conllu"))
    batch = parser.collate(sentences, with_gold=False)
    assert decoder.decode_together([parser], [batch]) == parser.decode(batch)


def test_ensemble_takes_the_best_summed_log_probability_at_each_step(parsers, monkeypatch):
    """Each step's choice is the argmax of the summed log-softmax (not of summed raw scores):
    recorded per step, it is recomputed from the members' own scores."""
    members = [model_file.load(p)[0] for p in parsers]
    ensemble = ParserEnsemble(members)
    sentences = list(read_corpus(SAMPLE, "conllu"))[:5]
    seen: list[tuple[list[torch.Tensor], torch.Tensor]] = []
    original = decoder._Member.scores

    def spy(self, raw, codes):
        scores = original(self, raw, codes)
        seen.append(scores)
        return scores

    chosen: list[torch.Tensor] = []
    original_attach = decoder._Member.attach

    def record(self, best):
        if self is ensemble_members[0]:
            chosen.append(best.clone())
        original_attach(self, best)

    ensemble_members: list = []
    original_init = decoder._Member.__init__

    def init(self, *args):
        original_init(self, *args)
        ensemble_members.append(self)

    monkeypatch.setattr(decoder._Member, "scores", spy)
    monkeypatch.setattr(decoder._Member, "attach", record)
    monkeypatch.setattr(decoder._Member, "__init__", init)
    ensemble.decode(ensemble.collate(sentences))
    assert chosen and len(seen) == 3 * len(chosen)
    for step, best in enumerate(chosen):
        total = sum(F.log_softmax(s, 1) for s in seen[3 * step: 3 * step + 3])
        assert torch.equal(total.argmax(1), best)
    # the members disagree, so the ensemble's trees are not all some one member's
    together = _trees(ensemble, sentences)
    assert any(together != _trees(member, sentences) for member in members)


def test_tagger_ensemble_writes_a_file_that_parses_and_evaluates(parsers, tmp_path):
    out = tmp_path / "dep.ensemble"
    done = invoke("ensemble", *map(str, parsers), "--out", str(out), "--json")
    assert done.exit_code == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["parsers"] == 3 and summary["written"] == "parser_ensemble"
    model, meta = model_file.load(out)
    assert isinstance(model, ParserEnsemble) and [m["model"] for m in meta["ensemble_of"]] == list(map(str, parsers))
    tagged = invoke("tag", "--model", str(out), SAMPLE)
    assert tagged.exit_code == 0, tagged.stderr
    rows = [r for r in (line.split("\t") for line in tagged.stdout.splitlines()) if r[0].isdigit()]
    assert rows and all(r[6] != "_" and r[7] != "_" for r in rows)
    scored = invoke("evaluate", "--model", str(out), SAMPLE, "--json")
    assert scored.exit_code == 0, scored.stderr
    assert "las" in json.loads(scored.stdout)["parsing"]["no_punct"]
    shown = invoke("info", str(out), "--json")
    assert shown.exit_code == 0, shown.stderr
    assert [m["model"] for m in json.loads(shown.stdout)["members"]] == ["transition_parser"] * 3
    import tagger

    through_api = tagger.ensemble(parsers[:2], tmp_path / "api.model")  # the Python API does the same
    assert through_api["parsers"] == 2 and isinstance(model_file.load(tmp_path / "api.model")[0], ParserEnsemble)
    # an ensemble file is itself a member of a bigger one: its parsers are taken one by one
    bigger = invoke("ensemble", str(out), str(parsers[0]), "--out", str(tmp_path / "four.model"), "--json")
    assert bigger.exit_code == 0 and json.loads(bigger.stdout)["parsers"] == 4


def test_info_shows_the_members_dev_scores_in_percent_as_every_score(parsers, tmp_path):
    """The meta's ``ensemble_of`` stores fractions (as model files do); ``tagger info`` shows
    them in percent, in its table and in --json, as it shows the other scores."""
    out = tmp_path / "two.model"
    assert invoke("ensemble", parsers[1], parsers[2], "--out", out).exit_code == 0
    fractions = [model_file.read_archive(p)["meta"]["dev_score"] for p in parsers[1:]]
    assert [m["dev_score"] for m in model_file.read_archive(out)["meta"]["ensemble_of"]] == fractions
    shown = invoke("info", out, "--json")
    assert shown.exit_code == 0, shown.stderr
    members = json.loads(shown.stdout)["meta"]["ensemble_of"]
    assert [m["dev_score"] for m in members] == pytest.approx([100.0 * f for f in fractions])
    table = invoke("info", out)
    assert table.exit_code == 0, table.stderr
    text = " ".join(table.stdout.split())  # rich wraps the line
    assert f"(seed 2, dev {100.0 * fractions[0]:.2f} %)" in text and f"{fractions[0]:.4f}"[:6] not in text


def test_ensemble_notes_a_model_given_twice(parsers, tmp_path):
    """The same file twice, or two files of the same bytes: a note (an ensemble of a model with
    itself is no better than it), the ensemble still written; other files: no note."""
    twice = invoke("ensemble", parsers[0], parsers[0], "--out", tmp_path / "twice.model")
    assert twice.exit_code == 0, twice.stderr
    notes = [line for line in twice.stderr.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: {parsers[0]} is given twice: an ensemble of a model with itself is no better than "
                     f"that model (give parsers trained with other --seed values)"]
    copy = tmp_path / "copy.model"
    copy.write_bytes(parsers[1].read_bytes())
    same = invoke("ensemble", parsers[1], parsers[2], copy, "--out", tmp_path / "same.model", "--json")
    assert same.exit_code == 0, same.stderr
    assert f"note: {copy} is the same model as {parsers[1]} (the same bytes): " in same.stderr
    assert json.loads(same.stdout)["notes"] == [same.stderr.strip()[len("note: "):]]
    other = invoke("ensemble", parsers[1], parsers[2], "--out", tmp_path / "other.model")
    assert other.exit_code == 0 and "note:" not in other.stderr


def test_ensemble_of_pipelines_keeps_the_first_pipelines_tagger(parsers, sample_tagger, tmp_path):
    pipes = []
    for k, parser in enumerate(parsers[1:]):
        path = tmp_path / f"en{k}.model"
        model_file.save_pipeline(path, [model_file.read_archive(sample_tagger), model_file.read_archive(parser)],
                                 {"task": "pipeline"})
        pipes.append(path)
    out = tmp_path / "en.model"
    done = invoke("ensemble", *map(str, pipes), "--out", str(out))
    assert done.exit_code == 0, done.stderr
    model, meta = model_file.load(out)
    assert isinstance(model, Pipeline) and isinstance(model.stages[-1], ParserEnsemble) and meta["parsers"] == 2
    assert model.output_columns == ["upos", "head", "deprel"]


def test_ensemble_refuses_a_tagger_one_parser_and_other_labels(parsers, sample_tagger, tmp_path):
    one = invoke("ensemble", str(parsers[0]), "--out", str(tmp_path / "x.model"))
    assert one.exit_code == 1 and "at least two" in one.stderr
    tagger = invoke("ensemble", str(parsers[0]), str(sample_tagger), "--out", str(tmp_path / "x.model"))
    assert tagger.exit_code == 1 and "not a transition parser" in tagger.stderr
    archive = model_file.read_archive(parsers[2])
    archive["vocabs"]["labels"] = list(reversed(archive["vocabs"]["labels"]))
    other = tmp_path / "other.model"
    torch.save(archive, other)
    refused = invoke("ensemble", str(parsers[1]), str(other), "--out", str(tmp_path / "x.model"))
    assert refused.exit_code == 1 and "labels differ" in refused.stderr and str(other) in refused.stderr
    assert not (tmp_path / "x.model").exists()
    shipped = invoke("ensemble", str(parsers[1]), "en", "--out", str(tmp_path / "x.model"))  # a name, as tag takes it
    assert shipped.exit_code == 1 and "labels differ" in shipped.stderr and "en.model" in shipped.stderr


def test_task_pipeline_parsers_trains_members_with_their_seeds_on_one_jackknife(tmp_path):
    """``--parsers 2 --jobs 2``: one set of jackknife taggers (the pipeline seed's), two parsers
    (seeds 1 and 2) in processes of their own, one pipeline file whose parser is their ensemble;
    its dev score is the ensemble's own."""
    from tests.conftest import EWT
    from tests.helpers import first_blocks

    if not (EWT / "en_ewt-ud-train.conllu").exists():
        pytest.skip("needs ../shared/data")
    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    train.write_text(first_blocks(EWT / "en_ewt-ud-train.conllu", 30), encoding="utf-8")
    dev.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 10), encoding="utf-8")
    out = tmp_path / "en.model"
    done = invoke("train", "--task", "pipeline", "--preset", "ffn", "--train", train, "--dev", dev, "--out", out,
                  "--jackknife", "2", "--parsers", "2", "--jobs", "2", "--no-tokenizer",
                  "--pos-set", "max_epochs=1", "--pos-set", "layers=1", "--pos-set", "hidden=16",
                  "--max-epochs", "1", "--set", "hidden=16", "--set", "precompute=50", "--threads", "1", "--json")
    assert done.exit_code == 0, (done.stderr, done.exception)
    summary = json.loads(done.stdout)
    assert [p["seed"] for p in summary["parsers"]] == [1, 2] and summary["parsers_jobs"] == 2
    work = tmp_path / "en.model.jackknife"
    assert (work / "parser.model").exists() and (work / "parser-2.model").exists()
    seeds = [model_file.read_archive(work / name)["meta"]["seed"] for name in ("parser.model", "parser-2.model")]
    assert seeds == [1, 2]
    model, meta = model_file.load(out)
    assert isinstance(model.stages[-1], ParserEnsemble) and len(model.stages[-1].members) == 2
    assert meta["dev_score"] == meta["ensemble_dev_score"] and abs(100 * meta["dev_score"] - summary["best_dev"]) < 1e-3
    again = invoke("train", "--task", "pipeline", "--preset", "ffn", "--train", train, "--dev", dev, "--out", out,
                   "--jackknife", "2", "--parsers", "3", "--no-tokenizer",
                   "--pos-set", "max_epochs=1", "--pos-set", "layers=1", "--pos-set", "hidden=16",
                   "--max-epochs", "1", "--set", "hidden=16", "--set", "precompute=50", "--threads", "1", "--json")
    assert again.exit_code == 0, again.stderr
    assert all(t["reused"] for t in json.loads(again.stdout)["jackknife"]["taggers"])  # the taggers' seed is the run's
    assert len(model_file.load(out)[0].stages[-1].members) == 3


def test_parsers_only_with_task_pipeline():
    refused = invoke("train", "--task", "dep", "--train", SAMPLE, "--out", "/nonexistent/x.model", "--parsers", "2")
    assert refused.exit_code == 2 and "--parsers" in refused.stderr
