"""``gemm`` and ``gemm_async`` on the host: variant ``blocked``.

The call becomes one call of the host library's GEMM (``kernels/gemm.c``: B and A packed into
aligned panels per cache block, an MR x NR register tile of vector FMAs, OpenMP threads over
disjoint column ranges of D). Operands are passed as 2-D strided views (pointer, row stride,
column stride), so transposes, regions of larger buffers and a broadcast ``C`` (a bias row) need
no copies. float32 and float64; float16 and bfloat16 inputs (and outputs) are converted while
packing and computed in float32.

Declines (core's fallback runs) when: an operand is batched (leading extents other than 1) or
has a tile layout, D's innermost axis is not contiguous, the operand types have no library
entry (integer GEMM, float64 mixed with other types), the shapes do not match, or the scope's
threads run concurrently.
"""

from __future__ import annotations

from typing import Any

from ...error import DispatchFail
from ...ir import (
    AssertStmt,
    Buffer,
    BufferLoad,
    BufferRegion,
    DataType,
    FloatImm,
    IntImm,
    PrimExpr,
    PrimFunc,
    TilePrimitiveCall,
    const,
)
from ...tirx import op as T
from ...tirx.operator.tile_primitive import DispatchContext, fail, predicate
from ...tirx.operator.tile_primitive.common import (
    Operand,
    bound_args,
    cast_to,
    expr_equal,
    gemm_args,
    is_one,
    region_of,
    static_bool,
    static_float,
)
from .common import contiguous_inner, register_host, run_on_thread0

__all__ = ["VARIANT", "blocked_gemm", "register"]

VARIANT = "blocked"
# how the library reads an operand's elements: 0 = the compute type, 1 = float16, 2 = bfloat16
_CODES = {"float32": 0, "float16": 1, "bfloat16": 2}
_ENTRY = {"float32": "tvm_host_gemm_f32", "float64": "tvm_host_gemm_f64"}
#: below this many multiply-adds (constant shapes) the fallback's loops, whose constant bounds the
#: compiler unrolls and vectorises, beat packing panels: measured in a 256^3 matmul made of
#: t^3 tile calls (docs/perf.md), 2x faster at t=32 and 24x at t=16; the library wins from t=64.
MIN_WORK = 65536


class _View:
    """A 2-D operand as the library takes it: its first element's address and strides."""

    def __init__(self, arg: Any, name: str, transpose: bool = False) -> None:
        if not isinstance(arg, (Buffer, BufferRegion)):
            fail(f"{name} must be a buffer or buffer region, got {type(arg).__name__}")
        region = region_of(arg)
        buf = region.buffer
        if len(region.region) < 2:
            fail(f"{name} must have at least 2 dimensions, got {len(region.region)}")
        if not all(is_one(r.extent) for r in region.region[:-2]):
            fail(f"{name}: batched gemm (leading extents "
                 f"{[str(r.extent) for r in region.region[:-2]]}) is left to the fallback")
        if buf.layout is not None:
            fail(f"{name} ({buf.name}) has a tile layout; the library reads strided memory")
        self.name, self.buffer, self.region = name, buf, region
        rs, cs = _strides(buf)
        rows, cols = region.region[-2].extent, region.region[-1].extent
        self.rows, self.cols = (cols, rows) if transpose else (rows, cols)
        self.rs, self.cs = (cs, rs) if transpose else (rs, cs)

    @property
    def address(self) -> PrimExpr:
        return T.address_of(BufferLoad(self.buffer, [r.min for r in self.region.region]))


def _strides(buf: Buffer) -> tuple[PrimExpr, PrimExpr]:
    """The element strides of a buffer's last two axes."""
    if buf.strides:
        return buf.strides[-2], buf.strides[-1]
    return buf.shape[-1], const(1, buf.shape[-1].dtype)


def _check(what: str, a: PrimExpr, b: PrimExpr) -> None:
    if not expr_equal(a, b):
        fail(f"gemm shapes do not match: {what} ({a} vs {b})")


