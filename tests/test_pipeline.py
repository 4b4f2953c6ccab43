"""Chained models in one process (``tagger tag --model A --model B``) and pipeline model files:
the same output as piping one model's CoNLL-U into the next."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest
import torch

from tagger import model_file
from tagger.errors import TaggerError
from tagger.pipeline import Pipeline, chain
from tests.helpers import invoke


def _blank(path, out):
    """``path`` with UPOS..DEPREL blanked: words only, as a user's input."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[2:8] = ["_"] * 6
            line = "\t".join(cols)
        lines.append(line)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def test_chained_models_equal_piped_ones(sample_tagger, ffn_parser, tmp_path):
    blank = _blank(__import__("pathlib").Path("data/sample.conllu"), tmp_path / "in.conllu")
    tagged = invoke("tag", "--model", str(sample_tagger), str(blank))
    assert tagged.exit_code == 0, tagged.stderr
    (tmp_path / "tagged.conllu").write_text(tagged.stdout, encoding="utf-8")
    piped = invoke("tag", "--model", str(ffn_parser), str(tmp_path / "tagged.conllu"))
    chained = invoke("tag", "--model", str(sample_tagger), "--model", str(ffn_parser), str(blank))
    assert chained.exit_code == 0, chained.stderr
    assert chained.stdout == piped.stdout
    rows = [r for r in (line.split("\t") for line in chained.stdout.splitlines()) if r[0].isdigit()]
    assert all(r[3] != "_" and r[6] != "_" and r[7] != "_" for r in rows)  # UPOS, HEAD, DEPREL filled


def test_parser_alone_refuses_words_but_the_chain_takes_them(sample_tagger, ffn_parser, tmp_path):
    blank = _blank(__import__("pathlib").Path("data/sample.conllu"), tmp_path / "in.conllu")
    alone = invoke("tag", "--model", str(ffn_parser), str(blank))
    assert alone.exit_code != 0 and "UPOS" in alone.stderr
    parsed = invoke("tag", "--model", str(sample_tagger), "--model", str(ffn_parser), "--output-format", "jsonl",
                    str(blank))
    assert parsed.exit_code == 0, parsed.stderr
    record = json.loads(parsed.stdout.splitlines()[0])
    assert set(record) == {"words", "upos", "head", "deprel"}


def test_pipeline_file_round_trip(sample_tagger, ffn_parser, tmp_path):
    stages = [model_file.read_archive(p) for p in (sample_tagger, ffn_parser)]
    path = tmp_path / "en.model"
    model_file.save_pipeline(path, stages, {"task": "pipeline"})
    loaded, meta = model_file.load(path)
    assert isinstance(loaded, Pipeline) and meta == {"task": "pipeline"}
    assert loaded.output_columns == ["upos", "head", "deprel"] and loaded.input_columns == []
    blank = _blank(__import__("pathlib").Path("data/sample.conllu"), tmp_path / "in.conllu")
    one = invoke("tag", "--model", str(path), str(blank))
    two = invoke("tag", "--model", str(sample_tagger), "--model", str(ffn_parser), str(blank))
    assert one.exit_code == 0 and one.stdout == two.stdout
    info = invoke("info", str(path))
    assert info.exit_code == 0 and "stage 2: transition_parser" in info.stdout, info.stderr
    described = json.loads(invoke("info", "--json", str(path)).stdout)
    assert [s["model"] for s in described["stages"]] == ["skip_lstm", "transition_parser"]


def test_chain_flattens_and_declares_inputs(sample_tagger, ffn_parser):
    tagger, _ = model_file.load(sample_tagger)
    parser, _ = model_file.load(ffn_parser)
    assert chain([tagger]) is tagger
    backwards = chain([parser, tagger])
    assert backwards.input_columns == ["upos"]  # the parser runs first: the input must bring UPOS
    nested = chain([Pipeline([tagger]), parser])
    assert [s.name for s in nested.stages] == ["skip_lstm", "transition_parser"]
    with pytest.raises(TaggerError, match="beam"):
        nested.set_decoding(beam=4)
    with pytest.raises(TaggerError, match="distribution"):
        nested.distribution(None)
    assert nested.parameters().__next__().dtype == torch.float32


