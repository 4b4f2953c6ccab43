"""``tagger evaluate`` and ``tagger convert`` through click's runner and as real processes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tagger import formats
from tagger.formats.placement import map_columns
from tagger.formats.supertags import misc_get, misc_set, supertags_from_conll, supertags_into_conll
from tagger.cli.main import cli
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EWT_DEV = DATA / "ud-english-ewt" / "en_ewt-ud-dev.conllu"
AUTO = DATA / "ccgbank-auto-samples" / "wsj_0001.auto"

GOLD = """\
# sent_id = 1
1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_
3\tbarked\tbark\tVERB\tVBD\t_\t0\troot\t_\tSpaceAfter=No
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

# sent_id = 2
1\tRun\trun\tVERB\tVB\t_\t0\troot\t_\t_

"""

# Word 2 mistagged (VERB), word 4 attached to 2, word 2 labelled nsubj:pass (right under LAS).
PRED = """\
1\tThe\t_\tDET\tDT\t_\t2\tdet\t_\t_
2\tdog\t_\tVERB\tNN\t_\t3\tnsubj:pass\t_\t_
3\tbarked\t_\tVERB\tVBD\t_\t0\troot\t_\t_
4\t.\t_\tPUNCT\t.\t_\t2\tpunct\t_\t_

1\tRun\t_\tNOUN\tVB\t_\t0\tnsubj\t_\t_

"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    gold, pred = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold.write_text(GOLD, encoding="utf-8")
    pred.write_text(PRED, encoding="utf-8")
    return gold, pred


def run(*args: str | os.PathLike, stdin: str | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=stdin)


