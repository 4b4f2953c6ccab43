"""What a model reads and refuses: a parser given input without the POS/FEATS it reads, a parser
given as --pos-model, the non-projective count (meta, not a vocabulary; reported before training)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from tagger import formats, model_file
from tagger.cli.info import describe
from tagger.cli.main import cli
from tagger.config import config_to_dict
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.inference import InputCheck, predict
from tagger.models.skip_lstm import SkipLSTMTagger, TaggerConfig
from tagger.models.transition_parser import ParserConfig, TransitionParser
from tagger.tagging import tag
from tagger.training.run import DataSpec, TrainRequest, train
from tagger.training.trainer import RunOptions

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample.conllu"
TINY = ("max_epochs=1", "hidden=8", "word_dim=8", "tag_dim=8", "label_dim=8", "precompute=50")

# Three trees, the last non-projective (1 -> 3 crosses 2 -> 4).
TREES = """\
1\tThe\tthe\tDET\tDT\tDefinite=Def\t2\tdet\t_\t_
2\tcat\tcat\tNOUN\tNN\tNumber=Sing\t3\tnsubj\t_\t_
3\tsat\tsit\tVERB\tVBD\tTense=Past\t0\troot\t_\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\tVBP\tMood=Ind\t0\troot\t_\t_

1\ta\ta\tX\tFW\t_\t0\troot\t_\t_
2\tb\tb\tX\tFW\t_\t4\tdep\t_\t_
3\tc\tc\tX\tFW\t_\t1\tobj\t_\t_
4\td\td\tX\tFW\t_\t1\tdep\t_\t_

"""


pytestmark = pytest.mark.usefixtures("one_thread")  # conftest


class Recorder:
    """A training reporter that keeps what it is told, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def note(self, message: str) -> None:
        self.events.append(("note", message))

    def epoch_start(self, epoch: int, batches: int) -> None:
        self.events.append(("epoch_start", epoch))

    def step(self, loss: float, tokens: int) -> None:
        pass

    def epoch_end(self, record: dict) -> None:
        self.events.append(("epoch_end", record["epoch"]))


def sample() -> list[Sentence]:
    return list(formats.read(str(SAMPLE), "conllu"))


def random_parser(tag_column: str = "upos", sentences: list[Sentence] | None = None) -> TransitionParser:
    config = ParserConfig(tag_column=tag_column, hidden=8, word_dim=8, tag_dim=8, label_dim=8, precompute=50)
    model = TransitionParser(config, TransitionParser.vocabs_from(config, sentences or sample()))
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.rand(p.shape, generator=generator) * 0.6 - 0.3)
    return model.eval()


def saved_parser(path: Path, tag_column: str = "upos", meta: dict | None = None) -> Path:
    model_file.save(path, random_parser(tag_column), meta or {})
    return path


def saved_tagger(path: Path) -> Path:
    config = TaggerConfig(column="upos", layers=1, hidden=8, word_dim=8, char_dim=4)
    model_file.save(path, SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, sample())), {})
    return path


def conllu(sentences: list[Sentence]) -> str:
    out = io.StringIO()
    formats.write(sentences, out, "conllu")
    return out.getvalue()


def blanked(sentences: list[Sentence], column: str) -> list[Sentence]:
    """Copies of ``sentences`` with ``column`` all ``_`` (what a tagger that does not fill it leaves)."""
    return [Sentence(list(s.words), {**s.columns, column: ["_"] * len(s)}) for s in sentences]


def one_line_error(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def train_dep(tmp_path: Path, train_file: Path, reporter: Recorder, pos_model: str | None = None,
              overrides: tuple[str, ...] = ()) -> Path:
    out = tmp_path / "dep.model"
    train(TrainRequest(task="dep", train=DataSpec(str(train_file)), dev=DataSpec(str(train_file)), out=str(out),
                       overrides=(*TINY, *overrides), options=RunOptions(device="cpu"), pos_model=pos_model), reporter)
    return out


# ----------------------------------------------------------------------------- input columns
def test_models_declare_the_columns_they_read():
    assert random_parser().input_columns == ["upos"]
    assert random_parser("upos+feats").input_columns == ["upos", "feats"]
    assert random_parser("xpos").input_columns == ["xpos"]
    config = TaggerConfig(column="upos", layers=1, hidden=8, word_dim=8)
    assert SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, sample())).input_columns == []


