"""The Penn Treebank's slash escape (``50\\/50``) across the PTB readers and writers: one word form
inside the toolkit (``50/50``), the PTB spelling in what the writers write (see
:mod:`tagger.formats.ptb`); on inline inputs and the WSJ sample."""

from __future__ import annotations

import io

from tagger import formats
from tagger.corpus.records import Sentence
from tagger.formats import mrg, placement


def read(text: str, fmt: str) -> list[Sentence]:
    return list(formats.read(io.BytesIO(text.encode()), fmt))


def write(sentences, fmt: str) -> str:
    out = io.StringIO()
    formats.write(sentences, out, fmt)
    return out.getvalue()


def spelled_leaves(text: str) -> list[str]:
    """The words of bracketed trees as the text spells them (what EVALB compares)."""
    return [word for tree, _, _ in mrg.trees(io.StringIO(text), "<text>") for _, word in tree.leaves()]


def test_every_ptb_reader_unescapes_slashes_and_every_writer_escapes_them():
    tagged = read("a/DT 50\\/50/CD split/NN\n", "tagged")[0]
    pos = read("[ a/DT 50\\/50/CD split/NN ]\n", "pos")[0]
    tree = read("( (NP (DT a) (CD 50\\/50) (NN split)) )\n", "mrg")[0]
    trees = read("(NP (DT a) (CD 50\\/50) (NN split))\n", "trees")[0]
    dp = read("a\tDT\t3\n50\\/50\tCD\t3\nsplit\tNN\t0\n\n", "dp")[0]
    for sentence in (tagged, pos, tree, trees, dp):
        assert sentence.words == ["a", "50/50", "split"]
    assert tree.tree.leaves()[1] == ("CD", "50/50") and trees.tree.leaves()[1] == ("CD", "50/50")
    assert write([tree], "trees") == "( (NP (DT a) (CD 50\\/50) (NN split)))\n"
    assert write([trees], "mrg") == "(NP (DT a) (CD 50\\/50) (NN split) )\n"
    assert write([dp], "dp") == "a\tDT\t3\n50\\/50\tCD\t3\nsplit\tNN\t0\n\n"
    assert write([tagged], "tagged") == "a/DT 50\\/50/CD split/NN\n"
    assert write([tree], "conllu").splitlines()[1].split("\t")[1] == "50/50"  # as a tagged file's form


def test_words_typed_with_slashes_are_escaped_and_read_back():
    """Plain text's ``and/or`` (no escape to undo) is written in the PTB spelling; a supertag's
    slashes too; everything reads back as it was."""
    sentence = read("and/or 1/2 / \\/\n", "text")[0]
    assert sentence.words == ["and/or", "1/2", "/", "\\/"]
    sentence.columns["xpos"] = ["CC", "N/N", "SYM", "(S\\NP)/NP"]
    text = write([sentence], "tagged")
    assert text == "and\\/or/CC 1\\/2/N\\/N \\//SYM \\\\\\//(S\\NP)\\/NP\n"  # (a backslash before a slash doubled)
    back = read(text, "tagged")[0]
    assert back.words == sentence.words and back.columns["xpos"] == sentence.columns["xpos"]
    assert read(write([sentence], "pos"), "pos")[0].words == sentence.words
    parsed = read("(S (CC a) (CD b) (SYM c) (SYM d))\n", "trees")[0]  # a parser's tree, then the typed words
    parsed = Sentence(sentence.words, {}, tree=mrg._retag(parsed.tree, sentence.words, None))
    assert write([parsed], "trees") == "(S (CC and\\/or) (CD 1\\/2) (SYM \\/) (SYM \\\\/))\n"
    assert read(write([parsed], "trees"), "trees")[0].words == sentence.words


