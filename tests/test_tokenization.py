"""The tokeniser's torch-free parts: labels from CoNLL-U, the model's view of text, sentences and
CoNLL-U blocks from labels (the text rebuilt exactly), multiword expansion, the streaming
reader and the boundary metric."""

from __future__ import annotations

import io
import re
import sys

import pytest

from tagger import formats
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.evaluation.metrics import BoundaryMetric
from tagger.tokenization.labels import (END, INSIDE, MWT_END, PAR, SENTENCE_END, escape_spaces,
                                        labelled_text, normalise, rebuild_text, spacing_after, text_sentence,
                                        unescape_spaces)
from tagger.tokenization.multiword import Expander, count_tokens, learn, learn_prefixes
from tagger.tokenization.multiword import vocabs as multiword_vocabs
from tagger.tokenization.segment import segment
from tagger.tokenization.stream import read_pieces, tokenize


CONLLU = """# newdoc id = d1
# sent_id = 1
# text = I don't know.
1	I	_	_	_	_	_	_	_	_
2-3	don't	_	_	_	_	_	_	_	_
2	do	_	_	_	_	_	_	_	_
3	n't	_	_	_	_	_	_	_	_
4	know	_	_	_	_	_	_	_	SpaceAfter=No
5	.	_	_	_	_	_	_	_	_

# sent_id = 2
1	Hi	_	_	_	_	_	_	_	SpaceAfter=No
2	!	_	_	_	_	_	_	_	SpaceAfter=No

# sent_id = 3
# newpar
# text = Bye now
1	Bye	_	_	_	_	_	_	_	_
2	now	_	_	_	_	_	_	_	_

"""


def _sentences(text: str = CONLLU):
    return [text_sentence(s) for s in formats.read(io.BytesIO(text.encode()), "conllu")]


def test_labels_from_conllu_join_sentences_as_running_text():
    sentences = _sentences()
    assert [t.form for t in sentences[0].tokens] == ["I", "don't", "know", "."]
    assert sentences[0].tokens[1].words == ["do", "n't"] and not sentences[0].tokens[2].space_after
    assert sentences[1].text is None and sentences[2].new_paragraph
    labelled = labelled_text(sentences)
    # sentence 2 has no # text: rebuilt from its tokens; SpaceAfter=No on its last token: no space before 3? no,
    # sentence 3 starts a paragraph: a blank line
    assert labelled.text == "I don't know. Hi!\n\nBye now"
    assert labelled.rebuilt == 1
    ends = {i: label for i, label in enumerate(labelled.labels) if label != INSIDE}
    text = labelled.text
    assert ends == {0: END, text.index("t k"): MWT_END, text.index("w."): END, text.index(". H"): SENTENCE_END,
                    text.index("i!"): END, text.index("!"): SENTENCE_END, text.index("e n"): END,
                    len(text) - 1: SENTENCE_END}
    assert labelled.expansions == {text.index("t k"): ("don't", ["do", "n't"])}


def test_sentences_joined_without_space_after_a_last_token_with_space_after_no():
    text = CONLLU.replace("# sent_id = 3\n# newpar\n", "# sent_id = 3\n")
    assert labelled_text(_sentences(text)).text == "I don't know. Hi!Bye now"


def test_a_text_comment_that_does_not_hold_the_tokens_is_rebuilt_from_them():
    text = CONLLU.replace("# text = I don't know.", "# text = I do not know.")
    labelled = labelled_text(_sentences(text))
    assert labelled.text.startswith("I don't know. Hi!") and labelled.rebuilt == 2


def test_normalise_keeps_the_length_and_marks_paragraph_breaks():
    text = "a\tb\nc  \n \n\nd\u3000e\x00"
    norm = normalise(text)
    assert len(norm) == len(text)
    assert norm == "a b c" + PAR * 6 + "d e\x01"


def test_normalise_makes_every_white_space_character_a_space_and_leaves_the_others():
    chars = "".join(chr(c) for c in range(1, 0x30000) if not 0xD800 <= c < 0xE000)  # no blank line: "\n" alone
    expected = "".join(" " if c.isspace() else c for c in chars)
    assert normalise(chars) == expected and normalise("\x00") == "\x01"


