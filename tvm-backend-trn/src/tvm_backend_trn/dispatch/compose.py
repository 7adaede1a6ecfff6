"""The seed's compose ops on trn (variant ``default``, p10), fused where one NKI instruction
does both steps.

* ``binary_chain(dst, src1, src2, src3, op1, op2)``: ``(src1 op1 src2) op2 src3`` ->
  ``scalar_tensor_tensor`` (src2 a constant/column, src3 a tile), ``scalar_tensor_scalar``
  (both constants/columns), else two instructions;
* ``binary_reduce(dst, reduce_dst, src1, src2, op, reduce_op, axes)``: ``tensor_scalar_reduce``
  when src2 is a constant/column and every free axis reduces, else binary + ``tensor_reduce``;
* ``unary_reduce(dst, reduce_dst, src, op, reduce_op, axes, bias, scale)``:
  ``activation_reduce`` for a sum over every free axis, else activation + ``tensor_reduce``;
* ``reduce_negate(dst, src, reduce_op, axes)``: ``tensor_reduce(negate=True)``.

The generic ``compose_op`` (a ``with Tx.compose_op():`` block) has the seed's variant
``default`` (p10). The seed's raises NotImplementedError (the block was to be rewritten into the
specific compose ops first); here it lowers the block to its calls one after another, each then
dispatched to the variants above and beside, since trn has no scalar fallback to fall back on.
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import DispatchContext, fail, lower_compose_op, register_dispatch
from tvm.ir import PrimFunc, TilePrimitiveCall

from .common import TRN_ONLY, Operand, classify, emit, func, nki, nonunit, opname, pdims, region
from .elementwise import BINARY, UNARY, bias_operand, scale_operand
from .reduction import COMBINE, check_reduce, normalize_axes

__all__ = ["register"]

_ALU = {**BINARY, "max": "maximum", "min": "minimum", "div": "divide", "add": "add"}


def _alu(value: Any) -> str:
    name = opname(value)
    if name not in _ALU:
        fail(f"unknown binary op {name!r}; expected one of {sorted(_ALU)}")
    return _ALU[name]


def _reduce_name(value: Any) -> str:
    name = opname(value)
    aliases = {"add": "sum", "maximum": "max", "minimum": "min"}
    name = aliases.get(name, name)
    if name not in COMBINE:
        fail(f"unknown reduce op {name!r}; expected sum, max or min")
    return name


def _sbuf_dst(arg: Any) -> Any:
    dst = region(arg)
    if dst.buffer.scope != "trn.sbuf":
        fail(f"dst {dst.buffer.name!r} must be in trn.sbuf")
    return dst


def _binary(dst: Any, a: Any, b: Any, alu: str) -> Any:
    if a.kind == "tile" and b.kind == "tile":
        return emit(nki.nki_tensortensor(dst, a.value, b.value, alu))
    if a.kind == "tile":
        return emit(nki.nki_tensorscalar(dst, a.value, b.value, alu, False))
    if b.kind == "tile":
        return emit(nki.nki_tensorscalar(dst, b.value, a.value, alu, True))
    fail("at least one operand must be a tile")


def binary_chain(op: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    dst = _sbuf_dst(op.args[0])
    s1, s2, s3 = (classify(op.args[i], dst, f"src{i}") for i in (1, 2, 3))
    op1, op2 = _alu(op.args[4]), _alu(op.args[5])
    if s1.kind != "tile":
        fail("src1 must be a tile of the destination's shape")
    if s2.kind != "tile" and s3.kind == "tile":
        return func([emit(nki.nki_scalar_tensor_tensor(dst, s1.value, s2.value, s3.value,
                                                       op1, op2))])
    if s2.kind != "tile" and s3.kind != "tile":
        return func([emit(nki.nki_scalar_tensor_scalar(dst, s1.value, s2.value, s3.value,
                                                       op1, op2))])
    first = _binary(dst, s1, s2, op1)
    return func([first, _binary(dst, Operand("tile", dst), s3, op2)])


def _all_free(src: Any, axes: list[int]) -> bool:
    p = set(pdims(src.buffer))
    return {d for d, _ in nonunit(src) if d not in p} <= set(axes)


def binary_reduce(op: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    dst, rdst = _sbuf_dst(op.args[0]), _sbuf_dst(op.args[1])
    s1, s2 = classify(op.args[2], dst, "src1"), classify(op.args[3], dst, "src2")
    alu, rname = _alu(op.args[4]), _reduce_name(op.args[5])
    axes = normalize_axes(op.args[6], len(dst.region))
    check_reduce(rdst, dst, axes)
    if s1.kind == "tile" and s2.kind != "tile" and _all_free(dst, axes):
        return func([emit(nki.nki_tensorscalar_reduce(rdst, dst, s1.value, s2.value, alu,
                                                      rname, False))])
    return func([_binary(dst, s1, s2, alu),
                 emit(nki.nki_tensorreduce(rdst, dst, rname, False, *axes))])


def unary_reduce(op: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    dst, rdst = _sbuf_dst(op.args[0]), _sbuf_dst(op.args[1])
    src = classify(op.args[2], dst, "src")
    if src.kind != "tile":
        fail("src must be a tile of the destination's shape")
    name = opname(op.args[3])
    if name not in UNARY or name in ("neg", "exp2"):
        fail(f"unary op {name!r} is not an activation on Trainium")
    rname = _reduce_name(op.args[4])
    axes = normalize_axes(op.args[5], len(dst.region))
    check_reduce(rdst, dst, axes)
    stmts: list[Any] = []
    bias = bias_operand(op, sctx, dst, op.args[6], stmts)
    scale = scale_operand(dst, op.args[7])
    if rname == "sum" and _all_free(dst, axes):
        stmts.append(emit(nki.nki_activation_reduce(rdst, dst, src.value, UNARY[name], "sum",
                                                    bias, scale)))
    else:
        stmts.append(emit(nki.nki_activation(dst, src.value, UNARY[name], bias, scale)))
        stmts.append(emit(nki.nki_tensorreduce(rdst, dst, rname, False, *axes)))
    return func(stmts)


def reduce_negate(op: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    dst, src = _sbuf_dst(op.args[0]), region(op.args[1])
    rname = _reduce_name(op.args[2])
    axes = normalize_axes(op.args[3], len(src.region))
    check_reduce(dst, src, axes)
    return func([emit(nki.nki_tensorreduce(dst, src, rname, True, *axes))])


def compose_op(op: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    return lower_compose_op(op, sctx)


def register() -> None:
    for name, impl in (("binary_chain", binary_chain), ("binary_reduce", binary_reduce),
                       ("unary_reduce", unary_reduce), ("reduce_negate", reduce_negate),
                       ("compose_op", compose_op)):
        register_dispatch(name, "trn", variant="default", priority=10, when=[TRN_ONLY])(impl)
