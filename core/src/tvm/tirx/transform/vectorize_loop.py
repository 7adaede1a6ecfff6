"""``VectorizeLoop``: turn loops marked ``vectorized`` into vector (Ramp/Broadcast) code.

Handled: a body of buffer stores (flat, one index each) whose indices are ``base + c * v`` in
the loop variable ``v`` (``c`` a constant, not 0) and whose values are built from loads with
such indices, loads and scalars that do not depend on ``v`` (broadcast), arithmetic,
comparisons, selects, casts and pure builtin math calls. Anything else - or a loop where a
stored buffer is also read at another index (a loop-carried dependence) - falls back to a
serial loop, which is always correct.

A vectorised loop far wider than the target's vectors (more than ``FAR_PAST`` of its widest
registers, ``TargetKind.vector_bytes``) would become one statement per lane in C-style code
(``T.vectorized(1024)``: 1024 statements, seconds of compile time, slower code): it is compiled
as a serial loop over vectors of that width instead, with a :class:`~tvm.error.PerformanceWarning`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ...arith import Analyzer
from ...arith.linear import to_linear
from ...error import PerformanceWarning, warn
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.function import IRModule, PrimFunc
from ...ir.op import CallEffect, OpCategory
from ...ir.structural import structural_equal
from ...ir.visitor import Mutator, substitute
from ...transform import PassContext, PrimFuncPass
from ._util import contains, target_of

__all__ = ["DEFAULT_VECTOR_BYTES", "FAR_PAST", "VectorizeLoop"]

#: a vectorised loop wider than this many of the target's vectors is compiled in chunks
FAR_PAST = 4
#: the vector width assumed for a target kind that does not declare one (AVX-512)
DEFAULT_VECTOR_BYTES = 64


@dataclasses.dataclass(frozen=True)
class VectorizeLoop(PrimFuncPass):
    """Vectorize ``ForKind.VECTORIZED`` loops with constant extents (``enable=False``, or the
    config ``"tir.disable_vectorize"``, makes them serial)."""

    enable: bool = True

    name = "VectorizeLoop"

    def transform_function(self, func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        enable = self.enable and not ctx.config.get("tir.disable_vectorize", False)
        target = target_of(func, ctx)
        kind = target.kind if target is not None else None
        width = getattr(kind, "vector_bytes", 0) or DEFAULT_VECTOR_BYTES
        body = _Vectorizer(enable, width, kind.name if kind else "").visit(func.body)
        return func if body is func.body else func.with_body(body)


class _NotVectorizable(Exception):
    """The loop body uses something this pass does not vectorize."""


class _Vectorizer(Mutator):
    def __init__(self, enable: bool, vector_bytes: int = DEFAULT_VECTOR_BYTES,
                 target: str = "") -> None:
        self.enable = enable
        self.vector_bytes = vector_bytes
        self.target = target

    def visit_For(self, s: S.For) -> S.Stmt:
        body = self.visit(s.body)
        if s.kind is not S.ForKind.VECTORIZED:
            return s if body is s.body else s.with_fields(body=body)  # type: ignore[return-value]
        serial = s.with_fields(kind=S.ForKind.SERIAL, body=body)
        if not self.enable or not isinstance(s.extent, E.IntImm) or s.extent.value < 2:
            return serial  # type: ignore[return-value]
        try:
            chunk, bytes_ = self._chunk(body, s.extent.value)
            if chunk < s.extent.value:
                return self._in_chunks(s, body, chunk, bytes_)
            return _vectorize(s.loop_var, s.min, s.extent.value, body)
        except _NotVectorizable:
            return serial  # type: ignore[return-value]

    def _chunk(self, body: S.Stmt, lanes: int) -> tuple[int, int]:
        """The lanes to vectorise at a time (``lanes`` unless far past the target's vectors)
        and the bytes of the widest element stored."""
        bytes_ = max(max(1, st.buffer.dtype.bits // 8) for st in _stores(body))
        width = max(1, self.vector_bytes // bytes_)
        return (lanes if lanes <= FAR_PAST * width else width), bytes_

    def _in_chunks(self, s: S.For, body: S.Stmt, chunk: int, bytes_: int) -> S.Stmt:
        """``for v in T.vectorized(n)`` as a serial loop over vectors of ``chunk`` lanes (and
        one shorter vector for the rest), with the warning that says so."""
        lanes = s.extent.value  # type: ignore[attr-defined]
        count, rest = divmod(lanes, chunk)
        dt = s.loop_var.dtype
        outer = E.Var(f"{s.loop_var.name}_vec", dt)
        start = self.ana_add(s.min, E.Mul(outer, E.IntImm(dt, chunk)))
        parts: list[S.Stmt] = [S.For(outer, E.IntImm(dt, 0), E.IntImm(dt, count),
                                     S.ForKind.SERIAL, _vectorize(s.loop_var, start, chunk, body))]
        if rest:
            tail = self.ana_add(s.min, E.IntImm(dt, count * chunk))
            parts.append(_vectorize(s.loop_var, tail, rest, body) if rest > 1
                         else substitute(body, {s.loop_var: tail}))
        warn(f"T.vectorized({lanes}) over {bytes_}-byte elements is {lanes // chunk}x the "
             f"vector width of target {self.target or '?'} ({chunk} lanes in "
             f"{self.vector_bytes} bytes); it is compiled as a serial loop over "
             f"{chunk}-lane vectors. Write that loop (T.serial({count}) around "
             f"T.vectorized({chunk})), or T.serial({lanes}) to leave vectorising to the "
             "compiler, to silence this", PerformanceWarning, span=s.span)
        return parts[0] if len(parts) == 1 else S.SeqStmt(parts)

    @staticmethod
    def ana_add(a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
        return Analyzer().simplify(E.Add(a, b))


def _stores(body: S.Stmt) -> list[S.BufferStore]:
    items = body.seq if isinstance(body, S.SeqStmt) else [body]
    out = []
    for x in items:
        if not isinstance(x, S.BufferStore):
            raise _NotVectorizable
        out.append(x)
    return out


def _vectorize(var: E.Var, lo: E.PrimExpr, lanes: int, body: S.Stmt) -> S.Stmt:
    stores = _stores(body)
    _check_dependences(var, stores)
    rewriter = _Lanes(var, lo, lanes)
    new = []
    for st in stores:
        if len(st.indices) != 1:
            raise _NotVectorizable
        index = rewriter.index(st.indices[0])
        if not isinstance(index, E.Ramp):
            raise _NotVectorizable  # every lane would store to one place
        value = rewriter.broadcast(rewriter.visit(st.value))
        store = S.BufferStore(st.buffer, value, [index])
        store.span = st.span
        new.append(store)
    return new[0] if len(new) == 1 else S.SeqStmt(new)


def _check_dependences(var: E.Var, stores: list[S.BufferStore]) -> None:
    """A stored buffer may only be read at the index it is stored to (same statement or
    earlier), else lanes would see each other's writes in the wrong order."""
    for st in stores:
        def bad_read(n: Any, st: S.BufferStore = st) -> bool:
            return (isinstance(n, E.BufferLoad) and n.buffer.data is st.buffer.data
                    and not all(structural_equal(a, b) for a, b in zip(n.indices, st.indices)))

        if any(contains(other, bad_read) for other in stores):
            raise _NotVectorizable


class _Lanes(Mutator):
    """Rewrites scalar expressions of the loop body into ``lanes``-wide vectors."""

    def __init__(self, var: E.Var, lo: E.PrimExpr, lanes: int) -> None:
        self.var, self.lo, self.lanes = var, lo, lanes
        self.ana = Analyzer()

    def depends(self, e: Any) -> bool:
        return contains(e, lambda n: n is self.var)

    def index(self, e: E.PrimExpr) -> E.PrimExpr:
        """``base + c * var`` becomes ``Ramp(base at var=lo, c, lanes)``; others refuse."""
        if not self.depends(e):
            return e
        if not (e.dtype.lanes == 1 and e.dtype.is_int):
            raise _NotVectorizable
        lin = to_linear(self.ana.simplify(e))
        coeff = 0
        for atom, c in lin.nonzero_terms():
            if atom is self.var or self._widened_var(atom):
                coeff = c
            elif self.depends(atom):
                raise _NotVectorizable  # e.g. var // 2: not linear
        if coeff == 0:
            raise _NotVectorizable
        base = self.ana.simplify(substitute(e, {self.var: self.lo}))
        return E.Ramp(base, E.IntImm(e.dtype, coeff), self.lanes)

    def _widened_var(self, atom: E.PrimExpr) -> bool:
        """``(int64) var``: a 64-bit index (FlattenBuffer) steps like ``var`` itself."""
        return (isinstance(atom, E.Cast) and atom.value is self.var and atom.dtype.is_int
                and atom.dtype.bits >= self.var.dtype.bits)

    def broadcast(self, e: E.PrimExpr) -> E.PrimExpr:
        return e if e.dtype.lanes == self.lanes else E.Broadcast(e, self.lanes)

    def visit(self, node: Any) -> Any:
        if isinstance(node, E.PrimExpr) and not self.depends(node):
            return node  # invariant: stays scalar, broadcast where combined
        return super().visit(node)

    def visit_Var(self, v: E.Var) -> E.PrimExpr:
        return E.Ramp(self.lo, E.IntImm(v.dtype, 1), self.lanes)

    def visit_BufferLoad(self, e: E.BufferLoad) -> E.PrimExpr:
        if len(e.indices) != 1 or e.dtype.lanes != 1:
            raise _NotVectorizable
        return E.BufferLoad(e.buffer, [self.index(e.indices[0])])

    def visit_BinaryOp(self, e: E.BinaryOp) -> E.PrimExpr:
        a, b = self.visit(e.a), self.visit(e.b)
        return type(e)(self.broadcast(a), self.broadcast(b))

    def visit_Not(self, e: E.Not) -> E.PrimExpr:
        return E.Not(self.broadcast(self.visit(e.a)))

    def visit_Cast(self, e: E.Cast) -> E.PrimExpr:
        v = self.broadcast(self.visit(e.value))
        return E.Cast(e.dtype.with_lanes(self.lanes), v)

    def visit_Select(self, e: E.Select) -> E.PrimExpr:
        return E.Select(self.broadcast(self.visit(e.condition)),
                        self.broadcast(self.visit(e.true_value)),
                        self.broadcast(self.visit(e.false_value)))

    def visit_Call(self, e: E.Call) -> E.PrimExpr:
        op = e.op
        if op.category is not OpCategory.BUILTIN or op.effect is not CallEffect.PURE \
                or not all(isinstance(a, E.PrimExpr) and not isinstance(a, E.StringImm) for a in e.args):
            raise _NotVectorizable
        args = [self.broadcast(self.visit(a)) for a in e.args]
        return E.Call(e.dtype.with_lanes(self.lanes), op, args)

    def generic_visit(self, node: Any) -> Any:
        raise _NotVectorizable  # Let, Ramp, Broadcast, ...: not handled here
