"""Linear forms: an integer expression as ``sum(coeff_i * atom_i) + const``.

Atoms are sub-expressions that are not sums or constant multiples (variables, loads,
divisions, ...); equal atoms are merged, so ``i*4 + j - i*4`` becomes ``j``.

It lives in ``tvm.ir`` (and is re-exported by ``tvm.arith.linear``) because the IR verifier's
static bounds check (:mod:`tvm.ir.verify`) uses :func:`affine_range`, and ``tvm.ir`` is the
layer below ``tvm.arith``; it needs nothing but the IR.
"""

from __future__ import annotations

from . import expr as E
from .dtype import DataType
from .structural import structural_equal, structural_hash

__all__ = ["Linear", "affine_range", "to_linear"]


class Linear:
    """``sum(coeff * atom) + const`` over one integer dtype; atoms keep first-seen order."""

    __slots__ = ("const", "dtype", "terms")

    def __init__(self, dtype: DataType, terms: list[tuple[E.PrimExpr, int]] | None = None,
                 const: int = 0) -> None:
        self.dtype = dtype
        self.terms: list[tuple[E.PrimExpr, int]] = list(terms or [])
        self.const = const

    def copy(self) -> Linear:
        return Linear(self.dtype, self.terms, self.const)

    def add_term(self, atom: E.PrimExpr, coeff: int) -> None:
        for k, (a, c) in enumerate(self.terms):
            if _same_atom(a, atom):
                self.terms[k] = (a, c + coeff)
                return
        self.terms.append((atom, coeff))

    def add(self, other: Linear, sign: int = 1) -> Linear:
        out = self.copy()
        for atom, c in other.terms:
            out.add_term(atom, sign * c)
        out.const += sign * other.const
        return out

    def scale(self, c: int) -> Linear:
        return Linear(self.dtype, [(a, k * c) for a, k in self.terms], self.const * c)

    def nonzero_terms(self) -> list[tuple[E.PrimExpr, int]]:
        return [(a, c) for a, c in self.terms if c != 0]

    @property
    def is_const(self) -> bool:
        return not self.nonzero_terms()

    def to_expr(self) -> E.PrimExpr:
        """Rebuild the expression: terms in first-seen order, then the constant."""
        result: E.PrimExpr | None = None
        for atom, c in self.nonzero_terms():
            if result is None:
                result = atom if c == 1 else E.Mul(atom, E.IntImm(self.dtype, c))
            elif c > 0:
                result = E.Add(result, atom if c == 1 else E.Mul(atom, E.IntImm(self.dtype, c)))
            else:
                result = E.Sub(result, atom if c == -1 else E.Mul(atom, E.IntImm(self.dtype, -c)))
        if result is None:
            return E.IntImm(self.dtype, self.const)
        if self.const > 0:
            return E.Add(result, E.IntImm(self.dtype, self.const))
        if self.const < 0:
            return E.Sub(result, E.IntImm(self.dtype, -self.const))
        return result


def _same_atom(a: E.PrimExpr, b: E.PrimExpr) -> bool:
    if a is b:
        return True
    if isinstance(a, E.Var) or isinstance(b, E.Var):
        return False
    if type(a) is not type(b):
        return False
    return structural_hash(a) == structural_hash(b) and structural_equal(a, b)


def is_scalar_int(e: E.PrimExpr) -> bool:
    return e.dtype.lanes == 1 and (e.dtype.is_integer)


def to_linear(e: E.PrimExpr) -> Linear:
    """The linear form of a scalar integer expression."""
    dt = e.dtype
    if isinstance(e, E.IntImm):
        return Linear(dt, [], e.value)
    if isinstance(e, E.Add):
        return to_linear(e.a).add(to_linear(e.b))
    if isinstance(e, E.Sub):
        return to_linear(e.a).add(to_linear(e.b), -1)
    if isinstance(e, E.Mul):
        if isinstance(e.b, E.IntImm):
            return to_linear(e.a).scale(e.b.value)
        if isinstance(e.a, E.IntImm):
            return to_linear(e.b).scale(e.a.value)
    out = Linear(dt)
    out.add_term(e, 1)
    return out


def affine_range(e: E.PrimExpr, ranges: dict[int, tuple[int, int]]) -> tuple[int, int] | None:
    """The exact ``(min, max)`` of a scalar integer expression that is affine in variables with
    known ranges (``ranges``: ``id(var) -> (lo, hi)``, independent of each other), or None
    when it is not (another atom, a product of variables, a vector)."""
    if e.dtype.lanes != 1 or not e.dtype.is_integer:
        return None
    lin = to_linear(e)
    lo = hi = lin.const
    for atom, c in lin.nonzero_terms():
        rng = ranges.get(id(atom)) if isinstance(atom, E.Var) else None
        if rng is None:
            return None
        a, b = c * rng[0], c * rng[1]
        lo, hi = lo + min(a, b), hi + max(a, b)
    return lo, hi
