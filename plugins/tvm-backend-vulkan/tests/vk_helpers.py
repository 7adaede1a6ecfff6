"""Helpers of the Vulkan backend's tests: load the backend, compile for Vulkan, and check every
SPIR-V module of the result with spirv-val once more (the compile stage already did)."""

from __future__ import annotations

from typing import Any

import tvm_backend_vulkan

tvm_backend_vulkan.register_backend()  # a source checkout has no entry point: load in-process

TARGET = "vulkan"


def compile_vulkan(func: Any, target: Any = TARGET, **options: Any) -> Any:
    """``tvm.compile`` for Vulkan; every kernel's SPIR-V passes spirv-val."""
    import tvm
    from tvm_backend_vulkan.compiler import validate_spirv

    ex = tvm.compile(func, target=target, **options)
    for name in ex.kernel_names:
        validate_spirv(ex.spirv(name), name=name)
    return ex
