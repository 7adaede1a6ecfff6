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

The check runs on constant extents (numpy, tens of milliseconds for a 128x256 tile) and on
every start the shared region can have: its own, or, where it starts at a variable
(``As[stage, 0:64, 0:32]``), each start that keeps it inside the buffer (the address is the
layout's expression of the variable, so one instruction sequence must suit them all).
Anything it cannot prove declines with the first element that breaks the pattern, and the
``reg`` variant takes the copy.
"""

from __future__ import annotations

import itertools
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


def _digits(flat: Any, iters: list[tuple[int, int, str]]) -> dict[str, Any]:
    """The coordinate on each axis of the logical elements ``flat`` (a numpy array)."""
    coords: dict[str, Any] = {}
    rest = flat
    for ext, stride, axis in reversed(iters):
        coords[axis] = coords.get(axis, 0) + (rest % ext) * stride
        rest = rest // ext
    return coords


def _flat(pos: Any, mins: list[int], exts: list[int], shape: list[int]) -> Any:
    """Row-major buffer index of the elements at row-major positions ``pos`` of a region."""
    flat = pos * 0
    rest = pos
    weight = 1
    for lo, ext, dim in zip(reversed(mins), reversed(exts), reversed(shape)):
        flat = flat + (lo + rest % ext) * weight
        rest = rest // ext
        weight *= dim
    return flat


def _thread_values(t: Any, scope: str) -> dict[str, Any]:
    """The value of each thread axis for threads ``t`` of the scope (``_tiles`` semantics)."""
    vals = {"tid": t, "laneid": t % _WARP, "warpid": t // _WARP,
            "wid_in_wg": (t // _WARP) % 4, "wgid": t // 128}
    if scope in ("warpgroup", "cta"):
        vals["tid_in_wg"] = t % 128
    if scope == "cta":
        vals["tx"] = t
    return vals


def _smem_offsets(buf: ir.Buffer, flat: Any) -> Any:
    """Shared offsets (swizzled) of the row-major buffer indices ``flat``."""
    lay = buf.layout
    if lay is None:
        return flat
    tile = lay.layout_B if isinstance(lay, ir.ComposeLayout) else lay
    if not isinstance(tile, ir.TileLayout):
        raise _NoPlan(f"the layout of {buf.name} is a {type(lay).__name__}")
    iters = _iters(tile, buf.name)
    if any(a != "m" for _, _, a in iters):
        raise _NoPlan(f"the layout of {buf.name} has thread axes")
    m = _digits(flat, iters).get("m", flat * 0)
    if isinstance(lay, ir.ComposeLayout):
        sw = lay.layout_A
        if sw.swizzle_len:
            mask = (1 << sw.swizzle_len) - 1
            m = m ^ (((m >> (sw.per_element + sw.atom_len)) & mask) << sw.per_element)
    return m


def _consts(region: ir.BufferRegion, what: str) -> tuple[list[int], list[int]]:
    return ([_ints(r.min, f"the start of the {what} region") for r in region.region],
            [_ints(r.extent, f"the extent of the {what} region") for r in region.region])


def _analyse(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> LdStPlan:
    import numpy as np

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
    tids = np.arange(threads, dtype=np.int64)
    tvals = _thread_values(tids, sctx.scope_kind)
    missing = [a for a in t_axes if a not in tvals]
    if missing:
        raise _NoPlan(f"thread axis {missing[0]!r} of {reg.buffer.name}'s layout is not known "
                      f"inside a {sctx.scope_kind}-scope copy")
    r_shape = [_ints(s, f"the shape of {reg.buffer.name}") for s in reg.buffer.shape]
    s_shape = [_ints(s, f"the shape of {smem.buffer.name}") for s in smem.buffer.shape]
    r_min, r_ext = _consts(reg, "register")
    s_ext = [_ints(r.extent, "the extent of the shared region") for r in smem.region]
    s_starts = _starts(smem, s_shape, s_ext)
    total = math.prod(r_ext)
    if total != math.prod(s_ext):
        raise _NoPlan("the two regions hold different numbers of elements")
    base = smem.buffer.elem_offset
    base_off = 0 if base is None else _ints(base, f"the element offset of {smem.buffer.name}")
    pos = np.arange(total, dtype=np.int64)
    r_flat = _flat(pos, r_min, r_ext, r_shape)
    coords = _digits(r_flat, r_iters)
    # the thread holding each element: its thread-axis values, as one mixed-radix key
    zero = pos * 0
    tkey, ekey, radix = tids * 0, zero, 1
    for a in t_axes:
        c = coords.get(a, zero)
        tkey, ekey = tkey + tvals[a] * radix, ekey + c * radix
        radix *= int(max(tvals[a].max(), c.max())) + 1
    order = np.argsort(tkey, kind="stable")
    sorted_keys = tkey[order]
    dup = np.nonzero(sorted_keys[1:] == sorted_keys[:-1])[0]
    if dup.size:
        t0, t1 = sorted(int(x) for x in order[dup[0]:dup[0] + 2])
        raise _NoPlan(f"threads {t0} and {t1} hold the same registers of {reg.buffer.name} "
                      "(its layout does not cover the scope's threads)")
    at = np.minimum(np.searchsorted(sorted_keys, ekey), threads - 1)
    outside = np.nonzero(sorted_keys[at] != ekey)[0]
    if outside.size:
        raise _NoPlan(f"element {int(r_flat[outside[0]])} of {reg.buffer.name} (row-major) is "
                      f"on a thread outside the {sctx.scope_kind}")
    t = order[at]
    m = coords.get("m", zero)
    if int(m.min()) < 0:
        raise _NoPlan(f"{reg.buffer.name}'s layout has a negative register offset")
    span = int(m.max()) + 1
    slot = t * span + m
    if np.unique(slot).size != total:
        raise _NoPlan(f"two elements of {reg.buffer.name} share a register")
    # the digit-by-digit inverse that the emitted addresses use must give each element back
    vals = _thread_values(t, sctx.scope_kind)
    vals["m"] = m
    inv = zero
    for (e, st, a), w in zip(r_iters, _weights(r_iters)):
        inv = inv + (vals[a] // st) % e * w
    bad = np.nonzero(inv != r_flat)[0]
    if bad.size:
        k = bad[0]
        raise _NoPlan(f"{reg.buffer.name}'s layout is not a plain mixed radix (register "
                      f"{int(m[k])} of thread {int(t[k])})")
    held = np.zeros((threads, span), dtype=bool)
    held[t, m] = True
    differ = np.nonzero((held != held[0]).any(axis=1))[0]
    if differ.size:
        raise _NoPlan(f"threads 0 and {int(differ[0])} hold different register offsets")
    ms = [int(x) for x in np.nonzero(held[0])[0]]
    if any(x ^ 1 >= span or not held[0, x ^ 1] for x in ms):
        raise _NoPlan("the registers do not pair up into 32-bit registers (offsets 2p, 2p+1)")
    pairs = sorted({x // 2 for x in ms})
    why = ""
    for trans in (False, True):
        # every start the shared region can have (one, unless it starts at a variable)
        for s_min in s_starts:
            regs = np.full((threads, span), -1, dtype=np.int64)
            regs[t, m] = base_off + _smem_offsets(smem.buffer, _flat(pos, s_min, s_ext, s_shape))
            bad_why = _check(regs, pairs, threads, trans)
            if bad_why is not None:
                if len(s_starts) > 1:
                    bad_why += f" (the shared region starting at {s_min})"
                why = why or bad_why
                break
        else:
            return LdStPlan(trans, pairs, load)
    raise _NoPlan(f"the registers are not 8x8 ldmatrix fragments of shared memory: {why}")


#: at most this many starts of a shared region at a variable are checked
MAX_STARTS = 64


def _starts(region: ir.BufferRegion, shape: list[int], exts: list[int]) -> list[list[int]]:
    """The starts the region can have: its own if constant; where a start is a variable
    (``As[stage, 0:64, 0:32]``), every start that keeps the region inside the buffer."""
    choices: list[list[int]] = []
    for r, dim, ext in zip(region.region, shape, exts):
        if isinstance(r.min, ir.IntImm):
            choices.append([r.min.value])
        else:
            choices.append(list(range(dim - ext + 1)))
    count = math.prod(len(c) for c in choices)
    if count > MAX_STARTS:
        raise _NoPlan(f"the shared region of {region.buffer.name} starts at a variable with "
                      f"{count} possible values (at most {MAX_STARTS} are checked)")
    return [list(c) for c in itertools.product(*choices)]


def _weights(iters: list[tuple[int, int, str]]) -> list[int]:
    out, w = [], 1
    for e, _, _ in reversed(iters):
        out.append(w)
        w *= e
    return list(reversed(out))


def _check(regs: Any, pairs: list[int], threads: int, trans: bool) -> str | None:
    """None when every pair of every warp is one 8x8 matrix (``.trans`` or not), else why.
    ``regs[t, m]``: the shared offset of thread ``t``'s register ``m``."""
    import numpy as np

    warps = regs.reshape(threads // _WARP, _WARP, -1)
    lanes = np.arange(_WARP)[:, None]
    p2 = 2 * np.asarray(pairs)[None, :]
    for k in (0, 1):
        got = warps[:, lanes, p2 + k]
        if trans:
            row = 2 * (lanes % 4) + k
            start = warps[:, row // 2, p2 + row % 2]
            want = start + lanes // 4
        else:
            start = warps[:, 4 * (lanes // 4), p2]
            want = start + 2 * (lanes % 4) + k
        bad = np.argwhere(start % 8 != 0)
        if bad.size:
            w, _, j = (int(x) for x in bad[0])
            return (f"a row of register pair {pairs[j]} (warp {w}) starts at shared offset "
                    f"{int(start[tuple(bad[0])])}, not 16-byte aligned")
        bad = np.argwhere(got != want)
        if bad.size:
            w, lane, j = (int(x) for x in bad[0])
            return (f"thread {w * _WARP + lane} register {2 * pairs[j] + k} is at shared offset "
                    f"{int(got[w, lane, j])}, the pattern needs {int(want[w, lane, j])}")
    return None


def ldst_plan(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> LdStPlan | str:
    """The plan for ``call``, or why ldmatrix/stmatrix cannot do it (kept on ``sctx``, which
    the predicate and the variant share, so that the check runs once)."""
    cached = sctx.shared_state.get("ldstmatrix")
    if cached is not None and cached[0] is call:
        return cached[1]
    try:
        plan: LdStPlan | str = _analyse(call, sctx)
    except _NoPlan as err:
        plan = str(err)
    sctx.shared_state["ldstmatrix"] = (call, plan)
    return plan


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
