"""Hexagon's device intrinsics: none (the seed registers no Hexagon ops). Here so that the
backend has the file layout every backend has."""

from __future__ import annotations

__all__ = ["OPS", "register_ops"]

OPS: tuple[str, ...] = ()


def register_ops() -> None:
    """Nothing to register (the ``tvm_register_ops`` hook)."""