def tagger_process(*args: str | os.PathLike, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run the installed ``tagger`` script (or ``python -m tagger`` without one)."""
    exe = shutil.which("tagger")
    command = [exe] if exe else [sys.executable, "-m", "tagger"]
    return subprocess.run(
        command + [str(a) for a in args], input=stdin, capture_output=True, text=True, timeout=120
    )


def one_error_line(stderr: str, file: Path | str) -> str:
    """Assert ``stderr`` is exactly one ``error: FILE:LINE: message`` or ``error: FILE: message`` line."""
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert re.match(rf"error: {re.escape(str(file))}:(\d+:)? \S", lines[0]), lines[0]
    return lines[0]


# --- evaluate --------------------------------------------------------------------------------


def test_evaluate_table(files):
    gold, pred = files
    result = run("evaluate", "--gold", gold, "--pred", pred)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "tagging (upos)" in out and "token accuracy" in out
    assert "60.00" in out  # 3 of 5 tags right
    assert "UAS" in out and "LAS" in out and "80.00" in out  # heads: 4 of 5 right
    assert "most confused" in out and "NOUN" in out
    assert result.stderr == ""


def test_evaluate_json(files):
    gold, pred = files
    result = run("evaluate", "--gold", gold, "--pred", pred, "--json", "--train", gold)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["column"] == "upos"
    tagging, parsing = data["tagging"], data["parsing"]
    assert (tagging["tokens"], tagging["correct"], tagging["accuracy"]) == (5, 3, 60.0)
    assert tagging["unseen"] == {"tokens": 0, "correct": 0, "accuracy": None}
    assert tagging["sentence_accuracy"] == 0.0
    assert {"gold": "NOUN", "pred": "VERB", "count": 1} in tagging["confusions"]
    # all words: heads 4/5, head+label 3/5 (Run: root vs nsubj); no punct: 3/4 words, 2/4 LAS.
    assert parsing["all_words"]["uas"] == 80.0 and parsing["all_words"]["las"] == 60.0
    assert parsing["no_punct"]["words"] == 4 and parsing["no_punct"]["uas"] == 100.0
    assert parsing["no_punct"]["las"] == 75.0


def test_evaluate_shows_nonprojective_arcs_when_the_gold_has_some(files, tmp_path):
    gold = tmp_path / "np.conllu"
    rows = [("A", "DET", 2, "det"), ("hearing", "NOUN", 4, "nsubj:pass"), ("is", "AUX", 4, "aux:pass"),
            ("scheduled", "VERB", 0, "root"), ("on", "ADP", 7, "case"), ("the", "DET", 7, "det"),
            ("issue", "NOUN", 2, "nmod"), ("today", "NOUN", 4, "obl:tmod")]
    gold.write_text("".join(f"{i}\t{w}\t_\t{u}\t_\t_\t{h}\t{r}\t_\t_\n" for i, (w, u, h, r) in enumerate(rows, 1)) + "\n",
                    encoding="utf-8")
    pred = tmp_path / "np-pred.conllu"
    pred.write_text(gold.read_text(encoding="utf-8").replace("\t2\tnmod", "\t4\tnmod"), encoding="utf-8")
    out = run("evaluate", "--gold", gold, "--pred", pred).stdout
    assert "non-projective arcs" in out and "0/1" in out
    data = json.loads(run("evaluate", "--gold", gold, "--pred", gold, "--json").stdout)
    assert data["parsing"]["nonprojective"]["recall"] == 100.0
    assert "non-projective" not in run("evaluate", "--gold", files[0], "--pred", files[1]).stdout


def test_evaluate_column_and_task(files):
    gold, pred = files
    data = json.loads(run("evaluate", "-g", gold, "-p", pred, "--column", "xpos", "--json").stdout)
    assert data["column"] == "xpos" and data["tagging"]["accuracy"] == 100.0
    data = json.loads(run("evaluate", "-g", gold, "-p", pred, "--task", "dep", "--json").stdout)
    assert "tagging" not in data and data["column"] is None and "parsing" in data
    data = json.loads(run("evaluate", "-g", gold, "-p", pred, "--task", "pos", "--json").stdout)
    assert "parsing" not in data and data["column"] == "upos"


def test_evaluate_pred_from_stdin(files):
    gold, _ = files
    result = run("evaluate", "--gold", gold, "--pred", "-", "--json", "--pred-format", "conllu", stdin=PRED)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tagging"]["correct"] == 3


def test_evaluate_word_mismatch(files, tmp_path):
    gold, _ = files
    bad = tmp_path / "bad.conllu"
    bad.write_text(PRED.replace("\tdog\t", "\tcat\t"), encoding="utf-8")
    result = run("evaluate", "--gold", gold, "--pred", bad)
    assert result.exit_code == 1
    line = one_error_line(result.stderr, bad)
    # other words than the gold file's: scored as system tokenisation, whose texts must be the same
    assert line.startswith(f"error: {bad}:2: ") and "'cat'" in line and "'dog'" in line and str(gold) in line
    assert result.stdout == ""


def test_evaluate_sentence_count_mismatch(files, tmp_path):
    gold, _ = files
    short = tmp_path / "short.conllu"
    short.write_text(PRED.split("\n\n")[0] + "\n\n", encoding="utf-8")
    result = run("evaluate", "--gold", gold, "--pred", short)
    assert result.exit_code == 1
    assert "ends after 1 sentence," in one_error_line(result.stderr, short)


def test_evaluate_missing_file(files, tmp_path):
    gold, _ = files
    missing = tmp_path / "missing.conllu"
    result = run("evaluate", "--gold", gold, "--pred", missing)
    assert result.exit_code == 1
    one_error_line(result.stderr, missing)


def test_evaluate_nothing_to_score(files, tmp_path):
    gold, _ = files
    plain = tmp_path / "plain.txt"
    plain.write_text("The dog barked .\nRun\n", encoding="utf-8")
    result = run("evaluate", "--gold", gold, "--pred", plain, "--pred-format", "text")
    assert result.exit_code == 1
    assert "nothing to score" in one_error_line(result.stderr, plain)
    result = run("evaluate", "--gold", gold, "--pred", plain, "--pred-format", "text", "--task", "dep")
    assert "predicted file has no heads" in one_error_line(result.stderr, plain)


def test_evaluate_usage_errors(files):
    gold, pred = files
    assert run("evaluate").exit_code == 2
    assert run("evaluate", "--gold", gold).exit_code == 2
    assert run("evaluate", "--gold", gold, "--pred", pred, "--model", "m.tagger", "x.conllu").exit_code == 2
    assert run("evaluate", "--gold", gold, "--pred", pred, "--beta", "0.1").exit_code == 2
    result = run("evaluate", "--help")
    assert result.exit_code == 0 and "tagger evaluate --gold" in result.stdout


def test_evaluate_missing_model_is_a_clear_error(files):
    gold, _ = files
    result = run("evaluate", "--model", "m.tagger", gold)
    assert result.exit_code == 1
    assert "no such model file" in one_error_line(result.stderr, "m.tagger")


def test_evaluate_ccg_against_converted_conllu(tmp_path):
    if not AUTO.exists():
        pytest.skip(f"{AUTO} not available")
    converted = tmp_path / "wsj_0001.conllu"
    assert run("convert", "--to", "conllu", AUTO, "-o", converted).exit_code == 0
    result = run("evaluate", "--gold", AUTO, "--pred", converted, "--task", "ccg", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["column"] == "supertag" and data["tagging"]["accuracy"] == 100.0


def test_evaluate_ccg_files_score_the_supertags_not_the_pos_copied_from_the_input(tmp_path):
    """A supertagger's pipe output keeps its input's POS: the supertags are scored, with a note;
    its ``tagged`` output is scored as the gold column it matches; CCG categories show whole."""
    gold, pred, tagged, conll = (tmp_path / name for name in ("gold.pipe", "pred.pipe", "pred.tagged", "pred.conllu"))
    gold.write_text("The|DT|NP[nb]/N dog|NN|N barked|VBD|S[dcl]\\NP\nRun|VB|S[b]\n")
    pred.write_text("The|DT|NP[nb]/N dog|NN|N barked|VBD|S[pss]\\NP\nRun|VB|S[b]\n")
    done = run("evaluate", "--gold", gold, "--pred", pred, "--json")
    assert done.exit_code == 0, done.output
    assert (json.loads(done.stdout)["column"], json.loads(done.stdout)["tagging"]["correct"]) == ("supertag", 3)
    assert "its xpos is the gold's own in every word" in done.stderr
    done = run("evaluate", "--gold", gold, "--pred", pred, "--column", "xpos", "--json")
    assert json.loads(done.stdout)["tagging"]["accuracy"] == 100.0
    done = run("evaluate", "--gold", gold, "--pred", pred)
    assert "NP[nb]/N" in done.stdout and "S[pss]\\NP" in done.stdout  # not read as rich markup
    tagged.write_text("The/NP[nb]\\/N dog/N barked/S[pss]\\NP\nRun/S[b]\n")
    done = run("evaluate", "--gold", gold, "--pred", tagged, "--json")
    assert (json.loads(done.stdout)["column"], json.loads(done.stdout)["tagging"]["correct"]) == ("supertag", 3)
    assert "the gold's column it matches best" in done.stderr
    assert run("convert", "--to", "conllu", gold, "-o", conll).exit_code == 0  # then supertags into XPOS
    lines = [line.split("\t") for line in conll.read_text().splitlines()]
    conll.write_text("\n".join("\t".join(f[:4] + [f[9].split("=", 1)[1].split("|")[0]] + f[5:9] + ["_"]) if len(f) == 10
                                else "\t".join(f) for f in lines) + "\n")
    done = run("evaluate", "--gold", gold, "--pred", conll, "--json")
    assert json.loads(done.stdout)["column"] == "xpos" and "--supertag-in xpos" in done.stderr
    done = run("evaluate", "--gold", gold, "--pred", conll, "--supertag-in", "xpos", "--json")
    assert (json.loads(done.stdout)["column"], json.loads(done.stdout)["tagging"]["correct"]) == ("supertag", 4)


def test_a_parsers_output_says_its_tags_are_the_gold_copied(files, tmp_path):
    gold, _ = files
    parsed = tmp_path / "parsed.conllu"  # the gold's tags, other heads: what a parser given gold tags writes
    parsed.write_text(GOLD.replace("4\t.\t.\tPUNCT\t.\t_\t3\tpunct", "4\t.\t.\tPUNCT\t.\t_\t2\tpunct"),
                      encoding="utf-8")
    done = run("evaluate", "--gold", gold, "--pred", parsed, "--json")
    assert done.exit_code == 0 and json.loads(done.stdout)["parsing"]["all_words"]["uas"] == 80.0
    assert "its upos is the gold's own in every word (copied from the input by a parser?): its 100% says nothing " \
        "of a tagger" in done.stderr
    assert run("evaluate", "--gold", gold, "--pred", gold).stderr == ""  # a file against itself: nothing to say


# --- real processes --------------------------------------------------------------------------


def test_evaluate_on_ewt_dev_table_and_subprocess_json(tmp_path):
    if not EWT_DEV.exists():
        pytest.skip(f"{EWT_DEV} not available")
    # Predicted file: every 10th word's UPOS replaced by X, so accuracy is known exactly.
    lines, k, changed = [], 0, 0
    for line in EWT_DEV.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            k += 1
            if k % 10 == 0 and cols[3] != "X":
                cols[3], changed = "X", changed + 1
            line = "\t".join(cols)
        lines.append(line)
    pred = tmp_path / "pred.conllu"
    pred.write_text("\n".join(lines) + "\n", encoding="utf-8")

    table = run("evaluate", "--gold", EWT_DEV, "--pred", pred, "--top", "3")
    assert table.exit_code == 0, table.output
    assert "token accuracy" in table.stdout and "UAS" in table.stdout
    result = tagger_process("evaluate", "--gold", EWT_DEV, "--pred", pred, "--json")
    assert result.returncode == 0 and "heads and relations are the gold's own in every word" in result.stderr  # (a tagger's)
    data = json.loads(result.stdout)
    assert data["tagging"]["tokens"] == k == 25147
    assert data["tagging"]["correct"] == k - changed
    assert data["parsing"]["all_words"]["uas"] == 100.0


def test_errors_subprocess(files, tmp_path):
    gold, _ = files
    bad = tmp_path / "bad.conllu"
    bad.write_text(PRED.replace("\tbarked\t", "\tbarks\t"), encoding="utf-8")
    result = tagger_process("evaluate", "--gold", gold, "--pred", bad)
    assert result.returncode == 1
    assert "'barks'" in one_error_line(result.stderr, bad)


def test_convert_auto_to_conllu_and_back(tmp_path):
    if not AUTO.exists():
        pytest.skip(f"{AUTO} not available")
    original = list(formats.read(AUTO))
    expected_pipe = run("convert", "--to", "pipe", AUTO).stdout
    assert expected_pipe.startswith("Pierre|NNP|N/N Vinken|NNP|N ,|,|,")
    for where in ("misc", "xpos"):
        out = tmp_path / f"{where}.conllu"
        args = ("convert", "--to", "conllu", "--supertag-in", where, AUTO, "-o", out)
        if where == "misc":  # once as a real process
            result = tagger_process(*args)
            assert result.returncode == 0 and result.stdout == "", result.stderr
        else:
            assert run(*args).exit_code == 0
        back = [supertags_from_conll(s, where) for s in formats.read(out, "conllu")]
        assert [s.words for s in back] == [s.words for s in original]
        assert [s.columns["supertag"] for s in back] == [s.columns["supertag"] for s in original]
        assert [s.columns["xpos"] for s in back] == [s.columns["xpos"] for s in original]
        # and back to the pipe format through the CLI
        pipe = run("convert", "--to", "pipe", "--supertag-in", where, out)
        assert pipe.exit_code == 0 and pipe.stdout == expected_pipe


# --- convert ---------------------------------------------------------------------------------


def test_convert_conllu_to_itself_is_byte_identical(files):
    gold, _ = files
    result = run("convert", "--to", "conllu", gold)
    assert result.exit_code == 0 and result.stdout == GOLD


def test_convert_conllu_to_tagged_and_pipe(files):
    gold, _ = files
    assert run("convert", "--to", "tagged", gold).stdout == "The/DT dog/NN barked/VBD ./.\nRun/VB\n"
    assert run("convert", "--to", "pipe", gold).stdout.splitlines()[0] == "The|DT|_ dog|NN|_ barked|VBD|_ .|.|_"


def test_convert_to_one_tag_a_word_says_what_it_leaves_out_and_column_chooses(tmp_path):
    if not AUTO.exists():
        pytest.skip(f"{AUTO} not available")
    done = run("convert", "--to", "tagged", AUTO)
    assert done.exit_code == 0 and done.stdout.startswith("Pierre/NNP Vinken/NNP ,/, ")
    assert "its xpos; its supertag is left out (--column supertag writes that)" in done.stderr
    done = run("convert", "--to", "tagged", "--column", "supertag", AUTO)
    assert done.exit_code == 0 and done.stdout.startswith("Pierre/N\\/N Vinken/N ,/, ") and not done.stderr
    assert "no such column (it has: xpos, supertag)" in run("convert", "--to", "pos", "--column", "upos", AUTO).stderr
    assert "--to conllu writes every column" in run("convert", "--to", "conllu", "--column", "supertag", AUTO).stderr
    conll = tmp_path / "wsj_0001.conllu"  # supertags in MISC: a column like any other
    assert run("convert", "--to", "conllu", AUTO, "-o", conll).exit_code == 0
    done = run("convert", "--to", "tagged", "--column", "supertag", conll)
    assert done.exit_code == 0 and done.stdout.startswith("Pierre/N\\/N Vinken/N ,/, "), done.output
    assert "its supertag is left out" in run("convert", "--to", "tagged", conll).stderr


def test_convert_to_conllx_says_how_many_multiword_tokens_and_empty_nodes_it_leaves_out(tmp_path):
    source = tmp_path / "mwt.conllu"
    source.write_text("# text = do gato\n1-2\tdo\t_\t_\t_\t_\t_\t_\t_\t_\n1\tde\tde\tADP\t_\t_\t3\tcase\t_\t_\n"
                      "2\to\to\tDET\t_\t_\t3\tdet\t_\t_\n3\tgato\tgato\tNOUN\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    done = run("convert", "--to", "conllx", source)
    assert done.exit_code == 0 and [line.split("\t")[1] for line in done.stdout.splitlines() if line] == ["de", "o", "gato"]
    assert done.stderr == (f"note: {source}: CoNLL-X has no multiword tokens: their 1 lines (IDs such as 3-4) are left "
                           "out, their words kept\n")
    assert run("convert", "--to", "conllu", source).stderr == ""
    empty = tmp_path / "empty.conllu"  # and of empty nodes (enhanced UD's 8.1 lines)
    empty.write_text("1\tgo\tgo\tVERB\t_\t_\t0\troot\t0:root\t_\n1.1\tyou\tyou\tPRON\t_\t_\t_\t_\t1:nsubj\t_\n\n",
                     encoding="utf-8")
    done = run("convert", "--to", "conllx", empty)
    assert done.exit_code == 0 and [line.split("\t")[0] for line in done.stdout.splitlines() if line] == ["1"]
    assert done.stderr == f"note: {empty}: CoNLL-X has no empty nodes: their 1 lines (IDs such as 8.1, with the " \
                          "enhanced graph in DEPS) are left out\n"


def test_convert_of_plain_text_says_nothing_of_tagging_it(tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("Hello, world.\nIt works!\n", encoding="utf-8")
    done = run("convert", "--to", "conllx", text)
    assert done.exit_code == 0 and done.stderr == "" and "Hello,\t" in done.stdout


def test_convert_errors(tmp_path):
    missing = tmp_path / "missing.auto"
    result = run("convert", "--to", "conllu", missing)
    assert result.exit_code == 1
    one_error_line(result.stderr, missing)
    assert run("convert", "--to", "nonsense", missing).exit_code == 2
    if AUTO.exists():
        result = run("convert", "--to", "conllx", AUTO)
        assert "use --supertag-in xpos" in one_error_line(result.stderr, AUTO)


def test_misc_helpers_and_mapping():
    assert misc_set("_", "supertag", "N/N") == "supertag=N/N"
    assert misc_set("SpaceAfter=No", "supertag", "N") == "SpaceAfter=No|supertag=N"
    assert misc_set("SpaceAfter=No|supertag=N", "supertag", "_") == "SpaceAfter=No"
    assert misc_get("SpaceAfter=No|supertag=S[dcl]\\NP", "supertag") == "S[dcl]\\NP"
    assert misc_get("_", "supertag") == "_"
    s = Sentence(["a", "b"], {"xpos": ["DT", "NN"], "supertag": ["NP/N", "N"], "misc": ["_", "SpaceAfter=No"]})
    into = supertags_into_conll(s, "misc")
    assert "supertag" not in into.columns and into.columns["misc"] == ["supertag=NP/N", "SpaceAfter=No|supertag=N"]
    assert supertags_from_conll(into, "misc").columns == {**s.columns}
    into_x = supertags_into_conll(s, "xpos")
    assert into_x.columns["xpos"] == ["NP/N", "N"] and into_x.columns["misc"] == ["xpos=DT", "SpaceAfter=No|xpos=NN"]
    assert supertags_from_conll(into_x, "xpos").columns == {**s.columns}
    conllx = supertags_into_conll(s, "xpos", "conllx")
    assert conllx.columns["upos"] == ["DT", "NN"] and conllx.columns["xpos"] == ["NP/N", "N"]
    back = supertags_from_conll(conllx, "xpos", "conllx")
    assert back.columns["supertag"] == ["NP/N", "N"] and back.columns["xpos"] == ["DT", "NN"]
    with pytest.raises(TaggerError):
        supertags_into_conll(s, "misc", "conllx")
    # one-POS-column targets fall back to UPOS
    upos_only = Sentence(["a"], {"upos": ["DET"]})
    assert map_columns(upos_only, "conllu", "tagged", "misc").columns["xpos"] == ["DET"]
