"""Per-word input features of the taggers (torch-free): normalised form, capitalisation class,
first/last-character slots, the character CNN's spelling and the subword units, and :class:`InputFeaturizer`,
which turns a word into the ids the input layer reads (:mod:`tagger.modules.input_layer`)."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Mapping

from tagger.corpus.vocab import Vocab

_DIGIT = re.compile(r"\d")

# Capitalisation classes; 0 is padding.
CAPS_LOWER, CAPS_FIRST, CAPS_UPPER, CAPS_MIXED, CAPS_NONE = 1, 2, 3, 4, 5
CHAR_PAD_WORD = "\x00"  # fills the first/last-l slots of words shorter than l (one special symbol)
CHAR_BOW, CHAR_EOW = "<w>", "</w>"  # the character CNN's word boundaries (never a single character)


#: Invisible marks that say nothing of the word they touch: zero-width space, word joiner, byte
#: order mark, and the bidirectional controls of right-to-left text (not ZWJ/ZWNJ, which spell).
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff"))


def canonical(word: str) -> str:
    """``word`` in Unicode's composed form, NFC (as UD treebanks are written): decomposed input,
    NFD (a letter and its accents as separate characters), is looked up as the same word."""
    return word if word.isascii() else unicodedata.normalize("NFC", word)


def unmarked(word: str) -> str:
    """``word`` without invisible marks (:data:`_INVISIBLE`: a right-to-left mark before it),
    unless it is nothing else: how a word that training never saw with them is looked up."""
    return word if word.isascii() else (word.translate(_INVISIBLE) or word)


def normalize(word: str) -> str:
    """Composed (:func:`canonical`), lowercased, and every digit mapped to 9."""
    return _DIGIT.sub("9", canonical(word).lower())


def caps_class(word: str) -> int:
    """All lower, first upper, all upper, mixed, or no letters."""
    if not any(ch.isalpha() for ch in word):
        return CAPS_NONE
    if word.islower():
        return CAPS_LOWER
    if word.isupper():
        return CAPS_UPPER
    if word[0].isupper() and (len(word) == 1 or word[1:].islower()):
        return CAPS_FIRST
    return CAPS_MIXED


def char_slots(word: str, length: int) -> list[str]:
    """The first ``length`` and the last ``length`` characters, padded with one special symbol
    (none for ``length`` 0: ``word[-0:]`` would be the whole word)."""
    if length <= 0:
        return []
    pad = [CHAR_PAD_WORD] * length
    first = (list(word[:length]) + pad)[:length]
    last = (pad + list(word[-length:]))[-length:]
    return first + last


def spelling(word: str, longest: int) -> list[str]:
    """What the character CNN reads: ``<w>``, the word's characters, ``</w>``. A word longer than
    ``longest`` keeps both ends: its first ⌈longest/2⌉ and last ⌊longest/2⌋ characters."""
    if len(word) > longest:
        head = (longest + 1) // 2
        word = word[:head] + word[len(word) - (longest - head):]
    return [CHAR_BOW, *word, CHAR_EOW]


#: The kinds of subword units a tagger can embed (``TaggerConfig.subwords``, :func:`subword_units`).
SUBWORD_KINDS = ("pieces", "suffixes", "prefixes")


def subword_units(word: str, kinds: tuple[str, ...], length: int) -> list[str]:
    """The subword units of ``word`` whose embeddings a tagger averages (:class:`InputFeaturizer`):
    with ``pieces``, each space-separated piece of a token that has several (``thành phố``: a
    Vietnamese word, ``20 000``), lowercased; with ``suffixes`` and ``prefixes``, the word's
    (normalised, :func:`normalize`) last and first 1..``length`` characters, shorter than the word itself
    (the whole word is the word embedding's). A unit names its kind: ``p:phố``, ``s:ing``, ``b:un``."""
    units = []
    if "pieces" in kinds and " " in word:
        pieces = word.lower().split()
        if len(pieces) > 1:
            units += ["p:" + piece for piece in pieces]
    if "suffixes" in kinds or "prefixes" in kinds:
        form = normalize(word)
        longest = min(length, len(form) - 1)
        if "suffixes" in kinds:
            units += ["s:" + form[-k:] for k in range(1, longest + 1)]
        if "prefixes" in kinds:
            units += ["b:" + form[:k] for k in range(1, longest + 1)]
    return units


#: ``subwords="auto"`` embeds the pieces of tokens with spaces where at least this share of the
#: training tokens hold one (Vietnamese VTB: 27%; English EWT: 0.01%).
AUTO_PIECES_SHARE = 0.01


def named_kinds(subwords: str, option: str = "subwords") -> tuple[str, ...]:
    """The kinds a ``subwords`` option names (``""``: none; "auto" is for :func:`subword_kinds_for`
    to resolve); a ValueError, naming ``option``, for anything else."""
    kinds = tuple(kind.strip() for kind in subwords.split(",") if kind.strip())
    if subwords != "auto" and not set(kinds) <= set(SUBWORD_KINDS):
        raise ValueError(f"{option} must be auto, empty, or some of {', '.join(SUBWORD_KINDS)} separated by commas, "
                         f"not {subwords!r}")
    return kinds


def subword_kinds_for(subwords: str, size: int, forms: Mapping[str, int]) -> tuple[str, ...]:
    """The subword kinds a model embeds, its option ``subwords`` ("auto", "", or kinds separated by
    commas) and embedding ``size`` given, trained on tokens of these ``forms`` and counts: none
    without a size; for ``auto``, ``pieces`` where at least :data:`AUTO_PIECES_SHARE` of the
    tokens hold a space."""
    if not size:
        return ()
    if subwords != "auto":
        return named_kinds(subwords)
    total = sum(forms.values())
    spaced = sum(n for form, n in forms.items() if " " in form)
    return ("pieces",) if total and spaced >= AUTO_PIECES_SHARE * total else ()


def subword_vocabs(subwords: str, size: int, length: int, forms: Mapping[str, int]) -> tuple[list[str], list[str]]:
    """(the units' vocabulary, their kinds) of a model trained on tokens of these ``forms`` and
    counts (:func:`subword_kinds_for`, :func:`subword_units` of up to ``length`` characters); two
    empty lists where it embeds none."""
    kinds = subword_kinds_for(subwords, size, forms)
    if not kinds:
        return [], []
    units: Counter = Counter()
    for form, n in forms.items():
        for unit in subword_units(form, kinds, length):
            units[unit] += n
    return Vocab.build(units).to_list(), list(kinds)


_NO_IDS: list[int] = []  # shared by every memo entry without the CNN (never mutated)


class InputFeaturizer:
    """Turns words into the integer features :class:`InputLayer` reads (via Vocabs, plain Python).

    ``spell_length`` > 0 also gives the character CNN's ids (:func:`spelling`); 0: an empty list.
    ``units`` (a vocabulary of subword units, :func:`subword_units` of ``kinds`` up to ``affix_length``
    characters) also gives the ids of a word's known units; None: an empty list.
    """

    def __init__(self, words: Vocab, chars: Vocab, char_length: int, spell_length: int = 0,
                 units: Vocab | None = None, kinds: tuple[str, ...] = (), affix_length: int = 0):
        self.words, self.chars, self.char_length, self.spell_length = words, chars, char_length, spell_length
        self.units, self.kinds, self.affix_length = units, kinds, affix_length
        self._cache: dict[str, tuple[int, int, list[int], list[int], list[int]]] = {}

    def token(self, word: str) -> tuple[int, int, list[int], list[int], list[int]]:
        """(word id, caps class, 2·l char ids, CNN char ids, subword unit ids) for one token;
        memoised, the hot path of tagging. Unknown units are left out."""
        hit = self._cache.get(word)
        if hit is None:
            form = canonical(word)  # decomposed (NFD) input looked up as the composed words it learnt
            key = normalize(form)
            if key not in self.words.stoi:  # unknown as it is: the word without invisible marks?
                key = normalize(unmarked(form))
            spelled = self.chars.indices(spelling(form, self.spell_length)) if self.spell_length else _NO_IDS
            known = _NO_IDS
            if self.units is not None:
                stoi = self.units.stoi
                known = [stoi[unit] for unit in subword_units(form, self.kinds, self.affix_length) if unit in stoi]
            hit = (self.words.index(key), caps_class(form), self.chars.indices(char_slots(form, self.char_length)),
                   spelled, known)
            if len(self._cache) < 100_000:  # bounded: open-vocabulary streams must not grow memory
                self._cache[word] = hit
        return hit