def test_pipeline_file_without_stages_is_refused(tmp_path):
    path = tmp_path / "bad.model"
    model_file.atomic_save({"format_version": model_file.FORMAT_VERSION, "name": "pipeline", "state_dict": {},
                            "stages": []}, path)
    with pytest.raises(TaggerError, match="without stages"):
        model_file.load(path)


@pytest.mark.slow
def test_task_pipeline_trains_a_jackknifed_tagger_and_parser_into_one_file(tmp_path):
    """``tagger train --task pipeline``: K = 2 tiny taggers of UPOS, XPOS, FEATS and LEMMA, a parser on
    their tags reading UPOS+FEATS, one file that fills all six columns and is scored whole. On
    CoNLL-U with ``# text`` a tokenizer stage comes first: the file reads raw text, and CoNLL-U
    input keeps its own tokens; a rerun with ``--no-tokenizer`` reuses the taggers and leaves it out."""
    from tagger import formats
    from tagger.tokenization.labels import conllu_blocks, rebuild_text
    from tests.conftest import EWT
    from tests.helpers import DATA, first_blocks

    if not (EWT / "en_ewt-ud-train.conllu").exists():
        pytest.skip("needs ../shared/data")
    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    train.write_text(first_blocks(EWT / "en_ewt-ud-train.conllu", 40), encoding="utf-8")
    dev.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 15), encoding="utf-8")
    out = tmp_path / "en.model"
    common = ["train", "--task", "pipeline", "--preset", "ffn", "--train", train, "--dev", dev, "--out", out,
              "--jackknife", "2",
              "--pos-set", "max_epochs=1", "--pos-set", "layers=1", "--pos-set", "hidden=16",
              "--max-epochs", "1", "--set", "hidden=16", "--set", "precompute=50", "--threads", "1", "--json"]
    refused = invoke(*common, "--tokenizer-preset", "widest")  # said before anything trains
    assert refused.exit_code == 1 and "tokenizer preset: unknown preset 'widest'" in refused.stderr
    assert not (tmp_path / "en.model.jackknife").exists()
    done = invoke(*common, "--tokenizer-preset", "wide")
    assert done.exit_code == 0, (done.stderr, done.exception)
    summary = json.loads(done.stdout)
    assert summary["model"] == str(out) and summary["tagger_columns"] == ["upos", "xpos", "feats", "lemma"]
    assert [t["name"] for t in summary["jackknife"]["taggers"]] == ["fold01", "fold02", "all"]
    assert not any(t["reused"] for t in summary["jackknife"]["taggers"])  # this run trained them
    assert "reused" not in done.stderr and done.stderr.count("jackknife: 2 folds") == 1  # said once, as trained
    model, meta = model_file.load(out)
    assert isinstance(model, Pipeline) and meta["parser_reads"] == "upos+feats"
    assert len(model.stages) == 3 and model.stages[0].name == "tokenizer" and meta["tokenizer"]
    assert model.stages[0].config.hidden == 64  # --tokenizer-preset wide (the default, fast: 32)
    assert model.output_columns == ["upos", "xpos", "feats", "lemma", "head", "deprel"] and model.input_columns == []
    shown = [line for line in invoke("info", out).stdout.splitlines() if line.startswith("│ jackknife ")]
    assert shown and "2 folds, taggers" in shown[0] and "{" not in shown[0]  # in a line, as a parser's, not a dict

    raw = "I saw it. It was big.\n"
    tagged = invoke("tag", "--model", out, stdin=raw.encode())
    assert tagged.exit_code == 0, tagged.stderr
    assert rebuild_text(conllu_blocks(tagged.stdout.splitlines())) == raw
    rows = [line.split("\t") for line in tagged.stdout.splitlines() if line[:1].isdigit()]
    assert rows and all(r[3] != "_" and r[6] != "_" for r in rows if "-" not in r[0])
    given = invoke("tag", "--model", out, DATA / "sample.conllu")  # tokenised input keeps its tokens
    assert given.exit_code == 0, given.stderr
    assert [s.words for s in formats.read(io.BytesIO(given.stdout.encode()), "conllu")] == \
        [s.words for s in formats.read(str(DATA / "sample.conllu"), "conllu")]

    blank = _blank(dev, tmp_path / "blank.conllu")
    tagged = invoke("tag", "--model", out, blank)
    assert tagged.exit_code == 0, tagged.stderr
    rows = [r for r in (line.split("\t") for line in tagged.stdout.splitlines()) if r[0].isdigit()]
    assert rows and all(r[2] != "_" and r[3] != "_" and r[4] != "_" and r[6] != "_" and r[7] != "_" for r in rows)
    scored = invoke("evaluate", "--model", out, dev, "--json")
    assert scored.exit_code == 0, scored.stderr
    result = json.loads(scored.stdout)
    assert {"tagging", "parsing"} <= set(result), result.keys()
    import tagger

    through_api = tagger.evaluate(str(out), dev, precision="fp32")  # the Python API scores a pipeline alike
    assert through_api["parsing"] == result["parsing"]
    assert through_api["tagging"]["accuracy"] == result["tagging"]["accuracy"]  # (the CLI adds unseen-word counts)
    assert {c: v["accuracy"] for c, v in through_api["tagging"]["columns"].items()} == \
        {c: v["accuracy"] for c, v in result["tagging"]["columns"].items()}
    assert through_api["score"] == result["parsing"]["no_punct"]["las"]

    done = invoke(*common, "--no-tokenizer")
    assert done.exit_code == 0, (done.stderr, done.exception)
    assert "tagger fold01 (1/2): done before" in done.stderr  # a rerun: reused, and said so
    model, meta = model_file.load(out)
    assert len(model.stages) == 2 and not model.reads_raw_text and not meta["tokenizer"]


