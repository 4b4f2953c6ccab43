"""Model files and configs across versions, the task registry and the declared model interface.

Files of format 1 are built here as the code of commit 989bd21 wrote them (pinned below: the
archive's keys in order, one flat config with the training fields first, the parser's
non-projective count among its vocabularies) from small models this code trains, and must tag
exactly as those models do. (That the new code also tags byte for byte as the old *code* did was
checked once on EWT test with models trained by 989bd21: docs/benchmarks.md, session 6.)
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from tagger import model_file
from tagger.cli.info import describe
from tagger.cli.main import cli
from tagger.config import TrainingConfig, build_configs, config_to_dict, resolve_preset
from tagger.corpus.records import Sentence
from tagger.errors import TaggerError
from tagger.formats.ptb import WSJ_SECTIONS
from tagger.models import MODELS, TASK_MODELS
from tagger.models.base import Model, members
from tagger.modules.precision import apply
from tagger.tasks import TASKS
from tagger.training import checkpoint
from tagger.training.run import Data, DataSpec, TrainRequest, _model_class, configs, overrides_of

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / "data" / "heldout.conllu"
#: The keys of a format-1 archive, in the order 989bd21 wrote them.
V1_KEYS = ["format_version", "tagger_version", "name", "config", "vocabs", "state_dict", "meta"]
V2_KEYS = {"format_version", "tagger_version", "name", "config", "training", "vocabs", "state_dict", "meta"}




def tag_heldout(model_path: Path) -> bytes:
    done = CliRunner().invoke(cli, ["tag", "--model", str(model_path), "--precision", "fp32", str(HELDOUT)],
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.stdout_bytes


def as_format_1(path: Path, old: Path) -> None:
    """Rewrite the model file at ``path`` into ``old`` as 989bd21's ``model_file.save`` wrote it."""
    archive = model_file.read_archive(path)
    vocabs = dict(archive["vocabs"])
    if "nonprojective_skipped" in archive["meta"]:  # the parser kept its count as a "vocabulary"
        vocabs["nonprojective"] = [str(archive["meta"]["nonprojective_skipped"])]
    values = [1, "0.1.0", archive["name"], {**archive["training"], **archive["config"]}, vocabs,
              archive["state_dict"], archive["meta"]]
    torch.save(dict(zip(V1_KEYS, values)), old)


@pytest.fixture(scope="module")
def old_files(tmp_path_factory):
    """task -> (a format-1 model file, what the model it was made from prints for data/heldout)."""
    folder = tmp_path_factory.mktemp("format-1")
    sizes = {"pos": ["--set", "layers=2", "--set", "word_dim=16", "--set", "char_dim=5"],
             "dep": ["--set", "word_dim=32", "--set", "tag_dim=32", "--set", "label_dim=32"]}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    files = {}
    try:
        for task, extra in sizes.items():
            new, old = folder / f"{task}.new", folder / f"{task}.old"
            done = CliRunner().invoke(cli, ["train", "--task", task, "--train", "data/sample.conllu", "--dev", str(HELDOUT),
                                            "--out", str(new), "--max-epochs", "3", "--set", "hidden=16", *extra, "--quiet"])
            assert done.exit_code == 0, done.output
            as_format_1(new, old)
            files[task] = (old, tag_heldout(new))
    finally:
        torch.set_num_threads(threads)
    return files


# ----------------------------------------------------------------------------- files of format 1
@pytest.mark.parametrize("task", ["pos", "dep"])
def test_a_format_1_file_loads_and_tags_byte_for_byte_as_its_model_did(task, old_files, one_thread):
    old, expected = old_files[task]
    archive = torch.load(old, weights_only=True)
    assert list(archive) == V1_KEYS and model_file.read_archive(old)["format_version"] == 1
    assert tag_heldout(old) == expected


