"""System tokenisation scored as the CoNLL 2018 shared task scores it (tagger/evaluation/aligned.py).

The official scorer (``../shared/tools/conll18_ud_eval.py``, imported from where it lies) is the
oracle: every score must agree with it to 0.01 on EWT dev with a perturbed tokenisation and on a
hand-written French file with multiword tokens (``au`` = ``à le``, ``du`` = ``de le``).
"""

from __future__ import annotations

import importlib.util
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tagger.errors import TaggerError
from tagger.evaluation.aligned import AlignedMetric, F1Metric, align, document, score_aligned
from tagger.formats import read_corpus
from tagger.scoring import evaluate_files
from tests.conftest import EWT, SHARED
from tests.helpers import assert_one_line_error, invoke

FIXTURES = Path(__file__).parent / "fixtures"
FR_GOLD, FR_SYSTEM = FIXTURES / "fr-mwt-gold.conllu", FIXTURES / "fr-mwt-system.conllu"
SCORER = SHARED.parent / "tools" / "conll18_ud_eval.py"
EWT_DEV = EWT / "en_ewt-ud-dev.conllu"


@pytest.fixture(scope="module")
def official():
    """The official scorer, imported from ../shared/tools (skipped where it is absent)."""
    if not SCORER.exists():
        pytest.skip("no official CoNLL 2018 scorer in ../shared/tools")
    spec = importlib.util.spec_from_file_location("conll18_ud_eval", SCORER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_agrees(official, gold: Path, system: Path) -> AlignedMetric:
    """Our scores of ``system`` (via ``evaluate_files``) equal the official scorer's, all of them."""
    theirs = official.evaluate(official.load_conllu_file(str(gold)), official.load_conllu_file(str(system)))
    ours = evaluate_files(gold, system).aligned
    assert ours is not None
    assert set(ours.scores) == set(theirs)  # all 13, as the official prints them
    for name, metric in ours.scores.items():
        reference = theirs[name]
        for ours_value, their_value in ((metric.precision, reference.precision), (metric.recall, reference.recall),
                                        (metric.f1, reference.f1)):
            assert abs(100 * ours_value - 100 * their_value) < 0.01, (name, metric.to_dict())
        assert (metric.correct, metric.gold, metric.predicted) == (
            reference.correct, reference.gold_total, reference.system_total), name
    return ours


# --- a perturbed tokenisation of a real treebank -------------------------------------------------


@dataclass(eq=False)
class Word:
    form: str
    cols: list[str]  # LEMMA UPOS XPOS FEATS
    head: "Word | None"
    deprel: str


@dataclass(eq=False)
class Token:
    form: str
    words: list[Word] = field(default_factory=list)


def parse(path: Path) -> list[list[Token]]:
    """Sentences of tokens of words, heads as references (empty nodes left out)."""
    sentences = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        rows = [line.split("\t") for line in block.splitlines() if line and not line.startswith("#")]
        if not rows:
            continue
        tokens, words, heads, last = [], [], [], 0
        for row in rows:
            if "." in row[0]:
                continue
            if "-" in row[0]:
                tokens.append(Token(row[1]))
                last = int(row[0].split("-")[1])
                continue
            word = Word(row[1], row[2:6], None, row[7])
            if int(row[0]) > last:
                tokens.append(Token(row[1]))
            tokens[-1].words.append(word)
            words.append(word)
            heads.append(int(row[6]))
        for word, head in zip(words, heads):
            word.head = words[head - 1] if head else None
        sentences.append(tokens)
    return sentences


def redirect(sentence: list[Token], old: Word, new: Word) -> None:
    """Words headed by ``old`` are headed by ``new`` (``old`` is gone)."""
    for token in sentence:
        for word in token.words:
            if word.head is old:
                word.head = new.head if word is new else new


def perturb(sentences: list[list[Token]], rng: random.Random) -> list[list[Token]]:
    """Merge and split tokens, write multiword tokens as one word and words as multiword tokens,
    move sentence boundaries, corrupt tags, relations and heads."""
    out: list[list[Token]] = []
    for sentence in sentences:
        tokens: list[Token] = []
        for token in sentence:
            r = rng.random()
            single = len(token.words) == 1
            if r < 0.03 and tokens and len(tokens[-1].words) == 1 and single:  # merged with the previous token
                first, second = tokens[-1].words[0], token.words[0]
                first.form += second.form
                redirect(sentence, second, first)
                tokens[-1].form = first.form
                continue
            if r < 0.06 and single and len(token.form) > 1:  # split in two tokens
                cut = rng.randrange(1, len(token.form))
                word = token.words[0]
                rest = Word(word.form[cut:], list(word.cols), word, "compound")
                word.form = token.form = token.form[:cut]
                tokens += [token, Token(rest.form, [rest])]
                continue
            if r < 0.09 and not single:  # a multiword token written as one word
                inside = set(map(id, token.words))
                keep = next((w for w in token.words if w.head is None or id(w.head) not in inside), token.words[0])
                for word in token.words:
                    if word is not keep:
                        redirect(sentence, word, keep)
                keep.form = token.form
                token.words = [keep]
            elif r < 0.12 and single and len(token.form) > 2:  # a word written as a multiword token
                word = token.words[0]
                cut = rng.randrange(1, len(token.form))
                extra = Word(token.form[cut:].lower(), ["_", "PART", "RP", "_"], word, "compound:prt")
                word.form = token.form[:cut]
                token.words.append(extra)
            tokens.append(token)
        for token in tokens:
            for word in token.words:
                if rng.random() < 0.05:
                    word.cols[1] = rng.choice(["NOUN", "VERB", "ADJ", "X"])
                if rng.random() < 0.05:
                    word.cols[3] = rng.choice(["_", "Number=Sing", "Number=Plur|Foo=Bar"])
                if rng.random() < 0.05:
                    word.cols[0] = word.cols[0].upper()
                if rng.random() < 0.05:
                    word.deprel = rng.choice(["nmod", "obl:tmod", "case", "det", "advmod"])
                if rng.random() < 0.05:
                    word.head = rng.choice([w for t in tokens for w in t.words])
        if out and rng.random() < 0.05:  # joined to the sentence before
            out[-1].extend(tokens)
        elif len(tokens) > 3 and rng.random() < 0.05:  # split in two sentences
            cut = rng.randrange(1, len(tokens))
            out += [tokens[:cut], tokens[cut:]]
        else:
            out.append(tokens)
    return out


def write(sentences: list[list[Token]], path: Path) -> None:
    """CoNLL-U with one root per sentence and no cycles (as the official scorer requires)."""
    blocks = []
    for tokens in sentences:
        words = [w for t in tokens for w in t.words]
        index = {id(w): i for i, w in enumerate(words, 1)}
        heads = {id(w): (w.head if w.head is not None and id(w.head) in index else None) for w in words}
        roots = [w for w in words if heads[id(w)] is None]
        root = roots[0] if roots else words[0]
        for w in words:
            if w is not root and heads[id(w)] is None:
                heads[id(w)] = root
        heads[id(root)] = None
        for w in words:  # break cycles: a word whose chain of heads comes back to it hangs from the root
            seen, at = set(), w
            while at is not None and id(at) not in seen:
                seen.add(id(at))
                at = heads[id(at)]
            if at is not None:
                heads[id(w)] = root
        lines = []
        for token in tokens:
            first = index[id(token.words[0])]
            if len(token.words) > 1:
                lines.append(f"{first}-{first + len(token.words) - 1}\t{token.form}" + "\t_" * 8)
            for w in token.words:
                head = heads[id(w)]
                lines.append("\t".join([str(index[id(w)]), w.form, *w.cols, str(index[id(head)] if head else 0),
                                        "root" if head is None else w.deprel, "_", "_"]))
        blocks.append("\n".join(lines) + "\n\n")
    path.write_text("".join(blocks), encoding="utf-8")


@pytest.fixture(scope="module")
def perturbed_ewt(tmp_path_factory) -> Path:
    if not EWT_DEV.exists():
        pytest.skip("no UD EWT dev in ../shared/data")
    path = tmp_path_factory.mktemp("aligned") / "ewt-dev-system.conllu"
    write(perturb(parse(EWT_DEV), random.Random(19)), path)
    return path


def test_perturbed_ewt_dev_agrees_with_the_official_scorer(official, perturbed_ewt):
    ours = assert_agrees(official, EWT_DEV, perturbed_ewt)
    # The perturbation did what it says: every score is down, but far from nothing.
    for name in ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "LAS", "MLAS"):
        assert 30 < 100 * ours[name].f1 < 99.5, (name, ours[name].to_dict())
    system = read_corpus(perturbed_ewt)
    ranges = sum(1 for s in system for line in s.raw["lines"] if line.split("\t", 1)[0].count("-"))
    assert ranges > 300  # EWT dev has 359; some went, others came


