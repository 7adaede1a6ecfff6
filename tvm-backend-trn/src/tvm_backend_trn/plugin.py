"""The hooks of the Trainium backend (entry point ``trn = "tvm_backend_trn.plugin"``).

Hooks only; the work is in the backend's other modules (the layout every backend has):
``tags`` (the target kind and tags), ``script`` and ``op`` (``T.nki`` and the ``tirx.nki.*``
intrinsics), ``layout``, ``dispatch``, ``transform`` and ``pipeline`` (the ``trn`` pipeline),
``codegen`` (IR to the instruction form and NKI source), ``compiler`` (the instruction form to
the payload), ``executable`` (the build contract and the Executable), ``runtime`` (the
simulator). numpy and ml_dtypes are imported only when a kernel is simulated.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import Any

import tvm.backend
from tvm.plugin import BackendInfo, DemoCase, hookimpl
from tvm.target import Target, TargetKind

from . import __version__, dispatch, layout, op, tags
from .script import NKINamespace

__all__ = ["DISTRIBUTION", "KIND", "NAME", "register_backend"]

NAME = "trn"
KIND = tags.KIND
DISTRIBUTION = "tvm-backend-trn"


@hookimpl
def tvm_backend_info() -> BackendInfo:
    return BackendInfo(name=NAME, version=__version__, api_range=">=2,<3",
                       distribution=DISTRIBUTION,
                       description="AWS Trainium: NKI source, run in a numpy simulator of the "
                                   "NKI instructions")


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    return {NAME: "tvm_backend_trn"}


@hookimpl
def tvm_target_kinds() -> list[TargetKind]:
    return list(tags.KINDS)


@hookimpl
def tvm_target_tags() -> dict[str, dict[str, Any]]:
    return dict(tags.TAGS)


@hookimpl
def tvm_script_namespaces() -> dict[str, object]:
    return {"nki": NKINamespace()}


@hookimpl
def tvm_register_ops() -> None:
    layout.register_axes()
    op.register_ops()


@hookimpl
def tvm_register_dispatch() -> None:
    dispatch.register_all()


@hookimpl
def tvm_tir_pipelines() -> dict[str, Any]:
    return {"trn": _trn_pipeline}


def _trn_pipeline(**kwargs: Any) -> tuple[Any, Any, Any]:
    # The pass machinery (tvm.transform, tvm.tirx.transform and this backend's passes) loads
    # when a pipeline is built, not at `import tvm`.
    from .pipeline import trn_pipeline  # noqa: PLC0415 - import-time budget: the passes

    return trn_pipeline(**kwargs)


@hookimpl
def tvm_builders() -> dict[str, str]:
    # named, not imported: executable.py (and the codegen it imports) loads on the first build
    return {KIND: "tvm_backend_trn.executable:TrnBuilder"}


@hookimpl
def tvm_default_pipeline(target: Target) -> str | None:
    return "trn" if target.kind.name == KIND else None


@hookimpl
def tvm_demo_cases() -> list[DemoCase]:
    # The simulator needs numpy and ml_dtypes; check without importing them.
    if importlib.util.find_spec("numpy") is None:
        return []
    # The demo brings tvm.demo and argparse and builds its kernels from TVMScript: only when the
    # demo runs, never at `import tvm`.
    from .demo import demo_cases  # noqa: PLC0415 - import-time budget: the demo's modules

    return demo_cases()


def register_backend() -> ModuleType | None:
    """Load this backend (idempotent; the seed's contract): through its entry point when the
    distribution is installed, else (a source checkout on PYTHONPATH) as an in-process plugin."""
    return tvm.backend.load_or_register(NAME, sys.modules[__name__], distribution=DISTRIBUTION)