def test_parser_refuses_plain_text_unless_allowed(tmp_path):
    parser = saved_parser(tmp_path / "dep.model")
    runner = CliRunner()
    refused = runner.invoke(cli, ["tag", "--model", str(parser)], input="The cat sat on the mat .\n")
    line = one_line_error(refused)
    assert line.startswith("error: <stdin>:1: the input has no UPOS")
    assert "pipe it through a tagger" in line and "--allow-missing-columns" in line
    assert refused.stdout == ""
    allowed = runner.invoke(cli, ["tag", "--model", str(parser), "--allow-missing-columns"],
                            input="The cat sat on the mat .\n")
    assert allowed.exit_code == 0 and allowed.stderr == "", allowed.stderr
    [parsed] = formats.read(io.BytesIO(allowed.stdout_bytes), "conllu")
    assert parsed.column("head").count(0) == 1
    assert "--allow-missing-columns" in runner.invoke(cli, ["tag", "--help"]).stdout


def test_refusal_names_the_pos_model_the_parser_was_trained_with(tmp_path):
    pos = saved_tagger(tmp_path / "pos.tagger")
    out = train_dep(tmp_path, SAMPLE, Recorder(), pos_model=str(pos))
    _, meta = model_file.load(out)
    assert meta["pos_model"] == os.path.abspath(pos) and meta["pos_model_column"] == "upos"
    line = one_line_error(CliRunner().invoke(cli, ["tag", "--model", str(out)], input="Dogs bark\n"))
    assert f"tagger tag --model {os.path.abspath(pos)} | tagger tag --model" in line


def test_upos_feats_parser_refuses_input_without_feats(tmp_path):
    parser = saved_parser(tmp_path / "dep.model", "upos+feats")
    path = tmp_path / "upos-only.conllu"
    path.write_text(conllu(blanked(sample(), "feats")), encoding="utf-8")
    line = one_line_error(CliRunner().invoke(cli, ["tag", "--model", str(parser), str(path)]))
    assert line.startswith(f"error: {path}:1: the input has no FEATS") and "reads UPOS+FEATS" in line
    gold = CliRunner().invoke(cli, ["tag", "--model", str(parser), str(SAMPLE)])
    assert gold.exit_code == 0 and gold.stderr == "", gold.stderr


def test_some_sentences_without_a_read_column_warn_once():
    model = random_parser("upos+feats")
    gold = sample()
    long = [s for s in gold if len(s) >= 5]
    mixed = gold + blanked(long[:2], "feats")  # two long sentences without FEATS, in a later chunk
    err, out = io.StringIO(), io.StringIO()
    counts = tag(model, mixed, out, chunk_size=len(gold), check=InputCheck(model, stream=err))
    assert counts["sentences"] == len(mixed)
    warnings = err.getvalue().splitlines()
    assert len(warnings) == 1 and warnings[0].startswith("warning: ") and "no FEATS" in warnings[0], warnings
    quiet = io.StringIO()
    tag(model, gold + blanked(long[:2], "feats"), io.StringIO(), check=InputCheck(model, True, stream=quiet))
    assert quiet.getvalue() == ""


def test_tag_refuses_by_default_and_writes_nothing():
    model = random_parser()
    out = io.StringIO()
    with pytest.raises(TaggerError, match="no UPOS"):
        tag(model, blanked(sample(), "upos"), out)
    assert out.getvalue() == ""


