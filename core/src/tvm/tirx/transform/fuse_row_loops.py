"""``FuseRowLoops``: fuse neighbouring loops that dispatch variants marked fusible.

A variant that lowers a tile primitive to a loop over rows (or elements) whose iterations are
independent marks that loop with the annotation :data:`FUSIBLE`. Two such loops next to each
other in a sequence, over the same range, become one loop (parallel if either was) running both bodies per iteration, when every buffer that one
of them writes and the other accesses is accessed, in both, only at one index position equal to
the loop variable plus the same loop-invariant offset (so iteration ``i`` of either loop touches
only slice ``i`` of it). A softmax written as whole-buffer ``max``, ``sub``, ``exp``, ``sum`` and
``fdiv`` then reads each row once from memory and keeps it in cache for the other steps. The
fused body's sequence is fused again, so marked inner loops over the same row fuse too. ``LetStmt``s that variants put right around a loop (loop-invariant loads)
move with it; a let of the second loop moves above the first only when the first does not write
what it reads. When the fused bodies are a store ``X[i] = e`` followed by a store that reads
``X[i]``, the value is forwarded (``X[i] = f(e)``: one store, the compiler sees one expression).

Loops whose bodies call opaque functions (``T.call_extern``, ...) are never fused. The pass runs
right after ``TilePrimitiveDispatch``, while buffers are still N-dimensional.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.function import IRModule, PrimFunc
from ...ir.op import CallEffect
from ...ir.structural import structural_equal
from ...ir.visitor import BindingVisitor, Mutator, Visitor, substitute
from ...transform import PassContext, PrimFuncPass
from ._util import flatten_seq

__all__ = ["FUSIBLE", "FuseRowLoops", "fuse_row_loops"]

FUSIBLE = "tirx.fusible"
"""For annotation: this loop's iterations are independent (they may run in any order or in
parallel) and it may be fused with an equal neighbour (see the module doc)."""


@dataclasses.dataclass(frozen=True)
class FuseRowLoops(PrimFuncPass):
    """Fuse neighbouring loops annotated :data:`FUSIBLE` where their accesses allow."""

    name = "FuseRowLoops"

    def transform_function(self, func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        body = fuse_row_loops(func.body)
        return func if body is func.body else func.with_body(body)


def fuse_row_loops(stmt: S.Stmt) -> S.Stmt:
    return _Fuser().visit(stmt)


class _Fuser(Mutator):
    def visit_SeqStmt(self, node: S.SeqStmt) -> Any:
        items = [self.visit(s) for s in node.seq]
        out = _fuse_sequence(items)
        if len(out) == len(node.seq) and all(a is b for a, b in zip(out, node.seq)):
            return node
        return flatten_seq(out)


def _fuse_sequence(items: list[S.Stmt]) -> list[S.Stmt]:
    out: list[S.Stmt] = []
    for s in items:
        fused = _try_fuse(out[-1], s) if out else None
        if fused is not None:
            out[-1] = fused
        else:
            out.append(s)
    return out


def _peel(s: S.Stmt) -> tuple[list[S.LetStmt], S.Stmt]:
    lets: list[S.LetStmt] = []
    while isinstance(s, S.LetStmt):
        lets.append(s)
        s = s.body
    return lets, s


def _try_fuse(prev: S.Stmt, s: S.Stmt) -> S.Stmt | None:
    lets_a, a = _peel(prev)
    lets_b, b = _peel(s)
    if not (isinstance(a, S.For) and isinstance(b, S.For) and _can_fuse(a, b)):
        return None
    if lets_b:
        written = _Accesses(a.loop_var, a.body).stores
        reads = _Accesses(a.loop_var, S.SeqStmt([S.Evaluate(x.value) for x in lets_b]))
        if any(written.get(key) for key in reads.buffers):
            return None  # the second loop's lets read what the first one writes
    out: S.Stmt = _fuse(a, b)
    if b.kind is S.ForKind.PARALLEL:
        out = out.with_fields(kind=S.ForKind.PARALLEL)  # type: ignore[assignment]
    for let in reversed([*lets_a, *lets_b]):
        out = let.with_fields(body=out)  # type: ignore[assignment]
    return out


def _fuse(a: S.For, b: S.For) -> S.For:
    body_b = substitute(b.body, {b.loop_var: a.loop_var})
    parts = _forward([*_stmts(a.body), *_stmts(body_b)])
    return a.with_fields(body=flatten_seq(_fuse_sequence(parts)))  # type: ignore[return-value]


def _forward(parts: list[S.Stmt]) -> list[S.Stmt]:
    """``X[i] = e; X[i] = f(X[i])`` -> ``X[i] = f(e)`` (adjacent stores to one element)."""
    out: list[S.Stmt] = []
    for s in parts:
        prev = out[-1] if out else None
        if (isinstance(prev, S.BufferStore) and isinstance(s, S.BufferStore)
                and prev.buffer is s.buffer and _same_indices(prev.indices, s.indices)):
            out[-1] = s.with_fields(value=_Forward(prev).visit(s.value))  # type: ignore[call-overload]
        else:
            out.append(s)
    return out


def _same_indices(a: list[E.PrimExpr], b: list[E.PrimExpr]) -> bool:
    return len(a) == len(b) and all(structural_equal(x, y) for x, y in zip(a, b))


class _Forward(Mutator):
    def __init__(self, store: S.BufferStore) -> None:
        self.store = store

    def visit_BufferLoad(self, node: E.BufferLoad) -> Any:
        if node.buffer is self.store.buffer and _same_indices(node.indices, self.store.indices):
            return self.store.value
        return self.generic_visit(node)


def _stmts(s: S.Stmt) -> list[S.Stmt]:
    return list(s.seq) if isinstance(s, S.SeqStmt) else [s]


def _can_fuse(a: S.For, b: S.For) -> bool:
    if not (a.annotations.get(FUSIBLE) and b.annotations.get(FUSIBLE)):
        return False
    kinds = {S.ForKind.SERIAL, S.ForKind.PARALLEL}
    if a.kind not in kinds or b.kind not in kinds or a.thread_tag or b.thread_tag:
        return False
    if not (structural_equal(a.min, b.min) and structural_equal(a.extent, b.extent)):
        return False
    acc_a = _Accesses(a.loop_var, a.body)
    acc_b = _Accesses(b.loop_var, b.body)
    if acc_a.opaque or acc_b.opaque:
        return False
    local = acc_a.bound | acc_b.bound
    for key in acc_a.buffers.keys() & acc_b.buffers.keys():
        if not (acc_a.stores.get(key) or acc_b.stores.get(key)):
            continue  # read by both, written by neither
        slots = acc_a.buffers[key] + acc_b.buffers[key]
        if any(slot is None for slot in slots):
            return False
        first = slots[0]
        assert first is not None
        for slot in slots[1:]:
            assert slot is not None
            if slot[0] != first[0] or not _same_offset(slot[1], first[1], local):
                return False
    return True


def _same_offset(x: E.PrimExpr | None, y: E.PrimExpr | None, local: set[int]) -> bool:
    if x is None or y is None:
        return x is None and y is None
    if _uses_any(x, local):
        return False
    return structural_equal(x, y)


class _Accesses(BindingVisitor):
    """Per buffer (by its data var): where each access has the loop variable ("slot": index
    position and offset, or None when it is anywhere else or absent), whether it is stored,
    the variables the body binds, and whether the body calls anything opaque."""

    def __init__(self, var: E.Var, body: S.Stmt) -> None:
        self.var = var
        self.buffers: dict[int, list[tuple[int, E.PrimExpr | None] | None]] = {}
        self.stores: dict[int, bool] = {}
        self.bound: set[int] = set()
        self.opaque = False
        self.visit(body)

    def _record(self, buf: Any, indices: list[E.PrimExpr], store: bool) -> None:
        key = id(buf.data)
        self.buffers.setdefault(key, []).append(_slot(indices, self.var))
        self.stores[key] = self.stores.get(key, False) or store

    def visit_BufferLoad(self, node: E.BufferLoad) -> None:
        self._record(node.buffer, node.indices, False)
        self.generic_visit(node)

    def visit_BufferStore(self, node: S.BufferStore) -> None:
        self._record(node.buffer, node.indices, True)
        self.generic_visit(node)

    def visit_Call(self, node: E.Call) -> None:
        if node.op.effect >= CallEffect.UPDATE_STATE:
            self.opaque = True
        self.generic_visit(node)

    def bind(self, var: E.Var) -> None:  # loops and let statements
        self.bound.add(id(var))

    def visit_TilePrimitiveCall(self, node: Any) -> None:
        self.opaque = True


def _slot(indices: list[E.PrimExpr], var: E.Var) -> tuple[int, E.PrimExpr | None] | None:
    hits = [k for k, i in enumerate(indices) if _uses_any(i, {id(var)})]
    if len(hits) != 1:
        return None
    k = hits[0]
    e = indices[k]
    if e is var:
        return k, None
    if isinstance(e, E.Add):
        if e.a is var and not _uses_any(e.b, {id(var)}):
            return k, e.b
        if e.b is var and not _uses_any(e.a, {id(var)}):
            return k, e.a
    return None


def _uses_any(e: Any, ids: set[int]) -> bool:
    found = False

    class _V(Visitor):
        def visit_Var(self, v: E.Var) -> None:
            nonlocal found
            found = found or id(v) in ids

    _V().visit(e)
    return found
