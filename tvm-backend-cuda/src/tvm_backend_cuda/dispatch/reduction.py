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

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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

from ._tiles import THREAD_AXES, _thread_axis_value, flat_view, is_distributed
from .common import const_int

__all__ = ["LOCAL_VARIANT", "SHARED_VARIANT", "VARIANT", "local_reduce", "register",
           "warp_shuffle_reduce"]

VARIANT = "warp_shuffle"
PRIORITY = 10
SHFL_OP = "tirx.cuda.__shfl_xor_sync"
_SHUFFLE_TYPES = frozenset({"float32", "float64", "int32", "uint32", "int64", "uint64"})
_READABLE_BY_ALL = ("global", "shared", "shared.dyn")
#: independent partial accumulators a thread keeps at most (results x partials each)
MAX_PARTIALS = 16


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
    """Registers spread over threads, as their layouts say (see :class:`_RegisterPlan`).

    Each thread combines its own registers into one accumulator per destination element it
    needs (unrolled loops over the reduced register digits, the accumulators innermost:
    independent chains), then the threads combine: a butterfly of warp shuffles over the lane
    bits of the reduced thread digits, and across warps every thread's partials through
    shared memory (one barrier; a second before the scratch is written again when the call
    sits in a loop). A ``local`` dst receives its registers' results in every thread; a shared
    or global dst is written by thread 0 of the scope (then a barrier)."""
    a = bound_args(call)
    kind = ReduceOpType.parse(call.op_name)
    dst, src = a["dst"], a["src"]
    if not isinstance(dst, (ir.Buffer, ir.BufferRegion)):
        fail("dst must be a buffer or buffer region")
    dst, src = region_of(dst), region_of(src)
    accum = static_bool(a["accum"], "accum")
    thread_reduce = static_bool(a["thread_reduce"], "thread_reduce")
    if not is_distributed(src):
        fail("src is private to each thread (the core fallback reduces it per thread)")
    axes = normalize_axes(a["axes"], len(src.region))
    acc_dt = _shuffle_accumulator(kind, src, dst)
    n = sctx.thread_extent()
    if not isinstance(n, ir.IntImm):
        fail("the scope's thread count is not constant")
    nthreads = n.value
    if nthreads > 32 and nthreads % 32:
        fail(f"the scope has {nthreads} threads, not a multiple of 32")
    if nthreads < 32 and nthreads & (nthreads - 1):
        fail(f"the scope has {nthreads} threads, not a power of two")
    plan = _RegisterPlan(src, dst, axes, thread_reduce, nthreads)

    i32 = "int32"
    slots = len(plan.slots)
    acc = ir.Buffer("red_acc", [slots], acc_dt, scope="local")
    src_view = flat_view(src.buffer, "regs")
    stmts: list[ir.Stmt] = [ir.AllocBuffer(acc), ir.DeclBuffer(src_view)]
    # per thread: every slot's registers, the reduced digits as unrolled loops around the slots
    loop_vars = [ir.Var(f"red_r{k}", i32) for k in range(len(plan.reduced))]
    offset: ir.PrimExpr = ir.const(0, i32)
    for v, (digit, _) in zip(loop_vars, plan.reduced):
        offset = fold_add(offset, fold_mul(v, ir.const(digit.stride, i32)))

    def load(base: int) -> ir.PrimExpr:
        return cast_to(ir.BufferLoad(src_view, [fold_add(ir.const(base, i32), offset)]), acc_dt)

    def digit_value(g: _Digit) -> ir.PrimExpr:
        value = _thread_axis_value(g.axis, sctx)
        return (value if g.stride == 1 else value // g.stride) % g.ext

    guard = plan.reduced_guard(loop_vars, digit_value)
    if loop_vars or guard is not None:
        # `parts` partials a result (by the innermost reduced digit): independent chains
        inner = plan.reduced[-1][0].ext if plan.reduced else 1
        parts = inner if 1 < inner <= 8 and inner & (inner - 1) == 0 and \
            slots * inner <= MAX_PARTIALS else 1
        part = acc if parts == 1 else ir.Buffer("red_part", [slots * parts], acc_dt,
                                                 scope="local")
        if parts > 1:
            stmts.append(ir.AllocBuffer(part))
        lane: ir.PrimExpr = loop_vars[-1] if parts > 1 else ir.const(0, i32)

        def at(k: int, i: ir.PrimExpr) -> ir.PrimExpr:
            return fold_add(ir.const(k * parts, i32), i)

        stmts += [ir.BufferStore(part, kind.identity(acc_dt), [ir.const(k, i32)])
                  for k in range(slots * parts)]
        body: ir.Stmt = ir.seq([
            ir.BufferStore(part, kind.combine(ir.BufferLoad(part, [at(k, lane)]), load(base)),
                           [at(k, lane)])
            for k, (_, base) in enumerate(plan.slots)])
        if guard is not None:
            body = ir.IfThenElse(guard, body)
        for v, (digit, _) in reversed(list(zip(loop_vars, plan.reduced))):
            body = ir.For(v, ir.const(0, i32), ir.const(digit.ext, i32), ir.ForKind.UNROLLED, body)
        stmts.append(body)
        step = parts // 2
        while step >= 1:  # a tree over each result's partials
            for k in range(slots):
                for i in range(step):
                    a_i, b_i = at(k, ir.const(i, i32)), at(k, ir.const(i + step, i32))
                    stmts.append(ir.BufferStore(part, kind.combine(
                        ir.BufferLoad(part, [a_i]), ir.BufferLoad(part, [b_i])), [a_i]))
            step //= 2
        if parts > 1:
            stmts += [ir.BufferStore(acc, ir.BufferLoad(part, [at(k, ir.const(0, i32))]),
                                     [ir.const(k, i32)]) for k in range(slots)]
    else:
        stmts += [ir.BufferStore(acc, load(base), [ir.const(k, i32)])
                  for k, (_, base) in enumerate(plan.slots)]

    shfl = ir.Op.get(SHFL_OP)
    mask = ir.IntImm("uint32", 0xFFFFFFFF)
    k_var = ir.Var("red_slot", i32)
    for m in plan.lane_masks:
        cur = ir.BufferLoad(acc, [k_var])
        stmts.append(ir.For(k_var, ir.const(0, i32), ir.const(slots, i32), ir.ForKind.UNROLLED,
                            ir.BufferStore(acc, kind.combine(cur, shfl(
                                mask, cur, ir.const(m, i32), ir.const(32, i32))), [k_var])))
    tid = sctx.thread_index()
    if plan.warp_digits:
        stmts += _across_warps(sctx, kind, acc, acc_dt, slots, nthreads, tid, plan.warp_digits)

    stores: list[ir.Stmt] = []
    entries = plan.dst_entries(dst)
    for slot, target in entries:
        result: ir.PrimExpr = ir.BufferLoad(acc, [ir.const(slot, i32)])
        if accum:
            result = kind.combine(cast_to(ir.BufferLoad(target.buffer, target.indices), acc_dt),
                                  result)
        stores.append(ir.BufferStore(target.buffer, cast_to(result, dst.buffer.dtype),
                                     target.indices))
    if dst.buffer.scope == "local":
        if entries:
            stmts.append(ir.DeclBuffer(entries[0][1].buffer))
        stmts += stores
    else:
        write = ir.IfThenElse(tid == 0, ir.seq(stores))
        barrier = sctx.barrier()
        stmts.append(write if barrier is None else ir.seq([write, barrier]))
    return ir.PrimFunc([], ir.seq(stmts))


def _across_warps(sctx: DispatchContext, kind: ReduceOpType, acc: ir.Buffer, acc_dt: Any,
                  slots: int, nthreads: int, tid: ir.PrimExpr,
                  warp_digits: list[tuple[int, int]]) -> list[ir.Stmt]:
    """Every thread's partials through shared memory; each thread then combines those of the
    threads that differ from it only in the reduced warp-level digits (``(thread stride,
    extent)``, strides multiples of 32)."""
    i32 = "int32"
    scratch = _scratch(sctx, acc_dt, nthreads * slots)
    k_var = ir.Var("red_slot", i32)
    base = fold_mul(tid, ir.const(slots, i32))
    out: list[ir.Stmt] = [ir.For(k_var, ir.const(0, i32), ir.const(slots, i32),
                                 ir.ForKind.UNROLLED,
                                 ir.BufferStore(scratch, ir.BufferLoad(acc, [k_var]),
                                                [fold_add(base, k_var)]))]
    barrier = sctx.barrier()
    if barrier is not None:
        out.append(barrier)
    # the partner with digit values ks: tid + sum((k - digit(tid)) * stride)
    own = [(tid // stride) % ext for stride, ext in warp_digits]
    total: ir.PrimExpr | None = None
    for ks in itertools.product(*(range(ext) for _, ext in warp_digits)):
        partner: ir.PrimExpr = tid
        for k, d, (stride, _) in zip(ks, own, warp_digits):
            partner = partner + (ir.const(k, i32) - d) * ir.const(stride, i32)
        value = ir.BufferLoad(scratch, [fold_add(fold_mul(partner, ir.const(slots, i32)), k_var)])
        total = value if total is None else kind.combine(total, value)
    assert total is not None
    out.append(ir.For(k_var, ir.const(0, i32), ir.const(slots, i32), ir.ForKind.UNROLLED,
                      ir.BufferStore(acc, total, [k_var])))
    if barrier is not None and sctx.threads.loops:
        # in a loop the call runs again and rewrites its scratch: wait for every reader
        out.append(barrier)
    return out


@dataclass(frozen=True)
class _Digit:
    """One iterator of a register tile's layout within one logical dimension: ``ext`` values
    ``stride`` apart on ``axis`` (``m``: registers; else a thread axis), adding ``value *
    weight`` to the dimension's index."""

    ext: int
    stride: int
    axis: str
    weight: int

    @property
    def on_threads(self) -> bool:
        return self.axis != "m"

    def same_threads(self, other: _Digit) -> bool:
        return (self.axis, self.stride, self.ext) == (other.axis, other.stride, other.ext)

    def thread_stride(self) -> int:
        """The digit's stride in thread indices of the scope."""
        return self.stride * {"tid": 1, "laneid": 1, "warpid": 32, "wid_in_wg": 32,
                              "wgid": 128}[self.axis]


def _digits(buf: ir.Buffer) -> tuple[list[list[_Digit]], list[_Digit]]:
    """``buf``'s layout iterators by logical dimension (extent-1 ones left out; a buffer
    without a layout is row-major registers), and its replica iterators."""
    shape = [const_int(s, f"the shape of {buf.name}") for s in buf.shape]
    lay = buf.layout if buf.layout is not None else ir.TileLayout.row_major(shape)
    if not isinstance(lay, ir.TileLayout):
        fail(f"{buf.name} has a swizzled layout; registers are reduced through a TileLayout")
    try:
        grouped, seps = lay.group(shape)
    except ValueError as err:
        fail(f"the layout {lay} of {buf.name} does not split along its dimensions {shape}: {err}")
    dims: list[list[_Digit]] = []
    for d in range(len(shape)):
        out: list[_Digit] = []
        weight = 1
        for it in reversed(grouped.shard[seps[d]:seps[d + 1]]):
            ext = const_int(it.extent, f"an extent of {buf.name}'s layout")
            if ext > 1:
                name = it.axis.name
                if name != "m" and name not in THREAD_AXES:
                    fail(f"the layout of {buf.name} uses axis {name!r}; registers use m and "
                         f"thread axes ({', '.join(THREAD_AXES)})")
                out.append(_Digit(ext, const_int(it.stride, f"a stride of {buf.name}'s layout"),
                                  name, weight))
            weight *= ext
        dims.append(out[::-1])
    replica = [_Digit(const_int(it.extent, "a replica extent"), const_int(it.stride, "a replica stride"),
                      it.axis.name, 0) for it in lay.replica]
    return dims, [r for r in replica if r.ext > 1]


@dataclass
class _Target:
    buffer: ir.Buffer
    indices: list[ir.PrimExpr]


class _RegisterPlan:
    """How a reduction of a register tile spread over threads runs, from the two layouts.

    Each dimension of src is split into the digits of its layout. On a kept dimension, dst
    has the same extent and the same thread digits (the threads that hold a row of src hold
    its result). On a reduced dimension dst has extent 1 (or drops it), or keeps some of
    src's digits there, each matched by one of dst's: a thread digit by axis, stride and
    extent, a register digit by extent (dst ``[16, 4]`` of src ``[16, 128]`` spread with 4
    threads to a row keeps those 4 threads: one partial each). Reduced register digits are
    combined within each thread; reduced thread digits across threads: those dst does not
    keep always, those it keeps only with ``thread_reduce``. Threads that dst replicates its
    result over (``R[32 : 1 @ laneid]``) must be among the combined ones.

    ``slots``: the thread's results, as (key, register offset of its first element);
    ``reduced``: the reduced register digits, with their dimension (loops over them add to
    that offset); ``lane_masks``: the shuffle masks; ``warp_digits``: the reduced thread
    digits above a warp, as (thread stride, extent).
    """

    def __init__(self, src: ir.BufferRegion, dst: ir.BufferRegion, axes: Sequence[int],
                 thread_reduce: bool, nthreads: int) -> None:
        self.src, self.dst = src, dst
        nd = len(src.region)
        self.kept = [d for d in range(nd) if d not in axes]
        if len(dst.region) == nd:
            self.dmap: list[int | None] = list(range(nd))
        elif len(dst.region) == len(self.kept):
            self.dmap = [self.kept.index(d) if d in self.kept else None for d in range(nd)]
        else:
            fail(f"dst has {len(dst.region)} dimensions; for src's {nd} reduced over "
                 f"{list(axes)} it needs {nd} (reduced ones of extent 1) or {len(self.kept)}")
        self.src_box = _box(src, "src")
        self.dst_box = _box(dst, "dst")
        self.local_dst = dst.buffer.scope == "local"
        src_dims, _ = _digits(src.buffer)
        if self.local_dst:
            self.dst_dims, dst_replica = _digits(dst.buffer)
        else:
            lay = dst.buffer.layout
            if isinstance(lay, ir.TileLayout) and any(it.axis.is_thread
                                                      for it in [*lay.shard, *lay.replica]):
                fail(f"dst {dst.buffer.name} is in '{dst.buffer.scope}' memory with thread axes "
                     "in its layout")
            self.dst_dims, dst_replica = [[] for _ in dst.region], []
        for k, digits in enumerate(self.dst_dims):
            if any(g.on_threads for g in digits) and not _whole(dst, k):
                fail(f"the dst region cuts dimension {k} of {dst.buffer.name}, which is spread "
                     "over threads")
        # per src dimension, the register digits that stay, with their weight in the key
        self.key_digits: list[list[tuple[_Digit, int]]] = []
        # reduced dimensions spread over threads that the src region cuts: their thread digits
        self.cut_thread_digits: dict[int, list[_Digit]] = {}
        self.reduced: list[tuple[_Digit, int]] = []
        shuffled: list[_Digit] = []
        for d in range(nd):
            digits = src_dims[d]
            cut_threads = any(g.on_threads for g in digits) and not _whole(src, d)
            if cut_threads and d in self.kept:
                fail(f"the src region cuts kept dimension {d} of {src.buffer.name}, which is "
                     "spread over threads; keep the whole of it")
            if cut_threads:  # each element is checked against the region
                self.cut_thread_digits[d] = [g for g in digits if g.on_threads]
            dd = self.dmap[d]
            if d in self.kept:
                assert dd is not None
                self._check_kept(d, dd, digits)
                self.key_digits.append([(g, g.weight) for g in digits if not g.on_threads])
                continue
            matched = self._match(d, dd, digits)
            keys: list[tuple[_Digit, int]] = []
            for k, g in enumerate(digits):
                if g.on_threads:
                    if k not in matched or thread_reduce:
                        shuffled.append(g)
                elif k in matched:
                    keys.append((g, matched[k].weight))
                else:
                    self.reduced.append((g, d))
            self.key_digits.append(keys)
        self.lane_masks, self.warp_digits = _thread_steps(shuffled, nthreads)
        for r in dst_replica:
            if r.on_threads and not _covers(shuffled, r):
                fail(f"dst is replicated over {_text([r])}, but src is not reduced over those "
                     f"threads (it is over {_text(shuffled) or 'none'}); they would hold "
                     "different values")
        self.slots = self._slots()

    def _check_kept(self, d: int, dd: int, digits: list[_Digit]) -> None:
        ext = self.src_box[d][1]
        if self.dst_box[dd][1] != ext:
            fail(f"dst extent {self.dst_box[dd][1]} on dimension {dd} differs from src's {ext} "
                 f"on its kept dimension {d}")
        mine = [g for g in digits if g.on_threads]
        if not self.local_dst:
            if mine:
                fail(f"dst {self.dst.buffer.name} is in '{self.dst.buffer.scope}' memory but "
                     f"kept dimension {d} of src is spread over threads ({_text(mine)}); "
                     "reduce into registers laid out the same way")
            return
        theirs = [g for g in self.dst_dims[dd] if g.on_threads]
        if [(g.axis, g.stride, g.ext, g.weight) for g in mine] != \
                [(g.axis, g.stride, g.ext, g.weight) for g in theirs]:
            fail(f"kept dimension {d} is spread over other threads in dst "
                 f"({_text(theirs) or 'none'}) than in src ({_text(mine) or 'none'}); each "
                 "thread must hold the results of its own rows")

    def _match(self, d: int, dd: int | None, digits: list[_Digit]) -> dict[int, _Digit]:
        """The src digits of reduced dimension ``d`` that dst keeps (position -> dst digit)."""
        matched: dict[int, _Digit] = {}
        if dd is None or self.dst_box[dd][1] == 1:
            return matched
        if not self.local_dst:
            scope = self.dst.buffer.scope
            fail(f"dst extent {self.dst_box[dd][1]} on reduced dimension {d}: a '{scope}' dst "
                 "has extent 1 there (or drops it)")
        if not (_whole(self.src, d) and _whole(self.dst, dd)):
            fail(f"dst keeps part of reduced dimension {d} (extent {self.dst_box[dd][1]}); "
                 "then src and dst must cover that dimension whole")
        for g in self.dst_dims[dd]:
            pos = next((k for k, s_g in enumerate(digits) if k not in matched and (
                s_g.same_threads(g) if g.on_threads else
                not s_g.on_threads and s_g.ext == g.ext)), None)
            if pos is None:
                fail(f"dst keeps {_text([g])} of reduced dimension {d}, which src does not "
                     f"have ({_text(digits)})")
            matched[pos] = g
        return matched

    def _slots(self) -> list[tuple[tuple[int, ...], int]]:
        """(key, register offset) of each result of the thread: its register digits that
        stay, inside the src region; the key is the result's index in dst's terms, less the
        thread digits (the same on both sides)."""
        flat = [(d, g, w) for d, keys in enumerate(self.key_digits) for g, w in keys]
        out = []
        for values in itertools.product(*(range(g.ext) for _, g, _ in flat)):
            key = [0] * len(self.key_digits)
            offset = 0
            for (d, g, w), v in zip(flat, values):
                offset += v * g.stride
                key[d] += v * w
            inside = True
            for d in self.kept:
                lo, ext = self.src_box[d]
                inside = inside and lo <= key[d] < lo + ext
                key[d] -= lo
            if inside:
                out.append((tuple(key), offset))
        return out

    def dst_entries(self, dst: ir.BufferRegion) -> list[tuple[int, _Target]]:
        """(slot, where it goes) for each dst element the thread writes."""
        index = {key: k for k, (key, _) in enumerate(self.slots)}
        out: list[tuple[int, _Target]] = []
        if self.local_dst:
            view = flat_view(dst.buffer, "out")
            flat = [(dd, g) for dd, digits in enumerate(self.dst_dims) for g in digits
                    if not g.on_threads]
            for values in itertools.product(*(range(g.ext) for _, g in flat)):
                coord = [0] * len(self.dst_dims)
                offset = 0
                for (dd, g), v in zip(flat, values):
                    coord[dd] += v * g.weight
                    offset += v * g.stride
                key = self._key_of(coord)
                if key is not None:
                    out.append((self._slot(index, key), _Target(
                        view, [ir.const(offset, "int32")])))
            return out
        for rel in itertools.product(*(range(ext) for _, ext in self.dst_box)):
            key = tuple(rel[dd] if d in self.kept and dd is not None else 0
                        for d, dd in enumerate(self.dmap))
            out.append((self._slot(index, key), _Target(
                dst.buffer, [ir.const(lo + r, "int32") for (lo, _), r in zip(self.dst_box, rel)])))
        return out

    def _key_of(self, coord: list[int]) -> tuple[int, ...] | None:
        """The key of the dst element at register index part ``coord`` (None: outside the
        dst region)."""
        for dd, (lo, ext) in enumerate(self.dst_box):
            if not any(g.on_threads for g in self.dst_dims[dd]) and not lo <= coord[dd] < lo + ext:
                return None
        return tuple(0 if dd is None else coord[dd] - self.dst_box[dd][0]
                     for dd in self.dmap)

    @staticmethod
    def _slot(index: dict[tuple[int, ...], int], key: tuple[int, ...]) -> int:
        if key not in index:
            fail(f"no src element reduces into dst element {list(key)} (relative to the "
                 "regions); the layouts do not pair up")
        return index[key]

    def reduced_guard(self, loop_vars: Sequence[ir.Var],
                      digit_value: Callable[[_Digit], ir.PrimExpr]) -> ir.PrimExpr | None:
        """Whether the element at the reduced digits ``loop_vars`` (and the calling thread's
        digits, ``digit_value``) is inside the src region, on the reduced dimensions it
        cuts."""
        conds: list[ir.PrimExpr] = []
        for d, (lo, ext) in enumerate(self.src_box):
            terms: list[tuple[ir.PrimExpr, _Digit]] = [
                (v, g) for v, (g, dim) in zip(loop_vars, self.reduced) if dim == d]
            terms += [(digit_value(g), g) for g in self.cut_thread_digits.get(d, [])]
            if _whole(self.src, d) or not terms:
                continue
            index: ir.PrimExpr = ir.const(0, "int32")
            for v, g in terms:
                index = fold_add(index, fold_mul(v, ir.const(g.weight, "int32")))
            conds += [index >= ir.const(lo, "int32"), index < ir.const(lo + ext, "int32")]
        if not conds:
            return None
        out = conds[0]
        for c in conds[1:]:
            out = ir.And(out, c)
        return out


def _box(region: ir.BufferRegion, what: str) -> list[tuple[int, int]]:
    return [(const_int(r.min, f"the start of the {what} region"),
             const_int(r.extent, f"the extent of the {what} region")) for r in region.region]


def _whole(region: ir.BufferRegion, d: int) -> bool:
    r = region.region[d]
    return (isinstance(r.min, ir.IntImm) and r.min.value == 0
            and const_int(r.extent, "a region extent") == const_int(region.buffer.shape[d], "an extent"))


def _text(digits: Sequence[_Digit]) -> str:
    return ", ".join(f"{g.ext}:{g.stride}@{g.axis}" for g in digits)


def _thread_bits(g: _Digit) -> tuple[int, int]:
    """(thread stride, extent) of a thread digit; a ``laneid`` one stays within a warp."""
    if g.axis == "laneid" and g.stride * g.ext > 32:
        fail(f"the lane digit {_text([g])} reaches past 32 lanes")
    return g.thread_stride(), g.ext


def _thread_steps(shuffled: list[_Digit], nthreads: int) -> tuple[list[int], list[tuple[int, int]]]:
    """The shuffle masks (within a warp) and the warp-level (thread stride, extent) digits that
    combine the threads of the ``shuffled`` digits."""
    masks: list[int] = []
    warps: list[tuple[int, int]] = []
    for g in shuffled:
        stride, ext = _thread_bits(g)
        if stride * ext > max(nthreads, 1) and nthreads >= 32:
            fail(f"the thread digit {_text([g])} reaches past the scope's {nthreads} threads")
        if stride < 32:
            lanes = min(ext, 32 // stride) if 32 % stride == 0 else 0
            if lanes == 0 or stride & (stride - 1) or lanes & (lanes - 1) or ext % lanes:
                fail(f"the threads of digit {_text([g])} are not a power-of-two group of lanes "
                     "a shuffle butterfly combines")
            m = stride
            while m < stride * lanes:
                masks.append(m)
                m *= 2
            if ext > lanes:
                warps.append((32, ext // lanes))
        else:
            if stride % 32:
                fail(f"the thread digit {_text([g])} splits warps")
            warps.append((stride, ext))
    if nthreads < 32 and any(m >= nthreads for m in masks):
        fail(f"the scope has {nthreads} threads; shuffles over {masks} reach past it")
    return sorted(masks, reverse=True), warps


def _covers(shuffled: list[_Digit], r: _Digit) -> bool:
    """Whether the threads of replica digit ``r`` are among those ``shuffled`` combines."""
    if any(r.same_threads(g) for g in shuffled):
        return True
    bits: set[int] = set()
    for g in shuffled:
        stride, ext = g.thread_stride(), g.ext
        if stride & (stride - 1) or ext & (ext - 1):
            continue
        bits |= {stride << k for k in range(ext.bit_length() - 1)}
    stride, ext = r.thread_stride(), r.ext
    if stride & (stride - 1) or ext & (ext - 1):
        return False
    return all(stride << k in bits for k in range(ext.bit_length() - 1))


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
