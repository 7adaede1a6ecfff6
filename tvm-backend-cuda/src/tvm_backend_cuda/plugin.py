"""The hooks of the CUDA backend: the only module tvm imports when it loads the backend.

Cheap on purpose: no ``cuda.*``, numpy or torch at import time; each hook imports what it
registers. Entry point: ``cuda = "tvm_backend_cuda.plugin"`` in the group ``tvm.backends``.
"""

from __future__ import annotations

import importlib
import re
import sys
import warnings
from types import ModuleType
from typing import Any

from tvm.plugin import BackendInfo, DemoCase, hookimpl

__all__ = ["DISTRIBUTION", "KIND", "NAME", "register_backend", "validate_arch"]

NAME = "cuda"
KIND = "cuda"
DISTRIBUTION = "tvm-backend-cuda"
PACKAGE = "tvm_backend_cuda"

_ARCH = re.compile(r"^sm_(\d{2,3})(a?)$")


@hookimpl
def tvm_backend_info() -> BackendInfo:
    from . import __version__

    return BackendInfo(
        name=NAME,
        version=__version__,
        api_range=">=1,<2",
        distribution=DISTRIBUTION,
        description="NVIDIA GPUs: CUDA C++ compiled by NVRTC to cubins (no toolkit needed), "
                    "launched with cuda.core",
    )


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    # tvm.backend.cuda and tvm.tirx.cuda both name this package.
    return {NAME: PACKAGE}


# -- target kind ------------------------------------------------------------------------------


def validate_arch(arch: str) -> str:
    """Check a CUDA arch string: ``sm_XX`` or ``sm_XXa`` (the ``a`` suffix from sm_90 on)."""
    m = _ARCH.match(arch) if isinstance(arch, str) else None
    if m is None:
        raise ValueError(f"invalid CUDA arch {arch!r}: expected 'sm_XX' or 'sm_XXa' "
                         "(e.g. 'sm_80', 'sm_90a', 'sm_100a')")
    if m.group(2) and int(m.group(1)) < 90:
        raise ValueError(f"invalid CUDA arch {arch!r}: the 'a' suffix exists from sm_90 on "
                         f"(use 'sm_{m.group(1)}')")
    return arch


def _validate(attrs: dict[str, Any]) -> None:
    if "arch" in attrs:
        validate_arch(attrs["arch"])
    for key in ("max_shared_memory_per_block", "max_threads_per_block", "thread_warp_size",
                "registers_per_block", "max_num_threads"):
        if attrs.get(key, 1) <= 0:
            raise ValueError(f"{key} must be positive, got {attrs[key]}")
    if attrs.get("l2_cache_size_bytes", 0) < 0:
        raise ValueError(f"l2_cache_size_bytes must be >= 0, got {attrs['l2_cache_size_bytes']}")
    if attrs["max_num_threads"] > attrs["max_threads_per_block"]:
        raise ValueError(f"max_num_threads ({attrs['max_num_threads']}) exceeds "
                         f"max_threads_per_block ({attrs['max_threads_per_block']})")


@hookimpl
def tvm_target_kinds() -> list[Any]:
    from tvm.target import Attr, TargetKind

    return [
        TargetKind(
            KIND,
            attrs={
                "arch": Attr(str, doc="SM architecture: sm_XX or sm_XXa (default: the GPU's "
                                      "own when one is present at build time, else sm_80)"),
                "max_shared_memory_per_block": Attr(int, 49152, "shared memory per block "
                                                                "without opt-in, bytes"),
                "max_threads_per_block": Attr(int, 1024, "threads per block at most"),
                "thread_warp_size": Attr(int, 32, "threads per warp"),
                "registers_per_block": Attr(int, 65536, "32-bit registers per block"),
                "l2_cache_size_bytes": Attr(int, doc="L2 cache size in bytes"),
                "max_num_threads": Attr(int, 1024, "threads per block the compiler assumes"),
                "libs": Attr(tuple, doc="extra libraries (unused; kept for seed configs)"),
            },
            default_keys=(KIND, "gpu"),
            device_type="cuda",
            validate=_validate,
            doc="NVIDIA GPUs through CUDA C++ and NVRTC.",
        )
    ]


@hookimpl
def tvm_layout_names() -> dict[str, Any]:
    from .layout import layout_names

    return layout_names()


@hookimpl
def tvm_target_tags() -> dict[str, dict[str, Any]]:
    from .tags import TAGS

    return TAGS


# -- script namespaces, ops, dispatch ---------------------------------------------------------


def _optional_module(name: str) -> ModuleType | None:
    """Import a submodule that a parallel work stream may not have written yet.

    Only a missing module file is tolerated (with a warning); an error inside an existing
    module propagates, so the registration transaction rolls back and reports it.
    """
    full = f"{PACKAGE}.{name}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as err:
        if err.name != full:
            raise
        warnings.warn(f"{DISTRIBUTION}: {full} is missing; its registrations are skipped",
                      stacklevel=2)
        return None


@hookimpl
def tvm_script_namespaces() -> dict[str, object]:
    script = _optional_module("script")
    if script is None:
        return {}
    table = getattr(script, "NAMESPACES", None)
    if table is not None:
        return dict(table)
    return {"cuda": script.CUDANamespace(), "ptx": script.PTXNamespace(),
            "nvshmem": script.NVSHMEMNamespace()}


@hookimpl
def tvm_register_ops() -> None:
    op = _optional_module("op")
    if op is not None:
        op.register_ops()


@hookimpl
def tvm_register_dispatch() -> None:
    from .dispatch import register_all

    register_all()


# -- lowering, build, runtime -----------------------------------------------------------------


@hookimpl
def tvm_default_pipeline(target: Any) -> str | None:
    return "tirx" if target.kind.name == KIND else None


@hookimpl
def tvm_build_module(mod: Any, target: Any, options: dict[str, Any]) -> Any:
    if target.kind.name != KIND:
        return None
    from .executable import build_module

    return build_module(mod, target, options)


@hookimpl
def tvm_load_executable(path_or_bytes: Any, header: dict[str, Any]) -> Any:
    if header.get("backend") != NAME:
        return None
    from .executable import load_executable

    return load_executable(path_or_bytes, header)


@hookimpl
def tvm_demo_cases() -> list[DemoCase]:
    from .runtime import has_cuda_device

    if not has_cuda_device():
        return []
    from .demo import demo_cases

    return demo_cases()


def register_backend() -> ModuleType | None:
    """Load this backend (idempotent; the seed's contract): through its entry point when the
    distribution is installed, else (a source checkout on PYTHONPATH) as an in-process plugin."""
    import tvm.backend
    from tvm.backend._loader import discovered

    if tvm.backend.is_loaded(NAME):
        return sys.modules[PACKAGE]
    if NAME in discovered():
        return tvm.backend.load(NAME)
    return tvm.backend.register_plugin(sys.modules[__name__], NAME, distribution=DISTRIBUTION)