@pytest.mark.parametrize("task", ["pos", "dep"])
def test_info_splits_the_flat_config_of_a_format_1_file(task, old_files):
    old = old_files[task][0]
    info = describe(str(old))
    assert info["format_version"] == 1 and info["model"] == TASK_MODELS[task]
    model_keys = {f.name for f in dataclasses.fields(MODELS[info["model"]].Config)}
    assert set(info["config"]) == model_keys
    assert set(info["training"]) == {f.name for f in dataclasses.fields(TrainingConfig)}
    assert info["training"]["max_epochs"] == 3
    shown = CliRunner().invoke(cli, ["info", str(old)])
    assert shown.exit_code == 0 and "model config" in shown.stdout and "training config" in shown.stdout
    as_json = json.loads(CliRunner().invoke(cli, ["info", "--json", str(old)]).stdout)
    assert as_json["training"]["max_epochs"] == 3


@pytest.mark.parametrize("task", ["pos", "dep"])
def test_a_file_saved_by_this_code_is_the_current_format_and_round_trips(task, old_files, tmp_path, one_thread):
    old, expected = old_files[task]
    model, meta = model_file.load(old)
    training = TrainingConfig(**describe(str(old))["training"])
    path = tmp_path / "resaved"
    model_file.save(path, model, meta, training)
    archive = model_file.read_archive(path)
    assert set(archive) == V2_KEYS and archive["format_version"] == model_file.FORMAT_VERSION == 3
    assert archive["config"] == config_to_dict(model.config) and archive["training"] == config_to_dict(training)
    assert tag_heldout(path) == expected
    info = describe(str(path))
    assert info["config"] == archive["config"] and info["training"] == archive["training"]


def test_a_file_without_a_training_config_says_so(old_files, tmp_path):
    model, meta = model_file.load(old_files["pos"][0])
    model_file.save(tmp_path / "m.tagger", model, meta)
    assert describe(str(tmp_path / "m.tagger"))["training"] is None
    shown = CliRunner().invoke(cli, ["info", str(tmp_path / "m.tagger")])
    assert shown.exit_code == 0 and "(not recorded)" in shown.stdout


def test_a_checkpoint_is_the_model_files_archive_plus_the_resume_state(old_files, tmp_path):
    model, _ = model_file.load(old_files["pos"][0])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    checkpoint.save(tmp_path, model, optimizer, {"epoch": 1}, TrainingConfig(lr=0.1))
    data = checkpoint.read(tmp_path)
    assert set(data) == V2_KEYS | {"optimizer", "trainer", "torch_rng"}
    assert data["training"]["lr"] == 0.1 and data["config"] == config_to_dict(model.config)


# ----------------------------------------------------------------------------- configs
def test_each_key_goes_to_the_dataclass_that_has_it_and_unknown_keys_list_both():
    cls = MODELS["skip_lstm"]
    config, training = build_configs(cls, cls.PRESETS, "fast", None, ["hidden=32", "lr=0.5", "batch_size=4"])
    assert (config.hidden, training.lr, training.batch_size, training.optimizer) == (32, 0.5, 4, "adam")
    assert not {f.name for f in dataclasses.fields(config)} & {f.name for f in dataclasses.fields(training)}
    with pytest.raises(TaggerError, match="unknown config key") as error:
        build_configs(cls, cls.PRESETS, "fast", None, ["hiden=3"])
    assert "hidden" in str(error.value) and "max_epochs" in str(error.value) and str(error.value).startswith("--set: ")


def test_the_parser_keeps_its_own_training_defaults_under_every_preset():
    cls = MODELS["transition_parser"]
    for name in cls.PRESETS:
        config, training = build_configs(cls, cls.PRESETS, name)
        if config.encoder != "none":  # contextual features (beyond the paper) train with Adam
            assert training.optimizer == "adam" and training.patience == 4, name
            continue
        assert (training.lr, training.momentum, training.batch_size, training.patience) == (0.05, 0.9, 8, 4), name
    assert build_configs(cls, cls.PRESETS, "lstm-full-bptt")[0].bptt == 0


ROW_KEYS = ("table", "case", "row", "paper_dev", "paper_test")  # a paper table's row (docs/zoo.md)
#: What a row of paper 004's parser tables adds: the paper's UAS, whether it reads the run's
#: vectors, the row it is bootstrapped from and the gates it copies (tagger.ablation).
PARSER_ROW_KEYS = ("paper_uas", "vectors", "bootstrap", "gates")


