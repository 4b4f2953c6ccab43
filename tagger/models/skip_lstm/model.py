"""The deep stacked BiLSTM tagger with skip connections (Wu, Zhang & Zong 2016) and shortcut
blocks (Wu, Zhang & Zong 2017), for POS tags and CCG supertags. SPEC §3.

One tagger learns one column or several from the same states (``column=upos,xpos,feats``): one
output product ``W [h→; h←]``, split in slices, one softmax (a :class:`Head`) per slice. A
column's head scores its whole values (``tags`` for the first column, ``tags:NAME`` for the
others); a ``feats`` column after the first may instead have one head per feature name
(``feats_mode=feature``, vocabularies ``feats:NAME``: a "none" value, then the values seen),
whose predictions are joined back into a bundle sorted by feature name. ``aux_column`` is one
more head that is learned and never output. The loss is the sum of the heads' cross-entropies
(``aux_weight`` times the auxiliary head's); a batch with soft targets (distillation,
:class:`~tagger.models.base.SoftTargets`) learns each column it has them for (:meth:`SkipLSTMTagger.soft_columns`:
every column one head scores whole) from them, mixed with its gold.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, fields, replace
from itertools import accumulate, chain
from typing import Any, Iterable, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from tagger.corpus.records import UNDERSCORE_VALUE_COLUMNS, Sentence
from tagger.corpus.vocab import PAD, Vocab
from tagger.errors import TaggerError
from tagger.evaluation.metrics import ColumnsMetric, TagMetric
from tagger.models.base import GreedyDecoding, SoftTargets, check_vector_size
from tagger.modules.init import scaled_normal_
from tagger.modules.input_layer import CHAR_BOW, CHAR_EOW, InputFeaturizer, InputLayer, canonical, char_slots, normalize, padded_ids
from tagger.corpus.features import subword_vocabs
from tagger.corpus.lemmas import LEMMA, output_values
from tagger.corpus.lemmas import rules as lemma_rules
from tagger.corpus.lexicon import LEXICON, LEXICON_MIN, TagLexicon
from tagger.corpus.lexicon import build as build_lexicon
from tagger.corpus.lexicon import choose as choose_lexicon
from tagger.models.skip_lstm.config import RARE, TaggerConfig, lookup_words, subword_featurizing, subword_table
from tagger.models.skip_lstm.export import lexicon_of
from tagger.models.skip_lstm.presets import PRESETS, TRAINING_DEFAULTS
from tagger.modules.recurrent import StackedBiRNN

#: The column whose ``feats_mode=feature`` splits it into one head per feature name.
FEATS = "feats"
#: A feature head's label for "this word has no such feature" (always its label 0).
NO_FEATURE = "_"


@dataclass(frozen=True)
class Head:
    """One softmax of the output layer: columns ``[start, stop)`` of the one output product,
    over the labels ``vocabs[key]``. ``feature``: the FEATS feature it predicts (``feats_mode=
    feature``), else None (the column's whole values). ``output``: written by :meth:`annotate`
    (False: the auxiliary column). ``weight``: its share of the loss."""

    column: str
    key: str
    start: int
    stop: int
    feature: str | None = None
    output: bool = True
    weight: float = 1.0


def column_key(index: int, column: str) -> str:
    """The vocabulary of the ``index``-th column's whole values: ``tags`` for the first (as in
    every single-column model file), ``tags:NAME`` for the others."""
    return "tags" if index == 0 else f"tags:{column}"


def feature_key(feature: str) -> str:
    """The vocabulary of a FEATS feature's head (``feats_mode=feature``)."""
    return f"{FEATS}:{feature}"


def split_features(bundle: str) -> dict[str, str]:
    """A FEATS value as ``{name: value}`` (``_``: none). ``Number=Sing|Person=3`` ->
    ``{"Number": "Sing", "Person": "3"}``."""
    if bundle == NO_FEATURE or not bundle:
        return {}
    return dict(item.partition("=")[::2] for item in bundle.split("|"))


def feature_order(name: str) -> tuple[str, str]:
    """The sort key of a feature name in FEATS: UD sorts by name, case-insensitively."""
    return name.lower(), name


def join_features(features: Sequence[tuple[str, str]]) -> str:
    """``(name, value)`` pairs as a FEATS value in the UD order (:func:`feature_order`; ``_``
    for none): the inverse of :func:`split_features`, and what the per-feature heads decode to
    (:meth:`SkipLSTMTagger.decode` joins them in that order, which :meth:`~SkipLSTMTagger.heads_of` gives them)."""
    ordered = sorted(features, key=lambda pair: feature_order(pair[0]))
    return "|".join(f"{name}={value}" for name, value in ordered) or NO_FEATURE


def column_values(sentence: Sentence, column: str) -> list[str]:
    """The values of a column learned: :meth:`Sentence.column` (a one-line error without it),
    except that a column whose ``_`` is a value (FEATS) may hold only ``_`` in a sentence, and
    that lemmas are learned as the rules that make them of the words (:mod:`tagger.corpus.lemmas`)."""
    if column in UNDERSCORE_VALUE_COLUMNS and column in sentence.columns:
        return sentence.columns[column]
    if column == LEMMA:
        return lemma_rules(sentence.words, sentence.column(column))
    return sentence.column(column)


#: The vocabulary that keeps a transformer's files (config, tokenizer; name, text, name, text, ...).
TRANSFORMER_FILES = "transformer_files"


