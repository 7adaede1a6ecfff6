"""The hooks of the Trainium backend (entry point ``trn = "tvm_backend_trn.plugin"``).

Only this module is imported when tvm loads the backend; every hook imports what it registers,
and numpy / ml_dtypes are imported only when a kernel is simulated.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from tvm.plugin import BackendInfo, DemoCase, hookimpl

__all__ = ["register_backend"]

NAME = "trn"
KIND = "trn"
DISTRIBUTION = "tvm-backend-trn"


@hookimpl
def tvm_backend_info() -> BackendInfo:
    from . import __version__

    return BackendInfo(name=NAME, version=__version__, api_range=">=1,<2",
                       distribution=DISTRIBUTION,
                       description="AWS Trainium: NKI source, run in a numpy simulator of the "
                                   "NKI instructions")


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    return {NAME: "tvm_backend_trn"}


@hookimpl
def tvm_target_kinds() -> list[Any]:
    from tvm.target import Attr, TargetKind

    from .tags import TRN1_PSUM, TRN1_SBUF

    return [TargetKind(
        KIND,
        attrs={
            "num-cores": Attr(int, 1, "NeuronCores of the instance"),
            "partition_size": Attr(int, 128, "SBUF/PSUM partitions"),
            "max_sbuf_size_per_partition": Attr(int, TRN1_SBUF, "SBUF bytes per partition"),
            "max_psum_size_per_partition": Attr(int, TRN1_PSUM, "PSUM bytes per partition"),
        },
        default_keys=("trn",),
        device_type="trn",
        validate=_validate,
        doc="AWS Trainium NeuronCores (NKI); kernels run in the backend's simulator.",
    )]


def _validate(attrs: dict[str, Any]) -> None:
    if attrs["partition_size"] != 128:
        raise ValueError(f"partition_size must be 128, got {attrs['partition_size']}")
    for key in ("num-cores", "max_sbuf_size_per_partition", "max_psum_size_per_partition"):
        if attrs[key] < 1:
            raise ValueError(f"{key} must be positive, got {attrs[key]}")
    if attrs["max_psum_size_per_partition"] % 2048:
        raise ValueError("max_psum_size_per_partition must be a whole number of 2 KiB banks, "
                         f"got {attrs['max_psum_size_per_partition']}")


@hookimpl
def tvm_target_tags() -> dict[str, dict[str, Any]]:
    from .tags import TAGS

    return TAGS


@hookimpl
def tvm_script_namespaces() -> dict[str, object]:
    from .script import NKINamespace

    return {"nki": NKINamespace()}


@hookimpl
def tvm_register_ops() -> None:
    from . import layout, op

    layout.register_axes()
    op.register_ops()


@hookimpl
def tvm_register_dispatch() -> None:
    from .dispatch import register_all

    register_all()


@hookimpl
def tvm_tir_pipelines() -> dict[str, Any]:
    from .pipeline import trn_pipeline

    return {"trn": trn_pipeline}


@hookimpl
def tvm_default_pipeline(target: Any) -> str | None:
    return "trn" if target.kind.name == KIND else None


@hookimpl
def tvm_build_module(mod: Any, target: Any, options: dict[str, Any]) -> Any:
    if target.kind.name != KIND:
        return None
    from .codegen import build_module

    return build_module(mod, target, options)


@hookimpl
def tvm_load_executable(path_or_bytes: Any, header: dict[str, Any]) -> Any:
    if header.get("backend") != NAME:
        return None
    from .runtime import load_executable

    return load_executable(path_or_bytes, header)


@hookimpl
def tvm_demo_cases() -> list[DemoCase]:
    # The simulator needs numpy and ml_dtypes; check without importing them.
    import importlib.util

    if importlib.util.find_spec("numpy") is None:
        return []
    from .demo import demo_cases

    return demo_cases()


def register_backend() -> ModuleType | None:
    """The seed's contract: load this backend (idempotent). Through its entry point when the
    distribution is installed, else (a source checkout on PYTHONPATH) as an in-process plugin."""
    import tvm.backend as backend
    from tvm.backend._loader import discovered

    if backend.is_loaded(NAME):
        return sys.modules["tvm_backend_trn"]
    if NAME in discovered():
        return backend.load(NAME)
    return backend.register_plugin(sys.modules[__name__], NAME, distribution=DISTRIBUTION)
