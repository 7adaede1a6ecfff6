"""Fixtures of the Metal backend's tests.

The ``macos`` marker and its skip come from tvm's pytest plugin, through this backend's
``tvm_device_probes`` hook, and so does the session's compile cache (a temporary folder: the
emulator's objects never land in the user's cache).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator

import numpy as np
import pytest

import tvm.backend
from tvm_backend_metal import register_backend

# The Apple tags name an ``llvm`` host target, a kind of core's host backend, and every test
# needs this backend: a source checkout on PYTHONPATH has no entry point that would load them.
tvm.backend.ensure_builtin_backends()
register_backend()


def pytest_configure(config: pytest.Config) -> None:
    # Installed, tvm's pytest plugin loads through its pytest11 entry point; in a source
    # checkout the repository's conftest loads it, unless this folder is run on its own.
    manager = config.pluginmanager
    if not manager.has_plugin("tvm") and not manager.has_plugin("tvm.testing.plugin"):
        manager.import_plugin("tvm.testing.plugin")


@pytest.fixture(autouse=True, scope="session")
def _temporary_files_under_pytest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The sources of failing compiles (kept so that their command can be re-run) go to pytest's
    temporary folder, which pytest prunes, rather than to /tmp."""
    saved = tempfile.tempdir
    tempfile.tempdir = str(tmp_path_factory.mktemp("tmp"))
    yield
    tempfile.tempdir = saved


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