def transformer_files(vocabs: dict[str, list[str]]) -> dict[str, str]:
    """The transformer's files kept in ``vocabs`` (:data:`TRANSFORMER_FILES`), by name."""
    flat = vocabs.get(TRANSFORMER_FILES)
    if not flat or len(flat) % 2:
        raise TaggerError("the model names a transformer but keeps none of its files: the file is damaged")
    return dict(zip(flat[::2], flat[1::2]))


def _ids(values: Iterable[int]) -> torch.Tensor:
    """A 1-D int64 tensor of ``values``, through an ``array`` (several times faster than
    ``torch.tensor`` of a list: numbering a batch made it a third of ``collate``)."""
    packed = array("q", values)
    return torch.frombuffer(packed, dtype=torch.int64) if packed else torch.empty(0, dtype=torch.int64)


@dataclass
class TaggerBatch:
    """A batch numbered once per distinct word: B sentences, T = longest, U distinct words
    (row 0 of the per-word tensors is padding), 2l char slots, L = the longest spelling (the
    character CNN's input, only when the model has one)."""

    types: torch.Tensor  # [B, T] row of each token in the per-word tensors (0 = padding)
    words: torch.Tensor  # [U+1] word id of each distinct word
    caps: torch.Tensor  # [U+1]
    chars: torch.Tensor  # [U+1, 2l]
    lengths: torch.Tensor  # [B]
    tags: torch.Tensor | None  # [B, T] gold tag ids (the first head's), -100 at padding; None when untagged
    spelled: torch.Tensor | None = None  # [U+1, L] char ids of <w> word </w>, 0-padded; None without a CNN
    forms: list[str] | None = None  # the U distinct words (rows 1..U), as spelled
    more_tags: torch.Tensor | None = None  # [H-1, B, T] gold ids of the other heads, in order, -100 at padding
    soft: dict[str, SoftTargets] | None = None  # per column, the teachers' distributions (distillation); None: gold only
    sentences: list[list[str]] | None = None  # the words of each sentence, for a transformer under the model (else None)
    units: torch.Tensor | None = None  # [U+1, K] ids of each word's known subword units, 0-padded; None without them

    def to(self, device: torch.device) -> "TaggerBatch":
        move = lambda t: t.to(device, non_blocking=True) if isinstance(t, (torch.Tensor, SoftTargets)) else t  # noqa: E731
        soft = {column: move(targets) for column, targets in self.soft.items()} if self.soft else self.soft
        return TaggerBatch(*(move(getattr(self, f.name)) if f.name != "soft" else soft for f in fields(self)))

    @property
    def n_tokens(self) -> int:
        return int(self.lengths.sum())