def test_escapes_round_trip():
    spaces = " \t\n\r\u00a0\u3000"
    assert escape_spaces("\n\n") == "\\n\\n" and escape_spaces("  ") == "\\s\\s"
    assert unescape_spaces(escape_spaces(spaces)) == spaces
    assert spacing_after("SpaceAfter=No") == "" and spacing_after("_") == " "
    assert spacing_after("Foo=1|SpacesAfter=\\n") == "\n"


def _rule_labels(norm: str) -> list[int]:
    """A stand-in for the model: tokens end before white space and around punctuation; a
    sentence ends at . ! ?; ``du`` is a multiword token."""
    labels = [INSIDE] * len(norm)
    for m in re.finditer(r"\w+|[^\w\s\x00]", norm):
        end = m.end() - 1
        if m.group() in ".!?":
            labels[end] = SENTENCE_END
        elif m.group().lower() in ("du", "don't"):
            labels[end] = MWT_END
        else:
            labels[end] = END
    return labels


def _tokenize(text: str, size: int = 1 << 16, max_carry: int = 1 << 16, expander=None):
    expander = expander or Expander(["du\tde le"], [])
    pieces = read_pieces(io.BytesIO(text.encode()), "<t>", size)
    return list(tokenize(pieces, _rule_labels, expander, max_carry=max_carry, margin=4))


INPUT = "  Le chat du voisin dort.  Il mange\tdu pain!\n\nUn autre   paragraphe ici.\r\nFin\n"


def test_blocks_rebuild_the_text_exactly():
    sentences = _tokenize(INPUT)
    lines = [s.raw["lines"] for s in sentences]
    assert rebuild_text(lines) == INPUT
    assert [s.words for s in sentences][0] == ["Le", "chat", "de", "le", "voisin", "dort", "."]
    first = lines[0]
    assert first[:4] == ["# newdoc", "# newpar", "# sent_id = 1", "# text = Le chat du voisin dort."]
    assert "3-4\tdu\t_\t_\t_\t_\t_\t_\t_\t_" in first and "1\tLe\t_\t_\t_\t_\t_\t_\t_\tSpacesBefore=\\s\\s" in first
    assert lines[1][0] == "# sent_id = 2" and lines[1][1] == "# text = Il mange du pain!"
    assert lines[2][:2] == ["# newpar", "# sent_id = 3"]
    assert lines[2][2] == "# text = Un autre paragraphe ici."
    assert lines[1][-1].endswith("SpacesAfter=\\n\\n")
    assert [s.line for s in sentences] == [1, 1, 3, 4]


def test_blocks_are_conllu_the_reader_takes_back():
    sentences = _tokenize(INPUT)
    out = io.StringIO()
    formats.write(sentences, out, "conllu", columns=[])
    again = list(formats.read(io.BytesIO(out.getvalue().encode()), "conllu"))
    assert [s.words for s in again] == [s.words for s in sentences]


def test_joined_text_comments_and_paragraphs_give_back_canonical_text():
    """Text as the benchmark rebuilds it from a treebank (sentences joined by a space, paragraphs
    by a blank line) comes back from the ``# text`` and ``# newpar`` lines alone."""
    text = "Le chat dort. Il mange du pain!\n\nUn autre paragraphe ici."
    paragraphs: list[list[str]] = []
    for sentence in _tokenize(text):
        lines = sentence.raw["lines"]
        if "# newpar" in lines:
            paragraphs.append([])
        paragraphs[-1].append(next(line[len("# text = "):] for line in lines if line.startswith("# text = ")))
    assert "\n\n".join(" ".join(p) for p in paragraphs) == text


def test_a_paragraph_break_ends_a_sentence_and_spaces_are_never_inside_a_token():
    norm = normalise("no end here\n\nnext")
    spans = segment(norm, [INSIDE] * len(norm))  # labels that never end anything
    assert [[norm[a:b] for a, b, _ in s.tokens] for s in spans] == [["no", "end", "here"], ["next"]]
    assert [s.new_paragraph for s in spans] == [True, True]


