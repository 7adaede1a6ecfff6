"""The WebGPU rows of the main job (``python -m tvm demo``): core's workgroup demo kernels
(:mod:`tvm.shader.demo`: vector add, row softmax, tiled matmul in shared memory) where wgpu
finds an adapter (lavapipe counts: the note says which adapter ran them).
"""

from __future__ import annotations

from tvm.backend import sdk

from . import runtime

__all__ = ["TARGET", "demo_cases"]

TARGET = "webgpu"


def demo_cases() -> list[sdk.DemoCase]:
    """A row per kernel where kernels can run here (wgpu installed and an adapter found)."""
    if not runtime.is_available():
        return []
    name = runtime.device_info()["name"].split(" (")[0]
    return sdk.shader_demo_cases(TARGET, backend=f"webgpu ({name})")