def test_french_multiword_tokens_agree_with_the_official_scorer(official):
    ours = assert_agrees(official, FR_GOLD, FR_SYSTEM)
    assert ours["XPOS"].correct == ours["Words"].correct  # neither has XPOS: each aligned word's '_' right, as officially
    # 26 gold tokens, 33 words; the system's 24 tokens and 30 words; 1 of the 4 sentences kept.
    counts = (ours["Tokens"].gold, ours["Tokens"].predicted, ours["Words"].gold, ours["Words"].predicted)
    assert counts == (26, 24, 33, 30)
    assert ours["Sentences"].correct == 1
    assert ours.main == "LAS" and ours.score == ours["LAS"].f1


def test_identical_files_score_100(official):
    for path in (FR_GOLD, *([EWT_DEV] if EWT_DEV.exists() else [])):
        ours = evaluate_files(path, path, aligned=True).aligned
        assert ours is not None and all(m.f1 == 1.0 for m in ours.scores.values()), path
    reference = official.evaluate(*(official.load_conllu_file(str(FR_GOLD)),) * 2)
    assert all(score.f1 == 1.0 for score in reference.values())


def test_same_words_keep_the_gold_tokenisation_scores():
    """Files with the same words are scored as before (token accuracy, UAS/LAS); no aligned scores."""
    result = evaluate_files(FR_GOLD, FR_GOLD)
    assert result.aligned is None and result.tagging is not None and result.parsing is not None
    assert result.column == "upos"


