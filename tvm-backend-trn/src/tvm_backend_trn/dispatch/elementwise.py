"""Element-wise tile primitives on trn.

* binary ``add, sub, mul, fdiv, maximum, minimum`` (variant ``binary``, p0): two tiles ->
  ``tensor_tensor``; a tile and a constant or a per-partition column -> ``tensor_scalar``
  (``reverse`` when the tile is the second operand);
* unary activations (variant ``unary``, p0; ``sqrt`` and ``exp``: ``unary_with_bias_scale``,
  as in the seed): ``activation(op, src * scale + bias)``; a constant non-zero bias becomes a
  ``[P, 1]`` ``const_bias`` workspace (NeuronCore-v2 takes a bias tile only); ``reciprocal``
  without bias and scale is the ``reciprocal`` instruction; ``neg`` is ``src * -1``;
* ``fill``, ``memset``, ``zero`` (variant ``unary``): ``memset``.
"""

from __future__ import annotations

import math
from typing import Any

from tvm.backend.sdk import DispatchContext, fail, register_dispatch
from tvm.ir import Evaluate, FloatImm, IntImm, PrimFunc, TilePrimitiveCall

from .common import (
    TRN_ONLY,
    check_layout,
    classify,
    emit,
    func,
    nki,
    nonunit,
    pdims,
    region,
    workspace,
)

__all__ = ["BINARY", "UNARY", "binary_trn", "register", "unary_trn"]

BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "fdiv": "divide",
          "maximum": "maximum", "minimum": "minimum"}
UNARY = {"exp": "exp", "exp2": "exp", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt",
         "reciprocal": "reciprocal", "abs": "abs", "neg": "copy", "silu": "silu",
         "tanh": "tanh", "sigmoid": "sigmoid", "relu": "relu"}


def _dst(op: TilePrimitiveCall) -> Any:
    dst = region(op.args[0])
    if dst.buffer.scope != "trn.sbuf":
        fail(f"dst {dst.buffer.name!r} must be in trn.sbuf, not {dst.buffer.scope}")
    check_layout(dst.buffer, "dst")
    return dst


def binary_trn(op: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    dst = _dst(op)
    alu = BINARY[op.op_name]
    a = classify(op.args[1], dst, "src1")
    b = classify(op.args[2], dst, "src2")
    if a.kind == "tile" and b.kind == "tile":
        return func([emit(nki.nki_tensortensor(dst, a.value, b.value, alu))])
    if a.kind == "tile":
        return func([emit(nki.nki_tensorscalar(dst, a.value, b.value, alu, False))])
    if b.kind == "tile":
        return func([emit(nki.nki_tensorscalar(dst, b.value, a.value, alu, True))])
    fail("at least one operand must be a tile of the destination's shape")


def partitions_of(dst: Any) -> int:
    p = set(pdims(dst.buffer))
    return math.prod(n for d, n in nonunit(dst) if d in p) or 1


def bias_operand(op: TilePrimitiveCall, sctx: DispatchContext, dst: Any, bias: Any,
                 stmts: list[Any]) -> Any:
    """The bias of an activation: 0.0, a [P, 1] column, or a const_bias workspace tile."""
    if bias is None:
        return FloatImm("float32", 0.0)
    b = classify(bias, dst, "bias")
    if b.kind == "tile":
        fail("bias must be a constant or a per-partition [P, 1] column")
    if b.kind == "column":
        return b.value
    if float(b.value.value) == 0.0:
        return b.value
    tile = workspace(op, sctx, "const_bias", (partitions_of(dst), 1), "float32", "trn.sbuf",
                     "Constant bias tensor")
    stmts.append(emit(nki.nki_memset(tile, b.value)))
    return tile


def scale_operand(dst: Any, scale: Any) -> Any:
    if scale is None:
        return FloatImm("float32", 1.0)
    s = classify(scale, dst, "scale")
    if s.kind == "tile":
        fail("scale must be a constant or a per-partition [P, 1] column")
    return s.value


def unary_trn(op: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    dst = _dst(op)
    name = op.op_name
    src = classify(op.args[1], dst, "src")
    if src.kind != "tile":
        fail("src must be a tile of the destination's shape")
    bias, scale = op.args[2], op.args[3]
    if name == "reciprocal" and bias is None and scale is None:
        return func([emit(nki.nki_reciprocal(dst, src.value))])
    if name in ("neg", "exp2"):
        factor = -1.0 if name == "neg" else math.log(2.0)
        if not _const_or_none(bias) or not _const_or_none(scale):
            fail(f"{name} with tile bias/scale is not supported on Trainium")
        scale = FloatImm("float32", factor * _value(scale, 1.0))
        bias = None if bias is None else FloatImm("float32", factor * _value(bias, 0.0))
    stmts: list[Any] = []
    b = bias_operand(op, sctx, dst, bias, stmts)
    s = scale_operand(dst, scale)
    stmts.append(emit(nki.nki_activation(dst, src.value, UNARY[name], b, s)))
    return func(stmts)


def _const_or_none(x: Any) -> bool:
    return x is None or isinstance(x, (int, float, FloatImm, IntImm))


def _value(x: Any, default: float) -> float:
    if x is None:
        return default
    return float(getattr(x, "value", x))


def fill_trn(op: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    dst = _dst(op)
    value = op.args[1] if len(op.args) > 1 else FloatImm("float32", 0.0)
    if not isinstance(value, (FloatImm, IntImm, int, float)):
        fail(f"fill value must be a constant on Trainium, got {value}")
    v = float(getattr(value, "value", value))
    const = FloatImm("float32", v) if dst.buffer.dtype.is_float else IntImm("int32", int(v))
    return func([emit(nki.nki_memset(dst, const))])


def register() -> None:
    for name in BINARY:
        register_dispatch(name, "trn", variant="binary", priority=0,
                          when=[TRN_ONLY])(binary_trn)
    for name in UNARY:
        variant = "unary_with_bias_scale" if name in ("sqrt", "exp") else "unary"
        register_dispatch(name, "trn", variant=variant, priority=0, when=[TRN_ONLY])(unary_trn)
    for name in ("fill", "memset", "zero"):
        register_dispatch(name, "trn", variant="unary", priority=0, when=[TRN_ONLY])(fill_trn)


_ = Evaluate  # re-exported for variants building init statements
