"""``copy`` between shared memory and registers spread over warps, by ``ldmatrix`` /
``stmatrix`` (16-bit elements; ``stmatrix`` from sm_90).

The variant does not look for named layouts: it works out, element by element, which thread
and which register holds each element of the copy (from the register layout's thread and
memory iterators) and where it is in shared memory (the shared layout, swizzle included), then
checks whether the registers form 8x8 matrices as the instructions deliver them:

- each thread's registers pair up (offsets ``2p``, ``2p + 1``: one 32-bit register);
- for one pair ``p`` and every warp, lane ``l`` holds, without ``.trans``, elements
  ``2 (l % 4)`` and ``+1`` of a 16-byte aligned row of 8 contiguous elements that lane
  ``4 (l // 4)`` starts; with ``.trans``, the ``l // 4``-th element of the 16-byte aligned rows
  ``2 (l % 4)`` and ``+1`` (rows ``i`` starting where lane ``i // 2`` holds its element
  ``i % 2``).

Pairs that pass are issued four at a time (``.x4``; ``.x2``/``.x1`` for the rest). Lane ``L``
gives the address of row ``L % 8`` of matrix ``L // 8``: the shared address of the element
that the lane named above holds, written from the layouts (so a swizzle is applied in the
address), by inverting the register layout digit by digit. That inversion is checked on every
element before the variant accepts.

The check runs on constant extents and constant region starts (a few thousand elements at
most in practice); anything it cannot prove declines with the first element that breaks the
pattern, and the ``reg`` variant takes the copy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tvm import ir
from tvm.backend.sdk import DispatchContext, fail, fold_add, fold_mul, unflatten

from .. import op as _op
from ._tiles import _thread_axis_value, flat_view, is_local, layout_offset
from .common import dst_src, match_scope, sm_version_ok

__all__ = ["LdStPlan", "ldst_plan", "ldstmatrix_operands", "copy_ldstmatrix"]

_WARP = 32
#: thread axes whose value depends on the lane, and how (see ``_thread_values``)
_LANE_AXES = ("laneid", "tid", "tid_in_wg", "tx")


@dataclass
class LdStPlan:
    """What :func:`copy_ldstmatrix` emits: the register pairs in issue order and ``.trans``."""

    trans: bool
    pairs: list[int]
    load: bool


class _NoPlan(Exception):
    pass


def _ints(e: Any, what: str) -> int:
    if not isinstance(e, ir.IntImm):
        raise _NoPlan(f"{what} is not a constant ({e})")
    return e.value


def _iters(layout: ir.TileLayout, name: str) -> list[tuple[int, int, str]]:
    if layout.replica:
        raise _NoPlan(f"the layout of {name} replicates elements over threads")
    return [(_ints(it.extent, f"an extent of {name}'s layout"),
             _ints(it.stride, f"a stride of {name}'s layout"), it.axis.name)
            for it in layout.shard]


def _digits(flat: int, iters: list[tuple[int, int, str]]) -> dict[str, int]:
    coords: dict[str, int] = {}
    rest = flat
    for ext, stride, axis in reversed(iters):
        coords[axis] = coords.get(axis, 0) + (rest % ext) * stride
        rest //= ext
    return coords


def _row_major(idx: list[int], shape: list[int]) -> int:
    flat = 0
    for i, e in zip(idx, shape):
        flat = flat * e + i
    return flat


def _unrow(flat: int, shape: list[int]) -> list[int]:
    out = []
    for e in reversed(shape):
        out.append(flat % e)
        flat //= e
    return list(reversed(out))


def _thread_values(t: int, scope: str) -> dict[str, int]:
    """The value of each thread axis for thread ``t`` of the scope (``_tiles`` semantics)."""
    vals = {"tid": t, "laneid": t % _WARP, "warpid": t // _WARP,
            "wid_in_wg": (t // _WARP) % 4, "wgid": t // 128}
    if scope in ("warpgroup", "cta"):
        vals["tid_in_wg"] = t % 128
    if scope == "cta":
        vals["tx"] = t
    return vals


def _smem_offset(buf: ir.Buffer, idx: list[int], shape: list[int]) -> int:
    lay = buf.layout
    if lay is None:
        return _row_major(idx, shape)
    tile = lay.layout_B if isinstance(lay, ir.ComposeLayout) else lay
    if not isinstance(tile, ir.TileLayout):
        raise _NoPlan(f"the layout of {buf.name} is a {type(lay).__name__}")
    iters = _iters(tile, buf.name)
    if any(a != "m" for _, _, a in iters):
        raise _NoPlan(f"the layout of {buf.name} has thread axes")
    m = _digits(_row_major(idx, shape), iters).get("m", 0)
    if isinstance(lay, ir.ComposeLayout):
        m = int(lay.layout_A.swizzle(m))
    return m


def _consts(region: ir.BufferRegion, what: str) -> tuple[list[int], list[int]]:
    return ([_ints(r.min, f"the start of the {what} region") for r in region.region],
            [_ints(r.extent, f"the extent of the {what} region") for r in region.region])


def _analyse(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> LdStPlan:
    dst, src = dst_src(call)
    load = is_local(dst)
    reg, smem = (dst, src) if load else (src, dst)
    if not (is_local(reg) and match_scope(smem.buffer.scope, "shared*")):
        raise _NoPlan("ldstmatrix moves shared <-> registers")
    if reg.buffer.dtype.bits != 16 or smem.buffer.dtype != reg.buffer.dtype:
        raise _NoPlan("ldstmatrix moves 16-bit elements without converting")
    ok, why = sm_version_ok(sctx, 75 if load else 90)
    if not ok:
        raise _NoPlan(f"{'ldmatrix' if load else 'stmatrix'} {why}")
    n = sctx.thread_extent()
    if not isinstance(n, ir.IntImm) or n.value % _WARP:
        raise _NoPlan(f"the scope runs {n} threads; ldmatrix/stmatrix need whole warps")
    threads = n.value
    lay = reg.buffer.layout
    if not isinstance(lay, ir.TileLayout) or not any(it.axis.is_thread for it in lay.shard):
        raise _NoPlan(f"{reg.buffer.name} is not spread over the threads by its layout (a "
                      "TileLayout with thread axes)")
    r_iters = _iters(lay, reg.buffer.name)
    t_axes = sorted({a for _, _, a in r_iters if a != "m"})
    owners: dict[tuple[int, ...], int] = {}
    for t in range(threads):
        vals = _thread_values(t, sctx.scope_kind)
        missing = [a for a in t_axes if a not in vals]
        if missing:
            raise _NoPlan(f"thread axis {missing[0]!r} of {reg.buffer.name}'s layout is not "
                          f"known inside a {sctx.scope_kind}-scope copy")
        key = tuple(vals[a] for a in t_axes)
        if key in owners:
            raise _NoPlan(f"threads {owners[key]} and {t} hold the same registers of "
                          f"{reg.buffer.name} (its layout does not cover the scope's threads)")
        owners[key] = t
    r_shape = [_ints(s, f"the shape of {reg.buffer.name}") for s in reg.buffer.shape]
    s_shape = [_ints(s, f"the shape of {smem.buffer.name}") for s in smem.buffer.shape]
    r_min, r_ext = _consts(reg, "register")
    s_min, s_ext = _consts(smem, "shared")
    total = math.prod(r_ext)
    if total != math.prod(s_ext):
        raise _NoPlan("the two regions hold different numbers of elements")
    base = smem.buffer.elem_offset
    base_off = 0 if base is None else _ints(base, f"the element offset of {smem.buffer.name}")
    regs: dict[int, dict[int, int]] = {t: {} for t in range(threads)}
    for i in range(total):
        r_idx = [lo + d for lo, d in zip(r_min, _unrow(i, r_ext))]
        flat = _row_major(r_idx, r_shape)
        coords = _digits(flat, r_iters)
        key = tuple(coords.get(a, 0) for a in t_axes)
        owner = owners.get(key)
        if owner is None:
            raise _NoPlan(f"element {r_idx} of {reg.buffer.name} is on a thread outside the "
                          f"{sctx.scope_kind}")
        t = owner
        m = coords.get("m", 0)
        if m in regs[t]:
            raise _NoPlan(f"two elements share register {m} of thread {t}")
        # the digit-by-digit inverse that the emitted addresses use must give this element
        if _invert(t, m, r_iters, sctx.scope_kind) != flat:
            raise _NoPlan(f"{reg.buffer.name}'s layout is not a plain mixed radix (register "
                          f"{m} of thread {t})")
        s_idx = [lo + d for lo, d in zip(s_min, _unrow(i, s_ext))]
        regs[t][m] = base_off + _smem_offset(smem.buffer, s_idx, s_shape)
    ms = set(regs[0])
    for t in range(threads):
        if set(regs[t]) != ms:
            raise _NoPlan(f"threads 0 and {t} hold different register offsets")
    if not ms or any(m ^ 1 not in ms for m in ms):
        raise _NoPlan("the registers do not pair up into 32-bit registers (offsets 2p, 2p+1)")
    pairs = sorted({m // 2 for m in ms})
    why = ""
    for trans in (False, True):
        bad = _check(regs, pairs, threads, trans)
        if bad is None:
            return LdStPlan(trans, pairs, load)
        why = why or bad
    raise _NoPlan(f"the registers are not 8x8 ldmatrix fragments of shared memory: {why}")


def _invert(t: int, m: int, iters: list[tuple[int, int, str]], scope: str) -> int:
    vals = _thread_values(t, scope)
    vals["m"] = m
    weights = _weights(iters)
    return sum((vals[a] // s) % e * w for (e, s, a), w in zip(iters, weights))


def _weights(iters: list[tuple[int, int, str]]) -> list[int]:
    out, w = [], 1
    for e, _, _ in reversed(iters):
        out.append(w)
        w *= e
    return list(reversed(out))


def _check(regs: dict[int, dict[int, int]], pairs: list[int], threads: int,
           trans: bool) -> str | None:
    """None when every pair of every warp is one 8x8 matrix (``.trans`` or not), else why."""
    for w0 in range(0, threads, _WARP):
        for p in pairs:
            for lane in range(_WARP):
                for k in (0, 1):
                    got = regs[w0 + lane][2 * p + k]
                    if trans:
                        row = 2 * (lane % 4) + k
                        start = regs[w0 + row // 2][2 * p + row % 2]
                        want = start + lane // 4
                    else:
                        start = regs[w0 + 4 * (lane // 4)][2 * p]
                        want = start + 2 * (lane % 4) + k
                    if start % 8:
                        return (f"a row of register pair {p} starts at shared offset {start}, "
                                "not 16-byte aligned")
                    if got != want:
                        return (f"thread {w0 + lane} register {2 * p + k} is at shared offset "
                                f"{got}, the pattern needs {want}")
    return None


def ldst_plan(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> LdStPlan | str:
    """The plan for ``call``, or why ldmatrix/stmatrix cannot do it."""
    try:
        return _analyse(call, sctx)
    except _NoPlan as err:
        return str(err)


def ldstmatrix_operands(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    plan = ldst_plan(call, sctx)
    return (True, "") if isinstance(plan, LdStPlan) else (False, plan)


def _provider_values(lane_expr: ir.PrimExpr, sctx: DispatchContext) -> dict[str, ir.PrimExpr]:
    """Thread axis values of the lane ``lane_expr`` of the calling thread's warp."""
    own_lane = sctx.thread_index("warp")
    vals: dict[str, ir.PrimExpr] = {}
    for axis in ("tid", "laneid", "warpid", "wid_in_wg", "wgid", "tid_in_wg", "tx"):
        if axis == "laneid":
            vals[axis] = lane_expr
        elif axis in _LANE_AXES:
            vals[axis] = fold_add(_thread_axis_value(axis, sctx) - own_lane, lane_expr)
        else:
            vals[axis] = _thread_axis_value(axis, sctx)
    return vals


