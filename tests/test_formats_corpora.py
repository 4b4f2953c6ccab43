"""Readers on the real corpora in ../shared/data (read in place): counts, round trips, agreement."""

from __future__ import annotations

import io

import pytest

from tagger import formats
from tagger.errors import TaggerError
from tagger.formats import ptb

BRACKETS = {"(": "-LRB-", ")": "-RRB-", "{": "-LCB-", "}": "-RCB-"}


def _normal(word: str) -> str:
    """PTB .pos files write brackets literally, .mrg files as -LRB- (slashes are read alike)."""
    return BRACKETS.get(word, word)


def test_ewt_counts_and_byte_identical_round_trip(shared_data):
    path = shared_data / "ud-english-ewt" / "en_ewt-ud-train.conllu"
    original = path.read_bytes()
    sentences = list(formats.read(path))
    assert len(sentences) == 12_544 and sum(map(len, sentences)) == 204_577
    out = io.StringIO()
    formats.write(sentences, out, "conllu")
    assert out.getvalue().encode() == original
    # blank the gold UPOS (as a tagger's input would be), then put predictions (= gold) back
    gold = [s.columns["upos"] for s in sentences]
    for sentence in sentences:
        sentence.columns["upos"] = ["_"] * len(sentence)
    out = io.StringIO()
    formats.write(sentences, out, "conllu")
    assert out.getvalue().encode() != original
    for sentence, tags in zip(sentences, gold):
        sentence.columns["upos"] = tags
    out = io.StringIO()
    formats.write(sentences, out, "conllu")
    assert out.getvalue().encode() == original


@pytest.mark.parametrize("name, sentences, words", [
    ("en_ewt-ud-dev.conllu", 2_001, 25_147), ("en_ewt-ud-test.conllu", 2_077, 25_094)])
def test_ewt_dev_test_counts(shared_data, name, sentences, words):
    read = list(formats.read(shared_data / "ud-english-ewt" / name))
    assert (len(read), sum(map(len, read))) == (sentences, words)


def test_wsj_mrg_counts_and_sample_split(shared_data):
    folder = shared_data / "ptb-wsj-sample" / "combined"
    files = sorted(folder.glob("*.mrg"))
    assert len(files) == 199
    sentences = list(formats.read(folder))
    assert len(sentences) == 3_914 and sum(map(len, sentences)) == 94_084
    split = ptb.sample_split(files)
    counts = {}
    for name, paths in split.items():
        part = list(formats.read(paths))
        counts[name] = (len(paths), len(part), sum(map(len, part)))
    assert counts == {"train": (159, 3_396, 81_793), "dev": (20, 273, 6_327), "test": (20, 245, 5_964)}
    out = io.StringIO()
    formats.write(sentences, out, "mrg")
    again = list(formats.read(io.BytesIO(out.getvalue().encode()), "mrg"))
    assert [s.tree for s in again] == [s.tree for s in sentences]


def test_wsj_dp_matches_mrg(shared_data):
    trees = list(formats.read(shared_data / "ptb-wsj-sample" / "combined"))
    deps = list(formats.read(shared_data / "ptb-wsj-sample-dep"))
    assert len(deps) == 3_914 and sum(map(len, deps)) == 94_084
    for tree, dep in zip(trees, deps):
        assert (dep.words, dep.columns["xpos"]) == (tree.words, tree.columns["xpos"])
        assert dep.columns["head"].count(0) >= 1


def test_wsj_pos_agrees_with_mrg(shared_data):
    """The .pos files are the PTB's earlier tagged stage, not the treebank: some sentences are
    segmented or tokenised differently (``S.p .`` / ``A.``), some text is not in the treebank,
    a few tags differ (``IN``/``RP``). The reader must find the treebank's sentences wherever the
    file allows it and agree on their tags."""
    root = shared_data / "ptb-wsj-sample"
    matched = total = same_tags = tokens = 0
    for path in sorted((root / "combined").glob("*.mrg")):
        trees = {tuple(map(_normal, s.words)): s.columns["xpos"] for s in formats.read(path)}
        for sentence in formats.read(root / "tagged" / (path.stem + ".pos")):
            total += 1
            gold = trees.get(tuple(map(_normal, sentence.words)))
            if gold is not None:
                matched += 1
                tokens += len(gold)
                same_tags += sum(BRACKETS.get(t, t) == g for t, g in zip(sentence.columns["xpos"], gold))
    assert (total, matched) == (3_896, 3_698)  # 94.9% of .pos sentences are treebank sentences
    assert same_tags / tokens > 0.998
    first = next(iter(formats.read(root / "tagged" / "wsj_0001.pos")))
    assert first.words[:3] == ["Pierre", "Vinken", ","] and first.columns["xpos"][:3] == ["NNP", "NNP", ","]


def test_ccgbank_auto_samples(shared_data):
    folder = shared_data / "ccgbank-auto-samples"
    counts = {}
    for path in sorted(folder.glob("*.auto")):
        sentences = list(formats.read(path))
        counts[path.name] = (len(sentences), sum(map(len, sentences)))
        out = io.StringIO()
        formats.write(sentences, out, "ccgbank")
        assert out.getvalue().encode() == path.read_bytes()
        out = io.StringIO()
        formats.write(sentences, out, "pipe")
        back = list(formats.read(io.BytesIO(out.getvalue().encode())))
        assert [(s.words, s.columns) for s in back] == [(s.words, s.columns) for s in sentences]
    assert counts == {"wsj_0001.auto": (2, 31), "wsj_0003.auto": (30, 712), "wsj_0087.auto": (22, 371)}
    first = next(iter(formats.read(folder / "wsj_0001.auto")))
    assert first.raw["id"] == "wsj_0001.1"
    assert first.words[:4] == ["Pierre", "Vinken", ",", "61"]
    assert first.columns["supertag"][8] == "((S[b]\\NP)/PP)/NP" and first.columns["xpos"][8] == "VB"


def test_wsj_mrg_written_back_in_its_own_layout(shared_data):
    """The mrg writer lays trees out as the WSJ files do: wsj_0001/2/5 come back byte for byte
    (but their leading blank line); a quarter of the sample's trees were laid out by hand (a
    comma on a line of its own), which no rule gives back."""
    folder = shared_data / "ptb-wsj-sample" / "combined"
    for name in ("wsj_0001.mrg", "wsj_0002.mrg", "wsj_0005.mrg"):
        out = io.StringIO()
        formats.write(formats.read(folder / name), out, "mrg")
        assert out.getvalue() == (folder / name).read_text(encoding="utf-8").lstrip("\n")


def test_an_extra_bracket_in_a_wsj_tree_is_reported_on_its_line(shared_data, tmp_path):
    """wsj_0003 with one ``)`` more on line 21: the reader finds out at the tree's last line (45),
    but names line 21."""
    lines = (shared_data / "ptb-wsj-sample" / "combined" / "wsj_0003.mrg").read_text(encoding="utf-8").splitlines(True)
    assert lines[20].endswith(" )\n")
    path = tmp_path / "w3b.mrg"
    path.write_text("".join(lines[:20] + [lines[20][:-1] + ")\n"] + lines[21:]), encoding="utf-8")
    with pytest.raises(TaggerError) as info:
        list(formats.read(path))
    assert info.value.line == 21 and "one ')' too many on this line" in info.value.message
    assert "line 45: ')' closes no tree" in info.value.message
