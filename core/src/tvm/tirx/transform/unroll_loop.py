"""``UnrollLoop``: replace loops marked ``unroll`` with copies of their body."""

from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.function import IRModule, PrimFunc
from ...ir.visitor import Mutator, substitute
from ...transform import PassContext, PrimFuncPass
from ._util import contains, flatten_seq

__all__ = ["UnrollLoop"]


@dataclasses.dataclass(frozen=True)
class UnrollLoop(PrimFuncPass):
    """Unroll every ``ForKind.UNROLLED`` loop with a constant extent up to ``max_extent``.

    A loop whose body declares buffers is left as it is (copies would declare them again);
    so is one over ``max_extent`` (codegens may still emit an unroll pragma for it).
    """

    max_extent: int = 1024

    name = "UnrollLoop"

    def transform_function(self, func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        body = _Unroller(self.max_extent).visit(func.body)
        return func if body is func.body else func.with_body(body)


class _Unroller(Mutator):
    def __init__(self, max_extent: int) -> None:
        self.max_extent = max_extent

    def visit_For(self, s: S.For) -> S.Stmt:
        body = self.visit(s.body)
        if s.kind is not S.ForKind.UNROLLED or not self._can_unroll(s, body):
            return s if body is s.body else s.with_fields(body=body)  # type: ignore[return-value]
        n = s.extent.value  # type: ignore[attr-defined]
        copies = [substitute(body, {s.loop_var: _offset(s.min, k)}) for k in range(n)]
        return flatten_seq(copies)

    def _can_unroll(self, s: S.For, body: S.Stmt) -> bool:
        if not isinstance(s.extent, E.IntImm) or s.extent.value > self.max_extent:
            return False
        return not contains(body, lambda n: isinstance(n, (S.AllocBuffer, S.DeclBuffer,
                                                              S.ScopeIdDef, S.LetStmt))
                            or _is_jump(n))


def _offset(base: E.PrimExpr, k: int) -> E.PrimExpr:
    if isinstance(base, E.IntImm):
        return E.IntImm(base.dtype, base.value + k)
    return base if k == 0 else E.Add(base, E.IntImm(base.dtype, k))


def _is_jump(n: object) -> bool:
    """``break``/``continue`` (their loop must stay a loop)."""
    return (isinstance(n, E.Call)
            and n.op.name in ("tirx.break_loop", "tirx.continue_loop"))
