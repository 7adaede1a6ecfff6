"""Row reductions (``sum``, ``max``, ``min`` over the last axis) on Metal SIMD groups.

Two variants, for calls at ``cta`` (threadgroup) or ``warp`` (SIMD-group) scope on float data:

* ``simdgroup`` (priority 20, when there are at least as many rows as SIMD groups): each SIMD
  group takes whole rows; its 32 lanes stride over the columns, then ``simd_sum`` /
  ``simd_max`` / ``simd_min`` combine the lanes and lane 0 writes the row's result.
* ``threadgroup`` (priority 15, cta scope): every row is reduced by the whole threadgroup: each
  SIMD group reduces its share, lane 0 of each writes a threadgroup scratch slot, and after a
  ``threadgroup_barrier`` the first SIMD group combines the slots.

Accumulation is in float32 for 16-bit floats. A ``threadgroup_barrier`` (``simdgroup_barrier``
at warp scope) follows, so the next op sees the results.
"""

from __future__ import annotations

from typing import Any

from tvm import ir
from tvm.backend.sdk import (
    REDUCE_OPS,
    ReduceOpType,
    RowReduction,
    predicate,
    register_dispatch,
    row_reduction,
)
from tvm.error import DispatchFail

from .. import op
from ._simd import SIMD_WIDTH, barrier_after, ceil_div, simd_threads

__all__ = ["register"]

ACC = ir.DataType("float32")  # the accumulator type (16-bit floats are widened)


def _parse(call: Any) -> RowReduction:
    """A reduction over the last axis: ``src[M, N] -> dst[M]`` (or ``[M, 1]``; M may be 1)."""
    red = row_reduction(call)
    for name, buf in (("src", red.src.buffer), ("dst", red.dst.buffer)):
        if not buf.dtype.is_float or buf.dtype.bits > 32:
            raise DispatchFail(f"{name} `{buf.name}` is {buf.dtype}; SIMD-group reductions "
                               "here take float32, float16 or bfloat16")
    return red


def _simd_reduce(red: RowReduction, value: Any) -> Any:
    fn = {ReduceOpType.SUM: op.simd_sum, ReduceOpType.MAX: op.simd_max,
          ReduceOpType.MIN: op.simd_min}[red.kind]
    return fn(value)


def _local_acc() -> Any:
    return ir.Buffer("red_acc", [1], ACC, scope="local")


def _strided_partial(red: RowReduction, acc: Any, row: Any, start: Any, step: int) -> list[Any]:
    """``acc = identity; for col in start, start+step, ... < N: acc = combine(acc, src)``."""
    zero = ir.const(0, "int32")
    k = ir.Var("red_k", "int32")
    col = k * step + start
    update: ir.Stmt = ir.BufferStore(
        acc, red.kind.combine(ir.BufferLoad(acc, [zero]), red.load(row, col, ACC)), [zero])
    if red.cols % step:
        update = ir.IfThenElse(col < red.cols, update)
    return [ir.BufferStore(acc, red.kind.identity(ACC), [zero]),
            ir.For(k, zero, ir.const(ceil_div(red.cols, step), "int32"), ir.ForKind.SERIAL,
                   update)]


def _lower_simdgroup(call: Any, sctx: Any) -> Any:
    """Each SIMD group reduces whole rows."""
    red = _parse(call)
    st = simd_threads(sctx)
    acc = _local_acc()
    zero = ir.const(0, "int32")
    r_k = ir.Var("row_k", "int32")
    row = r_k * st.groups + st.group if st.groups > 1 else r_k
    body = ir.seq([
        *_strided_partial(red, acc, row, st.lane, SIMD_WIDTH),
        # Every lane of the SIMD group reaches this store: simd_* needs them all.
        ir.BufferStore(acc, _simd_reduce(red, ir.BufferLoad(acc, [zero])), [zero]),
        ir.IfThenElse(st.lane == 0, red.store(row, ir.BufferLoad(acc, [zero]), ACC)),
    ])
    if red.rows % st.groups:
        body = ir.IfThenElse(row < red.rows, body)  # uniform within a SIMD group
    loop = ir.For(r_k, zero, ir.const(ceil_div(red.rows, st.groups), "int32"), ir.ForKind.SERIAL,
                  body)
    return ir.PrimFunc([], ir.seq([ir.AllocBuffer(acc), loop, barrier_after(sctx, red.dst.buffer)]))


def _lower_threadgroup(call: Any, sctx: Any) -> Any:
    """The whole threadgroup reduces each row; SIMD-group partials meet in threadgroup memory."""
    if not sctx.is_cta:
        raise DispatchFail(f"scope is {sctx.scope_kind}; this variant needs a whole threadgroup")
    red = _parse(call)
    st = simd_threads(sctx)
    acc = _local_acc()
    scratch = ir.Buffer("red_partials", [st.groups], ACC, scope="shared")
    zero = ir.const(0, "int32")
    row = ir.Var("row", "int32")
    tid = sctx.thread_index()
    tg_barrier = ir.Evaluate(op.threadgroup_barrier("threadgroup"))
    acc0 = ir.BufferLoad(acc, [zero])
    final = ir.seq([
        ir.BufferStore(acc, red.kind.identity(ACC), [zero]),
        ir.IfThenElse(st.lane < st.groups,
                      ir.BufferStore(acc, ir.BufferLoad(scratch, [st.lane]), [zero])),
        ir.BufferStore(acc, _simd_reduce(red, acc0), [zero]),
        ir.IfThenElse(st.lane == 0, red.store(row, acc0, ACC)),
    ])
    body = ir.seq([
        *_strided_partial(red, acc, row, tid, st.threads),
        ir.BufferStore(acc, _simd_reduce(red, acc0), [zero]),
        ir.IfThenElse(st.lane == 0, ir.BufferStore(scratch, acc0, [st.group])),
        tg_barrier,
        ir.IfThenElse(st.group == 0, final) if st.groups > 1 else final,
        # The scratch slots are reused by the next row.
        tg_barrier,
    ])
    loop = ir.For(row, zero, ir.const(red.rows, "int32"), ir.ForKind.SERIAL, body)
    # Threadgroup memory is declared once, at the start of the kernel.
    sctx.add_alloc_buffer(scratch)
    return ir.PrimFunc([], ir.seq([ir.AllocBuffer(acc), loop, barrier_after(sctx, red.dst.buffer)]))


def _rows_cover_groups(call: Any, sctx: Any) -> tuple[bool, str]:
    red = _parse(call)
    st = simd_threads(sctx)
    if red.rows < st.groups:
        return False, f"{red.rows} rows for {st.groups} SIMD groups: use the threadgroup variant"
    return True, ""


def _checks(call: Any, sctx: Any) -> tuple[bool, str]:
    _parse(call)
    simd_threads(sctx)
    return True, ""


def register() -> None:
    for name in REDUCE_OPS:
        register_dispatch(name, "metal", variant="simdgroup", priority=20,
                          when=[predicate("row_reduction", _checks),
                                predicate("rows_cover_simdgroups", _rows_cover_groups)],
                          )(_lower_simdgroup)
        register_dispatch(name, "metal", variant="threadgroup", priority=15,
                          when=[predicate("row_reduction", _checks)])(_lower_threadgroup)