def test_task_pipeline_default_parser_reads_no_pos_so_nothing_is_jackknifed(tmp_path):
    """The pipeline's parser of larger corpora (``bilstm-words``, the task's preset: named here,
    as the corpus is small) reads the words through a BiLSTM started from the pipeline's own
    tagger and no POS: one tagger trains on all of train (no folds), the parser alone takes
    words-only input, and ``--jackknife`` is refused as pointless."""
    from tests.conftest import EWT
    from tests.helpers import first_blocks

    if not (EWT / "en_ewt-ud-train.conllu").exists():
        pytest.skip("needs ../shared/data")
    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    train.write_text(first_blocks(EWT / "en_ewt-ud-train.conllu", 30), encoding="utf-8")
    dev.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 10), encoding="utf-8")
    out = tmp_path / "en.model"
    common = ["train", "--task", "pipeline", "--preset", "bilstm-words", "--train", train, "--dev", dev, "--out", out,
              "--no-tokenizer", "--pos-set", "max_epochs=1", "--pos-set", "layers=1", "--pos-set", "hidden=16",
              "--max-epochs", "1", "--set", "hidden=16", "--set", "precompute=50", "--threads", "1", "--json"]
    refused = invoke(*common, "--jackknife", "2")
    assert refused.exit_code == 1 and "nothing to jackknife" in refused.stderr
    done = invoke(*common)
    assert done.exit_code == 0, (done.stderr, done.exception)
    summary = json.loads(done.stdout)
    assert "jackknife" not in summary and summary["tagger"]["name"] == "all"
    work = tmp_path / "en.model.jackknife"
    assert sorted(p.name for p in work.iterdir() if p.is_dir()) == ["all"]  # no fold taggers
    model, meta = model_file.load(out)
    assert meta["parser_reads"] is None and meta["jackknife"] is None
    parser = model.stages[-1]
    assert parser.config.features == "replace" and parser.config.encoder_tag_dim == 0
    assert parser.config.encoder_layers == 1 and parser.config.encoder_hidden == 16  # the tagger's encoder
    assert parser.input_columns == [] and model.input_columns == []
    blank = _blank(dev, tmp_path / "blank.conllu")
    alone = invoke("tag", "--model", work / "parser.model", blank)  # words only: nothing refused
    assert alone.exit_code == 0, alone.stderr
    rows = [r for r in (line.split("\t") for line in alone.stdout.splitlines()) if r[0].isdigit()]
    assert rows and all(r[3] == "_" and r[6] != "_" for r in rows)
    again = invoke(*common)  # a rerun reuses the tagger
    assert again.exit_code == 0 and json.loads(again.stdout)["tagger"]["reused"]


