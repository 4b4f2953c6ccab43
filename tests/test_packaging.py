"""The package declares its licence in the form current setuptools wants, and ships it."""

from __future__ import annotations

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_license_is_an_spdx_string_and_the_file_ships():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"  # a table ({text = ...}) is deprecated by setuptools
    assert project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
