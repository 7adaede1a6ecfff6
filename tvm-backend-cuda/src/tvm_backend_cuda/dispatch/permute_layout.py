"""``permute_layout`` on CUDA: register tiles that change layout within a warp.

Variant ``warp_xor_swizzle`` (priority 20): ``dst`` and ``src`` are the same logical tile in
registers (``local``), spread over the 32 lanes of a warp by two layouts (thread axis
``laneid``). For each register ``k`` of ``dst`` the lanes fall into groups by where their element
sits: register ``r`` of ``src`` in lane ``lane ^ x``. Each group costs one
``__shfl_xor_sync(src[r], x)`` (a plain register move when ``x`` is 0) and the lanes pick their
group's value (a select on a constant lane mask); up to 4 groups per register. The mapping is
worked out at build time from the two layouts; a permutation that needs more groups declines
and names the register.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from tvm.backend.sdk import DispatchContext, cast_to, fail, predicate, register_dispatch
from tvm.ir import (
    AllocBuffer,
    Buffer,
    BufferLoad,
    BufferStore,
    DataType,
    IntImm,
    Op,
    PrimFunc,
    Select,
    Stmt,
    TileLayout,
    TilePrimitiveCall,
    const,
    seq,
)

from ._tiles import declare, flat_view
from .common import dst_src

__all__ = ["lane_map", "register", "warp_xor_swizzle"]

SHFL_XOR = "tirx.cuda.__shfl_xor_sync"




def lane_map(layout: TileLayout, numel: int) -> dict[tuple[int, int], int]:
    """``(lane, register) -> logical element`` of a layout over ``laneid`` and ``m``."""
    iters = []
    for it in layout.shard:
        if not (isinstance(it.extent, IntImm) and isinstance(it.stride, IntImm)):
            fail("the layouts must be constant")
        if it.axis.name not in ("laneid", "m"):
            fail(f"layout axis {it.axis.name!r}: warp_xor_swizzle handles laneid and m")
        iters.append((it.extent.value, it.stride.value, it.axis.name))
    total = 1
    for e, _, _ in iters:
        total *= e
    if total != numel:
        fail(f"a layout covers {total} elements, the tile has {numel}")
    out: dict[tuple[int, int], int] = {}
    for digits in itertools.product(*(range(e) for e, _, _ in iters)):
        j, lane, reg = 0, 0, 0
        for d, (e, s, axis) in zip(digits, iters):
            j = j * e + d
            if axis == "laneid":
                lane += d * s
            else:
                reg += d * s
        if lane >= 32:
            fail("a layout puts elements past lane 31")
        out[(lane, reg)] = j
    return out


def _operands(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    dst, src = dst_src(call)
    for r in (dst, src):
        if r.buffer.scope != "local" or not isinstance(r.buffer.layout, TileLayout):
            return False, f"{r.buffer.name} is not a register tile with a layout"
        if not all(isinstance(x.min, IntImm) and x.min.value == 0 for x in r.region) or \
                [x.extent for x in r.region] != list(r.buffer.shape) and not all(
                    isinstance(x.extent, IntImm) and isinstance(s, IntImm)
                    and x.extent.value == s.value for x, s in zip(r.region, r.buffer.shape)):
            return False, f"{r.buffer.name}: permute_layout moves whole tiles"
    if sctx.scope_kind != "warp":
        return False, f"scope {sctx.scope_kind} (warp_xor_swizzle exchanges within a warp)"
    if not Op.exists(SHFL_XOR):
        return False, f"{SHFL_XOR} is not registered"
    return True, ""


def warp_xor_swizzle(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    dst, src = dst_src(call)
    dshape, sshape = dst.buffer.static_shape(), src.buffer.static_shape()
    if dshape is None or sshape is None:
        fail("constant shapes only")
    numel, snumel = math.prod(dshape), math.prod(sshape)
    if numel != snumel:
        fail(f"dst has {numel} elements, src {snumel}")
    dmap = lane_map(dst.buffer.layout, numel)  # type: ignore[arg-type]
    smap = lane_map(src.buffer.layout, numel)  # type: ignore[arg-type]
    where = {j: key for key, j in smap.items()}
    regs = sorted({r for _, r in dmap})
    plan: list[tuple[int, list[tuple[int, int, int]]]] = []  # dst reg, [(src reg, xor, lanes)]
    for reg in regs:
        groups: dict[tuple[int, int], int] = {}
        for lane in range(32):
            j = dmap.get((lane, reg))
            if j is None:
                continue
            slane, sreg = where[j]
            key = (sreg, lane ^ slane)
            groups[key] = groups.get(key, 0) | (1 << lane)
        if len(groups) > 4:
            fail(f"dst register {reg} gathers from {len(groups)} (register, lane xor) groups; "
                 "warp_xor_swizzle takes at most 4")
        plan.append((reg, [(sr, x, mask) for (sr, x), mask in groups.items()]))
    dview, sview = flat_view(dst.buffer, "regs"), flat_view(src.buffer, "regs")
    shfl = Op.get(SHFL_XOR)
    mask = IntImm("uint32", 0xFFFFFFFF)
    stmts: list[Stmt] = []
    needs_temp = dst.buffer.data is src.buffer.data
    if needs_temp:
        fail("dst and src are the same registers (permute into another buffer)")
    dt = src.buffer.dtype
    lane_id = sctx.thread_index()
    # every lane runs every shuffle (into a temporary), then picks its group's value: a
    # shuffle inside a C conditional would run in some lanes only
    tmp = Buffer("perm_tmp", [4], dt, scope="local")
    for reg, members in plan:
        value: Any = None
        for g, (sreg, x, lanes) in enumerate(members):
            v: Any = BufferLoad(sview, [const(sreg, "int32")])
            if x:
                if dt.bits != 32:
                    fail(f"shuffles move 32-bit values; the tile is {dt}")
                v = shfl(mask, v, const(x, "int32"), const(32, "int32"))
            if len(members) > 1:
                stmts.append(BufferStore(tmp, v, [const(g, "int32")]))
                v = BufferLoad(tmp, [const(g, "int32")])
            if value is None:
                value = v
            else:
                in_group = (IntImm("uint32", lanes) >> cast_to(lane_id, DataType("uint32"))) & \
                    IntImm("uint32", 1)
                value = Select(in_group != IntImm("uint32", 0), v, value)
        stmts.append(BufferStore(dview, cast_to(value, dst.buffer.dtype), [const(reg, "int32")]))
    stmts.insert(0, AllocBuffer(tmp))
    return PrimFunc([], declare([dview, sview], seq(stmts)))


def register() -> None:
    register_dispatch("permute_layout", "cuda", variant="warp_xor_swizzle", priority=20,
                      when=[predicate("operands", _operands)])(warp_xor_swizzle)
