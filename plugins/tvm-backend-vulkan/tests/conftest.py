"""Fixtures of the Vulkan backend's tests.

Tests that run kernels take the ``vulkan_device`` fixture, which skips with the reason when no
Vulkan device is usable here (no loader, no driver: ``scripts/system-deps.sh`` installs Mesa's
lavapipe); tests that compile take ``spirv_tools``, which skips when glslangValidator or
spirv-val is missing. The session's compile cache is a temporary folder (tvm's pytest plugin).
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
def spirv_tools() -> None:
    from tvm_backend_vulkan.compiler import TOOLS, missing_tools

    missing = missing_tools()
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (Debian "
                    f"{', '.join(TOOLS[m] for m in missing)}; scripts/system-deps.sh)")


@pytest.fixture
def vulkan_device(spirv_tools: None) -> dict:
    from tvm_backend_vulkan import runtime

    reason = runtime.unavailable_reason()
    if reason is not None:
        pytest.skip(f"no Vulkan device: {reason}")
    return runtime.device_info()


@pytest.fixture
def rng():
    import numpy as np

    return np.random.default_rng(0)
