"""Readers and writers on small inline inputs and the data/ samples: logic and error reports."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tagger import formats
from tagger.corpus.records import Sentence
from tagger.corpus.trees import Tree
from tagger.errors import TaggerError
from tagger.formats import ccgbank, columns, conll, mrg, pipe, pos, ptb

DATA = Path(__file__).parents[1] / "data"


def read(text: str | bytes, fmt: str = "auto", **options) -> list[Sentence]:
    data = text.encode() if isinstance(text, str) else text
    return list(formats.read(io.BytesIO(data), fmt, **options))


def write(sentences, fmt: str, **options) -> str:
    out = io.StringIO()
    formats.write(sentences, out, fmt, **options)
    return out.getvalue()


def error(text: str | bytes, fmt: str = "auto", **options) -> TaggerError:
    with pytest.raises(TaggerError) as info:
        read(text, fmt, **options)
    return info.value


def row(i, form, upos="X", head="0", deprel="root", xpos="_"):
    return "\t".join([str(i), form, "_", upos, xpos, "_", str(head), deprel, "_", "_"])


# --- CoNLL-U / CoNLL-X --------------------------------------------------------------------------


def test_conllu_sample_words_skip_ranges_and_empty_nodes():
    sentences = list(formats.read(DATA / "sample.conllu"))
    assert len(sentences) == 8 and sum(map(len, sentences)) == 54
    second = sentences[1]
    assert second.words == ["She", "does", "n't", "like", "cold", "coffee", "."]
    assert second.columns["head"] == [4, 4, 4, 0, 6, 4, 4]
    assert second.columns["upos"][1] == "AUX" and second.columns["misc"][5] == "SpaceAfter=No"
    assert any(line.startswith("2-3\t") for line in second.raw["lines"])
    fourth = sentences[3]
    assert "ate" not in fourth.words[2:] and len(fourth) == 9
    assert any(line.startswith("6.1\t") for line in fourth.raw["lines"])
    assert second.source.endswith("sample.conllu") and second.line == 12


def test_conllu_sample_round_trip_is_byte_identical():
    sentences = list(formats.read(DATA / "sample.conllu"))
    assert write(sentences, "conllu").encode() == (DATA / "sample.conllu").read_bytes()


def test_conllu_writer_rewrites_only_changed_columns():
    sentences = list(formats.read(DATA / "sample.conllu"))
    sentences[1].columns["upos"] = ["X"] * 7
    sentences[1].columns["head"] = [0, 1, 1, 1, 1, 1, 1]
    lines = write(sentences, "conllu").splitlines()
    original = (DATA / "sample.conllu").read_text().splitlines()
    changed = [(a, b) for a, b in zip(original, lines) if a != b]
    assert len(lines) == len(original) and len(changed) == 7
    for before, after in changed:
        a, b = before.split("\t"), after.split("\t")
        assert b[3] == "X" and [x for i, x in enumerate(a) if i not in (3, 6)] == [
            x for i, x in enumerate(b) if i not in (3, 6)]
    assert "2-3\tdoesn't\t_\t_\t_\t_\t_\t_\t_\t_" in lines


def test_conllu_writer_with_columns_writes_only_those():
    sentences = list(formats.read(DATA / "sample.conllu"))
    sentences[1].columns["upos"] = ["X"] * 7
    sentences[1].columns["head"] = [0] * 7  # changed, but not named: its lines keep theirs
    lines = write(sentences, "conllu", columns=["upos"]).splitlines()
    original = (DATA / "sample.conllu").read_text().splitlines()
    changed = [(a.split("\t"), b.split("\t")) for a, b in zip(original, lines) if a != b]
    assert len(lines) == len(original) and len(changed) == 7
    assert all(b[3] == "X" and a[:3] + a[4:] == b[:3] + b[4:] for a, b in changed)
    conllx = write(sentences, "conllx", columns=["upos"]).splitlines()  # fresh: no comments, ranges, DEPS, MISC
    words = [line.split("\t") for line in lines if line[:1].isdigit() and line.split("\t")[0].isdigit()]
    fresh = [line.split("\t") for line in conllx if line]  # every column from the record (HEAD changed above)
    assert [f[:6] + f[7:] for f in fresh] == [w[:6] + [w[7], "_", "_"] for w in words]
    text = f"{row(1, 'a')}\n{row(2, 'b', head='01')}\n\n"  # HEADs are formatted only when written
    assert write(read(text, "conllu"), "conllu", columns=["upos"]) == text
    assert write(read(text, "conllu"), "conllu") == text.replace("\t01\t", "\t1\t")


def test_conllu_fresh_sentence_from_text():
    sentence = read("Hello world !\n", "text")[0]
    sentence.columns["upos"] = ["INTJ", "NOUN", "PUNCT"]
    assert write([sentence], "conllu") == (
        "1\tHello\t_\tINTJ\t_\t_\t_\t_\t_\t_\n2\tworld\t_\tNOUN\t_\t_\t_\t_\t_\t_\n"
        "3\t!\t_\tPUNCT\t_\t_\t_\t_\t_\t_\n\n")
    again = read(write([sentence], "conllu"), "conllu")[0]
    assert again.words == sentence.words and again.columns["head"] == [-1, -1, -1]


def test_conllx_columns_and_round_trip():
    text = "1\tDogs\tdog\tN\tNNS\t_\t2\tSBJ\t_\t_\n2\tbark\tbark\tV\tVBP\t_\t0\tROOT\t_\t_\n\n"
    sentence = read(text, "conllx")[0]
    assert sentence.columns["upos"] == ["N", "V"] and sentence.columns["xpos"] == ["NNS", "VBP"]
    assert "misc" not in sentence.columns
    assert write([sentence], "conllx") == text


@pytest.mark.parametrize("lines, line, message", [
    ([row(1, "a"), "2\tb\t_\tX\t_\t_\t1\tdep\t_"], 2, "expected 10 tab-separated columns, found 9"),
    ([row(1, "a"), row(2, "b", head="x")], 2, "HEAD 'x' is not a non-negative integer"),
    ([row(1, "a"), row(2, "b", head=3)], 2, "HEAD 3 out of range 0..2"),
    ([row(1, "a"), row(2, "b", head=2)], 2, "its own HEAD"),
    ([row(1, "a"), row(3, "b", head=1)], 2, "word ID 3 out of order, expected 2"),
    ([row(1, "a"), row(1, "b", head=1)], 2, "word ID 1 out of order"),
    ([row("x", "a")], 1, "bad ID 'x'"),
    ([row("1²", "a")], 1, "bad ID '1²'"),
    (["# only a comment"], 1, "no words"),
    ([row(1, "a"), "3-4\tab\t_\t_\t_\t_\t_\t_\t_\t_"], 2, "should start at word 2"),
    (["1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_", row(1, "a")], 1, "ends at word 2"),
    ([row(1, "a"), "3.1\tb\t_\t_\t_\t_\t_\t_\t_\t_"], 2, "should follow word 1"),
    (["1-1\ta\t_\t_\t_\t_\t_\t_\t_\t_", row(1, "a")], 1, "range 1-1 covers one word"),
    (["1-3\tabc\t_\t_\t_\t_\t_\t_\t_\t_", row(1, "a"), "2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_", row(2, "b", head=1),
      row(3, "c", head=1)], 3, "range 2-3 overlaps the range ending at word 3 (line 3)"),
    ([row(1, "a").replace("\t_\t", "\t\t", 1)], 1, "column 3 is empty"),
])
def test_conllu_errors_name_file_and_line(tmp_path, lines, line, message):
    path = tmp_path / "bad.conllu"
    path.write_text(f"{row(1, 'ok')}\n\n" + "\n".join(lines) + "\n")
    with pytest.raises(TaggerError) as info:
        list(formats.read(path))
    assert info.value.file == str(path) and info.value.line == line + 2
    assert message in info.value.message


def mwt(ids: str, form: str) -> str:
    return f"{ids}\t{form}\t_\t_\t_\t_\t_\t_\t_\t_"


WORDS = [row(i, w, head=0 if i == 1 else 1) for i, w in enumerate("abcdefg", 1)]


@pytest.mark.parametrize("lines, bad_line", [
    ([mwt("1-7", "abcdefg")] + WORDS, None),  # as the official scorer and validator: any span of existing words
    ([mwt("1-2", "ab")] + WORDS[:2] + [mwt("3-4", "cd")] + WORDS[2:], None),
    ([mwt("1-7", "abcdefg")] + WORDS[:3] + [mwt("4-5", "de")] + WORDS[3:], 5),  # 19-25 over 22-23
    ([mwt("1-3", "abc")] + WORDS[:2] + [mwt("3-4", "cd")] + WORDS[2:], 4),
    (WORDS[:1] + [mwt("2-2", "b")] + WORDS[1:], 2),
    (WORDS[:5] + [mwt("6-8", "fgh")] + WORDS[5:], 6),
])
def test_conllu_multiword_ranges_the_fast_and_checked_readings_agree(lines, bad_line):
    """The fast path (:func:`conll._plain`) reads a block with ranges exactly as the line by
    line reading does, and leaves a bad range to it, which reports it on its line."""
    block = list(enumerate(lines, 1))
    if bad_line is None:
        assert conll._plain(lines) == conll._checked(block, "x") and len(read("\n".join(lines) + "\n\n")[0]) == 7
        return
    assert conll._plain(lines) is None
    with pytest.raises(TaggerError) as info:
        conll._checked(block, "x")
    assert info.value.line == bad_line and "multiword range" in info.value.message


# --- tagged text and .pos --------------------------------------------------------------------------


def test_split_token_rules():
    assert ptb.split_token("dog/NN") == ("dog", "NN")
    assert ptb.split_token("dog_NN") == ("dog", "NN")
    assert ptb.split_token("1\\/2/CD") == ("1/2", "CD")
    assert ptb.split_token("1\\/2_CD") == ("1/2", "CD")
    assert ptb.split_token("New_York/NNP") == ("New_York", "NNP")
    assert ptb.split_token("a/b/c") == ("a/b", "c")
    assert ptb.split_token("\\//SYM") == ("/", "SYM")
    for bad in ("dog", "dog/", "/NN", "_NN", "dog_"):
        assert ptb.split_token(bad) is None


def test_tagged_read_write():
    sentences = read("The/DT ratio/NN is/VBZ 1\\/2/CD ./.\nNew_York_NNP is_VBZ big_JJ\n\n", "tagged")
    assert sentences[0].words == ["The", "ratio", "is", "1/2", "."]
    assert sentences[0].columns["xpos"] == ["DT", "NN", "VBZ", "CD", "."]
    assert sentences[1].words == ["New_York", "is", "big"] and sentences[1].line == 2
    assert write(sentences, "tagged") == "The/DT ratio/NN is/VBZ 1\\/2/CD ./.\nNew_York/NNP is/VBZ big/JJ\n"
    assert read(write(sentences, "tagged", sep="_"), "tagged")[0].words == sentences[0].words
    assert read("a/B\n", "tagged", column="upos")[0].columns == {"upos": ["B"]}


def test_ccg_supertags_written_as_tagged_text_read_back():
    """A supertag's slashes are escaped as a word's are (``Pierre/N/N`` read back as the word
    ``Pierre/N`` with the tag ``N``)."""
    tags = ["N/N", "(S[dcl]\\NP)/(S[b]\\NP)", "."]
    text = write([Sentence(["Pierre", "will", "."], {"xpos": tags})], "tagged")
    assert text == "Pierre/N\\/N will/(S[dcl]\\NP)\\/(S[b]\\NP) ./.\n"
    back = read(text, "tagged")[0]
    assert back.words == ["Pierre", "will", "."] and back.columns["xpos"] == tags


def test_tagged_errors():
    e = error("a/DT b/NN\nc/DT d\n", "tagged")
    assert e.line == 2 and "'d' has no /TAG" in e.message
    with pytest.raises(TaggerError, match="no 'xpos' column"):
        write(read("a b\n", "text"), "tagged")


def test_pos_sentence_boundaries():
    text = (
        "\n======================================\n\n"
        "[ Pierre/NNP Vinken/NNP ]\n,/, \nwill/MD join/VB ./. \n\n"
        "[ The/DT board/NN ]\nsaid/VBD ,/, ``/`` it/PRP is/VBZ good/JJ ./. \n\n''/'' \n"
        "[ A/DT unit/NN ]\n\n[ that/WDT ]\nmakes/VBZ \n[ filters/NNS ]\n./. \n\n"
        "======================================\n\n"
        "[ No/DT period/NN ]\n\n======================================\n[ Next/JJ ]\n./.\n"
    )
    sentences = read(text, "pos")
    assert [s.words for s in sentences] == [
        ["Pierre", "Vinken", ",", "will", "join", "."],
        ["The", "board", "said", ",", "``", "it", "is", "good", ".", "''"],
        ["A", "unit", "that", "makes", "filters", "."],
        ["No", "period"],
        ["Next", "."],
    ]
    assert sentences[1].line == 8 and sentences[0].columns["xpos"][0] == "NNP"
    again = read(write(sentences, "pos"), "pos")
    assert [(s.words, s.columns) for s in again] == [(s.words, s.columns) for s in sentences]


# --- .mrg trees --------------------------------------------------------------------------------------


def test_mrg_traces_dropped_and_tree_kept():
    sentences = list(formats.read(DATA / "sample.mrg"))
    assert len(sentences) == 4 and sentences[3].line == 20
    last = sentences[3]
    assert last.words[:2] == ["Please", "send"] and "*" not in last.words
    assert ("-NONE-", "*") in mrg.leaves(last.tree)
    assert last.tree.label == "" and last.tree.children[0].label == "S"


def test_mrg_several_trees_per_line_and_round_trip():
    text = "(S (NP (DT a) (NN b)) (VP (VBZ c))) (S (X (-NONE- *T*)) (NN d))\n"
    sentences = read(text, "mrg")
    assert [s.words for s in sentences] == [["a", "b", "c"], ["d"]]
    assert write(sentences, "trees") == "(S (NP (DT a) (NN b)) (VP (VBZ c)))\n(S (X (-NONE- *T*)) (NN d))\n"
    assert write(sentences, "mrg") == "(S (NP (DT a) (NN b) )\n  (VP (VBZ c) ))\n(S (X (-NONE- *T*) )\n  (NN d) )\n"
    assert [s.tree for s in read(write(sentences, "mrg"), "mrg")] == [s.tree for s in sentences]
    sentences[0].columns["xpos"] = ["X1", "X2", "X3"]
    assert write(sentences[:1], "trees") == "(S (NP (X1 a) (X2 b)) (VP (X3 c)))\n"
    for fmt in ("mrg", "trees"):
        with pytest.raises(TaggerError, match="no bracketed tree"):  # no flat (X ...) tree passing for one
            write(read("x y\n", "text"), fmt)


WSJ_LAYOUT = ("( (S \n"
              "    (NP-SBJ (NNP Mr.) (NNP Vinken) )\n"
              "    (VP (VBZ is) \n"
              "      (NP-PRD \n"
              "        (NP (NN chairman) )\n"
              "        (PP (IN of) \n"
              "          (NP (NNP Elsevier) ))))\n"
              "    (. .) ))\n")


def test_mrg_writes_the_wsj_layout():
    tree = "( (S (NP-SBJ (NNP Mr.) (NNP Vinken) ) (VP (VBZ is) (NP-PRD (NP (NN chairman) ) (PP (IN of) " \
           "(NP (NNP Elsevier) ) ) ) ) (. .) ) )\n"
    assert write(read(tree, "mrg"), "mrg") == WSJ_LAYOUT


def test_trees_nested_thousands_deep_are_written():
    # A parser's tree can be this deep (an untrained one's constrained output nests for a long sentence).
    depth = 3000
    tree = Tree("XX", ("a",))
    for _ in range(depth):
        tree = Tree("S", (tree,))
    sentence = Sentence(["a"], {"xpos": ["DT"]}, tree=tree)
    text = write([sentence], "trees")
    assert text == "(S " * depth + "(DT a)" + ")" * depth + "\n"
    assert read(text, "trees")[0].words == ["a"]
    with pytest.raises(TaggerError, match="too deeply nested"):  # the WSJ layout: one line, an error
        write([sentence], "mrg")


def test_brackets_in_words_and_tags_are_written_as_the_treebank_writes_them():
    leaves = (Tree("XX", ("(",)), Tree("NN", ("a",)), Tree("XX", (":)",)))
    sentence = Sentence(["(", "a", ":)"], {"xpos": ["(", "NN", ")"]}, tree=Tree("", (Tree("S", leaves),)))
    text = write([sentence], "trees")
    assert text == "( (S (-LRB- -LRB-) (NN a) (-RRB- :-RRB-)))\n"
    assert read(text, "trees")[0].words == ["-LRB-", "a", ":-RRB-"]
    assert read(write([sentence], "mrg"), "mrg")[0].tree == read(text, "trees")[0].tree
    spaced = Sentence(["a b"], {}, tree=Tree("", (Tree("S", (Tree("XX", ("a b",)),)),)))
    for fmt in ("trees", "mrg"):
        with pytest.raises(TaggerError, match="white space"):  # it would read back as two words
            write([spaced], fmt)


def test_trees_are_read_a_line_a_sentence():
    text = "\n(S (NN a))\n(P b) (Q c)\n\n\n(S (NN d)\n (NN e))\n\n"
    sentences = read(text, "trees")
    assert [(s.words, s.line) for s in sentences] == [(["a"], 2), (["b", "c"], 3), (["d", "e"], 6)]
    assert sentences[1].tree == read("( (P b) (Q c))\n", "trees")[0].tree  # an unlabelled bracket over the line
    kept = read(text, "trees", blank_lines=True)  # blank lines as EVALB counts them, but not after the last tree
    assert [(s.words, s.line, s.tree is None) for s in kept] == [
        ([], 1, True), (["a"], 2, False), (["b", "c"], 3, False), ([], 4, True), ([], 5, True), (["d", "e"], 6, False)]
    assert read(text, "mrg")[1].words == ["b"]  # .mrg reads tree by tree
    assert formats.guess_format(None, "(S (NN a))\n\n(S (NN b)) (S (NN c))\n") == ("trees", None)
    assert formats.guess_format(None, "( (S\n  (NN a)))\n") == ("mrg", None)
    # Words outside every bracket: text that starts with a bracket, not trees
    assert formats.guess_format(None, "( see below ) it rose .\n") == ("text", None)
    assert formats.guess_format(None, "(see below) it rose .\n") == ("text", None)
    assert formats.guess_format(None, "(/( a/DT )/) b/NN\n") == ("tagged", None)
    assert formats.BY_EXTENSION[".trees"] == "trees"


@pytest.mark.parametrize("text, line, message", [
    ("(S (NN a)\n(VB b)\n", 1, "not closed"),
    ("(S (NN a))\n)\n", 2, "')' closes no tree"),
    ("(S (NN a))\nstray\n", 2, "outside a tree"),
    ("(S\n (NN a b))\n", 2, "leaf (NN a b) has 2 words; a leaf is (TAG word)"),
    ("(S (NP (DT the cat)))\n", 1, "leaf (DT the cat) has 2 words; a leaf is (TAG word)"),
    ("(S (X a b c d e f))\n", 1, "leaf (X a b c d e ...) has 6 words"),
    ("(S\n (NP a (NN b)))\n", 2, "word 'a' outside a (TAG word) leaf"),
    ("(S (NP) (NN a))\n", 1, "empty constituent"),
    ("(S (NN a) ($( -))\n", 1, "empty constituent '(-)' (a bracket in a tag or word is written -LRB-"),
    ("(S (-NONE- *))\n", 1, "no words"),
])
def test_mrg_errors(text, line, message):
    e = error(text, "mrg")
    assert e.line == line and message in e.message


def test_unbalanced_multiline_trees_are_reported_where_the_layout_breaks():
    """A ``)`` too many or too few shows only where the brackets run out, lines later; the
    indentation says which line it is on."""
    lines = WSJ_LAYOUT.splitlines(keepends=True)
    assert [s.words for s in read(WSJ_LAYOUT, "mrg")] == [["Mr.", "Vinken", "is", "chairman", "of", "Elsevier", "."]]
    extra = "".join(lines[:4] + [lines[4].replace(")\n", "))\n")] + lines[5:])
    for fmt in ("mrg", "trees"):
        e = error(extra, fmt)
        assert e.line == 5 and "one ')' too many on this line" in e.message and "line 8: ')' closes no tree" in e.message
    e = error("".join(lines[:6] + [lines[6].replace("))))", ")))")] + lines[7:]) + WSJ_LAYOUT, "mrg")
    assert e.line == 7 and "a ')' missing on this line" in e.message and "line 1: the tree starting here" in e.message
    e = error(WSJ_LAYOUT + WSJ_LAYOUT[:-1] + ")\n", "mrg")  # on the last line: that line
    assert e.line == 16 and e.message == "unbalanced brackets: ')' closes no tree"
    e = error("(S (NP (NN a))))\n(S (NN b))\n", "trees")
    assert e.line == 1 and e.message == "unbalanced brackets: ')' closes no tree"


# --- dp -------------------------------------------------------------------------------------------------


def test_dp_read_write():
    sentences = list(formats.read(DATA / "sample.dp"))
    assert len(sentences) == 8 and sentences[0].columns["head"][:3] == [2, 3, 0]
    assert sentences[0].columns["deprel"] == ["_"] * 7
    assert write(sentences, "dp").encode() == (DATA / "sample.dp").read_bytes()
    labelled = read("a\tDT\t2\tdet\nb\tNN\t0\troot\n", "dp")[0]
    assert labelled.columns["deprel"] == ["det", "root"]
    assert write([labelled], "dp") == "a\tDT\t2\tdet\nb\tNN\t0\troot\n\n"


@pytest.mark.parametrize("text, line, message", [
    ("a\tDT\t2\nb\tNN\t3\n", 2, "head 3 out of range 0..2"),
    ("a\tDT\tx\n", 1, "not a non-negative integer"),
    ("a\tDT\n", 1, "found 2"),
])
def test_dp_errors(text, line, message):
    e = error(text, "dp")
    assert e.line == line and message in e.message


# --- CCGbank AUTO and pipe ------------------------------------------------------------------------------

NESTED = (
    "ID=t.1 PARSER=GOLD NUMPARSE=1\n"
    "(<T S[dcl] 0 2> (<T S[dcl] 1 2> (<L NP NNP NNP John NP>) (<T S[dcl]\\NP 0 2> "
    "(<L ((S[dcl]\\NP)/PP)/NP VBD VBD put ((S[dcl]\\NP_1)/PP_2)/NP_3>) (<T (S[dcl]\\NP)/PP 0 2> "
    "(<L -LRB- -LRB- -LRB- -LRB- -LRB->) (<L ) -RRB- -RRB- ) )>) ) ) ) (<L . . . . .>) )\n"
)


def test_auto_nested_categories_and_bracket_words():
    [sentence] = read(NESTED)
    assert sentence.words == ["John", "put", "-LRB-", ")", "."]
    assert sentence.columns["supertag"] == ["NP", "((S[dcl]\\NP)/PP)/NP", "-LRB-", ")", "."]
    assert sentence.columns["xpos"] == ["NNP", "VBD", "-LRB-", "-RRB-", "."]
    assert sentence.raw["id"] == "t.1" and sentence.line == 1
    assert write([sentence], "ccgbank") == NESTED


def test_auto_words_that_hold_the_leaf_closer():
    text = "ID=t.1 PARSER=GOLD NUMPARSE=1\n(<T S 0 2> (<L NP NN NN :>) NP>) (<L S\\NP VBZ VBZ >) S\\NP>) )\n"
    [sentence] = read(text)
    assert sentence.words == [":>)", ">)"] and sentence.columns["supertag"] == ["NP", "S\\NP"]
    assert write([sentence], "ccgbank") == text


def test_auto_sample_and_pipe_round_trip():
    sentences = list(formats.read(DATA / "sample.auto"))
    assert [len(s) for s in sentences] == [7, 6, 7, 2]
    assert write(sentences, "ccgbank").encode() == (DATA / "sample.auto").read_bytes()
    assert write(sentences, "pipe").encode() == (DATA / "sample.pipe").read_bytes()
    back = list(formats.read(DATA / "sample.pipe"))
    assert [(s.words, s.columns) for s in back] == [(s.words, s.columns) for s in sentences]


def test_auto_writer_needs_the_derivation():
    with pytest.raises(TaggerError, match="cannot write AUTO"):
        write(read("a b\n", "text"), "ccgbank")
    [sentence] = read(NESTED)
    sentence.columns["supertag"] = ["N"] * 5
    with pytest.raises(TaggerError, match="cannot write AUTO"):
        write([sentence], "ccgbank")


@pytest.mark.parametrize("derivation, message", [
    ("(<T S 0 2> (<L N NN NN a N>) (<L N NN NN b N>)", "1 node(s) not closed"),
    (") (<L N NN NN a N>)", "')' closes no node"),
    ("(<T S 0 2> (<L N NN NN a N>) (<L N NN NN b N>) ) )", "text after the end"),
    ("(<L N NN NN a>)", "leaf has 4 fields, expected 5"),
    ("(<L N NN NN a N", "not closed by '>)'"),
    ("(<T S 0 2> (<L N NN NN a N>) )", "node has 1 children, its header says 2"),
    ("(<T S 0> (<L N NN NN a N>) )", "node header"),
    ("(<L N NN NN a N>) (<L N NN NN b N>)", "after the end"),
    ("(S (NN a))", "expected '(<T'"),
])
def test_auto_errors(derivation, message):
    e = error(f"ID=x.1 PARSER=GOLD NUMPARSE=1\n{derivation}\n", "ccgbank")
    assert e.line == 2 and message in e.message


def test_auto_id_without_derivation():
    e = error("ID=x.1 PARSER=GOLD NUMPARSE=1\nID=x.2 PARSER=GOLD NUMPARSE=1\n(<L N NN NN a N>)\n", "ccgbank")
    assert e.line == 1 and "without a derivation" in e.message
    assert ccgbank.parse_derivation("(<L N NN NN a N>)") == [["N", "NN", "NN", "a", "N"]]


def test_pipe_read_write_and_errors():
    [sentence] = read("# generated by hand\n\na|b|NN|N runs|VBZ|S\\NP\n", "pipe")
    assert sentence.words == ["a|b", "runs"] and sentence.columns["supertag"] == ["N", "S\\NP"]
    assert write([sentence], "pipe") == "a|b|NN|N runs|VBZ|S\\NP\n"
    assert write(read("a b\n", "text"), "pipe") == "a|_|_ b|_|_\n"
    e = error("ok|NN|N\nword|N\n", "pipe")
    assert e.line == 2 and "'word|N' is not word|POS|supertag" in e.message
    assert pipe.split_token("a||N") is None


# --- plain text and columns ---------------------------------------------------------------------------


def test_text_read_write():
    sentences = read("  Hello   world \n\n\nBye .\n", "text")
    assert [s.words for s in sentences] == [["Hello", "world"], ["Bye", "."]]
    assert [s.line for s in sentences] == [1, 4]
    assert write(sentences, "text") == "Hello world\nBye .\n"


def test_parse_column_spec():
    assert columns.parse_column_spec("form=2,tag=6") == {"form": 2, "tag": 6}
    assert columns.parse_column_spec(" form = 1 , head=3 ") == {"form": 1, "head": 3}
    for bad in ("form", "form=x", "form=0", "tag=2", "form=1,form=2", "form=1,tag=1", "", "form=1,,", "form=²3"):
        with pytest.raises(TaggerError, match="bad column spec"):
            columns.parse_column_spec(bad)


def test_columns_read_write():
    text = "-DOCSTART- -X- O\n\n# a comment\nEU\tNNP\tB-ORG\t2\nrejects\tVBZ\tO\t0\n\nGerman NNP B-MISC _\n"
    sentences = read(text, "columns", columns="form=1,tag=3,head=4")
    assert [s.words for s in sentences] == [["EU", "rejects"], ["German"]]
    assert sentences[0].columns == {"tag": ["B-ORG", "O"], "head": [2, 0]}
    assert sentences[1].columns["head"] == [-1] and sentences[0].line == 3
    assert write(sentences, "columns", columns={"form": 1, "tag": 3}) == (
        "EU\t_\tB-ORG\nrejects\t_\tO\n\nGerman\t_\tB-MISC\n\n")
    sample = list(formats.read(DATA / "sample.tsv", columns="form=1,upos=2,xpos=3"))
    assert len(sample) == 8 and sample[0].columns["upos"][0] == "DET"


def test_columns_errors():
    e = error("a\tB\tC\nb\tB\n", "columns", columns="form=1,tag=3")
    assert e.line == 2 and "line has 2 columns, the column spec needs 3" in e.message
    e = error("a\tB\tx\n", "columns", columns="form=1,head=3")
    assert e.line == 1 and "HEAD 'x'" in e.message


# --- detection, directories, lists, streams and the errors every format shares ----------------------


@pytest.mark.parametrize("name, fmt", [
    ("sample.conllu", "conllu"), ("sample.txt", "text"), ("sample.pos.txt", "tagged"), ("sample.mrg", "mrg"),
    ("sample.auto", "ccgbank"), ("sample.pipe", "pipe"), ("sample.tsv", "columns"), ("sample.dp", "dp"),
])
def test_detect_by_extension_and_by_content(name, fmt):
    text = (DATA / name).read_text()
    assert formats.detect_format(DATA / name, text) == fmt
    assert formats.detect_format(None, text) == fmt
    assert formats.detect_format("stdin", text) == fmt
    assert [s.words for s in read(text)] == [s.words for s in formats.read(DATA / name)]


def test_detect_other_cases():
    assert formats.detect_format("x.conll", "") == "conllx"
    assert formats.detect_format("x.POS", "") == "pos"
    assert formats.detect_format(None, "") == "text"
    assert formats.detect_format(None, "\n=======\n\n[ a/DT b/NN ]\n") == "pos"
    assert formats.detect_format(None, "(<T S 0 2> (<L N NN NN a N>))") == "ccgbank"
    assert formats.detect_format(None, "I like [ brackets ] .") == "text"
    assert formats.detect_format(None, "and/or maybe\n") == "text"


def test_read_directory_list_and_stream(tmp_path):
    (tmp_path / "b.txt").write_text("two words\n")
    (tmp_path / "a.txt").write_text("one\n")
    assert [s.words for s in formats.read(tmp_path)] == [["one"], ["two", "words"]]
    (tmp_path / "c.mrg").write_text("(S (NN x))\n")
    (tmp_path / "README").write_text("not data\n")
    assert [s.words for s in formats.read(tmp_path)] == [["x"]]  # .txt ignored beside known extensions
    assert [s.words for s in formats.read(tmp_path, "text")] == [["one"], ["two", "words"]]
    assert [s.source for s in formats.read([tmp_path / "c.mrg", tmp_path / "a.txt"])] == [
        str(tmp_path / "c.mrg"), str(tmp_path / "a.txt")]
    (tmp_path / "d.dp").write_text("x\tNN\t0\n")
    with pytest.raises(TaggerError, match="several formats"):
        list(formats.read(tmp_path))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "README").write_text("a|B|C\n")
    with pytest.raises(TaggerError, match="no .pipe files in directory"):
        list(formats.read(tmp_path / "sub", "pipe"))
    with pytest.raises(TaggerError, match="no files of a known format in directory$"):
        list(formats.read(tmp_path / "sub"))
    for section in ("00", "01"):  # CCGbank's data/AUTO: section folders, no files
        (tmp_path / "AUTO" / section).mkdir(parents=True)
    with pytest.raises(TaggerError, match=r"it holds folders: 00, 01: give one, or .* --split wsj"):
        list(formats.read(tmp_path / "AUTO"))
    text_stream = io.TextIOWrapper(io.BytesIO(b"a/DT b/NN\n"), encoding="utf-8")
    assert read(b"a/DT b/NN\n")[0].columns == {"xpos": ["DT", "NN"]}
    assert list(formats.read(text_stream))[0].source == "<stdin>"


def test_unknown_format_and_option():
    with pytest.raises(TaggerError, match="unknown format 'xml'"):
        read("a\n", "xml")
    with pytest.raises(TaggerError, match="no option 'columns'"):
        read("a\n", "text", columns="form=1")
    with pytest.raises(TaggerError, match="unknown format"):
        write([], "xml")


@pytest.mark.parametrize("fmt", sorted(formats.FORMATS))
def test_empty_file(tmp_path, fmt):
    path = tmp_path / "empty.in"
    path.write_bytes(b"\n\n")
    assert list(formats.read(path, fmt)) == []  # no sentences, no error: the caller decides (train refuses)


@pytest.mark.parametrize("fmt", sorted(formats.FORMATS))
def test_invalid_utf8_and_missing_file(tmp_path, fmt):
    sample = {"conllu": row(1, "a"), "conllx": row(1, "a"), "dp": "a\tDT\t0", "ccgbank": "(<L N NN NN a N>)",
              "pipe": "a|DT|NP", "mrg": "(S (NN a))", "trees": "(S (NN a))", "columns": "a\tDT", "tagged": "a/DT",
              "pos": "a/DT",
              "text": "a"}[fmt]
    path = tmp_path / "bad.in"
    path.write_bytes(f"{sample}\n\n{sample}\n".encode() + b"\xff\xfe oops\n")
    layout = {"columns": "form=1,tag=2"} if fmt == "columns" else {}  # a named columns format needs its layout
    with pytest.raises(TaggerError) as info:
        list(formats.read(path, fmt, **layout))
    assert (info.value.file, info.value.line) == (str(path), 4) and "invalid UTF-8" in info.value.message
    with pytest.raises(TaggerError) as info:
        list(formats.read(tmp_path / "missing.x", fmt))
    assert info.value.file == str(tmp_path / "missing.x") and info.value.message == "no such file"


def test_wsj_splits():
    names = [f"wsj_{n:04d}.mrg" for n in (1, 99, 200, 1899, 1900, 2100, 2200, 2301, 2499)]
    pos_split = ptb.wsj_split(names, "pos")
    assert [p.name for p in pos_split["train"]] == names[:4]
    assert [p.name for p in pos_split["dev"]] == ["wsj_1900.mrg", "wsj_2100.mrg"]
    assert [p.name for p in pos_split["test"]] == ["wsj_2200.mrg", "wsj_2301.mrg", "wsj_2499.mrg"]
    ccg = ptb.wsj_split(names, "ccg")
    assert [p.name for p in ccg["dev"]] == ["wsj_0001.mrg", "wsj_0099.mrg"]
    assert [p.name for p in ccg["test"]] == ["wsj_2301.mrg"]
    assert [p.name for p in ptb.wsj_split(names, "dep")["dev"]] == ["wsj_2200.mrg"]
    sample = ptb.sample_split([f"x/wsj_{n:04d}.pos" for n in (1, 159, 160, 179, 180, 199)])
    assert {k: [p.name[4:8] for p in v] for k, v in sample.items()} == {
        "train": ["0001", "0159"], "dev": ["0160", "0179"], "test": ["0180", "0199"]}
    with pytest.raises(TaggerError, match="not a WSJ file name"):
        ptb.wsj_split(["README"], "pos")
    with pytest.raises(TaggerError, match="unknown WSJ split task"):
        ptb.wsj_split(names, "ner")


def test_every_format_module_has_the_interface():
    for name, module in formats.FORMATS.items():
        assert module.NAME == name and module.EXTENSIONS and callable(module.read) and callable(module.write)
    assert formats.FORMATS["conllu"] is conll and formats.FORMATS["pos"] is pos


def test_stream_detection_keeps_every_line_and_its_number():
    lines = [f"w{i}/NN x/DT" for i in range(1, 31)]
    lines[24] = "w25/NN untagged"
    stream = io.TextIOWrapper(io.BytesIO(("\n".join(lines) + "\n").encode()), encoding="utf-8")
    sentences = []
    with pytest.raises(TaggerError) as info:
        for sentence in formats.read(stream):
            sentences.append(sentence)
    assert len(sentences) == 24 and sentences[0].words == ["w1", "x"]
    assert (info.value.file, info.value.line) == ("<stdin>", 25)
    assert list(formats.read([])) == []


def test_wsj_split_refuses_a_folder_of_mixed_formats(tmp_path):
    from tagger.training.run import split_files

    (tmp_path / "combined").mkdir()
    (tmp_path / "tagged").mkdir()
    for number in range(1, 200, 20):
        (tmp_path / "combined" / f"wsj_{number:04d}.mrg").write_text("(S (NN x))\n")
        (tmp_path / "tagged" / f"wsj_{number:04d}.pos").write_text("x/NN\n")
    with pytest.raises(TaggerError, match=r"several formats \(\.mrg, \.pos\).*combined"):
        split_files(str(tmp_path), "sample", "pos")
    parts = split_files(str(tmp_path / "combined"), "sample", "pos")
    assert [p.name for p in parts["test"]] == ["wsj_0181.mrg"]


# --- plain text: whitespace tokens, and the warning about attached punctuation ---------------------

def test_text_warns_once_about_attached_punctuation():
    from tagger.formats import text

    stream = io.StringIO()
    data = io.BytesIO("Fine as it is .\nDon't you think it's $5.00, Mr. Smith? Yes.\nAnother one, here.\n".encode())
    sentences = list(text.read(data, warn=stream))
    assert [s.words for s in sentences][1] == ["Don't", "you", "think", "it's", "$5.00,", "Mr.", "Smith?", "Yes."]
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1  # once, on the first line that has them
    assert lines[0].startswith("warning: <stdin>:2: plain text is split at white space only")
    assert "'$5.00,'" in lines[0] and "'Smith?'" in lines[0] and "tokenize" in lines[0]
    quiet = io.StringIO()  # converted, not tagged: nothing to warn of
    assert len(list(text.read(io.BytesIO(data.getvalue()), warn=quiet, check_tokens=False))) == 3
    assert quiet.getvalue() == ""


def test_text_tokenised_input_gives_no_warning():
    from tagger.formats import text

    stream = io.StringIO()
    lines = ["Mr. Smith went to the U.S. in 2005 .", 'He said , " Yes " ( see p. 5 ) !', "etc. and so on .", "- - -"]
    assert len(list(text.read(io.BytesIO("\n".join(lines).encode()), warn=stream))) == 4
    assert stream.getvalue() == ""
