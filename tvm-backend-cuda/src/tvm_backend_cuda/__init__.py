"""The CUDA backend of tvm: NVRTC compilation and cuda.core launches, from PyPI wheels alone.

Importing this package is cheap: the CUDA SDK (``cuda.bindings``, ``cuda.core``) is imported only
when something is compiled or launched. Submodules load on first attribute access, so
``tvm_backend_cuda.compiler.compile_cuda`` works after a bare ``import tvm_backend_cuda``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__version__ = "0.1.0"

# Submodules reachable as attributes without an explicit import. Others add theirs here
# (plugin, codegen, script, op) as they land.
_LAZY_SUBMODULES = frozenset({"compiler", "runtime", "plugin", "codegen", "script", "op", "tags"})

__all__ = ["__version__"]


def __getattr__(name: str) -> ModuleType:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_SUBMODULES)
