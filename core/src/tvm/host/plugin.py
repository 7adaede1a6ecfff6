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
#: Apache TVM's CPU kind, spelled with LLVM's triple and CPU names (the host of the seed's
#: Jetson and Apple tags): built as C for this machine, like ``c``.
LLVM = "llvm"
_KINDS = (NAME, LLVM)


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
            "mcpu": Attr(str, doc="CPU to tune for: passed as -march=<mcpu> (e.g. native)"),
            "num_threads": Attr(int, doc="OpenMP threads for parallel loops"),
            "opt_level": Attr(int, 2, "C compiler optimisation level (-O<n>)"),
            "cc": Attr(str, doc="C compiler command; default $CC, else cc"),
        },
        default_keys=("c", "cpu"),
        device_type="cpu",
        validate=_validate,
        doc="The host CPU through C and the system C compiler.",
    ), TargetKind(
        LLVM,
        attrs={
            "mtriple": Attr(str, doc="LLVM target triple; building needs this machine's"),
            "mcpu": Attr(str, doc="LLVM CPU name (recorded; not passed to the C compiler)"),
            "mattr": Attr(tuple, doc="LLVM CPU features (recorded)"),
            "num-cores": Attr(int, doc="CPU cores (recorded)"),
            "num_threads": Attr(int, doc="OpenMP threads for parallel loops"),
            "opt_level": Attr(int, 2, "C compiler optimisation level (-O<n>)"),
            "cc": Attr(str, doc="C compiler command; default $CC, else cc"),
        },
        default_keys=("cpu",),
        device_type="cpu",
        validate=_validate,
        doc="Apache TVM's CPU target: built as C for this machine by the system C compiler.",
    )]


def _validate(attrs: dict[str, Any]) -> None:
    if not 0 <= attrs.get("opt_level", 2) <= 3:
        raise ValueError(f"opt_level must be 0..3, got {attrs['opt_level']}")
    if attrs.get("num_threads", 1) < 1:
        raise ValueError(f"num_threads must be >= 1, got {attrs['num_threads']}")


@hookimpl
def tvm_default_pipeline(target: Target) -> str | None:
    return "default" if target.kind.name in _KINDS else None


@hookimpl
def tvm_build_module(mod: Any, target: Target, options: dict[str, Any]) -> Any:
    if target.kind.name not in _KINDS:
        return None
    from .build import build_module

    if target.kind.name == LLVM:
        _check_native(target)
        options = {"mcpu": None, **options}  # LLVM CPU names are not -march values
    return build_module(mod, target, options)


def _check_native(target: Target) -> None:
    """An ``llvm`` target builds only for this machine: refuse another triple's architecture."""
    import platform

    from ..error import TVMError

    triple = target.attrs.get("mtriple")
    if not triple:
        return
    arch = triple.split("-", 1)[0]
    here = platform.machine().lower()
    same = {"x86_64": {"x86_64", "amd64"}, "aarch64": {"aarch64", "arm64"},
            "arm64": {"aarch64", "arm64"}}.get(arch, {arch})
    if here not in same:
        raise TVMError(f"target {target}: cannot build for {triple!r} on this {here} machine; "
                       f"the llvm kind compiles C for the machine it runs on (drop -mtriple, or "
                       f"build on a {arch} machine)")


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
