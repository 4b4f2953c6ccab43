"""The tokenizer model family: ``tagger train --task tokenize`` on CoNLL-U, ``tagger tag`` of raw
text into CoNLL-U that rebuilds the text, chained with a tagger; multiword tokens (French), a
language written without spaces (Chinese), real boundaries learned from EWT."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import tagger
from tagger import formats, model_file
from tagger.errors import TaggerError
from tagger.models import MODELS
from tagger.models.base import members
from tagger.tokenization.labels import conllu_blocks, labelled_text, rebuild_text, text_sentence
from tests.conftest import EWT
from tests.helpers import DATA, assert_one_line_error, first_blocks, invoke

#: A tiny tokenizer: trains on a fixture in seconds.
TINY = ["--threads", "1", "--quiet", "--json", "--set", "hidden=32", "--set", "segment=48", "--set", "context=8",
        "--set", "char_dim=16", "--set", "lr=0.02", "--set", "dropout=0", "--set", "char_dropout=0",
        "--set", "min_char_count=1", "--set", "lr_halving=false", "--batch-size", "4", "--patience", "0"]


def _raw_text(path: Path) -> str:
    """The running text of a CoNLL-U file, as the tokenizer learns it (paragraphs by blank lines)."""
    return labelled_text(text_sentence(s) for s in formats.read(str(path), "conllu")).text


def _train(path: Path, out: Path, epochs: int) -> dict:
    done = invoke("train", "--task", "tokenize", "--train", path, "--dev", path, "--out", out, "--max-epochs", epochs,
                  *TINY)
    assert done.exit_code == 0, (done.stderr, done.exception)
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def french(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tok-fr") / "fr.tok"
    summary = _train(DATA / "tokenize-fr.conllu", out, 40)
    assert summary["best_dev"] > 95 and summary["train_sentences"] == summary["dev_sentences"] == 8, summary
    return out


def _tokens(conllu: str) -> list[list[str]]:
    """The surface tokens of each sentence (multiword ranges, not their words)."""
    out = []
    for lines in conllu_blocks(conllu.splitlines()):
        tokens, until = [], 0
        for line in lines:
            if line.startswith("#"):
                continue
            wid, form = line.split("\t")[:2]
            if "-" in wid:
                until = int(wid.split("-")[1])
                tokens.append(form)
            elif int(wid) > until:
                tokens.append(form)
        out.append(tokens)
    return out


def test_the_family_implements_the_model_protocol():
    cls = MODELS["tokenizer"]
    model = cls(cls.Config(), {"chars": ["<pad>", "<unk>", "\x00"]})
    for member in members():
        assert hasattr(cls, member) or hasattr(model, member), member
    assert cls.reads_raw_text and not any(MODELS[name].reads_raw_text for name in MODELS if name != "tokenizer")


def test_french_multiword_tokens_are_expanded_and_the_text_rebuilt(french, tmp_path):
    raw = _raw_text(DATA / "tokenize-fr.conllu") + "\n"
    done = invoke("tag", "--model", french, "--threads", "1", stdin=raw.encode())
    assert done.exit_code == 0, done.stderr
    blocks = list(conllu_blocks(done.stdout.splitlines()))
    assert rebuild_text(blocks) == raw
    gold = [s.words for s in formats.read(str(DATA / "tokenize-fr.conllu"), "conllu")]
    got = [s.words for s in formats.read(_bytes(done.stdout), "conllu")]
    assert got == gold  # the training sentences, learned: "du" -> "de le", "aux" -> "à les"
    assert "3-4\tdu\t_\t_\t_\t_\t_\t_\t_\t_" in blocks[0] and "3\tde\t_\t_\t_\t_\t_\t_\t_\t_" in blocks[0]
    assert sum("# newpar" in b for b in blocks) == 3 and blocks[0][:3] == ["# newdoc", "# newpar", "# sent_id = 1"]


def _bytes(text: str):
    import io

    return io.BytesIO(text.encode())


def test_an_unseen_capitalised_multiword_form_keeps_its_case(french):
    done = invoke("tag", "--model", french, "--threads", "1", stdin="Du pain.\n".encode())
    assert done.exit_code == 0, done.stderr
    assert "\n1-2\tDu\t" in done.stdout and "\n1\tDe\t" in done.stdout and "\n2\tle\t" in done.stdout


def test_a_language_without_spaces_is_learned(tmp_path):
    out = tmp_path / "zh.tok"
    summary = _train(DATA / "tokenize-zh.conllu", out, 60)
    assert summary["best_dev"] > 95, summary
    raw = _raw_text(DATA / "tokenize-zh.conllu")
    assert " " not in raw.replace("\n\n", "")
    model = tagger.load(str(out), threads=1)
    model.tag_file(_bytes(raw), tmp_path / "out.conllu")
    produced = (tmp_path / "out.conllu").read_text(encoding="utf-8")
    gold = [s.words for s in formats.read(str(DATA / "tokenize-zh.conllu"), "conllu")]
    assert _tokens(produced) == gold
    assert rebuild_text(conllu_blocks(produced.splitlines())) == raw
    assert "SpaceAfter=No" in produced


def test_chained_with_a_tagger_the_tagger_fills_the_tokenizers_sentences(french, sample_tagger, tmp_path):
    raw = "Le chat dort au soleil.\n\nIl mange du pain.\n"
    chained = invoke("tag", "--model", french, "--model", sample_tagger, "--threads", "1", stdin=raw.encode())
    assert chained.exit_code == 0, chained.stderr
    alone = invoke("tag", "--model", french, "--threads", "1", stdin=raw.encode())
    (tmp_path / "tok.conllu").write_text(alone.stdout, encoding="utf-8")
    piped = invoke("tag", "--model", sample_tagger, "--threads", "1", tmp_path / "tok.conllu")
    assert chained.stdout == piped.stdout  # the same as the shell pipe
    rows = [line.split("\t") for line in chained.stdout.splitlines() if line[:1].isdigit()]
    words = [r for r in rows if "-" not in r[0]]
    assert all(r[3] != "_" for r in words) and all(r[3] == "_" for r in rows if "-" in r[0])
    assert rebuild_text(conllu_blocks(chained.stdout.splitlines())) == raw
    tagged = invoke("tag", "--model", french, "--model", sample_tagger, "--output-format", "tagged", "--threads", "1",
                    stdin=raw.encode())
    assert tagged.exit_code == 0 and tagged.stdout.splitlines()[0].startswith("Le/")


def test_tag_text_in_python_gives_the_records_of_the_chained_models(french, sample_tagger):
    raw = "Le chat dort au soleil.\n\nIl mange du pain."
    records = tagger.load([str(french), str(sample_tagger)]).tag_text(raw)
    assert [r["text"] for r in records] == ["Le chat dort au soleil.", "Il mange du pain."]
    assert records[1]["words"] == ["Il", "mange", "de", "le", "pain", "."]  # multiword tokens as their words
    assert all(len(r["upos"]) == len(r["words"]) and "_" not in r["upos"] for r in records)
    assert tagger.load(str(french)).tag_text(raw)[0] == {"text": "Le chat dort au soleil.",
                                                          "words": ["Le", "chat", "dort", "à", "le", "soleil", "."]}
    with pytest.raises(TaggerError, match="no tokenizer first"):
        tagger.load(str(sample_tagger)).tag_text(raw)


def test_bad_uses_are_one_line_errors(french, sample_tagger, tmp_path):
    assert_one_line_error(invoke("tag", "--model", sample_tagger, "--model", french, stdin=b"a b\n"), "give its model first")
    assert_one_line_error(invoke("tag", "--model", french, "--model", french, stdin=b"a b\n"), "two tokenizers")
    assert_one_line_error(invoke("tag", "--model", french, stdin=b"ok\n\xff\n"), "<stdin>:2:", "not UTF-8")
    assert_one_line_error(invoke("tag", "--model", french, "--format", "conllu", stdin=b"a\n"), "reads raw text")
    assert_one_line_error(invoke("tag", "--model", french, "--output-format", "tagged", stdin=b"a\n"), "tokenizer alone")
    assert_one_line_error(invoke("train", "--task", "tokenize", "--train", DATA / "sample.txt", "--out", tmp_path / "m"),
                          "learns from CoNLL-U")
    assert_one_line_error(invoke("train", "--task", "tokenize", "--column", "upos", "--train", DATA / "tokenize-fr.conllu",
                                 "--out", tmp_path / "m"), "learns no column")
    with pytest.raises(TaggerError, match="reads raw text"):
        tagger.load(str(french)).tag([["a", "b"]])
    assert_one_line_error(invoke("evaluate", "--model", french, DATA / "tokenize-fr.conllu"), "--gold GOLD --pred PRED")


def test_empty_input_gives_empty_output(french):
    done = invoke("tag", "--model", french, stdin=b"")
    assert done.exit_code == 0 and done.stdout == ""
    done = invoke("tag", "--model", french, "--output-format", "jsonl", stdin=b"  \n\n Il dort.")
    assert done.exit_code == 0 and json.loads(done.stdout) == {"text": "Il dort.", "words": ["Il", "dort", "."]}


@pytest.mark.slow
def test_real_boundaries_are_learned_from_ewt(tmp_path, one_thread):
    """A small model, six epochs on 1,500 EWT sentences (12 s): far above splitting at white space
    (tokens F1 81.9 on these 300 dev sentences), and above ending a sentence at every token that
    ends in . ! or ? and at every blank line (sentences F1 80.5; the model: 82.9; with the
    categories qualified by script it needs six epochs where it needed four, 78.5-79.5 after four)."""
    if not (EWT / "en_ewt-ud-train.conllu").exists():
        pytest.skip("needs ../shared/data")
    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    train.write_text(first_blocks(EWT / "en_ewt-ud-train.conllu", 1500), encoding="utf-8")
    dev.write_text(first_blocks(EWT / "en_ewt-ud-dev.conllu", 300), encoding="utf-8")
    done = invoke("train", "--task", "tokenize", "--train", train, "--dev", dev, "--out", tmp_path / "ewt.tok",
                  "--max-epochs", "6", "--threads", "1", "--quiet", "--json", "--set", "lr=0.01", "--batch-size", "16",
                  "--set", "hidden=32", "--set", "char_dim=32")
    assert done.exit_code == 0, (done.stderr, done.exception)
    _, meta = model_file.load(tmp_path / "ewt.tok")
    parts = meta["history"][-1]["parts"]
    assert parts["tokens"] > 0.98 and parts["sentences"] > 0.81 and parts["multiword"] > 0.8, parts


def test_the_numpy_runtime_gives_the_labels_of_the_torch_model(french, tmp_path):
    from tagger.runtime import tokenizer as runtime
    from tagger.tokenization.labels import normalise

    torch_model, _ = model_file.load(french)
    fast = runtime.load(french)
    text = normalise(_raw_text(DATA / "tokenize-fr.conllu") + "\n\nDu café au lait, 12 € — 東京 😀 aux amis.")
    assert fast is not None and fast.label(text) == torch_model.label(text)
    assert runtime.load(DATA / "sample.conllu") is None  # not a model file: the torch path says why


def _numpy_tokenizer(path: Path):
    """The numpy runtime's tokenizer of a model file (what runs where the C kernels are not built)."""
    from tagger import archive
    from tagger.config import config_from_dict
    from tagger.models.tokenizer import TokenizerConfig
    from tagger.runtime.numpy_tokenizer import NumpyTokenizer

    plain = archive.read(path)
    return NumpyTokenizer(config_from_dict(TokenizerConfig, plain["config"], from_file=True), plain["vocabs"],
                          plain["state_dict"])


