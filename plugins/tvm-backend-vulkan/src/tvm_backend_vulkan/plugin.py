"""The hooks of the Vulkan backend (entry point ``vulkan = "tvm_backend_vulkan.plugin"``).

Hooks only; the work is in the backend's other modules (the layout every backend has):
``tags`` (the target kind), ``script`` and ``op`` (no namespace; the GLSL builtins the variants
call), ``dispatch`` (the workgroup barrier of core's variants), ``codegen`` (IR to GLSL),
``compiler`` (GLSL to SPIR-V, spirv-val), ``executable`` (the build contract and the
Executable), ``runtime`` (the device, through the vulkan binding). Nothing heavy is imported
here (no numpy, no vulkan): those load when a kernel compiles or runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import tvm.backend
from tvm.plugin import BackendInfo, DemoCase, hookimpl
from tvm.target import TargetKind

from . import dispatch, runtime, tags
from ._version import __version__

__all__ = ["DISTRIBUTION", "KIND", "NAME", "register_backend"]

NAME = "vulkan"
KIND = tags.KIND
DISTRIBUTION = "tvm-backend-vulkan"


@hookimpl
def tvm_backend_info() -> BackendInfo:
    return BackendInfo(
        name=NAME,
        version=__version__,
        api_range=">=2,<3",
        distribution=DISTRIBUTION,
        description="Vulkan compute: GLSL compiled to SPIR-V (glslang), checked by spirv-val, "
                    "run through the vulkan binding (lavapipe on a CPU)",
    )


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    # tvm.backend.vulkan and tvm.tirx.vulkan both name this package.
    return {NAME: "tvm_backend_vulkan"}


@hookimpl
def tvm_target_kinds() -> list[TargetKind]:
    return list(tags.KINDS)


@hookimpl
def tvm_target_tags() -> dict[str, dict[str, Any]]:
    return dict(tags.TAGS)


@hookimpl
def tvm_register_dispatch() -> None:
    dispatch.register_all()


@hookimpl
def tvm_builders() -> dict[str, str]:
    # named, not imported: executable.py (and the codegen it imports) loads on the first build
    return {KIND: "tvm_backend_vulkan.executable:VulkanBuilder"}


@hookimpl
def tvm_device_probes() -> dict[str, Callable[[], str | None]]:
    return {"vulkan": runtime.unavailable_reason}


@hookimpl
def tvm_demo_cases() -> list[DemoCase]:
    from .demo import demo_cases  # noqa: PLC0415 - TVMScript kernels and tvm.demo: only for `python -m tvm demo`

    return demo_cases()


def register_backend() -> ModuleType | None:
    """Load this backend (idempotent; the seed's contract): through its entry point when the
    distribution is installed, else (a source checkout on PYTHONPATH) as an in-process plugin."""
    return tvm.backend.load_or_register(NAME, sys.modules[__name__], distribution=DISTRIBUTION)
