"""``tvm.tirx.lang``: the seed's old home of the CUDA kernel helpers, kept as redirects.

The helpers moved to the CUDA backend (the seed's ``tvm.backend.cuda.lang``; here
``tvm_backend_cuda.lang``, also ``tvm.tirx.cuda.lang``). ``tvm.tirx.lang.<module>`` for
``alloc_pool``, ``pipeline``, ``smem_desc``, ``tile_scheduler`` and ``warp_role`` re-exports the
public names of ``tvm_backend_cuda.lang.<module>``; without the CUDA backend installed, importing
one raises an ImportError that names the distribution to install.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Any

from ..._hints import install_hint

__all__ = ["MODULES", "redirect"]

MODULES = ("alloc_pool", "pipeline", "smem_desc", "tile_scheduler", "warp_role")
_TARGET = "tvm_backend_cuda.lang"


def redirect(namespace: dict[str, Any], module: str) -> None:
    """Fill the redirect module's ``namespace`` with the public names of
    ``tvm_backend_cuda.lang.<module>`` (a star import)."""
    path = f"{_TARGET}.{module}"
    try:
        target = importlib.import_module(path)
    except ModuleNotFoundError as err:
        if err.name not in ("tvm_backend_cuda", _TARGET, path):
            raise
        how = (f"the installed tvm-backend-cuda lacks it: {install_hint('tvm-backend-cuda', upgrade=True)}"
               if _installed("tvm_backend_cuda") else install_hint("tvm-backend-cuda"))
        raise ImportError(f"tvm.tirx.lang.{module} moved to the CUDA backend ({path}); {how}",
                          name=f"tvm.tirx.lang.{module}") from None
    names = getattr(target, "__all__", None)
    if names is None:
        names = [n for n in vars(target) if not n.startswith("_")]
    for name in names:
        namespace[name] = getattr(target, name)
    namespace["__all__"] = list(names)


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # None in sys.modules, or a broken package
        return False


def __getattr__(name: str) -> ModuleType:
    if name in MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
