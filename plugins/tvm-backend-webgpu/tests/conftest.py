"""Fixtures of the WebGPU backend's tests.

Tests that run kernels take the ``webgpu_device`` fixture, which skips with the reason when wgpu
finds no adapter here (no Vulkan driver: ``scripts/system-deps.sh`` installs Mesa's lavapipe).
The session's compile cache is a temporary folder (tvm's pytest plugin).
"""

from __future__ import annotations

import pytest

import tvm.driver

tvm.driver.ensure_builtin_backends()


def pytest_configure(config: pytest.Config) -> None:
    manager = config.pluginmanager
    if not manager.has_plugin("tvm") and not manager.has_plugin("tvm.testing.plugin"):
        manager.import_plugin("tvm.testing.plugin")


@pytest.fixture
def webgpu_device() -> dict:
    from tvm_backend_webgpu import runtime

    reason = runtime.unavailable_reason()
    if reason is not None:
        pytest.skip(f"no WebGPU adapter: {reason}")
    return runtime.device_info()


@pytest.fixture
def rng():
    import numpy as np

    return np.random.default_rng(0)
