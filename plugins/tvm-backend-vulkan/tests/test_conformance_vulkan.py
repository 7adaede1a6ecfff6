"""The conformance kit (tvm.testing.conformance) run against the Vulkan backend: every kernel
compiles to SPIR-V that passes spirv-val, and runs on the Vulkan device (lavapipe on a CPU)
against numpy."""

from __future__ import annotations

from typing import Any

import pytest
from vk_helpers import TARGET

from tvm.testing.conformance import BackendConformance


@pytest.mark.usefixtures("spirv_tools")
class TestVulkanConformance(BackendConformance):
    target = TARGET

    def run_unavailable_reason(self) -> str | None:
        from tvm_backend_vulkan.runtime import unavailable_reason

        return unavailable_reason()

    def check_compiled(self, ex: Any) -> None:
        from tvm_backend_vulkan.compiler import validate_spirv

        assert ex.kernel_names, "no kernel compiled"
        for name in ex.kernel_names:
            validate_spirv(ex.spirv(name), name=name)
