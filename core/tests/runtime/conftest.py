from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "host"))


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """Every test gets its own compile cache."""
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    yield