C_STEP_BUILT = __import__("tagger.modules.fused", fromlist=["_"])._fastscan is not None


@pytest.mark.skipif(not C_STEP_BUILT, reason="the C step is not built")
def test_the_tokenizers_c_step_gives_the_numpy_scans_labels(french, monkeypatch):
    """The C time step (gates reordered i, f, o, g) and numpy's scan (g doubled) label alike."""
    from tagger.runtime import numpy_tokenizer
    from tagger.tokenization.labels import normalise

    text = normalise(_raw_text(DATA / "tokenize-fr.conllu") * 3 + "\n\nDu café au lait, 12 € — 東京 😀 aux amis.")
    monkeypatch.setattr(numpy_tokenizer.kernels, "f32_kernel", lambda: 0)  # a step at a time, the C step or numpy
    monkeypatch.setattr(numpy_tokenizer, "FUSED", True)
    fused = _numpy_tokenizer(french).label(text)
    monkeypatch.setattr(numpy_tokenizer, "FUSED", False)
    assert fused == _numpy_tokenizer(french).label(text)


@pytest.mark.skipif(not C_STEP_BUILT, reason="the C step is not built")
def test_the_float32_kernels_give_the_numpy_scans_labels_with_numpy_and_without(french, monkeypatch):
    """Each layer in one C call, by each float32 kernel this CPU runs, labels as numpy's scan: on
    numpy's arrays, and on Python's (the C runtime, weights read raw, numpy not needed)."""
    from tagger import archive
    from tagger.modules import fused
    from tagger.runtime import c_tokenizer, numpy_tokenizer
    from tagger.runtime import tokenizer as runtime
    from tagger.tokenization.labels import normalise

    text = normalise(_raw_text(DATA / "tokenize-fr.conllu") * 3 + "\n\nDu café au lait, 12 € — 東京 😀 aux amis.")
    monkeypatch.setattr(numpy_tokenizer.kernels, "f32_kernel", lambda: 0)
    monkeypatch.setattr(numpy_tokenizer, "FUSED", False)
    plain = _numpy_tokenizer(french)
    assert not plain.kernel
    expected, short = plain.label(text), plain.label(text[:7])
    raw = archive.read(french, raw=True)
    config = runtime.config_from_dict(runtime.TokenizerConfig, raw["config"], from_file=True)
    monkeypatch.setattr(c_tokenizer, "WINDOWS", 2)  # several batches of windows, the last one smaller
    for number in range(1, int(fused._fastscan.f32_kernel()) + 1):
        monkeypatch.setattr(numpy_tokenizer.kernels, "f32_kernel", lambda: number)
        fast = _numpy_tokenizer(french)
        assert fast.kernel.f32 == number and fast.label(text) == expected
        lean = c_tokenizer.CTokenizer(config, raw["vocabs"], raw["state_dict"], kernel=number)
        assert lean.label(text) == expected and lean.label(text[:7]) == short and lean.label("") == b""
    assert type(runtime.load(french)) is c_tokenizer.CTokenizer  # what tagger tag runs


