"""Issue 31, items 7, 8 and part of 12: long plain-text lines are read as sentences of at most
``MAX_WORDS`` tokens (lazily: memory stays a small multiple of the line), and so tag and convert
in bounded memory; the tokenizer's carry is bounded whatever its labels say (linear time); no
token ends inside a grapheme cluster (emoji ZWJ sequences, flags, combining marks)."""

from __future__ import annotations

import io
import random
import tracemalloc
from pathlib import Path

import pytest

from tagger import formats
from tagger.formats import text
from tagger.tokenization.labels import END, INSIDE, SENTENCE_END, normalise, rebuild_text
from tagger.tokenization.multiword import Expander
from tagger.tokenization.segment import MAX_TOKENS, _MARK_BLOCKS, joined, whole_clusters
from tagger.tokenization.stream import read_pieces, tokenize
from tests.helpers import invoke

WORDS = ["the", "cat", "sat", "on", "a", "mat", ".", ",", "dog", "ran"]


def _long_line(tokens: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(tokens))


@pytest.fixture(scope="module")
def long_file(tmp_path_factory) -> tuple[Path, list[str]]:
    """A file of a short line, one line of 200k tokens (no line end inside), and a short line."""
    line = _long_line(200_000)
    path = tmp_path_factory.mktemp("long") / "long.txt"
    path.write_text("a first line\n" + line + "\nthe last one\n", encoding="utf-8")
    return path, line.split()


# ---------------------------------------------------------------------------------- item 7: plain text
def test_a_long_plain_text_line_is_read_as_sentences_of_at_most_max_words(long_file):
    path, words = long_file
    warn = io.StringIO()
    tracemalloc.start()
    try:
        lengths = [len(sentence) for sentence in text.read(path, warn=warn)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    pieces = -(-len(words) // text.MAX_WORDS)
    assert lengths == [3] + [text.MAX_WORDS] * (pieces - 1) + [len(words) % text.MAX_WORDS or text.MAX_WORDS] + [3]
    assert warn.getvalue().count("note:") == 1 and f"{path}:2:" in warn.getvalue()
    # never the line's 200k tokens at once (200k str objects: over 11 MB); the line is 1.3 MB
    assert peak < 6 * len(" ".join(words)), peak
    sentences = list(text.read(path, warn=io.StringIO()))
    assert [w for s in sentences[1:-1] for w in s.words] == words and {s.line for s in sentences[1:-1]} == {2}


def test_the_pieces_of_a_long_line_are_its_tokens_in_order(monkeypatch):
    rng = random.Random(3)
    for stretch in (1, 3, 64, text.STRETCH):
        monkeypatch.setattr(text, "STRETCH", stretch)
        for _ in range(25):
            tokens = [rng.choice("ab") * rng.choice([1, 2, 5, 40, 300]) for _ in range(rng.randint(0, 3000))]
            spaces = [rng.choice([" ", "  ", "\t", " \u3000 "]) for _ in tokens]
            line = " " * rng.randint(0, 2) + "".join(t + space for t, space in zip(tokens, spaces))
            size = rng.choice([1, 7, 100, 1000])
            pieces = list(text.pieces(line.rstrip() if rng.random() < 0.5 else line, size))
            assert [w for p in pieces for w in p] == line.split()
            assert all(len(p) == size for p in pieces[:-1]) and all(pieces)


def test_sniffing_a_long_line_reads_only_its_start():
    line = _long_line(300_000)
    lines, _ = formats.base.peek(io.BytesIO((line + "\n").encode()))
    assert len(lines[0]) <= formats.base.PEEK_LINE and line.startswith(lines[0])
    assert formats.sniff(io.BytesIO((line + "\n").encode()))[0] == "text"


def test_convert_writes_a_long_line_as_bounded_sentences(long_file, tmp_path):
    path, words = long_file
    out = tmp_path / "out.conllu"
    done = invoke("convert", "--to", "conllu", str(path), "-o", str(out))
    assert done.exit_code == 0, done.stderr
    assert "note:" in done.stderr and "Traceback" not in done.stderr
    sentences = list(formats.read(out, "conllu"))
    assert max(map(len, sentences)) == text.MAX_WORDS
    assert [w for s in sentences for w in s.words] == ["a", "first", "line", *words, "the", "last", "one"]


@pytest.fixture(scope="module")
def untrained_tagger(tmp_path_factory) -> Path:
    """A tiny skip-LSTM tagger (2 layers of 8), untrained: the output's labels do not matter here."""
    import torch

    from tagger import model_file
    from tagger.config import build_configs
    from tagger.models.skip_lstm import PRESETS, SkipLSTMTagger

    train = list(formats.read("data/sample.conllu"))
    config, training = build_configs(SkipLSTMTagger, PRESETS, "fast",
                                     overrides=["layers=2", "hidden=8", "word_dim=8", "char_dim=4"])
    torch.manual_seed(1)
    model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, train))
    path = tmp_path_factory.mktemp("tagger") / "tiny.tagger"
    model_file.save(path, model, {}, training)
    return path