class SkipLSTMTagger(GreedyDecoding, nn.Module):
    """Input layer → stacked bidirectional skip/shortcut layers → one softmax per head (a column,
    a FEATS feature, the auxiliary column; see the module text)."""

    name = "skip_lstm"
    kind = "tagger"  # what it is to the CLI: a tagger model (``--pos-model``) or a parser
    #: The columns of its input it reads besides the words: none (it reads words only).
    input_columns: list[str] = []
    known_input_values: dict[str, frozenset[str]] = {}
    Config = TaggerConfig
    PRESETS = PRESETS
    default_preset = "fast"
    training_defaults = TRAINING_DEFAULTS
    # capabilities (tagger.models.base.Model)
    reads_raw_text = False  # it reads sentences from a format reader
    gives_distribution = True
    can_distill = True  # loss learns its soft_columns from SoftTargets (tagger.training.distill)
    can_bootstrap = False
    can_take_encoder = False
    takes_transformer = True  # config.transformer: a pretrained transformer's word vectors join the input
    transformer_key = "transformer"
    can_lower_precision = True
    batches_in_threads = True

    def __init__(self, config: TaggerConfig, vocabs: dict[str, list[str]]):
        super().__init__()
        self.config = config
        # the words only a table of pretrained vectors holds, where there is one (a student built
        # from a teacher's vocabularies without the table must not look them up)
        self.vocabs = vocabs if config.pretrained_dim else {k: v for k, v in vocabs.items() if k != "pretrained"}
        self.word_vocab = Vocab.from_list(vocabs["words"])
        self.featurizer = self._featurizer()
        self.rare_word_from = int(vocabs.get("rare_word_from", ["0"])[0])
        table = (len(lookup_words(vocabs)), config.pretrained_dim) if config.pretrained_dim else (0, 0)
        self.input = InputLayer(len(self.word_vocab), len(vocabs["chars"]), config.word_dim, config.caps_dim,
                                config.char_dim, config.char_length, config.window, config.window_gates, config.init_scale,
                                config.char_cnn, config.char_cnn_width, config.cnn_dim, table, subword_table(config, vocabs))
        self.input_dropout = nn.Dropout(config.input_dropout)
        #: a pretrained transformer (tagger.modules.transformer.WordEncoder, rebuilt from the files in
        #: the vocabularies; its weights from the state dict or load_transformer) and its projection, or None
        self.transformer = self.transformer_proj = None
        if config.transformer:
            from tagger.modules.transformer import WordEncoder

            self.transformer = WordEncoder.from_files(transformer_files(vocabs), config.transformer_pooling,
                                                      config.transformer_layers, frozen=not config.transformer_tune)
            self.transformer_proj = nn.Linear(self.transformer.output_size, config.transformer_dim)
        dropouts = [config.middle_dropout] * config.layers
        dropouts[0] = dropouts[-1] = config.hidden_dropout
        self.rnn = StackedBiRNN(self.input.output_size + (config.transformer_dim if config.transformer else 0), config.hidden, config.layers, config.cell_spec, config.skip_span,
                                tuple(dropouts), config.init_scale, config.composition)
        # One product scores every head's labels: the columns' (the first's tags first), then the auxiliary column's.
        self.heads = self.heads_of(config, vocabs)
        self.labels = {head.key: Vocab.from_list(vocabs[head.key]) for head in self.heads}
        self.n_tags = len(self.tag_vocab)
        self.output = nn.Linear(self.rnn.output_size, self.heads[-1].stop)
        scaled_normal_(self.output.weight, self.output.in_features, config.init_scale)
        nn.init.zeros_(self.output.bias)
        # Never predict padding or RARE (RARE is trained as a class, as in the papers, but not output).
        banned = torch.zeros(self.heads[-1].stop, dtype=torch.bool)
        for head in self.heads:
            for special in (PAD, RARE):
                if head.feature is None and special in self.labels[head.key]:
                    banned[head.start + self.labels[head.key].index(special)] = True
        self.register_buffer("banned", banned[: self.n_tags].clone(), persistent=False)  # the first column's
        self.register_buffer("banned_all", banned, persistent=False)  # [heads[-1].stop] every head's
        #: Per output column, its heads in order (one; or, feats_mode=feature, one per feature).
        self.output_heads: dict[str, list[Head]] = {}
        for head in self.heads:
            if head.output:
                self.output_heads.setdefault(head.column, []).append(head)
        #: Per head key, its tag dictionary (tagger.corpus.lexicon), where training made one and it restricts words.
        self.lexicons: dict[str, TagLexicon] = {}
        self.set_lexicons()

    @staticmethod
    def heads_of(config: TaggerConfig, vocabs: dict[str, list[str]]) -> list[Head]:
        """The output layer's heads, in the order of its slices: each column's (the first is
        always one head over its whole values; a later ``feats`` with ``feats_mode=feature`` one
        per feature, sorted by name), then the auxiliary column's."""
        parts: list[tuple[str, str, str | None, bool, float]] = []  # column, key, feature, output, weight
        for index, column in enumerate(config.columns):
            if index > 0 and column == FEATS and config.feats_mode == "feature":
                keys = [k for k in vocabs if k.startswith(feature_key(""))]
                features = sorted((k[len(feature_key("")) :] for k in keys), key=feature_order)
                parts += [(column, feature_key(name), name, True, 1.0) for name in features]
            else:
                parts.append((column, column_key(index, column), None, True, 1.0))
        if config.aux_column:
            parts.append((config.aux_column, "aux_tags", None, False, config.aux_weight))
        missing = [key for _, key, *_ in parts if key not in vocabs]
        if missing or (config.feats_mode == "feature" and FEATS in config.columns[1:]
                       and not any(column == FEATS for column, *_ in parts)):
            raise TaggerError(f"the model's vocabularies have no {', '.join(missing) or 'feats:NAME'} for "
                              f"column={config.column}: not a file this tagger wrote")
        stops = list(accumulate(len(vocabs[key]) for _, key, *_ in parts))
        return [Head(column, key, stop - len(vocabs[key]), stop, feature, output, weight)
                for (column, key, feature, output, weight), stop in zip(parts, stops)]

    @property
    def tag_vocab(self) -> Vocab:
        """The first column's tags (what :meth:`distribution` is over)."""
        return self.labels["tags"]

    def set_precision(self, dtype: torch.dtype | None, in_place: bool = False) -> None:
        """Inference matrix products in ``dtype`` (None: float32; see :mod:`tagger.modules.precision`).
        ``in_place``: the recurrent matrices themselves become ``dtype`` (one copy in memory; for
        inference only, see :meth:`tagger.modules.recurrent.BiLayer.set_matmul_dtype`)."""
        self.rnn.set_matmul_dtype(dtype, in_place)

    # ----------------------------------------------------------------------------- data → tensors
    @staticmethod
    def required_columns(config: TaggerConfig) -> list[str]:
        return config.columns + ([config.aux_column] if config.aux_column else [])

    @classmethod
    def pos_column(cls, config: TaggerConfig) -> str | None:
        """None: a tagger reads words only, so ``--pos-model`` has nothing to retag."""
        return None

    @classmethod
    def pos_columns(cls, config: TaggerConfig) -> list[str]:
        """None: a tagger reads words only, so ``--jackknife`` has nothing to retag."""
        return []

    @classmethod
    def training_units(cls, config: TaggerConfig, sentences: Sequence[Sentence]) -> list[Sentence]:
        """The sentences read, as they are."""
        return list(sentences)

    @classmethod
    def training_meta(cls, config: TaggerConfig, sentences: Sequence[Sentence]) -> tuple[dict[str, Any], list[str]]:
        """What the model file's meta records about the training sentences, and notes: the labels
        of each column seen fewer than ``rare_tag_count`` times, which are one RARE class that is
        never output (CCGbank's supertags), as ``rare_labels`` and a note that says how many words
        carry them (none of those can be tagged right)."""
        if config.rare_tag_count <= 1:
            return {}, []
        facts, notes = {}, []
        for index, column in enumerate(config.columns):
            if index > 0 and column == FEATS and config.feats_mode == "feature":
                continue
            counts = Counter(value for sentence in sentences for value in column_values(sentence, column))
            rare = {label: n for label, n in counts.items() if n < config.rare_tag_count}
            if not rare:
                continue
            words, total = sum(rare.values()), sum(counts.values())
            facts[column] = {"labels": len(rare), "of_labels": len(counts), "words": words, "of_words": total}
            notes.append(f"{column}: {len(rare)} of its {len(counts)} labels are seen fewer than {config.rare_tag_count} "
                         f"times in training ({words:,} words, {100 * words / max(1, total):.2f}%): they are one RARE "
                         f"class, never output (--set rare_tag_count=1 keeps every label)")
        return ({"rare_labels": facts} if facts else {}), notes

    @classmethod
    def vocabs_from(cls, config: TaggerConfig, sentences: Sequence[Sentence]) -> dict[str, list[str]]:
        """Word, character and label vocabularies from the training sentences.

        Characters: those of the first/last-l slots; with the character CNN, also every character
        of every word (the middle of long words) and the CNN's ``<w>``, ``</w>`` boundaries.
        Labels: per head (:meth:`heads_of`), most frequent first; a column's tags seen fewer
        than ``rare_tag_count`` times become one RARE class (never output); a feature's values
        follow its "none" label ``_``.
        """
        words, chars, aux, forms = Counter(), Counter(), Counter(), Counter()
        columns = config.columns
        by_feature = [index > 0 and column == FEATS and config.feats_mode == "feature" for index, column in enumerate(columns)]
        counts: list[Counter] = [Counter() for _ in columns]
        pairs: list[Counter] = [Counter() for _ in columns]  # (word form, label) counts, for the tag dictionaries
        features: dict[str, Counter] = {}
        for sentence in sentences:
            for column, count, pair, split in zip(columns, counts, pairs, by_feature):
                if not split:
                    values = column_values(sentence, column)
                    count.update(values)
                    if config.lexicon != "0":
                        pair.update(zip(map(normalize, sentence.words), values))
                    continue
                for bundle in column_values(sentence, column):
                    for name, value in split_features(bundle).items():
                        features.setdefault(name, Counter())[value] += 1
            if config.aux_column:
                aux.update(sentence.column(config.aux_column))
            spelled = [canonical(word) for word in sentence.words]  # as the featurizer reads them
            forms.update(spelled)
            for word in spelled:
                words[normalize(word)] += 1
                chars.update(char_slots(word, config.char_length))
                if config.char_cnn:
                    chars.update(word)
        if config.char_cnn:
            chars.update((CHAR_BOW, CHAR_EOW))
        word_vocab = Vocab.build(words, config.min_word_count)
        rare_from = next((i for i, w in enumerate(word_vocab.itos) if words.get(w, 2) < 2), len(word_vocab))
        where = sentences[0].source if sentences else None
        tag_lists: dict[str, list[str]] = {}
        for index, (column, tags, split) in enumerate(zip(columns, counts, by_feature)):
            if split:
                if not features:
                    raise TaggerError(f"no feature in the '{column}' column of the training data (only '_'): "
                                      f"nothing to learn there", where)
                for name in sorted(features):
                    tag_lists[feature_key(name)] = [NO_FEATURE] + Vocab.build(features[name], specials=()).to_list()
                continue
            kept_tags = Vocab.build(tags, max(1, config.rare_tag_count), specials=(PAD,))
            if len(kept_tags) == 1:  # only padding: every tag would be RARE, and RARE is never output
                raise TaggerError(f"no '{column}' tag is seen {config.rare_tag_count} times in the training data, "
                                  f"so every tag would be rare and none could be predicted: lower it with "
                                  f"--set rare_tag_count=N (1 keeps every tag)", where)
            tag_lists[column_key(index, column)] = kept_tags.to_list() + ([RARE] if len(kept_tags) - 1 < len(tags) else [])
            lexicon = build_lexicon(pairs[index], word_vocab, kept_tags) if config.lexicon != "0" else []
            if any(lexicon):
                tag_lists[LEXICON + column_key(index, column)] = lexicon
        vocabs = {
            "words": word_vocab.to_list(),
            "chars": Vocab.build(chars).to_list(),
            "tags": tag_lists.pop("tags"),
            "rare_word_from": [str(rare_from)],
            **tag_lists,
        }
        if config.aux_column:
            vocabs["aux_tags"] = Vocab.build(aux, specials=(PAD,)).to_list()
        units, kinds = subword_vocabs(config.subwords, config.subword_dim, config.affix_length, forms)
        if units:
            vocabs["subwords"], vocabs["subword_kinds"] = units, kinds
        if config.transformer:
            from tagger.modules.transformer import files, resolve

            vocabs[TRANSFORMER_FILES] = [part for item in sorted(files(resolve(config.transformer)).items()) for part in item]
        return vocabs

    @classmethod
    def vocabs_with_labels(cls, config: TaggerConfig, vocabs: dict[str, list[str]],
                           labels: dict[str, Sequence[str]]) -> dict[str, list[str]]:
        """``vocabs`` with, per column of ``labels``, those missing from its values appended (after
        RARE, if any: a training tag that is one of them is then learned as itself, not as RARE)."""
        out = dict(vocabs)
        for index, column in enumerate(config.columns):
            if column in labels:
                key = column_key(index, column)
                known = set(out[key])
                out[key] = out[key] + [label for label in labels[column] if label not in known]
        return out

    @classmethod
    def soft_columns(cls, config: TaggerConfig) -> list[str]:
        """Its columns but a later ``feats`` predicted per feature (``feats_mode=feature``)."""
        return [column for index, column in enumerate(config.columns)
                if not (index > 0 and column == FEATS and config.feats_mode == "feature")]

    def collate(self, sentences: Sequence[Sentence], with_gold: bool = True) -> TaggerBatch:
        """Number and pad ``sentences``, featurising each distinct word once; gold tags only when
        ``with_gold``. Rows are numbered in order of first appearance; the numbering and padding
        are per sentence and per distinct word (dict and list operations), not per token."""
        lengths = [len(s) for s in sentences]
        steps = max(lengths)
        forms = list(dict.fromkeys(chain.from_iterable(s.words for s in sentences)))  # distinct, in order
        row_of = dict(zip(forms, range(1, len(forms) + 1))).__getitem__
        padding = [0] * steps
        types: list[int] = []
        for sentence, n in zip(sentences, lengths):
            types += map(row_of, sentence.words)
            types += padding[n:]
        features = list(zip(*map(self.featurizer.token, forms))) or [(), (), (), (), ()]
        words, caps, chars, spelled, units = ([first, *values] for first, values in
                                              zip((0, 0, [0] * (2 * self.config.char_length), [], []), features))
        spelled_ids = padded_ids(spelled) if self.config.char_cnn else None
        unit_ids = padded_ids(units) if self.input.subword is not None else None
        tags = more_tags = None
        if with_gold:
            golds = self.gold_ids(sentences, steps)
            tags = golds[0]
            if len(golds) > 1:
                more_tags = torch.stack(golds[1:])
        return TaggerBatch(_ids(types).view(len(sentences), steps), _ids(words), _ids(caps),
                           _ids(chain.from_iterable(chars)).view(len(chars), -1), _ids(lengths), tags, spelled_ids,
                           forms, more_tags, None, [list(s.words) for s in sentences] if self.transformer else None, unit_ids)

    def gold_ids(self, sentences: Sequence[Sentence], steps: int) -> list[torch.Tensor]:
        """Per head, the gold label ids ``[B, T]`` of ``sentences`` padded to ``steps`` (-100 at
        padding). A column's tag unseen in training is RARE where the head has RARE, else left
        out of the loss (-100), and so is a feature's unseen value; a word without a feature is
        that feature head's ``_``."""
        pad = [[-100] * (steps - len(s)) for s in sentences]
        out = []
        bundles: dict[str, list[list[dict[str, str]]]] = {}  # a feats column split once for all its heads
        for head in self.heads:
            stoi = self.labels[head.key].stoi
            if head.feature is None:
                unknown = stoi.get(RARE, -100) if head.output else -100
                rows = [[stoi.get(t, unknown) for t in column_values(s, head.column)] + p for s, p in zip(sentences, pad)]
            else:
                if head.column not in bundles:
                    bundles[head.column] = [[split_features(b) for b in column_values(s, head.column)] for s in sentences]
                name = head.feature
                rows = [[stoi.get(f[name], -100) if name in f else 0 for f in split] + p
                        for split, p in zip(bundles[head.column], pad)]
            out.append(torch.tensor(rows))
        return out

    # ----------------------------------------------------------------------------- the network
    def forward(self, batch: TaggerBatch) -> torch.Tensor:
        """Label scores [B, T, S] (unnormalised log-probabilities), ``S = heads[-1].stop``: the
        first column's tags (``[..., :n_tags]``), then every other head's slice (:attr:`heads`).

        In evaluation mode the first layer's input projection is computed per distinct word
        (:meth:`InputLayer.project_by_type`), which is exact without dropout; training builds
        the window input per token, so that dropout and rare-word dropout act per token. The
        character CNN runs once per distinct word on either path, and is gathered per token.
        Where a later layer's shortcut reads the input itself (h^0: an input as wide as the
        layers, :attr:`StackedBiRNN.reads_input`), evaluation builds it per token too, for that
        shortcut alone.
        """
        types = batch.types.t()  # [T, B]
        extra = self.transformer_input(batch)  # [T, B, transformer_dim] or None
        if not self.training and self.rnn.sources[0] is None:
            first = self.rnn.layers[0]
            weight, size = first.input_weight(), self.input.output_size  # [2, D (+ transformer_dim), G]
            projected = self.input.project_by_type(batch.words, batch.caps, batch.chars, types, weight[:, :size],
                                                   first.bias, batch.spelled, batch.forms, batch.units)
            if extra is not None:  # its part of the input projection, per token (direction 1 reversed in time)
                rows = torch.matmul(extra, weight[:, size:].float().unsqueeze(1)).to(projected.dtype)  # [2, T, B, G]
                projected[0] += rows[0]
                projected[1] += rows[1].flip(0)
            x = self.token_input(batch, types, extra) if self.rnn.reads_input else None
            hidden = self.rnn(x, batch.lengths, projected)
        else:
            hidden = self.rnn(self.input_dropout(self.token_input(batch, types, extra)), batch.lengths)
        return self.output(hidden).transpose(0, 1)

    def transformer_input(self, batch: TaggerBatch) -> torch.Tensor | None:
        """The transformer's projected word vectors [T, B, transformer_dim], or None without one."""
        if self.transformer is None:
            return None
        return self.transformer_proj(self.transformer(batch.sentences)).transpose(0, 1)

    def token_input(self, batch: TaggerBatch, types: torch.Tensor, extra: torch.Tensor | None = None) -> torch.Tensor:
        """The window input x [T, B, D] of every token (``types`` [T, B]: the batch's rows of
        its distinct words), before input dropout; in training, with rare-word dropout; the
        transformer's part ``extra`` [T, B, E] after it, where there is one."""
        if extra is not None:
            return torch.cat([self.token_input(batch, types), extra], -1)
        words = batch.words[types]
        if self.training and self.config.rare_word_dropout > 0:
            rare = (words >= self.rare_word_from) & (torch.rand(words.shape, device=words.device) < self.config.rare_word_dropout)
            words = words.masked_fill(rare, self.word_vocab.unk_index)
        spelling = self.input.spelling(batch.spelled)[types] if self.config.char_cnn else None  # [T, B, K]
        bags = self.input.bag(batch.units)[types] if self.input.subword is not None else None  # [T, B, S]
        return self.input(words, batch.caps[types], batch.chars[types], spelling, bags)  # [T, B, D]

    def loss(self, scores: torch.Tensor, batch: TaggerBatch) -> torch.Tensor:
        """The sum over the heads of each one's mean cross-entropy over the batch's tokens (the
        auxiliary column's times ``aux_weight``): ``scores`` from :meth:`forward`. The part of a
        column with soft targets in ``batch.soft`` is ``gold_weight`` × its gold cross-entropy +
        (1 − ``gold_weight``) × :meth:`soft_loss`."""
        smoothing, soft = self.config.label_smoothing, batch.soft or {}
        golds = [batch.tags, *(batch.more_tags if batch.more_tags is not None else ())]
        loss = scores.new_zeros(())
        for head, gold in zip(self.heads, golds):
            part = F.cross_entropy(scores[..., head.start : head.stop].flatten(0, 1), gold.flatten(), ignore_index=-100,
                                   label_smoothing=smoothing)
            taught = soft.get(head.column) if head.output and head.feature is None else None
            if taught is not None:
                weight = taught.gold_weight
                learnt = (1.0 - weight) * self.soft_loss(scores[..., head.start : head.stop], taught, batch.lengths)
                part = learnt + weight * part if weight else learnt
            loss = loss + (part if head.weight == 1.0 else head.weight * part)
        return loss

    @staticmethod
    def soft_loss(scores: torch.Tensor, soft: SoftTargets, lengths: torch.Tensor) -> torch.Tensor:
        """Temperature² × the mean over the tokens of the cross-entropy of one column's
        distribution at the temperature, ``softmax(scores / temperature)``, to ``soft``'s targets
        (Hinton et al. 2015): ``scores`` [B, T, C] (that column's head), ``lengths`` [B]."""
        t = soft.temperature
        log_probs = (scores / t if t != 1.0 else scores).log_softmax(-1)  # [B, T, n_tags]
        per_token = -(soft.probs * log_probs.gather(-1, soft.ids)).sum(-1)  # [B, T], 0 at padding
        return per_token.sum() * (t * t) / lengths.sum().clamp(min=1)

    def with_soft_targets(self, batch: TaggerBatch, soft: dict[str, SoftTargets]) -> TaggerBatch:
        """``batch`` carrying soft targets per column (``ids`` index its :meth:`soft_labels`)."""
        unknown = sorted(set(soft) - set(self.soft_columns(self.config)))
        if unknown:
            raise TaggerError(f"soft targets for {', '.join(unknown)}, which this tagger does not learn whole")
        return replace(batch, soft=soft)

    def soft_labels(self, column: str) -> list[str]:
        """The values of ``column``'s head, in the order of its scores."""
        return self.labels[self._whole_head(column).key].itos

    @torch.no_grad()
    def distributions(self, batch: TaggerBatch) -> dict[str, torch.Tensor]:
        """Per column of :meth:`soft_columns`, its probabilities [B, T, C], padding and RARE
        excluded, and the labels its tag dictionary does not allow a word (as :meth:`distribution`)."""
        scores = self(batch).masked_fill(self.banned_all, float("-inf"))
        return {column: self.as_allowed(scores[..., head.start : head.stop], batch, head).softmax(-1)
                for column in self.soft_columns(self.config) for head in [self._whole_head(column)]}

    def _whole_head(self, column: str) -> Head:
        """The head scoring ``column``'s whole values; TaggerError for another column."""
        heads = self.output_heads.get(column, [])
        if len(heads) != 1 or heads[0].feature is not None:
            raise TaggerError(f"this tagger does not predict whole values of {column}")
        return heads[0]

    @torch.no_grad()
    def distribution(self, batch: TaggerBatch) -> torch.Tensor:
        """Tag probabilities [B, T, n_tags] of the first column, padding and RARE excluded, and the
        labels its tag dictionary does not allow a word (so the most probable is :meth:`decode`'s)."""
        scores = self(batch)[..., : self.n_tags].masked_fill(self.banned, float("-inf"))
        return self.as_allowed(scores, batch, self.heads[0]).softmax(-1)

    def as_allowed(self, scores: torch.Tensor, batch: TaggerBatch, head: Head) -> torch.Tensor:
        """One head's ``scores`` [B, T, C] at -inf where its tag dictionary does not allow a word the label."""
        lexicon = self.lexicons.get(head.key)
        if lexicon is None:
            return scores
        words = batch.words[batch.types].flatten().cpu().numpy()
        allowed = torch.from_numpy(lexicon.allowed[lexicon.sets(words)]).view(scores.shape).to(scores.device)
        return scores.masked_fill(~allowed, float("-inf"))

    @torch.no_grad()
    def decode(self, batch: TaggerBatch) -> list[list[str]] | list[dict[str, list[str]]]:
        """The best tag of every token, as strings; for a model of several columns, per sentence
        ``{column: tags}`` for every column it outputs."""
        if len(self.output_heads) == 1:
            best = self.best(self(batch)[..., : self.n_tags].masked_fill(self.banned, float("-inf")), batch, self.heads[0])
            itos = self.tag_vocab.itos
            return [[itos[i] for i in row[:n]] for row, n in zip(best, batch.lengths.tolist())]
        scores = self(batch).masked_fill(self.banned_all, float("-inf"))  # [B, T, S]
        lengths = batch.lengths.tolist()
        out: list[dict[str, list[str]]] = [{} for _ in lengths]
        for column, heads in self.output_heads.items():
            if heads[0].feature is None:
                itos = self.labels[heads[0].key].itos
                best = self.best(scores[..., heads[0].start : heads[0].stop], batch, heads[0])  # [B, T]
                for record, row, n in zip(out, best, lengths):
                    record[column] = [itos[i] for i in row[:n]]
                continue
            # per feature head its argmax, [B, T, F]; heads sorted as FEATS is, so joined in order
            best = torch.stack([scores[..., h.start : h.stop].argmax(-1) for h in heads], -1).tolist()
            pieces = self.feature_pieces(heads)
            for record, rows, n in zip(out, best, lengths):
                record[column] = ["|".join([piece[i] for piece, i in zip(pieces, row) if i]) or NO_FEATURE
                                  for row in rows[:n]]
        return out

    def set_lexicons(self) -> None:
        """:attr:`lexicons` from the vocabularies: each head's tag dictionary from its least count
        (chosen on dev, :meth:`tune_decoding`; else ``config.lexicon``, and none for ``auto``)."""
        self.lexicons = {}
        for head in self.heads:
            lexicon = lexicon_of(self.config, self.vocabs, head.key, head.stop - head.start) if head.output else None
            if lexicon is not None:
                self.lexicons[head.key] = lexicon

    @torch.no_grad()
    def tune_decoding(self, dev: Sequence[Sentence]) -> dict[str, Any]:
        """With ``lexicon=auto``, per column with a tag dictionary, the least count from which it
        restricts words that tags ``dev`` best (:func:`tagger.corpus.lexicon.choose`), kept in the
        vocabularies; returns ``{column: {"lexicon": count, "dev_right": {count: tokens right}}}``."""
        heads = [head for head in self.heads if head.output and LEXICON + head.key in self.vocabs]
        if self.config.lexicon != "auto" or not heads or not dev:
            return {}
        was_training = self.training
        self.eval()
        parts: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {head.key: [] for head in heads}
        for start in range(0, len(dev), 64):
            sentences = dev[start : start + 64]
            batch = self.collate(sentences, with_gold=False).to(self.banned_all.device)
            scores = self(batch).masked_fill(self.banned_all, float("-inf")).float().cpu()
            inside = (torch.arange(scores.shape[1]) < batch.lengths.cpu().unsqueeze(1)).flatten().numpy()  # [B·T]
            words = batch.words[batch.types].flatten().cpu().numpy()[inside]
            for head in heads:
                stoi = self.labels[head.key].stoi
                gold = [stoi.get(label, -1) for s in sentences for label in column_values(s, head.column)]
                flat = scores[..., head.start : head.stop].flatten(0, 1).numpy()[inside]
                parts[head.key].append((flat, words, np.array(gold, dtype=np.intp)))
        chosen = {}
        for head in heads:
            flat, words, gold = (np.concatenate(arrays) for arrays in zip(*parts[head.key]))
            least, right = choose_lexicon(self.vocabs[LEXICON + head.key], flat, words, gold)
            self.vocabs[LEXICON_MIN + head.key] = [str(least)]
            chosen[head.column] = {"lexicon": least, "dev_right": {str(k): n for k, n in right.items()}}
        self.set_lexicons()
        self.train(was_training)
        return chosen

    def best(self, scores: torch.Tensor, batch: TaggerBatch, head: Head) -> list[list[int]]:
        """The best label ids [B, T] of one head from its ``scores`` [B, T, C], a label that the
        head's tag dictionary does not allow a word replaced by its best allowed one."""
        best = scores.argmax(-1)
        lexicon = self.lexicons.get(head.key)
        if lexicon is None:
            return best.tolist()
        words = batch.words[batch.types].flatten().cpu().numpy()  # [B·T] each token's word row (padding: 0)
        fixed = lexicon.fix(scores.flatten(0, 1).float().cpu().numpy(), best.flatten().cpu().numpy(), words)
        return fixed.reshape(best.shape).tolist()

    def feature_pieces(self, heads: list[Head]) -> list[list[str]]:
        """Per feature head, ``NAME=VALUE`` of each of its labels (``_`` for label 0, none)."""
        return [[NO_FEATURE] + [f"{h.feature}={value}" for value in self.labels[h.key].itos[1:]] for h in heads]

    @property
    def distribution_labels(self) -> list[str]:
        """The tags :meth:`distribution`'s last axis is over."""
        return self.tag_vocab.itos

    # ----------------------------------------------------------------------------- results
    @property
    def output_columns(self) -> list[str]:
        """The columns :meth:`annotate` fills: every column learned (not ``aux_column``)."""
        return self.config.columns

    def annotate(self, sentence: Sentence, prediction: list[str] | dict[str, list[str]]) -> None:
        """Write one :meth:`decode` result into ``sentence``'s columns (lemmas made of their rules)."""
        if isinstance(prediction, dict):
            sentence.columns.update({name: output_values(sentence.words, name, labels) for name, labels in prediction.items()})
        elif len(self.output_heads) == 1:
            sentence.columns[self.config.column] = output_values(sentence.words, self.config.column, prediction)
        else:  # an empty sentence's [] (inference.predict)
            sentence.columns.update({name: list(prediction) for name in self.output_columns})

    def metric(self, sentences: Sequence[Sentence], predictions: Sequence[Any]) -> TagMetric | ColumnsMetric:
        """Token accuracy of the column; of several, each one's and their mean (the dev score)."""
        if len(self.output_heads) == 1:
            metric = TagMetric()
            for sentence, prediction in zip(sentences, predictions):
                metric.update(sentence.words, column_values(sentence, self.config.column), prediction)
            return metric
        columns = ColumnsMetric(self.output_columns)
        for sentence, prediction in zip(sentences, predictions):
            predicted = prediction or {name: [] for name in self.output_columns}  # an empty sentence's []
            columns.update(sentence.words, {name: column_values(sentence, name) for name in self.output_columns}, predicted)
        return columns

    def _featurizer(self) -> InputFeaturizer:
        """Word ids over :func:`lookup_words` (the training words, then the frozen table's others)."""
        return InputFeaturizer(Vocab.from_list(lookup_words(self.vocabs)), Vocab.from_list(self.vocabs["chars"]),
                               self.config.char_length, self.config.char_cnn_max if self.config.char_cnn else 0,
                               *subword_featurizing(self.config, self.vocabs))

    def load_embeddings(self, words: list[str], vectors: torch.Tensor) -> int:
        """Pretrained ``vectors`` of ``words`` (in the source's order, most frequent first): with
        ``vectors="init"`` the training words' embeddings start from them; with ``"frozen"`` (the
        default) they become the input's frozen table (:meth:`InputLayer.add_pretrained`): a
        row for each training word (zero where it has none) and for as many of the source's
        other words, by the words' normalised forms, as ``vectors_mb`` holds. Returns the rows
        with a vector."""
        if self.config.vectors == "frozen" and self.config.word_dim and len(words):
            return self._freeze_vectors(words, vectors)
        check_vector_size(vectors, self.config.word_dim)
        rows, found = [], []
        for i, word in enumerate(words):
            index = self.word_vocab.stoi.get(normalize(word))
            if index is not None and index > 1:
                rows.append(index)
                found.append(i)
        if rows:
            self.input.load_vectors(vectors[found], torch.tensor(rows))
        return len(rows)

    def _freeze_vectors(self, words: list[str], vectors: torch.Tensor) -> int:
        """:meth:`load_embeddings` with ``vectors="frozen"``: the table, the extra words in the
        vocabularies (``pretrained``), the config's ``pretrained_dim``, the featurizer anew."""
        if self.input.pretrained is not None:
            raise TaggerError("this model has a table of pretrained vectors already")
        first: dict[str, int] = {}
        for i, word in enumerate(words):
            first.setdefault(normalize(word), i)
        known = self.word_vocab.stoi
        dim = vectors.shape[1]
        room = max(int(self.config.vectors_mb * 2**20) // (2 * dim) - len(known), 0)
        extra = [form for form in first if form not in known][:room]
        rows = list(self.word_vocab.itos) + extra
        table = torch.zeros(len(rows), dim)
        found = [(row, first[form]) for row, form in enumerate(rows) if row > 1 and form in first]
        if found:
            at, source = zip(*found)
            table[list(at)] = vectors[list(source)].float()
        self.vocabs = {**self.vocabs, "pretrained": extra}
        self.config = replace(self.config, pretrained_dim=dim)
        self.featurizer = self._featurizer()
        self.input.add_pretrained(table)
        self.input.start_from_pretrained([row for row, _ in found if row < len(self.word_vocab)])
        return len(found)  # (the training words' among them: len(found) - len(extra))

    def load_transformer(self) -> str:
        """The pretrained weights of the transformer ``config.transformer`` names (the architecture
        came from its files), for a model about to be trained; a note saying which ("" without one)."""
        if self.transformer is None:
            return ""
        from tagger.modules.transformer import pretrained_state, resolve

        source = resolve(self.config.transformer)
        self.transformer.model.load_state_dict(pretrained_state(source))
        return f"transformer {self.config.transformer} loaded ({sum(p.numel() for p in self.transformer.model.parameters()):,} " \
               f"weights, {'fine-tuned' if self.config.transformer_tune else 'frozen'})"

    def pretrained_parameters(self) -> list[nn.Parameter]:
        """The transformer's own weights (trained at the encoder's learning rate; none when frozen)."""
        if self.transformer is None or not self.config.transformer_tune:
            return []
        return list(self.transformer.model.parameters())

    def bootstrap(self, source: Any, gates: list[str] | None = None) -> None:
        """Not a capability of this family (``can_bootstrap`` is False)."""
        raise TaggerError(f"model {self.name} cannot be bootstrapped")

    @classmethod
    def with_encoder(cls, config: TaggerConfig, vocabs: dict[str, list[str]], source: Any) -> "SkipLSTMTagger":
        """Not a capability of this family (``can_take_encoder`` is False)."""
        raise TaggerError(f"model {cls.name} takes no encoder from another model (--encoder-from is for parsers)")

