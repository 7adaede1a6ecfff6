"""Fixtures and markers of the Metal backend's tests."""

from __future__ import annotations

import shutil
import sys

import numpy as np
import pytest

import tvm.driver

# The Apple tags name an ``llvm`` host target, a kind of core's host backend (a source checkout
# on PYTHONPATH has no entry point that would load it).
tvm.driver.ensure_builtin_backends()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "macos: needs macOS with a Metal GPU and pyobjc-framework-Metal (skipped elsewhere)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from tvm_backend_metal.runtime import unavailable_reason

    reason = unavailable_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "macos" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Each session builds into its own cache, so tests never read a stale binary."""
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "tvm-cache"))


@pytest.fixture
def cxx() -> str:
    path = shutil.which("g++") or shutil.which("clang++")
    if path is None:
        pytest.skip("no C++ compiler (g++ or clang++) for the Metal shim")
    return path


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


IS_MACOS = sys.platform == "darwin"