def _tagged_lengths(path: Path) -> list[int]:
    return [len(s) for s in formats.read(path, "conllu")]


def test_tagging_a_long_line_without_torch_tags_bounded_sentences(untrained_tagger, tmp_path, monkeypatch):
    """The torch-free runtime (tagger.runtime.skip_lstm) never gets a sentence longer than
    MAX_WORDS: its batches' arrays are steps × batch, and one 200k-token sentence was 200k steps."""
    from tagger.runtime import pipeline, skip_lstm

    path, words = tmp_path / "long.txt", _long_line(30_000, seed=2).split()
    path.write_text("a first line\n" + " ".join(words) + "\nthe last one\n", encoding="utf-8")
    longest = []
    scores = skip_lstm.NumpyTagger.scores

    def watched(self, sentences, *args):
        longest.append(max(map(len, sentences)))
        return scores(self, sentences, *args)

    monkeypatch.setattr(skip_lstm.NumpyTagger, "scores", watched)
    out = tmp_path / "out.conllu"
    counts = pipeline.tag_file([str(untrained_tagger)], [str(path)], str(out), switch_tokens=10**9)
    assert counts is not None and counts["tokens"] == len(words) + 6
    assert longest and max(longest) == text.MAX_WORDS
    assert max(_tagged_lengths(out)) == text.MAX_WORDS


def test_tagging_a_long_line_with_torch_tags_bounded_sentences(untrained_tagger, tmp_path):
    from tagger.api import load
    from tagger.tagging import tag

    line = _long_line(20_000, seed=2)
    out = io.StringIO()
    model = load([str(untrained_tagger)], "cpu", 1).module
    counts = tag(model, formats.read(io.BytesIO(line.encode()), "text"), out)
    assert counts["tokens"] == 20_000 and counts["sentences"] == 20
    assert [len(s) for s in formats.read(io.StringIO(out.getvalue()), "conllu")] == [text.MAX_WORDS] * 20


# ---------------------------------------------------------------------------------- item 8: the carry
def _first_token_ends_a_sentence(norm: str) -> list[int]:
    """Labels that end a token before each space, and a sentence after the first token of the
    text it is given (each piece with what was carried in front of it): the labelling that made
    the carried sentence grow with every piece."""
    labels = [INSIDE] * len(norm)
    first = True
    for i in range(len(norm) - 1):
        if norm[i] != " " and norm[i + 1] == " ":
            labels[i] = SENTENCE_END if first else END
            first = False
    return labels


def test_the_carried_text_stays_bounded_when_a_piece_holds_an_earlier_sentence():
    text_in = _long_line(30_000, seed=4)  # 100 kB, one line
    calls: list[int] = []

    def labeller(norm: str) -> list[int]:
        calls.append(len(norm))
        return _first_token_ends_a_sentence(norm)

    size, carry = 2000, 1000
    pieces = read_pieces(io.BytesIO(text_in.encode()), "<t>", size)
    sentences = list(tokenize(pieces, labeller, Expander([], []), margin=4, max_carry=carry, max_tokens=10**9))
    assert max(calls) <= size + carry  # before: the whole text so far, every time (quadratic)
    assert sum(calls) <= 2 * len(text_in)
    assert max(len(s.words) for s in sentences) < (size + carry) // 2
    assert rebuild_text([s.raw["lines"] for s in sentences]) == text_in


