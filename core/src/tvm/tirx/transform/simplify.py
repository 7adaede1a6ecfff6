"""``StmtSimplify``: arithmetic simplification of every expression, plus statement clean-up.

Expressions go through :class:`tvm.arith.Analyzer` with the ranges of enclosing loops (and
kernel ids) bound. Statements: an ``if`` with a constant (or provable) condition keeps one
branch; loops of extent 0 vanish and loops of extent 1 become their body (thread-bound loops
stay: they define the launch); nested sequences are flattened; ``Evaluate`` of a constant and
provably true asserts are dropped; a ``let`` of a constant is inlined.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ...arith import Analyzer, ConstIntBound
from ...arith.analyzer import _Rewriter
from ...arith.rewrite import simplify_binding
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.buffer import Range
from ...ir.function import IRModule, PrimFunc
from ...ir.visitor import substitute
from ...transform import PassContext, PrimFuncPass
from ._util import flatten_seq, is_no_op, no_op

__all__ = ["Simplify", "StmtSimplify", "simplify_stmt"]


def _const_int(e: E.PrimExpr) -> int | None:
    return e.value if isinstance(e, E.IntImm) else None


class _Simplifier(_Rewriter):
    """The expression rewriter, extended to statements (scoping loop and let bounds)."""

    def __init__(self, analyzer: Analyzer) -> None:
        super().__init__(analyzer)

    # -- statements ------------------------------------------------------------------------
    def visit_For(self, s: S.For) -> S.Stmt:
        lo, ext = self.visit(s.min), self.visit(s.extent)
        n = _const_int(ext)
        if n is not None and n <= 0:
            return no_op()
        if n == 1 and s.kind is not S.ForKind.THREAD_BINDING:
            return self.visit(substitute(s.body, {s.loop_var: lo}))
        with self.ana.bound_scope(s.loop_var, Range(lo, ext)):
            body = self.visit(s.body)
        if is_no_op(body) and s.kind is not S.ForKind.THREAD_BINDING:
            return no_op()
        if lo is s.min and ext is s.extent and body is s.body:
            return s
        return s.with_fields(min=lo, extent=ext, body=body)  # type: ignore[return-value]

    def visit_IfThenElse(self, s: S.IfThenElse) -> S.Stmt:
        cond = self.visit(s.condition)
        if isinstance(cond, E.IntImm) and cond.dtype.lanes == 1:
            if cond.value:
                return self.visit(s.then_case)
            return self.visit(s.else_case) if s.else_case is not None else no_op()
        with self.ana.constraint_scope(cond):
            then_case = self.visit(s.then_case)
        else_case = None
        if s.else_case is not None:
            with self.ana.constraint_scope(self.visit(E.Not(cond))):
                else_case = self.visit(s.else_case)
            if is_no_op(else_case):
                else_case = None
        if is_no_op(then_case) and else_case is None:
            return no_op()
        if cond is s.condition and then_case is s.then_case and else_case is s.else_case:
            return s
        return S.IfThenElse(cond, then_case, else_case)

    def visit_LetStmt(self, s: S.LetStmt) -> S.Stmt:
        return simplify_binding(self, s, (E.IntImm, E.FloatImm), S.LetStmt)

    def visit_SeqStmt(self, s: S.SeqStmt) -> S.Stmt:
        items = [self.visit(x) for x in s.seq]
        out = flatten_seq(items)
        if isinstance(out, S.SeqStmt) and len(out.seq) == len(s.seq) \
                and all(a is b for a, b in zip(out.seq, s.seq)):
            return s
        return out

    def visit_Evaluate(self, s: S.Evaluate) -> S.Stmt:
        value = self.visit(s.value)
        if isinstance(value, (E.IntImm, E.FloatImm)):
            return no_op() if not _is_canonical_no_op(s) else s
        return s if value is s.value else S.Evaluate(value)

    def visit_AssertStmt(self, s: S.AssertStmt) -> S.Stmt:
        cond = self.visit(s.condition)
        if isinstance(cond, E.IntImm) and cond.value:
            return no_op()
        return s if cond is s.condition else S.AssertStmt(cond, s.message)

    def visit_ScopeIdDef(self, s: S.ScopeIdDef) -> S.Stmt:
        extents = [self.visit(e) for e in s.extents]
        # kernel ids are in scope for the rest of the block: bind them for what follows
        for v, ext in zip(s.vars, extents):
            self.ana.bind(v, Range(E.IntImm(v.dtype, 0), ext))
        if all(a is b for a, b in zip(extents, s.extents)):
            return s
        return S.ScopeIdDef(s.kind, s.vars, extents)

    def visit_BufferStore(self, s: S.BufferStore) -> S.Stmt:
        value = self.visit(s.value)
        indices = [self.visit(i) for i in s.indices]
        if value is s.value and all(a is b for a, b in zip(indices, s.indices)):
            return s
        return s.with_fields(value=value, indices=indices)  # type: ignore[return-value]

    def visit_BufferLoad(self, e: E.BufferLoad) -> E.PrimExpr:
        indices = [self.visit(i) for i in e.indices]
        if all(a is b for a, b in zip(indices, e.indices)):
            return e
        return e.with_fields(indices=indices)  # type: ignore[return-value]


def _is_canonical_no_op(s: S.Evaluate) -> bool:
    return isinstance(s.value, E.IntImm) and s.value.value == 0 and s.value.dtype == "int32"


def simplify_stmt(stmt: Any, analyzer: Analyzer | None = None) -> Any:
    """Simplify a statement or expression (see :class:`StmtSimplify`)."""
    return _Simplifier(analyzer or Analyzer()).visit(stmt)


@dataclasses.dataclass(frozen=True)
class StmtSimplify(PrimFuncPass):
    """Constant folding, arithmetic simplification and dead-code removal."""

    name = "StmtSimplify"

    def transform_function(self, func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        ana = Analyzer()
        for buf in func.buffer_map.values():
            for dim in buf.shape:
                # symbolic extents of argument buffers are non-negative
                if isinstance(dim, E.Var) and dim.dtype.is_int:
                    ana.update(dim, ConstIntBound(0, ana.const_int_bound(dim).max_value))
        body = _Simplifier(ana).visit(func.body)
        return func if body is func.body else func.with_body(body)


# The seed spells it both ways.
Simplify = StmtSimplify
