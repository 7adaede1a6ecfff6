"""The hooks of the ROCm backend (entry point ``rocm = "tvm_backend_rocm.plugin"``).

Hooks only; the work is in the backend's other modules (the layout every backend has): ``tags``
(the target kind and AMD GPU tags), ``script`` and ``op`` (none: the seed has no ROCm ops),
``dispatch`` (the barriers of core's fallback), ``codegen`` (IR to HIP), ``compiler`` (hipcc),
``executable`` (the build contract and the Executable), ``runtime`` (no launcher yet).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import tvm.backend
from tvm.plugin import BackendInfo, hookimpl
from tvm.target import TargetKind

from . import dispatch, op, tags
from ._version import __version__

__all__ = ["DISTRIBUTION", "KIND", "NAME", "register_backend"]

NAME = "rocm"
KIND = tags.KIND
DISTRIBUTION = "tvm-backend-rocm"


@hookimpl
def tvm_backend_info() -> BackendInfo:
    return BackendInfo(
        name=NAME,
        version=__version__,
        api_range=">=2,<3",
        distribution=DISTRIBUTION,
        description="AMD GPUs: HIP C++ compiled to code objects by hipcc (no launcher yet)",
    )


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    # tvm.backend.rocm and tvm.tirx.rocm both name this package.
    return {NAME: "tvm_backend_rocm"}


@hookimpl
def tvm_target_kinds() -> list[TargetKind]:
    return list(tags.KINDS)


@hookimpl
def tvm_target_tags() -> dict[str, dict[str, Any]]:
    return dict(tags.TAGS)


@hookimpl
def tvm_register_ops() -> None:
    op.register_ops()


@hookimpl
def tvm_register_dispatch() -> None:
    dispatch.register_all()


@hookimpl
def tvm_builders() -> dict[str, str]:
    # named, not imported: executable.py (and the codegen it imports) loads on the first build
    return {KIND: "tvm_backend_rocm.executable:RocmBuilder"}


@hookimpl
def tvm_device_probes() -> dict[str, Callable[[], str | None]]:
    return {"hipcc": _hipcc_probe}


def _hipcc_probe() -> str | None:
    from .compiler import hipcc_unavailable_reason  # noqa: PLC0415 - compiler.py imports subprocess; probes run only under pytest

    return hipcc_unavailable_reason()


def register_backend() -> ModuleType | None:
    """Load this backend (idempotent; the seed's contract): through its entry point when the
    distribution is installed, else (a source checkout on PYTHONPATH) as an in-process plugin."""
    return tvm.backend.load_or_register(NAME, sys.modules[__name__], distribution=DISTRIBUTION)
