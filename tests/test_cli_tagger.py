"""The tagger through the CLI, as a user runs it: train, tag, evaluate, info, and bad input.

Most commands run in this process (click's runner, :func:`tests.helpers.invoke`); those about the
process itself (a real ``tagger`` reading stdin and writing stdout, what reaches its stderr on
bad input, what it wrote before failing) run as real processes (:func:`tests.helpers.run`)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tagger import formats
from tagger.modules.precision import cpu_has_bf16
from tests.helpers import DATA, ROOT, SMALL, assert_one_line_error, invoke, run  # noqa: F401 - other test files import these


@pytest.fixture
def model(sample_tagger) -> Path:
    """conftest's tiny tagger, trained through ``tagger train`` on data/sample.conllu (dev > 0.8)."""
    return sample_tagger


def test_tag_plain_text_gives_conllu(model):
    done = run("tag", "--model", str(model), stdin=(DATA / "sample.txt").read_bytes())
    assert done.returncode == 0, done.stderr.decode()
    sentences = list(formats.read(io.BytesIO(done.stdout), "conllu"))
    expected = [line.split() for line in (DATA / "sample.txt").read_text().splitlines() if line.strip()]
    assert [s.words for s in sentences] == expected
    assert all(s.has("upos") for s in sentences)


def test_tag_conllu_keeps_every_other_column_byte_for_byte(model):
    original = (DATA / "sample.conllu").read_bytes()
    done = invoke("tag", "--model", model, "data/sample.conllu")
    assert done.exit_code == 0, done.output
    out_lines, in_lines = done.stdout_bytes.decode().split("\n"), original.decode().split("\n")
    assert len(out_lines) == len(in_lines)
    for got, want in zip(out_lines, in_lines):
        g, w = got.split("\t"), want.split("\t")
        if len(w) == 10 and w[0].isdigit():
            assert g[:3] + g[4:] == w[:3] + w[4:]  # only UPOS (column 4) may change
        else:
            assert got == want  # comments, ranges, empty nodes, blank lines


