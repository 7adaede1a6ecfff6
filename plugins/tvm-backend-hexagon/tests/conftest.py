"""Fixtures of the Hexagon backend's tests.

Tests that compile carry the ``hexagon_cc`` marker, whose probe is this backend's
``tvm_device_probes`` hook: without a Hexagon C compiler (the Hexagon SDK, or an LLVM clang
with the Hexagon target: ``hipcc`` brings ``clang-15``) they skip with the reason.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "hexagon_cc: needs a C compiler for Hexagon")
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
