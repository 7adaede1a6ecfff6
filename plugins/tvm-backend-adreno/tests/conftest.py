"""Fixtures of the Adreno backend's tests: Adreno's OpenCL kernels run on this machine's OpenCL
device (PoCL on a CPU) through the OpenCL backend; tests that run one carry the ``opencl``
marker, whose probe is the OpenCL backend's."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "opencl: needs an OpenCL device (PoCL will do)")
    # Installed, tvm's pytest plugin loads through its pytest11 entry point; in a source
    # checkout the repository's conftest loads it, unless this folder is run on its own.
    manager = config.pluginmanager
    if not manager.has_plugin("tvm") and not manager.has_plugin("tvm.testing.plugin"):
        manager.import_plugin("tvm.testing.plugin")