def test_gold_ewt_needs_no_warning_and_predicted_upos_only_is_refused(shared_data):
    """Every EWT sentence without FEATS is short (URLs, "Hi back !"): gold input passes silently;
    the same text with FEATS blank, as a UPOS tagger leaves it, is refused."""
    dev = list(formats.read(str(shared_data / "ud-english-ewt" / "en_ewt-ud-dev.conllu"), "conllu"))
    model = random_parser("upos+feats", dev[:200])
    err = io.StringIO()
    check = InputCheck(model, stream=err)
    for start in range(0, len(dev), 500):
        check(dev[start : start + 500])
    assert err.getvalue() == ""
    with pytest.raises(TaggerError, match="no FEATS"):
        InputCheck(model)(blanked(dev[:1000], "feats"))


def test_evaluate_model_refuses_data_without_the_parsers_pos(tmp_path):
    parser = saved_parser(tmp_path / "dep.model")
    path = tmp_path / "no-upos.conllu"
    path.write_text(conllu(blanked(sample(), "upos")), encoding="utf-8")
    runner = CliRunner()
    assert "no UPOS" in one_line_error(runner.invoke(cli, ["evaluate", "--model", str(parser), str(path), "--json"]))
    allowed = runner.invoke(cli, ["evaluate", "--model", str(parser), str(path), "--json", "--allow-missing-columns"])
    assert allowed.exit_code == 0, allowed.stderr


@pytest.mark.slow
def test_ewt_pipeline_upos_tagger_into_upos_feats_parser_is_refused(tmp_path, shared_data):
    """The docs' recommended parser input (UPOS+FEATS) after a tagger that predicts UPOS only."""
    ewt = shared_data / "ud-english-ewt"
    runner = CliRunner()
    pos, dep = tmp_path / "pos.tagger", tmp_path / "dep.model"
    common = ["--train", str(ewt / "en_ewt-ud-train.conllu"), "--dev", str(SAMPLE), "--max-sentences", "300",
              "--max-epochs", "1", "--threads", "1", "--quiet", "--json"]
    done = runner.invoke(cli, ["train", "--task", "pos", "--out", str(pos), *common, "--set", "layers=1",
                               "--set", "hidden=16", "--set", "word_dim=16"])
    assert done.exit_code == 0, done.stderr
    done = runner.invoke(cli, ["train", "--task", "dep", "--out", str(dep), *common, "--set", "tag_column=upos+feats",
                               "--set", "hidden=32", "--set", "precompute=100"])
    assert done.exit_code == 0, done.stderr
    text = "\n".join(" ".join(s.words) for s in list(formats.read(str(ewt / "en_ewt-ud-dev.conllu"), "conllu"))[:50])
    tagged = runner.invoke(cli, ["tag", "--model", str(pos)], input=text + "\n")
    assert tagged.exit_code == 0, tagged.stderr
    line = one_line_error(runner.invoke(cli, ["tag", "--model", str(dep)], input=tagged.stdout_bytes))
    assert "the input has no FEATS" in line


# ----------------------------------------------------------------------------- --pos-model
def test_a_parser_as_pos_model_is_a_one_line_error(tmp_path):
    parser = saved_parser(tmp_path / "other.model")
    result = CliRunner().invoke(cli, ["train", "--task", "dep", "--train", str(SAMPLE), "--dev", str(SAMPLE),
                                      "--out", str(tmp_path / "dep.model"), "--pos-model", str(parser),
                                      "--threads", "1", "--quiet", *[a for o in TINY for a in ("--set", o)]])
    line = one_line_error(result)
    assert line == f"error: {parser}: --pos-model must be a tagger model, this is a transition_parser model"
    assert not (tmp_path / "dep.model").exists()


