"""Tile-primitive variants for target kind ``trn`` (all at thread scope).

:func:`register_all` (called by the ``tvm_register_dispatch`` hook) imports the family modules,
whose top level registers their variants.
"""

from __future__ import annotations

import importlib

__all__ = ["FAMILIES", "register_all"]

FAMILIES = ("copy", "elementwise", "reduction", "gemm", "select", "compose", "guard")


def register_all() -> None:
    for family in FAMILIES:
        module = importlib.import_module(f"{__name__}.{family}")
        module.register()
