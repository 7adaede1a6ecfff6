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

from tvm.backend.sdk import (
    ReduceOpType,
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
    FloatImm,
    For,
    ForKind,
    IfThenElse,
    Max,
    Min,
    PrimFunc,
    Stmt,
    Var,
    const,
    seq,
)

from .. import op
from ._simd import SIMD_WIDTH, barrier_after, ceil_div, simd_threads

__all__ = ["register"]

REDUCE_OPS = ("sum", "max", "min")


class _Rows:
    """A reduction over the last axis: ``src[M, N] -> dst[M]`` (or ``[M, 1]``; M may be 1)."""

    def __init__(self, call: Any) -> None:
        red = row_reduction(call)
        for name, buf in (("src", red.src.buffer), ("dst", red.dst.buffer)):
            if not buf.dtype.is_float or buf.dtype.bits > 32:
                raise DispatchFail(f"{name} `{buf.name}` is {buf.dtype}; SIMD-group reductions "
                                   "here take float32, float16 or bfloat16")
        self.kind, self.src, self.dst, self.accum = red.kind, red.src, red.dst, red.accum
        self.m, self.n, self.dst_dim, self.rank = red.rows, red.cols, red.dst_axis, red.rank

    @property
    def acc_dtype(self) -> Any:
        return DataType("float32")

    def identity(self) -> Any:
        if self.kind is ReduceOpType.SUM:
            return FloatImm(self.acc_dtype, 0.0)
        return FloatImm(self.acc_dtype, float("-inf") if self.kind is ReduceOpType.MAX
                        else float("inf"))

    def combine(self, acc: Any, value: Any) -> Any:
        if self.kind is ReduceOpType.SUM:
            return acc + value
        return Max(acc, value) if self.kind is ReduceOpType.MAX else Min(acc, value)

    def simd_reduce(self, value: Any) -> Any:
        fn = {ReduceOpType.SUM: op.simd_sum, ReduceOpType.MAX: op.simd_max,
              ReduceOpType.MIN: op.simd_min}[self.kind]
        return fn(value)

    def load(self, row: Any, col: Any) -> Any:
        rel = [row, col] if self.rank == 2 else [col]
        return cast_to(BufferLoad(self.src.buffer, region_indices(self.src, rel)), self.acc_dtype)

    def store(self, row: Any, value: Any) -> Any:
        idx = [fold_add(r.min, row) if d == self.dst_dim else r.min
               for d, r in enumerate(self.dst.region)]
        if self.accum:
            value = self.combine(cast_to(BufferLoad(self.dst.buffer, idx), self.acc_dtype), value)
        return BufferStore(self.dst.buffer, cast_to(value, self.dst.buffer.dtype), idx)


def _local_acc(rows: _Rows) -> Any:
    return Buffer("red_acc", [1], rows.acc_dtype, scope="local")


def _strided_partial(rows: _Rows, acc: Any, row: Any, start: Any, step: int) -> list[Any]:
    """``acc = identity; for col in start, start+step, ... < N: acc = combine(acc, src)``."""
    zero = const(0, "int32")
    k = Var("red_k", "int32")
    col = k * step + start
    update: Stmt = BufferStore(acc, rows.combine(BufferLoad(acc, [zero]), rows.load(row, col)),
                               [zero])
    if rows.n % step:
        update = IfThenElse(col < rows.n, update)
    return [BufferStore(acc, rows.identity(), [zero]),
            For(k, zero, const(ceil_div(rows.n, step), "int32"), ForKind.SERIAL, update)]


def _lower_simdgroup(call: Any, sctx: Any) -> Any:
    """Each SIMD group reduces whole rows."""
    rows = _Rows(call)
    st = simd_threads(sctx)
    acc = _local_acc(rows)
    zero = const(0, "int32")
    r_k = Var("row_k", "int32")
    row = r_k * st.groups + st.group if st.groups > 1 else r_k
    body = seq([
        *_strided_partial(rows, acc, row, st.lane, SIMD_WIDTH),
        # Every lane of the SIMD group reaches this store: simd_* needs them all.
        BufferStore(acc, rows.simd_reduce(BufferLoad(acc, [zero])), [zero]),
        IfThenElse(st.lane == 0, rows.store(row, BufferLoad(acc, [zero]))),
    ])
    if rows.m % st.groups:
        body = IfThenElse(row < rows.m, body)  # uniform within a SIMD group
    loop = For(r_k, zero, const(ceil_div(rows.m, st.groups), "int32"), ForKind.SERIAL, body)
    return PrimFunc([], seq([AllocBuffer(acc), loop, barrier_after(sctx, rows.dst.buffer)]))


def _lower_threadgroup(call: Any, sctx: Any) -> Any:
    """The whole threadgroup reduces each row; SIMD-group partials meet in threadgroup memory."""
    if not sctx.is_cta:
        raise DispatchFail(f"scope is {sctx.scope_kind}; this variant needs a whole threadgroup")
    rows = _Rows(call)
    st = simd_threads(sctx)
    acc = _local_acc(rows)
    scratch = Buffer("red_partials", [st.groups], rows.acc_dtype, scope="shared")
    zero = const(0, "int32")
    row = Var("row", "int32")
    tid = sctx.thread_index()
    tg_barrier = Evaluate(op.threadgroup_barrier("threadgroup"))
    acc0 = BufferLoad(acc, [zero])
    final = seq([
        BufferStore(acc, rows.identity(), [zero]),
        IfThenElse(st.lane < st.groups, BufferStore(acc, BufferLoad(scratch, [st.lane]), [zero])),
        BufferStore(acc, rows.simd_reduce(acc0), [zero]),
        IfThenElse(st.lane == 0, rows.store(row, acc0)),
    ])
    body = seq([
        *_strided_partial(rows, acc, row, tid, st.threads),
        BufferStore(acc, rows.simd_reduce(acc0), [zero]),
        IfThenElse(st.lane == 0, BufferStore(scratch, acc0, [st.group])),
        tg_barrier,
        IfThenElse(st.group == 0, final) if st.groups > 1 else final,
        # The scratch slots are reused by the next row.
        tg_barrier,
    ])
    loop = For(row, zero, const(rows.m, "int32"), ForKind.SERIAL, body)
    # Threadgroup memory is declared once, at the start of the kernel.
    sctx.add_alloc_buffer(scratch)
    return PrimFunc([], seq([AllocBuffer(acc), loop, barrier_after(sctx, rows.dst.buffer)]))


def _rows_cover_groups(call: Any, sctx: Any) -> tuple[bool, str]:
    rows = _Rows(call)
    st = simd_threads(sctx)
    if rows.m < st.groups:
        return False, f"{rows.m} rows for {st.groups} SIMD groups: use the threadgroup variant"
    return True, ""


def _checks(call: Any, sctx: Any) -> tuple[bool, str]:
    _Rows(call)
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
