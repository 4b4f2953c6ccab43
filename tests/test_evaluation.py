"""Metric objects and scoring functions: hand-computed cases, and agreement with the CoNLL 2018
official scorer's UAS/LAS definition on a perturbed copy of EWT dev."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from tagger.corpus.records import Sentence
from tagger import formats
from tagger.errors import TaggerError
from tagger.evaluation import (
    AttachmentMetric,
    MultiTagMetric,
    TagMetric,
    is_punct,
    punct_flags,
    render_table,
    score,
    score_parsing,
    score_tagging,
    to_json,
    universal_label,
)
from tagger.evaluation.metrics import is_punct_form, punct_rule

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EWT_DEV = DATA / "ud-english-ewt" / "en_ewt-ud-dev.conllu"


def sent(words: str, source: str = "gold.txt", line: int = 1, **columns: str | list) -> Sentence:
    """A sentence from space-separated words and columns (strings split on spaces, or lists)."""
    cols = {name: (value.split() if isinstance(value, str) else list(value)) for name, value in columns.items()}
    return Sentence(words.split(), cols, source=source, line=line)


# --- TagMetric -------------------------------------------------------------------------------


def test_tag_metric_hand_computed():
    m = TagMetric()
    m.update("a b c d".split(), "N V N D".split(), "N N N D".split(), train_words={"a", "b"})
    m.update("e f".split(), "V D".split(), "V D".split(), train_words={"a", "b"})
    assert (m.tokens, m.correct) == (6, 5)
    assert m.accuracy == pytest.approx(5 / 6)
    assert m.score == m.accuracy
    # unseen: c, d, e, f (all right)
    assert (m.unseen_tokens, m.unseen_correct) == (4, 4)
    assert m.unseen_accuracy == 1.0
    assert (m.sentences, m.sentences_correct) == (2, 1)
    assert m.sentence_accuracy == 0.5
    per_tag = m.per_tag()
    # N: gold 2, predicted 3, correct 2; V: gold 2, predicted 1, correct 1; D: 2/2/2
    assert (per_tag["N"].gold, per_tag["N"].predicted, per_tag["N"].correct) == (2, 3, 2)
    assert per_tag["N"].precision == pytest.approx(2 / 3)
    assert per_tag["N"].recall == 1.0
    assert per_tag["N"].f1 == pytest.approx(0.8)
    assert per_tag["V"].precision == 1.0 and per_tag["V"].recall == 0.5
    assert per_tag["V"].f1 == pytest.approx(2 / 3)
    assert per_tag["D"].f1 == 1.0
    assert m.most_confused() == [("V", "N", 1)]


def test_tag_metric_unseen_only_when_train_words_given():
    m = TagMetric()
    m.update(["a"], ["N"], ["V"])
    assert m.unseen_accuracy is None and m.to_dict()["unseen"] is None
    m.update(["a"], ["N"], ["V"], train_words=set())
    assert m.unseen_accuracy == 0.0
    assert m.to_dict()["unseen"] == {"tokens": 1, "correct": 0, "accuracy": 0.0}


def test_tag_metric_add_and_order():
    a, b = TagMetric(), TagMetric()
    a.update("x y".split(), "N V".split(), "N V".split())
    b.update("x y".split(), "N V".split(), "N N".split(), train_words={"x"})
    total = a + b
    assert (total.tokens, total.correct, total.sentences, total.sentences_correct) == (4, 3, 2, 1)
    assert total.tracks_unseen and (total.unseen_tokens, total.unseen_correct) == (1, 0)
    assert total.confusions == {("V", "N"): 1}
    # operands unchanged
    assert (a.tokens, b.tokens) == (2, 2) and a.confusions == {}
    assert b < a and a > b and a >= a and b <= a
    assert max([b, a]) is a
    assert sum([a, b]).to_dict() == total.to_dict()
    with pytest.raises(TypeError):
        _ = a < MultiTagMetric()


def test_tag_metric_empty_and_json():
    m = TagMetric()
    assert m.score == 0.0
    d = m.to_dict()
    assert d["accuracy"] is None and d["tokens"] == 0
    m.update("a b".split(), "N V".split(), "N N".split())
    parsed = json.loads(to_json(m))
    assert parsed["accuracy"] == 50.0
    assert parsed["confusions"] == [{"gold": "V", "pred": "N", "count": 1}]
    assert parsed["per_tag"]["N"] == {
        "gold": 1, "predicted": 2, "correct": 1, "precision": 50.0, "recall": 100.0,
        "f1": pytest.approx(200 / 3),
    }


def test_tag_metric_length_mismatch_is_a_programming_error():
    with pytest.raises(ValueError):
        TagMetric().update(["a"], ["N"], ["N", "V"])


# --- MultiTagMetric --------------------------------------------------------------------------


def test_multitag_metric_hand_computed():
    m = MultiTagMetric()
    m.update(["A", "B", "C"], [{"A", "B"}, {"C"}, {"C", "D", "E"}])
    assert m.accuracy == pytest.approx(2 / 3) and m.score == m.accuracy
    assert m.tags_per_word == 2.0
    assert m.sentence_accuracy == 0.0
    n = MultiTagMetric()
    n.update(["A"], [["A"]])
    total = m + n
    assert (total.tokens, total.correct, total.tags, total.sentences_correct) == (4, 3, 7, 1)
    assert total > m
    assert json.loads(to_json(total))["tags_per_word"] == 1.75


# --- AttachmentMetric ------------------------------------------------------------------------


def test_is_punct_and_universal_label():
    assert is_punct("PUNCT", "NN")
    assert not is_punct("NOUN", ",")  # UPOS decides when present
    for tag in ("``", "''", ",", ".", ":"):
        assert is_punct("_", tag) and is_punct(None, tag)
    assert not is_punct("_", "-LRB-") and not is_punct("_", "NN")
    assert universal_label("nmod:poss") == "nmod" and universal_label("root") == "root"
    assert universal_label("acl:relcl:x") == "acl"


def test_attachment_metric_hand_computed():
    m = AttachmentMetric()
    # The dog barked .
    #  gold: 2 det, 3 nsubj, 0 root, 3 punct
    #  pred: 2 det (ok), 3 nsubj:pass (ok: subtype ignored), 0 root (ok), 2 punct (head wrong)
    m.update([2, 3, 0, 3], ["det", "nsubj", "root", "punct"], [2, 3, 0, 2], ["det", "nsubj:pass", "root", "punct"],
             [False, False, False, True])
    # second sentence: one word attached right with the wrong label, one with a wrong head
    m.update([0, 1], ["root", "obj"], [0, 0], ["nsubj", "obj"], [False, False])
    assert (m.all.words, m.all.heads, m.all.labels, m.all.both) == (6, 4, 5, 3)
    assert m.uas == pytest.approx(4 / 6) and m.las == pytest.approx(3 / 6)
    assert m.label_accuracy == pytest.approx(5 / 6)
    assert (m.no_punct.words, m.no_punct.heads, m.no_punct.both) == (5, 4, 3)
    assert m.uas_no_punct == pytest.approx(4 / 5) and m.las_no_punct == pytest.approx(3 / 5)
    assert m.score == m.las_no_punct
    labels = m.per_label()
    assert (labels["root"].gold, labels["root"].predicted, labels["root"].correct) == (2, 1, 1)
    assert (labels["nsubj"].gold, labels["nsubj"].predicted, labels["nsubj"].correct) == (1, 2, 1)
    assert (labels["obj"].gold, labels["obj"].predicted, labels["obj"].correct) == (1, 1, 0)
    assert labels["punct"].correct == 0
    d = json.loads(to_json(m))
    assert d["all_words"]["uas"] == pytest.approx(100 * 4 / 6)
    assert d["no_punct"]["las_correct"] == 3
    assert "nsubj:pass" not in d["per_label"]


def test_nonprojective_arcs_are_counted():
    # "A hearing is scheduled on the issue today": issue <- hearing crosses scheduled -> is
    gold = [2, 4, 4, 0, 7, 7, 2, 4]
    rels = "det nsubj:pass aux:pass root case det nmod obl:tmod".split()
    m = AttachmentMetric()
    m.update(gold, rels, gold, rels)  # found
    m.update(gold, rels, [2, 4, 4, 0, 7, 7, 4, 4], rels)  # projective parse: issue below scheduled
    m.update(gold, rels, gold, rels[:6] + ["obl"] + rels[7:])  # the head found, not the label
    crossed = [2, 4, 4, 0, 7, 7, 2, 5]  # a wrong non-projective arc too: today <- on, across issue
    m.update(gold, rels, crossed, rels)
    np = m.nonprojective
    assert (np.gold, np.gold_heads, np.gold_both, np.predicted, np.predicted_heads) == (4, 3, 2, 4, 3)
    assert np.recall == 3 / 4 and np.labelled_recall == 2 / 4 and np.precision == 3 / 4
    assert m.to_dict()["nonprojective"] == {"gold": 4, "predicted": 4, "recall_correct": 3, "labelled_recall_correct": 2,
                                            "precision_correct": 3, "recall": 75.0, "labelled_recall": 50.0,
                                            "precision": 75.0}
    assert (m + m).nonprojective.gold == 8 and m.nonprojective.gold == 4
    empty = AttachmentMetric()
    empty.update([2, 0], ["det", "root"], [0, 1], ["root", "det"])
    assert empty.nonprojective.gold == 0 and empty.to_dict()["nonprojective"]["recall"] is None
    # predicted heads that are no tree (missing, a cycle) are counted, not refused
    empty.update([2, 0, 2], ["a", "root", "b"], [-1, 3, 2], ["a", "b", "c"])
    assert empty.nonprojective.predicted == 0


def test_attachment_metric_add_and_order():
    a, b = AttachmentMetric(), AttachmentMetric()
    a.update([0], ["root"], [0], ["root"])
    b.update([0, 1], ["root", "obj"], [0, 0], ["root", "root"])
    total = a + b
    assert (total.all.words, total.all.both, total.sentences) == (3, 2, 2)
    assert a.all.words == 1
    assert b < a and sorted([a, b])[-1] is a


# --- scoring sentence streams ----------------------------------------------------------------


def test_score_tagging_and_parsing_on_sentences():
    gold = [
        sent("The dog barked .", line=1, upos="DET NOUN VERB PUNCT", head=[2, 3, 0, 3],
             deprel="det nsubj root punct"),
        sent("Run", line=7, upos="VERB", head=[0], deprel="root"),
    ]
    pred = [
        sent("The dog barked .", "pred.txt", 1, upos="DET VERB VERB PUNCT", head=[2, 3, 0, 2],
             deprel="det nsubj root punct"),
        sent("Run", "pred.txt", 7, upos="NOUN", head=[0], deprel="root"),
    ]
    tagging = score_tagging(gold, pred, "upos", train_words={"The", "dog"})
    assert (tagging.tokens, tagging.correct, tagging.unseen_tokens, tagging.unseen_correct) == (5, 3, 3, 2)
    parsing = score_parsing(iter(gold), iter(pred))
    assert (parsing.all.words, parsing.all.heads, parsing.no_punct.words, parsing.no_punct.heads) == (5, 4, 4, 4)
    both_t, both_p = score(gold, pred, "upos", parse=True)
    assert both_t.to_dict() == score_tagging(gold, pred, "upos").to_dict()
    assert both_p.to_dict() == parsing.to_dict()


def test_missing_predicted_column_counts_as_wrong():
    gold = [sent("a b", upos="X Y")]
    pred = [sent("a b", "pred.txt")]
    assert score_tagging(gold, pred, "upos").correct == 0
    parsing = score_parsing([sent("a b", head=[0, 1], deprel="root dep")], pred)
    assert parsing.all.heads == 0


def test_punctuation_from_ptb_xpos_without_upos():
    gold = [sent("Hi , you .", xpos="UH , PRP .", head=[0, 1, 1, 1], deprel="_ _ _ _")]
    pred = [sent("Hi , you .", "pred.txt", xpos="UH , PRP .", head=[0, 3, 1, 3], deprel="_ _ _ _")]
    parsing = score_parsing(gold, pred)
    assert (parsing.all.words, parsing.all.heads) == (4, 2)
    assert (parsing.no_punct.words, parsing.no_punct.heads) == (2, 2)


def _conllx(rows: str) -> list[Sentence]:
    """A CoNLL-X sentence (as the reader gives it) from rows ``FORM CPOSTAG POSTAG HEAD``."""
    text = "".join(f"{i}\t{form}\t_\t{cpos}\t{pos}\t_\t{head}\tdep\t_\t_\n"
                   for i, (form, cpos, pos, head) in enumerate((row.split() for row in rows.strip().splitlines()), 1))
    return list(formats.read(io.BytesIO((text + "\n").encode()), "conllx"))


def _misattached(sentences: list[Sentence]) -> list[Sentence]:
    """``sentences`` with every head wrong: the root for a word with a head, word 1 for the root."""
    return [Sentence(list(s.words), {**s.columns, "head": [0 if h else 1 for h in s.columns["head"]]},
                     source="pred.conll", line=s.line) for s in sentences]


def _no_punct_words(gold: list[Sentence]) -> list[str]:
    """The words ``score_parsing`` keeps for the no-punctuation scores (right heads: the gold's own)."""
    kept = [w for s in gold for w, p in zip(s.words, punct_flags(s)) if not p]
    parsing = score_parsing(gold, gold)
    assert parsing.no_punct.words == parsing.no_punct.heads == len(kept)
    assert score_parsing(gold, _misattached(gold)).no_punct.heads == 0  # every word counted is scored
    return kept


def test_conllx_punctuation_coarse_tags_by_ptb_postag():
    # CoNLL-X's CPOSTAG is read as UPOS: a coarse tag set of its own (Alpino-like) is not UD's,
    # so the PTB POSTAG decides (Chen & Manning: `` '' , . : only; HYPH and -LRB- are kept).
    gold = _conllx("""What Pron WP 0
                      , Punc , 1
                      - Punc HYPH 1
                      ( Punc -LRB- 1
                      ? Punc . 1""")
    assert _no_punct_words(gold) == ["What", "-", "("]


def test_conllx_punctuation_penn2malt():
    # Penn2Malt: CPOSTAG = POSTAG = the PTB tag, "." and "," included; the same words excluded as
    # the same sentence in the dp format (PTB tags in XPOS, no UPOS).
    gold = _conllx("""Prices NNS NNS 2
                      rose VBD VBD 0
                      , , , 2
                      `` `` `` 2
                      $ $ $ 2
                      5 CD CD 5
                      . . . 2""")
    assert _no_punct_words(gold) == ["Prices", "rose", "$", "5"]
    dp = [sent(" ".join(gold[0].words), xpos=gold[0].columns["xpos"], head=gold[0].columns["head"],
               deprel=gold[0].columns["deprel"])]
    assert punct_flags(dp[0]) == punct_flags(gold[0])


def test_conllx_punctuation_by_form_where_no_tag_set_is_known():
    # Neither UD UPOS nor PTB XPOS: as the CoNLL-X shared task's eval.pl, a word of Unicode
    # punctuation characters only (\p{P}+): "«", "--", "%" are; "$" (a symbol) and "5." are not.
    gold = _conllx("""« Punc Punc 2
                      Zij Pron Pron 0
                      -- Punc Punc 2
                      $ Misc Misc 2
                      % N N 2
                      5. Num Num 2
                      » Punc Punc 2""")
    assert _no_punct_words(gold) == ["Zij", "$", "5."]
    assert [is_punct_form(w) for w in ("«", "--", "%", "。", "$", "+", "5.", "")] == [True] * 4 + [False] * 4


def test_punctuation_rule_is_decided_per_sentence_and_ud_unchanged():
    # UD UPOS decide where they are UD's (the form and XPOS are not looked at); a word without
    # UPOS in such a sentence goes by its PTB XPOS, as before.
    ud = sent("Hi , you ... x", upos="INTJ PUNCT PRON SYM _", xpos="UH , PRP : .")
    assert punct_rule(ud.columns["upos"], ud.columns["xpos"]) == "upos"
    assert punct_flags(ud) == [False, True, False, False, True]
    # one non-UD coarse tag and the sentence is not UD's: all of it by the PTB XPOS
    mixed = sent("Hi , you", upos="INTJ Punc PRON", xpos="UH , PRP")
    assert punct_rule(mixed.columns["upos"], mixed.columns["xpos"]) == "xpos"
    assert punct_flags(mixed) == [False, True, False]
    assert punct_rule(["_", "_"], ["_", "_"]) == "form" and punct_rule([], []) == "form"
    assert is_punct("Punc", ".") and not is_punct("Punc", "HYPH", "-") and is_punct("Punc", "Punc", "-")


@pytest.mark.parametrize(
    "gold_words, pred_words, expected",
    [
        ("a b c", "a x c", "pred.txt:12: word 2 is 'x' but 'b' in the gold file gold.txt:3"),
        ("a b c", "a b", "pred.txt:12: sentence has 2 words, gold has 3; word 3 is the end of the sentence "
                         "but 'c' in the gold file gold.txt:3"),
        ("a b", "a b c", "pred.txt:12: sentence has 3 words, gold has 2; word 3 is 'c' but the end of the "
                         "sentence in the gold file gold.txt:3"),
    ],
)
def test_word_mismatch_names_both_files(gold_words, pred_words, expected):
    with pytest.raises(TaggerError) as info:
        score_tagging([sent(gold_words, line=3)], [sent(pred_words, "pred.txt", 12)], "upos")
    assert str(info.value) == expected
    assert info.value.file == "pred.txt" and info.value.line == 12


def test_sentence_count_mismatch():
    gold = [sent("a", line=1), sent("b", line=3)]
    pred = [sent("a", "pred.txt", 1)]
    with pytest.raises(TaggerError) as info:
        score_parsing(gold, pred)
    assert (info.value.file, info.value.line) == ("pred.txt", 1)
    assert "gold.txt:3" in info.value.message
    with pytest.raises(TaggerError) as info:
        score_parsing([sent("a", line=1)], [sent("a", "pred.txt", 1), sent("b", "pred.txt", 3)])
    assert (info.value.file, info.value.line) == ("pred.txt", 3)
    assert "more sentences than the gold file gold.txt" in info.value.message


def test_render_table_tagging_and_parsing():
    gold = [sent("The dog barked .", upos="DET NOUN VERB PUNCT", head=[2, 3, 0, 3], deprel="det nsubj root punct")]
    pred = [sent("The dog barked .", "p", upos="DET VERB VERB PUNCT", head=[2, 3, 0, 2], deprel="det nsubj root punct")]
    tagging, parsing = score(gold, pred, "upos", parse=True, train_words={"The"})
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None)
    render_table(tagging, console, top=5)
    render_table(parsing, console, top=5)
    multi = MultiTagMetric()
    multi.update(["A"], [{"A", "B"}])
    render_table(multi, console)
    text = out.getvalue()
    for expected in ("token accuracy", "75.00", "unseen-word accuracy", "sentence accuracy", "NOUN", "VERB",
                     "most confused", "UAS", "LAS", "no punct", "75.00", "100.00", "tags per word", "2.000"):
        assert expected in text, expected