def test_a_treebank_with_bare_slashes_is_written_back_as_it_spells_them():
    """Other treebanks do not escape slashes: their words come back as their file spells them,
    also in a parser's new tree over them, so the output still matches that gold for EVALB; a
    word that changed is written in the PTB spelling."""
    text = "(S (CC and/or) (CD 1\\/2))\n"
    gold = read(text, "trees")
    assert gold[0].words == ["and/or", "1/2"]
    assert write(gold, "trees") == text
    assert write(gold, "mrg") == "(S (CC and/or) (CD 1\\/2) )\n"
    parsed = Sentence(gold[0].words, {}, gold[0].source, raw=gold[0].raw,
                      tree=mrg._retag(read("(X (A a) (B b))\n", "trees")[0].tree, gold[0].words, None))
    assert write([parsed], "trees") == "(X (A and/or) (B 1\\/2))\n"
    converted = placement.map_columns(read("( (S (CC and/or) (CD 1\\/2)) )\n", "mrg")[0], "mrg", "trees", "misc")
    assert write([converted], "trees") == "( (S (CC and/or) (CD 1\\/2)))\n"
    gold[0].words[0] = "either/or"
    assert write(gold, "trees") == "(S (CC either\\/or) (CD 1\\/2))\n"
    dp = read("and/or\tCC\t0\n1\\/2\tCD\t1\n\n", "dp")
    assert dp[0].words == ["and/or", "1/2"] and write(dp, "dp") == "and/or\tCC\t0\n1\\/2\tCD\t1\n\n"


def test_wsj_pos_mrg_and_dp_give_the_same_forms(shared_data):
    """wsj_0186 spells ``50\\/50`` in all three files: one form, ``50/50``, from each reader."""
    root = shared_data / "ptb-wsj-sample"
    found = {}
    for path in (root / "tagged" / "wsj_0186.pos", root / "combined" / "wsj_0186.mrg",
                 shared_data / "ptb-wsj-sample-dep" / "wsj_0186.dp"):
        words = [word for sentence in formats.read(path) for word in sentence.words]
        found[path.suffix] = sorted({word for word in words if "/" in word})
    assert found == {".pos": ["50/50"], ".mrg": ["50/50"], ".dp": ["50/50"]}


def test_trees_over_words_of_wsj_pos_files_match_the_gold_mrg_for_evalb(shared_data):
    """A parser's trees over the words of wsj_0186.pos (here the gold trees over them, as the
    parser builds its own over a sentence's words) spell every word as the gold .mrg does,
    byte for byte: no ``Words unmatch (50\\/50|50/50)``."""
    root = shared_data / "ptb-wsj-sample"
    gold_path = root / "combined" / "wsj_0186.mrg"
    gold = {tuple(s.words): s.tree for s in formats.read(gold_path)}
    parsed = [Sentence(s.words, s.columns, tree=mrg._retag(gold[tuple(s.words)], s.words, None))
              for s in formats.read(root / "tagged" / "wsj_0186.pos") if tuple(s.words) in gold]
    assert len(parsed) > 20 and any("50/50" in s.words for s in parsed)
    with open(gold_path, encoding="utf-8") as stream:
        spelled = {tuple(word for _, word in tree.leaves()) for tree, _, _ in mrg.trees(stream, "gold")}
    written = [tuple(spelled_leaves(write([sentence], "trees"))) for sentence in parsed]
    assert any("50\\/50" in words for words in written) and all(words in spelled for words in written)


def test_words_with_backslashes_read_back_and_words_with_spaces_are_refused():
    """EWT has the word ``\\`` (before ``//``): a backslash that ended a word escaped the tag's
    separator; Vietnamese words hold spaces, which tokens separated by spaces cannot."""
    import pytest

    from tagger.errors import TaggerError

    words = ["\\", "a\\", "\\\\", "\\*", "a\\b", "\\/", "//"]
    sentence = Sentence(words, {"xpos": ["NFP", "X", "Y", "NN", "NN", "SYM", "SYM"]})
    for fmt in ("tagged", "pos"):
        back = read(write([sentence], fmt), fmt)[0]
        assert back.words == words and back.columns["xpos"] == sentence.columns["xpos"], fmt
    assert write([sentence], "tagged").startswith("\\\\/NFP a\\\\/X \\\\\\\\/Y \\*/NN a\\b/NN")
    assert read("1\\/2/CD Pierre/N\\/N\n", "tagged")[0].columns["xpos"] == ["CD", "N/N"]  # the PTB's own, as ever
    spaced = Sentence(["Thanh", "bắt chuyện"], {"xpos": ["Np", "V"]}, source="vi.conllu", line=7)
    for fmt in ("tagged", "pos", "pipe"):
        with pytest.raises(TaggerError, match=f"vi.conllu:7: the {fmt} format cannot hold the word 'bắt chuyện'"):
            write([spaced], fmt)