def test_chain_tagger_output_into_evaluate(model, tmp_path):
    pred = tmp_path / "pred.conllu"
    assert invoke("tag", "--model", model, "data/sample.conllu", "-o", pred).exit_code == 0
    done = invoke("evaluate", "--gold", "data/sample.conllu", "--pred", pred, "--json")
    assert done.exit_code == 0, done.output
    via_files = json.loads(done.stdout)["tagging"]["accuracy"]
    done = invoke("evaluate", "--model", model, "data/sample.conllu", "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["tagging"]["accuracy"] == via_files


def test_info_and_multitag_outputs(model):
    done = invoke("info", model, "--json")
    info = json.loads(done.stdout)
    assert info["model"] == "skip_lstm" and info["config"]["column"] == "upos" and info["meta"]["dev_score"] > 0.8
    done = invoke("tag", "--model", model, "--top-k", "3", stdin=b"The cat zorblaxed .\n")
    record = json.loads(done.stdout)
    assert record["words"] == ["The", "cat", "zorblaxed", "."]
    assert all(1 <= len(tags) <= 3 and [p for _, p in tags] == sorted((p for _, p in tags), reverse=True)
               for tags in record["multitags"])  # at most 3: never a tag its tag dictionary bans the word
    assert len(record["multitags"][2]) == 3  # an unseen word: any tag
    done = invoke("tag", "--model", model, "--beta", "1.0", "--output-format", "msuper", stdin=b"The cat\n")
    assert [line.split("\t")[1] for line in done.stdout.splitlines() if line] == ["1", "1"]
    done = invoke("tag", "--model", model, "--beta", "0", stdin=b"The cat\n")  # every tag it can give, and no more
    tags = [tag for token in json.loads(done.stdout)["multitags"] for tag, p in token]
    assert tags and not any(tag.startswith("<") for tag in tags)  # not the padding label


def test_multitags_agree_across_ways_of_asking(model):
    """--beta alone (every label, kept ones sorted) and --top-k with --beta (torch's top-k first)
    give the same lists; msuper without either gives the best tag with its real probability."""
    text = b"The cat zorblaxed on the mat .\nA dog barked .\n"
    beta = [json.loads(line)["multitags"] for line in invoke("tag", "--model", model, "--beta", "0.001", stdin=text).stdout.splitlines()]
    top3 = [json.loads(line)["multitags"] for line in
            invoke("tag", "--model", model, "--beta", "0.001", "--top-k", "3", stdin=text).stdout.splitlines()]
    assert [[token[:3] for token in sentence] for sentence in beta] == top3
    assert any(len(token) > 3 for sentence in beta for token in sentence)
    assert all(p >= 0.001 * token[0][1] and [q for _, q in token] == sorted((q for _, q in token), reverse=True)
               for sentence in beta for token in sentence for _, p in token)
    done = invoke("tag", "--model", model, "--output-format", "msuper", stdin=text)
    assert done.exit_code == 0, done.output
    rows = [line.split("\t") for line in done.stdout.splitlines() if line]
    assert [(row[0], row[1]) for row in rows] == [(w, "1") for w in "The cat zorblaxed on the mat . A dog barked .".split()]
    assert [(row[2], float(row[3])) for row in rows] == [tuple(token[0]) for sentence in beta for token in sentence]
    assert any(float(row[3]) < 0.99 for row in rows)  # real probabilities, not 1 for every word


def test_stdin_edge_cases(model):
    long_line = " ".join(["word"] * 10_000).encode()
    done = invoke("tag", "--model", model, "--output-format", "tagged", stdin=b"\n\nThe cat\n\n\n" + long_line + b"\n")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()  # a line of more than MAX_WORDS (1,000) tokens is several sentences
    assert len(lines) == 11 and all(len(line.split()) == 1_000 for line in lines[1:])
    assert "note: <stdin>:6: a line of more than 1000 tokens" in done.stderr
    # a real process: what it wrote before the bad line reaches its stdout, one line on its stderr
    done = run("tag", "--model", str(model), "--output-format", "tagged", "--chunk-size", "1",
               stdin=b"The cat sat\nA dog\nbad \xff byte here\nnever reached\n")
    assert_one_line_error(done, "<stdin>:3:", "UTF-8")
    assert len(done.stdout.decode().splitlines()) == 2  # everything before the bad line was written


def test_bad_training_input(tmp_path):
    out = str(tmp_path / "m.tagger")
    base = ["train", "--train", "data/sample.conllu", "--dev", "data/sample.conllu", "--out", out, "--max-epochs", "1"]
    assert_one_line_error(invoke(*base, "--set", "hiden=3"), "unknown config key", "hiden")
    assert_one_line_error(invoke(*base, "--preset", "nope"), "unknown preset 'nope'")
    empty = tmp_path / "empty.conllu"
    empty.write_text("")
    assert_one_line_error(invoke("train", "--train", str(empty), "--dev", "data/sample.conllu", "--out", out), str(empty), "no sentences to train on")
    assert_one_line_error(invoke(*base, "--column", "supertag"), "no 'supertag'")
    assert_one_line_error(invoke(*base, "--set", "aux_column=supertag"), "data/sample.conllu:", "no 'supertag'", "aux_column")
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("the 0.1 0.2 0.3\ncat 0.1 0.2\n")
    assert_one_line_error(run(*base, "--embeddings", str(vectors)), f"{vectors}:2:", "dimensions")  # a real process
    assert not Path(out).exists()


def test_bad_model_files_on_the_command_line(tmp_path):
    junk = tmp_path / "junk.tagger"
    junk.write_bytes(b"\x80\x04not a model")
    assert_one_line_error(run("tag", "--model", str(junk), stdin=b"a b\n"), str(junk))  # a real process
    assert_one_line_error(invoke("info", tmp_path / "missing.tagger"), "no such model file")


def test_a_model_file_whose_data_fails_its_checksum_is_refused_not_tagged_with(model, tmp_path):
    """One byte flipped in a tensor's data (or in the pickle): torch would read the file without
    a word and tag with the damaged weights; every command refuses it instead."""
    import zipfile

    with zipfile.ZipFile(model) as archive:
        members = archive.infolist()
    tensor = max((i for i in members if "/data/" in i.filename), key=lambda i: i.file_size)
    pickled = next(i for i in members if i.filename.endswith("/data.pkl"))
    for info in (tensor, pickled):
        data = bytearray(model.read_bytes())
        local = info.header_offset  # the member's own header: 30 bytes, its name and extra field, then the data
        start = local + 30 + int.from_bytes(data[local + 26 : local + 28], "little") + int.from_bytes(
            data[local + 28 : local + 30], "little")
        data[start + info.file_size // 2] ^= 0xFF
        bad = tmp_path / "bad.tagger"
        bad.write_bytes(bytes(data))
        done = run("tag", "--model", str(bad), stdin=b"a b c\n")  # a real process
        assert_one_line_error(done, "fails the zip checksum")
        assert not done.stdout
        assert_one_line_error(invoke("evaluate", "--model", bad, "data/sample.conllu"), "fails the zip checksum")


def test_embeddings_initialise_word_vectors(tmp_path):
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("the " + " ".join(["0.5"] * 16) + "\ncat " + " ".join(["-0.5"] * 16) + "\n")
    out = tmp_path / "m.tagger"
    done = invoke("train", "--train", "data/sample.conllu", "--dev", "data/sample.conllu", "--out", out,
                  "--max-epochs", "1", "--embeddings", vectors, "--set", "lr=1e-12", "--set", "vectors=init",
                  *SMALL)  # too small to move them
    assert done.exit_code == 0, done.output
    assert "2 word vectors loaded" in done.stderr
    from tagger import model_file

    loaded, _ = model_file.load(out)
    row = loaded.word_vocab.index("the")
    assert loaded.input.word.weight[row].tolist() == [0.5] * 16


def test_precision_options_tag_the_same_words_and_evaluate_agrees(model):
    """--precision fp32|bf16|auto all tag through the CLI; on the sample the two products give the
    same tags (a model this small is far from any tie), and evaluate accepts the option too."""
    outputs = {}
    for precision in ("fp32", "bf16", "auto"):
        done = invoke("tag", "--model", model, "--precision", precision, "data/sample.conllu")
        assert done.exit_code == 0, done.output
        outputs[precision] = [s.column("upos") for s in formats.read(io.BytesIO(done.stdout_bytes), "conllu")]
        # forcing bf16 where the CPU only emulates it works, with a warning that it is slow
        assert ("emulated" in done.stderr) == (precision == "bf16" and not cpu_has_bf16())
    assert outputs["fp32"] == outputs["bf16"] == outputs["auto"]
    done = invoke("evaluate", "--model", model, "data/sample.conllu", "--precision", "bf16", "--json")
    assert done.exit_code == 0 and json.loads(done.stdout)["tagging"]["accuracy"] > 80
    bad = invoke("tag", "--model", model, "--precision", "fp8", "data/sample.conllu")
    assert bad.exit_code != 0 and isinstance(bad.exception, SystemExit) and "Traceback" not in bad.stderr
