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

from tvm import ir
from tvm.backend.sdk import (
    REDUCE_OPS,
    DispatchContext,
    ReduceOpType,
    bound_args,
    cast_to,
    compute_dtype,
    fail,
    fold_add,
    fold_mul,
    fold_product,
    is_one,
    normalize_axes,
    predicate,
    region_of,
    register_dispatch,
    static_bool,
)

from ._tiles import flat_view, is_distributed, owned

__all__ = ["LOCAL_VARIANT", "SHARED_VARIANT", "VARIANT", "local_reduce", "register",
           "warp_shuffle_reduce"]

VARIANT = "warp_shuffle"
PRIORITY = 10
SHFL_OP = "tirx.cuda.__shfl_xor_sync"
_SHUFFLE_TYPES = frozenset({"float32", "float64", "int32", "uint32", "int64", "uint64"})
_READABLE_BY_ALL = ("global", "shared", "shared.dyn")


def _shuffle_accumulator(kind: ReduceOpType, src: ir.BufferRegion, dst: ir.BufferRegion
                         ) -> ir.DataType:
    """The type the shuffles reduce in: the operands' common type, or the source's for a
    reduction other than a sum when neither operand is a float; declines when no warp shuffle
    moves it."""
    acc_dt = compute_dtype([src.buffer.dtype, dst.buffer.dtype])
    if kind is not ReduceOpType.SUM and not (src.buffer.dtype.is_float or dst.buffer.dtype.is_float):
        acc_dt = src.buffer.dtype
    if str(acc_dt) not in _SHUFFLE_TYPES:
        fail(f"no warp shuffle for the accumulator type {acc_dt}")
    return acc_dt


