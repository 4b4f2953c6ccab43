"""Frozen tables of pretrained vectors in the families whose words are plain embedding rows
(issue 34): the transition parser's static word features and the seq2seq parser's input. A word
reads ``E(w) + P v(w)``; words never seen in training keep their vector; the precomputed rows,
bootstrapping and model files carry the table; ``vectors=init`` is what it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from tagger import archive, model_file
from tagger.corpus.records import Sentence
from tagger.inference import predict
from tagger.models.seq2seq import Seq2seqConfig, Seq2seqParser
from tagger.models.transition_parser import ParserConfig, TransitionParser
from tagger.models.transition_parser.ids import UNK_ID
from tagger.modules.pretrained import FrozenVectors, frozen_rows, room_for
from tests.helpers import invoke
from tests.test_parser import TRAIN, make, randomise
from tests.test_seq2seq import TINY, WSJ, wsj

UNSEEN = ["quokka", "wombat", "numbat"]
SAMPLE = "data/sample.conllu"


def vectors_for(words: list[str], dim: int = 6) -> tuple[list[str], torch.Tensor]:
    """The unseen words first (the most frequent), then ``words``; row i is i + 1 in every column."""
    every = UNSEEN + words
    return every, torch.arange(1.0, len(every) + 1).repeat_interleave(dim).view(len(every), dim)


# ----------------------------------------------------------------------------- the rows, without a model


def test_frozen_rows_match_by_key_skip_specials_and_cap_the_extra_words():
    known = ["<pad>", "<unk>", "the", "Dog"]
    words = ["<unk>", "The", "the", "dog", "cat", "emu"]
    vectors = torch.arange(6.0).view(6, 1)
    extra, table, found = frozen_rows(known, words, vectors, 1, str.lower, specials=2)
    assert extra == ["cat"]  # the first extra key only (room 1); "<unk>" is a known key
    assert table[:, 0].tolist() == [0, 0, 1, 3, 4]  # "the" takes "The" (the first of its key); "Dog" "dog"
    assert found == [2, 3]
    assert room_for(1 / 1024, 4, 100) == 28  # 1 kB of 8-byte rows, less the 100 known: none; 128 - 100
    assert room_for(0, 4, 5) == 0


def test_frozen_vectors_give_the_projected_rows_and_start_from_them():
    layer = FrozenVectors(3, 2, 2, 0.1)
    layer.set_table(torch.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]]))
    embedding = torch.nn.Embedding(3, 2)
    layer.start_from(embedding, [1])
    assert torch.equal(layer.project.weight, torch.eye(2)) and not embedding.weight[1].any()
    rows = embedding.weight[torch.tensor([1, 0])] + layer(torch.tensor([1, 2]))
    assert torch.allclose(rows, torch.tensor([[1.0, 2.0], [3.0, 4.0]]) + torch.stack([embedding.weight[1], embedding.weight[0]]))
    assert layer.table.dtype == torch.float16 and not layer.table.requires_grad
    assert [name for name, _ in layer.named_parameters()] == ["project.weight"]


# ----------------------------------------------------------------------------- the transition parser


def parser_with_table(arch: str = "ffn", dim: int = 6) -> tuple[TransitionParser, int]:
    model = make(arch, word_dim=4, tag_dim=3, label_dim=3, hidden=8)
    words = sorted({w.lower() for s in TRAIN for w in s.words})
    count = model.load_embeddings(*vectors_for(words, dim))
    return model, count


def test_the_parser_keeps_a_table_for_its_words_and_unseen_ones():
    model, count = parser_with_table()
    vocab = model.word_vocab
    assert model.config.pretrained_dim == 6 and model.vocabs["pretrained"] == UNSEEN
    table = model.word_pretrained.table
    assert table.shape == (len(vocab) + 3, 6) and not table[:4].any()  # PAD UNK NULL ROOT: no vector
    assert count == int((table.abs().sum(1) > 0).sum())
    assert not model.word_emb.weight[vocab.stoi["the"]].any()  # its trained part starts at zero
    quokka = model._word_id("Quokka")
    assert quokka == len(vocab) and model._word_id("zzz-unheard") == UNK_ID
    row = model.word_rows(torch.tensor([quokka]))[0]
    assert torch.allclose(row, model.word_emb.weight[UNK_ID] + model.word_pretrained.project(table[quokka].float()))


@pytest.mark.parametrize("arch", ["ffn", "lstm"])
def test_precomputed_rows_parse_as_the_plain_embeddings_with_unseen_words(arch):
    model, _ = parser_with_table(arch)
    randomise(model, seed=3)
    model.eval()
    sentences = [Sentence(["The", "quokka", "saw", "a", "wombat", "."], {"upos": "DET NOUN VERB DET NOUN PUNCT".split()}),
                 *[Sentence(s.words, {"upos": s.columns["upos"]}) for s in TRAIN[:3]]]
    parses = []
    for precompute in (0, 2, 10_000):
        model.config.precompute = precompute
        model._tables = None
        parses.append([list(map(list, p)) for p in predict(model, sentences)])
    assert parses[0] == parses[1] == parses[2]
    with torch.no_grad():  # the unseen words' vectors change the scores
        batch = model.collate(sentences[:1], with_gold=False)
        plain = model.word_rows(batch.words)
        model.word_pretrained.table.zero_()
        assert not torch.allclose(plain, model.word_rows(batch.words))


def test_rare_word_dropout_keeps_the_dropped_words_vectors():
    model, _ = parser_with_table()
    words = torch.tensor([model.word_vocab.stoi["the"], len(model.word_vocab)])
    dropped = torch.tensor([UNK_ID, len(model.word_vocab)])
    rows = model.word_rows(words, dropped)
    expected = model.word_emb.weight[UNK_ID] + model.word_pretrained(words)
    assert torch.allclose(rows, expected)


def test_a_bootstrapped_parser_takes_the_ffns_table_and_projection():
    ffn, _ = parser_with_table("ffn")
    randomise(ffn, seed=1)
    lstm = TransitionParser(ParserConfig(arch="lstm", word_dim=4, tag_dim=3, label_dim=3, hidden=8),
                            {k: v for k, v in ffn.vocabs.items() if k != "pretrained"})
    lstm.bootstrap(ffn)
    assert lstm.config.pretrained_dim == 6 and lstm.vocabs["pretrained"] == UNSEEN
    assert torch.equal(lstm.word_pretrained.table, ffn.word_pretrained.table)
    assert torch.equal(lstm.word_pretrained.project.weight, ffn.word_pretrained.project.weight)
    assert lstm._word_id("wombat") == ffn._word_id("wombat") >= len(ffn.word_vocab)


def test_init_only_sets_the_training_words_rows_and_keeps_no_table():
    model = make(word_dim=6, tag_dim=3, label_dim=3, hidden=8, vectors="init")
    words = sorted({w.lower() for s in TRAIN for w in s.words})
    assert model.load_embeddings(*vectors_for(words)) > 0
    assert model.word_pretrained is None and "pretrained" not in model.vocabs
    assert model._word_id("quokka") == UNK_ID


def test_a_parser_model_file_with_a_table_tags_and_says_what_it_holds(tmp_path):
    from tests.conftest import EWT
    from tests.helpers import first_blocks

    if not (EWT / "en_ewt-ud-train.conllu").exists():
        pytest.skip("needs ../shared/data")
    train = tmp_path / "train.conllu"
    train.write_text(first_blocks(EWT / "en_ewt-ud-train.conllu", 40), encoding="utf-8")
    vectors = tmp_path / "v.txt"
    vectors.write_text("".join(f"{w} " + " ".join(f"{(i * 3 + j) % 7 - 3}" for j in range(5)) + "\n"
                               for i, w in enumerate(UNSEEN + ["the", "a", "of"])), encoding="utf-8")
    out = tmp_path / "dep.model"
    done = invoke("train", "--task", "dep", "--train", train, "--dev", train, "--out", out, "--max-epochs", "1",
                  "--embeddings", vectors, "--set", "hidden=16", "--threads", "1", "--quiet")
    assert done.exit_code == 0, done.stderr
    plain = archive.read(out)
    assert plain["state_dict"]["word_pretrained.table"].shape == (len(plain["vocabs"]["words"]) + 3, 5)
    model, _ = model_file.load(out)
    assert model._word_id("numbat") >= len(model.word_vocab)
    shown = json.loads(invoke("info", out, "--json").stdout)
    assert "3 words beyond the training words; 3 of" in shown["meta"]["pretrained vectors"]
    tagged = invoke("tag", "--model", out, "--input-format", "conllu", stdin=train.read_text(encoding="utf-8")[:3000])
    assert tagged.exit_code == 0, tagged.stderr


def test_a_parser_reading_words_through_its_encoder_alone_gets_the_table_there(tmp_path):
    """``bilstm-words`` (no static words): ``--embeddings`` gives its encoder the frozen table, as
    one taken from a tagger has it, whatever the vectors' width; unseen words read their rows."""
    out = tmp_path / "dep.model"
    vectors = tmp_path / "v.txt"
    vectors.write_text("".join(f"{w} " + " ".join(f"{(i * 3 + j) % 7 - 3}" for j in range(5)) + "\n"
                               for i, w in enumerate(UNSEEN + ["the", "a", "of"])), encoding="utf-8")
    done = invoke("train", "--task", "dep", "--preset", "bilstm-words", "--train", SAMPLE, "--dev", SAMPLE, "--out", out,
                  "--max-epochs", "1", "--embeddings", vectors, "--set", "encoder_hidden=8", "--set", "hidden=16",
                  "--set", "encoder_word_dim=8", "--threads", "1", "--quiet")
    assert done.exit_code == 0, done.stderr
    model, _ = model_file.load(out)
    encoder = model.encoder
    assert model.config.encoder_pretrained_dim == 5 and model.vocabs["encoder_pretrained"][:3] == UNSEEN
    assert encoder.input.pretrained is not None and model.word_emb is None
    ids = [encoder.featurizer.token(word)[0] for word in ["quokka", "numbat", "zzzunknown"]]
    assert ids[0] != ids[1] and min(ids[:2]) >= len(encoder.word_vocab) and ids[2] == 1  # UNK
    shown = json.loads(invoke("info", out, "--json").stdout)
    extra = len(model.vocabs["encoder_pretrained"])
    assert f"{extra} words beyond the training words" in shown["meta"]["pretrained vectors"]
    tagged = invoke("tag", "--model", out, SAMPLE)
    assert tagged.exit_code == 0, tagged.stderr


