"""PTB-style tagged text (``word/TAG`` or ``word_TAG`` tokens, one sentence per line), the
Penn Treebank's slash escape, and the WSJ file splits.

The separator is the last unescaped ``/`` of a token, or, when it has none, its last ``_``;
``\\/`` is an escaped slash inside a word (``1\\/2/CD`` is the word ``1/2``) or a tag (a CCG
supertag: ``Pierre/N\\/N`` is the word ``Pierre`` with ``N/N``). Tags go to the ``xpos`` column
unless ``column`` says otherwise.

**Slashes, one convention for every PTB format.** The Penn Treebank writes a slash in a word as
``\\/`` in all its files (``50\\/50`` in ``.pos``, ``.mrg`` and the ``.dp`` conversion alike). A
word inside the toolkit is *unescaped*, ``50/50``, as a user typing text writes it: every PTB
reader (tagged, ``.pos``, ``.mrg``, ``.trees``, ``.dp``) turns ``\\/`` into ``/`` (:func:`unescape`),
so the same token has the same form whichever file it came from, and a model trained on one
format knows the words of the others and of plain text. The writers of those formats escape
``/`` as ``\\/`` again (:func:`escape`), so that their output reads back and matches PTB gold
files byte for byte (what EVALB compares). The tagged formats must (``/`` separates the tag); the
tree and ``.dp`` writers would not have to, and other treebanks write bare slashes: so where a
tree or ``.dp`` file spelled a word with a bare ``/``, the reader keeps the file's spellings
(:class:`Spelling`, in :attr:`Sentence.raw`) and those writers give back each word as its file
spelled it (:func:`spelled_words`); words from anywhere else (``.pos``, tagged text, CoNLL-U,
plain text) are written escaped, as the Penn Treebank spells them. (``\\*``, which some PTB
releases write for a ``*`` in a word, is not in the WSJ sample here and is left as it is.)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence, TextIO

from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.corpus.spaces import split_tokens
from tagger.formats.base import OnError, Source, each_sentence, iter_lines, source_name

NAME = "tagged"
EXTENSIONS = (".tagged", ".tag")


def unescape(text: str) -> str:
    """``text`` with the PTB's escaped slashes, ``\\/``, as plain ``/`` (``50\\/50`` -> ``50/50``)."""
    return text.replace("\\/", "/")


def escape(text: str) -> str:
    """``text`` with each ``/`` escaped as the PTB writes it, ``\\/`` (``50/50`` -> ``50\\/50``):
    what :func:`unescape` reads back."""
    return text.replace("/", "\\/")


@dataclass(frozen=True)
class Spelling:
    """The words of a sentence as its tree or ``.dp`` file spelled them (slash escapes and all),
    kept in :attr:`Sentence.raw` where one has a bare ``/`` (a treebank that does not escape
    slashes), so that the same format's writer gives them back as they were."""

    words: tuple[str, ...]


def read_words(spelled: Sequence[str]) -> tuple[list[str], Spelling | None]:
    """The words of a PTB file's sentence (:func:`unescape`), and their :class:`Spelling` where
    some word has a bare ``/`` (else ``None``: the PTB's own escapes are written back anyway)."""
    bare = any("/" in word.replace("\\/", "") for word in spelled)
    return [unescape(word) for word in spelled], Spelling(tuple(spelled)) if bare else None


def spelled_words(sentence: Sentence) -> list[str]:
    """``sentence``'s words as a tree or ``.dp`` file writes them: each as its file spelled it
    where the sentence keeps a :class:`Spelling` and the word is unchanged, else escaped
    (:func:`escape`)."""
    kept = sentence.raw.words if isinstance(sentence.raw, Spelling) else ()
    if len(kept) != len(sentence.words):
        kept = ()
    return [kept[i] if kept and unescape(kept[i]) == word else escape(word) for i, word in enumerate(sentence.words)]


def split_token(token: str) -> tuple[str, str] | None:
    """``(word, tag)`` of a ``word/TAG`` or ``word_TAG`` token, or ``None`` if it has no tag. The
    separator is the last ``/`` not escaped (after an even number of backslashes: ``a\\\\/X`` is
    the word ``a\\`` and the tag ``X``), else the last ``_``."""
    cut = len(token)
    while (cut := token.rfind("/", 0, cut)) > 0:
        before = cut
        while before > 0 and token[before - 1] == "\\":
            before -= 1
        if (cut - before) % 2 == 0:
            break
    if cut < 0:
        cut = token.rfind("_")
    if cut <= 0 or cut == len(token) - 1:
        return None
    return _unescape_token(token[:cut]), _unescape_token(token[cut + 1 :])


def _unescape_token(text: str) -> str:
    """A word or tag of a tagged token as written (:func:`join_token`): ``\\/`` is ``/``, ``\\\\`` is a
    backslash; any other backslash is itself (the PTB's ``\\*``)."""
    return _ESCAPED.sub(lambda match: match.group(1), text) if "\\" in text else text


#: An escaped slash or backslash in a tagged token.
_ESCAPED = re.compile(r"\\([\\/])")


def join_token(word: str, tag: str, sep: str = "/") -> str:
    """The token for ``word`` and ``tag``; slashes in both are escaped as ``\\/`` (a CCG
    supertag's too, so that the token reads back), and a backslash before a slash or at the
    end as ``\\\\`` (``a\\`` would otherwise escape the separator)."""
    return _escape_token(word) + sep + _escape_token(tag)


