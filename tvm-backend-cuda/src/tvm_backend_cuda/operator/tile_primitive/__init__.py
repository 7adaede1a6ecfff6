"""``tvm.tirx.cuda.operator.tile_primitive.<family>`` (the seed's paths): aliases of the CUDA
dispatch modules in :mod:`tvm_backend_cuda.dispatch`.

Each family module re-exports the public names of the dispatch modules :data:`FAMILIES` lists
for it (the same objects). The seed's helper modules without CUDA-specific code here (``exec_scope_utils``, ``layout_utils``,
``gemm_utils``) have no alias.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["FAMILIES", "reexport"]

#: the seed's module name -> the modules of tvm_backend_cuda.dispatch that implement it
FAMILIES: dict[str, tuple[str, ...]] = {
    "copy": ("copy",),
    "copy_async": ("copy_async",),
    "elementwise": ("elementwise",),
    "gemm": ("gemm_mma",),
    "gemm_async": ("gemm_wgmma", "gemm_tcgen05"),
    "reduction": ("reduction",),
    "common": ("common",),
    "tma_utils": ("tma_utils",),
    "permute_layout": ("permute_layout",),
}

_DISPATCH = "tvm_backend_cuda.dispatch"


def reexport(namespace: dict[str, Any], family: str) -> None:
    """Fill an alias module's ``namespace`` with the public names of ``family``'s modules."""
    modules = [_import(name, family) for name in FAMILIES[family]]
    exported: list[str] = []
    for module in modules:
        names = getattr(module, "__all__", None)
        if names is None:
            names = [n for n in vars(module) if not n.startswith("_")]
        for name in names:
            if name in exported:
                continue  # several modules define it (VARIANT, register): the first one's
            namespace[name] = getattr(module, name)
            exported.append(name)
    namespace["__all__"] = exported
    namespace["MODULES"] = tuple(modules)


def _import(name: str, family: str) -> ModuleType:
    path = f"{_DISPATCH}.{name}"
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError as err:
        if err.name != path:
            raise
        raise ImportError(f"tvm.tirx.cuda.operator.tile_primitive.{family} is an alias of {path}, "
                          f"which this installation of tvm-backend-cuda does not have") from None


def __getattr__(name: str) -> ModuleType:
    if name in FAMILIES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
