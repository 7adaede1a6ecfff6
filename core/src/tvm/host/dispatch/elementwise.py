"""Element-wise tile primitives on the host: variant ``vector``.

The loops are those of core's fallback at thread scope (so broadcasting, 16-bit floats computed
in float32 and every other rule stay the same); this variant schedules them for the CPU:

- the innermost loop runs over the destination's contiguous axis, which the C compiler
  vectorises (``-O3``, restrict parameters, the probed vector ISA);
- the outermost loop is an OpenMP parallel loop when the op has at least ``PARALLEL_MIN``
  elements (or a symbolic size);
- loads that do not change along the innermost axis (a per-row operand such as a softmax's row
  maximum) are read once before it, into a ``LetStmt`` (so the compiler need not prove that the
  stores do not change them);
- both loops carry the ``FUSIBLE`` mark, so ``FuseRowLoops`` fuses them with neighbouring ops over the
  same rows (a softmax's subtract, exp and divide with its reductions), where the accesses allow.

Declines when the destination's innermost axis is not contiguous (a tile layout or a strided
buffer) or the scope's threads run concurrently (not on this target).
"""

from __future__ import annotations

from typing import Any

from ... import ir
from ...ir.visitor import post_order_visit
from ...tirx.operator.tile_primitive import DispatchContext, predicate
from ...tirx.operator.tile_primitive.common import bound_args
from ...tirx.operator.tile_primitive.fallback import fallback_impl
from ...tirx.operator.tile_primitive.ops import TILE_OPS
from .common import contiguous_inner, mark, parallel_worth, register_host, run_on_thread0

__all__ = ["FAMILIES", "VARIANT", "register", "schedule_loops", "vector_elementwise"]

VARIANT = "vector"
FAMILIES = ("copy", "cast", "fill", "unary", "binary", "fma", "select")
_NAMES = ("binary_chain",)


def _dst_contiguous(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    return contiguous_inner(bound_args(call).get("dst"), "dst")


def vector_elementwise(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    thread = DispatchContext(sctx.target, "thread", op_call=call, threads=sctx.threads,
                             callbacks=sctx.callbacks)
    body = fallback_impl(call.op.name)(call, thread).body
    return ir.PrimFunc([], run_on_thread0(sctx, schedule_loops(body)))


def schedule_loops(stmt: ir.Stmt) -> ir.Stmt:
    """Mark a perfect loop nest: innermost and outermost loops fusible, the outermost parallel
    when the nest is large enough."""
    loops: list[ir.For] = []
    s: Any = stmt
    while isinstance(s, ir.For):
        loops.append(s)
        s = s.body
    if not loops:
        return stmt
    worth = parallel_worth([lp.extent for lp in loops])
    inner = loops[-1]
    hoist = _Hoist(inner.loop_var, s)
    body = hoist.visit(s)
    out: ir.Stmt = mark(inner.with_fields(body=body), parallel=worth and len(loops) == 1)  # type: ignore[arg-type]
    for var, load in reversed(hoist.lets):
        out = ir.LetStmt(var, load, out)
    for lp in reversed(loops[:-1]):
        out = lp.with_fields(body=out)  # type: ignore[assignment]
    if len(loops) > 1:
        out = mark(out, parallel=worth)  # type: ignore[arg-type]
    return out


class _Hoist(ir.Mutator):
    """Loads that do not use ``var``, of buffers the body does not store, become variables."""

    def __init__(self, var: ir.Var, body: ir.Stmt) -> None:
        self.var = var
        self.stored: set[int] = set()
        self.lets: list[tuple[ir.Var, ir.BufferLoad]] = []
        post_order_visit(body, self._note_store)

    def _note_store(self, node: object) -> None:
        if isinstance(node, ir.BufferStore):
            self.stored.add(id(node.buffer.data))

    def visit_BufferLoad(self, node: ir.BufferLoad) -> ir.PrimExpr:
        if id(node.buffer.data) in self.stored or _uses(node, self.var):
            return self.generic_visit(node)  # type: ignore[return-value]
        v = ir.Var(f"{node.buffer.name}_v", node.dtype)
        self.lets.append((v, node))
        return v


def _uses(e: object, var: ir.Var) -> bool:
    found = [False]
    post_order_visit(e, lambda n: found.__setitem__(0, found[0] or n is var))
    return found[0]


def register() -> None:
    names = [name for name, spec in TILE_OPS.items() if spec.family in FAMILIES or name in _NAMES]
    register_host(names, VARIANT, vector_elementwise,
                  predicate("dst_contiguous", _dst_contiguous))
