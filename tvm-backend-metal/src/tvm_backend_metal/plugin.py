"""The hooks of the Metal backend (entry point ``metal = "tvm_backend_metal.plugin"``).

Hooks only; the work is in the backend's other modules (the layout every backend has):
``tags`` (the target kind and Apple GPU tags), ``script`` and ``op`` (``T.metal`` and the
``tirx.metal.*`` intrinsics), ``dispatch`` (tile-primitive variants), ``codegen`` (IR to MSL),
``compiler`` (checks and packages the MSL), ``executable`` (the build contract and the
Executable), ``runtime`` (the Apple GPU through pyobjc). Nothing heavy is imported here (no
numpy, no pyobjc): those load when a kernel runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import tvm.backend
from tvm.plugin import BackendInfo, DemoCase, hookimpl
from tvm.target import TargetKind

from . import __version__, dispatch, op, runtime, tags
from .script import MetalNamespace

__all__ = ["DISTRIBUTION", "KIND", "NAME", "register_backend"]

NAME = "metal"
KIND = tags.KIND
DISTRIBUTION = "tvm-backend-metal"


@hookimpl
def tvm_backend_info() -> BackendInfo:
    return BackendInfo(
        name=NAME,
        version=__version__,
        api_range=">=2,<3",
        distribution=DISTRIBUTION,
        description="Apple GPUs: Metal Shading Language (runs on macOS; checked and emulated "
                    "on the CPU elsewhere)",
    )


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    # tvm.backend.metal and tvm.tirx.metal both name this package.
    return {NAME: "tvm_backend_metal"}


@hookimpl
def tvm_target_kinds() -> list[TargetKind]:
    return list(tags.KINDS)


@hookimpl
def tvm_target_tags() -> dict[str, dict[str, Any]]:
    return dict(tags.TAGS)


@hookimpl
def tvm_script_namespaces() -> dict[str, object]:
    return {"metal": MetalNamespace()}


@hookimpl
def tvm_register_ops() -> None:
    op.register_ops()


@hookimpl
def tvm_register_dispatch() -> None:
    dispatch.register_all()


@hookimpl
def tvm_builders() -> dict[str, str]:
    # named, not imported: executable.py (and the codegen it imports) loads on the first build
    return {KIND: "tvm_backend_metal.executable:MetalBuilder"}


@hookimpl
def tvm_device_probes() -> dict[str, Callable[[], str | None]]:
    return {"macos": runtime.unavailable_reason}


@hookimpl
def tvm_demo_cases() -> list[DemoCase]:
    # The demo brings tvm.demo and argparse and builds its kernels from TVMScript: only when the
    # demo runs, never at `import tvm`.
    from .demo import demo_cases  # noqa: PLC0415 - import-time budget: the demo's modules

    return demo_cases()


def register_backend() -> ModuleType | None:
    """Load this backend (idempotent; the seed's contract): through its entry point when the
    distribution is installed, else (a source checkout on PYTHONPATH) as an in-process plugin."""
    return tvm.backend.load_or_register(NAME, sys.modules[__name__], distribution=DISTRIBUTION)