# ----------------------------------------------------------------------------- non-projective trees
@pytest.mark.parametrize("mode", ["skip", "lift"])
def test_nonprojective_count_is_reported_before_training_and_kept_in_meta(tmp_path, mode):
    trees = tmp_path / "trees.conllu"
    trees.write_text(TREES, encoding="utf-8")
    reporter = Recorder()
    overrides = ("nonprojective=skip",) if mode == "skip" else ("lift_min_count=1",)  # lift: the default
    out = train_dep(tmp_path, trees, reporter, overrides=overrides)
    kinds = [kind for kind, _ in reporter.events]
    note = kinds.index("note")
    assert note < kinds.index("epoch_start"), reporter.events
    info = describe(str(out))
    assert set(info["vocab_sizes"]) == {"words", "tags", "labels"}  # plain_labels is no vocabulary
    if mode == "skip":
        assert "1 non-projective training tree will be skipped" in reporter.events[note][1]
        assert info["meta"]["nonprojective_skipped"] == 1 and info["vocab_sizes"]["labels"] == 6
    else:
        assert reporter.events[note][1] == ("1 non-projective training tree of 3 projectivised (1 arc lifted; "
                                            "1 lifted labels, 1 seen >= 1 times learnt as such)")
        assert {k: info["meta"][k] for k in info["meta"] if k.startswith("nonprojective")} == {
            "nonprojective_lifted_trees": 1, "nonprojective_lifted_arcs": 1, "nonprojective_skipped": 0}
        assert info["vocab_sizes"]["labels"] == 7  # and dep↑dep
        assert model_file.load(out)[0].label_names[-1] == "dep↑dep"


def test_model_file_with_the_count_among_its_vocabularies_still_loads_and_tags_the_same(tmp_path):
    """Model files written before the count moved to the meta keep ``vocabs["nonprojective"]``."""
    model = random_parser()
    vocabs = {**{k: list(v) for k, v in model.vocabs.items()}, "nonprojective": ["288"]}
    old = {"format_version": 1, "tagger_version": "0.1.0", "name": model.name, "config": config_to_dict(model.config),
           "vocabs": vocabs, "state_dict": {k: v.detach().clone() for k, v in model.state_dict().items()},
           "meta": {"task": "dep", "nonprojective_skipped": 288}}
    path = tmp_path / "old.model"
    torch.save(old, path)
    loaded, meta = model_file.load(path)
    sentences = sample()
    assert predict(loaded, sentences) == predict(model, sentences)
    info = describe(str(path))
    assert "nonprojective" not in info["vocab_sizes"] and info["meta"]["nonprojective_skipped"] == 288
    shown = CliRunner().invoke(cli, ["info", str(path)])
    assert shown.exit_code == 0 and "nonprojective 1" not in shown.stdout


# ----------------------------------------------------------------------------- bf16: one copy of the weights
def test_bf16_for_inference_holds_one_copy_of_the_recurrent_matrices():
    """``tagger tag``/``evaluate`` apply the precision in place: each product uses the parameter
    itself, now bf16, and no float32 weights stay behind it."""
    from tagger.modules.precision import apply

    config = TaggerConfig(column="upos", layers=2, hidden=16, word_dim=8, char_dim=4)
    torch.manual_seed(0)
    model = SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, sample())).eval()
    fp32_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    fp32_tags = predict(model, sample())
    apply(model, "bf16", in_place=True)
    bf16_tags = predict(model, sample())
    held = sum(p.numel() * p.element_size() for p in model.parameters())
    recurrent = [(layer, name) for layer in model.rnn.layers for name in ("w_x", "w_h")]
    with torch.inference_mode():
        assert all(layer.weight(name) is getattr(layer, name) for layer, name in recurrent)
    assert all(getattr(layer, name).dtype == torch.bfloat16 for layer, name in recurrent)
    matrices = sum(getattr(layer, name).numel() for layer, name in recurrent)
    assert held == fp32_bytes - 2 * matrices  # 4 bytes -> 2 per recurrent weight
    assert sum(a == b for s, t in zip(fp32_tags, bf16_tags) for a, b in zip(s, t)) >= 0.9 * sum(map(len, fp32_tags))
    apply(model, "fp32")  # back to float32 (the rounded values), and it can train again
    assert all(getattr(layer, name).dtype == torch.float32 for layer, name in recurrent)
    model.train()
    model.loss(model(model.collate(sample())), model.collate(sample())).backward()