# --- agreement with the CoNLL 2018 scorer's definition on EWT dev ----------------------------


def _read_conllu_words(path: Path) -> list[list[list[str]]]:
    """Sentences as lists of 10-column word rows (multiword ranges and empty nodes dropped)."""
    sentences, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if current:
                sentences.append(current)
            current = []
        elif not line.startswith("#"):
            cols = line.split("\t")
            if "-" not in cols[0] and "." not in cols[0]:
                current.append(cols)
    if current:
        sentences.append(current)
    return sentences


def _descendants(heads: list[int], node: int) -> set[int]:
    """Nodes (1-based) below ``node`` in the tree given by ``heads`` (index i-1 -> head of i)."""
    below, frontier = set(), {node}
    while frontier:
        frontier = {i + 1 for i, h in enumerate(heads) if h in frontier} - below
        below |= frontier
    return below


def _perturb_sentence(rows: list[list[str]], counter: int) -> tuple[dict[int, list[str]], int]:
    """Deterministically changed rows (by word id), keeping a valid single-rooted tree."""
    heads = [int(r[6]) for r in rows]
    changed: dict[int, list[str]] = {}
    for i, row in enumerate(rows):
        counter += 1
        cols = list(row)
        word = i + 1
        if counter % 4 == 0:
            cols[3] = "X" if cols[3] != "X" else "NOUN"
        if counter % 6 == 0:
            cols[4] = "NN" if cols[4] != "NN" else "VB"
        if counter % 7 == 3 and heads[i] != 0 and len(rows) > 2:
            # Reattach to the nearest word that is neither itself, its head, nor below it.
            banned = _descendants(heads, word) | {word, heads[i]}
            for distance in range(1, len(rows)):
                options = [word - distance, word + distance]
                new = next((j for j in options if 1 <= j <= len(rows) and j not in banned), None)
                if new is not None:
                    heads[i] = new
                    break
        cols[6] = str(heads[i])
        if counter % 5 == 1:
            variant = (counter // 5) % 4
            label = cols[7]
            if variant == 0:
                cols[7] = label + ":xsub"  # a subtype: still right under LAS
            elif variant == 1:
                cols[7] = universal_label(label)  # subtype dropped: still right
            elif variant == 2:
                cols[7] = "dep" if universal_label(label) != "dep" else "amod"  # wrong
            else:
                cols[7] = "obl:npmod" if universal_label(label) != "obl" else "nmod:poss"  # wrong
        changed[word] = cols
    # heads changed after a word's row was built are patched in
    for word, cols in changed.items():
        cols[6] = str(heads[word - 1])
    return changed, counter


def _write_pred(gold_path: Path, pred_path: Path) -> None:
    """Copy ``gold_path`` line by line, perturbing tags, heads and labels of word lines."""
    out, block, counter = [], [], 0

    def flush() -> None:
        nonlocal counter
        words = [line.split("\t") for line in block if not line.startswith("#")]
        rows = [c for c in words if "-" not in c[0] and "." not in c[0]]
        changed, counter = _perturb_sentence(rows, counter)
        for line in block:
            cols = line.split("\t")
            if not line.startswith("#") and cols[0].isdigit():
                out.append("\t".join(changed[int(cols[0])]))
            else:
                out.append(line)
        out.append("")

    for line in gold_path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            block.append(line)
        elif block:
            flush()
            block = []
    if block:
        flush()
    pred_path.write_text("\n".join(out) + "\n", encoding="utf-8")


def _official_uas_las(gold_path: Path, pred_path: Path) -> tuple[int, int, int]:
    """(words, UAS-correct, LAS-correct) as conll18_ud_eval.py defines them with gold tokens.

    Every syntactic word (integer ID; ranges and empty nodes skipped) is aligned with the
    system word at the same position; UAS counts equal HEAD, LAS equal HEAD and equal DEPREL
    after dropping the ``:subtype``.
    """
    words = uas = las = 0
    gold = [cols for s in _read_conllu_words(gold_path) for cols in s]
    pred = [cols for s in _read_conllu_words(pred_path) for cols in s]
    assert [g[1] for g in gold] == [p[1] for p in pred]
    for g, p in zip(gold, pred):
        words += 1
        if g[6] == p[6]:
            uas += 1
            if g[7].split(":")[0] == p[7].split(":")[0]:
                las += 1
    return words, uas, las


@pytest.fixture(scope="module")
def ewt_pred(tmp_path_factory) -> Path:
    if not EWT_DEV.exists():
        pytest.skip(f"{EWT_DEV} not available")
    pred = tmp_path_factory.mktemp("ewt") / "pred.conllu"
    _write_pred(EWT_DEV, pred)
    return pred


def test_ewt_perturbation_is_a_valid_change(ewt_pred):
    gold, pred = _read_conllu_words(EWT_DEV), _read_conllu_words(ewt_pred)
    assert len(gold) == len(pred) == 2001
    for g, p in zip(gold, pred):
        heads = [int(c[6]) for c in p]
        assert heads.count(0) == 1  # still one root
        root = heads.index(0) + 1
        assert _descendants(heads, root) == set(range(1, len(p) + 1)) - {root}  # no cycles
    words, uas, las = _official_uas_las(EWT_DEV, ewt_pred)
    assert words == 25147
    assert 0.80 < uas / words < 0.95 and 0.70 < las / words < uas / words


def test_attachment_metric_agrees_with_official_definition_on_ewt_dev(ewt_pred):
    words, uas, las = _official_uas_las(EWT_DEV, ewt_pred)
    metric = AttachmentMetric()
    for g, p in zip(_read_conllu_words(EWT_DEV), _read_conllu_words(ewt_pred)):
        metric.update(
            [int(c[6]) for c in g], [c[7] for c in g], [int(c[6]) for c in p], [c[7] for c in p],
            [is_punct(c[3], c[4]) for c in g],
        )
    assert metric.all.words == words
    assert (metric.all.heads, metric.all.both) == (uas, las)
    assert metric.uas == uas / words and metric.las == las / words
    assert metric.no_punct.words == words - sum(c[3] == "PUNCT" for s in _read_conllu_words(EWT_DEV) for c in s)


def test_score_parsing_through_the_reader_agrees_on_ewt_dev(ewt_pred):
    formats = pytest.importorskip("tagger.formats")
    if not hasattr(formats, "read"):
        pytest.skip("tagger.formats.read not available yet")
    words, uas, las = _official_uas_las(EWT_DEV, ewt_pred)
    tagging, parsing = score(formats.read(EWT_DEV, "conllu"), formats.read(ewt_pred, "conllu"), "upos", parse=True)
    assert (parsing.all.words, parsing.all.heads, parsing.all.both) == (words, uas, las)
    gold_upos = [c[3] for s in _read_conllu_words(EWT_DEV) for c in s]
    pred_upos = [c[3] for s in _read_conllu_words(ewt_pred) for c in s]
    assert tagging.correct == sum(g == p for g, p in zip(gold_upos, pred_upos))
    assert tagging.tokens == words


def test_a_word_seen_in_training_is_seen_in_any_unicode_form_or_with_an_invisible_mark():
    import unicodedata

    m = TagMetric()
    seen = {"Việt", "كتاب"}
    m.update([unicodedata.normalize("NFD", "Việt"), "\u200fكتاب", "mới"], ["N", "N", "A"], ["N", "N", "A"], train_words=seen)
    assert (m.unseen_tokens, m.unseen_correct) == (1, 1)  # only mới
