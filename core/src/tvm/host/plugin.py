"""Hook implementations of the built-in host backend ``c`` (entry point ``c = tvm.host.plugin``).

Hooks only; the work is in the backend's other modules (the same layout as every backend):
``tags`` (the target kind), ``codegen`` (IR to C), ``compiler`` (C to a shared object),
``executable`` (the build contract and the Executable), ``runtime`` (ctypes).
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from .. import backend
from ..demo import KERNELS, make_case
from ..plugin import BackendInfo, DemoCase, hookimpl
from ..target import Target, TargetKind
from . import tags

__all__ = ["register_backend"]

NAME = "c"


@hookimpl
def tvm_backend_info() -> BackendInfo:
    return BackendInfo(name=NAME, api_range=">=2,<3", distribution="tvm-core",
                       description="host CPU: C compiled by the system C compiler (CC), "
                                   "loaded with ctypes")


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    # The package is tvm.host already, inside core; a tvm.backend.c alias would add nothing.
    return {}


@hookimpl
def tvm_target_kinds() -> list[TargetKind]:
    return list(tags.KINDS)


@hookimpl
def tvm_target_tags() -> dict[str, dict[str, Any]]:
    return dict(tags.TAGS)


@hookimpl
def tvm_builders() -> dict[str, str]:
    return {NAME: "tvm.host.executable:HostBuilder", tags.LLVM: "tvm.host.executable:LlvmBuilder"}


@hookimpl
def tvm_register_dispatch() -> None:
    from .dispatch import register_all  # noqa: PLC0415 - the variants import the tile-primitive machinery (~25 ms, 40 modules): loaded when the hook runs, not when tvm.host is imported

    register_all()


@hookimpl
def tvm_default_pipeline(target: Target) -> str | None:
    return "default" if target.kind.name in (NAME, tags.LLVM) else None


@hookimpl
def tvm_demo_cases() -> list[DemoCase]:
    return [make_case(kernel, NAME, backend=NAME) for kernel in KERNELS]


def register_backend() -> ModuleType | None:
    """Load this backend (idempotent): through its entry point when tvm-core is installed,
    else (a source checkout on PYTHONPATH) as an in-process plugin of tvm-core."""
    return backend.load_or_register(NAME, sys.modules[__name__], distribution="tvm-core")
