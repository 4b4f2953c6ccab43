"""The tag dictionary (tagger.corpus.lexicon): what it keeps, how it corrects a label, how its
least count is chosen on dev, and a tagger that decodes with it (torch and the torch-free runtime)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tagger.corpus.lexicon import CHOICES, TagLexicon, build, choose
from tagger.corpus.vocab import Vocab

WORDS = Vocab(["the", "run", "dog", "xyz"])  # rows: <pad> 0, <unk> 1, the 2, run 3, dog 4, xyz 5
LABELS = Vocab(["DET", "NOUN", "VERB"], specials=("<pad>",))  # DET 1, NOUN 2, VERB 3
PAIRS = Counter({("the", "DET"): 9, ("run", "VERB"): 2, ("run", "NOUN"): 1, ("dog", "NOUN"): 1, ("xyz", "SYM"): 4})


def test_build_keeps_each_words_count_and_labels_and_leaves_the_rest_free():
    entries = build(PAIRS, WORDS, LABELS)
    assert entries == ["", "", "9 1", "3 2 3", "1 2", ""]  # xyz's SYM is no label of the model: any label
    lexicon = TagLexicon(entries, len(LABELS), least=2)
    assert len(lexicon) == 2 and lexicon.set_of_word.tolist() == [0, 0, 1, 2, 0, 0]  # dog seen once: free
    assert lexicon.allowed.tolist() == [[True] * 4, [False, True, False, False], [False, False, True, True]]
    with pytest.raises(ValueError, match="names a label"):
        TagLexicon(["", "", "3 7"], 4)


def test_fix_moves_a_label_the_word_never_had_to_its_best_allowed_one():
    lexicon = TagLexicon(build(PAIRS, WORDS, LABELS), len(LABELS), least=1)
    scores = np.array([[0, 0.1, 0.9, 0.0],   # the: NOUN best, DET allowed
                       [0, 0.5, 0.2, 0.3],   # run: DET best, NOUN/VERB allowed → VERB
                       [0, 0.9, 0.05, 0.05],  # <unk>: free
                       [0, 0.9, 0.05, 0.05],  # a row past the vocabulary (a pretrained table's word): free
                       [0, 0.2, 0.7, 0.1]], dtype=np.float32)  # dog: NOUN best and allowed
    words = np.array([2, 3, 1, 99, 4])
    best = scores.argmax(-1)
    assert lexicon.fix(scores, best, words) is best and best.tolist() == [1, 3, 1, 1, 2]


def test_the_least_count_is_chosen_on_dev_with_none_unless_it_gains():
    entries = build(PAIRS, WORDS, LABELS)
    words = np.array([3, 3, 4])
    scores = np.array([[0, 0.6, 0.3, 0.1], [0, 0.6, 0.1, 0.3], [0, 0.6, 0.3, 0.1]], dtype=np.float32)
    least, right = choose(entries, scores, words, np.array([2, 3, 2]))  # the model gets none; the dictionary all
    assert set(right) == set(CHOICES) and right[0] == 0 and right[1] == 3 and right[2] == 2 and right[3] == 2
    assert least == 1  # dog (seen once) needs 1; run (3 times) is fixed from 1, 2 or 3
    least, right = choose(entries, scores, words, np.array([1, 1, 1]))  # the model right where the dictionary is not
    assert least == 0 and right[0] == 3
    least, _ = choose(entries, scores[:2], words[:2], np.array([2, 3]))  # 1, 2 and 3 tie: the largest
    assert least == 3


def test_a_tagger_chooses_its_dictionary_on_dev_and_decodes_and_saves_with_it(tmp_path):
    import torch

    from tagger import model_file
    from tagger.corpus.records import Sentence
    from tests.test_tagger import toy_model

    train = [Sentence("the dog runs".split(), {"upos": ["DET", "NOUN", "VERB"]}),
             Sentence("a dog barks".split(), {"upos": ["DET", "NOUN", "VERB"]})] * 2
    torch.manual_seed(0)
    model = toy_model(train, max_epochs=1).eval()  # untrained: its labels are near chance
    assert model.config.lexicon == "auto" and model.vocabs["lexicon:tags"][2:] and not model.lexicons  # none until tuned
    labels = model.labels["tags"]
    assert model.vocabs["lexicon:tags"][model.word_vocab.index("dog")] == f"4 {labels.index('NOUN')}"
    chosen = model.tune_decoding(train)
    assert chosen["upos"]["lexicon"] == 2 and chosen["upos"]["dev_right"]["2"] == 12  # every word seen at least twice
    assert model.vocabs["lexicon_min:tags"] == ["2"] and model.decode(model.collate(train)) == [s.column("upos") for s in train]
    probs = model.distribution(model.collate(train[:1], with_gold=False))[0]
    assert probs[0, labels.index("NOUN")] == 0 and probs[1, labels.index("NOUN")] == 1.0  # --top-k's, the same
    unseen = Sentence(["the", "cat", "runs"], {})
    assert len(model.decode(model.collate([unseen], with_gold=False))[0]) == 3  # an unseen word may have any label
    path = tmp_path / "lexicon.tagger"
    model_file.save(path, model, {})
    loaded, _ = model_file.load(path)
    assert loaded.lexicons["tags"] == model.lexicons["tags"]
    off = toy_model(train, max_epochs=1, lexicon=0)
    assert "lexicon:tags" not in off.vocabs and off.tune_decoding(train) == {}
    fixed = toy_model(train, max_epochs=1, lexicon=2)
    assert fixed.lexicons["tags"].least == 2 and fixed.tune_decoding(train) == {}  # a count given: kept


def test_the_summary_line_says_which_columns_decode_with_a_dictionary():
    from tagger.cli.train import summary_line

    summary = {"dev_metric": "mean accuracy", "best_dev": 91.5, "dev_held_out": False, "best_epoch": 4, "epochs": 5,
               "updates": 50, "seconds": 12, "train_tokens_per_second": 900, "model": "m.tagger",
               "decoding": {"upos": {"lexicon": 2}, "xpos": {"lexicon": 0}, "feats": {"lexicon": 1}}}
    line = summary_line(summary)
    assert "best dev mean accuracy 91.50 (with a tag dictionary for upos of words seen 2 times, " \
           "feats of words seen 1 time or more) at epoch 4;" in line
    assert "tag dictionary" not in summary_line({**summary, "decoding": {"upos": {"lexicon": 0}}})
