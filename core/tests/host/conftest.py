from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """Every test gets its own compile cache."""
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    yield
