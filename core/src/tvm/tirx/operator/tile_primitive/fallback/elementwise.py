"""Generic lowering of the element-wise tile primitives: copy, fill, cast, unary, binary, fma,
select. Sources broadcast over the destination (see ``common.broadcast_map``); float16 and
bfloat16 values are computed in float32 and cast back when stored."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .....error import DispatchFail
from .....ir import (
    Buffer,
    BufferRegion,
    BufferStore,
    DataType,
    FloatImm,
    FloorDiv,
    IntImm,
    Max,
    Min,
    PrimExpr,
    PrimFunc,
    Select,
    TilePrimitiveCall,
    convert,
)
from .....tirx import op as T
from ..common import (
    MapOpType,
    Operand,
    bound_args,
    cast_to,
    compute_dtype,
    region_indices,
    region_of,
)
from ..dispatch_context import DispatchContext
from ._scope import run_at_scope

__all__ = [
    "BINARY_FNS", "UNARY_FNS", "apply_binary", "apply_unary", "dst_region", "lower_binary",
    "lower_binary_chain", "lower_copy", "lower_fill", "lower_fma", "lower_select", "lower_unary",
]

# ops whose result is only defined in floating point: integer inputs are computed in float32
FLOAT_ONLY = frozenset({"exp", "exp2", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid",
                        "silu"})


def dst_region(arg: Any, name: str = "dst") -> BufferRegion:
    if not isinstance(arg, (Buffer, BufferRegion)):
        raise DispatchFail(f"{name} must be a buffer or buffer region, got {type(arg).__name__}")
    return region_of(arg)


def _one(dt: DataType) -> PrimExpr:
    return FloatImm(dt, 1.0) if dt.is_float else IntImm(dt, 1)


def _zero(dt: DataType) -> PrimExpr:
    return FloatImm(dt, 0.0) if dt.is_float else IntImm(dt, 0)


def _sigmoid(x: PrimExpr) -> PrimExpr:
    one = _one(x.dtype)
    return one / (one + T.exp(-x))


UNARY_FNS: dict[str, Callable[[PrimExpr], PrimExpr]] = {
    "exp": T.exp,
    "exp2": T.exp2,
    "log": T.log,
    "sqrt": T.sqrt,
    "rsqrt": lambda x: _one(x.dtype) / T.sqrt(x),
    "reciprocal": lambda x: _one(x.dtype) / x,
    "abs": T.abs,
    "neg": lambda x: -x,
    "tanh": T.tanh,
    "sigmoid": _sigmoid,
    "silu": lambda x: x * _sigmoid(x),
    "relu": lambda x: Max(x, _zero(x.dtype)),
}


def _fdiv(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    # integers divide with floor semantics (numpy's //); floats divide exactly
    return a / b if a.dtype.is_float else FloorDiv(a, b)


BINARY_FNS: dict[str, Callable[[PrimExpr, PrimExpr], PrimExpr]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "fdiv": _fdiv,
    "maximum": Max,
    "minimum": Min,
}


def apply_unary(name: str, x: PrimExpr) -> PrimExpr:
    return UNARY_FNS[MapOpType.parse(name).value](x)


def apply_binary(name: str, a: PrimExpr, b: PrimExpr) -> PrimExpr:
    return BINARY_FNS[MapOpType.parse(name).value](a, b)


def _store(dst: BufferRegion, idx: list[PrimExpr], value: PrimExpr) -> BufferStore:
    return BufferStore(dst.buffer, cast_to(value, dst.buffer.dtype), region_indices(dst, idx))


def _func(sctx: DispatchContext, dst: BufferRegion, value: Callable[[list[PrimExpr]], PrimExpr]) -> PrimFunc:
    return PrimFunc([], run_at_scope(sctx, dst.shape, lambda idx: _store(dst, idx, value(idx))))


def _operands(args: dict[str, Any], names: tuple[str, ...], dst: BufferRegion) -> list[Operand]:
    return [Operand(args[n], n).bind(dst.shape) for n in names]


# -- families --------------------------------------------------------------------------------------
def lower_copy(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    """copy, copy_async (done synchronously), permute_layout (logical indices: layouts only
    change where elements live), cast."""
    a = bound_args(call)
    dst = dst_region(a["dst"])
    (src,) = _operands(a, ("src",), dst)
    if call.op_name == "permute_layout" and src.region is not None \
            and src.region.buffer.dtype != dst.buffer.dtype:
        raise DispatchFail(f"dtype mismatch: dst is {dst.buffer.dtype}, src "
                           f"{src.region.buffer.dtype}; permute_layout moves elements between "
                           "layouts without converting them (convert with Tx.cast)")
    for region in (dst, src.region):
        _own_elements_only(region, sctx)
        if region is not None and region.buffer.scope == "tmem":
            raise DispatchFail(f"{region.buffer.name} is in tensor memory, which only the "
                               "backend's tcgen05 instructions reach (no loop can index it)")
    return _func(sctx, dst, src.load)


def _own_elements_only(region: BufferRegion | None, sctx: DispatchContext) -> None:
    """Decline registers spread over threads by their layout when several threads run the
    call: the loops deal elements to threads round-robin, not to the threads that hold them."""
    if region is None or sctx.is_thread or sctx.is_single_thread():
        return
    buf = region.buffer
    shard = getattr(buf.layout, "shard", None) or []
    if buf.scope == "local" and any(it.axis.is_thread for it in shard):
        raise DispatchFail(
            f"{buf.name}'s registers are spread over the threads by its layout; the fallback "
            f"deals elements to the {sctx.scope_kind}'s threads round-robin, not to the threads "
            "that hold them (a backend variant copies such registers; at thread scope each "
            f"thread can copy its own part, {buf.name}.local())")


def lower_fill(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    """fill, memset, zero."""
    a = bound_args(call)
    dst = dst_region(a["dst"])
    value = a.get("value", 0)
    if isinstance(value, (Buffer, BufferRegion)):
        raise DispatchFail(f"{call.op_name}: value must be a scalar expression")
    src = Operand(value, "value")
    return _func(sctx, dst, src.load)


def lower_unary(call: TilePrimitiveCall, sctx: DispatchContext, name: str | None = None) -> PrimFunc:
    """dst = f(src * scale + bias); bias and scale are scalars or broadcast buffers."""
    a = bound_args(call)
    name = name or call.op_name
    dst = dst_region(a["dst"])
    parts = [n for n in ("src", "scale", "bias") if a.get(n) is not None]
    ops = dict(zip(parts, _operands(a, tuple(parts), dst)))
    cdt = compute_dtype([dst.buffer.dtype, *(o.dtype for o in ops.values())],
                        needs_float=MapOpType.parse(name).value in FLOAT_ONLY)

    def value(idx: list[PrimExpr]) -> PrimExpr:
        x = cast_to(ops["src"].load(idx), cdt)
        if "scale" in ops:
            x = x * cast_to(ops["scale"].load(idx), cdt)
        if "bias" in ops:
            x = x + cast_to(ops["bias"].load(idx), cdt)
        return apply_unary(name, x)

    return _func(sctx, dst, value)


def _elementwise(call: TilePrimitiveCall, sctx: DispatchContext, names: tuple[str, ...],
                 combine: Callable[[list[PrimExpr]], PrimExpr]) -> PrimFunc:
    a = bound_args(call)
    dst = dst_region(a["dst"])
    srcs = _operands(a, names, dst)
    # integer scalars take the buffers' type; float scalars make an integer op compute in float
    cdt = compute_dtype([dst.buffer.dtype, *(s.dtype for s in srcs
                                             if not s.is_scalar or s.dtype.is_float)])
    return _func(sctx, dst, lambda idx: combine([cast_to(s.load(idx), cdt) for s in srcs]))


def lower_binary(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    name = call.op_name
    return _elementwise(call, sctx, ("src1", "src2"), lambda v: apply_binary(name, v[0], v[1]))


def lower_fma(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    return _elementwise(call, sctx, ("src1", "src2", "src3"), lambda v: v[0] * v[1] + v[2])


def lower_binary_chain(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    """dst = (src1 op1 src2) op2 src3, in one pass (src3 may alias dst)."""
    a = bound_args(call)
    op1, op2 = MapOpType.parse(a["op1"]).value, MapOpType.parse(a["op2"]).value
    return _elementwise(call, sctx, ("src1", "src2", "src3"),
                        lambda v: apply_binary(op2, apply_binary(op1, v[0], v[1]), v[2]))


def lower_select(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    """dst = pred ? true_value : false_value. ``pred`` is a bool (or nonzero) buffer or region
    broadcast over dst, a scalar expression, or a Python callable of dst's element indices."""
    a = bound_args(call)
    dst = dst_region(a["dst"])
    tv, fv = _operands(a, ("true_value", "false_value"), dst)
    pred = a["pred"]
    dt = dst.buffer.dtype
    if callable(pred) and not isinstance(pred, PrimExpr):
        def cond(idx: list[PrimExpr]) -> PrimExpr:
            return _as_bool(pred(*idx))
    else:
        p = Operand(pred, "pred").bind(dst.shape)

        def cond(idx: list[PrimExpr]) -> PrimExpr:
            return _as_bool(p.load(idx))

    return _func(sctx, dst, lambda idx: Select(cond(idx), cast_to(tv.load(idx), dt),
                                               cast_to(fv.load(idx), dt)))


def _as_bool(e: Any) -> PrimExpr:
    e = convert(e)
    return e if e.dtype.is_bool else e != _zero(e.dtype)