def test_spaced_tokens_go_on_over_one_space_the_model_did_not_end_before():
    norm = "thành phố  Hà Nội rộng."
    labels = [0] * len(norm)
    for word in ("phố", "Nội", "rộng"):  # the model ends these tokens, and no other (not thành, not Hà)
        labels[norm.index(word) + len(word) - 1] = 1
    labels[-1] = 2  # "." ends the sentence
    plain = [(a, b) for a, b, _ in segment(norm, labels)[0].tokens]
    assert [norm[a:b] for a, b in plain] == ["thành", "phố", "Hà", "Nội", "rộng", "."]
    spaced = [(a, b) for a, b, _ in segment(norm, labels, spaced_tokens=True)[0].tokens]
    # "phố  Hà": two spaces end a token whatever the labels; "Hà Nội" holds one
    assert [norm[a:b] for a, b in spaced] == ["thành phố", "Hà Nội", "rộng", "."]
    tail = segment("Hà Nội", [0] * 6, spaced_tokens=True)  # a token left open at the end of the text ends there
    assert [(a, b) for a, b, _ in tail[0].tokens] == [(0, 6)]


#: Vietnamese raw text whose lines are cut, or whose words are parted, by white space other than
#: one space U+0020: a tab, line breaks (``\\n``, ``\\r``, vertical tab, form feed, NEL, U+2028), a
#: no-break space; each of these is one space in the normalised text the model reads.
SPACED_TEXT = ("Thanh bắt\tchuyện với\nHùng .\rAnh ấy\u00a0đi\u2028về\x0bnhà\x0cvới\x85Loan .\n"
               "Hà Nội rộng .\n")


def _never_ends_before_a_space(norm: str) -> bytes:
    """A model that never ends a token before white space (so a spaced tokenizer's tokens go on
    over every single space it may go on over), and ends a sentence at every full stop."""
    return bytes(SENTENCE_END if char == "." else INSIDE for char in norm)


def test_a_spaced_token_goes_on_over_a_space_of_the_text_only_never_a_tab_or_a_line_break():
    """A spaced tokenizer (Vietnamese) joins pieces over a gap that is one space U+0020 in the
    text itself, not over a tab or a line break that the normalised text holds as a space: a
    FORM never holds a tab or a line break (CoNLL-U cannot write it), the text is rebuilt
    exactly, and the blocks are CoNLL-U that reads back as the same words. A no-break space does
    not join pieces either (the treebanks write U+0020 inside such tokens)."""
    sentences = list(tokenize(read_pieces(io.BytesIO(SPACED_TEXT.encode()), "<vi>"), _never_ends_before_a_space,
                              Expander([], []), spaced_tokens=True))
    assert [s.words for s in sentences] == [["Thanh bắt", "chuyện với", "Hùng ."],
                                            ["Anh ấy", "đi", "về", "nhà", "với", "Loan ."], ["Hà Nội rộng ."]]
    assert not [w for s in sentences for w in s.words if re.search("[\t\n\r\x0b\x0c\x85\u2028\u00a0]", w)]
    lines = [s.raw["lines"] for s in sentences]
    assert all(line.count("\t") == 9 for block in lines for line in block if not line.startswith("#"))
    assert rebuild_text(lines) == SPACED_TEXT
    out = io.StringIO()
    formats.write(sentences, out, "conllu", columns=[])
    assert [s.words for s in formats.read(io.BytesIO(out.getvalue().encode()), "conllu")] == [s.words for s in sentences]
    # the normalised text alone (the boundary metric's view) still goes on over any single space
    norm = normalise("bắt\tchuyện")
    assert [(a, b) for a, b, _ in segment(norm, [INSIDE] * len(norm), spaced_tokens=True)[0].tokens] == [(0, 10)]
    assert len(segment(norm, [INSIDE] * len(norm), spaced_tokens=True, text="bắt\tchuyện")[0].tokens) == 2


def test_known_words_are_joined_over_a_space_of_the_text_only():
    from tagger.tokenization.joined import join_known

    text = "bắt\tchuyện bắt chuyện bắt\nchuyện"
    norm = normalise(text)
    labels = bytes(END if i + 1 == len(norm) or norm[i + 1] == " " else INSIDE for i in range(len(norm)))
    joined = join_known(norm, labels, frozenset(["bắt chuyện"]), text)
    assert [i for i, label in enumerate(joined) if label != INSIDE] == [2, 9, 20, 24, len(text) - 1]  # the middle pair joins
    assert join_known(norm, labels, frozenset(["bắt chuyện"])) != joined  # (the normalised text alone: all three)


