"""The hooks of the OpenCL backend (entry point ``opencl = "tvm_backend_opencl.plugin"``).

Hooks only; the work is in the backend's other modules (the layout every backend has): ``tags``
(the target kind), ``script`` and ``op`` (``T.opencl`` and its barriers), ``dispatch`` (the
work-group barrier and a tree reduction), ``codegen`` (IR to OpenCL C), ``compiler`` (the build
check), ``executable`` (the build contract and the Executable), ``runtime`` (pyopencl). Nothing
heavy is imported here (no numpy, no pyopencl).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import tvm.backend
from tvm.plugin import BackendInfo, DemoCase, hookimpl
from tvm.target import TargetKind

from . import dispatch, op, runtime, tags
from ._version import __version__
from .script import OpenCLNamespace

__all__ = ["DISTRIBUTION", "KIND", "NAME", "register_backend"]

NAME = "opencl"
KIND = tags.KIND
DISTRIBUTION = "tvm-backend-opencl"


@hookimpl
def tvm_backend_info() -> BackendInfo:
    return BackendInfo(
        name=NAME,
        version=__version__,
        api_range=">=2,<3",
        distribution=DISTRIBUTION,
        description="OpenCL devices: OpenCL C built by the driver (GPUs; CPUs through PoCL)",
    )


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    # tvm.backend.opencl and tvm.tirx.opencl both name this package.
    return {NAME: "tvm_backend_opencl"}


@hookimpl
def tvm_target_kinds() -> list[TargetKind]:
    return list(tags.KINDS)


@hookimpl
def tvm_target_tags() -> dict[str, dict[str, Any]]:
    return dict(tags.TAGS)


@hookimpl
def tvm_script_namespaces() -> dict[str, object]:
    return {"opencl": OpenCLNamespace()}


@hookimpl
def tvm_register_ops() -> None:
    op.register_ops()


@hookimpl
def tvm_register_dispatch() -> None:
    dispatch.register_all()


@hookimpl
def tvm_builders() -> dict[str, str]:
    # named, not imported: executable.py (and the codegen it imports) loads on the first build
    return {KIND: "tvm_backend_opencl.executable:OpenCLBuilder"}


@hookimpl
def tvm_device_probes() -> dict[str, Callable[[], str | None]]:
    return {"opencl": runtime.unavailable_reason}


@hookimpl
def tvm_demo_cases() -> list[DemoCase]:
    from .demo import demo_cases  # noqa: PLC0415 - TVMScript kernels and tvm.demo: only for `python -m tvm demo`

    return demo_cases()


def register_backend() -> ModuleType | None:
    """Load this backend (idempotent; the seed's contract): through its entry point when the
    distribution is installed, else (a source checkout on PYTHONPATH) as an in-process plugin."""
    return tvm.backend.load_or_register(NAME, sys.modules[__name__], distribution=DISTRIBUTION)