def test_multiword_alignment_by_forms():
    """``du`` as one word against ``de le``: only the form both have aligns; a plain word split
    into a multiword token on the other side aligns its pieces by form."""
    gold = document(read_corpus(FR_GOLD), "gold")
    assert gold.text.startswith("Ilvaaumarchéduvillage.")
    assert [w.form for w in gold.words[2:4]] == ["à", "le"] and gold.words[2].multiword
    assert (gold.words[2].start, gold.words[2].end) == (4, 6) == gold.tokens[2]
    system = document(read_corpus(FR_SYSTEM), "system")
    pairs = {(gold.words[g].form, system.words[s].form) for g, s in align(gold.words, system.words)}
    assert ("de", "de") in pairs and ("le", "les") not in pairs  # du = de le against de les
    assert not any("au" in pair for pair in pairs)  # au as one word aligns with neither à nor le
    assert ("cinéma", "cinéma") in pairs and (".", ".") in pairs  # cinéma. = cinéma . against two words


def test_metrics_add_and_compare():
    a, b = F1Metric(10, 8, 6, 7), F1Metric(5, 5, 5, 5)
    total = a + b
    assert (total.gold, total.predicted, total.correct, total.aligned) == (15, 13, 11, 12)
    assert total.f1 == pytest.approx(22 / 28) and total.precision == pytest.approx(11 / 13)
    assert b > a and sum([a, b]).correct == 11
    both = score_aligned(read_corpus(FR_GOLD), read_corpus(FR_SYSTEM))
    doubled = both + both
    assert doubled["Words"].correct == 2 * both["Words"].correct and doubled.score == pytest.approx(both.score)
    assert doubled.to_dict()["main"] == "LAS"