PEAK = """
import sys
import tagger.modules.precision as precision
import tagger.modules.recurrent as recurrent
precision.ROW_QUANTUM = recurrent.BATCH_QUANTUM = 1  # emulated bf16 is slow: no padded rows
from tagger.cli.main import main
# --on-error skip: both precisions through torch (fp32 on a small input otherwise takes the numpy path)
sys.argv = ["tagger", "tag", "--threads", "1", "--on-error", "skip", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(open("/proc/self/status").read().split("VmHWM:")[1].split()[0], file=sys.stderr)
"""


@pytest.mark.slow
def test_bf16_tagging_peaks_below_fp32(tmp_path):
    """Through ``tagger tag``, on a model whose recurrent matrices (35 MB in float32) outweigh
    the rest: bf16 holding them once peaks lower than fp32 (with float32 weights and bf16 copies
    it peaked ~17 MB higher). bf16 is emulated where the CPU has no bf16 products; memory is the same."""
    import subprocess
    import sys

    config = TaggerConfig(column="upos", layers=2, hidden=512, word_dim=16, char_dim=4)
    torch.manual_seed(0)
    path = tmp_path / "big.tagger"
    model_file.save(path, SkipLSTMTagger(config, SkipLSTMTagger.vocabs_from(config, sample())), {})
    text = tmp_path / "in.txt"
    text.write_text("The cat sat on the mat .\nDogs bark\n", encoding="utf-8")
    peaks = {}
    for precision in ("fp32", "bf16"):
        done = subprocess.run([sys.executable, "-c", PEAK, "--model", str(path), "--precision", precision, str(text),
                               "-o", str(tmp_path / f"{precision}.conllu")], capture_output=True, text=True, cwd=ROOT,
                              timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
        assert [len(s) for s in formats.read(str(tmp_path / f"{precision}.conllu"), "conllu")] == [7, 2], done.stderr
        peaks[precision] = int(done.stderr.split()[-1]) // 1024
    assert peaks["bf16"] < peaks["fp32"], peaks  # measured: 307 against 327 MB (344 with the copies)


def test_a_tagger_whose_every_tag_is_rare_is_refused_not_trained_to_output_padding():
    """CCG's rare_tag_count=10 on a tiny corpus made every tag RARE: the model then output
    '<pad>' for every word. Training must stop with one line saying what to lower."""
    sentences = [Sentence(["a", "b"], {"supertag": ["N", "S"]}, source="tiny.auto", line=1)]
    config = TaggerConfig(column="supertag", rare_tag_count=10)
    with pytest.raises(TaggerError, match="rare_tag_count") as error:
        SkipLSTMTagger.vocabs_from(config, sentences)
    assert str(error.value).startswith("tiny.auto") and "\n" not in str(error.value)
    assert sorted(SkipLSTMTagger.vocabs_from(TaggerConfig(column="supertag", rare_tag_count=1), sentences)["tags"][1:]) == ["N", "S"]


def test_labels_too_rare_to_output_are_counted_in_the_meta_and_a_note():
    """CCG's RARE class: the labels seen fewer than rare_tag_count times, and the words that carry
    them (never tagged right: the dev score's ceiling), are said before training and kept in the meta."""
    sentences = [Sentence(["a", "b", "c"], {"supertag": ["N", "N", "S/N"]}), Sentence(["d", "e"], {"supertag": ["N", "NP"]})]
    facts, notes = SkipLSTMTagger.training_meta(TaggerConfig(column="supertag", rare_tag_count=2), sentences)
    assert facts == {"rare_labels": {"supertag": {"labels": 2, "of_labels": 3, "words": 2, "of_words": 5}}}
    assert len(notes) == 1 and notes[0].startswith("supertag: 2 of its 3 labels are seen fewer than 2 times") and "40.00%" in notes[0]
    assert SkipLSTMTagger.training_meta(TaggerConfig(column="supertag", rare_tag_count=1), sentences) == ({}, [])
