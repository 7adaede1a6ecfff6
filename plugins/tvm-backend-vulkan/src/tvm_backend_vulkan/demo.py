"""The Vulkan rows of the main job (``python -m tvm demo``): core's workgroup demo kernels
(:mod:`tvm.shader.demo`: vector add, row softmax, tiled matmul in shared memory) where a Vulkan
device and the SPIR-V tools are present (lavapipe counts: the note says which device ran them).
"""

from __future__ import annotations

from tvm.backend import sdk

from . import runtime
from .compiler import missing_tools

__all__ = ["TARGET", "demo_cases"]

TARGET = "vulkan"


def demo_cases() -> list[sdk.DemoCase]:
    """A row per kernel where kernels can run here (the tools on PATH, a device)."""
    if missing_tools() or not runtime.is_available():
        return []
    name = runtime.device_info()["name"].split(" (")[0]
    return sdk.shader_demo_cases(TARGET, backend=f"vulkan ({name})")