def test_text_mismatch_is_one_line_naming_the_files(tmp_path):
    changed = tmp_path / "changed.conllu"
    changed.write_text(FR_SYSTEM.read_text(encoding="utf-8").replace("\tlivre\tlivre", "\tlivres\tlivre"),
                       encoding="utf-8")
    with pytest.raises(TaggerError) as caught:
        evaluate_files(FR_GOLD, changed)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{changed}:17: ")  # the token livres
    assert (f"differs from the gold file's at character 37, in the token 'livres' ('aux' at {FR_GOLD}:23): "
            "'sauxenfants.Ellepens' here, 'auxenfants.Ellepense' in the gold file") in message
    assert_one_line_error(invoke("evaluate", "--gold", FR_GOLD, "--pred", changed), "differs from the gold file's")


def test_a_file_that_ends_early_or_goes_on(tmp_path):
    gold_text = FR_GOLD.read_text(encoding="utf-8")
    short = tmp_path / "short.conllu"
    short.write_text(gold_text.split("\n\n")[0] + "\n\n", encoding="utf-8")
    with pytest.raises(TaggerError, match=rf"short.conllu:13: the predicted file ends after 1 sentence, at character "
                                          rf"23 of the text, but the gold file goes on: 'Jeparle.*' at {FR_GOLD}:17$"):
        evaluate_files(FR_GOLD, short)
    with pytest.raises(TaggerError, match=rf"^{FR_GOLD}:17: the predicted file goes on after the end of the gold "
                                          rf"file's text \(character 23, after 1 sentence in {short}\): 'Jeparle"):
        evaluate_files(short, FR_GOLD)


def test_white_space_only_token_is_an_error(tmp_path):
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tIl\til\tPRON\t_\t_\t0\troot\t_\t_\n2\t\u00a0\t_\tX\t_\t_\t1\tdep\t_\t_\n\n", encoding="utf-8")
    with pytest.raises(TaggerError, match=r"bad.conllu:2: a token's form is only white space"):
        evaluate_files(FR_GOLD, bad)


def test_aligned_options_go_with_two_files():
    result = invoke("evaluate", "--model", "x.tagger", FR_GOLD, "--aligned")
    assert result.exit_code == 2 and "--aligned/--gold-tokens go with --gold and --pred" in result.output


