"""tvm-backend-adreno: Qualcomm Adreno GPUs, as the seed has them: its ``qcom/adreno-*`` tags
and the ``adreno`` pipeline, which ``tvm.compile`` picks for OpenCL targets with the ``adreno``
key. Kernels are built and run by the OpenCL backend, which loads first.

After ``import tvm`` this package is also ``tvm.backend.adreno`` and ``tvm.tirx.adreno``.
Submodules: :mod:`~tvm_backend_adreno.plugin` (the hooks), :mod:`~tvm_backend_adreno.tags` (also
``target_tags``, the seed's name), :mod:`~tvm_backend_adreno.pipeline`.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"
__all__ = ["pipeline", "plugin", "register_backend", "tags", "target_tags"]

_LAZY_SUBMODULES = {"codegen", "compiler", "executable", "op", "pipeline", "plugin", "runtime",
                    "script", "tags", "target_tags"}


def register_backend() -> Any:
    """The seed's contract: load this backend and the ones it needs (idempotent)."""
    from .plugin import register_backend as _register

    return _register()


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