def test_a_small_corpus_gets_a_parser_reading_jackknifed_tags_and_taggers_with_affixes(monkeypatch):
    """Under ``SMALL_WORDS`` training words and no ``--preset`` or ``--config``: the parser
    ``bilstm-tags`` on 5 jackknifed folds (``--jackknife K`` kept), its taggers embedding
    suffixes and prefixes (and the pieces of spaced tokens where ``subwords=auto`` takes them:
    Vietnamese); ``--pos-set subwords=...`` and a named preset are the user's; a larger corpus
    keeps the task's parser."""
    from tagger.training import pipeline
    from tagger.training.request import build_request
    from tests.conftest import EWT
    from tests.helpers import DATA

    sample = str(DATA / "sample.conllu")
    request, said = pipeline.small_recipe(build_request(task="pipeline", train=sample, out="m"))
    assert request.preset == "bilstm-tags" and request.jackknife.folds == 5
    assert request.jackknife.overrides == ("subwords=suffixes,prefixes",) and "training words" in said
    request, _ = pipeline.small_recipe(build_request(task="pipeline", train=sample, out="m", jackknife=3,
                                                      pos_overrides=["subwords=", "max_epochs=2"]))
    assert request.jackknife.folds == 3 and request.jackknife.overrides == ("subwords=", "max_epochs=2")
    for named in ({"preset": "bilstm-words"}, {"config_file": "parser.json"}):
        given = build_request(task="pipeline", train=sample, out="m", **named)
        assert pipeline.small_recipe(given) == (given, None)
    vtb = EWT.parent / "ud-vietnamese-vtb" / "vi_vtb-ud-dev.conllu"
    if vtb.exists():
        request, _ = pipeline.small_recipe(build_request(task="pipeline", train=str(vtb), out="m"))
        assert request.jackknife.overrides == ("subwords=pieces,suffixes,prefixes",)
    monkeypatch.setattr(pipeline, "SMALL_WORDS", 20)
    large = build_request(task="pipeline", train=sample, out="m")
    assert pipeline.small_recipe(large) == (large, None)


def test_the_pipelines_tokenizer_is_reused_only_for_the_same_data_and_settings(tmp_path, monkeypatch):
    from tagger.training import pipeline
    from tagger.training.request import DataSpec, TrainRequest

    trained: list[str] = []
    monkeypatch.setattr(pipeline.run, "train", lambda request, reporter, say: trained.append(request.train.path)
                        or open(request.out, "wb").close())
    train = tmp_path / "train.conllu"
    train.write_text("# text = A b\n1\tA\t_\t_\t_\t_\t0\troot\t_\t_\n2\tb\t_\t_\t_\t_\t1\tdep\t_\t_\n\n", encoding="utf-8")
    request = TrainRequest("pipeline", DataSpec(str(train)), None, str(tmp_path / "p.model"), max_epochs=3)
    said: list[str] = []
    for change in (None, None, "max_epochs", None, "data"):
        if change == "max_epochs":
            request = dataclasses.replace(request, max_epochs=40)
        if change == "data":
            train.write_text(train.read_text(encoding="utf-8").replace("A b", "A  b"), encoding="utf-8")
        pipeline.train_tokenizer(request, tmp_path, None, said.append)
    out = tmp_path / pipeline.TOKENIZER
    fresh, reused = f"pipeline: training the tokenizer {out}", f"pipeline: reusing the tokenizer {out}"
    again = f"pipeline: the tokenizer {out} was trained with other data or settings: training it again"
    assert said == [fresh, reused, again, reused, again] and len(trained) == 3


def test_the_pipelines_parser_reads_feats_only_where_a_tenth_of_the_words_have_some():
    from tagger.training.pipeline import FEATS_SHARE, parser_columns

    both = ["upos", "xpos", "feats"]
    assert parser_columns(both, (), 0.68) == ["tag_column=upos+feats"]  # English EWT
    assert parser_columns(both, (), 0.004) == ["tag_column=upos"] == parser_columns(["upos"], (), 1.0)  # Japanese GSD
    assert parser_columns(both, (), FEATS_SHARE) == ["tag_column=upos+feats"]
    assert parser_columns(both, ("tag_column=xpos",), 0.0) == []  # --set names it
