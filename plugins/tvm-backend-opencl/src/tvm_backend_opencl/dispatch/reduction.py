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

from tvm import ir
from tvm.backend.sdk import REDUCE_OPS, RowReduction, predicate, register_dispatch, row_reduction
from tvm.error import DispatchFail

from .. import op

__all__ = ["register"]

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
    if not isinstance(n, ir.IntImm) or n.value < 2 or n.value & (n.value - 1):
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
    acc_dt = ir.DataType("float64" if red.src.buffer.dtype.bits == 64 else "float32")
    tid = sctx.thread_index()
    zero = ir.const(0, "int32")
    acc = ir.Buffer("red_acc", [1], acc_dt, scope="local")
    scratch = ir.Buffer("red_scratch", [threads], acc_dt, scope="shared")
    sctx.add_alloc_buffer(scratch)  # __local memory is declared once, in the kernel's scope
    row, k = ir.Var("row", "int32"), ir.Var("red_k", "int32")
    col = k * threads + tid
    fold = ir.BufferStore(acc, red.kind.combine(ir.BufferLoad(acc, [zero]),
                                                red.load(row, col, acc_dt)), [zero])
    trips = -(-red.cols // threads)
    steps = []
    half = threads // 2
    local_barrier = ir.Evaluate(op.barrier("local"))
    while half >= 1:
        pair = red.kind.combine(ir.BufferLoad(scratch, [tid]), ir.BufferLoad(scratch, [tid + half]))
        steps += [ir.IfThenElse(tid < half, ir.BufferStore(scratch, pair, [tid])), local_barrier]
        half //= 2
    after = "local" if red.dst.buffer.scope in ("shared", "shared.dyn") else "local_global"
    body = ir.seq([
        ir.BufferStore(acc, red.kind.identity(acc_dt), [zero]),
        ir.For(k, zero, ir.const(trips, "int32"), ir.ForKind.SERIAL,
               fold if red.cols % threads == 0 else ir.IfThenElse(col < red.cols, fold)),
        ir.BufferStore(scratch, ir.BufferLoad(acc, [zero]), [tid]),
        local_barrier,
        *steps,
        ir.IfThenElse(tid == 0, red.store(row, ir.BufferLoad(scratch, [zero]), acc_dt)),
        ir.Evaluate(op.barrier(after)),  # the scratch is reused; the result is visible
    ])
    rows = ir.For(row, zero, ir.const(red.rows, "int32"), ir.ForKind.SERIAL, body)
    return ir.PrimFunc([], ir.seq([ir.AllocBuffer(acc), rows]))


def register() -> None:
    for name in REDUCE_OPS:
        register_dispatch(name, "opencl", variant=VARIANT, priority=10,
                          when=[predicate("few_long_rows", _applies)])(_lower)