def test_the_conllu_writer_refuses_a_field_with_a_tab_or_a_line_break_naming_the_sentence():
    """A FORM or a written column holding a tab or a line break, or a sentence's line that is not
    ten fields, is a one-line error naming the sentence, not a line cut into eleven fields that
    shifts the words after it onto the wrong lines."""
    row = "{}\t{}\t_\t_\t_\t_\t_\t_\t_\t_"
    lines = ["# sent_id = 7", row.format(1, "Thanh"), row.format(2, "bắt\tchuyện"), row.format(3, ".")]
    broken = Sentence(["Thanh", "bắt\tchuyện", "."], {"upos": ["PROPN", "VERB", "PUNCT"]}, source="in.txt", line=3,
                      raw={"format": "conllu", "lines": lines})
    for columns in ([], ["upos"], None):  # the tokenizer's blocks as they are, a tagger's column, every column
        with pytest.raises(TaggerError) as error:
            formats.write([broken], io.StringIO(), "conllu", columns=columns)
        assert str(error.value) == ("in.txt:3: cannot write sentence 7 as CoNLL: word 2's FORM 'bắt\\tchuyện' holds a "
                                    "tab or a line break, which a CoNLL field cannot hold")
    fresh = Sentence(["a", "b"], {"upos": ["X", "NO\nUN"]}, source="s.txt", line=1)  # no lines: written fresh
    with pytest.raises(TaggerError, match=r"^s.txt:1: cannot write a sentence as CoNLL: word 2's UPOS 'NO\\nUN' holds"):
        formats.write([fresh], io.StringIO(), "conllu")
    with pytest.raises(TaggerError, match=r"word 1's FORM 'a\\rb'"):
        formats.write([Sentence(["a\rb"])], io.StringIO(), "conllx")
    ranged = Sentence(["de", "le"], {}, raw={"format": "conllu", "lines": [row.format("1-2", "d\tu"), row.format(1, "de"),
                                                                          row.format(2, "le")]})
    with pytest.raises(TaggerError, match=r"its line 1 '1-2\\td\\tu\\t.*' is not one line of ten tab-separated fields$"):
        formats.write([ranged], io.StringIO(), "conllu", columns=[])
    good = Sentence(["bắt chuyện", "."], {"upos": ["VERB", "PUNCT"]},  # a space inside a FORM is written as it is
                    raw={"format": "conllu", "lines": [row.format(1, "bắt chuyện"), row.format(2, ".")]})
    out = io.StringIO()
    formats.write([good], out, "conllu", columns=["upos"])
    assert out.getvalue() == "1\tbắt chuyện\t_\tVERB\t_\t_\t_\t_\t_\t_\n2\t.\t_\tPUNCT\t_\t_\t_\t_\t_\t_\n\n"


def test_pieces_give_the_same_sentences_as_one_piece_and_memory_stays_bounded():
    text = " ".join(f"Word{i} du mot, encore{i}." for i in range(400)) + "\n"  # one paragraph, no blank line
    whole = _tokenize(text)
    calls: list[int] = []

    def labeller(norm: str) -> list[int]:
        calls.append(len(norm))
        return _rule_labels(norm)

    pieces = list(read_pieces(io.BytesIO(text.encode()), "<t>", 500))
    assert len(pieces) > 10 and max(map(len, pieces)) <= 500 and "".join(pieces) == text
    streamed = list(tokenize(pieces, labeller, Expander(["du\tde le"], []), margin=4, max_carry=500))
    assert max(calls) <= 1000  # a piece and what was carried over: never the whole text
    assert [s.raw["lines"] for s in streamed] == [s.raw["lines"] for s in whole]
    assert rebuild_text([s.raw["lines"] for s in streamed]) == text


def test_a_sentence_longer_than_the_carry_bound_is_cut():
    text = " ".join(f"w{i}" for i in range(3000))  # no sentence end at all
    sentences = list(tokenize(read_pieces(io.BytesIO(text.encode()), "<t>", 1000), _rule_labels, Expander([], []),
                              margin=4, max_carry=1000))
    assert len(sentences) > 3 and max(len(s.words) for s in sentences) < 500
    assert rebuild_text([s.raw["lines"] for s in sentences]) == text


