"""Integer arithmetic analysis: :class:`Analyzer` (``simplify``, ``can_prove``, ``bind``,
``const_int_bound``), :class:`ConstIntBound` and linear forms."""

from __future__ import annotations

from .analyzer import Analyzer
from .bound import ConstIntBound, dtype_bound
from .linear import Linear, affine_range, to_linear

__all__ = ["Analyzer", "ConstIntBound", "Linear", "affine_range", "dtype_bound", "to_linear"]