def test_cli_table_and_json():
    result = invoke("evaluate", "--gold", FR_GOLD, "--pred", FR_SYSTEM, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["column"] == "upos,xpos,feats,lemma" and data["aligned"]["main"] == "LAS"
    assert round(data["aligned"]["LAS"]["f1"], 2) == 63.49 and round(data["aligned"]["Tokens"]["f1"], 2) == 88.0
    table = invoke("evaluate", "--gold", FR_GOLD, "--pred", FR_SYSTEM)
    assert table.exit_code == 0 and "MLAS" in table.stdout and "63.49" in table.stdout
    assert_one_line_error(invoke("evaluate", "--gold", FR_GOLD, "--pred", FR_SYSTEM, "--gold-tokens"), "word 3 is 'au'")


def test_python_score_is_the_cli_json():
    import tagger

    data = json.loads(invoke("evaluate", "--gold", FR_GOLD, "--pred", FR_SYSTEM, "--json").stdout)
    scored = tagger.score(FR_GOLD, FR_SYSTEM)
    assert scored == {k: v for k, v in data.items() if k not in ("gold", "pred")}
    assert round(scored["aligned"]["LAS"]["f1"], 2) == 63.49
    with pytest.raises(TaggerError, match="word 3 is 'au'"):
        tagger.score(FR_GOLD, FR_SYSTEM, aligned=False)


def test_tokens_only_output_scores_segmentation(tmp_path):
    """A tokenizer's output (forms only) gets Tokens, Sentences and Words, nothing it did not predict."""
    bare = tmp_path / "tokens.conllu"
    lines = []
    for line in FR_SYSTEM.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        lines.append("\t".join(cols[:2] + ["_"] * 8) if len(cols) == 10 else line)
    bare.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ours = evaluate_files(FR_GOLD, bare).aligned
    full = evaluate_files(FR_GOLD, FR_SYSTEM).aligned
    assert list(ours.scores) == ["Tokens", "Sentences", "Words"] and ours.main == "Words"
    assert all(ours[n].to_dict() == full[n].to_dict() for n in ours.scores)


def test_a_text_mismatch_shows_the_text_as_the_files_have_it():
    """A PTB word ``1\\/2`` is shown with its one backslash (repr doubled it), control characters
    as repr shows them."""
    from tagger.evaluation.aligned import _shown

    assert _shown("1\\/2") == "'1\\/2'" and _shown("a\tb") == "'a\\tb'"


def test_what_the_official_scorer_refuses_or_rounds_is_refused_and_rounded_alike(tmp_path):
    """A cycle or two roots, a multiword token written otherwise than the gold's (other text), as
    the official scorer refuses them; scores in percent as it computes them (``100 * (c / n)``)."""
    gold = tmp_path / "gold.conllu"
    gold.write_text("1-2\tdo\t_\t_\t_\t_\t_\t_\t_\t_\n1\tde\tde\tADP\t_\t_\t3\tcase\t_\t_\n2\to\to\tDET\t_\t_\t3\tdet\t_\t_\n"
                    "3\tgato\tgato\tNOUN\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    text = gold.read_text(encoding="utf-8")
    for name, pred, message in (
            ("cycle", text.replace("3\tcase", "2\tcase").replace("3\tdet", "1\tdet"), "words 1, 2 are each other's heads"),
            ("roots", text.replace("3\tdet", "0\tdet"), "2 words hang from the root"),
            ("mwt", text.replace("1-2\tdo", "1-2\tdu"), "differs from the gold file's")):
        (tmp_path / f"{name}.conllu").write_text(pred, encoding="utf-8")
        with pytest.raises(TaggerError, match=message):
            evaluate_files(gold, tmp_path / f"{name}.conllu")
    # CoNLL-X treebanks hang several words from the root (the CoNLL-X shared task scored them): scored
    conllx = tmp_path / "roots.conllx"
    conllx.write_text("1\tIk\tik\tPron\tPron\t_\t2\tsu\t_\t_\n2\tga\tga\tV\tV\t_\t0\tROOT\t_\t_\n"
                      "3\t.\t.\tPunc\tPunc\t_\t0\tpunct\t_\t_\n\n", encoding="utf-8")
    assert evaluate_files(conllx, conllx).metrics["parsing"].las == 1.0
    with pytest.raises(TaggerError, match="words 1, 2 are each other's heads"):  # a cycle still is no tree
        looped = tmp_path / "loop.conllx"
        looped.write_text(conllx.read_text(encoding="utf-8").replace("\t0\tROOT", "\t1\tROOT"), encoding="utf-8")
        evaluate_files(conllx, looped)
    assert F1Metric(160, 160, 23, 160).to_dict()["precision"] == 100 * (23 / 160) != 100.0 * 23 / 160  # 14.37, not 14.38
    assert F1Metric(10, 0, 0, 0).to_dict() == {"gold": 10, "predicted": 0, "correct": 0, "aligned": 0, "precision": 0.0,
                                                    "recall": 0.0, "f1": 0.0, "aligned_accuracy": 0.0}


def test_the_same_text_in_another_unicode_form_is_said_so(tmp_path):
    """French in NFD (é as e + U+0301) against the NFC gold: the text differs, as the official
    scorer would say, and the error says why."""
    import unicodedata

    decomposed = tmp_path / "nfd.conllu"
    decomposed.write_text(unicodedata.normalize("NFD", FR_SYSTEM.read_text(encoding="utf-8")), encoding="utf-8")
    assert decomposed.read_text(encoding="utf-8") != FR_SYSTEM.read_text(encoding="utf-8")  # it has accents
    with pytest.raises(TaggerError, match="another Unicode form: composed NFC, decomposed NFD"):
        evaluate_files(FR_GOLD, decomposed)
