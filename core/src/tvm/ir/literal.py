"""Literal values of a data type, below :mod:`tvm.ir.expr`: the values an integer type holds,
the largest finite float of each narrow float type, which of two types an arithmetic operation
promotes to, and the value-level folding of two immediates (Apache TVM folds them as it builds).
Nothing here builds IR; ``expr`` wraps the results in immediates."""

from __future__ import annotations

import math
from typing import Any

from ..error import IRVerifyError
from .dtype import DataType


def int_range(dtype: DataType) -> tuple[int, int]:
    """The values an integer scalar of ``dtype`` holds: ``(min, max)``."""
    if dtype.is_uint:
        return 0, 2**dtype.bits - 1
    return -(2 ** (dtype.bits - 1)), 2 ** (dtype.bits - 1) - 1


def _fits(dt: DataType, value: int) -> bool:
    lo, hi = int_range(dt)
    return lo <= value <= hi


def _check_range(dtype: DataType, value: int) -> None:
    lo, hi = int_range(dtype)
    if not lo <= value <= hi:
        raise IRVerifyError(f"integer literal {value} does not fit in {dtype.element_of()} "
                            f"({lo} to {hi}); use a wider type or a smaller value")


#: the largest finite value of each float type narrower than float64
FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
             "float32": 3.4028234663852886e38, "float8_e4m3fn": 448.0, "float8_e5m2": 57344.0,
             "float4_e2m1fn": 6.0}


def _check_float_range(dtype: DataType, value: float) -> None:
    """A float literal past its type's largest finite value is an error, as in the seed (the
    value would be infinity); infinities and NaN are written as such (``T.float16("inf")``)."""
    hi = FLOAT_MAX.get(str(dtype.element_of()))
    if hi is not None and math.isfinite(value) and abs(value) > hi:
        inf = "" if dtype.code in ("float8_e4m3fn", "float4_e2m1fn") else \
            f", or T.{dtype.element_of()}(\"inf\") for infinity"  # the fn types have no infinity
        raise IRVerifyError(f"float literal {value!r} does not fit in {dtype.element_of()} "
                            f"(-{hi!r} to {hi!r}); use a wider type or a smaller value{inf}")


# -- type promotion ------------------------------------------------------------------------------
def _rank(dt: DataType) -> tuple[int, int]:
    order = {"bool": 0, "uint": 1, "int": 2, "float8_e5m2": 3, "float8_e4m3fn": 3, "bfloat": 4, "float": 5}
    return (1 if dt.is_float else 0, dt.bits if dt.is_float else order.get(dt.code, 0) * 100 + dt.bits)


def _wider(a: DataType, b: DataType) -> DataType:
    if a.is_handle or b.is_handle:
        raise TypeError(f"cannot do arithmetic between {a} and {b}")
    if a.is_float and not b.is_float:
        return a
    if b.is_float and not a.is_float:
        return b
    if a.is_float and b.is_float:
        return a if a.bits >= b.bits else b
    if a.is_bool:
        return b
    if b.is_bool:
        return a
    return a if a.bits >= b.bits else b


# -- folding two values --------------------------------------------------------------------------
_FOLD_BITS: dict[str, Any] = {
    "bitwise_and": lambda x, y: x & y, "bitwise_or": lambda x, y: x | y,
    "bitwise_xor": lambda x, y: x ^ y, "shift_left": lambda x, y: x << y,
    "shift_right": lambda x, y: x >> y,
}


def _truncdiv(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


#: value folds of the arithmetic nodes, by node class name (``expr`` looks its classes up)
_DIVISIONS = ("Div", "Mod", "FloorDiv", "FloorMod")
_FOLD_INT: dict[str, Any] = {
    "Add": lambda x, y: x + y, "Sub": lambda x, y: x - y, "Mul": lambda x, y: x * y,
    "FloorDiv": lambda x, y: x // y, "FloorMod": lambda x, y: x % y,
    "Div": _truncdiv, "Mod": lambda x, y: x - _truncdiv(x, y) * y,
    "Min": min, "Max": max,
}
_FOLD_FLOAT: dict[str, Any] = {
    "Add": lambda x, y: x + y, "Sub": lambda x, y: x - y, "Mul": lambda x, y: x * y,
    "Div": lambda x, y: x / y, "Min": min, "Max": max,
}


def _fold_bits_value(name: str, dt: DataType, x: int, y: int) -> int | None:
    """The bitwise op ``name`` (``"bitwise_and"``, ``"shift_left"``...) on two ``dt`` integers, or
    None: a shift by a negative amount or past the width, or a result out of range."""
    if name.startswith("shift") and not 0 <= y < dt.bits:
        return None
    value = _FOLD_BITS[name](x, y)
    return value if _fits(dt, value) else None


def _fold_value(op: str, x: Any, y: Any, *, integer: bool) -> Any:
    """The arithmetic node ``op`` (a class name) on two integer or float values, or None where
    it does not fold (no fold for ``op``, a division by zero)."""
    fn = (_FOLD_INT if integer else _FOLD_FLOAT).get(op)
    if fn is None or (y == 0 and op in _DIVISIONS):
        return None
    return fn(x, y)