def _select(index: ir.PrimExpr, values: list[int]) -> ir.PrimExpr:
    """``values[index]`` for a small list: ``v0 + index * d`` when evenly spaced."""
    if len(values) == 1:
        return ir.const(values[0], "int32")
    d = values[1] - values[0]
    if all(b - a == d for a, b in zip(values, values[1:])):
        return fold_add(ir.const(values[0], "int32"), fold_mul(index, ir.const(d, "int32")))
    out: ir.PrimExpr = ir.const(values[-1], "int32")
    for k in range(len(values) - 2, -1, -1):
        out = ir.Select(index == k, ir.const(values[k], "int32"), out)
    return out


def copy_ldstmatrix(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    plan = ldst_plan(call, sctx)
    if not isinstance(plan, LdStPlan):
        fail(plan)
    dst, src = dst_src(call)
    reg, smem = (dst, src) if plan.load else (src, dst)
    lay = reg.buffer.layout
    assert isinstance(lay, ir.TileLayout)
    r_iters = _iters(lay, reg.buffer.name)
    weights = _weights(r_iters)
    view = flat_view(reg.buffer, "regs")
    views = [view]
    sview = None if smem.buffer.layout is None else flat_view(smem.buffer, "flat")
    if sview is not None:
        views.append(sview)
    lane = sctx.thread_index("warp")
    row = lane % 8
    stmts: list[ir.Stmt] = []
    pos = 0
    while pos < len(plan.pairs):
        left = len(plan.pairs) - pos
        num = 4 if left >= 4 else (2 if left >= 2 else 1)
        chunk = plan.pairs[pos:pos + num]
        which = (lane // 8) % num if num > 1 else ir.const(0, "int32")
        pair = _select(which, chunk)
        if plan.trans:
            provider, m = row // 2, fold_add(fold_mul(pair, ir.const(2, "int32")), row % 2)
        else:
            provider, m = fold_mul(row, ir.const(4, "int32")), fold_mul(pair, ir.const(2, "int32"))
        vals = _provider_values(provider, sctx)
        vals["m"] = m
        flat: ir.PrimExpr = ir.const(0, "int32")
        for (e, s, a), w in zip(r_iters, weights):
            v = vals[a]
            digit = v if s == 1 else v // s
            flat = fold_add(flat, fold_mul(digit % e, ir.const(w, "int32")))
        r_idx = unflatten(flat, list(reg.buffer.shape))
        r_pos = [i - x.min for i, x in zip(r_idx, reg.region)]
        i_flat: ir.PrimExpr = ir.const(0, "int32")
        for p, x in zip(r_pos, reg.region):
            i_flat = fold_add(fold_mul(i_flat, x.extent), p)
        s_idx = [fold_add(x.min, d)
                 for x, d in zip(smem.region, unflatten(i_flat, [x.extent for x in smem.region]))]
        addr = (ir.BufferLoad(smem.buffer, s_idx) if sview is None
                else ir.BufferLoad(sview, [layout_offset(smem.buffer, s_idx)]))
        regs = [ir.BufferLoad(view, [ir.const(2 * p, "int32")]) for p in chunk]
        build = _op.ptx_ldmatrix if plan.load else _op.ptx_stmatrix
        stmts.append(ir.Evaluate(build(plan.trans, num, ".b16", addr, *regs)))
        pos += num
    body = ir.seq([*(ir.DeclBuffer(v) for v in views), ir.seq(stmts)])
    return ir.PrimFunc([], body)
