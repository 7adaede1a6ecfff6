"""The hooks of the Hexagon backend (entry point ``hexagon = "tvm_backend_hexagon.plugin"``).

Hooks only; the work is in the backend's other modules (the layout every backend has): ``tags``
(the target kind and the seed's Hexagon tags), ``script`` and ``op`` (none: the seed has no
Hexagon ops), ``dispatch`` (serial threads), ``pipeline`` (no host/device split), ``codegen``
(IR to C), ``compiler`` (C to a Hexagon object), ``executable`` (the build contract and the
Executable), ``runtime`` (running needs the Hexagon SDK).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import tvm.backend
from tvm.plugin import BackendInfo, hookimpl
from tvm.target import Target, TargetKind

from . import dispatch, op, tags
from ._version import __version__
from .pipeline import hexagon_pipeline

__all__ = ["DISTRIBUTION", "KIND", "NAME", "register_backend"]

NAME = "hexagon"
KIND = tags.KIND
DISTRIBUTION = "tvm-backend-hexagon"


@hookimpl
def tvm_backend_info() -> BackendInfo:
    return BackendInfo(
        name=NAME,
        version=__version__,
        api_range=">=2,<3",
        distribution=DISTRIBUTION,
        description="Qualcomm Hexagon DSPs: C compiled to Hexagon objects (running needs the SDK)",
    )


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    # tvm.backend.hexagon and tvm.tirx.hexagon both name this package.
    return {NAME: "tvm_backend_hexagon"}


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
def tvm_tir_pipelines() -> dict[str, Any]:
    return {"hexagon": hexagon_pipeline}


@hookimpl
def tvm_default_pipeline(target: Target) -> str | None:
    # Broadcast to every backend: answer only for our own targets.
    return "hexagon" if target.kind.name == KIND else None


@hookimpl
def tvm_builders() -> dict[str, str]:
    # named, not imported: executable.py (and the codegen it imports) loads on the first build
    return {KIND: "tvm_backend_hexagon.executable:HexagonBuilder"}


@hookimpl
def tvm_device_probes() -> dict[str, Callable[[], str | None]]:
    return {"hexagon_cc": _compiler_probe}


def _compiler_probe() -> str | None:
    from .compiler import compiler_unavailable_reason  # noqa: PLC0415 - compiler.py imports subprocess; probes run only under pytest

    return compiler_unavailable_reason()


def register_backend() -> ModuleType | None:
    """Load this backend (idempotent; the seed's contract): through its entry point when the
    distribution is installed, else (a source checkout on PYTHONPATH) as an in-process plugin."""
    return tvm.backend.load_or_register(NAME, sys.modules[__name__], distribution=DISTRIBUTION)
