"""Fixtures of the OpenCL backend's tests.

Kernels run on this machine's OpenCL device (PoCL on a CPU: ``apt-get install
pocl-opencl-icd``, which ``scripts/system-deps.sh`` does). Tests that run kernels carry the
``opencl`` marker, whose probe is this backend's ``tvm_device_probes`` hook: without a device
they skip with the runtime's reason, and only the tests that need no device run.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import numpy as np
import pytest


def pytest_configure(config: pytest.Config) -> None:
    # Installed, tvm's pytest plugin loads through its pytest11 entry point; in a source
    # checkout the repository's conftest loads it, unless this folder is run on its own.
    config.addinivalue_line("markers", "opencl: needs an OpenCL device (PoCL will do)")
    manager = config.pluginmanager
    if not manager.has_plugin("tvm") and not manager.has_plugin("tvm.testing.plugin"):
        manager.import_plugin("tvm.testing.plugin")


@pytest.fixture(autouse=True, scope="session")
def _temporary_files_under_pytest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The sources of failing builds (kept so that their command can be re-run) go to pytest's
    temporary folder, which pytest prunes, rather than to /tmp."""
    saved = tempfile.tempdir
    tempfile.tempdir = str(tmp_path_factory.mktemp("tmp"))
    yield
    tempfile.tempdir = saved


@pytest.fixture
def cl_device() -> object:
    """The device kernels run on (tests that use it carry the ``opencl`` marker)."""
    from tvm_backend_opencl import runtime

    return runtime.device_for()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
