"""Linear forms of integer expressions: :mod:`tvm.ir.linear`, re-exported under its
``tvm.arith`` path (the IR verifier, one layer below ``tvm.arith``, uses them too)."""

from __future__ import annotations

from ..ir.linear import Linear, affine_range, is_scalar_int, to_linear

__all__ = ["Linear", "affine_range", "is_scalar_int", "to_linear"]
