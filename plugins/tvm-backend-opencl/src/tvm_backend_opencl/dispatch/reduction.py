"""Row reductions (``sum``, ``max``, ``min`` over the last axis) by a whole OpenCL work-group.

Core's fallback gives each destination element to one work-item, so a few long rows leave most
of a work-group idle. The ``workgroup_tree`` variant (priority 10, ``cta`` scope, fewer rows
than work-items, a power-of-two work-group) reduces one row at a time with every work-item:

1. each work-item folds the columns ``tid, tid + T, tid + 2T, ...`` into a private value;
2. the ``T`` partial values meet in a ``__local`` array and are halved ``log2(T)`` times, with a
   ``barrier(CLK_LOCAL_MEM_FENCE)`` after each step;
3. work-item 0 writes the row's result (combined with the old value under ``accum=True``).

A barrier after each row orders the scratch array's reuse and publishes the result. Values are
accumulated in float32 (float64 for double data).
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import (
    ReduceOpType,
    RowReduction,
    cast_to,
    fold_add,
    predicate,
    region_indices,
    register_dispatch,
    row_reduction,
)
from tvm.error import DispatchFail
from tvm.ir import (
    AllocBuffer,
    Buffer,
    BufferLoad,
    BufferStore,
    DataType,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Max,
    Min,
    PrimFunc,
    Var,
    const,
    seq,
)

from .. import op

__all__ = ["register"]

REDUCE_OPS = ("sum", "max", "min")
VARIANT = "workgroup_tree"


def _parse(call: Any) -> RowReduction:
    red = row_reduction(call)
    for what, buf in (("src", red.src.buffer), ("dst", red.dst.buffer)):
        if not buf.dtype.is_float:
            raise DispatchFail(f"{what} `{buf.name}` is {buf.dtype}; this variant takes floats")
    return red


def _threads(sctx: Any) -> int:
    if not sctx.is_cta:
        raise DispatchFail(f"scope is {sctx.scope_kind}; this variant needs a whole work-group")
    n = sctx.thread_extent()
    if not isinstance(n, IntImm) or n.value < 2 or n.value & (n.value - 1):
        raise DispatchFail(f"the work-group has {n} work-items; the tree needs a constant "
                           "power of two")
    return n.value


def _applies(call: Any, sctx: Any) -> tuple[bool, str]:
    red, threads = _parse(call), _threads(sctx)
    if red.rows >= threads:
        return False, (f"{red.rows} rows for {threads} work-items: every work-item has a row "
                       "of its own in the fallback")
    return True, ""


def _lower(call: Any, sctx: Any) -> Any:
    red, threads = _parse(call), _threads(sctx)
    acc_dt = DataType("float64" if red.src.buffer.dtype.bits == 64 else "float32")

    def combine(x: Any, y: Any) -> Any:
        if red.kind is ReduceOpType.SUM:
            return x + y
        return Max(x, y) if red.kind is ReduceOpType.MAX else Min(x, y)

    identity = const({ReduceOpType.SUM: 0.0, ReduceOpType.MAX: float("-inf"),
                      ReduceOpType.MIN: float("inf")}[red.kind], acc_dt)
    tid = sctx.thread_index()
    zero = const(0, "int32")
    acc = Buffer("red_acc", [1], acc_dt, scope="local")
    scratch = Buffer("red_scratch", [threads], acc_dt, scope="shared")
    sctx.add_alloc_buffer(scratch)  # __local memory is declared once, in the kernel's scope
    row, k = Var("row", "int32"), Var("red_k", "int32")
    col = k * threads + tid

    def src_at(r: Any, c: Any) -> Any:
        rel = [r, c] if len(red.src.region) == 2 else [c]
        return cast_to(BufferLoad(red.src.buffer, region_indices(red.src, rel)), acc_dt)

    fold = BufferStore(acc, combine(BufferLoad(acc, [zero]), src_at(row, col)), [zero])
    trips = -(-red.cols // threads)
    steps = []
    half = threads // 2
    local_barrier = Evaluate(op.barrier("local"))
    while half >= 1:
        pair = combine(BufferLoad(scratch, [tid]), BufferLoad(scratch, [tid + half]))
        steps += [IfThenElse(tid < half, BufferStore(scratch, pair, [tid])), local_barrier]
        half //= 2
    dst_idx = [fold_add(r.min, row) if d == red.dst_axis else r.min
               for d, r in enumerate(red.dst.region)]
    result = BufferLoad(scratch, [zero])
    if red.accum:
        result = combine(cast_to(BufferLoad(red.dst.buffer, dst_idx), acc_dt), result)
    after = "local" if red.dst.buffer.scope in ("shared", "shared.dyn") else "local_global"
    body = seq([
        BufferStore(acc, identity, [zero]),
        For(k, zero, const(trips, "int32"), ForKind.SERIAL,
            fold if red.cols % threads == 0 else IfThenElse(col < red.cols, fold)),
        BufferStore(scratch, BufferLoad(acc, [zero]), [tid]),
        local_barrier,
        *steps,
        IfThenElse(tid == 0, BufferStore(red.dst.buffer, cast_to(result, red.dst.buffer.dtype),
                                         dst_idx)),
        Evaluate(op.barrier(after)),  # the scratch is reused; the result is visible
    ])
    return PrimFunc([], seq([AllocBuffer(acc),
                             For(row, zero, const(red.rows, "int32"), ForKind.SERIAL, body)]))


def register() -> None:
    for name in REDUCE_OPS:
        register_dispatch(name, "opencl", variant=VARIANT, priority=10,
                          when=[predicate("few_long_rows", _applies)])(_lower)
