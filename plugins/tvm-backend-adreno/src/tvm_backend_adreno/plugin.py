"""The hooks of the Adreno backend (entry point ``adreno = "tvm_backend_adreno.plugin"``).

Hooks only: the seed's Adreno tags (``tags``), the ``adreno`` pipeline (``pipeline``) and the
hook that picks it for OpenCL targets carrying the ``adreno`` key. It needs the OpenCL backend
(``BackendInfo.requires``), which the loader loads first.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import tvm.backend
from tvm.plugin import BackendInfo, hookimpl
from tvm.target import Target, TargetKind

from . import tags
from ._version import __version__

__all__ = ["DISTRIBUTION", "NAME", "REQUIRES", "register_backend"]

NAME = "adreno"
DISTRIBUTION = "tvm-backend-adreno"
#: the backends whose kinds the Adreno tags use; they load before this one
REQUIRES = ("opencl", "vulkan")


@hookimpl
def tvm_backend_info() -> BackendInfo:
    return BackendInfo(
        name=NAME,
        version=__version__,
        api_range=">=2,<3",
        requires=REQUIRES,
        distribution=DISTRIBUTION,
        description="Qualcomm Adreno GPUs: the seed's tags and the adreno pipeline, built by "
                    "the OpenCL backend",
    )


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    # tvm.backend.adreno and tvm.tirx.adreno both name this package.
    return {NAME: "tvm_backend_adreno"}


@hookimpl
def tvm_target_kinds() -> list[TargetKind]:
    return list(tags.KINDS)


@hookimpl
def tvm_target_tags() -> dict[str, dict[str, Any]]:
    return dict(tags.TAGS)


@hookimpl
def tvm_tir_pipelines() -> dict[str, Any]:
    return {"adreno": _adreno_pipeline}


@hookimpl
def tvm_default_pipeline(target: Target) -> str | None:
    # The seed's special case, moved out of core: OpenCL targets of Adreno GPUs.
    return "adreno" if target.kind.name == "opencl" and tags.KEY in target.keys else None


def _adreno_pipeline(**kwargs: Any) -> tuple[Any, Any, Any]:
    from .pipeline import adreno_pipeline  # noqa: PLC0415 - it imports tvm.transform, kept out of `import tvm`

    return adreno_pipeline(**kwargs)


def register_backend() -> ModuleType | None:
    """Load this backend (idempotent; the seed's contract): through its entry point when the
    distribution is installed, else (a source checkout on PYTHONPATH) as an in-process plugin."""
    return tvm.backend.load_or_register(NAME, sys.modules[__name__], distribution=DISTRIBUTION,
                                        requires=REQUIRES)
