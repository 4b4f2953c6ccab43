"""Shared test fixtures."""

from pathlib import Path

import pytest

#: The real corpora (../shared/data), read in place; tests that need them skip when absent.
SHARED = Path(__file__).parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """Path of ``shared/data``; skips the test if it is not there."""
    if not SHARED.is_dir():
        pytest.skip(f"shared data not found at {SHARED}")
    return SHARED