def test_a_model_file_read_raw_holds_the_bytes_of_its_arrays(french):
    from tagger import archive

    arrays, raw = archive.read(french), archive.read(french, raw=True)
    assert arrays["vocabs"] == raw["vocabs"] and arrays["config"] == raw["config"]
    for name, array in arrays["state_dict"].items():
        value = raw["state_dict"][name]
        assert isinstance(value, archive.Raw) and value.shape == array.shape and value.dtype == str(array.dtype)
        assert bytes(value.data) == array.tobytes(), name


def test_a_tokenizer_alone_runs_without_numpy_click_or_torch(french, tmp_path):
    """``tagger tag --model TOKENIZER``: the C runtime on Python's arrays, the quick route past
    click (their imports are most of a small text's process), the output torch's."""
    import subprocess
    import sys

    (tmp_path / "in.txt").write_text(_raw_text(DATA / "tokenize-fr.conllu"), encoding="utf-8")
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "tagger", "tag", "--model", str(french),
                           "--threads", "1", "-o", str(tmp_path / "out.conllu"), str(tmp_path / "in.txt")],
                          capture_output=True, text=True)
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert done.returncode == 0 and "tagger.runtime.c_tokenizer" in imported, done.stderr[-2000:]
    assert not imported & {"numpy", "click", "torch"}
    tagger.load(str(french), engine="torch").tag_file(str(tmp_path / "in.txt"), str(tmp_path / "torch.conllu"))
    assert (tmp_path / "out.conllu").read_bytes() == (tmp_path / "torch.conllu").read_bytes()