def test_text_that_is_not_utf8_is_a_one_line_error_naming_the_line():
    data = "a b\nc d\n".encode() + b"\xff\xfe oops\n"
    with pytest.raises(TaggerError, match="not UTF-8") as error:
        list(read_pieces(io.BytesIO(data), "in.txt"))
    assert str(error.value) == "in.txt:3: not UTF-8 text (byte 0xff at column 1)"


@pytest.mark.parametrize("size", [8, 1000])
def test_the_sentences_before_a_line_that_is_not_utf8_are_tokenised_before_the_error(size):
    data = "One. Two dogs.\nThree cats. Fin".encode() + b"al\xf3 word.\nNever read.\n"
    got: list[Sentence] = []
    with pytest.raises(TaggerError) as error:
        for sentence in tokenize(read_pieces(io.BytesIO(data), "in.txt", size), _rule_labels, Expander([], [])):
            got.append(sentence)
    assert [s.words for s in got] == [["One", "."], ["Two", "dogs", "."], ["Three", "cats", "."]]  # not "Fin al"
    assert str(error.value) == "in.txt:2: not UTF-8 text (byte 0xf3 at column 18)"
    whole = [s.words for s in _until_error(b"The cat sat.\nIt \xff purred.\n")]
    assert whole == [["The", "cat", "sat", "."]]  # not "It", the start of the sentence the bad byte cut


def _until_error(data: bytes) -> list[Sentence]:
    got: list[Sentence] = []
    with pytest.raises(TaggerError):
        for sentence in tokenize(read_pieces(io.BytesIO(data), "in.txt"), _rule_labels, Expander([], [])):
            got.append(sentence)
    return got


def test_multiword_lexicon_rules_and_case():
    lexicon, rules = learn([("don't", ["do", "n't"]), ("Can't", ["Ca", "n't"]), ("won't", ["wo", "n't"]),
                            ("zum", ["zu", "dem"]), ("du", ["de", "le"]), ("du", ["de", "le"]), ("du", ["du"])])
    expander = Expander(lexicon, rules)
    assert expander.expand("du") == ["de", "le"] and expander.expand("Du") == ["De", "le"]
    assert expander.expand("DON'T") == ["DO", "N'T"]
    assert expander.expand("Zum") == ["Zu", "dem"]
    assert expander.expand("shouldn't") == ["should", "n't"]  # the rule of n't, seen 3 times
    assert expander.expand("ShouldN't") == ["Should", "N't"]  # the surface cut where the words join to it
    assert expander.unknown == 0
    assert expander.expand("bum") == ["bum"] and expander.unknown == 1  # the rule of "m" was seen once only


def test_contractions_unseen_in_training_take_the_rule_whose_words_training_knows():
    pairs = [("das", ["de", "as"]), ("das", ["de", "as"]), ("dos", ["de", "os"]), ("nela", ["em", "ela"]),
             ("dela", ["de", "ela"]), ("pelo", ["por", "o"]), ("pelos", ["por", "os"]), ("matá-lo", ["matá", "lo"])]
    lexicon, rules = learn(pairs)
    tokens = ["essas\t3\t0", "aquele\t2\t0", "ela\t4\t0", "pele\t2\t0", "pelo\t1\t9", "nos\t5\t5"]
    new = Expander(lexicon, rules, learn_prefixes(pairs), tokens)
    old = Expander(lexicon, rules)  # a model from before session 23: suffix rules seen twice, the longest
    assert old.expand("dessas") == ["desse", "as"]  # the rule of "das"
    assert new.expand("dessas") == ["de", "essas"]  # the prefix rule of "d": both words known
    assert new.expand("daquele") == ["de", "aquele"] and new.expand("Daquele") == ["De", "aquele"]
    assert new.expand("nessa") == ["nessa"]  # "n" -> "em" needs the rest, "essa", to be a training word
    assert new.expand("fazê-lo") == ["fazê", "lo"]  # a suffix rule seen once is enough now
    assert old.expand("fazê-lo") == ["fazê-lo"]
    # training decides where it saw the form at least twice, one way 90 % of the time
    assert new.is_multiword("Pelo", False) and not new.is_multiword("pele", True)
    assert new.is_multiword("nos", True) and not new.is_multiword("nos", False)  # as often both: the model's
    assert not new.is_multiword("desse", False) and new.is_multiword("desse", True)  # unseen: the model's
    assert old.is_multiword("pelo", False) is False


