"""Generic lowering of the reductions ``sum``, ``max`` and ``min``.

``dst`` keeps the source's non-reduced axes, either dropped (``[M, N] -> [M]``) or kept with
extent 1 (``[M, N] -> [M, 1]``); shapes that differ only by unit dimensions also match. Every
destination element is reduced by one thread, in a local accumulator (float32 for 16-bit
floats). With ``accum`` the destination's old value takes part in the reduction.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..... import ir
from .....error import DispatchFail
from ..common import (
    ReduceOpType,
    bound_args,
    broadcast_map,
    cast_to,
    compute_dtype,
    fold_add,
    is_one,
    normalize_axes,
    static_bool,
)
from ..dispatch_context import DispatchContext
from ._scope import run_at_scope
from .elementwise import dst_region

__all__ = ["lower_reduce", "reduce_stmt"]


def lower_reduce(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    a = bound_args(call)
    kind = ReduceOpType.parse(call.op_name)
    dst = dst_region(a["dst"])
    src = dst_region(a["src"], "src")
    axes = normalize_axes(a["axes"], len(src.region))
    accum = static_bool(a["accum"], "accum")
    return ir.PrimFunc([], reduce_stmt(sctx, kind, dst, src, axes, accum))


def reduce_stmt(sctx: DispatchContext, kind: ReduceOpType, dst: ir.BufferRegion,
                src: ir.BufferRegion, axes: Sequence[int], accum: bool) -> ir.Stmt:
    kept = [d for d in range(len(src.region)) if d not in axes]
    kept_ext = [src.region[d].extent for d in kept]
    try:
        dst_map = broadcast_map(dst.shape, kept_ext)
    except DispatchFail:
        raise DispatchFail(f"dst shape {_text(dst.shape)} does not match the kept axes "
                           f"{_text(kept_ext)} of src {_text(src.shape)} reduced over {list(axes)}") from None
    if any(d is None and not is_one(e) for d, e in zip(dst_map, dst.shape)):
        raise DispatchFail(f"dst shape {_text(dst.shape)} broadcasts; a reduction writes each "
                           "element once")
    lost = [kept[k] for k, e in enumerate(kept_ext) if k not in dst_map and not is_one(e)]
    if lost:  # a smaller dst (a 0-d one for a 2-d src) would be overwritten once per row
        raise DispatchFail(f"dst shape {_text(dst.shape)} has no dimension for axes {lost} of "
                           f"src {_text(src.shape)} (reduced over {list(axes)}, they are kept); "
                           f"reduce over them too (axes={sorted([*axes, *lost])}) or give dst "
                           "their extents")
    acc_dt = compute_dtype([src.buffer.dtype, dst.buffer.dtype])
    if kind is not ReduceOpType.SUM and not src.buffer.dtype.is_float and not dst.buffer.dtype.is_float:
        acc_dt = src.buffer.dtype

    def body(idx: list[ir.PrimExpr]) -> ir.Stmt:
        dst_idx = [r.min if d is None else fold_add(r.min, idx[d]) for r, d in zip(dst.region, dst_map)]
        return _reduce_one(kind, dst, dst_idx, src, kept, idx, axes, accum, acc_dt)

    return run_at_scope(sctx, kept_ext, body)


def _reduce_one(kind: ReduceOpType, dst: ir.BufferRegion, dst_idx: list[ir.PrimExpr],
                src: ir.BufferRegion, kept: list[int], kept_idx: list[ir.PrimExpr],
                axes: Sequence[int], accum: bool, acc_dt: ir.DataType) -> ir.Stmt:
    acc = ir.Buffer("acc", [1], acc_dt, scope="local")
    zero = ir.const(0, "int32")
    red_vars: dict[int, ir.PrimExpr] = {}
    loops: list[tuple[ir.Var, ir.PrimExpr]] = []
    for ax in axes:
        ext = src.region[ax].extent
        if is_one(ext):
            red_vars[ax] = zero
            continue
        v = ir.Var(f"r{ax}", ext.dtype)
        red_vars[ax] = v
        loops.append((v, ext))

    def src_at(red: dict[int, ir.PrimExpr]) -> ir.PrimExpr:
        rel = [red[d] if d in red else kept_idx[kept.index(d)] for d in range(len(src.region))]
        return cast_to(ir.BufferLoad(src.buffer, [fold_add(r.min, i) for r, i in zip(src.region, rel)]),
                       acc_dt)

    if accum:
        init = cast_to(ir.BufferLoad(dst.buffer, dst_idx), acc_dt)
    elif kind is ReduceOpType.SUM:
        init = ir.const(0, acc_dt)
    else:  # max/min start from the first element: no infinities needed
        init = src_at({ax: zero for ax in axes})
    update: ir.Stmt = ir.BufferStore(
        acc, kind.combine(ir.BufferLoad(acc, [zero]), src_at(red_vars)), [zero])
    for v, ext in reversed(loops):
        update = ir.For(v, ir.const(0, v.dtype), ext, ir.ForKind.SERIAL, update)
    return ir.seq([
        ir.AllocBuffer(acc),
        ir.BufferStore(acc, init, [zero]),
        update,
        ir.BufferStore(dst.buffer, cast_to(ir.BufferLoad(acc, [zero]), dst.buffer.dtype), dst_idx),
    ])


def _text(shape: Sequence[ir.PrimExpr]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"