# ----------------------------------------------------------------------------- the seq2seq parser


def seq2seq_with_table(**overrides) -> Seq2seqParser:
    config = Seq2seqConfig(layers=1, hidden=8, word_dim=4, symbol_dim=4, attention_dim=4, **overrides)
    model = Seq2seqParser(config, Seq2seqParser.vocabs_from(config, wsj(3)))
    words = sorted({w.lower() for s in wsj(3) for w in s.words})
    model.load_embeddings(*vectors_for(words))
    return model


def test_seq2seq_reads_unseen_words_and_other_cases_through_the_table():
    model = seq2seq_with_table()
    assert model.config.pretrained_dim == 6 and model.vocabs["pretrained"] == UNSEEN
    n = len(model.word_vocab)
    assert model.word_id("Quokka") == n and model.word_id("quokka") == n
    the = model.word_vocab.stoi["the"]
    assert "THE" not in model.word_vocab.stoi and model.word_id("THE") == the  # its lowercase form's row
    batch = model.collate([Sentence(["A", "quokka", "."], {})], with_gold=False)
    assert batch.words[0, 1].item() == n and not batch.rare[0, 1]
    model.eval()
    with torch.no_grad():
        states = model.encode(batch).states.clone()
        model.word_pretrained.table[n] = 0
        assert not torch.allclose(states, model.encode(batch).states)


