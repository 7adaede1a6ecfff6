"""``sum``/``max``/``min`` over the innermost contiguous axis on the host: variant ``vector``.

Each output element (a row) is reduced in ``LANES`` accumulators: lane ``l`` takes elements
``l, l + LANES, ...`` (a loop of constant extent over contiguous elements, which the C compiler
turns into vector instructions), the remainder goes to lane 0, and the lanes are combined at
the end (sums in a fixed order, so results are deterministic). Rows are an OpenMP parallel loop
when the source has at least ``PARALLEL_MIN`` elements; the row loop carries the ``FUSIBLE``
mark so that ``FuseRowLoops`` can fuse it with element-wise neighbours over the same rows.

Declines (core's fallback runs) when: the reduced axes are not exactly the innermost one, the
source's innermost axis is not contiguous, the destination does not have the source's kept axes
(broadcasting is the fallback's), or the scope's threads run concurrently.
"""

from __future__ import annotations

from ... import ir
from ...tirx.operator.tile_primitive import DispatchContext, fail, predicate
from ...tirx.operator.tile_primitive.common import (
    ReduceOpType,
    bound_args,
    cast_to,
    compute_dtype,
    fold_add,
    fold_mul,
    is_one,
    normalize_axes,
    region_of,
    static_bool,
)
from ...tirx.operator.tile_primitive.fallback.reduce import reduce_stmt
from ...tirx.operator.tile_primitive.ops import REDUCE_OPS
from .common import contiguous_inner, mark, parallel_worth, register_host, run_on_thread0

__all__ = ["LANES", "VARIANT", "register", "vector_reduce"]

VARIANT = "vector"
LANES = 32  # two 512-bit vectors of float32: independent adds hide the FP add latency


