"""The hooks of the example backend: the only module tvm imports when it loads the backend.

Hooks only; the work is in the backend's other modules, the layout every backend has:

* ``tags``: the target kind ``example`` and its tags, as data;
* ``op`` and ``script``: the intrinsic ``tirx.example.fma`` and the ``T.example`` namespace;
* ``dispatch``: the scope barrier and a tile-primitive variant; ``pipeline``: the TIR pipeline;
* ``codegen`` (IR to C), ``compiler`` (C to a shared object), ``executable`` (the build
  contract: options, builder, Executable), ``runtime`` (device access: ctypes).

Keep this module cheap: no SDK import at the top (``import tvm`` must stay fast).
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import tvm.backend
from tvm.demo import KERNELS, make_case
from tvm.plugin import BackendInfo, DemoCase, hookimpl
from tvm.target import Target, TargetKind

from . import dispatch, op, tags
from ._version import __version__
from .pipeline import example_pipeline
from .script import ExampleNamespace

__all__ = ["DISTRIBUTION", "KIND", "NAME", "register_backend"]

NAME = "example"
KIND = tags.KIND
DISTRIBUTION = "tvm-backend-example"


@hookimpl
def tvm_backend_info() -> BackendInfo:
    # api_range: the plugin-API versions this backend was written against (core has 2).
    return BackendInfo(
        name=NAME,
        version=__version__,
        api_range=">=2,<3",
        distribution=DISTRIBUTION,
        description="a minimal example backend (template): C for this CPU, run with ctypes",
    )


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    # tvm.backend.example and tvm.tirx.example both name this package.
    return {NAME: "tvm_backend_example"}


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
def tvm_script_namespaces() -> dict[str, object]:
    return {"example": ExampleNamespace()}


@hookimpl
def tvm_register_dispatch() -> None:
    dispatch.register_all()


@hookimpl
def tvm_tir_pipelines() -> dict[str, Any]:
    return {"example": example_pipeline}


@hookimpl
def tvm_builders() -> dict[str, str]:
    # named, not imported: executable.py (and the codegen it imports) loads on the first build
    return {KIND: "tvm_backend_example.executable:ExampleBuilder"}


@hookimpl
def tvm_default_pipeline(target: Target) -> str | None:
    # Broadcast to every backend: answer only for our own targets.
    return "example" if target.kind.name == KIND else None


@hookimpl
def tvm_demo_cases() -> list[DemoCase]:
    # Rows of `python -m tvm demo`: core's demo kernels, built for and run on the demo board.
    return [make_case(kernel, "example/demo-board", backend=NAME) for kernel in KERNELS]


def register_backend() -> ModuleType | None:
    """Load this backend (idempotent; the seed's contract): through its entry point when the
    distribution is installed, else (a source checkout on PYTHONPATH) as an in-process plugin."""
    return tvm.backend.load_or_register(NAME, sys.modules[__name__], distribution=DISTRIBUTION)
