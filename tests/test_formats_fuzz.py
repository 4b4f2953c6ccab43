"""Fuzzing the readers: whatever the bytes, reading either works or raises TaggerError."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tagger import formats
from tagger.errors import TaggerError

DATA = Path(__file__).parents[1] / "data"
SAMPLES = {"conllu": "sample.conllu", "conllx": "sample.conllu", "tagged": "sample.pos.txt",
           "pos": "sample.pos.txt", "mrg": "sample.mrg", "trees": "sample.mrg", "dp": "sample.dp",
           "ccgbank": "sample.auto",
           "pipe": "sample.pipe", "text": "sample.txt", "columns": "sample.tsv"}
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NOISE = [b"\t", b" ", b"\n", b"(", b")", b"<", b">", b"|", b"/", b"\\", b"_", b"#", b"-", b".", b"=",
         b"0", b"9", b"\xff", b"\xc3", b"\x00", b"\r", b"(<L ", b"(<T ", b"ID=", b"[", b"]",
         "²".encode(), "٣".encode(), b"1-2\t", b"1.1\t", b"======"]


def consume(data: bytes, fmt: str) -> None:
    """Read everything; only TaggerError may come out."""
    try:
        for sentence in formats.read(io.BytesIO(data), fmt):
            assert len(sentence.words) == len(next(iter(sentence.columns.values()), sentence.words))
            assert all(isinstance(word, str) and word for word in sentence.words)
    except TaggerError as e:
        assert e.message and (e.line is None or e.line >= 1)


def mutate(data: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    """Apply edits (kind, position, noise index): delete, duplicate, insert, swap tab/space, cut a line."""
    buffer = bytearray(data)
    for kind, position, noise in edits:
        if not buffer:
            break
        i = position % len(buffer)
        if kind == 0:
            del buffer[i]
        elif kind == 1:
            buffer[i:i] = buffer[i : i + 1 + noise % 3]
        elif kind == 2:
            buffer[i:i] = NOISE[noise % len(NOISE)]
        elif kind == 3:
            buffer[i] = {9: 32, 32: 9}.get(buffer[i], buffer[i])
        else:
            lines = bytes(buffer).split(b"\n")
            j = i % len(lines)
            lines.insert((j + noise) % len(lines), lines.pop(j))
            buffer = bytearray(b"\n".join(lines))
    return bytes(buffer)


def sentence_starts(lines: list[bytes]) -> list[int]:
    """Indices of lines that start a sentence (a tree, an ID line, or a line after a blank one),
    so that a chunk of a sample is mostly valid before it is mutated."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    marked = [i for i in filled if lines[i].startswith((b"( ", b"ID="))]
    blocks = [i for i in filled if i == 0 or not lines[i - 1].strip()]
    return marked or (blocks if len(blocks) > 1 else filled)


EDITS = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 10**6), st.integers(0, 100)), min_size=1, max_size=8)
FORMAT_NAMES = sorted(formats.FORMATS) + ["auto-detect"]


def _fmt(name: str) -> str:
    return "auto" if name == "auto-detect" else name


@pytest.mark.parametrize("name", FORMAT_NAMES)
@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes(name, data):
    consume(data, _fmt(name))


@pytest.mark.parametrize("name", FORMAT_NAMES)
@FUZZ
@given(edits=EDITS, start=st.integers(0, 40), length=st.integers(1, 12),
       other=st.sampled_from(sorted(set(SAMPLES.values()))))
def test_mutated_sample_lines(name, edits, start, length, other):
    sample = SAMPLES.get(name, other)  # auto-detection gets any sample
    lines = (DATA / sample).read_bytes().split(b"\n")
    starts = sentence_starts(lines)
    first = starts[start % len(starts)]
    chunk = b"\n".join(lines[first : first + 3 * length]) + b"\n"
    consume(mutate(chunk, edits), _fmt(name))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_samples_read_cleanly_in_their_format(name):
    sentences = list(formats.read(DATA / SAMPLES[name], name))
    assert sentences and all(len(s) for s in sentences)
