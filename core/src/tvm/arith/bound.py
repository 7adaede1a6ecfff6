"""Constant integer bounds: the interval ``[min_value, max_value]`` an integer expression can
take, with ``-inf``/``inf`` for unbounded ends."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..ir.dtype import DataType

__all__ = ["ConstIntBound", "dtype_bound"]

NEG_INF = -math.inf
POS_INF = math.inf
Num = int | float  # an int, or -inf/inf


@dataclass(frozen=True)
class ConstIntBound:
    """``min_value <= x <= max_value``; the ends are ints or +-inf."""

    min_value: Num
    max_value: Num

    @staticmethod
    def everything() -> ConstIntBound:
        return ConstIntBound(NEG_INF, POS_INF)

    @staticmethod
    def single(value: int) -> ConstIntBound:
        return ConstIntBound(value, value)

    @property
    def is_const(self) -> bool:
        return self.min_value == self.max_value and not math.isinf(self.min_value)

    def intersect(self, other: ConstIntBound) -> ConstIntBound:
        return ConstIntBound(max(self.min_value, other.min_value), min(self.max_value, other.max_value))

    def union(self, other: ConstIntBound) -> ConstIntBound:
        return ConstIntBound(min(self.min_value, other.min_value), max(self.max_value, other.max_value))

    # -- interval arithmetic ---------------------------------------------------------------
    def __add__(self, o: ConstIntBound) -> ConstIntBound:
        return ConstIntBound(_add(self.min_value, o.min_value), _add(self.max_value, o.max_value))

    def __neg__(self) -> ConstIntBound:
        return ConstIntBound(-self.max_value, -self.min_value)

    def __sub__(self, o: ConstIntBound) -> ConstIntBound:
        return self + (-o)

    def scale(self, c: int) -> ConstIntBound:
        if c == 0:
            return ConstIntBound(0, 0)
        lo, hi = self.min_value * c, self.max_value * c
        return ConstIntBound(min(lo, hi), max(lo, hi))

    def __mul__(self, o: ConstIntBound) -> ConstIntBound:
        corners = [_mul(a, b) for a in (self.min_value, self.max_value)
                   for b in (o.min_value, o.max_value)]
        return ConstIntBound(min(corners), max(corners))

    def __repr__(self) -> str:
        return f"ConstIntBound[{self.min_value}, {self.max_value}]"


def _add(a: Num, b: Num) -> Num:
    if math.isinf(a) and math.isinf(b) and a != b:
        return NEG_INF if a < 0 else POS_INF  # conservative; callers only combine same-side ends
    return a + b


def _mul(a: Num, b: Num) -> Num:
    if a == 0 or b == 0:
        return 0
    return a * b


def floordiv_bound(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    """Bound of ``floor(a / b)`` when ``b`` does not contain 0."""
    corners = _div_corners(a, b, _floordiv)
    if corners is None:
        return ConstIntBound.everything()
    return ConstIntBound(min(corners), max(corners))


def _div_corners(a: ConstIntBound, b: ConstIntBound,
                 div: Callable[[Num, Num], Num]) -> list[Num] | None:
    """``div`` of each end of ``a`` by each end of ``b``; None when ``b`` contains 0."""
    if b.min_value <= 0 <= b.max_value:
        return None
    return [div(x, y) for x in (a.min_value, a.max_value) for y in (b.min_value, b.max_value)]


def _floordiv(x: Num, y: Num) -> Num:
    if math.isinf(y):
        return 0 if not math.isinf(x) else (x if y > 0 else -x)
    if math.isinf(x):
        return x if y > 0 else -x
    return int(x) // int(y)


def _truncdiv(x: Num, y: Num) -> Num:
    if math.isinf(x) or math.isinf(y):
        return _floordiv(x, y)
    q = abs(int(x)) // abs(int(y))
    return q if (x >= 0) == (y > 0) else -q


def truncdiv_bound(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    corners = _div_corners(a, b, _truncdiv)
    if corners is None:
        return ConstIntBound.everything()
    # truncation moves results toward zero: include 0 when the signs of the corners differ
    lo, hi = min(corners), max(corners)
    return ConstIntBound(min(lo, 0) if lo < 0 < hi else lo, hi)


def dtype_bound(dtype: DataType) -> ConstIntBound:
    """The values a scalar of ``dtype`` can hold (everything for non-integers)."""
    if dtype.is_bool:
        return ConstIntBound(0, 1)
    if dtype.is_int:
        return ConstIntBound(-(2 ** (dtype.bits - 1)), 2 ** (dtype.bits - 1) - 1)
    if dtype.is_uint:
        return ConstIntBound(0, 2 ** dtype.bits - 1)
    return ConstIntBound.everything()