def test_training_tokens_are_counted_from_the_windows_core_only():
    text = "xx do mar, pele do"
    chars = list(text)
    labels = ["_"] * 2 + ["0", "0", "3", "0", "0", "0", "1", "1", "0", "0", "0", "0", "1", "0"] + ["_"] * 2
    assert len(labels) == len(chars)
    # "xx" lies in the context, "do" after it starts in the core; the last "do" ends in the context
    assert count_tokens([(chars, labels)]) == [",\t1\t0", "do\t0\t1", "mar\t1\t0", "pele\t1\t0"]
    # a token after a space of the context may have begun after a token end there (unknown): left out
    assert count_tokens([(chars, ["_"] * 3 + labels[3:])]) == [",\t1\t0", "mar\t1\t0", "pele\t1\t0"]
    windows = [(chars, labels)]
    vocabs = multiword_vocabs([("do", ["de", "o"])], windows)
    assert vocabs["mwt_prefix_rules"] == ["d\tde\t1"] and len(vocabs["mwt_tokens"]) == 4
    assert multiword_vocabs([], windows)["mwt_tokens"] == []  # nothing to decide without multiword tokens


def test_spaced_punctuation_is_also_learned_unspaced():
    from tagger.tokenization.labels import TextSentence, Token, labelled_text, tightened

    forms = ["Hà Nội", "nói", '"', "xin", '"', "(", "1", ")", ".", "50", "%", "a", "/", "b", "?", "!"]
    sentence = TextSentence([Token(f) for f in forms], 'Hà  Nội nói " xin " ( 1 ) . 50 % a / b ? !', False)
    sentence.tokens[0] = Token("Hà  Nội")  # two spaces inside a token stay
    sentence.text = 'Hà  Nội nói " xin " ( 1 ) . 50 % a / b ? !'
    every = next(tightened([sentence], 1.0))
    assert every.text == 'Hà  Nội nói " xin " (1). 50% a / b?!'  # ASCII quotes and slashes stay spaced
    assert [t.space_after for t in every.tokens] == [True, True, True, True, True, False, False, False, True,
                                                     False, True, True, True, False, False, True]
    half = [s.text for s in tightened([sentence, sentence], 0.5)]
    assert half == ['Hà  Nội nói " xin " ( 1) . 50% a / b ?!'] * 2  # every other one of its 6, in order
    assert next(tightened([sentence], 0.0)) is sentence
    unspaced = TextSentence([Token("a", False), Token("."), Token("b", False), Token("."), Token("c"),
                             Token(".")], "a. b. c .", False)
    assert [s.text for s in tightened([unspaced], 1.0)] == ["a. b. c ."]  # mostly unspaced already: as it is
    labelled = labelled_text([every])
    assert labelled.text == every.text and labelled.rebuilt == 0


def test_boundary_metric_scores_tokens_sentences_and_multiword_tokens():
    norm = normalise("Il mange du pain. Bye")
    gold = _rule_labels(norm)
    metric = BoundaryMetric()
    metric.update(norm, gold, gold)
    assert metric.score == 1.0 and metric.parts()["multiword"] == 1.0
    wrong = list(gold)
    wrong[norm.index(".")] = END  # the sentence goes on
    metric = BoundaryMetric()
    metric.update(norm, gold, wrong)
    assert metric.parts()["tokens"] == 1.0 and metric.counts["sentences"].correct == 0
    assert metric.counts["sentences"].gold == 2 and metric.counts["sentences"].predicted == 1
    assert (metric + metric).counts["tokens"].gold == 2 * metric.counts["tokens"].gold


