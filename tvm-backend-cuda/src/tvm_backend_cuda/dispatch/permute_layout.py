"""``permute_layout`` on CUDA: register tiles that change layout within a warp.

Variant ``warp_xor_swizzle`` (priority 20): ``dst`` and ``src`` are the same logical tile in
registers (``local``), spread over the 32 lanes of a warp by two layouts (thread axis
``laneid``). For each register ``k`` of ``dst`` the lanes fall into groups by where their element
sits: register ``r`` of ``src`` in lane ``lane ^ x``. Each group costs one
``__shfl_xor_sync(src[r], x)`` (a plain register move when ``x`` is 0) and the lanes pick their
group's value (a select on a constant lane mask); up to 4 groups per register. The mapping is
worked out at build time from the two layouts; a permutation that needs more groups declines
and names the register.

Variant ``warp_xor_swizzle_mem`` (priority 20, the seed's warp_xor_swizzle): ``dst`` and ``src``
in memory (global or shared), one logical tile of ``32 * P`` 4-byte elements under two plain
TileLayouts (a transpose of scale factors between their TMA and tcgen05 orders). Lane ``l``
holds the elements ``slot * 32 + l`` (row-major logical index) in ``P`` registers: it reads them
all, ``__syncwarp()``, and writes them all. At step ``s`` it moves slot ``s ^ (l >> (5 - k))``,
with the smallest ``k`` (:func:`_choose_xor_k`) for which every step of both phases touches 32
distinct shared-memory banks (:func:`_bank_free`): a transposed side would otherwise have every
lane of a step hit a few banks.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from tvm.backend.sdk import (
    DispatchContext,
    cast_to,
    fail,
    fold_add,
    predicate,
    register_dispatch,
    unflatten,
)
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

from ._tiles import declare, flat_view, layout_offset
from .barriers import warp_barrier
from .common import const_extents, dst_src

__all__ = ["lane_map", "register", "warp_xor_swizzle", "warp_xor_swizzle_mem"]

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


def _offset(extent: list[int], strides: list[int], flat: int) -> int:
    """The offset (elements) of row-major logical index ``flat`` under ``strides``."""
    off = 0
    for e, st in zip(reversed(extent), reversed(strides)):
        off += (flat % e) * st
        flat //= e
    return off


def _check_bijection(extent: list[int], strides: list[int]) -> bool:
    """No two logical indices of ``extent`` share an offset under ``strides``."""
    n = math.prod(extent)
    return len({_offset(extent, strides, j) for j in range(n)}) == n


def _slot(s: int, lane: int, k: int) -> int:
    return s ^ (lane >> (5 - k)) if k else s


def _bank_free(extent: list[int], strides: list[int], bytes_per: int, P: int,  # noqa: N803
               k: int) -> bool:
    """Every step ``s < P`` of a phase, each of the 32 lanes moving slot ``_slot(s, lane, k)``,
    touches 32 distinct 4-byte banks (elements under 4 bytes share a bank with a neighbour:
    never free). Elements of 8 or 16 bytes are served a half or quarter warp at a time."""
    if (1 << k) > P:
        return False
    group = 32 if bytes_per <= 4 else max(1, 128 // bytes_per)
    words = max(1, bytes_per // 4)
    for s in range(P):
        for g0 in range(0, 32, group):
            banks: set[int] = set()
            for lane in range(g0, g0 + group):
                slot = _slot(s, lane, k)
                if slot >= P:
                    return False
                word = _offset(extent, strides, slot * 32 + lane) * bytes_per // 4
                for w in range(words):
                    if (word + w) % 32 in banks:
                        return False
                    banks.add((word + w) % 32)
    return True


def _choose_xor_k(extent: list[int], src: list[int], dst: list[int], bytes_per: int,
                  P: int) -> int | None:  # noqa: N803
    """The fewest lane bits ``k`` to XOR into the slot so that both phases are bank-free; None
    when no ``k`` (up to ``log2(P)``, at most 5) makes them so."""
    k = 0
    while (1 << k) <= P and k <= 5:
        if _bank_free(extent, src, bytes_per, P, k) and _bank_free(extent, dst, bytes_per, P, k):
            return k
        k += 1
    return None


def _strides(r: Any, extent: list[int]) -> list[int]:
    lay = r.buffer.layout
    if lay is None:
        out, acc = [], 1
        for e in reversed([int(x) for x in r.buffer.static_shape()]):
            out.append(acc)
            acc *= e
        return out[::-1]
    if not isinstance(lay, TileLayout):
        fail(f"{r.buffer.name}'s layout is a {type(lay).__name__}; warp_xor_swizzle_mem needs a "
             "plain TileLayout (no swizzle)")
    strides = []
    for d in range(len(extent)):
        one = [const(0, "int32")] * len(extent)
        one[d] = const(1, "int32")
        zero = layout_offset(r.buffer, [const(0, "int32")] * len(extent))
        off = layout_offset(r.buffer, one)
        if not (isinstance(off, IntImm) and isinstance(zero, IntImm)):
            fail(f"{r.buffer.name}'s layout is not constant")
        strides.append(off.value - zero.value)
    return strides


def _mem_operands(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    dst, src = dst_src(call)
    for r in (dst, src):
        if r.buffer.scope == "local":
            return False, f"{r.buffer.name} is in registers (warp_xor_swizzle_mem moves memory)"
    return True, ""


def warp_xor_swizzle_mem(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    dst, src = dst_src(call)
    if sctx.scope_kind != "warp":
        fail(f"permute_layout through registers runs at warp scope, not {sctx.scope_kind} "
             "(write Tx.warp.permute_layout)")
    if dst.buffer.dtype != src.buffer.dtype:
        fail(f"dtype mismatch: dst is {dst.buffer.dtype}, src {src.buffer.dtype} "
             "(permute_layout moves elements; cast with Tx.cast)")
    dext, sext = const_extents(dst, "warp_xor_swizzle_mem"), const_extents(src, "warp_xor_swizzle_mem")
    if [e for e in dext if e != 1] != [e for e in sext if e != 1]:
        fail(f"shape mismatch: dst region {dext}, src region {sext}")
    for r in (dst, src):
        if r.buffer.layout is not None and not isinstance(r.buffer.layout, TileLayout):
            fail(f"{r.buffer.name}'s layout is a {type(r.buffer.layout).__name__}; "
                 "warp_xor_swizzle_mem needs a plain TileLayout")
    numel = math.prod(dext)
    bits = dst.buffer.dtype.bits * dst.buffer.dtype.lanes
    if numel % 32:
        fail(f"the tile has {numel} elements, not a multiple of the warp's 32 lanes")
    P = numel // 32  # noqa: N806
    ext = [e for e in dext]
    k = _choose_xor_k(ext, _strides(src, sext), _strides(dst, dext), bits // 8, P)
    if k is None:
        fail(f"no lane XOR makes both sides bank-conflict free for {bits}-bit elements "
             "(it needs 4-byte elements)")
    lane = sctx.thread_index()
    reg = Buffer("perm_reg", [P], src.buffer.dtype, scope="local")
    views: list[Buffer] = []

    def at(r: Any, rext: list[int], s: int) -> tuple[Buffer, list[Any]]:
        slot = const(s, "int32") if not k else const(s, "int32") ^ (lane >> const(5 - k, "int32"))
        idx = unflatten(slot * const(32, "int32") + lane, [const(e, "int32") for e in rext])
        full = [fold_add(x.min, i) for x, i in zip(r.region, idx)]
        if r.buffer.layout is None:
            return r.buffer, full
        view = flat_view(r.buffer, "flat")
        views.append(view)
        return view, [layout_offset(r.buffer, full)]

    stmts: list[Stmt] = [AllocBuffer(reg)]
    for s in range(P):
        buf, idx = at(src, sext, s)
        stmts.append(BufferStore(reg, BufferLoad(buf, idx), [const(s, "int32")]))
    stmts.append(warp_barrier(sctx, "warp"))
    for s in range(P):
        buf, idx = at(dst, dext, s)
        stmts.append(BufferStore(buf, BufferLoad(reg, [const(s, "int32")]), idx))
    return PrimFunc([], declare(views, seq(stmts)))


def register() -> None:
    register_dispatch("permute_layout", "cuda", variant="warp_xor_swizzle", priority=20,
                      when=[predicate("operands", _operands)])(warp_xor_swizzle)
    register_dispatch("permute_layout", "cuda", variant="warp_xor_swizzle_mem", priority=20,
                      when=[predicate("operands", _mem_operands)])(warp_xor_swizzle_mem)