@pytest.mark.parametrize("feeding", [True, False])
def test_a_bidirectional_encoder_decodes_as_teacher_forcing_scores(feeding):
    config = Seq2seqConfig(layers=2, hidden=8, word_dim=4, symbol_dim=4, attention_dim=4, bidirectional=True,
                           input_feeding=feeding, dropout=0.0)
    model = Seq2seqParser(config, Seq2seqParser.vocabs_from(config, wsj(3)))
    model.eval()
    batch = model.collate(wsj(3)[:2])
    with torch.no_grad():
        forced = model(batch)
        encoded = model.encode(batch)
        assert encoded.state[0].shape == (2, 2, 8) and encoded.states.shape[-1] == 8
        state, feed = encoded.state, encoded.states.new_zeros(2, 8)
        previous = torch.cat([torch.full((2, 1), 2), batch.targets[:, :-1]], 1)
        for t in range(3):
            scores, feed, state, _ = model.step(previous[:, t], feed, state, encoded)
            assert torch.allclose(scores, forced[:, t], atol=1e-5)
    with pytest.raises(ValueError, match="even hidden size"):
        Seq2seqConfig(hidden=7, bidirectional=True)


def test_a_seq2seq_model_file_with_a_table_trains_tags_and_reloads(tmp_path):
    vectors = tmp_path / "v.txt"
    vectors.write_text("".join(f"{w} " + " ".join(str((i + j) % 5) for j in range(6)) + "\n"
                               for i, w in enumerate(UNSEEN + ["the", "company", "said"])), encoding="utf-8")
    out = tmp_path / "const.model"
    done = invoke("train", "--task", "const", "--train", WSJ / "wsj_0003.mrg", "--out", out, "--max-epochs", "1",
                  "--embeddings", vectors, "--set", "bidirectional=true", *TINY)
    assert done.exit_code == 0, done.output
    model, _ = model_file.load(out)
    assert model.config.bidirectional and model.word_pretrained is not None and model.vocabs["pretrained"] == UNSEEN
    tagged = invoke("tag", "--model", out, "--beam", "2", stdin="A quokka said it .\n")
    assert tagged.exit_code == 0 and tagged.stdout.count("(XX") == 5, tagged.output


