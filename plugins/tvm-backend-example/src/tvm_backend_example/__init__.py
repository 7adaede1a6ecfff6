"""tvm-backend-example: a minimal backend for tvm, and the template for new ones.

After ``import tvm`` this package is also ``tvm.backend.example`` and ``tvm.tirx.example``.
Submodules load lazily so that importing the package (which tvm does at startup) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"
__all__ = ["codegen", "compiler", "dispatch", "executable", "op", "pipeline", "plugin",
           "register_backend", "runtime", "script", "tags"]

_LAZY_SUBMODULES = {"codegen", "compiler", "dispatch", "executable", "op", "pipeline", "plugin",
                    "runtime", "script", "tags"}


def register_backend() -> Any:
    """The seed's contract: load this backend (idempotent); installed, the same as
    ``tvm.backend.load("example")``; in a source checkout, an in-process plugin."""
    from .plugin import register_backend as _register

    return _register()


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
