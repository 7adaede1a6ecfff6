"""The ``T.example`` script namespace: one attribute per intrinsic."""

from __future__ import annotations

from typing import Any

from .op import FMA
from .op import fma as _fma


class ExampleNamespace:
    """``T.example``. Each method builds a call of one of the backend's intrinsics."""

    def fma(self, a: Any, b: Any, c: Any) -> Any:
        """``a * b + c`` in one intrinsic."""
        return _fma(a, b, c)

    # The printer finds T.example.fma through this name.
    fma.__tir_op_name__ = FMA  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return "T.example"
