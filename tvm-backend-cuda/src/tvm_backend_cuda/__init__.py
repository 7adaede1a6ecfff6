"""The CUDA backend of tvm: NVRTC compilation and cuda.core launches, from PyPI wheels alone.

Importing this package is cheap: the CUDA SDK (``cuda.bindings``, ``cuda.core``) is imported only
when something is compiled or launched. Submodules load on first attribute access, so
``tvm_backend_cuda.compiler.compile_cuda`` works after a bare ``import tvm_backend_cuda``.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__version__ = "0.1.0"

# Submodules reachable as attributes without an explicit import.
_LAZY_SUBMODULES = frozenset({"compiler", "runtime", "plugin", "codegen", "script", "op", "tags", "lang", "kernels",
                              "executable", "dispatch", "demo", "intrinsics", "nvshmem"})

__all__ = ["__version__", "register_backend", "script_namespaces"]

# The seed's module paths (tvm.backend.cuda.target_tags, tvm.tirx.cuda.operator.*): data in
# plugin.SEED_PATHS, served by the alias finder once the backend is loaded
_LAZY_SUBMODULES |= {"target_tags", "operator"}


def register_backend() -> Any:
    """Load this backend into tvm (idempotent): the seed's backend contract."""
    # The plugin imports tvm, whose autoload imports this plugin: at the package's top that is a
    # cycle (`import tvm_backend_cuda` before tvm would hand tvm a half-run plugin).
    from .plugin import register_backend as _register  # noqa: PLC0415 - cycle through tvm

    return _register()


def script_namespaces(**_: Any) -> dict[str, Any]:
    """New ``T.cuda``, ``T.ptx`` and ``T.nvshmem`` namespace objects (the seed's helper)."""
    # script imports tvm: at the package's top, the same cycle as register_backend's.
    from . import script  # noqa: PLC0415 - cycle through tvm

    return {"cuda": script.CUDANamespace(), "ptx": script.PTXNamespace(),
            "nvshmem": script.NVSHMEMNamespace()}


def __getattr__(name: str) -> ModuleType:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_SUBMODULES)
