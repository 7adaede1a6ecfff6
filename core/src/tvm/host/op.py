"""Ops of the host backend: none of its own.

The host prints core's builtins and math ops directly (:mod:`.codegen`); it registers no device
intrinsics. The file exists so that every backend has the same layout.
"""

from __future__ import annotations

__all__ = ["register_ops"]


def register_ops() -> None:
    """Nothing to register (the ``tvm_register_ops`` hook of a backend with intrinsics calls
    its declarations here)."""
