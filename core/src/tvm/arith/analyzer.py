"""``Analyzer``: integer bounds of expressions, simplification and simple proofs.

The analyzer knows the ranges of bound variables (loop variables, kernel ids, lets) and uses
interval arithmetic over linear forms: it folds constants, removes ``x + 0``, ``x * 1``,
``x * 0``, merges like terms, splits ``floordiv``/``floormod`` by a constant (``(i*4 + j) // 4``
is ``i`` when ``0 <= j < 4``), reads ``a >> k`` and ``a & (2**k - 1)`` as those where that makes
them exact (an XOR swizzle's ``((row*32 + w) >> 5) & 7`` is ``row % 8``), and decides
comparisons whose bounds settle them.

The rewrite rules behind :meth:`Analyzer.simplify` are ``rewrite._Rewriter``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

from ..ir import expr as E
from ..ir.buffer import Range
from ..ir.structural import structural_equal
from .bound import ConstIntBound, dtype_bound, floordiv_bound, truncdiv_bound
from .linear import Linear, is_scalar_int, to_linear
from .rewrite import _Rewriter

__all__ = ["Analyzer"]


class Analyzer:
    """Bounds, simplification and proofs over integer expressions.

    >>> ana = Analyzer()
    >>> ana.bind(j, Range(0, 4))
    >>> ana.simplify((i * 4 + j) // 4)       # i
    >>> ana.can_prove(j < 4)                 # True
    """

    def __init__(self) -> None:
        self._bounds: dict[int, ConstIntBound] = {}
        self._values: dict[int, E.PrimExpr] = {}

    # -- facts -----------------------------------------------------------------------------
    def bind(self, var: E.Var, value: Range | E.PrimExpr | int, *, allow_override: bool = True) -> None:
        """Tell the analyzer ``var`` lies in ``value`` (a :class:`Range`) or equals ``value``."""
        if isinstance(value, Range):
            lo = self.const_int_bound(value.min)
            hi = self.const_int_bound(E.Sub(E.Add(value.min, value.extent), E.IntImm(value.min.dtype, 1))
                                      if is_scalar_int(value.min) else value.extent)
            self._set_bound(var, ConstIntBound(lo.min_value, hi.max_value), allow_override)
            return
        expr = E.convert(value, var.dtype)
        self._values[id(var)] = expr
        self._set_bound(var, self.const_int_bound(expr), allow_override)

    def update(self, var: E.Var, bound: ConstIntBound, *, allow_override: bool = True) -> None:
        """Set the bound of ``var`` directly."""
        self._set_bound(var, bound, allow_override)

    def _set_bound(self, var: E.Var, bound: ConstIntBound, allow_override: bool) -> None:
        if not allow_override and id(var) in self._bounds:
            raise ValueError(f"variable {var.name} is already bound")
        self._bounds[id(var)] = bound

    def unbind(self, var: E.Var) -> None:
        self._bounds.pop(id(var), None)
        self._values.pop(id(var), None)

    @contextlib.contextmanager
    def bound_scope(self, var: E.Var, value: Range | E.PrimExpr) -> Iterator[None]:
        """Bind ``var`` for the duration of a ``with`` block."""
        saved = (self._bounds.get(id(var)), self._values.get(id(var)))
        self.bind(var, value)
        try:
            yield
        finally:
            self._restore(var, saved)

    @contextlib.contextmanager
    def constraint_scope(self, condition: E.PrimExpr) -> Iterator[None]:
        """Assume ``condition`` (a conjunction of comparisons of a variable) inside the block."""
        saved: list[tuple[E.Var, Any]] = []
        for var, bound in self._facts(condition):
            saved.append((var, (self._bounds.get(id(var)), self._values.get(id(var)))))
            self._bounds[id(var)] = self._var_bound(var).intersect(bound)
        try:
            yield
        finally:
            for var, old in reversed(saved):
                self._restore(var, old)

    def _restore(self, var: E.Var, saved: tuple[ConstIntBound | None, E.PrimExpr | None]) -> None:
        bound, value = saved
        if bound is None:
            self._bounds.pop(id(var), None)
        else:
            self._bounds[id(var)] = bound
        if value is None:
            self._values.pop(id(var), None)
        else:
            self._values[id(var)] = value

    def _facts(self, cond: E.PrimExpr) -> list[tuple[E.Var, ConstIntBound]]:
        if isinstance(cond, E.And):
            return self._facts(cond.a) + self._facts(cond.b)
        if isinstance(cond, E.Call) and cond.op.name == "tirx.likely":
            return self._facts(cond.args[0])
        if not isinstance(cond, (E.LT, E.LE, E.GT, E.GE, E.EQ)):
            return []
        a, b = cond.a, cond.b
        if not (is_scalar_int(a) and is_scalar_int(b)):
            return []
        flip: dict[type, type] = {E.LT: E.GT, E.LE: E.GE, E.GT: E.LT, E.GE: E.LE, E.EQ: E.EQ}
        kind: type = type(cond)
        if not isinstance(a, E.Var):
            if not isinstance(b, E.Var):
                return []
            a, b, kind = b, a, flip[kind]
        other = self.const_int_bound(b)
        inf = math.inf
        bounds: dict[type, ConstIntBound] = {
            E.LT: ConstIntBound(-inf, other.max_value - 1),
            E.LE: ConstIntBound(-inf, other.max_value),
            E.GT: ConstIntBound(other.min_value + 1, inf),
            E.GE: ConstIntBound(other.min_value, inf),
            E.EQ: other,
        }
        return [(a, bounds[kind])]

    # -- queries ---------------------------------------------------------------------------
    def const_int_bound(self, expr: Any) -> ConstIntBound:
        """The constant interval ``expr`` lies in."""
        return self._bound(E.convert(expr))

    def simplify(self, expr: Any) -> E.PrimExpr:
        """``expr`` with constants folded and arithmetic simplified."""
        return _Rewriter(self).visit(E.convert(expr))

    def can_prove(self, cond: Any) -> bool:
        """True only if ``cond`` holds for every value of the variables (within their bounds)."""
        out = self.simplify(cond)
        return isinstance(out, E.IntImm) and out.value != 0

    def can_prove_equal(self, a: Any, b: Any) -> bool:
        a_, b_ = E.convert(a), E.convert(b)
        if structural_equal(a_, b_):
            return True
        if is_scalar_int(a_) and is_scalar_int(b_):
            diff = self.simplify(E.Sub(a_, b_))
            return isinstance(diff, E.IntImm) and diff.value == 0
        return False

    # -- bounds ----------------------------------------------------------------------------
    def _var_bound(self, v: E.Var) -> ConstIntBound:
        found = self._bounds.get(id(v))
        if found is not None:
            return found
        bound = dtype_bound(v.dtype)
        if isinstance(v, E.SizeVar):  # sizes are never negative
            bound = bound.intersect(ConstIntBound(0, bound.max_value))
        return bound

    def _bound(self, e: E.PrimExpr) -> ConstIntBound:
        full = dtype_bound(e.dtype) if e.dtype.lanes == 1 else ConstIntBound.everything()
        if not (e.dtype.is_integer or e.dtype.is_bool) or e.dtype.lanes != 1:
            return ConstIntBound.everything()
        return self._bound_of(e).intersect(full)

    def _bound_of(self, e: E.PrimExpr) -> ConstIntBound:
        if isinstance(e, E.IntImm):
            return ConstIntBound.single(e.value)
        if isinstance(e, E.Var):
            return self._var_bound(e)
        if isinstance(e, (E.Add, E.Sub, E.Mul)) and e.dtype.is_int:
            lin = to_linear(e)
            # a product of two non-constants is its own single atom: bound it as a product
            if not (len(lin.terms) == 1 and lin.terms[0][0] is e):
                return self.linear_bound(lin)
        if isinstance(e, E.Mul):
            return self._bound(e.a) * self._bound(e.b)
        if isinstance(e, E.FloorDiv):
            return floordiv_bound(self._bound(e.a), self._bound(e.b))
        if isinstance(e, E.Div):
            return truncdiv_bound(self._bound(e.a), self._bound(e.b))
        if isinstance(e, (E.FloorMod, E.Mod)):
            return self._mod_bound(e)
        if isinstance(e, E.Min):
            a, b = self._bound(e.a), self._bound(e.b)
            return ConstIntBound(min(a.min_value, b.min_value), min(a.max_value, b.max_value))
        if isinstance(e, E.Max):
            a, b = self._bound(e.a), self._bound(e.b)
            return ConstIntBound(max(a.min_value, b.min_value), max(a.max_value, b.max_value))
        if isinstance(e, E.Select):
            return self._bound(e.true_value).union(self._bound(e.false_value))
        if isinstance(e, E.Cast):
            if e.value.dtype.is_integer or e.value.dtype.is_bool:
                return self._bound(e.value)
            return dtype_bound(e.dtype)
        if isinstance(e, (E.CmpOp, E.Not)):
            return ConstIntBound(0, 1)
        if isinstance(e, E.Let):
            with self.bound_scope(e.var, e.value):
                return self._bound(e.body)
        if isinstance(e, E.Call) and e.op.name == "tirx.if_then_else":
            return self._bound(e.args[1]).union(self._bound(e.args[2]))
        return dtype_bound(e.dtype)

    def _mod_bound(self, e: E.FloorMod | E.Mod) -> ConstIntBound:
        a, b = self._bound(e.a), self._bound(e.b)
        if b.min_value > 0:
            if isinstance(e, E.FloorMod) or a.min_value >= 0:
                hi = b.max_value - 1
                if a.min_value >= 0 and a.max_value < b.min_value:
                    return a
                if a.min_value >= 0:
                    return ConstIntBound(0, min(hi, a.max_value))
                return ConstIntBound(0, hi)
            m = b.max_value - 1
            return ConstIntBound(-m if a.min_value < 0 else 0, m if a.max_value > 0 else 0)
        return dtype_bound(e.dtype)

    def linear_bound(self, lin: Linear) -> ConstIntBound:
        total = ConstIntBound.single(lin.const)
        for atom, c in lin.nonzero_terms():
            total = total + self._bound(atom).scale(c)
        return total