def _src_contiguous(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    return contiguous_inner(bound_args(call).get("src"), "src")


def _innermost_axis(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    a = bound_args(call)
    src = a.get("src")
    if not isinstance(src, (ir.Buffer, ir.BufferRegion)):
        return False, "src is not a buffer or region"
    ndim = len(region_of(src).region)
    axes = normalize_axes(a["axes"], ndim)
    if axes != [ndim - 1]:
        return False, f"reduces axes {axes}; this variant reduces the innermost axis ({ndim - 1}) only"
    return True, ""


def vector_reduce(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    a = bound_args(call)
    kind = ReduceOpType.parse(call.op_name)
    dst, src = region_of(a["dst"]), region_of(a["src"])
    accum = static_bool(a["accum"], "accum")
    ndim = len(src.region)
    reduce_stmt(sctx, kind, dst, src, [ndim - 1], accum)  # the fallback's shape checks
    kept_ext = [r.extent for r in src.region[:-1]]
    dst_big = [r for r in dst.region if not is_one(r.extent)]
    kept_big = [e for e in kept_ext if not is_one(e)]
    if len(dst_big) != len(kept_big):
        fail("dst broadcasts over the kept axes (the fallback handles that)")
    acc_dt = compute_dtype([src.buffer.dtype, dst.buffer.dtype])
    if kind is not ReduceOpType.SUM and not (src.buffer.dtype.is_float or dst.buffer.dtype.is_float):
        acc_dt = src.buffer.dtype
    idx_dt = src.region[-1].extent.dtype
    row_vars = [ir.Var(f"row{d}", e.dtype) for d, e in enumerate(kept_ext)]
    body = _row(kind, dst, src, row_vars, kept_ext, accum, acc_dt, idx_dt)
    loops = [(v, e) for v, e in zip(row_vars, kept_ext) if not is_one(e)]
    for i, (v, e) in enumerate(reversed(loops)):
        loop = ir.For(v, ir.const(0, v.dtype), e, ir.ForKind.SERIAL, body)
        outermost = i == len(loops) - 1
        body = mark(loop, parallel=parallel_worth([*kept_ext, src.region[-1].extent])) \
            if outermost else loop
    return ir.PrimFunc([], run_on_thread0(sctx, body))


def _row(kind: ReduceOpType, dst: ir.BufferRegion, src: ir.BufferRegion, row_vars: list[ir.Var],
         kept_ext: list[ir.PrimExpr], accum: bool, acc_dt: ir.DataType, idx_dt: ir.DataType
         ) -> ir.Stmt:
    rows = [ir.const(0, v.dtype) if is_one(e) else v for v, e in zip(row_vars, kept_ext)]
    n = src.region[-1].extent

    def src_at(j: ir.PrimExpr) -> ir.PrimExpr:
        idx = [fold_add(r.min, i) for r, i in zip(src.region[:-1], rows)]
        return cast_to(ir.BufferLoad(src.buffer, [*idx, fold_add(src.region[-1].min, j)]), acc_dt)

    acc = ir.Buffer("red_lanes", [LANES], acc_dt, scope="local")
    zero = ir.const(0, idx_dt)
    lane, chunk, tail = ir.Var("lane", idx_dt), ir.Var("chunk", idx_dt), ir.Var("rest", idx_dt)
    lane0, lane1 = ir.Var("lane", idx_dt), ir.Var("lane", idx_dt)  # one variable per loop
    width = ir.const(LANES, idx_dt)
    init = ir.const(0, acc_dt) if kind is ReduceOpType.SUM else src_at(zero)
    nchunks = n // width if not isinstance(n, ir.IntImm) else ir.const(n.value // LANES, idx_dt)
    done = fold_mul(nchunks, width)
    ntail = n - done if not isinstance(n, ir.IntImm) else ir.const(n.value % LANES, idx_dt)
    at_lane = ir.BufferLoad(acc, [lane])
    at0 = ir.BufferLoad(acc, [zero])
    stmts: list[ir.Stmt] = [
        ir.AllocBuffer(acc),
        ir.For(lane0, zero, width, ir.ForKind.SERIAL, ir.BufferStore(acc, init, [lane0])),
        ir.For(chunk, zero, nchunks, ir.ForKind.SERIAL,
               ir.For(lane, zero, width, ir.ForKind.SERIAL,
                      ir.BufferStore(acc, kind.combine(
                          at_lane, src_at(fold_add(fold_mul(chunk, width), lane))), [lane]))),
        ir.For(tail, zero, ntail, ir.ForKind.SERIAL,
               ir.BufferStore(acc, kind.combine(at0, src_at(fold_add(done, tail))), [zero])),
        ir.For(lane1, ir.const(1, idx_dt), ir.const(LANES - 1, idx_dt), ir.ForKind.SERIAL,
               ir.BufferStore(acc, kind.combine(at0, ir.BufferLoad(acc, [lane1])), [zero])),
    ]
    if isinstance(nchunks, ir.IntImm) and nchunks.value == 0:
        stmts = [stmts[0], stmts[1], stmts[3], stmts[4]]
    result: ir.PrimExpr = at0
    dst_idx = _dst_index(dst, rows, kept_ext)
    if accum:
        result = kind.combine(cast_to(ir.BufferLoad(dst.buffer, dst_idx), acc_dt), result)
    stmts.append(ir.BufferStore(dst.buffer, cast_to(result, dst.buffer.dtype), dst_idx))
    return ir.seq(stmts)


def _dst_index(dst: ir.BufferRegion, rows: list[ir.PrimExpr], kept_ext: list[ir.PrimExpr]
               ) -> list[ir.PrimExpr]:
    """dst's indices for the row: its non-unit axes take the kept non-unit axes in order."""
    big = iter(r for r, e in zip(rows, kept_ext) if not is_one(e))
    return [r.min if is_one(r.extent) else fold_add(r.min, next(big)) for r in dst.region]


def register() -> None:
    register_host(REDUCE_OPS, VARIANT, vector_reduce, predicate("innermost_axis", _innermost_axis),
                  predicate("src_contiguous", _src_contiguous))
