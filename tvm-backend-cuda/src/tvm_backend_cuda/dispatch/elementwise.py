"""Element-wise tile primitives on CUDA (unary, binary, ``fma``, ``fill``/``memset``/``zero``).

| variant | priority | operands |
|---|---|---|
| ``reg`` | 10 | every buffer operand in registers (``local``): the destination spread over the scope's threads by its layout (or private to each thread); sources laid out like it, or private per-thread buffers broadcast over it (a ``(1,)`` scalar register), or scalars. Each thread computes its own elements: unrolled, the innermost register group a vector. No barrier. |
| ``smem`` | 10 | every buffer operand in shared memory: the scope's threads take vectors of up to 16 bytes round-robin (a laid-out buffer through its layout, per vector), then a barrier of the scope. |

16-bit floats are computed in float32 and rounded when stored (as the fallback does).

On sm_100+, ``reg`` computes float32 ``add``/``sub``/``mul``/``fma`` whose operands are all
registers laid out like dst two registers at a time (``{op}.rn.ftz.f32x2``, through
``T.ptx.<op>_packed_f32x2``) when each thread's innermost register run is even.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from tvm import ir
from tvm.backend.sdk import (
    BINARY_OPS,
    FLOAT_ONLY,
    UNARY_OPS,
    DispatchContext,
    MapOpType,
    Operand,
    apply_binary,
    apply_unary,
    bound_args,
    cast_to,
    compute_dtype,
    fail,
    fold_add,
    predicate,
    region_of,
    register_dispatch,
)

from ._tiles import (
    declare,
    flat_view,
    is_distributed,
    is_local,
    layout_offset,
    owned,
    pair_run,
    unflatten,
)
from .common import const_extents, is_cuda, match_scope, sm_version, thread_to_cta_scope
from .copy import _chunk_elems, _same_registers

__all__ = ["ELEMENTWISE_OPS", "register"]

FILL_OPS = ("fill", "memset", "zero")
ELEMENTWISE_OPS = (*UNARY_OPS, *BINARY_OPS, "fma", *FILL_OPS)

_SOURCES: dict[str, tuple[str, ...]] = {"fma": ("src1", "src2", "src3")}
for _u in UNARY_OPS:
    _SOURCES[_u] = ("src", "scale", "bias")
for _b in BINARY_OPS:
    _SOURCES[_b] = ("src1", "src2")
for _f in FILL_OPS:
    _SOURCES[_f] = ("value",)


def _args(call: ir.TilePrimitiveCall) -> tuple[ir.BufferRegion, dict[str, Any]]:
    a = bound_args(call)
    dst = a["dst"]
    if not isinstance(dst, (ir.Buffer, ir.BufferRegion)):
        fail("dst must be a buffer or buffer region")
    srcs = {n: a.get(n, 0 if n == "value" else None) for n in _SOURCES[call.op_name]}
    return region_of(dst), {n: v for n, v in srcs.items() if v is not None}


def _buffer_operands(call: ir.TilePrimitiveCall) -> list[ir.BufferRegion]:
    dst, srcs = _args(call)
    return [dst] + [region_of(v) for v in srcs.values()
                    if isinstance(v, (ir.Buffer, ir.BufferRegion))]






def _all_local(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    for r in _buffer_operands(call):
        if not is_local(r):
            return False, f"{r.buffer.name} is in '{r.buffer.scope}' memory (reg needs all local)"
    return True, ""


def _all_shared(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    for r in _buffer_operands(call):
        if not match_scope(r.buffer.scope, "shared*"):
            return False, f"{r.buffer.name} is in '{r.buffer.scope}' memory (smem needs all shared)"
    return True, ""


def _value_fn(call: ir.TilePrimitiveCall, dst: ir.BufferRegion, ops: dict[str, Operand],
              ) -> Callable[[dict[str, ir.PrimExpr]], ir.PrimExpr]:
    """The element's value from its operands' values."""
    name = call.op_name
    if name in FILL_OPS:
        return lambda v: v["value"]
    dts = [dst.buffer.dtype, *(o.dtype for o in ops.values()
                                if not o.is_scalar or o.dtype.is_float)]
    if name == "fma":
        cdt = compute_dtype(dts)
        return lambda v: cast_to(v["src1"], cdt) * cast_to(v["src2"], cdt) + cast_to(v["src3"],
                                                                                      cdt)
    if name in BINARY_OPS:
        cdt = compute_dtype(dts)
        return lambda v: apply_binary(name, cast_to(v["src1"], cdt), cast_to(v["src2"], cdt))
    cdt = compute_dtype(dts, needs_float=MapOpType.parse(name).value in FLOAT_ONLY)

    def unary(v: dict[str, ir.PrimExpr]) -> ir.PrimExpr:
        x = cast_to(v["src"], cdt)
        if "scale" in v:
            x = x * cast_to(v["scale"], cdt)
        if "bias" in v:
            x = x + cast_to(v["bias"], cdt)
        return apply_unary(name, x)

    return unary


def ew_reg(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    dst, srcs = _args(call)
    packed = _packed_f32x2(call, dst, srcs, sctx)
    if packed is not None:
        return packed
    own = owned(dst, sctx)
    dview = flat_view(dst.buffer, "regs")
    views = [dview]
    at = fold_add(own.m, own.lane)
    exts = [r.extent for r in dst.region]
    rel = unflatten(own.r, exts)
    if own.lanes > 1:
        rel[-1] = fold_add(rel[-1], own.lane)
    ops = {n: Operand(v, n).bind(exts) for n, v in srcs.items()}
    values: dict[str, ir.PrimExpr] = {}
    for n, o in ops.items():
        if o.region is not None and is_distributed(o.region):
            if not _same_registers(dst, o.region, sctx):
                fail(f"{n} is spread over the threads differently from dst")
            view = flat_view(o.region.buffer, "regs")
            views.append(view)
            values[n] = ir.BufferLoad(view, [at])
        elif o.region is not None and is_distributed(dst) and _full_size(o.region, exts):
            fail(f"{n} is a per-thread buffer of dst's full size; dst is spread over threads")
        else:
            values[n] = o.load(rel)
    value = _value_fn(call, dst, ops)(values)
    body = ir.BufferStore(dview, cast_to(value, dst.buffer.dtype), [at])
    return ir.PrimFunc([], declare(views, own.wrap(body)))


#: the ops with a packed float32 pair instruction (sm_100+): T.ptx.<op>_packed_f32x2
PACKED_F32X2 = ("add", "sub", "mul", "fma")


def _packed_f32x2(call: ir.TilePrimitiveCall, dst: ir.BufferRegion, srcs: dict[str, Any],
                  sctx: DispatchContext) -> ir.PrimFunc | None:
    """``add``/``sub``/``mul``/``fma`` of float32 registers on sm_100+: each thread's registers
    two at a time through ``{op}.rn.ftz.f32x2`` (half the instructions); None where it does not
    apply (another op or dtype, an older arch, a scalar or differently laid out operand, an odd
    register run)."""
    name = call.op_name
    arch = sm_version(sctx.target)
    if name not in PACKED_F32X2 or arch is None or arch < 100 or str(dst.buffer.dtype) != "float32":
        return None
    regions = []
    for v in srcs.values():
        if not isinstance(v, (ir.Buffer, ir.BufferRegion)):
            return None
        r = region_of(v)
        if str(r.buffer.dtype) != "float32" or not is_local(r) or not _same_registers(dst, r, sctx):
            return None
        regions.append(r)
    own = owned(dst, sctx, max_vec=1 << 16)
    pairs = pair_run(own)
    if pairs is None:
        return None
    views = [flat_view(dst.buffer, "regs")] + [flat_view(r.buffer, "regs") for r in regions]
    at = fold_add(own.m, pairs[0] * 2)
    op = ir.Op.get(f"tirx.ptx.{name}_packed_f32x2")
    body = ir.Evaluate(op(*(ir.BufferLoad(v, [at]) for v in views)))
    return ir.PrimFunc([], declare(views, replace(own, vec=pairs).wrap(body, vectorize=False)))


def _full_size(region: ir.BufferRegion, exts: list[ir.PrimExpr]) -> bool:
    n = 1
    for r in region.region:
        if not isinstance(r.extent, ir.IntImm):
            return False
        n *= r.extent.value
    return n > 1


def ew_smem(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    dst, srcs = _args(call)
    exts = const_extents(dst, "smem")
    total = math.prod(exts)
    w = _chunk_elems(dst.buffer.dtype, exts[-1], _buffer_operands(call))
    n = sctx.thread_extent()
    if not isinstance(n, ir.IntImm):
        fail("smem needs a constant thread count")
    chunks = total // w
    trips = -(-chunks // n.value)
    k = ir.Var("ew_k", "int32")
    lane = ir.Var("ew_v", "int32")
    c = sctx.thread_index() if trips == 1 else k * n.value + sctx.thread_index()
    start = unflatten(c * w, [ir.const(e, "int32") for e in exts])
    rel = list(start)
    rel[-1] = fold_add(rel[-1], lane)
    views: list[ir.Buffer] = []
    ops = {n_: Operand(v, n_).bind(dst.shape) for n_, v in srcs.items()}
    values = {n_: _load_laid_out(o, rel, start, lane, views) for n_, o in ops.items()}
    value = _value_fn(call, dst, ops)(values)
    dbuf, didx = _addr(dst, start, lane, views)
    body: ir.Stmt = ir.BufferStore(dbuf, cast_to(value, dst.buffer.dtype), didx)
    body = ir.For(lane, ir.const(0, "int32"), ir.const(w, "int32"),
                  ir.ForKind.VECTORIZED if w > 1 else ir.ForKind.SERIAL, body)
    if chunks % n.value:
        body = ir.IfThenElse(c < chunks, body)
    if trips > 1:
        body = ir.For(k, ir.const(0, "int32"), ir.const(trips, "int32"),
                      ir.ForKind.UNROLLED if trips <= 16 else ir.ForKind.SERIAL, body)
    stmts = [declare(views, body)]
    barrier = sctx.barrier()
    if barrier is not None:
        stmts.append(barrier)
    return ir.PrimFunc([], ir.seq(stmts))


def _addr(region: ir.BufferRegion, start: list[ir.PrimExpr], lane: ir.PrimExpr,
          views: list[ir.Buffer]) -> tuple[ir.Buffer, list[ir.PrimExpr]]:
    idx = [fold_add(r.min, i) for r, i in zip(region.region, start)]
    if region.buffer.layout is None:
        idx[-1] = fold_add(idx[-1], lane)
        return region.buffer, idx
    view = flat_view(region.buffer, "flat")
    views.append(view)
    return view, [fold_add(layout_offset(region.buffer, idx), lane)]


def _load_laid_out(o: Operand, rel: list[ir.PrimExpr], start: list[ir.PrimExpr], lane: ir.PrimExpr,
                   views: list[ir.Buffer]) -> ir.PrimExpr:
    """A source's element through its layout, read at its broadcast indices: a dimension the
    source has once (``(32, 1, 4)`` against ``(32, 5, 4)``) is read at its start for every
    destination index, and the vector lane moves along the source only where its innermost
    dimension is the destination's."""
    if o.region is None or o.region.buffer.layout is None:
        return o.load(rel)
    buf = o.region.buffer
    view = flat_view(buf, "flat")
    views.append(view)
    if o.follows(len(start) - 1):
        return ir.BufferLoad(view, [fold_add(layout_offset(buf, o.indices(start)), lane)])
    return ir.BufferLoad(view, [layout_offset(buf, o.indices(rel))])


def register() -> None:
    base = [predicate("target", is_cuda), predicate("scope", thread_to_cta_scope)]
    for name in ELEMENTWISE_OPS:
        register_dispatch(name, "cuda", variant="reg", priority=10,
                          when=[*base, predicate("operands", _all_local)])(ew_reg)
        register_dispatch(name, "cuda", variant="smem", priority=10,
                          when=[*base, predicate("operands", _all_shared)])(ew_smem)