# ----------------------------------------------------------------------------- seq2seq: the input's POS


def test_seq2seq_reading_pos_embeds_the_tags_and_refuses_untagged_input(tmp_path):
    config = Seq2seqConfig(layers=1, hidden=8, word_dim=4, symbol_dim=4, attention_dim=4, tag_dim=3)
    model = Seq2seqParser(config, Seq2seqParser.vocabs_from(config, wsj(3)))
    assert model.input_columns == ["xpos"] and Seq2seqParser.pos_column(config) == "xpos"
    batch = model.collate([Sentence(["It", "rained", "."], {"xpos": ["PRP", "VBD", "ZZZ"]})], with_gold=False)
    stoi = model.tag_vocab.stoi
    assert batch.tags[0].tolist() == [model.tag_vocab.unk_index, stoi["VBD"], stoi["PRP"]]  # reversed, as the words
    model.eval()
    with torch.no_grad():  # the tags change what the encoder gives
        before = model.encode(batch).states.clone()
        batch.tags[0, 1] = stoi["NN"]
        assert not torch.allclose(before, model.encode(batch).states)
    out = tmp_path / "const.model"
    done = invoke("train", "--task", "const", "--train", WSJ / "wsj_0003.mrg", "--out", out, "--max-epochs", "1",
                  "--set", "tag_dim=4", *TINY)
    assert done.exit_code == 0, done.output
    refused = invoke("tag", "--model", out, stdin="It rained .\n")
    assert refused.exit_code != 0 and "reads XPOS" in refused.stderr and "Traceback" not in refused.stderr
    tagged = invoke("tag", "--model", out, "--beam", "1", "--format", "tagged", stdin="It/PRP rained/VBD ./.\n")
    assert tagged.exit_code == 0 and "(PRP It)" in tagged.stdout, tagged.output


def test_decomposed_words_are_looked_up_as_the_composed_ones_learnt():
    """NFD input (a letter and its accents as separate characters) is the same word as the NFC
    one a treebank teaches: the same ids, word, characters and all."""
    import unicodedata

    from tagger.corpus.features import InputFeaturizer, canonical, normalize
    from tagger.corpus.vocab import Vocab

    composed = "Tiếng Việt"
    decomposed = unicodedata.normalize("NFD", composed)
    assert decomposed != composed and canonical(decomposed) == composed and normalize(decomposed) == "tiếng việt"
    words, chars = Vocab.from_list(["<pad>", "<unk>", "tiếng việt"]), Vocab.from_list(["<pad>", "<unk>", *set(composed)])
    featurizer = InputFeaturizer(words, chars, 3)
    assert featurizer.token(decomposed) == featurizer.token(composed) and featurizer.token(composed)[0] == 2


def test_a_word_unknown_with_an_invisible_mark_is_looked_up_without_it():
    """A right-to-left mark before a word training saw without one: the word's own id (a word
    training saw with the mark keeps its own)."""
    from tagger.corpus.features import InputFeaturizer
    from tagger.corpus.vocab import Vocab

    chars = Vocab.from_list(["<pad>", "<unk>", "ك", "ت", "ا", "ب"])
    plain = InputFeaturizer(Vocab.from_list(["<pad>", "<unk>", "كتاب"]), chars, 2)
    assert plain.token("\u200fكتاب")[0] == 2 and plain.token("\u200f")[0] == 1
    marked = InputFeaturizer(Vocab.from_list(["<pad>", "<unk>", "كتاب", "\u200fكتاب"]), chars, 2)
    assert marked.token("\u200fكتاب")[0] == 3
