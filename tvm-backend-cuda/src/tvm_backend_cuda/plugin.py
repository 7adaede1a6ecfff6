"""The hooks of the CUDA backend: the only module tvm imports when it loads the backend.

Hooks only; the work is in the backend's other modules (the layout of every backend): ``tags``
(the target kind and the ``nvidia/*`` tags), ``script`` and ``op`` (``T.cuda``, ``T.ptx``,
``T.nvshmem`` and their intrinsics, declared in ``intrinsics/``), ``dispatch/`` (tile-primitive
variants), ``codegen`` (IR to CUDA C++), ``compiler`` (NVRTC), ``executable`` (the build
contract and the Executable), ``runtime`` (cuda.core). No SDK is imported here: cuda.*, numpy
and torch load when a kernel is compiled or run.

Entry point: ``cuda = "tvm_backend_cuda.plugin"`` in the group ``tvm.backends``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import tvm.backend
from tvm.plugin import BackendInfo, DemoCase, hookimpl

from . import __version__, dispatch, op, runtime, script, tags
from .layout import layout_names

__all__ = ["DISTRIBUTION", "KIND", "NAME", "register_backend"]

NAME = "cuda"
KIND = "cuda"
DISTRIBUTION = "tvm-backend-cuda"
PACKAGE = "tvm_backend_cuda"


@hookimpl
def tvm_backend_info() -> BackendInfo:
    return BackendInfo(
        name=NAME,
        version=__version__,
        api_range=">=2,<3",
        distribution=DISTRIBUTION,
        description="NVIDIA GPUs: CUDA C++ compiled by NVRTC to cubins (no toolkit needed), "
                    "launched with cuda.core",
    )


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    # tvm.backend.cuda and tvm.tirx.cuda both name this package.
    return {NAME: PACKAGE}


@hookimpl
def tvm_target_kinds() -> list[Any]:
    return list(tags.KINDS)


@hookimpl
def tvm_layout_names() -> dict[str, Any]:
    return layout_names()


@hookimpl
def tvm_target_tags() -> dict[str, dict[str, Any]]:
    return tags.TAGS


@hookimpl
def tvm_script_namespaces() -> dict[str, object]:
    return {"cuda": script.CUDANamespace(), "ptx": script.PTXNamespace(),
            "nvshmem": script.NVSHMEMNamespace()}


@hookimpl
def tvm_register_ops() -> None:
    op.register_ops()


@hookimpl
def tvm_register_dispatch() -> None:
    dispatch.register_all()


@hookimpl
def tvm_builders() -> dict[str, str]:
    return {KIND: "tvm_backend_cuda.executable:CudaBuilder"}


@hookimpl
def tvm_default_pipeline(target: Any) -> str | None:
    return "tirx" if target.kind.name == KIND else None


@hookimpl
def tvm_device_probes() -> dict[str, Callable[[], str | None]]:
    return {"gpu": _gpu_probe}


def _gpu_probe() -> str | None:
    return None if runtime.has_cuda_device() else f"no CUDA device: {runtime.no_device_reason()}"


@hookimpl
def tvm_demo_cases() -> list[DemoCase]:
    if not runtime.has_cuda_device():
        return []
    # Its kernels are built from TVMScript, and it brings tvm.demo and argparse: only when a GPU
    # is here and the demo runs, never at `import tvm`.
    from .demo import demo_cases  # noqa: PLC0415 - import-time budget: the demo's modules

    return demo_cases()


def register_backend() -> ModuleType | None:
    """Load this backend (idempotent; the seed's contract): through its entry point when the
    distribution is installed, else (a source checkout on PYTHONPATH) as an in-process plugin."""
    return tvm.backend.load_or_register(NAME, sys.modules[__name__], distribution=DISTRIBUTION)
