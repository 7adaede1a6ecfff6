"""WebGPU's compile stage: WGSL -> the shader modules the WebGPU implementation compiles when a
pipeline is made.

WGSL has no offline compiler to run at build time: the browser, or wgpu-native here, compiles
each module when the executable first makes its pipeline (:mod:`.runtime`). So this stage
packages the WGSL (the binary is the source as UTF-8; nothing is worth caching, the builder sets
``cached = False``) and, with ``check=True``, has wgpu-native's front end (naga) parse and
validate every module first, raising :class:`~tvm.error.CompileError` with its report.
"""

from __future__ import annotations

from . import runtime
from .codegen import split_modules

__all__ = ["check_wgsl", "package_wgsl"]


def check_wgsl(source: str) -> None:
    """Parse and validate every module of ``source`` with wgpu-native (needs a WebGPU device:
    raises the runtime's WebGPURuntimeUnavailable without one)."""
    for name, module in split_modules(source).items():
        runtime.check_module(module, name)


def package_wgsl(source: str, *, check: bool = False) -> bytes:
    """The binary of a WGSL module set: its source as UTF-8, validated first when ``check``."""
    if check:
        check_wgsl(source)
    return source.encode("utf-8")
