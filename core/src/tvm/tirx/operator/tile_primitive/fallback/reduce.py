"""Generic lowering of the reductions ``sum``, ``max`` and ``min``.

``dst`` keeps the source's non-reduced axes, either dropped (``[M, N] -> [M]``) or kept with
extent 1 (``[M, N] -> [M, 1]``); shapes that differ only by unit dimensions also match. Every
destination element is reduced by one thread, in a local accumulator (float32 for 16-bit
floats). With ``accum`` the destination's old value takes part in the reduction.
"""

from __future__ import annotations

from collections.abc import Sequence

from .....error import DispatchFail
from .....ir import (
    AllocBuffer,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    DataType,
    For,
    ForKind,
    Max,
    Min,
    PrimExpr,
    PrimFunc,
    Stmt,
    TilePrimitiveCall,
    Var,
    const,
    seq,
)
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

__all__ = ["combine", "lower_reduce", "reduce_stmt"]


def combine(kind: ReduceOpType, acc: PrimExpr, v: PrimExpr) -> PrimExpr:
    """``acc`` combined with ``v`` by the reduction ``kind``."""
    if kind is ReduceOpType.SUM:
        return acc + v
    if kind is ReduceOpType.MAX:
        return Max(acc, v)
    return Min(acc, v)


def lower_reduce(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    a = bound_args(call)
    kind = ReduceOpType.parse(call.op_name)
    dst = dst_region(a["dst"])
    src = dst_region(a["src"], "src")
    axes = normalize_axes(a["axes"], len(src.region))
    return PrimFunc([], reduce_stmt(sctx, kind, dst, src, axes, static_bool(a["accum"], "accum")))


def reduce_stmt(sctx: DispatchContext, kind: ReduceOpType, dst: BufferRegion, src: BufferRegion,
                axes: Sequence[int], accum: bool) -> Stmt:
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

    def body(idx: list[PrimExpr]) -> Stmt:
        dst_idx = [r.min if d is None else fold_add(r.min, idx[d]) for r, d in zip(dst.region, dst_map)]
        return _reduce_one(kind, dst, dst_idx, src, kept, idx, axes, accum, acc_dt)

    return run_at_scope(sctx, kept_ext, body)


def _reduce_one(kind: ReduceOpType, dst: BufferRegion, dst_idx: list[PrimExpr], src: BufferRegion,
                kept: list[int], kept_idx: list[PrimExpr], axes: Sequence[int], accum: bool,
                acc_dt: DataType) -> Stmt:
    acc = Buffer("acc", [1], acc_dt, scope="local")
    zero = const(0, "int32")
    red_vars: dict[int, PrimExpr] = {}
    loops: list[tuple[Var, PrimExpr]] = []
    for ax in axes:
        ext = src.region[ax].extent
        if is_one(ext):
            red_vars[ax] = zero
            continue
        v = Var(f"r{ax}", ext.dtype)
        red_vars[ax] = v
        loops.append((v, ext))

    def src_at(red: dict[int, PrimExpr]) -> PrimExpr:
        rel = [red[d] if d in red else kept_idx[kept.index(d)] for d in range(len(src.region))]
        return cast_to(BufferLoad(src.buffer, [fold_add(r.min, i) for r, i in zip(src.region, rel)]),
                       acc_dt)

    if accum:
        init = cast_to(BufferLoad(dst.buffer, dst_idx), acc_dt)
    elif kind is ReduceOpType.SUM:
        init = const(0, acc_dt)
    else:  # max/min start from the first element: no infinities needed
        init = src_at({ax: zero for ax in axes})
    update: Stmt = BufferStore(acc, combine(kind, BufferLoad(acc, [zero]), src_at(red_vars)), [zero])
    for v, ext in reversed(loops):
        update = For(v, const(0, v.dtype), ext, ForKind.SERIAL, update)
    return seq([
        AllocBuffer(acc),
        BufferStore(acc, init, [zero]),
        update,
        BufferStore(dst.buffer, cast_to(BufferLoad(acc, [zero]), dst.buffer.dtype), dst_idx),
    ])


def _text(shape: Sequence[PrimExpr]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"