def _d_contiguous(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    return contiguous_inner(bound_args(call).get("D"), "D")


def _enough_work(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    a = bound_args(call)
    d, x = a.get("D"), a.get("A")
    if not isinstance(d, (Buffer, BufferRegion)) or not isinstance(x, (Buffer, BufferRegion)):
        return True, ""
    (m, n), rows_cols = region_of(d).region[-2:], region_of(x).region[-2:]
    k = rows_cols[0] if static_bool(a.get("transpose_A", False), "transpose_A") else rows_cols[1]
    extents = [r.extent for r in (m, n, k)]
    if not all(isinstance(e, IntImm) for e in extents):
        return True, ""  # sizes known at run time: the library
    sizes = [int(e.value) for e in extents]  # type: ignore[attr-defined]  # IntImm
    work = sizes[0] * sizes[1] * sizes[2]
    if work >= MIN_WORK:
        return True, ""
    return False, (f"{sizes[0]}x{sizes[1]}x{sizes[2]} = {work} multiply-adds < {MIN_WORK}: "
                   "the fallback's constant loops beat packing")


def _types(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    a = bound_args(call)
    dts = [str(region_of(a[n]).buffer.dtype) for n in ("D", "A", "B")
           if isinstance(a[n], (Buffer, BufferRegion))]
    if all(d == "float64" for d in dts):
        return True, ""
    if all(d in _CODES for d in dts):
        return True, ""
    return False, (f"operand types {dts}: the library computes float64, or float32 from "
                   "float32/float16/bfloat16")


def _scalar(value: Any, dt: DataType) -> PrimExpr:
    v = static_float(value)
    if v is not None:
        return FloatImm(dt, v)
    if isinstance(value, PrimExpr):
        return cast_to(value, dt)
    raise DispatchFail(f"alpha/beta must be numbers or scalar expressions, got {value!r}")


def blocked_gemm(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    x, ta, tb = gemm_args(call)
    if call.op_name.endswith("gemm_async"):
        tb = not tb  # gemm_async's B is [N, K] unless transpose_B (D (+)= A @ B^T), as in the seed
        accum = static_bool(x["accum"], "accum")
        alpha, beta, c_arg = 1.0, (1.0 if accum else 0.0), (x["D"] if accum else None)
    else:
        alpha, beta, c_arg = x["alpha"], x["beta"], x["C"]
    d, a, b = _View(x["D"], "D"), _View(x["A"], "A", ta), _View(x["B"], "B", tb)
    _check("op(A) columns vs op(B) rows (K)", a.cols, b.rows)
    _check("D rows vs op(A) rows (M)", d.rows, a.rows)
    _check("D columns vs op(B) columns (N)", d.cols, b.cols)
    f64 = str(d.buffer.dtype) == "float64"
    cdt = DataType("float64" if f64 else "float32")
    beta_v = static_float(beta)
    zero64 = const(0, "int64")
    c_args: list[Any] = [IntImm("int64", 0), const(0, "int32"), zero64, zero64]
    if c_arg is not None and beta_v != 0.0:
        c_args = _c_view(c_arg, d, f64)

    def code(v: _View) -> PrimExpr:
        return const(0 if f64 else _CODES[str(v.buffer.dtype)], "int32")

    nthreads = int(getattr(sctx.target, "attrs", {}).get("num_threads") or 0)
    status = T.call_extern(
        "int32", _ENTRY[str(cdt)], _i64(d.rows), _i64(d.cols), _i64(a.cols),
        _scalar(alpha, cdt), a.address, code(a), _i64(a.rs), _i64(a.cs),
        b.address, code(b), _i64(b.rs), _i64(b.cs),
        _scalar(1.0 if beta is None else beta, cdt), *c_args,
        d.address, code(d), _i64(d.rs), const(nthreads, "int32"))
    check = AssertStmt(status == const(0, "int32"),
                       f"{call.op_name}: the host GEMM could not allocate its packing buffers")
    return PrimFunc([], run_on_thread0(sctx, check))


def _i64(e: PrimExpr) -> PrimExpr:
    return cast_to(e, DataType("int64"))


def _c_view(arg: Any, d: _View, f64: bool) -> list[Any]:
    """(address, code, row stride, column stride) of C broadcast over D (stride 0 where C has
    no such axis)."""
    op = Operand(arg, "C").bind([d.rows, d.cols])
    if op.region is None:
        fail("C must be a buffer or region (a scalar C is beta * C broadcast: use fill + gemm)")
    region = op.region
    buf = region.buffer
    if buf.layout is not None:
        fail(f"C ({buf.name}) has a tile layout; the library reads strided memory")
    dt = str(buf.dtype)
    if (dt != "float64") if f64 else (dt not in _CODES):
        fail(f"C has type {dt}, which the library does not read with D of type {d.buffer.dtype}")
    strides = list(buf.strides) if buf.strides else _row_major(buf)
    rs: PrimExpr = const(0, "int64")
    cs: PrimExpr = const(0, "int64")
    for k, target in enumerate(op._map or []):
        if target == 0:
            rs = strides[k]
        elif target == 1:
            cs = strides[k]
    address = T.address_of(BufferLoad(buf, [r.min for r in region.region]))
    code = const(0 if f64 else _CODES[dt], "int32")
    return [address, code, _i64(rs), _i64(cs)]


def _row_major(buf: Buffer) -> list[PrimExpr]:
    out: list[PrimExpr] = []
    acc: PrimExpr = const(1, buf.shape[-1].dtype)
    for ext in reversed(buf.shape):
        out.append(acc)
        acc = acc * ext
    return list(reversed(out))


def register() -> None:
    register_host(("gemm", "gemm_async"), VARIANT, blocked_gemm,
                  predicate("operand_types", _types), predicate("D_contiguous", _d_contiguous),
                  predicate("enough_work", _enough_work))
