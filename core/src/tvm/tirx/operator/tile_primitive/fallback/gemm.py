"""Generic lowering of ``gemm`` (D = alpha * op(A) @ op(B) + beta * C) and ``gemm_async``
(D (+)= A @ B^T, done synchronously; B is ``[N, K]`` unless ``transpose_B``, as in the seed). Each element of D is computed by one thread with a
local accumulator (float32 for 16-bit floats, int32 for integers). ``C=None`` or a constant
``beta == 0`` means C is not read, as in BLAS; C may be D itself or broadcast over D (a bias
row)."""

from __future__ import annotations

from typing import Any

from ..... import ir
from .....error import DispatchFail
from ..common import (
    Operand,
    bound_args,
    cast_to,
    compute_dtype,
    expr_equal,
    fold_add,
    gemm_args,
    is_one,
    no_scale_factors,
    static_bool,
    static_float,
)
from ..dispatch_context import DispatchContext
from ._scope import run_at_scope
from .elementwise import dst_region

__all__ = ["lower_gemm", "lower_gemm_async"]


class _Matrix:
    """A 2-D view of a region whose leading dimensions (if any) have extent 1."""

    def __init__(self, arg: Any, name: str, transpose: bool = False) -> None:
        self.region: ir.BufferRegion = dst_region(arg, name)
        shape = self.region.shape
        if len(shape) < 2:
            raise DispatchFail(f"{name} must have at least 2 dimensions, got {len(shape)}")
        if not all(is_one(e) for e in shape[:-2]):
            raise DispatchFail(f"{name}: batched gemm is not supported (leading extents "
                               f"{[str(e) for e in shape[:-2]]} must be 1)")
        buf = self.region.buffer
        lay = getattr(buf, "layout", None)
        if buf.scope == "local" and any(it.axis.is_thread for it in getattr(lay, "shard", ())):
            raise DispatchFail(f"{name} is a register fragment spread over threads (layout "
                               f"{lay}); the generic gemm computes each element of D in one "
                               "thread, which cannot read other threads' registers (a target "
                               "variant, e.g. CUDA's mma.m16n8k*, takes fragments)")
        self.name = name
        self.transpose = transpose
        rows, cols = shape[-2], shape[-1]
        self.rows, self.cols = (cols, rows) if transpose else (rows, cols)

    def at(self, i: ir.PrimExpr, j: ir.PrimExpr) -> ir.PrimExpr:
        """Element (i, j) of op(X)."""
        r, c = (j, i) if self.transpose else (i, j)
        lead = [rg.min for rg in self.region.region[:-2]]
        mins = self.region.region
        return ir.BufferLoad(self.region.buffer, [*lead, fold_add(mins[-2].min, r), fold_add(mins[-1].min, c)])


def _check(what: str, a: ir.PrimExpr, b: ir.PrimExpr) -> None:
    if not expr_equal(a, b):
        raise DispatchFail(f"gemm shapes do not match: {what} ({a} vs {b})")


def gemm_stmt(sctx: DispatchContext, D: Any, A: Any, B: Any, C: Any, ta: bool, tb: bool,
              alpha: Any, beta: Any) -> ir.Stmt:
    d, a, b = _Matrix(D, "D"), _Matrix(A, "A", ta), _Matrix(B, "B", tb)
    _check("op(A) columns vs op(B) rows (K)", a.cols, b.rows)
    _check("D rows vs op(A) rows (M)", d.rows, a.rows)
    _check("D columns vs op(B) columns (N)", d.cols, b.cols)
    acc_dt = compute_dtype([a.region.buffer.dtype, b.region.buffer.dtype, d.region.buffer.dtype])
    beta_v = static_float(beta)
    c_op = None
    if C is not None and beta_v != 0.0:
        c_op = Operand(C, "C").bind([d.rows, d.cols])
    alpha_v = static_float(alpha)
    zero = ir.const(0, "int32")
    K = a.cols

    def body(idx: list[ir.PrimExpr]) -> ir.Stmt:
        i, j = idx
        acc = ir.Buffer("acc", [1], acc_dt, scope="local")
        kv = ir.Var("k", K.dtype)
        prod = cast_to(a.at(i, kv), acc_dt) * cast_to(b.at(kv, j), acc_dt)
        update: ir.Stmt = ir.BufferStore(acc, ir.BufferLoad(acc, [zero]) + prod, [zero])
        if is_one(K):
            update = ir.BufferStore(acc, ir.BufferLoad(acc, [zero]) + _at_k0(a, b, i, j, acc_dt),
                                    [zero])
        else:
            update = ir.For(kv, ir.const(0, K.dtype), K, ir.ForKind.SERIAL, update)
        result: ir.PrimExpr = ir.BufferLoad(acc, [zero])
        if alpha_v != 1.0:
            result = result * cast_to(alpha if isinstance(alpha, ir.PrimExpr) else ir.const(alpha), acc_dt)
        if c_op is not None:
            cval = cast_to(c_op.load([i, j]), acc_dt)
            if beta_v != 1.0:
                cval = cval * cast_to(beta if isinstance(beta, ir.PrimExpr) else ir.const(beta),
                                      acc_dt)
            result = result + cval
        lead = [rg.min for rg in d.region.region[:-2]]
        mins = d.region.region
        store = ir.BufferStore(d.region.buffer, cast_to(result, d.region.buffer.dtype),
                               [*lead, fold_add(mins[-2].min, i), fold_add(mins[-1].min, j)])
        return ir.seq([ir.AllocBuffer(acc),
                       ir.BufferStore(acc, cast_to(ir.const(0, acc_dt), acc_dt), [zero]),
                       update, store])

    return run_at_scope(sctx, [d.rows, d.cols], body, prefix="mn")


def _at_k0(a: _Matrix, b: _Matrix, i: ir.PrimExpr, j: ir.PrimExpr, dt: ir.DataType) -> ir.PrimExpr:
    k0 = ir.const(0, "int32")
    return cast_to(a.at(i, k0), dt) * cast_to(b.at(k0, j), dt)


def lower_gemm(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    x, ta, tb = gemm_args(call)
    return ir.PrimFunc([], gemm_stmt(sctx, x["D"], x["A"], x["B"], x["C"], ta, tb,
                                     x["alpha"], x["beta"]))


def lower_gemm_async(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    x = bound_args(call)
    no_scale_factors(x)
    accum = static_bool(x["accum"], "accum")
    return ir.PrimFunc([], gemm_stmt(sctx, x["D"], x["A"], x["B"], x["D"] if accum else None,
                                     static_bool(x["transpose_A"], "transpose_A"),
                                     not static_bool(x["transpose_B"], "transpose_B"), 1.0,
                                     1.0 if accum else 0.0))