def test_a_tokenizer_sentence_ends_at_max_tokens():
    text_in = " ".join(f"w{i}" for i in range(2500))  # no sentence end at all
    never = lambda norm: [INSIDE] * len(norm)  # noqa: E731 - tokens end at spaces only
    sentences = list(tokenize(read_pieces(io.BytesIO(text_in.encode()), "<t>"), never, Expander([], [])))
    assert [len(s.words) for s in sentences] == [MAX_TOKENS, MAX_TOKENS, 500]
    assert rebuild_text([s.raw["lines"] for s in sentences]) == text_in


# ---------------------------------------------------------------------------------- item 12: graphemes
CLUSTERS = ["👩\u200d👩\u200d👧\u200d👦", "👍🏽", "🇫🇷", "🇩🇪", "e\u0301", "❤\ufe0f", "1\ufe0f\u20e3", "🧑\u200d💻",
            "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f", "\u1100\u1161\u11a8", "ก\u0e33", "ｶﾞ"]


def test_a_token_never_ends_inside_a_grapheme_cluster():
    """A labeller that ends a token after every character: each cluster stays one token, and the
    text rebuilds exactly."""
    text_in = "Hi " + " ".join(CLUSTERS) + " 🇫🇷🇩🇪 ok👍🏽. e\u0301t\u00e9\n"
    every = lambda norm: [INSIDE if c == " " else END for c in norm]  # noqa: E731
    sentences = list(tokenize(read_pieces(io.BytesIO(text_in.encode()), "<t>"), every, Expander([], [])))
    words = [w for s in sentences for w in s.words]
    assert words[2 : 2 + len(CLUSTERS)] == CLUSTERS
    assert words[2 + len(CLUSTERS) :] == ["🇫🇷", "🇩🇪", "o", "k", "👍🏽", ".", "e\u0301", "t", "\u00e9"]
    assert rebuild_text([s.raw["lines"] for s in sentences]) == text_in


def test_a_moved_end_keeps_its_kind_and_ascii_is_untouched():
    norm = normalise("a👍🏽 b")
    labels = bytes([END, SENTENCE_END, INSIDE, INSIDE, END])
    assert whole_clusters(norm, labels) == bytes([END, INSIDE, SENTENCE_END, INSIDE, END])
    assert whole_clusters("abc", b"\x01\x01\x02") == b"\x01\x01\x02"


def test_cluster_boundaries_agree_with_the_regex_module():
    regex = pytest.importorskip("regex")
    rng = random.Random(5)
    pool = "a😀\u200d\u0301🇫🇷🏽\ufe0f\u1100\u1161\u11a8가각 b\u0e33\u0e01\uff9e\u200c\U000e0067\u0903\u20e3"
    for _ in range(3000):
        sample = "".join(rng.choice(pool) for _ in range(rng.randint(1, 10)))
        ours = {i for i in range(1, len(sample)) if not joined(sample, i)} | {len(sample)}
        theirs = {m.end() for m in regex.finditer(r"\X", sample)}
        apart = {i for i in ours ^ theirs if not (sample[i - 1].isspace() or (i < len(sample) and sample[i].isspace()))}
        assert not apart, (sample, sorted(ours), sorted(theirs))


def test_every_mark_is_in_the_mark_blocks():
    import sys
    import unicodedata

    marks = [cp for cp in range(0x300, sys.maxunicode + 1) if unicodedata.category(chr(cp)) in ("Mn", "Me", "Mc")]
    assert all(any(a <= cp <= b for a, b in _MARK_BLOCKS) for cp in marks)


def test_a_piece_is_not_cut_inside_a_cluster():
    text_in = "👍🏽" * 300  # no white space: cut where the size says, then back to a cluster's start
    pieces = list(read_pieces(io.BytesIO(text_in.encode()), "<t>", 101))
    assert "".join(pieces) == text_in and all(len(p) % 2 == 0 for p in pieces)


def test_api_tag_lines_splits_a_long_line_as_tagger_tag_does(sample_tagger) -> None:
    """``Model.tag_lines`` gives each line ``tagger tag``'s output for it: a line of more than
    MAX_WORDS tokens is several sentences there too."""
    import tagger

    model = tagger.load(str(sample_tagger))
    line = " ".join(["cat"] * (text.MAX_WORDS + 5))
    out = model.tag_lines(["", line])
    assert out[0] == ""
    blocks = [b for b in out[1].split("\n\n") if b.strip()]
    assert [sum(1 for row in b.splitlines() if row[0].isdigit()) for b in blocks] == [text.MAX_WORDS, 5]
