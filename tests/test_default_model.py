"""The shipped English pipeline (issue 37): ``tagger tag`` without ``--model``, ``--model en``,
``tagger.load()``, ``tagger info en``, names that are not files, and the file itself (size,
licence, format, scores on real EWT text)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tagger import resources
from tests.helpers import ROOT, assert_one_line_error, first_blocks, invoke, run

SHIPPED = ROOT / "tagger" / "resources" / "en.model"
RAW = "The cat sat on the mat. It didn't move for an hour!\n"


# ----------------------------------------------------------------------------- names (no torch)
def test_a_shipped_name_is_its_file_and_a_path_stays_a_path(tmp_path, monkeypatch):
    assert resources.model_path("en") == str(SHIPPED)
    assert resources.model_path("pos.tagger") == "pos.tagger"  # missing files are the readers' to word
    assert resources.model_path(tmp_path / "x.model") == str(tmp_path / "x.model")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "en").write_bytes(b"a file of that name")
    assert resources.model_path("en") == "en"  # a file of that name wins


def test_a_language_without_a_model_is_told_how_to_train_one():
    with pytest.raises(resources.TaggerError) as caught:
        resources.model_path("fr")
    text = str(caught.value)
    assert text.startswith("fr: no model for 'fr' ships with tagger (only en)")
    assert "tagger train --task pipeline" in text and "--out fr.model" in text and "\n" not in text


def test_a_missing_shipped_file_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(resources, "HERE", tmp_path)
    with pytest.raises(resources.TaggerError, match="is not installed"):
        resources.model_path("en")


# ----------------------------------------------------------------------------- the file
def test_the_shipped_file_is_small_current_licensed_and_described():
    from tagger import model_file

    assert SHIPPED.stat().st_size <= 25 * 2**20
    archive = model_file.read_archive(SHIPPED)
    # A format change must rebuild (bench/build_default_model.py --install) or upgrade it in the same change.
    assert archive["format_version"] == model_file.FORMAT_VERSION
    assert [stage["name"] for stage in archive["stages"]] == ["tokenizer", "skip_lstm", "transition_parser"]
    card = archive["meta"]["card"]
    assert card["EWT test, raw text (official CoNLL 2018 scorer, F1)"]["LAS"] > 75
    assert "tagger train --task pipeline" in card["training command"]
    licence = (SHIPPED.parent / resources.SHIPPED["en"].licence).read_text(encoding="utf-8")
    assert "Attribution-ShareAlike 4.0 International" in licence and "Leland Stanford Junior University" in licence


def test_the_package_ships_the_model_and_its_licence():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"resources/*.model"' in text and '"resources/*.txt"' in text


@pytest.mark.slow
def test_the_shipped_model_tags_ewt_test_well(tmp_path):
    """Gold tokens of 300 EWT test sentences, tagged and parsed as a user would, scored: the
    figures of its card within noise (the whole file: bench/build_default_model.py)."""
    gold = tmp_path / "gold.conllu"
    gold.write_text(first_blocks(ROOT.parent / "shared/data/ud-english-ewt/en_ewt-ud-test.conllu", 300)
                    if (ROOT.parent / "shared/data").exists() else (ROOT / "data/ewt-test.conllu").read_text())
    done = invoke("evaluate", "--model", "en", gold, "--json")
    assert done.exit_code == 0, done.stderr
    result = json.loads(done.stdout)
    columns = result["tagging"]["columns"]
    assert columns["upos"]["accuracy"] > 94 and columns["xpos"]["accuracy"] > 93
    assert result["parsing"]["all_words"]["las"] > 80


# ----------------------------------------------------------------------------- using it
def test_tag_without_a_model_reads_raw_text_with_the_shipped_one_and_says_so_once():
    done = run("tag", stdin=RAW.encode())
    assert done.returncode == 0, done.stderr
    out, err = done.stdout.decode(), done.stderr.decode()
    assert "# text = The cat sat on the mat." in out and "# text = It didn't move for an hour!" in out
    rows = [line.split("\t") for line in out.splitlines() if re.match(r"\d", line)]
    assert [r[1] for r in rows if "-" not in r[0]][:6] == ["The", "cat", "sat", "on", "the", "mat"]
    assert {r[1] for r in rows} >= {"did", "n't", "didn't"}  # a multiword token, split
    words = {r[1]: r for r in rows if "-" not in r[0]}
    assert words["cat"][3] == "NOUN" and words["sat"][3] == "VERB" and words["cat"][4] == "NN"
    assert words["sat"][7] == "root" and words["cat"][7] == "nsubj"
    assert [line for line in err.splitlines() if line.strip()] == [
        line for line in err.splitlines() if "shipped English model 'en'" in line] and err.count("'en'") == 1
    quiet = run("tag", "--quiet", stdin=RAW.encode())
    assert quiet.returncode == 0 and quiet.stderr == b"" and quiet.stdout == done.stdout
    named = invoke("tag", "--model", "en", stdin=RAW)
    assert named.exit_code == 0 and named.stdout == out and named.stderr == ""


def test_text_of_a_script_the_tokenizer_never_saw_is_tagged_with_a_warning():
    japanese = "これに不快感を示す住民はいましたが、現在はおさまっています。\n" * 2
    done = invoke("tag", "--model", "en", stdin=japanese)
    assert done.exit_code == 0 and done.stdout  # still tagged, as asked
    assert done.stderr.startswith("warning: <stdin>: 100% of its first 60 characters are ones this tokenizer never "
                                  "saw in training") and done.stderr.count("\n") == 1
    portuguese = "O gato dormiu ao sol. Não se mexeu durante uma hora.\n"  # Latin script: no warning
    assert invoke("tag", "--model", "en", stdin=portuguese).stderr == ""


def test_the_shipped_model_runs_without_torch_and_writes_what_torch_writes(tmp_path):
    """Every stage of the shipped pipeline is one the torch-free runtimes compute (the parser by
    tagger.runtime.parser): raw text in, no torch imported, and in fp32 the torch pipeline's bytes."""
    source = tmp_path / "in.txt"
    source.write_text(RAW + "\nDogs bark. Nobody in the village, least of all the mayor, knew where they had gone.\n",
                      encoding="utf-8")
    code = ("import sys, tagger; tagger.load(precision='fp32').tag_file(sys.argv[1], sys.argv[2]); "
            "assert 'torch' not in sys.modules, 'torch imported'")
    done = subprocess.run([sys.executable, "-c", code, str(source), str(tmp_path / "fast.conllu")], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    import tagger

    tagger.load(engine="torch", precision="fp32").tag_file(source, tmp_path / "torch.conllu")
    assert (tmp_path / "fast.conllu").read_bytes() == (tmp_path / "torch.conllu").read_bytes()
    assert "\tnsubj\t" in (tmp_path / "fast.conllu").read_text(encoding="utf-8")


def test_tag_with_a_language_that_has_no_model_is_one_line():
    assert_one_line_error(invoke("tag", "--model", "de", stdin=RAW), "no model for 'de'", "tagger train --task pipeline")


def test_load_and_load_en_are_the_same_model():
    import tagger

    default, named = tagger.load(), tagger.load("en")
    assert default.path == named.path == str(SHIPPED)
    assert default.tag_text(RAW) == named.tag_text(RAW)
    first = default.tag_text("Dogs bark.")[0]
    assert first["words"] == ["Dogs", "bark", "."] and first["upos"] == ["NOUN", "VERB", "PUNCT"]


def test_info_en_shows_scores_and_the_training_command():
    done = invoke("info", "en")
    assert done.exit_code == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "EWT test, raw text" in text and "LAS" in text and "tagger train --task pipeline" in text
    assert "CC BY-SA 4.0" in text


@pytest.mark.skipif(not __import__("tagger.modules.fused", fromlist=["_"]).f32_kernel(), reason="no C kernels built")
def test_the_shipped_tokenizer_in_float16_runs_in_c_as_numpy_runs_it():
    """The shipped model keeps its tokenizer in float16: the C runtime reads it (no fall back to
    torch) and labels as the numpy runtime."""
    from tagger import archive
    from tagger.runtime import tokenizer
    from tagger.runtime.c_tokenizer import CTokenizer
    from tagger.runtime.numpy_tokenizer import NumpyTokenizer
    from tagger.tokenization.labels import normalise

    stage = archive.read(resources.model_path(resources.DEFAULT))["stages"][0]
    assert str(stage["state_dict"]["rnn.weight_ih_l0"].dtype) == "float16"
    fast = tokenizer.from_archive(stage)
    config = tokenizer.config_from_dict(tokenizer.TokenizerConfig, stage["config"], from_file=True)
    text = normalise(RAW * 3)
    assert isinstance(fast, CTokenizer) and fast.label(text) == NumpyTokenizer(config, stage["vocabs"],
                                                                                stage["state_dict"]).label(text)
