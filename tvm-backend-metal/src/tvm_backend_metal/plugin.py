"""The hooks of the Metal backend: the only module tvm imports when it loads the backend.

Cheap on purpose: nothing heavy at import time (no numpy, no pyobjc); each hook imports what it
registers. Entry point: ``metal = "tvm_backend_metal.plugin"`` in the group ``tvm.backends``.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from tvm.plugin import BackendInfo, DemoCase, hookimpl

__all__ = ["KIND", "NAME", "register_backend"]

NAME = "metal"
KIND = "metal"
DISTRIBUTION = "tvm-backend-metal"


@hookimpl
def tvm_backend_info() -> BackendInfo:
    from . import __version__

    return BackendInfo(
        name=NAME,
        version=__version__,
        api_range=">=1,<2",
        distribution=DISTRIBUTION,
        description="Apple GPUs: Metal Shading Language (runs on macOS; checked and emulated "
                    "on the CPU elsewhere)",
    )


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    # tvm.backend.metal and tvm.tirx.metal both name this package.
    return {NAME: "tvm_backend_metal"}


@hookimpl
def tvm_target_kinds() -> list[Any]:
    from tvm.target import Attr, TargetKind

    return [
        TargetKind(
            KIND,
            attrs={
                "max_num_threads": Attr(int, 256, "threads per threadgroup the compiler assumes"),
                "max_threads_per_block": Attr(int, 256, "threads per threadgroup at most"),
                "max_shared_memory_per_block": Attr(int, 32768, "threadgroup memory in bytes"),
                "thread_warp_size": Attr(int, 32, "threads per SIMD group"),
                "max_function_args": Attr(int, 31, "buffer arguments a kernel may take"),
                "mcpu": Attr(str, doc="the Apple chip (apple-m1, apple-m2, ...)"),
                "gpu_family": Attr(str, "apple7", "Metal GPU family (apple7 = M1 and later)"),
            },
            default_keys=(KIND, "gpu"),
            device_type="metal",
            validate=_validate,
            doc="Apple GPUs through the Metal Shading Language.",
        )
    ]


def _validate(attrs: dict[str, Any]) -> None:
    threads = attrs["max_threads_per_block"]
    if not 1 <= threads <= 1024:
        raise ValueError(f"max_threads_per_block must be 1..1024 on Apple GPUs, got {threads}")
    if attrs["max_num_threads"] > threads:
        raise ValueError(f"max_num_threads ({attrs['max_num_threads']}) exceeds "
                         f"max_threads_per_block ({threads})")
    if attrs["thread_warp_size"] != 32:
        raise ValueError(f"thread_warp_size must be 32 (the SIMD-group width of Apple GPUs), "
                         f"got {attrs['thread_warp_size']}")
    if attrs["max_shared_memory_per_block"] <= 0:
        raise ValueError("max_shared_memory_per_block must be positive")


@hookimpl
def tvm_target_tags() -> dict[str, dict[str, Any]]:
    from .tags import TAGS

    return TAGS


@hookimpl
def tvm_script_namespaces() -> dict[str, object]:
    from .script import MetalNamespace

    return {"metal": MetalNamespace()}


@hookimpl
def tvm_register_ops() -> None:
    from . import op

    op.register_ops()


@hookimpl
def tvm_register_dispatch() -> None:
    from .dispatch import register_all

    register_all()


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
    from .demo import demo_cases

    return demo_cases()


def register_backend() -> ModuleType | None:
    """Load this backend (idempotent; the seed's contract): through its entry point when the
    distribution is installed, else (a source checkout on PYTHONPATH) as an in-process plugin."""
    import tvm.backend
    from tvm.backend._loader import discovered

    if tvm.backend.is_loaded(NAME):
        return sys.modules["tvm_backend_metal"]
    if NAME in discovered():
        return tvm.backend.load(NAME)
    return tvm.backend.register_plugin(sys.modules[__name__], NAME, distribution=DISTRIBUTION)
