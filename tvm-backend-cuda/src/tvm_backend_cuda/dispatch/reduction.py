"""``sum``/``max``/``min`` at warp, warpgroup or CTA scope through warp shuffles.

Variant ``warp_shuffle`` (priority 10, above core's ``fallback`` at -100). Each warp of the
scope takes whole output elements (rows) in turn: its 32 lanes read the row's reduced elements
with a stride of 32 (coalesced when the reduced axis is the innermost one), combine them in a
register, then combine the 32 partial values with a butterfly of ``__shfl_xor_sync`` (masks 16,
8, 4, 2, 1); lane 0 writes the result. A barrier of the scope follows (as after the fallback).

The fallback gives every output element to one thread, which reads the whole row alone: for a
softmax row of 4096 elements that is 4096 dependent loads in one thread, against 128 in each of
32 lanes here.

Declines (and the fallback runs) when: the source lives in per-thread ``local`` memory (lanes
cannot read each other's registers through memory), the scope's thread count is not a constant
multiple of 32, the reduction is shorter than 32 elements, the accumulator type has no shuffle
(only 32- and 64-bit ints and floats do), or the ``T.cuda.__shfl_xor_sync`` intrinsic is not
registered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tvm.ir import (
    AllocBuffer,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    Max,
    Min,
    Op,
    PrimExpr,
    PrimFunc,
    Stmt,
    TilePrimitiveCall,
    Var,
    const,
    seq,
)
from tvm.tirx.operator.tile_primitive import DispatchContext, fail, predicate, register_dispatch
from tvm.tirx.operator.tile_primitive.common import (
    ReduceOpType,
    bound_args,
    cast_to,
    compute_dtype,
    fold_add,
    fold_mul,
    fold_product,
    is_one,
    normalize_axes,
    region_of,
    static_bool,
)

__all__ = ["VARIANT", "register", "warp_shuffle_reduce"]

VARIANT = "warp_shuffle"
PRIORITY = 10
SHFL_OP = "tirx.cuda.__shfl_xor_sync"
_SHUFFLE_TYPES = frozenset({"float32", "float64", "int32", "uint32", "int64", "uint64"})
_READABLE_BY_ALL = ("global", "shared", "shared.dyn")


def _scope_ok(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    if sctx.scope_kind not in ("warp", "warpgroup", "cta"):
        return False, f"scope {sctx.scope_kind} (needs warp, warpgroup or cta)"
    n = sctx.thread_extent()
    if not isinstance(n, IntImm) or n.value % 32:
        return False, f"the scope has {n} threads, not a constant multiple of 32"
    return True, ""


def _shuffle_registered(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    if Op.exists(SHFL_OP):
        return True, ""
    return False, f"{SHFL_OP} is not registered"


def _combine(kind: ReduceOpType, a: PrimExpr, b: PrimExpr) -> PrimExpr:
    if kind is ReduceOpType.SUM:
        return a + b
    return Max(a, b) if kind is ReduceOpType.MAX else Min(a, b)


def _unflatten(flat: PrimExpr, extents: Sequence[PrimExpr]) -> list[PrimExpr]:
    """Row-major indices of position ``flat`` in a box of ``extents``."""
    out: list[PrimExpr] = []
    stride: PrimExpr = const(1, flat.dtype)
    for d in range(len(extents) - 1, -1, -1):
        q = flat if is_one(stride) else flat // stride
        out.append(q if d == 0 else q % extents[d])
        stride = fold_mul(stride, extents[d])
    return list(reversed(out))


def warp_shuffle_reduce(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    a = bound_args(call)
    kind = ReduceOpType.parse(call.op_name)
    dst, src = a["dst"], a["src"]
    if not isinstance(dst, (Buffer, BufferRegion)) or not isinstance(src, (Buffer, BufferRegion)):
        fail("dst and src must be buffers or buffer regions")
    dst, src = region_of(dst), region_of(src)
    if src.buffer.scope not in _READABLE_BY_ALL:
        fail(f"src is in '{src.buffer.scope}' memory; lanes share only global or shared memory")
    axes = normalize_axes(a["axes"], len(src.region))
    accum = static_bool(a["accum"], "accum")
    kept = [d for d in range(len(src.region)) if d not in axes]
    kept_ext = [src.region[d].extent for d in kept]
    red_ext = [src.region[d].extent for d in axes]
    length = fold_product(red_ext)
    if not isinstance(length, IntImm) or length.value < 32:
        fail(f"the reduction has {length} elements (fewer than a warp, or not constant)")
    dst_kept = [r for r in dst.region if not is_one(r.extent)]
    rows = fold_product(kept_ext)
    if not _same_extents([r.extent for r in dst_kept], [e for e in kept_ext if not is_one(e)]):
        fail("dst does not have the kept axes of src (broadcasting dst is left to the fallback)")
    acc_dt = compute_dtype([src.buffer.dtype, dst.buffer.dtype])
    if kind is not ReduceOpType.SUM and not (src.buffer.dtype.is_float or dst.buffer.dtype.is_float):
        acc_dt = src.buffer.dtype
    if str(acc_dt) not in _SHUFFLE_TYPES:
        fail(f"no warp shuffle for the accumulator type {acc_dt}")

    nthreads = sctx.thread_extent().value  # type: ignore[attr-defined]
    nwarps = nthreads // 32
    tid = sctx.thread_index()
    idx_dt = "int32"
    # thread_index("warp") already is the lane; the other scopes count threads across warps
    lane: PrimExpr = tid if sctx.scope_kind == "warp" else tid % 32
    warp: PrimExpr = tid // 32 if nwarps > 1 else const(0, idx_dt)

    acc = Buffer("red_acc", [1], acc_dt, scope="local")
    zero = const(0, idx_dt)
    row = Var("row", idx_dt)
    it = Var("red_it", idx_dt)
    elem = fold_add(fold_mul(it, const(32, idx_dt)), lane)

    def src_at(flat_red: PrimExpr) -> PrimExpr:
        kept_idx = _unflatten(row, kept_ext) if kept else []
        red_idx = _unflatten(flat_red, red_ext)
        rel: list[PrimExpr] = []
        for d in range(len(src.region)):
            rel.append(red_idx[axes.index(d)] if d in axes else kept_idx[kept.index(d)])
        return cast_to(BufferLoad(src.buffer, [fold_add(r.min, i) for r, i in zip(src.region, rel)]),
                       acc_dt)

    init = const(0, acc_dt) if kind is ReduceOpType.SUM else src_at(lane)
    trips = -(-length.value // 32)
    update: Stmt = BufferStore(acc, _combine(kind, BufferLoad(acc, [zero]), src_at(elem)), [zero])
    if length.value % 32:
        update = IfThenElse(elem < length, update)
    shfl = Op.get(SHFL_OP)
    mask = IntImm("uint32", 0xFFFFFFFF)
    butterfly = [BufferStore(acc, _combine(kind, BufferLoad(acc, [zero]),
                                           shfl(mask, BufferLoad(acc, [zero]), const(m, "int32"),
                                                const(32, "int32"))), [zero])
                 for m in (16, 8, 4, 2, 1)]
    dst_idx = _dst_indices(dst, row, [e for e in kept_ext if not is_one(e)])
    result: PrimExpr = BufferLoad(acc, [zero])
    if accum:
        result = _combine(kind, cast_to(BufferLoad(dst.buffer, dst_idx), acc_dt), result)
    write = IfThenElse(lane == 0, BufferStore(dst.buffer, cast_to(result, dst.buffer.dtype), dst_idx))
    per_row = seq([
        AllocBuffer(acc),
        BufferStore(acc, init, [zero]),
        For(it, zero, const(trips, idx_dt), ForKind.SERIAL, update),
        *butterfly,
        write,
    ])
    body = _rows_loop(row, rows, warp, nwarps, per_row)
    barrier = sctx.barrier()
    return PrimFunc([], body if barrier is None else seq([body, barrier]))


def _rows_loop(row: Var, rows: PrimExpr, warp: PrimExpr, nwarps: int, body: Stmt) -> Stmt:
    """``row`` = warp, warp + nwarps, ... below ``rows`` (uniform within a warp, so the
    full-mask shuffles inside see all 32 lanes)."""
    if isinstance(rows, IntImm) and rows.value <= nwarps:
        inner = LetStmt(row, warp, body)
        return inner if rows.value == nwarps else IfThenElse(warp < rows, inner)
    k = Var("row_k", "int32")
    trips = (rows + (nwarps - 1)) // nwarps
    value = fold_add(fold_mul(k, const(nwarps, "int32")), warp)
    guarded: Stmt = body
    if not (isinstance(rows, IntImm) and rows.value % nwarps == 0):
        guarded = IfThenElse(row < rows, body)
    return For(k, const(0, "int32"), trips, ForKind.SERIAL, LetStmt(row, value, guarded))


def _dst_indices(dst: BufferRegion, row: PrimExpr, kept_ext: list[PrimExpr]) -> list[PrimExpr]:
    idx = _unflatten(row, kept_ext) if kept_ext else []
    out: list[PrimExpr] = []
    k = 0
    for r in dst.region:
        if is_one(r.extent):
            out.append(r.min)
        else:
            out.append(fold_add(r.min, idx[k]))
            k += 1
    return out


def _same_extents(a: list[PrimExpr], b: list[PrimExpr]) -> bool:
    if len(a) != len(b):
        return False
    return all(isinstance(x, IntImm) and isinstance(y, IntImm) and x.value == y.value
               or x is y for x, y in zip(a, b))


def register() -> None:
    when: list[Any] = [predicate("scope", _scope_ok), predicate("shuffle", _shuffle_registered)]
    for name in ("sum", "max", "min"):
        register_dispatch(name, "cuda", variant=VARIANT, priority=PRIORITY,
                          when=when)(warp_shuffle_reduce)
