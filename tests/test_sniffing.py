"""Input reading and format detection as a user meets it: text holding tabs, CoNLL-U with a long
comment header, `tagger tag` output piped on, empty input, and the CCGbank format's name."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from tagger import formats, model_file
from tagger.cli.main import cli
from tagger.config import build_config
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats.base import peek
from tagger.models import MODELS, TASK_MODELS
from tagger.models.skip_lstm import PRESETS, SkipLSTMTagger, TaggerConfig

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
ROW = "{}\t{}\t_\tNOUN\tNN\t_\t0\troot\t_\t_"


def run(*args: str | os.PathLike, stdin: str | bytes | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=stdin)


def words(text: str) -> list[list[str]]:
    return [s.words for s in formats.read(io.BytesIO(text.encode()), "conllu")]


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    """An untrained tagger (what it predicts does not matter here, only what it reads)."""
    torch.manual_seed(0)
    train = [Sentence("the dog runs".split(), {"upos": ["DET", "NOUN", "VERB"]})]
    config = build_config(TaggerConfig, PRESETS, "fast", overrides=["layers=1", "hidden=8", "word_dim=8"])
    path = tmp_path_factory.mktemp("model") / "toy.tagger"
    model_file.save(path, SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, train)).eval(), {})
    return path


@pytest.fixture(scope="module")
def parser(tmp_path_factory) -> Path:
    """An untrained dependency parser (the second stage of the issue's pipeline)."""
    torch.manual_seed(0)
    cls = MODELS[TASK_MODELS["dep"]]
    sizes = ["hidden=8", "word_dim=8", "tag_dim=8", "label_dim=8", "precompute=10"]
    config = build_config(cls.Config, cls.PRESETS, cls.default_preset, None, sizes)
    path = tmp_path_factory.mktemp("model") / "dep.model"
    model_file.save(path, cls(config, cls.vocabs_from(config, list(formats.read(DATA / "sample.conllu")))).eval(), {})
    return path


@pytest.fixture
def long_header(shared_data, tmp_path) -> Path:
    """Three EWT dev sentences whose file opens with a 30-line document header (as some UD
    treebanks do), the first sentence's own comments after it."""
    with open(shared_data / "ud-english-ewt" / "en_ewt-ud-dev.conllu", encoding="utf-8") as f:
        blocks = f.read(20_000).split("\n\n")[:3]
    header = "".join(f"# meta{i} = document metadata line {i}\n" for i in range(30))
    path = tmp_path / "long-header.conllu"
    path.write_text(header + "\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return path


# --- item 4: text holding tabs is text; columns need one token per line in blocks ---------------


@pytest.mark.parametrize("text", [
    "Hello\tworld\tagain\n",                              # the example
    "Hello\tworld\nGood\tbye\n",                          # consistent columns, but no blank-line blocks
    "Hello\tworld\n\nGood\tbye\n\n",                      # blocks of one line each
    "1\tThe cat sat .\n2\tA dog barked .\n\n",            # id<TAB>sentence: fields hold spaces
    "I\tam\t5\nYou\tare\t6\n",                            # looked like Malt-TAB (dp) before
    "a\tb\tc\nd\te\n\nf\tg\n\n",                          # ragged column counts
])
def test_text_holding_tabs_keeps_every_word_and_says_so(text, capsys):
    fmt, note = formats.guess_format(None, text)
    assert fmt == "text" and "plain text" in note and "columns" in note
    sentences = list(formats.read(io.BytesIO(text.encode())))
    assert [s.words for s in sentences] == [line.split() for line in text.splitlines() if line.strip()]
    err = capsys.readouterr().err
    assert err.startswith("note: <stdin>: read as plain text") and err.count("\n") == 1


def test_tab_free_text_is_read_without_a_note(capsys):
    assert formats.guess_format(None, "Hello world again\n") == ("text", None)
    assert [s.words for s in formats.read(io.BytesIO(b"Hello world\n"))] == [["Hello", "world"]]
    assert capsys.readouterr().err == ""


def test_column_files_are_still_detected_and_the_layout_guess_is_noted(capsys):
    tsv = (DATA / "sample.tsv").read_text()
    fmt, note = formats.guess_format(None, tsv)
    assert fmt == "columns" and "column 1" in note and "--columns" in note
    sentences = list(formats.read(io.BytesIO(tsv.encode())))
    assert len(sentences) == 8 and sentences[0].words[:3] == ["The", "cat", "sat"]
    assert capsys.readouterr().err.startswith("note: <stdin>: read as columns: the word in column 1")
    given = list(formats.read(io.BytesIO(tsv.encode()), columns="form=1,upos=2"))  # layout given: no note
    assert given[0].columns["upos"][:2] == ["DET", "NOUN"] and capsys.readouterr().err == ""
    dp = (DATA / "sample.dp").read_text()
    assert formats.guess_format(None, dp) == ("dp", None)
    one_sentence = b"a\tDT\nb\tNN\n\n"  # on stdin, its one block ends with the input's last line
    assert [s.words for s in formats.read(io.BytesIO(one_sentence), columns="form=1")] == [["a", "b"]]
    assert [s.words for s in formats.read(io.TextIOWrapper(io.BytesIO(one_sentence)))] == [["a", "b"]]
    assert "read as columns" in capsys.readouterr().err
    long_sentence = "".join(f"w{i}\tNN\n" for i in range(40)) + "\n"  # first block longer than the peek
    assert formats.guess_format(None, long_sentence)[0] == "columns"
    _, replay = peek(io.BytesIO(long_sentence.encode() + b"x\tNN\n\n"))
    assert [s.words[-1] for s in formats.read(replay, "columns", columns="form=1")] == ["w39", "x"]


def test_cli_tag_reads_tab_holding_text_as_text(toy):
    result = run("tag", "--model", toy, stdin="Hello\tworld\tagain\n")
    assert result.exit_code == 0, result.output
    assert words(result.stdout) == [["Hello", "world", "again"]]
    assert result.stderr.startswith("note: <stdin>: read as plain text") and result.stderr.count("\n") == 1
    as_columns = run("tag", "--model", toy, "--input-format", "columns", "--columns", "form=1",
                     stdin="Hello\tworld\tagain\n")
    assert as_columns.exit_code == 0 and words(as_columns.stdout) == [["Hello"]] and as_columns.stderr == ""
    unlaid = run("tag", "--model", toy, "--input-format", "columns", stdin="Hello\tworld\tagain\n")  # issue 31
    assert unlaid.exit_code == 1 and unlaid.stderr.startswith("error: <stdin>:1: reading the 'columns' format needs")


# --- item 6: comment headers of any reasonable length; tag output piped on ------------------------


@pytest.mark.parametrize("comments", [0, 20, 30, 500])
def test_conllu_is_detected_past_a_long_comment_header(comments):
    text = "".join(f"# c{i} = x\n" for i in range(comments)) + ROW.format(1, "a") + "\n\n" + ROW.format(1, "b") + "\n\n"
    assert formats.guess_format(None, text) == ("conllu", None)
    lines, replay = peek(io.BytesIO(text.encode()))
    assert formats.detect_format(None, "\n".join(lines)) == "conllu"
    assert [s.words for s in formats.read(replay)] == [["a"], ["b"]]


def test_a_mostly_conllu_stream_is_read_as_conllu_so_its_bad_line_is_reported():
    text = f"{ROW.format(1, 'a')}\n{ROW.format(2, 'b')}\n\n{ROW.format('x', 'c')}\n\n{ROW.format(1, 'd')}\n\n"
    assert formats.detect_format(None, text) == "conllu"
    with pytest.raises(TaggerError) as info:
        list(formats.read(io.BytesIO(text.encode())))
    assert info.value.line == 4 and "bad ID 'x'" in info.value.message


def test_ewt_with_a_30_line_header_on_stdin_is_conllu(long_header, toy):
    expected = [s.words for s in formats.read(long_header, "conllu")]
    data = long_header.read_bytes()
    assert [s.words for s in formats.read(io.BytesIO(data))] == expected
    tagged = run("tag", "--model", toy, stdin=data)
    assert tagged.exit_code == 0 and tagged.stderr == "", tagged.output
    assert words(tagged.stdout) == expected
    assert tagged.stdout.startswith("# meta0 = document metadata line 0\n")  # comments kept byte for byte
    again = run("tag", "--model", toy, stdin=tagged.stdout)  # tag output piped into tag
    assert again.exit_code == 0 and again.stdout == tagged.stdout and again.stderr == ""
    scored = run("evaluate", "--gold", long_header, "--pred", "-", "--json", stdin=tagged.stdout)
    assert scored.exit_code == 0, scored.output
    assert '"tokens": ' in scored.stdout and sum(map(len, expected)) > 0


def test_tag_output_formats_are_read_back_as_what_they_are(long_header, toy):
    expected = [s.words for s in formats.read(long_header)]
    for output, fmt in (("conllu", "conllu"), ("conllx", "conllu"), ("tagged", "tagged"), ("pipe", "pipe")):
        out = run("tag", "--model", toy, "--output-format", output, long_header).stdout
        assert formats.detect_format(None, out) == fmt, output
        assert [s.words for s in formats.read(io.BytesIO(out.encode()))] == expected, output


def test_word_pos_lines_are_ccs_supertagger_input_not_plain_text(toy):
    """``word|POS`` tokens (what C&C's supertagger reads) are the pipe format without supertags:
    the words are tagged, not ``What|WP`` as a word."""
    content = "What|WP if|IN Google|NNP grew|VBD ?|.\nA|DT dog|NN\n"
    assert formats.detect_format(None, content) == "pipe"
    sentences = list(formats.read(io.BytesIO(content.encode())))
    assert [(s.words, list(s.columns)) for s in sentences] == [
        (["What", "if", "Google", "grew", "?"], ["xpos"]), (["A", "dog"], ["xpos"])]
    assert sentences[1].columns["xpos"] == ["DT", "NN"]
    done = run("tag", "--model", toy, "--output-format", "tagged", stdin=content)
    assert done.exit_code == 0, done.output
    assert [token.rsplit("/", 1)[0] for token in done.stdout.split()] == ["What", "if", "Google", "grew", "?", "A", "dog"]
    with pytest.raises(TaggerError, match=re.escape("'if' is not word|POS, as the first")):
        list(formats.read(io.BytesIO(b"What|WP if|IN\nWhat|WP if\n"), "pipe"))
    with pytest.raises(TaggerError, match=re.escape("'What|WP|NP' is not word|POS, as the first")):
        list(formats.read(io.BytesIO(b"What|WP if|IN\nWhat|WP|NP if|IN|PP\n")))  # either order: refused
    with pytest.raises(TaggerError, match=re.escape("'if|IN' is not word|POS|supertag")):
        list(formats.read(io.BytesIO(b"What|WP|NP if|IN\n")))


def test_jsonl_and_msuper_output_are_refused_as_input_saying_what_they_are(toy, tmp_path):
    for fmt in ("jsonl", "msuper"):
        out = tmp_path / f"out.{fmt}"
        assert run("tag", "--model", toy, "--output-format", fmt, "-o", out, stdin="The cat sat .\nA dog .\n").exit_code == 0
        done = run("evaluate", "--gold", DATA / "sample.conllu", "--pred", out)
        assert done.exit_code == 1 and f"{out}: this is tagger tag's {fmt} output" in done.stderr, done.stderr
        assert "Traceback" not in done.output and len(done.stderr.strip().splitlines()) == 1


def test_pipeline_on_real_stdin(long_header, toy, parser):
    """`tagger tag --model pos F | tagger tag --model dep` with a real pipe, as the issue ran it."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    tag = [sys.executable, "-m", "tagger", "tag", "--threads", "1", "--model"]
    first = subprocess.Popen([*tag, str(toy), str(long_header)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env, cwd=ROOT)
    second = subprocess.run([*tag, str(parser)], stdin=first.stdout, capture_output=True, env=env, cwd=ROOT, timeout=120)
    first.stdout.close()
    assert first.wait(timeout=120) == 0 and second.returncode == 0, second.stderr.decode()
    assert second.stderr == b"" and first.stderr.read() == b""
    parsed = list(formats.read(io.BytesIO(second.stdout), "conllu"))
    assert [s.words for s in parsed] == [s.words for s in formats.read(long_header)]
    assert all(s.has("head") and s.has("upos") for s in parsed)


# --- .conll: an extension both CoNLL dialects are written with ------------------------------------

#: A CoNLL-U sentence with what CoNLL-X has not: comments, a multiword token, an empty node, DEPS, MISC.
CONLLU_SENTENCE = (
    "# sent_id = s1\n"
    "# text = The dog's ran.\n"
    "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t2:det\t_\n"
    "2-3\tdog's\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "2\tdog\tdog\tNOUN\tNN\t_\t4\tnsubj\t4:nsubj\t_\n"
    "3\t's\tbe\tAUX\tVBZ\t_\t4\taux\t4:aux\t_\n"
    "4\tran\trun\tVERB\tVBN\t_\t0\troot\t0:root\tSpaceAfter=No\n"
    "4.1\tran\trun\tVERB\tVBN\t_\t_\t_\t4:conj\t_\n"
    "5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t4:punct\t_\n\n"
)
#: A CoNLL-X sentence with PHEAD and PDEPREL.
CONLLX_SENTENCE = ("1\tThe\t_\tArt\tDT\t_\t2\tdet\t2\tdet\n2\tdog\t_\tN\tNN\t_\t0\troot\t0\troot\n"
                   "3\t.\t_\tPunc\t.\t_\t2\tpunct\t2\tpunct\n\n")


def _conllu_rows(*rows: str) -> str:
    return "".join(f"{i}\t{row}\n" for i, row in enumerate(rows, 1)) + "\n"


@pytest.mark.parametrize("text, fmt", [
    (CONLLU_SENTENCE, "conllu"),
    ("# sent_id = 1\n" + ROW.format(1, "a") + "\n\n", "conllu"),  # a comment line
    ("1-2\tdel\t_\t_\t_\t_\t_\t_\t_\t_\n" + ROW.format(1, "de") + "\n" + ROW.format(2, "el") + "\n\n", "conllu"),
    (ROW.format(1, "a") + "\n" + "1.1\tb\t_\tNOUN\t_\t_\t_\t_\t1:dep\t_\n\n", "conllu"),  # an empty node
    (_conllu_rows("a\t_\tNOUN\tNN\t_\t0\troot\t0:root\t_"), "conllu"),  # DEPS
    (_conllu_rows("a\t_\tNOUN\tNN\t_\t0\troot\t_\tSpaceAfter=No"), "conllu"),  # MISC
    (CONLLX_SENTENCE, "conllx"),  # PHEAD and PDEPREL
    (ROW.format(1, "a") + "\n\n", "conllx"),  # nothing says: as before
    ("", "conllx"),
])
def test_conll_extension_is_read_as_what_its_lines_show(text, fmt, tmp_path):
    assert formats.guess_format("x.conll", text) == (fmt, None)
    assert formats.guess_format("X.CONLL", text) == (fmt, None)
    assert formats.detect_format("x.conllx", text) == "conllx"  # the other extensions name one dialect
    assert formats.detect_format("x.conllu", text) == "conllu"
    path = tmp_path / "x.conll"
    path.write_text(text)
    assert formats.sniff(path)[0] == fmt
    if text:
        assert [s.raw["format"] for s in formats.read(path)] == [fmt]
        assert [s.raw["format"] for s in formats.read(tmp_path)] == [fmt]  # a folder's .conll files alike


def test_tag_keeps_the_conllu_lines_of_a_conll_file(toy, tmp_path):
    """A CoNLL-U file named ``.conll`` comes back as CoNLL-U does: comments, the multiword token,
    the empty node, DEPS and MISC kept byte for byte, only the predicted UPOS filled in."""
    for name in ("in.conll", "in.conllu"):
        (tmp_path / name).write_text(CONLLU_SENTENCE)
    done = run("tag", "--model", toy, tmp_path / "in.conll")
    assert done.exit_code == 0 and done.stderr == "", done.output
    assert done.stdout == run("tag", "--model", toy, tmp_path / "in.conllu").stdout
    unfilled = [line.split("\t")[:3] + line.split("\t")[4:] if "\t" in line else line
                for line in done.stdout.splitlines()]
    assert unfilled == [line.split("\t")[:3] + line.split("\t")[4:] if "\t" in line else line
                        for line in CONLLU_SENTENCE.splitlines()]
    # genuine CoNLL-X in a .conll file is still read as CoNLL-X: PHEAD and PDEPREL come back with --output-format conllx
    (tmp_path / "x.conll").write_text(CONLLX_SENTENCE)
    conllx = run("tag", "--model", toy, "--output-format", "conllx", tmp_path / "x.conll")
    assert conllx.exit_code == 0, conllx.output
    assert [line.split("\t")[8:] for line in conllx.stdout.splitlines() if line] == [
        ["2", "det"], ["0", "root"], ["2", "punct"]]


# --- item 19: empty input ---------------------------------------------------------------------------


@pytest.mark.parametrize("content", [b"", b"\n\n", b" \r\n\t\n"])
def test_empty_input_gives_empty_output_for_tag_and_convert(content, toy, tmp_path):
    path = tmp_path / "empty.conllu"
    path.write_bytes(content)
    assert list(formats.read(path)) == [] and list(formats.read(io.BytesIO(content))) == []
    for args, stdin in ((["tag", "--model", toy, path], None), (["tag", "--model", toy], content),
                        (["convert", "--to", "tagged", path], None), (["convert", "--to", "pipe"], content)):
        result = run(*args, stdin=stdin)
        assert (result.exit_code, result.stdout, result.stderr) == (0, "", ""), args
    out = tmp_path / "out.txt"
    assert run("convert", "--to", "text", path, "-o", out).exit_code == 0 and out.read_bytes() == b""


def test_train_on_empty_input_names_the_file(tmp_path):
    path = tmp_path / "empty.conllu"
    path.write_bytes(b"\n")
    result = run("train", "--task", "pos", "--train", path, "--dev", DATA / "sample.conllu", "--out", tmp_path / "m")
    assert result.exit_code == 1
    assert result.stderr == f"error: {path}: no sentences to train on\n"


# --- item 18: the CCGbank AUTO format is 'ccgbank'; 'auto' means detect -----------------------------


def test_ccgbank_is_the_format_name_and_auto_means_detect(capsys):
    assert "ccgbank" in formats.FORMATS and "auto" not in formats.FORMATS
    text = (DATA / "sample.auto").read_text()
    assert formats.detect_format(None, text) == "ccgbank" and formats.detect_format(DATA / "sample.auto", "") == "ccgbank"
    sentences = list(formats.read(io.BytesIO(text.encode()), "auto"))  # auto: detected
    by_name = list(formats.read(DATA / "sample.auto", "ccgbank"))
    assert [(s.words, s.columns, s.raw) for s in sentences] == [(s.words, s.columns, s.raw) for s in by_name]
    assert sentences[0].raw["format"] == "ccgbank"
    for name in ("ccgbank", "auto"):  # writing: auto is kept as an alias
        out = io.StringIO()
        formats.write(sentences, out, name)
        assert out.getvalue() == text
    assert capsys.readouterr().err == ""


def test_convert_to_ccgbank_and_the_old_name(tmp_path):
    expected = (DATA / "sample.auto").read_text()
    for args in (["--to", "ccgbank"], ["--to", "auto"], ["--from", "auto", "--to", "ccgbank"],
                 ["--from", "ccgbank", "--to", "auto"]):
        result = run("convert", *args, DATA / "sample.auto")
        assert result.exit_code == 0 and result.stdout == expected, (args, result.output)
    piped = run("convert", "--to", "ccgbank", stdin=expected)
    assert piped.exit_code == 0 and piped.stdout == expected
    usage = run("convert", "--help").stdout
    to_choices = usage.split("--to [", 1)[1].split("]", 1)[0]
    assert to_choices.split("|")[0] == "ccgbank" and "auto" not in to_choices.split("|")
    assert "[auto|ccgbank|" in usage  # --from: auto detects
    assert run("evaluate", "--gold", DATA / "sample.auto", "--pred", DATA / "sample.pipe", "--format", "ccgbank",
               "--pred-format", "pipe", "--json").exit_code == 0


def test_trees_after_a_comment_line_are_sniffed_as_trees():
    """A treebank file of an unknown extension (SPMRL's .ptb) whose first line is a comment: its
    trees decide (the trees reader then names the comment line), not plain text."""
    from tagger.formats import guess_format

    assert guess_format("x.ptb", "# from the SPMRL release\n(S (NN a) (VB b))\n(S (NN c) (VB d))\n")[0] == "trees"
    assert guess_format("x.ptb", "# a comment\nThe cat sat .\n")[0] == "text"