def test_a_tokenizer_alone_switches_to_torch_with_the_same_output(french, tmp_path):
    from tagger.runtime import tokenizer as runtime

    raw = (_raw_text(DATA / "tokenize-fr.conllu") + "\n\n") * 3
    (tmp_path / "in.txt").write_text(raw, encoding="utf-8")
    counts = runtime.tag_file(str(french), [str(tmp_path / "in.txt")], str(tmp_path / "numpy.conllu"))
    switched = runtime.tag_file(str(french), [str(tmp_path / "in.txt")], str(tmp_path / "switched.conllu"),
                                switch_after=10)
    assert counts == switched and counts["sentences"] == 24
    assert (tmp_path / "numpy.conllu").read_text() == (tmp_path / "switched.conllu").read_text()
    assert runtime.tag_file(str(french), [str(DATA / "sample.conllu")], str(tmp_path / "x")) is None  # tokenised input


def test_the_plain_reader_refuses_code_in_a_model_file(tmp_path):
    import os
    import pickle
    import zipfile

    from tagger.runtime import tokenizer as runtime

    class Evil:
        def __reduce__(self):
            return (os.system, ("true",))

    with zipfile.ZipFile(tmp_path / "evil.model", "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps({"name": "tokenizer", "x": Evil()}, protocol=2))
    assert runtime.read_archive(tmp_path / "evil.model") is None


# ----------------------------------------------------------------------------- any script (issue 35)
def test_scripts_give_kanji_kana_and_other_scripts_letters_categories_of_their_own():
    from tagger.tokenization.labels import CATEGORIES, CATEGORIES_WITH_SCRIPTS, PAR, category_of

    name = lambda char, scripts=True: CATEGORIES_WITH_SCRIPTS[category_of(char, scripts)]  # noqa: E731
    assert [name(c) for c in "東ひカｶ한ไa"] == ["Lo CJK", "Lo HIRAGANA", "Lo KATAKANA", "Lo KATAKANA", "Lo HANGUL",
                                                  "Lo THAI", "Ll LATIN"]
    assert name("ー") == "Lm KATAKANA" and name("ि") == "Mc DEVANAGARI"  # a modifier letter, a vowel sign
    assert [name(c) for c in "7。 "] == ["Nd", "Po", "Zs"] and name(PAR) == "<par>"  # not letters: as before
    assert {name(c, scripts=False) for c in "東ひカ"} == {"Lo"}  # models trained before read what they read
    assert all(category_of(chr(c), False) < len(CATEGORIES) for c in range(0x3000, 0x3100))


def _learns(fixture: str, tmp_path: Path, *settings: str) -> tuple[Path, list[list[str]], str]:
    """A tiny tokenizer trained (and scored) on a fixture; it tags the fixture's raw text: the
    model, the tokens it gives, and its CoNLL-U."""
    out = tmp_path / f"{fixture}.tok"
    done = invoke("train", "--task", "tokenize", "--train", DATA / f"tokenize-{fixture}.conllu", "--dev",
                  DATA / f"tokenize-{fixture}.conllu", "--out", out, "--max-epochs", 60, *TINY, *settings)
    assert done.exit_code == 0, (done.stderr, done.exception)
    tagger.load(str(out), threads=1).tag_file(_bytes(_raw_text(DATA / f"tokenize-{fixture}.conllu")),
                                             tmp_path / "out.conllu")
    produced = (tmp_path / "out.conllu").read_text(encoding="utf-8")
    return out, _tokens(produced), produced


def test_japanese_words_are_learned_with_scripts_and_the_runtime_agrees(tmp_path):
    from tagger.runtime import tokenizer as runtime
    from tagger.tokenization.labels import normalise

    out, tokens, produced = _learns("ja", tmp_path, "--set", "scripts=true")
    gold = [s.words for s in formats.read(str(DATA / "tokenize-ja.conllu"), "conllu")]
    assert tokens == gold and produced.count("# text = ") == 8
    assert rebuild_text(conllu_blocks(produced.splitlines())) == _raw_text(DATA / "tokenize-ja.conllu")
    text = normalise("雨の日はバスで駅まで行きます。ｶﾀｶﾅ　と한국어。")
    torch_model, _ = model_file.load(out)
    assert torch_model.category_embedding.num_embeddings > 32 and runtime.load(out).label(text) == torch_model.label(text)


def test_vietnamese_tokens_with_spaces_inside_are_learned(tmp_path):
    _, tokens, produced = _learns("vi", tmp_path)
    gold = [s.words for s in formats.read(str(DATA / "tokenize-vi.conllu"), "conllu")]
    assert tokens == gold and ["Hà Nội", "."] == tokens[0][-2:]
    assert "\tthành phố\t" in produced


def test_only_a_space_inside_a_token_makes_a_spaced_tokenizer():
    from tagger.models.tokenizer.model import Tokenizer
    from tagger.models.tokenizer.config import TokenizerConfig

    def vocabs(text: str) -> dict:
        sentence = next(iter(formats.read(io.StringIO(text), "conllu")))
        return Tokenizer.vocabs_from(TokenizerConfig(), Tokenizer.training_units(TokenizerConfig(), [sentence]))

    row = "{}\t{}\t_\t_\t_\t_\t_\t_\t_\t_"
    double = "# text = a  b\n" + row.format(1, "a") + "\n" + row.format(2, "b") + "\n\n"  # two spaces between tokens
    spaced = "# text = thành phố\n" + row.format(1, "thành phố") + "\n\n"
    assert "spaced_tokens" not in vocabs(double) and vocabs(spaced)["spaced_tokens"] == ["yes"]


def test_portuguese_contractions_become_their_words(tmp_path):
    out, tokens, produced = _learns("pt", tmp_path)
    assert tokens[0] == ["O", "livro", "do", "professor", "está", "na", "mesa", "."]
    assert "3-4\tdo\t" in produced and "\n3\tde\t" in produced and "\n4\to\t" in produced
    assert "\tà\t" in produced and "\ta\t" in produced
    vocabs = model_file.read_archive(out)["vocabs"]
    assert "do\t0\t3" in vocabs["mwt_tokens"] and "d\tde\t7" in vocabs["mwt_prefix_rules"]
    # "Do", capitalised, never seen: a multiword token since "do" was one in all of its 3 times in
    # training, whatever the model marks
    done = invoke("tag", "--model", out, "--threads", "1", stdin="Do livro.\n".encode())
    assert done.exit_code == 0, done.stderr
    assert "\n1-2\tDo\t" in done.stdout and "\n1\tDe\t" in done.stdout and "\n2\to\t" in done.stdout


def test_a_vietnamese_tokenizer_keeps_its_known_words_with_a_space_and_joins_them_in_its_output():
    from tagger.models.tokenizer.config import TokenizerConfig
    from tagger.models.tokenizer.model import Tokenizer
    from tagger.tokenization.labels import END, INSIDE
    from tagger.tokenization.multiword import Expander
    from tagger.tokenization.stream import read_pieces, tokenize

    sentences = list(formats.read(str(DATA / "tokenize-vi.conllu"), "conllu"))
    vocabs = Tokenizer.vocabs_from(TokenizerConfig(), Tokenizer.training_units(TokenizerConfig(), sentences))
    assert {"thành phố", "hà nội"} <= set(vocabs["joined_tokens"])
    assert "joined_tokens" not in Tokenizer.vocabs_from(TokenizerConfig(), Tokenizer.training_units(
        TokenizerConfig(), list(formats.read(str(DATA / "tokenize-pt.conllu"), "conllu"))))  # no spaced tokens

    def every_space(norm: str) -> list[int]:  # a model that ends a token before every space and full stop, and at the end
        return [END if i + 1 == len(norm) or norm[i + 1].isspace() or norm[i + 1] == "." else INSIDE
                for i in range(len(norm))]

    raw = _raw_text(DATA / "tokenize-vi.conllu")
    pieces = lambda: read_pieces(io.BytesIO(raw.encode()), "<vi>")  # noqa: E731
    joined = frozenset(vocabs["joined_tokens"])
    split = [w for s in tokenize(pieces(), every_space, Expander([], []), spaced_tokens=True) for w in s.words]
    words = [w for s in tokenize(pieces(), every_space, Expander([], []), spaced_tokens=True, joined=joined) for w in s.words]
    assert "thành phố" not in split and "thành phố" in words and "Hà Nội" in words
    assert len(words) < len(split)


def test_presegmented_text_is_one_sentence_a_line(french, sample_tagger, tmp_path):
    """--presegmented (UDPipe's presegmented input): the tokenizer splits each line into tokens,
    never a sentence inside or across lines; the text is still rebuilt; the runtime, torch, a
    chained tagger and tag_text agree."""
    from tagger.tokenization.labels import END, INSIDE, SENTENCE_END
    from tagger.tokenization.segment import line_sentences

    labels = bytes([INSIDE, END, 0, SENTENCE_END, 0, END, 0, INSIDE, SENTENCE_END, 0, 0, 0, END])
    assert list(line_sentences("ab c\nd e.\r\n\nf", labels, True)) == [0, 1, 0, 2, 0, 1, 0, 0, 2, 0, 0, 0, 2]
    assert line_sentences("ab c\nd e.\r\n\nf", labels, False)[-1] == END  # the rest goes on in the next piece
    lines = [" ".join(s.words) for s in formats.read(str(DATA / "tokenize-fr.conllu"), "conllu")]
    text = " ".join(lines[0:2]) + "\n" + " ".join(lines[2:5]) + "\n\n" + lines[5] + "\n"
    (tmp_path / "in.txt").write_text(text, encoding="utf-8")
    plain = invoke("tag", "--model", french, tmp_path / "in.txt").stdout
    assert len(list(conllu_blocks(plain.splitlines()))) > 3  # the model's own sentences: more than the lines
    outputs = []
    for engine in ("auto", "torch"):
        out = tmp_path / f"{engine}.conllu"
        tagger.load(str(french), engine=engine).tag_file(str(tmp_path / "in.txt"), str(out), presegmented=True)
        outputs.append(out.read_text(encoding="utf-8"))
    assert outputs[0] == outputs[1]
    blocks = list(conllu_blocks(outputs[0].splitlines()))
    assert len(blocks) == 3 and rebuild_text(blocks) == text
    cli = invoke("tag", "--model", french, "--presegmented", tmp_path / "in.txt")
    assert cli.stdout == outputs[0]
    chained = invoke("tag", "--model", french, "--model", sample_tagger, "--presegmented", tmp_path / "in.txt")
    assert len(list(conllu_blocks(chained.stdout.splitlines()))) == 3
    records = tagger.load([str(french), str(sample_tagger)]).tag_text(text, presegmented=True)
    assert [len(r["words"]) for r in records] == [len(b) for b in (formats.read(io.StringIO(outputs[0]), "conllu"))]
