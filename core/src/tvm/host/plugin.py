"""Hook implementations of the built-in host backend ``c`` (entry point ``c = tvm.host.plugin``).

Imports nothing heavy: codegen, the compiler driver and the runtime load inside the hooks.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from ..plugin import BackendInfo, DemoCase, hookimpl
from ..target import Attr, Target, TargetKind

__all__ = ["register_backend"]

NAME = "c"


@hookimpl
def tvm_backend_info() -> BackendInfo:
    return BackendInfo(name=NAME, api_range=">=1,<2", distribution="tvm-core",
                       description="host CPU: C compiled by the system C compiler (CC), "
                                   "loaded with ctypes")


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    # The package is tvm.host already, inside core; a tvm.backend.c alias would add nothing.
    return {}


@hookimpl
def tvm_target_kinds() -> list[TargetKind]:
    return [TargetKind(
        NAME,
        attrs={
            "mcpu": Attr(str, doc="CPU to compile for: passed as -march=<mcpu> (e.g. native, "
                                  "x86-64-v3); default: the best x86-64 level this CPU and "
                                  "compiler support"),
            "num_threads": Attr(int, doc="OpenMP threads for parallel loops"),
            "opt_level": Attr(int, 3, "C compiler optimisation level (-O<n>)"),
            "cc": Attr(str, doc="C compiler command; default $CC, else cc"),
        },
        default_keys=("c", "cpu"),
        device_type="cpu",
        validate=_validate,
        doc="The host CPU through C and the system C compiler.",
    )]


def _validate(attrs: dict[str, Any]) -> None:
    if not 0 <= attrs.get("opt_level", 3) <= 3:
        raise ValueError(f"opt_level must be 0..3, got {attrs['opt_level']}")
    if attrs.get("num_threads", 1) < 1:
        raise ValueError(f"num_threads must be >= 1, got {attrs['num_threads']}")


@hookimpl
def tvm_register_dispatch() -> None:
    from .dispatch import register_all

    register_all()


@hookimpl
def tvm_default_pipeline(target: Target) -> str | None:
    return "default" if target.kind.name == NAME else None


@hookimpl
def tvm_build_module(mod: Any, target: Target, options: dict[str, Any]) -> Any:
    if target.kind.name != NAME:
        return None
    from .build import build_module

    return build_module(mod, target, options)


@hookimpl
def tvm_load_executable(path_or_bytes: Any, header: dict[str, Any]) -> Any:
    if header.get("backend") != NAME:
        return None
    from .build import load_executable

    return load_executable(path_or_bytes, header)


@hookimpl
def tvm_demo_cases() -> list[DemoCase]:
    from ..demo import KERNELS, make_case

    return [make_case(kernel, NAME, backend=NAME) for kernel in KERNELS]


def register_backend() -> ModuleType | None:
    """Load this backend (idempotent): through its entry point when tvm-core is installed,
    else (a source checkout on PYTHONPATH) as an in-process plugin of tvm-core."""
    from .. import backend

    if backend.is_loaded(NAME):
        return sys.modules[__package__ or "tvm.host"]
    from ..backend._loader import discovered

    if NAME in discovered():
        return backend.load(NAME)
    return backend.register_plugin(sys.modules[__name__], NAME, distribution="tvm-core")