def _scope_ok(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    if sctx.scope_kind not in ("warp", "warpgroup", "cta"):
        return False, f"scope {sctx.scope_kind} (needs warp, warpgroup or cta)"
    n = sctx.thread_extent()
    if not isinstance(n, ir.IntImm) or n.value % 32:
        return False, f"the scope has {n} threads, not a constant multiple of 32"
    return True, ""


def _shuffle_registered(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    if ir.Op.exists(SHFL_OP):
        return True, ""
    return False, f"{SHFL_OP} is not registered"


def _unflatten(flat: ir.PrimExpr, extents: Sequence[ir.PrimExpr]) -> list[ir.PrimExpr]:
    """Row-major indices of position ``flat`` in a box of ``extents``."""
    out: list[ir.PrimExpr] = []
    stride: ir.PrimExpr = ir.const(1, flat.dtype)
    for d in range(len(extents) - 1, -1, -1):
        q = flat if is_one(stride) else flat // stride
        out.append(q if d == 0 else q % extents[d])
        stride = fold_mul(stride, extents[d])
    return list(reversed(out))


def warp_shuffle_reduce(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    a = bound_args(call)
    kind = ReduceOpType.parse(call.op_name)
    dst, src = a["dst"], a["src"]
    regions = (ir.Buffer, ir.BufferRegion)
    if not isinstance(dst, regions) or not isinstance(src, regions):
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
    if not isinstance(length, ir.IntImm) or length.value < 32:
        fail(f"the reduction has {length} elements (fewer than a warp, or not constant)")
    dst_kept = [r for r in dst.region if not is_one(r.extent)]
    rows = fold_product(kept_ext)
    if not _same_extents([r.extent for r in dst_kept], [e for e in kept_ext if not is_one(e)]):
        fail("dst does not have the kept axes of src (broadcasting dst is left to the fallback)")
    acc_dt = _shuffle_accumulator(kind, src, dst)

    nthreads = sctx.thread_extent().value  # type: ignore[attr-defined]
    nwarps = nthreads // 32
    tid = sctx.thread_index()
    idx_dt = "int32"
    # thread_index("warp") already is the lane; the other scopes count threads across warps
    lane: ir.PrimExpr = tid if sctx.scope_kind == "warp" else tid % 32
    warp: ir.PrimExpr = tid // 32 if nwarps > 1 else ir.const(0, idx_dt)

    acc = ir.Buffer("red_acc", [1], acc_dt, scope="local")
    zero = ir.const(0, idx_dt)
    row = ir.Var("row", idx_dt)
    it = ir.Var("red_it", idx_dt)
    elem = fold_add(fold_mul(it, ir.const(32, idx_dt)), lane)

    def src_at(flat_red: ir.PrimExpr) -> ir.PrimExpr:
        kept_idx = _unflatten(row, kept_ext) if kept else []
        red_idx = _unflatten(flat_red, red_ext)
        rel: list[ir.PrimExpr] = []
        for d in range(len(src.region)):
            rel.append(red_idx[axes.index(d)] if d in axes else kept_idx[kept.index(d)])
        return cast_to(ir.BufferLoad(src.buffer, [fold_add(r.min, i) for r, i in zip(src.region, rel)]),
                       acc_dt)

    init = ir.const(0, acc_dt) if kind is ReduceOpType.SUM else src_at(lane)
    trips = -(-length.value // 32)
    update: ir.Stmt = ir.BufferStore(acc, kind.combine(ir.BufferLoad(acc, [zero]), src_at(elem)),
                                     [zero])
    if length.value % 32:
        update = ir.IfThenElse(elem < length, update)
    shfl = ir.Op.get(SHFL_OP)
    mask = ir.IntImm("uint32", 0xFFFFFFFF)
    butterfly = [
        ir.BufferStore(acc, kind.combine(ir.BufferLoad(acc, [zero]), shfl(
            mask, ir.BufferLoad(acc, [zero]), ir.const(m, "int32"), ir.const(32, "int32"))),
            [zero])
        for m in (16, 8, 4, 2, 1)]
    dst_idx = _dst_indices(dst, row, [e for e in kept_ext if not is_one(e)])
    result: ir.PrimExpr = ir.BufferLoad(acc, [zero])
    if accum:
        result = kind.combine(cast_to(ir.BufferLoad(dst.buffer, dst_idx), acc_dt), result)
    write = ir.IfThenElse(lane == 0,
                          ir.BufferStore(dst.buffer, cast_to(result, dst.buffer.dtype), dst_idx))
    per_row = ir.seq([
        ir.AllocBuffer(acc),
        ir.BufferStore(acc, init, [zero]),
        ir.For(it, zero, ir.const(trips, idx_dt), ir.ForKind.SERIAL, update),
        *butterfly,
        write,
    ])
    body = _rows_loop(row, rows, warp, nwarps, per_row)
    barrier = sctx.barrier()
    return ir.PrimFunc([], body if barrier is None else ir.seq([body, barrier]))


def _rows_loop(row: ir.Var, rows: ir.PrimExpr, warp: ir.PrimExpr, nwarps: int, body: ir.Stmt
               ) -> ir.Stmt:
    """``row`` = warp, warp + nwarps, ... below ``rows`` (uniform within a warp, so the
    full-mask shuffles inside see all 32 lanes)."""
    if isinstance(rows, ir.IntImm) and rows.value <= nwarps:
        inner = ir.LetStmt(row, warp, body)
        return inner if rows.value == nwarps else ir.IfThenElse(warp < rows, inner)
    k = ir.Var("row_k", "int32")
    trips = (rows + (nwarps - 1)) // nwarps
    value = fold_add(fold_mul(k, ir.const(nwarps, "int32")), warp)
    guarded: ir.Stmt = body
    if not (isinstance(rows, ir.IntImm) and rows.value % nwarps == 0):
        guarded = ir.IfThenElse(row < rows, body)
    return ir.For(k, ir.const(0, "int32"), trips, ir.ForKind.SERIAL,
                  ir.LetStmt(row, value, guarded))


def _dst_indices(dst: ir.BufferRegion, row: ir.PrimExpr, kept_ext: list[ir.PrimExpr]
                 ) -> list[ir.PrimExpr]:
    idx = _unflatten(row, kept_ext) if kept_ext else []
    out: list[ir.PrimExpr] = []
    k = 0
    for r in dst.region:
        if is_one(r.extent):
            out.append(r.min)
        else:
            out.append(fold_add(r.min, idx[k]))
            k += 1
    return out


def _same_extents(a: list[ir.PrimExpr], b: list[ir.PrimExpr]) -> bool:
    if len(a) != len(b):
        return False
    return all(isinstance(x, ir.IntImm) and isinstance(y, ir.IntImm) and x.value == y.value
               or x is y for x, y in zip(a, b))


def register() -> None:
    when: list[Any] = [predicate("scope", _scope_ok), predicate("shuffle", _shuffle_registered)]
    for name in REDUCE_OPS:
        register_dispatch(name, "cuda", variant=VARIANT, priority=PRIORITY,
                          when=when)(warp_shuffle_reduce)
    register_register_variants()


# -- registers: `local` ----------------------------------------------------------------------------

LOCAL_VARIANT = "local"
SHARED_VARIANT = "shared"
def _register_scope(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    if sctx.scope_kind == "cluster":
        return False, ("scope cluster: a register tile is reduced within one CTA (thread, warp, "
                       "warpgroup or cta)")
    return True, ""


def _local_src(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    a = bound_args(call)
    src = a["src"]
    if not isinstance(src, (ir.Buffer, ir.BufferRegion)) or region_of(src).buffer.scope != "local":
        return False, "src is not in registers (local)"
    return True, ""


def _shared_src(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    a = bound_args(call)
    src = a["src"]
    if not isinstance(src, (ir.Buffer, ir.BufferRegion)) or \
            not region_of(src).buffer.scope.startswith("shared"):
        return False, "src is not in shared memory"
    return True, ""


def local_reduce(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    """Registers: each thread combines its own elements (unrolled), then, for a region spread
    over the scope's threads, the threads combine: a butterfly of warp shuffles, and across
    warps one partial per warp through shared memory, every thread reading them all. A
    ``local`` dst receives the total in every thread; a shared or global dst is written by
    thread 0 of the scope (then a barrier)."""
    a = bound_args(call)
    kind = ReduceOpType.parse(call.op_name)
    dst, src = a["dst"], a["src"]
    if not isinstance(dst, (ir.Buffer, ir.BufferRegion)):
        fail("dst must be a buffer or buffer region")
    dst, src = region_of(dst), region_of(src)
    accum = static_bool(a["accum"], "accum")
    if not is_distributed(src):
        fail("src is private to each thread (the core fallback reduces it per thread)")
    axes = normalize_axes(a["axes"], len(src.region))
    kept = [d for d in range(len(src.region)) if d not in axes and not is_one(src.region[d].extent)]
    if kept:
        fail("a register tile spread over threads is reduced as a whole (all its axes)")
    if not all(is_one(r.extent) for r in dst.region):
        fail("dst must be one element")
    acc_dt = _shuffle_accumulator(kind, src, dst)
    n = sctx.thread_extent()
    if not isinstance(n, ir.IntImm):
        fail("the scope's thread count is not constant")
    nthreads = n.value
    if nthreads > 32 and nthreads % 32:
        fail(f"the scope has {nthreads} threads, not a multiple of 32")
    if nthreads < 32 and nthreads & (nthreads - 1):
        fail(f"the scope has {nthreads} threads, not a power of two")

    own = owned(src, sctx)
    view = flat_view(src.buffer, "regs")
    # one partial per vector lane: independent chains the core can overlap, then a tree
    parts = own.lanes if own.lanes & (own.lanes - 1) == 0 else 1
    acc = ir.Buffer("red_acc", [parts], acc_dt, scope="local")
    zero = ir.const(0, "int32")
    slot = own.lane if parts > 1 else zero
    load = cast_to(ir.BufferLoad(view, [fold_add(own.m, own.lane)]), acc_dt)
    update = ir.BufferStore(acc, kind.combine(ir.BufferLoad(acc, [slot]), load), [slot])
    partial = own.wrap(update, vectorize=False)
    stmts: list[ir.Stmt] = [ir.AllocBuffer(acc)]
    stmts += [ir.BufferStore(acc, kind.identity(acc_dt), [ir.const(i, "int32")])
              for i in range(parts)]
    stmts += [_decl(view), partial]
    step = parts // 2
    while step >= 1:
        for i in range(step):
            a_i, b_i = ir.const(i, "int32"), ir.const(i + step, "int32")
            stmts.append(ir.BufferStore(acc, kind.combine(ir.BufferLoad(acc, [a_i]),
                                                          ir.BufferLoad(acc, [b_i])), [a_i]))
        step //= 2
    shfl = ir.Op.get(SHFL_OP)
    mask = ir.IntImm("uint32", 0xFFFFFFFF)
    width = min(nthreads, 32)
    m = width // 2
    while m >= 1:
        stmts.append(ir.BufferStore(acc, kind.combine(ir.BufferLoad(acc, [zero]), shfl(
            mask, ir.BufferLoad(acc, [zero]), ir.const(m, "int32"), ir.const(32, "int32"))),
            [zero]))
        m //= 2
    nwarps = max(1, nthreads // 32)
    tid = sctx.thread_index()
    if nwarps > 1:
        scratch = _scratch(sctx, acc_dt, nwarps)
        lane = tid % 32
        warp = tid // 32
        stmts.append(ir.IfThenElse(lane == 0,
                                   ir.BufferStore(scratch, ir.BufferLoad(acc, [zero]), [warp])))
        barrier = sctx.barrier()
        if barrier is not None:
            stmts.append(barrier)
        total: ir.PrimExpr = ir.BufferLoad(scratch, [zero])
        for w in range(1, nwarps):
            total = kind.combine(total, ir.BufferLoad(scratch, [ir.const(w, "int32")]))
        stmts.append(ir.BufferStore(acc, total, [zero]))
        if barrier is not None and sctx.threads.loops:
            # in a loop the call runs again and rewrites its scratch: wait for every reader
            stmts.append(barrier)
    dst_idx = [r.min for r in dst.region]
    result: ir.PrimExpr = ir.BufferLoad(acc, [zero])
    if accum:
        result = kind.combine(cast_to(ir.BufferLoad(dst.buffer, dst_idx), acc_dt), result)
    write: ir.Stmt = ir.BufferStore(dst.buffer, cast_to(result, dst.buffer.dtype), dst_idx)
    if dst.buffer.scope != "local":
        write = ir.IfThenElse(tid == 0, write)
        barrier = sctx.barrier()
        stmts.append(write if barrier is None else ir.seq([write, barrier]))
    else:
        stmts.append(write)
    return ir.PrimFunc([], ir.seq(stmts))


def _decl(view: ir.Buffer) -> ir.Stmt:
    return ir.DeclBuffer(view)


def _scratch(sctx: DispatchContext, dtype: Any, nwarps: int) -> ir.Buffer:
    """A fresh shared array of one partial per warp for this call."""
    count = sctx.cache_get(("cuda.red_scratch",), 0)
    sctx.cache_set(("cuda.red_scratch",), count + 1)
    buf = ir.Buffer(f"red_scratch{count if count else ''}", [nwarps], dtype, scope="shared")
    sctx.add_alloc_buffer(buf)
    return buf


def register_register_variants() -> None:
    when: list[Any] = [predicate("scope", _register_scope),
                       predicate("shuffle", _shuffle_registered),
                       predicate("operands", _local_src)]
    for name in REDUCE_OPS:
        register_dispatch(name, "cuda", variant=LOCAL_VARIANT, priority=PRIORITY,
                          when=when)(local_reduce)
        register_dispatch(name, "cuda", variant=SHARED_VARIANT, priority=PRIORITY,
                          when=[predicate("scope", _scope_ok),
                                predicate("shuffle", _shuffle_registered),
                                predicate("operands", _shared_src)])(warp_shuffle_reduce)
