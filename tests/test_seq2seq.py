"""The seq2seq constituency parser (task ``const``): beam search, teacher forcing, and the
whole path a user takes: train on .mrg trees, tag text or tagged input into trees, evaluate."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import torch

from tagger.corpus.records import Sentence
from tagger.models.seq2seq import Seq2seqConfig, Seq2seqParser
from tagger.models.seq2seq.beam import BOS_ID, EOS_ID, Encoded, search
from tagger.models.seq2seq.model import Parse, shape
from tagger import formats

from tests.helpers import assert_one_line_error, invoke

WSJ = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ptb-wsj-sample" / "combined"
TINY = ["--set", "layers=1", "--set", "hidden=32", "--set", "word_dim=16", "--set", "symbol_dim=16",
        "--set", "attention_dim=16", "--threads", "1", "--quiet", "--json"]


def wsj(*numbers: int) -> list[Sentence]:
    return [s for n in numbers for s in formats.read(WSJ / f"wsj_{n:04d}.mrg")]


# ----------------------------------------------------------------------------- beam search, no training


class Scripted:
    """A stand-in decoder whose next-symbol probabilities depend only on the symbol just emitted:
    from BOS, 'a' (0.6) beats 'b' (0.4); after 'a' every choice is poor (0.3 each for a, b, EOS
    and 0.1 pad), after 'b' EOS is certain. Greedy takes a → ... ; the beam finds b EOS
    (0.4 > 0.6 · 0.3)."""

    A, B = 3, 4

    def step(self, symbols, feed, state, encoded):
        table = {BOS_ID: {self.A: 0.6, self.B: 0.4}, self.A: {self.A: 0.3, self.B: 0.3, EOS_ID: 0.3, 0: 0.1},
                 self.B: {EOS_ID: 1.0}}
        probs = torch.full((len(symbols), 5), 1e-9)
        for row, symbol in enumerate(symbols.tolist()):
            for target, p in table.get(symbol, {EOS_ID: 1.0}).items():
                probs[row, target] = p
        attention = encoded.mask.float() / encoded.mask.sum(1, keepdim=True)
        return probs.log(), feed, state, attention


def encoded(batch: int) -> Encoded:
    zeros = torch.zeros(1, batch, 2)
    return Encoded(torch.zeros(batch, 3, 2), torch.zeros(batch, 3, 2), torch.ones(batch, 3, dtype=torch.bool),
                   (zeros, zeros.clone()))


def test_beam_finds_the_better_whole_sequence_that_greedy_misses():
    greedy = search(Scripted(), encoded(2), 1, [5, 5])
    beam = search(Scripted(), encoded(2), 3, [5, 5])
    assert [ids for ids, _ in beam] == [[Scripted.B], [Scripted.B]]  # p = 0.4
    assert greedy[0][0][0] == Scripted.A  # 0.6 first, then at best 0.3: 0.18 < 0.4


def test_the_symbol_budget_ends_a_hypothesis_that_never_ends():
    class Forever(Scripted):
        def step(self, symbols, feed, state, encoded):
            scores, *rest = super().step(torch.full_like(symbols, Scripted.A), feed, state, encoded)
            scores[:, EOS_ID] = -1e9
            return (scores, *rest)

    (ids, matrix), = search(Forever(), encoded(1), 2, [4], with_attention=True)
    assert len(ids) == 4 and matrix.shape == (4, 3)


def test_attention_rows_follow_the_chosen_hypothesis():
    (ids, matrix), = search(Scripted(), encoded(1), 3, [5], with_attention=True)
    assert matrix.shape == (len(ids) + 1, 3)  # one row per symbol and one for <eos>
    assert torch.allclose(matrix.sum(1), torch.ones(len(ids) + 1))


# ----------------------------------------------------------------------------- the network


@pytest.mark.parametrize("feeding", [False, True])
def test_teacher_forcing_equals_step_by_step_decoding(feeding):
    sentences = wsj(3)[:4]
    config = Seq2seqConfig(layers=2, hidden=16, word_dim=8, symbol_dim=8, attention_dim=8, input_feeding=feeding)
    torch.manual_seed(0)
    model = Seq2seqParser(config, Seq2seqParser.vocabs_from(config, sentences)).eval()
    batch = model.collate(sentences)
    whole = model(batch)
    encoded_batch = model.encode(batch)
    previous = torch.cat([batch.targets.new_full((4, 1), BOS_ID), batch.targets[:, :-1]], 1)
    state, feed, steps = encoded_batch.state, torch.zeros(4, 16), []
    for t in range(previous.shape[1]):
        scores, feed, state, _ = model.step(previous[:, t], feed, state, encoded_batch)
        steps.append(scores)
    assert torch.allclose(whole, torch.stack(steps, 1), atol=1e-5)


def test_input_is_reversed_and_unknown_words_get_a_shape():
    sentences = wsj(3)[:2]
    config = Seq2seqConfig(layers=1, hidden=8, word_dim=8, symbol_dim=8, attention_dim=8)
    model = Seq2seqParser(config, Seq2seqParser.vocabs_from(config, sentences))
    batch = model.collate([Sentence(["Zyxwv", "1987", "qqq-rrr"])], with_gold=False)
    itos = model.word_vocab.itos
    assert [itos[i] for i in batch.words[0].tolist()] == ["<unk:x-x>", "<unk:9>", "<unk:Xx>"]
    assert shape("IBM") == "<unk:X>" and shape("...") == "<unk:.>"
    model = Seq2seqParser(config, Seq2seqParser.vocabs_from(config, wsj(20, 22)))  # -LRB-, -RRB-, -LCB-
    assert model.word_id("(") == model.word_id("-LRB-") != model.unk_id("(")  # raw text reads the .mrg spelling
    assert model.word_id(")") == model.word_id("-RRB-") and model.word_id("{") == model.word_id("-LCB-")
    assert model.word_id("[") == model.unk_id("[")  # no -LSB- in these trees


def test_rare_word_dropout_trains_the_unknown_word_rows_that_tagging_reads():
    sentences = wsj(3)[:8]
    config = Seq2seqConfig(layers=1, hidden=8, word_dim=8, symbol_dim=8, attention_dim=8, rare_word_dropout=0.99)
    torch.manual_seed(0)
    model = Seq2seqParser(config, Seq2seqParser.vocabs_from(config, sentences)).train()
    batch = model.collate(sentences)
    model.loss(model(batch), batch).backward()
    itos = model.word_vocab.itos
    dropped = {shape(itos[i]) for i in batch.words[batch.rare].tolist()}  # the shapes of the rare words
    trained = {itos[i] for i in range(len(itos)) if model.word_emb.weight.grad[i].abs().sum() > 0}
    assert dropped and dropped <= trained  # an unknown word of that shape reads a trained row
    assert "<unk>" not in trained  # with unk_shapes, no word becomes the plain UNK


def test_repaired_outputs_are_counted_and_tags_come_from_the_input():
    sentences = wsj(3)[:2]
    config = Seq2seqConfig(layers=1, hidden=8, word_dim=8, symbol_dim=8, attention_dim=8)
    model = Seq2seqParser(config, Seq2seqParser.vocabs_from(config, sentences))
    tagged = Sentence(["It", "rained", "."], {"xpos": ["PRP", "VBD", "."]})
    plain = Sentence(["It", "rained", "."])
    good = Parse(["(S", "(NP", "XX", ")NP", "(VP", "XX", ")VP", "XX", ")S"])
    bad = Parse(["(S", "XX", "XX", "XX", "XX", ")NP"])
    model.annotate(tagged, good)
    model.annotate(plain, bad)
    assert tagged.tree.bracketed() == "( (S (NP (PRP It)) (VP (VBD rained)) (. .)))"
    assert plain.tree.bracketed() == "( (S (XX It) (XX rained) (XX .)))"
    assert model.output_counts([good, bad]) == {"repaired": 1}


def test_trees_come_out_in_the_outer_layout_of_the_training_trees():
    """WSJ's unlabelled outer bracket where the training trees have it, never twice (NeGra's
    ``( (S ...) ($. .))``: the root is that bracket already); a treebank of ``(VROOT ...)``
    trees gets them bare, as its own files write them (and EVALB reads them)."""
    config = Seq2seqConfig(layers=1, hidden=8, word_dim=8, symbol_dim=8, attention_dim=8)

    def parsed(lines: list[str], symbols: list[str]) -> str:
        sentences = list(formats.read(io.StringIO("\n".join(lines) + "\n"), "trees"))
        model = Seq2seqParser(config, Seq2seqParser.vocabs_from(config, sentences))
        sentence = Sentence(["It", "rained", "."], {"xpos": ["PRP", "VBD", "."]})
        model.annotate(sentence, Parse(symbols))
        return sentence.tree.bracketed()

    negra = ["( (S (PRP It) (VBD rained)) ($. .))", "( (S (PRP It) (VBD snowed)) ($. .))"]
    assert parsed(negra, ["(S", "XX", "XX", ")S", "XX"]) == "( (S (PRP It) (VBD rained)) (. .))"
    vroot = ["(VROOT (S (PRP It) (VBD rained)) ($. .))", "(VROOT (S (PRP It) (VBD snowed)) ($. .))"]
    assert parsed(vroot, ["(S", "XX", "XX", ")S", "XX"]) == "(VROOT (S (PRP It) (VBD rained)) (. .))"
    assert parsed(vroot, ["(VROOT", "(S", "XX", "XX", ")S", "XX", ")VROOT"]) == "(VROOT (S (PRP It) (VBD rained)) (. .))"
    wsj_like = ["( (S (PRP It) (VBD rained) (. .)))"]
    assert parsed(wsj_like, ["(S", "XX", "XX", "XX", ")S"]) == "( (S (PRP It) (VBD rained) (. .)))"
    # a model file from before the layout was kept: wrapped, as it always was
    sentences = list(formats.read(io.StringIO(vroot[0] + "\n"), "trees"))
    vocabs = Seq2seqParser.vocabs_from(config, sentences)
    del vocabs["outer"]
    assert Seq2seqParser(config, vocabs).wrapped


# ----------------------------------------------------------------------------- as a user runs it


@pytest.fixture(scope="module")
def const_model(tmp_path_factory) -> Path:
    """A tiny const model trained for 2 epochs on 3 WSJ files (its trees are poor, not malformed)."""
    folder = tmp_path_factory.mktemp("const")
    path = folder / "const.model"
    done = invoke("train", "--task", "const", "--train", WSJ / "wsj_0003.mrg", "--dev", WSJ / "wsj_0004.mrg",
                  "--out", path, "--max-epochs", "2", *TINY)
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["task"] == "const" and summary["dev_metric"] == "bracket F1"
    return path


def test_tag_text_gives_one_tree_per_sentence_over_its_words(const_model):
    text = "The company said profits rose .\nIt rained .\n"
    done = invoke("tag", "--model", const_model, "--beam", "3", stdin=text)
    assert done.exit_code == 0, done.output
    trees = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(trees) == 2
    for tree_text, line in zip(trees, text.splitlines()):
        sentence = next(iter(formats.read(io.StringIO(tree_text + "\n"), "trees")))
        assert sentence.words == line.split()


def test_tagged_input_puts_its_tags_in_the_tree(const_model):
    done = invoke("tag", "--model", const_model, "--beam", "1", "--format", "tagged", stdin="It/PRP rained/VBD ./.\n")
    assert done.exit_code == 0, done.output
    leaves = next(iter(formats.read(io.StringIO(done.stdout), "trees"))).tree.leaves()
    assert leaves == [("PRP", "It"), ("VBD", "rained"), (".", ".")]


def test_formats_without_trees_are_refused(const_model):
    done = invoke("tag", "--model", const_model, "--output-format", "conllu", stdin="It rained .\n")
    assert_one_line_error(done, "no place for the constituency tree", "trees")


def test_training_on_data_without_trees_is_refused(tmp_path):
    done = invoke("train", "--task", "const", "--train", "data/sample.conllu", "--out", tmp_path / "m", *TINY)
    assert_one_line_error(done, "no constituency tree", "sample.conllu")


def test_show_attention_draws_a_picture(const_model, tmp_path):
    picture = tmp_path / "attention.png"
    done = invoke("tag", "--model", const_model, "--show-attention", picture, stdin="It rained .\n")
    assert done.exit_code == 0, done.output
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_constrained_decoding_gives_one_xx_per_word_and_balanced_brackets():
    sentences = wsj(3)
    config = Seq2seqConfig(layers=1, hidden=16, word_dim=8, symbol_dim=8, attention_dim=8, constrained=True)
    torch.manual_seed(3)
    model = Seq2seqParser(config, Seq2seqParser.vocabs_from(config, sentences)).eval()  # untrained: any output
    for width in (1, 4, 12):  # 12: more beams than a prefix has legal symbols (dead beams must stay dead)
        model.set_decoding(width)
        for sentence, parse in zip(sentences, model.decode(model.collate(sentences, with_gold=False))):
            assert parse.symbols.count("XX") == len(sentence)
            stack = []
            for symbol in parse.symbols:
                if symbol.startswith("("):
                    stack.append(symbol[1:])
                elif symbol.startswith(")"):
                    assert stack.pop() == symbol[1:]
            assert not stack and parse.symbols[0].startswith("(")
            assert not model.tree(sentence, parse)[1]  # nothing to repair


def test_evaluate_a_model_on_gold_trees(const_model, tmp_path):
    done = invoke("evaluate", "--model", const_model, WSJ / "wsj_0004.mrg", "--json")
    assert done.exit_code == 0, done.output
    every = json.loads(done.stdout)["const"]["all"]
    assert every["sentences"] == len(wsj(4)) and every["error_sentences"] == 0  # the words are the gold ones
    assert every["tagging_accuracy"] == 100.0 and 0.0 <= every["f1"] <= 100.0  # the gold tags go into the trees
    import tagger

    through_api = tagger.evaluate(const_model, WSJ / "wsj_0004.mrg")  # its scores under the command's key
    assert through_api["const"] == json.loads(done.stdout)["const"] and through_api["score_name"] == "bracket F1"
    # another parameter file, as --evalb-params: the API takes it too
    prm = tmp_path / "short.prm"
    prm.write_text((WSJ.parents[1] / "evalb-sample" / "COLLINS.prm").read_text().replace("CUTOFF_LEN 40", "CUTOFF_LEN 5"))
    done = invoke("evaluate", "--model", const_model, WSJ / "wsj_0004.mrg", "--evalb-params", prm, "--json")
    other = tagger.evaluate(const_model, WSJ / "wsj_0004.mrg", evalb_params=prm)
    assert other["const"] == json.loads(done.stdout)["const"] and other["const"]["cutoff_len"] == 5


def test_pretrained_vectors_initialise_the_word_embeddings(tmp_path):
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("the " + " ".join(["0.5"] * 16) + "\nCompany " + " ".join(["0.25"] * 16) + "\n", encoding="utf-8")
    out = tmp_path / "const.model"
    done = invoke("train", "--task", "const", "--train", WSJ / "wsj_0003.mrg", "--out", out, "--max-epochs", "1",
                  "--embeddings", vectors, "--set", "vectors=init", *TINY)
    assert done.exit_code == 0, done.output
    # "the" by its own row; "The" and "company" by the lowercase rows of "the" and "Company"
    assert "3 word vectors loaded" in " ".join(json.loads(done.stdout.strip().splitlines()[-1])["notes"])


def test_mrg_and_jsonl_outputs_and_the_python_api_give_the_same_tree(const_model):
    import tagger

    model = tagger.load(const_model, beam=2)
    record, = model.tag([["It", "rained", "."]])
    jsonl = invoke("tag", "--model", const_model, "--beam", "2", "--output-format", "jsonl", stdin="It rained .\n")
    mrg = invoke("tag", "--model", const_model, "--beam", "2", "--output-format", "mrg", stdin="It rained .\n")
    assert jsonl.exit_code == 0 and mrg.exit_code == 0, jsonl.output + mrg.output
    assert json.loads(jsonl.stdout)["tree"] == record["tree"]
    pretty = next(iter(formats.read(io.StringIO(mrg.stdout), "mrg"))).tree
    assert pretty.bracketed() == record["tree"] and record["words"] == ["It", "rained", "."]
    assert model.tag([[], ["It", "rained", "."]]) == [{"words": [], "tree": None}, record]  # nothing to parse: no tree
    trees = invoke("tag", "--model", const_model, "--beam", "2", stdin="It rained .\n")
    assert model.tag_lines(["It rained ."]) == [trees.stdout]  # one tree a line, tagger tag's default
    # words spelled as the trees file spells them (a slash as \\/) in jsonl and the API too
    slash = "a 50/50 b\\/c .\n"
    trees = invoke("tag", "--model", const_model, stdin=slash).stdout.strip()
    jsonl = json.loads(invoke("tag", "--model", const_model, "--output-format", "jsonl", stdin=slash).stdout)["tree"]
    assert jsonl == trees == tagger.load(const_model).tag([slash.split()])[0]["tree"] and "50\\/50" in trees


def test_tag_says_on_stderr_how_many_outputs_were_repaired(const_model, capsys):
    import tagger

    model = tagger.load(const_model, beam=1)
    model.module.output_counts = lambda predictions: {"repaired": len(predictions)}  # every output repaired
    counts = model.tag_file(io.BytesIO(b"It rained .\nIt snowed .\n"), io.StringIO(), input_format="text")
    assert counts["repaired"] == 2
    assert "note: 2 of 2 outputs were not well-formed trees and were repaired" in capsys.readouterr().err


def test_show_attention_on_empty_input_says_it_drew_nothing(const_model, tmp_path):
    picture = tmp_path / "attention.png"
    done = invoke("tag", "--model", const_model, "--show-attention", picture, stdin="")
    assert done.exit_code == 0, done.output
    assert not picture.exists() and "no sentence to draw" in done.stderr


def test_bracket_words_in_plain_text_give_trees_that_read_back(const_model):
    text = "He said ( quietly ) .\n"
    trees = invoke("tag", "--model", const_model, "--beam", "1", "--format", "text", stdin=text)
    jsonl = invoke("tag", "--model", const_model, "--beam", "1", "--format", "text", "--output-format", "jsonl",
                   stdin=text)
    assert trees.exit_code == 0 and jsonl.exit_code == 0, trees.output + jsonl.output
    back = next(iter(formats.read(io.StringIO(trees.stdout), "trees")))
    assert back.words == ["He", "said", "-LRB-", "quietly", "-RRB-", "."]  # as the Penn Treebank writes them
    record = json.loads(jsonl.stdout)
    assert record["words"] == text.split() and record["tree"] == trees.stdout.strip()


def test_a_beam_wider_than_the_legal_symbols_never_emits_specials():
    # Few labels: near the end of a tree a prefix has one legal symbol, so most of 10 beams die.
    trees = "(VROOT (S (NP (ART Das) (NN Haus)) (VVFIN steht)) ($. .))\n(VROOT (S (PPER Er) (VVFIN liest)) ($. .))\n"
    sentences = list(formats.read(io.StringIO(trees), "mrg"))
    config = Seq2seqConfig(layers=1, hidden=16, word_dim=8, symbol_dim=8, attention_dim=8, constrained=True, beam=10)
    torch.manual_seed(0)
    model = Seq2seqParser(config, Seq2seqParser.vocabs_from(config, sentences)).eval()
    parse, = model.decode(model.collate([Sentence("Die Katze liest .".split())], with_gold=False))
    assert not {"<bos>", "<pad>", "<eos>"} & set(parse.symbols) and parse.symbols.count("XX") == 4