def _escape_token(text: str) -> str:
    """``text`` as :func:`_unescape_token` reads it back: each backslash that a ``/`` follows, or
    that ends it, doubled, then each ``/`` as ``\\/``."""
    if "\\" in text:
        text = re.sub(r"\\(?=[\\/]|$)", r"\\\\", text)  # (a run of them: each doubled)
    return escape(text)


def check_words(sentence: Sentence, fmt: str) -> None:
    """A one-line error where a word holds white space, which a format of space-separated tokens
    (tagged, pos, pipe) cannot hold (Vietnamese words have spaces): it would not read back."""
    if len(split_tokens(" ".join(sentence.words))) == len(sentence.words):  # (one split in C, not a loop per character)
        return
    for word in sentence.words:
        if len(split_tokens(word)) != 1:
            raise TaggerError(f"the {fmt} format cannot hold the word {word!r} (white space inside it; its tokens are "
                              "separated by spaces): use --output-format conllu or jsonl", sentence.source,
                              sentence.line)


def parse_tokens(text: str, name: str, number: int) -> list[tuple[str, str]]:
    """The ``(word, tag)`` pairs of one line of tagged tokens; a :class:`TaggerError` if a token
    has no tag."""
    pairs = []
    for token in split_tokens(text):
        pair = split_token(token)
        if pair is None:
            raise TaggerError(f"token '{token}' has no /TAG or _TAG", name, number)
        pairs.append(pair)
    return pairs


def read(source: Source, *, column: str = "xpos", on_error: OnError | None = None) -> Iterator[Sentence]:
    """Yield one sentence per non-blank line of ``word/TAG`` tokens; tags go to ``column``. With
    ``on_error``, malformed lines are reported to it and skipped."""
    name = source_name(source)

    def sentence(item: tuple[int, str]) -> Sentence | None:
        number, text = item
        if not text.strip():
            return None
        pairs = parse_tokens(text, name, number)
        return Sentence([word for word, _ in pairs], {column: [tag for _, tag in pairs]}, source=name, line=number)

    yield from each_sentence(iter_lines(source, name, lenient=on_error is not None), sentence, on_error)


def tag_column(sentence: Sentence, column: str | None) -> list[str]:
    """The tags to write: ``column``, or by default ``xpos`` if present, else ``upos``."""
    if column is None:
        column = "upos" if not sentence.has("xpos") and sentence.has("upos") else "xpos"
    return sentence.column(column)


def write(sentences: Iterable[Sentence], stream: TextIO, *, column: str | None = None, sep: str = "/") -> None:
    """Write one line of ``word/TAG`` tokens per sentence (``sep="_"`` for ``word_TAG``)."""
    if sep not in ("/", "_"):
        raise TaggerError(f"tag separator must be '/' or '_', not '{sep}'")
    for sentence in sentences:
        check_words(sentence, NAME)
        tags = tag_column(sentence, column)
        stream.write(" ".join(join_token(w, t, sep) for w, t in zip(sentence.words, tags)) + "\n")


# --- WSJ splits --------------------------------------------------------------------------------

WSJ_FILE = re.compile(r"wsj_(\d\d)(\d\d)")

#: task -> split -> WSJ sections (the conventional splits).
WSJ_SECTIONS = {
    "pos": {"train": range(0, 19), "dev": range(19, 22), "test": range(22, 25)},
    "ccg": {"train": range(2, 22), "dev": range(0, 1), "test": range(23, 24)},
    "dep": {"train": range(2, 22), "dev": range(22, 23), "test": range(23, 24)},
}

#: split -> file numbers of the NLTK 10% WSJ sample split used by the benchmarks.
SAMPLE_FILES = {"train": range(1, 160), "dev": range(160, 180), "test": range(180, 200)}


def _numbered(paths: Iterable[str | os.PathLike] | str | os.PathLike) -> list[tuple[int, int, Path]]:
    if isinstance(paths, (str, os.PathLike)):
        folder = Path(paths)
        paths = sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else [folder]
    out = []
    for path in map(Path, paths):
        match = WSJ_FILE.search(path.name)
        if match is None:
            raise TaggerError("not a WSJ file name (expected wsj_SSNN...)", str(path))
        section, number = int(match.group(1)), int(match.group(1) + match.group(2))
        out.append((section, number, path))
    return sorted(out, key=lambda item: (item[1], item[2].name))


def wsj_split(paths: Iterable[str | os.PathLike] | str | os.PathLike, task: str) -> dict[str, list[Path]]:
    """Split WSJ files (``wsj_SSNN.*``; or a directory of them) into train/dev/test by section:
    ``pos`` 00-18/19-21/22-24, ``ccg`` 02-21/00/23, ``dep`` 02-21/22/23. Other sections are left out."""
    if task not in WSJ_SECTIONS:
        raise TaggerError(f"unknown WSJ split task '{task}' (choose from {', '.join(WSJ_SECTIONS)})")
    sections = WSJ_SECTIONS[task]
    files = _numbered(paths)
    return {split: [p for s, _, p in files if s in wanted] for split, wanted in sections.items()}


def sample_split(paths: Iterable[str | os.PathLike] | str | os.PathLike) -> dict[str, list[Path]]:
    """Split the NLTK WSJ sample (files 0001-0199) as the benchmarks do:
    0001-0159 train, 0160-0179 dev, 0180-0199 test."""
    files = _numbered(paths)
    return {split: [p for _, n, p in files if n in wanted] for split, wanted in SAMPLE_FILES.items()}
