"""The rewriter behind :meth:`Analyzer.simplify <tvm.arith.Analyzer.simplify>`: bottom-up
rules over expressions (constant folding, identities, like terms, floor division and modulo by a
constant, bit tricks, comparisons the bounds settle), reading bounds from its analyzer."""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, ClassVar, TypeGuard

from ..ir import expr as E
from ..ir.buffer import Range
from ..ir.dtype import DataType
from ..ir.expr import _fold_bits
from ..ir.literal import _FOLD_BITS
from ..ir.structural import structural_equal
from ..ir.visitor import Mutator, substitute
from .bound import dtype_bound
from .linear import Linear, is_scalar_int, to_linear

if TYPE_CHECKING:
    from .analyzer import Analyzer


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
    def _arith(self, e: E.BinaryOp) -> E.PrimExpr:
        """Children first; two immediates fold; otherwise the operator's rule (``_RULES``; the
        visitors are this method, so a deep chain costs no extra frame per level)."""
        a, b = self._children(e)
        folded = self._fold(e, a, b)
        if folded is not None:
            return folded
        return self._RULES[type(e)](self, e, a, b)

    visit_Add = visit_Sub = visit_Mul = visit_Div = visit_Mod = _arith
    visit_FloorDiv = visit_FloorMod = visit_Min = visit_Max = _arith

    def _add(self, e: E.Add, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
        if _is_zero(b) and a.dtype == e.dtype:
            return a
        if _is_zero(a) and b.dtype == e.dtype:
            return b
        return self._canonical(self._rebuild(e, a, b))

    def _sub(self, e: E.Sub, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
        if _is_zero(b) and a.dtype == e.dtype:
            return a
        return self._canonical(self._rebuild(e, a, b))

    def _mul(self, e: E.Mul, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
        if _is_one(b) and a.dtype == e.dtype:
            return a
        if _is_one(a) and b.dtype == e.dtype:
            return b
        if e.dtype.is_integer and e.dtype.lanes == 1 and (_is_zero(a) or _is_zero(b)):
            return E.IntImm(e.dtype, 0)
        return self._canonical(self._rebuild(e, a, b))

    def _division(self, e: E.BinaryOp, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
        """``x / 1`` is ``x``; by a positive constant, floor division and modulo (and truncating
        ones of a non-negative dividend, where they agree) go to ``_floordiv``/``_floormod``."""
        if isinstance(e, E.Div) and _is_one(b) and a.dtype == e.dtype:
            return a
        floor = isinstance(e, (E.FloorDiv, E.FloorMod))
        if is_scalar_int(e) and (floor or self._nonneg(a)) and _is_int_const(b) and b.value > 0:
            if isinstance(e, (E.Div, E.FloorDiv)):
                return self._floordiv(a, b)
            return self._floormod(a, b)
        return self._rebuild(e, a, b)

    def _min_max(self, e: E.BinaryOp, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
        """``min``/``max`` of equal operands, or of operands whose difference has a sign."""
        if structural_equal(a, b):
            return a
        if is_scalar_int(e):
            diff = self.ana._bound(self._canonical(E.Sub(a, b)))
            a_le_b, a_ge_b = diff.max_value <= 0, diff.min_value >= 0
            if a_le_b if isinstance(e, E.Min) else a_ge_b:
                return a
            if a_ge_b if isinstance(e, E.Min) else a_le_b:
                return b
        return self._rebuild(e, a, b)

    _RULES: ClassVar[dict[type, Callable[..., E.PrimExpr]]] = {
        E.Add: _add, E.Sub: _sub, E.Mul: _mul, E.Div: _division, E.Mod: _division,
        E.FloorDiv: _division, E.FloorMod: _division, E.Min: _min_max, E.Max: _min_max,
    }

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
        return simplify_binding(self, e, (E.IntImm, E.FloatImm, E.Var), E.Let)

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


def simplify_binding(mutator: Any, node: Any, inline: tuple[type, ...],
                     make: Callable[[E.Var, E.PrimExpr, Any], Any]) -> Any:
    """A ``Let`` or ``LetStmt`` ``node`` simplified by ``mutator`` (a visitor with an analyzer
    ``ana``): its value, then its body, with the value substituted for the variable when it is
    one of the ``inline`` node types, else with the variable bounded by an integer value (a
    range only, so that the body keeps the variable). ``make(var, value, body)`` rebuilds the
    node when either part changed."""
    value = mutator.visit(node.value)
    if isinstance(value, inline):
        return mutator.visit(substitute(node.body, {node.var: value}))
    with (mutator.ana.bound_scope(node.var, Range(value, 1)) if is_scalar_int(value)
          else nullcontext()):
        body = mutator.visit(node.body)
    if value is node.value and body is node.body:
        return node
    return make(node.var, value, body)