def test_presets_are_plain_data_resolved_through_based_on():
    for cls in MODELS.values():
        for name, preset in cls.PRESETS.items():
            assert set(preset) <= {"based_on", "description", "model", "training", *ROW_KEYS, *PARSER_ROW_KEYS}, name
            assert cls.name == "transition_parser" or not set(preset) & set(PARSER_ROW_KEYS), name
            assert "table" not in preset or set(ROW_KEYS) <= set(preset), name  # a table row says where it is from
            assert preset["description"] and preset.get("based_on", name) in cls.PRESETS
            model, training = resolve_preset(cls.PRESETS, name)
            assert set(training) <= {f.name for f in dataclasses.fields(TrainingConfig)}
    fast, cnn = resolve_preset(MODELS["skip_lstm"].PRESETS, "fast"), resolve_preset(MODELS["skip_lstm"].PRESETS, "fast-cnn")
    assert cnn == ({**fast[0], "char_cnn": 50, "char_cnn_width": 3}, fast[1])


def test_a_config_file_may_be_flat_or_split_into_model_and_training(tmp_path):
    cls = MODELS["skip_lstm"]
    flat, split, wrong = tmp_path / "flat.json", tmp_path / "split.json", tmp_path / "wrong.json"
    flat.write_text(json.dumps({"hidden": 24, "lr": 0.3}))
    split.write_text(json.dumps({"model": {"hidden": 24}, "training": {"lr": 0.3}}))
    wrong.write_text(json.dumps({"model": {"lr": 0.3}}))
    for file in (flat, split):
        config, training = build_configs(cls, cls.PRESETS, "fast", file)
        assert (config.hidden, training.lr) == (24, 0.3)
    with pytest.raises(TaggerError, match="unknown model config key.*lr") as error:
        build_configs(cls, cls.PRESETS, "fast", wrong)
    assert str(error.value).startswith(str(wrong))


# ----------------------------------------------------------------------------- tasks
def test_every_task_names_a_family_its_column_key_preset_metric_and_splits():
    metric_names = {"skip_lstm": "accuracy", "transition_parser": "LAS (no punct)", "seq2seq": "bracket F1",
                    "tokenizer": "boundary F1"}
    for name, task in TASKS.items():
        cls = MODELS[task.model]
        # a column key the family's config has, or none (tokenize learns from the text, not a column)
        assert task.name == name and task.column_key in {f.name for f in dataclasses.fields(cls.Config)} | {""}
        assert task.preset in cls.PRESETS and task.splits in WSJ_SECTIONS and task.metric == metric_names[task.model]
        build_configs(cls, cls.PRESETS, task.preset, defaults=task.defaults)  # the defaults are valid keys


def request_for(task: str, tmp_path: Path, **fields) -> TrainRequest:
    return TrainRequest(task=task, train=DataSpec("t"), dev=None, out=str(tmp_path / "m"), **fields)


def test_ccg_rare_tag_count_is_the_tasks_default_under_a_config_file_and_set(tmp_path):
    supertags = [Sentence(["a", "b"], {"supertag": ["N", "S"]})]
    data = Data(supertags, supertags, "dev")
    cls = MODELS["skip_lstm"]
    assert configs(request_for("ccg", tmp_path), cls, data)[0].rare_tag_count == 10
    assert configs(request_for("pos", tmp_path), cls, data)[0].rare_tag_count == 0
    file = tmp_path / "c.json"
    file.write_text(json.dumps({"rare_tag_count": 3}))
    assert configs(request_for("ccg", tmp_path, config_file=str(file)), cls, data)[0].rare_tag_count == 3
    assert configs(request_for("ccg", tmp_path, overrides=("rare_tag_count=2",)), cls, data)[0].rare_tag_count == 2
    assert configs(request_for("ccg", tmp_path), cls, data)[0].column == "supertag"  # the task's column from the data


