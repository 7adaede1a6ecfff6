"""What the CUDA code generator's vector accesses rest on, read off the IR: the vector loads of
a value, the base of a ramp index, and cheap proofs that an index is a multiple of the vector
width (so that a ``float4`` or ``uint4`` access is aligned)."""

from __future__ import annotations

import math
from typing import Any

from tvm.ir import expr as E

__all__ = ["is_const", "multiple_of", "ramp_base", "vector_loads"]


def is_const(e: Any, value: int) -> bool:
    return isinstance(e, E.IntImm) and e.value == value


def multiple_of(e: Any, n: int) -> bool:
    """A cheap proof that integer expression ``e`` is a multiple of ``n``."""
    if isinstance(e, E.IntImm):
        return e.value % n == 0
    if isinstance(e, E.Mul):
        for a, b in ((e.a, e.b), (e.b, e.a)):
            if multiple_of(a, n):
                return True
            if isinstance(b, E.IntImm) and b.value != 0:
                g = math.gcd(abs(b.value), n)
                if multiple_of(a, n // g):
                    return True
        return False
    if isinstance(e, (E.Add, E.Sub)):
        return multiple_of(e.a, n) and multiple_of(e.b, n)
    if isinstance(e, E.Cast):
        return multiple_of(e.value, n)
    if isinstance(e, (E.FloorMod, E.Mod)) and isinstance(e.b, E.IntImm) and e.b.value % n == 0:
        return multiple_of(e.a, n)  # a chunk's column in a row of whole chunks
    if isinstance(e, E.Call) and len(e.args) == 2:  # swizzled offsets: xor, shifts, masks
        a, b = e.args
        name = e.op.name
        if name in ("tirx.bitwise_xor", "tirx.bitwise_or"):
            return multiple_of(a, n) and multiple_of(b, n)
        if name == "tirx.shift_left" and isinstance(b, E.IntImm) and 0 <= b.value < 63:
            step = 1 << b.value
            return step % n == 0 or multiple_of(a, n // math.gcd(n, step))
        if name == "tirx.bitwise_and":
            return any(isinstance(x, E.IntImm) and x.value % n == 0 for x in (a, b)) or \
                multiple_of(a, n) or multiple_of(b, n)
    return False


def ramp_base(index: Any) -> Any:
    return index.base if isinstance(index, E.Ramp) else index


def vector_loads(e: Any) -> list[E.BufferLoad]:
    """The vector loads with a ramp index inside a vector value expression."""
    out: list[E.BufferLoad] = []

    def walk(x: Any) -> None:
        if isinstance(x, E.BufferLoad):
            if x.dtype.lanes > 1 and len(x.indices) == 1 and isinstance(x.indices[0], E.Ramp):
                out.append(x)
            return
        if isinstance(x, E.BinaryOp):
            walk(x.a)
            walk(x.b)
        elif isinstance(x, E.Cast):
            walk(x.value)
        elif isinstance(x, E.Call):
            for a in x.args:
                walk(a)

    walk(e)
    return out
