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

from ...ir import (
    AllocBuffer,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    DataType,
    For,
    ForKind,
    IntImm,
    PrimExpr,
    PrimFunc,
    Stmt,
    TilePrimitiveCall,
    Var,
    const,
    seq,
)
from ...tirx.operator.tile_primitive import DispatchContext, fail, predicate, register_dispatch
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
from ...tirx.operator.tile_primitive.fallback.reduce import combine, reduce_stmt
from ...tirx.operator.tile_primitive.ops import REDUCE_OPS
from .common import (
    KINDS,
    PRIORITY,
    contiguous_inner,
    mark,
    parallel_worth,
    run_on_thread0,
    serial_scope,
)

__all__ = ["LANES", "VARIANT", "register", "vector_reduce"]

VARIANT = "vector"
LANES = 32  # two 512-bit vectors of float32: independent adds hide the FP add latency


def _src_contiguous(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    return contiguous_inner(bound_args(call).get("src"), "src")


def _innermost_axis(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    a = bound_args(call)
    src = a.get("src")
    if not isinstance(src, (Buffer, BufferRegion)):
        return False, "src is not a buffer or region"
    ndim = len(region_of(src).region)
    axes = normalize_axes(a["axes"], ndim)
    if axes != [ndim - 1]:
        return False, f"reduces axes {axes}; this variant reduces the innermost axis ({ndim - 1}) only"
    return True, ""


def vector_reduce(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
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
    row_vars = [Var(f"row{d}", e.dtype) for d, e in enumerate(kept_ext)]
    body = _row(kind, dst, src, row_vars, kept_ext, accum, acc_dt, idx_dt)
    loops = [(v, e) for v, e in zip(row_vars, kept_ext) if not is_one(e)]
    for i, (v, e) in enumerate(reversed(loops)):
        loop = For(v, const(0, v.dtype), e, ForKind.SERIAL, body)
        outermost = i == len(loops) - 1
        body = mark(loop, parallel=parallel_worth([*kept_ext, src.region[-1].extent])) \
            if outermost else loop
    return PrimFunc([], run_on_thread0(sctx, body))


def _row(kind: ReduceOpType, dst: BufferRegion, src: BufferRegion, row_vars: list[Var],
         kept_ext: list[PrimExpr], accum: bool, acc_dt: DataType, idx_dt: DataType) -> Stmt:
    rows = [const(0, v.dtype) if is_one(e) else v for v, e in zip(row_vars, kept_ext)]
    n = src.region[-1].extent

    def src_at(j: PrimExpr) -> PrimExpr:
        idx = [fold_add(r.min, i) for r, i in zip(src.region[:-1], rows)]
        return cast_to(BufferLoad(src.buffer, [*idx, fold_add(src.region[-1].min, j)]), acc_dt)

    acc = Buffer("red_lanes", [LANES], acc_dt, scope="local")
    zero = const(0, idx_dt)
    lane, chunk, tail = Var("lane", idx_dt), Var("chunk", idx_dt), Var("rest", idx_dt)
    lane0, lane1 = Var("lane", idx_dt), Var("lane", idx_dt)  # one variable per loop
    width = const(LANES, idx_dt)
    init = const(0, acc_dt) if kind is ReduceOpType.SUM else src_at(zero)
    nchunks = n // width if not isinstance(n, IntImm) else const(n.value // LANES, idx_dt)
    done = fold_mul(nchunks, width)
    ntail = n - done if not isinstance(n, IntImm) else const(n.value % LANES, idx_dt)
    at_lane = BufferLoad(acc, [lane])
    at0 = BufferLoad(acc, [zero])
    stmts: list[Stmt] = [
        AllocBuffer(acc),
        For(lane0, zero, width, ForKind.SERIAL, BufferStore(acc, init, [lane0])),
        For(chunk, zero, nchunks, ForKind.SERIAL,
            For(lane, zero, width, ForKind.SERIAL,
                BufferStore(acc, combine(kind, at_lane,
                                          src_at(fold_add(fold_mul(chunk, width), lane))), [lane]))),
        For(tail, zero, ntail, ForKind.SERIAL,
            BufferStore(acc, combine(kind, at0, src_at(fold_add(done, tail))), [zero])),
        For(lane1, const(1, idx_dt), const(LANES - 1, idx_dt), ForKind.SERIAL,
            BufferStore(acc, combine(kind, at0, BufferLoad(acc, [lane1])), [zero])),
    ]
    if isinstance(nchunks, IntImm) and nchunks.value == 0:
        stmts = [stmts[0], stmts[1], stmts[3], stmts[4]]
    result: PrimExpr = at0
    dst_idx = _dst_index(dst, rows, kept_ext)
    if accum:
        result = combine(kind, cast_to(BufferLoad(dst.buffer, dst_idx), acc_dt), result)
    stmts.append(BufferStore(dst.buffer, cast_to(result, dst.buffer.dtype), dst_idx))
    return seq(stmts)


def _dst_index(dst: BufferRegion, rows: list[PrimExpr], kept_ext: list[PrimExpr]) -> list[PrimExpr]:
    """dst's indices for the row: its non-unit axes take the kept non-unit axes in order."""
    big = iter(r for r, e in zip(rows, kept_ext) if not is_one(e))
    return [r.min if is_one(r.extent) else fold_add(r.min, next(big)) for r in dst.region]


def register() -> None:
    when = [predicate("serial_scope", serial_scope), predicate("innermost_axis", _innermost_axis),
            predicate("src_contiguous", _src_contiguous)]
    for name in REDUCE_OPS:
        for kind in KINDS:
            register_dispatch(name, kind, variant=VARIANT, priority=PRIORITY,
                              when=when)(vector_reduce)
