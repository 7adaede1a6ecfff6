"""Helpers of the Metal backend's tests: load the backend, compile for Metal, check the MSL."""

from __future__ import annotations

from typing import Any

import tvm_backend_metal

tvm_backend_metal.register_backend()  # a source checkout has no entry point: load in-process

TARGET = "apple/m1-gpu"


def compile_metal(func: Any, target: str = TARGET, **options: Any) -> Any:
    """``tvm.compile`` for Metal, with the shim syntax check every test kernel must pass."""
    import tvm

    ex = tvm.compile(func, target=target, **options)
    ex.check_msl()
    return ex
