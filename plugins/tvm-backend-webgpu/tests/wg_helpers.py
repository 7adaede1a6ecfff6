"""Helpers of the WebGPU backend's tests: load the backend, compile for WebGPU, and have
wgpu-native validate every WGSL module of the result where an adapter exists."""

from __future__ import annotations

from typing import Any

import tvm_backend_webgpu

tvm_backend_webgpu.register_backend()  # a source checkout has no entry point: load in-process

TARGET = "webgpu"
SUBGROUPS = {"kind": "webgpu", "supports_subgroups": True}


def compile_webgpu(func: Any, target: Any = TARGET, **options: Any) -> Any:
    """``tvm.compile`` for WebGPU; every WGSL module passes wgpu-native's validation."""
    import tvm

    return tvm.compile(func, target=target, check=True, **options)
