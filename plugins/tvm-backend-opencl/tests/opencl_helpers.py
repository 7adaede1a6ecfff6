"""Helpers of the OpenCL backend's tests: load the backend, compile for OpenCL."""

from __future__ import annotations

from typing import Any

import tvm_backend_opencl

tvm_backend_opencl.register_backend()  # a source checkout has no entry point: load in-process

TARGET = "opencl"


def compile_opencl(func: Any, target: Any = TARGET, **options: Any) -> Any:
    import tvm

    return tvm.compile(func, target=target, **options)
