"""Generic lowering of the compose ops. ``binary_chain`` is one element-wise pass (see
``elementwise``); the others lower to a sequence of tile primitive calls at the same scope,
which the dispatcher lowers in turn (so a backend's fast variants of the parts are used)."""

from __future__ import annotations

from typing import Any

from .....ir import Op, PrimFunc, TilePrimitiveCall, seq
from ..common import MapOpType, ReduceOpType, bound_args
from ..dispatch_context import DispatchContext

__all__ = ["lower_binary_reduce", "lower_compose_op", "lower_reduce_negate", "lower_unary_reduce"]


def _call(name: str, args: list[Any], like: TilePrimitiveCall) -> TilePrimitiveCall:
    return TilePrimitiveCall(Op.get(f"tirx.tile.{name}"), args, scope=like.scope,
                             workspace=like.workspace, config=like.config)


def _func(*calls: TilePrimitiveCall) -> PrimFunc:
    return PrimFunc([], seq(list(calls)))


def lower_binary_reduce(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    """dst = src1 op src2; reduce_dst = reduce_op(dst) over axes."""
    a = bound_args(call)
    op = MapOpType.parse(a["op"]).value
    red = ReduceOpType.parse(a["reduce_op"]).value
    return _func(_call(op, [a["dst"], a["src1"], a["src2"]], call),
                 _call(red, [a["reduce_dst"], a["dst"], a["axes"], False], call))


def lower_unary_reduce(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    """dst = op(src * scale + bias); reduce_dst = reduce_op(dst) over axes."""
    a = bound_args(call)
    op = MapOpType.parse(a["op"]).value
    red = ReduceOpType.parse(a["reduce_op"]).value
    return _func(_call(op, [a["dst"], a["src"], a["bias"], a["scale"]], call),
                 _call(red, [a["reduce_dst"], a["dst"], a["axes"], False], call))


def lower_reduce_negate(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    """dst = -(reduce_op(src) over axes)."""
    a = bound_args(call)
    red = ReduceOpType.parse(a["reduce_op"]).value
    return _func(_call(red, [a["dst"], a["src"], a["axes"], False], call),
                 _call("neg", [a["dst"], a["dst"], None, None], call))


def lower_compose_op(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    """The composed calls one after another (each then dispatched in turn). The composite's
    workspace and config are handed to the parts that set none of their own."""
    parts = [c.replace(workspace=c.workspace or call.workspace, config=c.config or call.config)
             for c in call.args if isinstance(c, TilePrimitiveCall)]
    return _func(*parts)
