"""Running an element loop at a call's execution scope.

At thread scope (or when the scope has one thread) the calling thread loops over every element.
On a target whose threads run one after another (``SERIAL``), the scope's thread 0 does the whole
op. Otherwise the elements are dealt round-robin to the threads of the scope and a barrier of
the scope follows, so the next op sees every element written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .....ir import (
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    PrimExpr,
    Stmt,
    Var,
    const,
    seq,
)
from ..common import cast_to, fold_add, fold_mul, fold_product, is_one, unflatten
from ..dispatch_context import DispatchContext

__all__ = ["distributed_loops", "element_loops", "run_at_scope"]

BodyFn = Callable[[list[PrimExpr]], Stmt]


def _index_dtype(extents: Sequence[PrimExpr]) -> str:
    return "int64" if any(e.dtype.bits == 64 for e in extents) else "int32"


def element_loops(extents: Sequence[PrimExpr], body: BodyFn, prefix: str = "ax") -> Stmt:
    """Nested serial loops over ``extents`` (unit dimensions get no loop)."""
    dt = _index_dtype(extents)
    idx: list[PrimExpr] = []
    loops: list[tuple[Var, PrimExpr]] = []
    for d, ext in enumerate(extents):
        if is_one(ext):
            idx.append(const(0, dt))
            continue
        v = Var(f"{prefix}{d}", dt)
        idx.append(v)
        loops.append((v, ext))
    stmt = body(idx)
    for v, ext in reversed(loops):
        stmt = For(v, const(0, dt), ext, ForKind.SERIAL, stmt)
    return stmt


def distributed_loops(extents: Sequence[PrimExpr], body: BodyFn, index: PrimExpr,
                      nthreads: PrimExpr, prefix: str = "ax") -> Stmt:
    """Element ``e`` of the flattened ``extents`` is done by thread ``e % nthreads``."""
    dt = _index_dtype(extents)
    total = fold_product(extents)
    if isinstance(total, IntImm) and isinstance(nthreads, IntImm):
        trips_n = -(-total.value // nthreads.value)
        trips: PrimExpr = const(trips_n, dt)
        exact = total.value % nthreads.value == 0
    else:
        trips_n = 0  # not known statically
        trips = (total + (nthreads - 1)) // nthreads
        exact = False
    elem = Var("elem", dt)
    idx = unflatten(elem, extents)
    stmt = body(idx)
    if not exact:
        stmt = IfThenElse(elem < total, stmt)
    index = cast_to(index, elem.dtype)
    if trips_n == 1:
        return LetStmt(elem, index, stmt)
    k = Var(f"{prefix}_k", dt)
    return For(k, const(0, dt), trips, ForKind.SERIAL,
               LetStmt(elem, fold_add(fold_mul(k, nthreads), index), stmt))


def run_at_scope(sctx: DispatchContext, extents: Sequence[PrimExpr], body: BodyFn,
                 prefix: str = "ax") -> Stmt:
    """The element loop over ``extents`` as the call's scope runs it (see module doc)."""
    if sctx.is_thread or sctx.is_single_thread():
        return element_loops(extents, body, prefix)
    if sctx.is_serial():
        return IfThenElse(sctx.thread_index() == 0, element_loops(extents, body, prefix))
    barrier = sctx.barrier()
    loops = distributed_loops(extents, body, sctx.thread_index(), sctx.thread_extent(), prefix)
    return seq([loops] if barrier is None else [loops, barrier])