def test_the_tokenization_package_imports_no_torch():
    import subprocess

    code = ("import sys; import tagger.tokenization.stream, tagger.tokenization.labels; "
            "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=__file__.rsplit("/tests/", 1)[0])
    assert done.stdout.strip() == "False", done.stderr


def test_a_text_ending_in_a_token_is_labelled_as_if_white_space_followed():
    """A model never saw a token end at the edge of its window: the last piece of a text that
    ends in a token ("Yes." without a newline) is labelled with a space after it, dropped from
    the output, so the text still rebuilds exactly."""
    seen: list[str] = []

    def labeller(norm: str) -> list[int]:
        seen.append(norm)
        labels = [INSIDE] * len(norm)  # a token ends only where white space follows it: at the edge, never
        for i in range(len(norm) - 1):
            if not norm[i].isspace() and norm[i + 1].isspace():
                labels[i] = SENTENCE_END if norm[i] == "." else END
        return labels

    def words(text: str) -> list[list[str]]:
        pieces = read_pieces(io.BytesIO(text.encode()), "<t>", 1 << 16)
        return [s.words for s in tokenize(pieces, labeller, Expander([], []), margin=4)]

    assert words("Hi there. Bye.") == [["Hi", "there."], ["Bye."]]
    assert seen[-1] == "Hi there. Bye. "  # the space added for labelling only
    sentence = list(tokenize(read_pieces(io.BytesIO(b"Bye."), "<t>", 1 << 16), labeller, Expander([], [])))[0]
    assert rebuild_text([sentence.raw["lines"]]) == "Bye." and sentence.words == ["Bye."]
    assert words("Bye.\n") == [["Bye."]] and seen[-1] == "Bye. "


def test_tokenised_input_is_told_from_raw_text_by_content(tmp_path):
    """CoNLL-U keeps its tokens whatever its name and however long its comment header (a
    stream's peek gives only its buffer: ~8 kB); raw text that starts with a ``#`` line is raw."""
    from tagger.tokenization.stream import tokenised

    header = "".join(f"# comment {i} with some padding to make the header long\n" for i in range(2000))
    conllu = header + "1\tDogs\t_\t_\t_\t_\t_\t_\t_\t_\n\n"
    stream = io.BufferedReader(io.BytesIO(conllu.encode()))
    assert tokenised(stream, "auto") and stream.read().decode() == conllu  # peeked, not consumed
    assert not tokenised(io.BufferedReader(io.BytesIO(b"# A heading\n\nSome text here.\n")), "auto")
    assert tokenised(io.BufferedReader(io.BytesIO(b"Raw text.\n")), "conllu")
    named = tmp_path / "dev.txt"
    named.write_text(conllu, encoding="utf-8")
    assert tokenised([str(named)], "auto")
    named.write_text("Raw text, a sentence.\n", encoding="utf-8")
    assert not tokenised([str(named)], "auto") and not tokenised([str(tmp_path / "missing")], "auto")


def test_a_sentence_never_starts_with_a_closing_bracket_or_quotation_mark():
    from tagger.tokenization.labels import MWT_SENTENCE_END
    from tagger.tokenization.segment import closed_sentences

    def labels(marks: str) -> bytes:
        return bytes({".": INSIDE, "e": END, "s": SENTENCE_END, "m": MWT_END, "M": MWT_SENTENCE_END}[c] for c in marks)

    # Japanese GSD test: the model ended a sentence before 。” (the quotation mark closes it)
    assert closed_sentences("考えます。”教団", labels("...esee.")) == labels("...eese.")
    assert closed_sentences("done.) Next.", labels("...es.....s")) == labels("...ees....s")  # stops at the space
    assert closed_sentences("a.」』b", labels("eseee")) == labels("eeese")  # on past every closing mark
    assert closed_sentences("a.)", labels("ese")) == labels("ees")
    assert closed_sentences("du»", labels(".Me")) == labels(".ms")  # a multiword token's end stays one
    for text, marks in (("no. (yes)", "es......e"), ("Hi. ”Yo", "es....e"), ("a.b", "ese")):
        assert closed_sentences(text, labels(marks)) == labels(marks)  # an opening mark, a space, a letter
    # through the tokenizer's output (the stand-in model ends a sentence at . ! ?, before the marks)
    assert [s.words for s in _tokenize("He said: “Go.” And (so.) «Yes!»")] == [
        ["He", "said", ":", "“", "Go", ".", "”"], ["And", "(", "so", ".", ")"], ["«", "Yes", "!", "»"]]


def test_known_words_with_a_space_are_learned_and_two_tokens_that_spell_one_are_joined():
    from tagger.tokenization.joined import join_known, learn, tokens_of
    from tagger.tokenization.labels import LABELS

    def window(tokens: list[str]) -> tuple[list[str], list[str]]:  # one training window's characters and labels
        chars, labels = [], []
        for token in tokens:
            chars += list(token) + [" "]
            labels += [LABELS[INSIDE]] * (len(token) - 1) + [LABELS[END], "_"]
        return chars, labels

    chars, labels = window(["Ở", "thành phố", "Hà", "Nội", "có", "thành phố", "."])
    assert tokens_of(chars, labels) == [("Ở", False), ("thành phố", True), ("Hà", True), ("Nội", True), ("có", True),
                                        ("thành phố", True), (".", True)]
    # whole twice, apart never: kept; "hà nội" seen apart only; the window's first and last tokens left out
    assert learn([(chars, labels)]) == ["thành phố"]
    assert learn([window(["a", "Hà Nội", "b"]), window(["a", "Hà", "Nội", "b"]), window(["x", "Hà Nội", "y"])]) == ["hà nội"]
    assert learn([window(["a", "Hà Nội", "b"]), window(["a", "Hà", "Nội", "b"])]) == []  # as often apart: not kept

    def labels_of(tokens: list[str]) -> tuple[str, bytes]:  # a model's output: each token ends, the last a sentence
        text = " ".join(tokens)
        out, at = [INSIDE] * len(text), 0
        for token in tokens:
            at += len(token)
            out[at - 1] = END
            at += 1
        out[-1] = SENTENCE_END
        return text, bytes(out)

    words = frozenset(["thành phố", "hà nội"])
    text, labels = labels_of(["Ở", "thành", "phố", "Hà", "Nội", "phố", "."])
    joined = join_known(text, labels, words)
    assert [i for i, label in enumerate(joined) if label != INSIDE] == [0, 10, 17, 21, 23]  # Ở|thành phố|Hà Nội|phố|.
    text, labels = labels_of(["thành", "phố", "Hà"])
    assert join_known(text, labels, words)[:5] == bytes([INSIDE] * 5) and join_known(text, labels, frozenset()) == labels
    text, labels = labels_of(["phố", "thành", "phố", "phố"])  # left to right, a token joins once
    assert [i for i, label in enumerate(join_known(text, labels, words)) if label != INSIDE] == [2, 12, 16]


def test_decomposed_text_is_pointed_out_to_a_tokenizer_that_learnt_composed_text(capsys):
    import unicodedata

    from tagger.tokenization.stream import _checked

    text = "Tiếng Việt là ngôn ngữ của người Việt. " * 3
    known = frozenset(text)
    assert list(_checked(iter([unicodedata.normalize("NFD", text)]), known, "in.txt", [False]))
    assert "warning: in.txt: the text is in decomposed Unicode (NFD" in capsys.readouterr().err
    assert list(_checked(iter([text]), known, "in.txt", [False])) == [text]
    assert capsys.readouterr().err == ""


def test_the_punctuation_of_other_scripts_is_learned_unspaced_too():
    """Spaced treebanks of other scripts (Hindi, Urdu, Arabic) teach the unspaced text too: their
    commas, stops and question marks close, Spanish ¿ ¡ open."""
    from tagger.tokenization.labels import TextSentence, Token, tightened

    for forms, want in ((["كتاب", "،", "قلم", "؟"], "كتاب، قلم؟"), (["राम", "घर", "गया", "।"], "राम घर गया।"),
                        (["¿", "Qué", "?"], "¿Qué?"), (["ሰላም", "።"], "ሰላም።")):
        sentence = TextSentence([Token(f) for f in forms], " ".join(forms), False)
        assert next(tightened([sentence], 1.0)).text == want


def test_a_tokenizer_alone_asked_for_trees_names_what_makes_them():
    import io

    from tagger.tokenization.stream import write_sentences

    with pytest.raises(TaggerError, match=r"\(trees come of a constituency parser after it\)$"):
        write_sentences([], io.StringIO(), "trees")
    with pytest.raises(TaggerError, match="chain a tagger after it for tagged$"):
        write_sentences([], io.StringIO(), "tagged")


def test_a_leading_bom_is_dropped_also_when_a_later_byte_is_not_utf8():
    import io

    from tagger.tokenization.stream import read_pieces

    pieces = []
    with pytest.raises(TaggerError, match="not UTF-8 text"):
        for piece in read_pieces(io.BytesIO(b"\xef\xbb\xbfHello there.\nBad \xe9 byte.\n"), "in.txt"):
            pieces.append(piece)
    assert "".join(pieces) == "Hello there.\nBad "
