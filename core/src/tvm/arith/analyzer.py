"""``Analyzer``: integer bounds of expressions, simplification and simple proofs.

The analyzer knows the ranges of bound variables (loop variables, kernel ids, lets) and uses
interval arithmetic over linear forms: it folds constants, removes ``x + 0``, ``x * 1``,
``x * 0``, merges like terms, splits ``floordiv``/``floormod`` by a constant (``(i*4 + j) // 4``
is ``i`` when ``0 <= j < 4``), reads ``a >> k`` and ``a & (2**k - 1)`` as those where that makes
them exact (an XOR swizzle's ``((row*32 + w) >> 5) & 7`` is ``row % 8``), and decides
comparisons whose bounds settle them.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any, TypeGuard

from ..ir import expr as E
from ..ir.buffer import Range
from ..ir.dtype import DataType
from ..ir.expr import _FOLD_BITS, _fold_bits
from ..ir.structural import structural_equal
from ..ir.visitor import Mutator, substitute
from .bound import ConstIntBound, dtype_bound, floordiv_bound, truncdiv_bound
from .linear import Linear, is_scalar_int, to_linear

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


# -- the rewriter ------------------------------------------------------------------------------
def _imm(dtype: DataType, value: Any) -> E.PrimExpr | None:
    """An immediate of ``dtype`` holding ``value``, or None if it does not fit."""
    if dtype.lanes != 1:
        return None
    if dtype.is_float:
        return E.FloatImm(dtype, float(value))
    if dtype.is_bool:
        return E.IntImm(dtype, 1 if value else 0)
    if dtype.is_integer:
        b = dtype_bound(dtype)
        if not b.min_value <= int(value) <= b.max_value:
            return None
        return E.IntImm(dtype, int(value))
    return None


def _const_value(e: Any) -> int | float | None:
    if isinstance(e, (E.IntImm, E.FloatImm)):
        return e.value
    return None


def _is_int_const(e: Any, value: int | None = None) -> TypeGuard[E.IntImm]:
    return isinstance(e, E.IntImm) and (value is None or e.value == value)


def _is_zero(e: E.PrimExpr) -> bool:
    v = _const_value(e)
    return v is not None and v == 0


def _is_one(e: E.PrimExpr) -> bool:
    v = _const_value(e)
    return v is not None and v == 1


def _bool(value: bool, lanes: int = 1) -> E.PrimExpr:
    out: E.PrimExpr = E.IntImm("bool", 1 if value else 0)
    return out if lanes == 1 else E.Broadcast(out, lanes)


_CMP = {
    E.LT: lambda a, b: a < b, E.LE: lambda a, b: a <= b, E.GT: lambda a, b: a > b,
    E.GE: lambda a, b: a >= b, E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b,
}


class _Rewriter(Mutator):
    """Bottom-up rewriting: children first, then the node's own rules."""

    def __init__(self, analyzer: Analyzer) -> None:
        self.ana = analyzer

    def visit_Buffer(self, node: Any) -> Any:
        return node

    def visit_Var(self, v: E.Var) -> E.PrimExpr:
        value = self.ana._values.get(id(v))
        return v if value is None else value

    # -- helpers ---------------------------------------------------------------------------
    def _children(self, e: E.BinaryOp) -> tuple[E.PrimExpr, E.PrimExpr]:
        return self.visit(e.a), self.visit(e.b)

    @staticmethod
    def _rebuild(e: E.BinaryOp, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
        if a is e.a and b is e.b:
            return e
        return type(e)(a, b)

    def _canonical(self, e: E.PrimExpr) -> E.PrimExpr:
        """Merge like terms of a signed integer sum; other expressions are returned as is."""
        if not (is_scalar_int(e) and e.dtype.is_int):
            return e
        lin = to_linear(e)
        rng = dtype_bound(e.dtype)
        if not all(rng.min_value <= v <= rng.max_value for v in [lin.const, *(c for _, c in lin.terms)]):
            return e  # an immediate would overflow the type: leave the expression alone
        out = lin.to_expr()
        return e if structural_equal(out, e) else out

    def _fold(self, e: E.BinaryOp, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr | None:
        ca, cb = _const_value(a), _const_value(b)
        if ca is None or cb is None or e.dtype.lanes != 1:
            return None
        is_int = e.dtype.is_integer
        try:
            if isinstance(e, E.Add):
                value: Any = ca + cb
            elif isinstance(e, E.Sub):
                value = ca - cb
            elif isinstance(e, E.Mul):
                value = ca * cb
            elif isinstance(e, E.Div):
                if cb == 0:
                    return None
                if is_int:
                    q = abs(int(ca)) // abs(int(cb))
                    value = q if (ca >= 0) == (cb > 0) else -q
                else:
                    value = ca / cb
            elif isinstance(e, E.Mod):
                if cb == 0 or not is_int:
                    return None
                value = int(math.fmod(int(ca), int(cb)))
            elif isinstance(e, E.FloorDiv):
                if cb == 0:
                    return None
                value = int(ca) // int(cb) if is_int else math.floor(ca / cb)
            elif isinstance(e, E.FloorMod):
                if cb == 0 or not is_int:
                    return None
                value = int(ca) % int(cb)
            elif isinstance(e, E.Min):
                value = min(ca, cb)
            elif isinstance(e, E.Max):
                value = max(ca, cb)
            else:
                return None
        except (OverflowError, ValueError):
            return None
        return _imm(e.dtype, value)

    # -- arithmetic ------------------------------------------------------------------------
    def visit_Add(self, e: E.Add) -> E.PrimExpr:
        a, b = self._children(e)
        folded = self._fold(e, a, b)
        if folded is not None:
            return folded
        if _is_zero(b) and a.dtype == e.dtype:
            return a
        if _is_zero(a) and b.dtype == e.dtype:
            return b
        return self._canonical(self._rebuild(e, a, b))

    def visit_Sub(self, e: E.Sub) -> E.PrimExpr:
        a, b = self._children(e)
        folded = self._fold(e, a, b)
        if folded is not None:
            return folded
        if _is_zero(b) and a.dtype == e.dtype:
            return a
        return self._canonical(self._rebuild(e, a, b))

    def visit_Mul(self, e: E.Mul) -> E.PrimExpr:
        a, b = self._children(e)
        folded = self._fold(e, a, b)
        if folded is not None:
            return folded
        if _is_one(b) and a.dtype == e.dtype:
            return a
        if _is_one(a) and b.dtype == e.dtype:
            return b
        if e.dtype.is_integer and e.dtype.lanes == 1 and (_is_zero(a) or _is_zero(b)):
            return E.IntImm(e.dtype, 0)
        return self._canonical(self._rebuild(e, a, b))

    def visit_Div(self, e: E.Div) -> E.PrimExpr:
        a, b = self._children(e)
        folded = self._fold(e, a, b)
        if folded is not None:
            return folded
        if _is_one(b) and a.dtype == e.dtype:
            return a
        if is_scalar_int(e) and self._nonneg(a) and _is_int_const(b) and b.value > 0:
            return self._floordiv(a, b)
        return self._rebuild(e, a, b)

    def visit_Mod(self, e: E.Mod) -> E.PrimExpr:
        a, b = self._children(e)
        folded = self._fold(e, a, b)
        if folded is not None:
            return folded
        if is_scalar_int(e) and self._nonneg(a) and _is_int_const(b) and b.value > 0:
            return self._floormod(a, b)
        return self._rebuild(e, a, b)

    def visit_FloorDiv(self, e: E.FloorDiv) -> E.PrimExpr:
        a, b = self._children(e)
        folded = self._fold(e, a, b)
        if folded is not None:
            return folded
        if is_scalar_int(e) and _is_int_const(b) and b.value > 0:
            return self._floordiv(a, b)
        return self._rebuild(e, a, b)

    def visit_FloorMod(self, e: E.FloorMod) -> E.PrimExpr:
        a, b = self._children(e)
        folded = self._fold(e, a, b)
        if folded is not None:
            return folded
        if is_scalar_int(e) and _is_int_const(b) and b.value > 0:
            return self._floormod(a, b)
        return self._rebuild(e, a, b)

    def _nonneg(self, e: E.PrimExpr) -> bool:
        return self.ana._bound(e).min_value >= 0

    def _split(self, a: E.PrimExpr, c: int) -> tuple[Linear, Linear]:
        """``a = c * q + r`` with the terms of ``q`` those whose coefficients ``c`` divides."""
        lin = to_linear(a) if a.dtype.is_int else Linear(a.dtype, [(a, 1)], 0)
        q, r = Linear(a.dtype), Linear(a.dtype)
        for atom, k in lin.nonzero_terms():
            if k % c == 0:
                q.add_term(atom, k // c)
            else:
                r.add_term(atom, k)
        q.const, r.const = lin.const // c, lin.const % c
        return q, r

    def _block(self, r: Linear, c: int) -> int | None:
        """``j`` when ``j * c <= r < (j + 1) * c`` for every value of ``r``, else None."""
        rb = self.ana.linear_bound(r)
        if math.isinf(rb.min_value) or math.isinf(rb.max_value) \
                or rb.min_value // c != rb.max_value // c:
            return None
        return int(rb.min_value) // c

    def _exact_floordiv(self, a: E.PrimExpr, c: int) -> E.PrimExpr | None:
        """``a // c`` without a division (``(x*c + y) // c`` is ``x`` when ``0 <= y < c``), or
        None when the remainder's bound does not settle it."""
        q, r = self._split(a, c)
        j = self._block(r, c)
        if j is None:
            return None
        q.const += j
        return q.to_expr()

    def _exact_floormod(self, a: E.PrimExpr, c: int) -> E.PrimExpr | None:
        """``a % c`` (floor) without a modulo (``(x*c + y) % c`` is ``y`` when ``0 <= y <
        c``), or None."""
        if isinstance(a, E.FloorMod) and _is_int_const(a.b) and a.b.value > 0 and a.b.value % c == 0:
            return self._exact_floormod(a.a, c)
        for form in (a, self._without_mods(a, c)):
            if form is None:
                continue
            _, r = self._split(form, c)
            j = self._block(r, c)
            if j is not None:
                r.const -= j * c
                return r.to_expr()
        return None

    @staticmethod
    def _without_mods(a: E.PrimExpr, c: int) -> E.PrimExpr | None:
        """``a`` with each term ``k * (x % m)``, ``m`` a multiple of ``c``, as ``k * x`` (equal
        modulo ``c``); None when there is no such term."""
        if not (is_scalar_int(a) and a.dtype.is_int):
            return None
        lin = to_linear(a)
        out = Linear(a.dtype, [], lin.const)
        found = False
        for atom, k in lin.nonzero_terms():
            if isinstance(atom, E.FloorMod) and _is_int_const(atom.b) and atom.b.value > 0 \
                    and atom.b.value % c == 0:
                out = out.add(to_linear(atom.a).scale(k))
                found = True
            else:
                out.add_term(atom, k)
        return out.to_expr() if found else None

    def _floordiv(self, a: E.PrimExpr, b: E.IntImm) -> E.PrimExpr:
        c = b.value
        if c == 1:
            return a
        # (x // c1) // c2 == x // (c1 * c2) for positive constants
        if isinstance(a, E.FloorDiv) and _is_int_const(a.b) and a.b.value > 0:
            return self._floordiv(a.a, E.IntImm(b.dtype, a.b.value * c))
        exact = self._exact_floordiv(a, c)
        if exact is not None:
            return exact
        q, r = self._split(a, c)
        if q.is_const and q.const == 0:
            return E.FloorDiv(r.to_expr(), b)
        # floor((c*q + r) / c) == q + floor(r / c)
        return self._canonical(E.Add(q.to_expr(), E.FloorDiv(r.to_expr(), b)))

    def _floormod(self, a: E.PrimExpr, b: E.IntImm) -> E.PrimExpr:
        c = b.value
        if c == 1:
            return E.IntImm(a.dtype, 0)
        if isinstance(a, E.FloorMod) and _is_int_const(a.b) and a.b.value > 0 and a.b.value % c == 0:
            return self._floormod(a.a, b)
        exact = self._exact_floormod(a, c)
        if exact is not None:
            return exact
        _, r = self._split(a, c)
        return E.FloorMod(r.to_expr(), b)

    def _bit_op(self, name: str, args: list[E.PrimExpr]) -> E.PrimExpr | None:
        """Bitwise operations: two immediates fold; ``x | 0``, ``x ^ 0`` (either way round) and
        shifts by 0 are ``x``; ``a >> k`` and ``a & (2**k - 1)`` of a scalar integer are ``a // 2**k`` and ``a %
        2**k`` (floor, in two's complement), rewritten as those when the bounds make them exact
        (``(x*32 + y) >> 5`` is ``x`` and ``(x*32 + y) & 31`` is ``y`` when ``0 <= y < 32``, the
        index arithmetic of an XOR swizzle). None: the operation stays."""
        op = name[len("tirx."):] if name.startswith("tirx.") else ""
        if op not in _FOLD_BITS or len(args) != 2:
            return None
        a, b = args
        folded = _fold_bits(op, a, b)
        if folded is not None:
            return folded
        if op in ("bitwise_or", "bitwise_xor") and _is_int_const(a, 0) and a.dtype == b.dtype:
            return b  # 0 | x, 0 ^ x
        if not (is_scalar_int(a) and _is_int_const(b) and a.dtype == b.dtype):
            return None
        if b.value == 0 and op in ("bitwise_or", "bitwise_xor", "shift_left", "shift_right"):
            return a  # x | 0, x ^ 0, x << 0, x >> 0
        if op not in ("shift_right", "bitwise_and"):
            return None
        if op == "shift_right":
            if not 0 < b.value < a.dtype.bits:
                return None
            return self._exact_floordiv(a, 1 << b.value)
        c = b.value + 1
        if b.value <= 0 or c & b.value:  # not a mask of the low bits
            return None
        return self._exact_floormod(a, c)

    def visit_Min(self, e: E.Min) -> E.PrimExpr:
        a, b = self._children(e)
        folded = self._fold(e, a, b)
        if folded is not None:
            return folded
        if structural_equal(a, b):
            return a
        if is_scalar_int(e):
            diff = self.ana._bound(self._canonical(E.Sub(a, b)))
            if diff.max_value <= 0:
                return a
            if diff.min_value >= 0:
                return b
        return self._rebuild(e, a, b)

    def visit_Max(self, e: E.Max) -> E.PrimExpr:
        a, b = self._children(e)
        folded = self._fold(e, a, b)
        if folded is not None:
            return folded
        if structural_equal(a, b):
            return a
        if is_scalar_int(e):
            diff = self.ana._bound(self._canonical(E.Sub(a, b)))
            if diff.min_value >= 0:
                return a
            if diff.max_value <= 0:
                return b
        return self._rebuild(e, a, b)

    # -- comparisons and logic -------------------------------------------------------------
    def visit_CmpOp(self, e: E.CmpOp) -> E.PrimExpr:
        a, b = self._children(e)
        ca, cb = _const_value(a), _const_value(b)
        if ca is not None and cb is not None:
            return _bool(_CMP[type(e)](ca, cb))
        if is_scalar_int(a) and is_scalar_int(b) and a.dtype == b.dtype and a.dtype.is_int:
            decided = self._decide(type(e), to_linear(a).add(to_linear(b), -1))
            if decided is not None:
                return _bool(decided)
        return self._rebuild(e, a, b)

    visit_LT = visit_LE = visit_GT = visit_GE = visit_EQ = visit_NE = visit_CmpOp

    def _decide(self, kind: type, diff: Linear) -> bool | None:
        """Settle ``a <kind> b`` from the bound of ``a - b``, if the bound allows."""
        d = self.ana.linear_bound(diff)
        lo, hi = d.min_value, d.max_value
        if kind is E.LT:
            return True if hi < 0 else False if lo >= 0 else None
        if kind is E.LE:
            return True if hi <= 0 else False if lo > 0 else None
        if kind is E.GT:
            return True if lo > 0 else False if hi <= 0 else None
        if kind is E.GE:
            return True if lo >= 0 else False if hi < 0 else None
        if kind is E.EQ:
            return True if lo == hi == 0 else False if lo > 0 or hi < 0 else None
        if kind is E.NE:
            return False if lo == hi == 0 else True if lo > 0 or hi < 0 else None
        return None

    def visit_And(self, e: E.And) -> E.PrimExpr:
        a, b = self._children(e)
        for x, y in ((a, b), (b, a)):
            if _is_int_const(x) and x.dtype.lanes == 1:
                return y if x.value else _bool(False)
        return self._rebuild(e, a, b)

    def visit_Or(self, e: E.Or) -> E.PrimExpr:
        a, b = self._children(e)
        for x, y in ((a, b), (b, a)):
            if _is_int_const(x) and x.dtype.lanes == 1:
                return _bool(True) if x.value else y
        return self._rebuild(e, a, b)

    def visit_Not(self, e: E.Not) -> E.PrimExpr:
        a = self.visit(e.a)
        if _is_int_const(a):
            return _bool(not a.value)
        if isinstance(a, E.Not):
            return a.a
        return e if a is e.a else E.Not(a)

    # -- other expressions -----------------------------------------------------------------
    def visit_Select(self, e: E.Select) -> E.PrimExpr:
        cond = self.visit(e.condition)
        t, f = self.visit(e.true_value), self.visit(e.false_value)
        if _is_int_const(cond) and cond.dtype.lanes == 1:
            return t if cond.value else f
        if structural_equal(t, f):
            return t
        if cond is e.condition and t is e.true_value and f is e.false_value:
            return e
        return E.Select(cond, t, f)

    def visit_Cast(self, e: E.Cast) -> E.PrimExpr:
        v = self.visit(e.value)
        if v.dtype == e.dtype:
            return v
        c = _const_value(v)
        if c is not None:
            if e.dtype.is_integer and isinstance(v, E.FloatImm):
                if math.isfinite(c):
                    folded = _imm(e.dtype, int(c))
                    if folded is not None:
                        return folded
            elif e.dtype.is_float or e.dtype.is_bool or (e.dtype.is_integer and isinstance(v, E.IntImm)):
                folded = _imm(e.dtype, c)
                if folded is not None:
                    return folded
        return e if v is e.value else E.Cast(e.dtype, v)

    def visit_Let(self, e: E.Let) -> E.PrimExpr:
        value = self.visit(e.value)
        if isinstance(value, (E.IntImm, E.FloatImm, E.Var)):
            return self.visit(substitute(e.body, {e.var: value}))
        if is_scalar_int(value):
            # bound only (a Range), so the variable is not replaced by its value in the body
            with self.ana.bound_scope(e.var, Range(value, E.IntImm(value.dtype, 1))):
                body = self.visit(e.body)
        else:
            body = self.visit(e.body)
        if value is e.value and body is e.body:
            return e
        return E.Let(e.var, value, body)

    def visit_Call(self, e: E.Call) -> E.PrimExpr:
        args = [self.visit(a) for a in e.args]
        name = e.op.name
        if name == "tirx.if_then_else" and _is_int_const(args[0]) and args[0].dtype.lanes == 1:
            return args[1] if args[0].value else args[2]
        if name == "tirx.likely" and _is_int_const(args[0]):
            return args[0]
        bits = self._bit_op(name, args)
        if bits is not None:
            return bits
        if all(x is y for x, y in zip(args, e.args)):
            return e
        return E.Call(e.dtype, e.op, args)
