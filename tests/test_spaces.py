"""No-break spaces and the line separators stay inside a token (tagger.corpus.spaces): plain
text, tagged text and bracketed trees read ``Ça\\xa0va`` as one word and write it back, as EVALB
keeps such bytes in a word; other white space (an ideographic space) separates tokens."""

from __future__ import annotations

import io

import pytest

from tagger import formats
from tagger.corpus.spaces import split_tokens


@pytest.mark.parametrize("line, tokens", [
    ("a b\tc", ["a", "b", "c"]),
    ("Ça\xa0va bien", ["Ça\xa0va", "bien"]),
    ("10\u202f000 euros", ["10\u202f000", "euros"]),
    ("x\u2028y z\x85", ["x\u2028y", "z\x85"]),
    ("日本\u3000語", ["日本", "語"]),
    ("  ", []),
])
def test_tokens_split_at_white_space_but_no_break_spaces(line, tokens):
    assert split_tokens(line) == tokens


def test_a_no_break_space_stays_in_a_word_of_text_tagged_text_and_trees():
    text = next(iter(formats.read(io.StringIO("Ça\xa0va bien .\n"), "text")))
    assert text.words == ["Ça\xa0va", "bien", "."]
    tagged = next(iter(formats.read(io.StringIO("Ça\xa0va/PRON bien/ADV\n"), "tagged")))
    assert tagged.words == ["Ça\xa0va", "bien"] and tagged.columns["xpos"] == ["PRON", "ADV"]
    tree = next(iter(formats.read(io.StringIO("(S (NN a\xa0b) (NN c\u2028d))\n"), "trees")))
    assert tree.words == ["a\xa0b", "c\u2028d"]
    out = io.StringIO()
    formats.write([tree], out, "trees")  # written back, not refused as a word with white space in it
    assert out.getvalue() == "(S (NN a\xa0b) (NN c\u2028d))\n"
    with pytest.raises(Exception, match="white space"):
        formats.write([formats.Sentence(["a b"], {"xpos": ["X"]})], io.StringIO(), "tagged")


def test_unsegmented_text_with_its_own_punctuation_is_warned_of():
    """Chinese or Japanese text without spaces read as tokenised text: one token a line, its
    full-width punctuation attached; the warning says to tokenise it first."""
    warned = io.StringIO()
    text = "我们今天去了北京。\n他说：好的！\n"
    list(formats.read(io.StringIO(text), "text", warn=warned))
    assert "keep their punctuation attached" in warned.getvalue() and "tokenizer" in warned.getvalue()
    quiet = io.StringIO()
    list(formats.read(io.StringIO("我们 今天 去 了 北京 。\n"), "text", warn=quiet))  # tokenised: nothing to say
    assert quiet.getvalue() == ""
