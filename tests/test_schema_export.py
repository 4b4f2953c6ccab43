"""One schema, one exporter (issue 32): a model's config and the arrays the fast path computes it
from are read without torch, by the family's own config class and exporter, from a model file's
plain state dict or from a live model's ``state_dict()`` alike (as spaCy's ``get_c_weights``)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import torch

from tagger import archive, model_file
from tagger.models.skip_lstm import export as tagger_export
from tagger.models.skip_lstm.config import TaggerConfig, supports_fast_path
from tagger.models.tokenizer import Tokenizer, TokenizerConfig
from tagger.models.tokenizer import export as tokenizer_export


def _same(a, b) -> None:
    """Two exports hold the same arrays, bit for bit (dataclasses, lists, tuples, arrays)."""
    if dataclasses.is_dataclass(a):
        assert type(a) is type(b)
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name))
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    else:
        assert a == b


def test_configs_and_exporters_import_without_torch():
    code = ("import sys; import tagger.models.skip_lstm.config, tagger.models.skip_lstm.export, "
            "tagger.models.tokenizer.export, tagger.modules.cellspec, tagger.archive, tagger.runtime.skip_lstm, "
            "tagger.runtime.tokenizer; from tagger.models.skip_lstm import TaggerConfig, RARE; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_cellspec_is_one_class_wherever_it_is_imported():
    from tagger.modules import cellspec, recurrent

    assert recurrent.CellSpec is cellspec.CellSpec and recurrent.GATES is cellspec.GATES
    assert TaggerConfig().cell_spec == cellspec.CellSpec("lstm", "output", "recurrent")


def test_a_live_taggers_state_dict_exports_the_arrays_of_its_file(sample_tagger):
    model, _ = model_file.load(sample_tagger)
    plain = archive.read(sample_tagger)
    config = TaggerConfig(**plain["config"])
    assert supports_fast_path(config) and config == model.config
    for packed in ("", "bf16", "f32"):
        from_file = tagger_export.export(config, plain["vocabs"], plain["state_dict"], packed=packed)
        live = tagger_export.export(model.config, model.vocabs, model.state_dict(), packed=packed)
        _same(from_file, live)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    tagger_export.export(model.config, model.vocabs, model.state_dict())
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())  # the live weights untouched


def test_the_exporter_refuses_weights_of_another_configuration(sample_tagger):
    plain = archive.read(sample_tagger)
    config = TaggerConfig(**plain["config"])
    state = dict(plain["state_dict"])
    state.pop("output.bias")
    try:
        tagger_export.export(config, plain["vocabs"], state)
    except ValueError:
        pass
    else:
        raise AssertionError("weights missing: not refused")


def test_a_live_tokenizers_state_dict_exports_the_arrays_of_its_file(tmp_path):
    torch.manual_seed(0)
    config = TokenizerConfig(hidden=8, layers=2, char_dim=4, category_dim=3)
    model = Tokenizer(config, {"chars": ["<pad>", "<unk>", "a", "b", " "]}).eval()
    path = tmp_path / "tok.model"
    model_file.save(path, model, {})
    plain = archive.read(path)
    _same(tokenizer_export.export(TokenizerConfig(**plain["config"]), plain["state_dict"]),
          tokenizer_export.export(model.config, model.state_dict()))


def test_the_torch_free_reader_gives_what_model_file_reads(sample_tagger):
    plain = archive.read(sample_tagger)
    read = model_file.read_archive(sample_tagger)
    assert set(plain) == set(read) and plain["config"] == read["config"] and plain["vocabs"] == read["vocabs"]
    assert all(np.array_equal(plain["state_dict"][k], v.numpy()) for k, v in read["state_dict"].items())
    assert archive.read(sample_tagger, peek=True)["state_dict"].keys() == read["state_dict"].keys()


def test_a_full_read_copies_every_container_of_the_peek_and_hands_each_tensor_to_the_reader():
    """``archive._filled``: the peek's plain data with each ``Unread`` replaced by what the reader
    gives, every list, tuple, dict (kind kept) and set copied, other values as they are."""
    import collections

    from tagger.archive import Unread, _filled

    tensor = Unread("0", "float32", 0, (2,), (1,))
    peek = {"vocabs": {"words": ["a", "b"], "tags": ("X",)}, "seen": {"a"}, "sets": [{"b"}],
            "state_dict": collections.OrderedDict([("w", tensor), ("pair", [tensor, 3])])}
    read = []
    full = _filled(peek, lambda t: read.append(t) or f"array {t.key}")
    assert full == {"vocabs": {"words": ["a", "b"], "tags": ("X",)}, "seen": {"a"}, "sets": [{"b"}],
                    "state_dict": collections.OrderedDict([("w", "array 0"), ("pair", ["array 0", 3])])}
    assert read == [tensor, tensor] and type(full["state_dict"]) is collections.OrderedDict
    assert full["vocabs"]["words"] is not peek["vocabs"]["words"] and full["seen"] is not peek["seen"]
    assert full["vocabs"] is not peek["vocabs"] and full["sets"][0] is not peek["sets"][0]
    assert peek["state_dict"]["w"] is tensor