def test_typed_request_fields_apply_before_set_which_wins(tmp_path):
    request = request_for("dep", tmp_path, arch="lstm", max_epochs=2, batch_size=3, patience=1, overrides=("patience=7",))
    assert overrides_of(request, "xpos") == ["tag_column=xpos", "arch=lstm", "max_epochs=2", "batch_size=3",
                                             "patience=1", "patience=7"]
    data = Data([], [], "dev")
    config, training = configs(request, MODELS["transition_parser"], data)
    assert (config.arch, training.max_epochs, training.batch_size, training.patience) == ("lstm", 2, 3, 7)


def test_a_family_that_cannot_learn_the_task_is_refused(tmp_path):
    with pytest.raises(TaggerError, match="cannot learn --task dep"):
        _model_class(request_for("dep", tmp_path, model="skip_lstm"))
    with pytest.raises(TaggerError, match="cannot learn --task pos"):
        _model_class(request_for("pos", tmp_path, model="transition_parser"))


# ----------------------------------------------------------------------------- the model interface
def test_both_families_implement_the_model_protocol(old_files):
    for task, (path, _) in old_files.items():
        model, _ = model_file.load(path)
        assert isinstance(model, Model), task
        for member in members():
            assert hasattr(type(model), member) or hasattr(model, member), (task, member)
        for flag in ("gives_distribution", "can_bootstrap", "can_lower_precision"):
            assert isinstance(getattr(type(model), flag), bool)


def test_a_capability_a_family_lacks_is_a_one_line_error(old_files):
    tagger, _ = model_file.load(old_files["pos"][0])
    parser, _ = model_file.load(old_files["dep"][0])
    assert tagger.gives_distribution and not tagger.can_bootstrap and tagger.can_lower_precision
    assert parser.can_bootstrap and not parser.gives_distribution and not parser.can_lower_precision
    with pytest.raises(TaggerError, match="cannot be bootstrapped"):
        tagger.bootstrap(parser)
    batch = parser.collate([Sentence(["a"], {"upos": ["X"]})], with_gold=False)
    with pytest.raises(TaggerError, match="gives no tag distribution"):
        parser.distribution(batch)
    with pytest.raises(TaggerError, match="float32 only"):
        parser.set_precision(torch.bfloat16)
    assert apply(parser, "bf16") is None  # stays float32, as before
    tagger.config = dataclasses.replace(tagger.config, vectors="init")  # (frozen vectors are projected: any size)
    with pytest.raises(TaggerError, match="add --set word_dim=7"):
        tagger.load_embeddings(["a"], torch.zeros(1, 7))
    assert tagger.pos_column(tagger.config) is None and parser.pos_column(parser.config) == "upos"
    assert tagger.pos_columns(tagger.config) == [] and parser.pos_columns(parser.config) == parser.input_columns


# ----------------------------------------------------------------------------- format 2 layouts
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("kind", ["gates", "hidden"])
def test_a_format_2_file_of_a_changed_layer_layout_gives_its_old_outputs(kind):
    """Files written by the code before format 3 (tests/fixtures/make_skip_format2.py) with the two
    configs whose layer layout changed (skip=gates: an unused g block; gate=hidden: γ read the
    input too) load and give the distributions the old code gave."""
    from tagger.corpus.records import Sentence

    model, _ = model_file.load(FIXTURES / f"skip-{kind}-format2.model")
    expected = json.loads((FIXTURES / "skip-format2-expected.json").read_text())[kind]
    sentences = [Sentence(words.split(), {}) for words in ("the dog runs fast", "a cat sleeps", "Dogs bark at 99 cats")]
    with torch.no_grad():
        probs = model.distribution(model.collate(sentences, with_gold=False))
    steps = probs.shape[1]
    for s, sentence in enumerate(sentences):
        for t in range(len(sentence.words)):
            assert probs[s, t].tolist() == pytest.approx(expected[s * steps + t], abs=2e-6), (kind, s, t)
    assert model_file.read_archive(FIXTURES / f"skip-{kind}-format2.model")["format_version"] == 2
