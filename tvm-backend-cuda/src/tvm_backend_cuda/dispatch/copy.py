"""``copy`` (and ``cast``) on CUDA: registers, global <-> shared in 16-byte pieces, and
``ldmatrix``/``stmatrix``.

| variant | priority | operands |
|---|---|---|
| ``reg`` | 10 | one side in registers (``local``): spread over the scope's threads by its layout (see :mod:`._tiles`) or private to each thread; the other side global, shared or registers laid out alike. Each thread moves its own elements; the innermost register group is one vectorized access (16 bytes: 4 float32, 8 bfloat16). No barrier: registers are private. |
| ``gmem_smem`` | 10 | global <-> shared, same dtype: the scope's threads take 16-byte chunks round-robin (8- or 4-byte when the rows are narrower); a swizzled shared layout is applied per chunk (a chunk never straddles a swizzle unit); a barrier of the scope follows. |
| ``ldstmatrix`` | 20 | shared <-> registers of 16-bit elements at warp, warpgroup or cta scope, when the register layout puts each warp's registers in 8x8 ``ldmatrix`` fragments of 16-byte shared rows (swizzled or not; ``.trans`` when the rows run the other way): ``ldmatrix``/``stmatrix`` ``.x4`` (``.x2``, ``.x1`` for the rest). See :mod:`.ldstmatrix`; :func:`ldmatrix_layout` is one such layout. Preferred to ``reg`` where it applies. |

A ``cast`` between registers laid out alike, float32 <-> float16/bfloat16, converts two
registers at a time (``T.cuda.cast_vec2``: ``__float22half2_rn`` and its kin) when each thread's
innermost register run is even.

Each declines with its reason (``DispatchFail``) and the core ``fallback`` (plain loops) takes
what none of them can.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tvm import ir
from tvm.backend.sdk import (
    Analyzer,
    DispatchContext,
    cast_to,
    fail,
    fold_add,
    is_one,
    predicate,
    register_dispatch,
)
from tvm.ir.layout import Axis, Iter
from tvm.ir.layout_axes import default_strides

from ..intrinsics.cuda_misc import CAST_VEC2
from ._tiles import (
    declare,
    flat_view,
    is_distributed,
    is_local,
    layout_offset,
    owned,
    pair_run,
    region_index,
    unflatten,
)
from .common import (
    const_extents,
    dst_src,
    is_cuda,
    match_scope,
    region_numel,
    thread_to_cta_scope,
)
from .ldstmatrix import copy_ldstmatrix, ldstmatrix_operands

__all__ = ["copy_gmem_smem", "copy_reg", "ldmatrix_layout", "register"]




# -- predicates --------------------------------------------------------------------------------






def _reg_operands(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    dst, src = dst_src(call)
    if not (is_local(dst) or is_local(src)):
        return False, (f"neither side is in registers ({src.buffer.scope} -> "
                       f"{dst.buffer.scope})")
    for r in (dst, src):
        if not match_scope(r.buffer.scope, "local", "global", "shared*"):
            return False, f"{r.buffer.name} is in '{r.buffer.scope}' memory"
    if region_numel(dst) is None or region_numel(dst) != region_numel(src):
        return False, "dst and src need the same constant number of elements"
    return True, ""


def _gmem_smem_operands(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    dst, src = dst_src(call)
    ds, ss = dst.buffer.scope, src.buffer.scope
    if not (ds == "global" and match_scope(ss, "shared*")
            or ss == "global" and match_scope(ds, "shared*")):
        return False, f"copies {ss} -> {ds}; gmem_smem moves global <-> shared"
    if dst.buffer.dtype != src.buffer.dtype:
        return False, f"converts {src.buffer.dtype} -> {dst.buffer.dtype} (gmem_smem copies bytes)"
    if region_numel(dst) is None or region_numel(dst) != region_numel(src):
        return False, "dst and src need the same constant number of elements"
    return True, ""


# -- reg -------------------------------------------------------------------------------------


def copy_reg(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    dst, src = dst_src(call)
    paired = _cast_pairs(dst, src, sctx)
    if paired is not None:
        return paired
    driver = dst if is_local(dst) else src
    other = src if driver is dst else dst
    if is_distributed(driver) and sctx.scope_kind == "thread" and not sctx.is_single_thread():
        pass  # a thread-scope call on a distributed buffer: each thread its own part
    # a laid-out memory side is accessed in (at most) 16-byte runs: vectors no wider
    own = owned(driver, sctx) if is_local(other) or other.buffer.layout is None else \
        owned(driver, sctx, max_vec=max(1, 16 // other.buffer.dtype.bytes))
    view = flat_view(driver.buffer, "regs")
    views = [view]
    reg = ir.BufferLoad(view, [fold_add(own.m, own.lane)])
    vectorize = True
    if is_local(other):
        if not _same_registers(driver, other, sctx):
            fail("layout signature mismatch: the two register operands are laid out "
                 "differently (permute_layout moves data between layouts)")
        oview = flat_view(other.buffer, "regs")
        views.append(oview)
        other_load: ir.PrimExpr = ir.BufferLoad(oview, [fold_add(own.m, own.lane)])
        other_store_buf, other_index = oview, [fold_add(own.m, own.lane)]
    else:
        other_store_buf, other_index = _memory_side(other, own, views)
        vectorize = other_store_buf is not other.buffer or other.buffer.layout is None
        other_load = ir.BufferLoad(other_store_buf, other_index)
    if driver is dst:
        body: ir.Stmt = ir.BufferStore(view, cast_to(other_load, dst.buffer.dtype),
                                       [fold_add(own.m, own.lane)])
    else:
        body = ir.BufferStore(other_store_buf, cast_to(reg, dst.buffer.dtype), other_index)
    return ir.PrimFunc([], declare(views, own.wrap(body, vectorize=vectorize)))


def _memory_side(region: ir.BufferRegion, own: Any, views: list[ir.Buffer]
                 ) -> tuple[ir.Buffer, list[ir.PrimExpr]]:
    """Where the memory side of a ``reg`` copy holds the thread's element ``own.r + lane``.
    Under a layout that keeps each vector's elements one aligned run (a 128-byte swizzle keeps
    8 float16 together), the run's start through the layout plus the lane, in a flat view
    (so the vector is one access); otherwise the element's logical indices (the layout applied
    element by element)."""
    lanes = own.lanes
    if region.buffer.layout is None or lanes == 1 or not (
            _multiple_of(own.r, lanes) and _aligned_runs(region, lanes)):
        return region.buffer, region_index(region, own.r, own.lane, lanes)
    view = flat_view(region.buffer, "flat")
    views.append(view)
    start = region_index(region, own.r, ir.const(0, "int32"), lanes)
    return view, [fold_add(layout_offset(region.buffer, start), own.lane)]


def _cast_pairs(dst: ir.BufferRegion, src: ir.BufferRegion,
                sctx: DispatchContext) -> ir.PrimFunc | None:
    """A cast between registers laid out alike, float32 <-> float16/bfloat16: two registers at a
    time through CUDA's paired conversion (``T.cuda.cast_vec2``); None where it does not apply."""
    pair = (str(src.buffer.dtype), str(dst.buffer.dtype))
    if pair not in CAST_VEC2 or not (is_local(dst) and is_local(src)) \
            or not _same_registers(dst, src, sctx):
        return None
    own = owned(dst, sctx, max_vec=1 << 16)
    pairs = pair_run(own)
    if pairs is None:
        return None
    dview, sview = flat_view(dst.buffer, "regs"), flat_view(src.buffer, "regs")
    at = fold_add(own.m, pairs[0] * 2)
    body = ir.Evaluate(ir.Op.get("tirx.cuda.cast_vec2")(
        ir.BufferLoad(dview, [at]), ir.BufferLoad(sview, [at]), ir.StringImm(pair[0]),
        ir.StringImm(pair[1])))
    return ir.PrimFunc([], declare([dview, sview], replace(own, vec=pairs).wrap(body, vectorize=False)))


def _same_registers(a: ir.BufferRegion, b: ir.BufferRegion, sctx: DispatchContext) -> bool:
    """Both register regions put each element in the same thread at the same offset."""
    if a.buffer.layout is None and b.buffer.layout is None:
        return ir.structural_equal(a.buffer.shape, b.buffer.shape) and all(
            ir.structural_equal(x.min, y.min) and ir.structural_equal(x.extent, y.extent)
            for x, y in zip(a.region, b.region))
    if a.buffer.layout is None or b.buffer.layout is None:
        return False
    return (ir.structural_equal(a.buffer.layout, b.buffer.layout)
            and ir.structural_equal(a.buffer.shape, b.buffer.shape)
            and all(ir.structural_equal(x.min, y.min) and ir.structural_equal(x.extent, y.extent)
                    for x, y in zip(a.region, b.region)))


# -- gmem_smem ---------------------------------------------------------------------------------


def _chunk_elems(dtype: ir.DataType, inner: int, regions: list[ir.BufferRegion]) -> int:
    """Elements per chunk: the widest of 16/8/4 bytes that divides the row and keeps every
    chunk of every region one aligned, contiguous run of memory."""
    for nbytes in (16, 8, 4):
        w = nbytes // dtype.bytes
        if w < 1 or inner % w:
            continue
        if all(_aligned_runs(r, w) for r in regions):
            return w
    return 1


def _multiple_of(e: ir.PrimExpr, w: int) -> bool:
    if isinstance(e, ir.IntImm):
        return e.value % w == 0
    return Analyzer().can_prove(ir.FloorMod(e, ir.const(w, e.dtype)) == 0)


def _aligned_runs(region: ir.BufferRegion, w: int) -> bool:
    """Every ``w`` elements of ``region``'s rows that start at a multiple of ``w`` (the chunks)
    lie at consecutive addresses, the first a multiple of ``w`` elements from the buffer's data:
    its outer strides, its start and its ``elem_offset`` are multiples of ``w``. A row stride of
    20 float16 allows 4-element (8-byte) chunks, a region starting at column 3 none."""
    buf = region.buffer
    if not (_multiple_of(buf.elem_offset, w) and _multiple_of(region.region[-1].min, w)):
        return False
    layout = buf.layout
    if layout is None:
        strides = list(buf.strides) or default_strides(buf.shape)
        return is_one(strides[-1]) and all(_multiple_of(s, w) for s in strides[:-1])
    if len(buf.shape) > 1 and not _multiple_of(buf.shape[-1], w):
        return False  # a chunk's logical elements would not start a layout run
    return _contiguous(layout, w)


def _contiguous(layout: Any, w: int) -> bool:
    """``layout`` maps each ``w`` logical elements from a multiple of ``w`` to one aligned run:
    its innermost memory iterator has stride 1 and an extent that ``w`` divides, the others
    strides that ``w`` divides (a swizzle keeps ``w`` elements together)."""
    if isinstance(layout, ir.SwizzleLayout):  # over row-major offsets
        return (1 << layout.per_element) % w == 0
    tile = layout.layout_B if hasattr(layout, "layout_B") else layout
    if not isinstance(tile, ir.TileLayout) or not tile.shard:
        return False
    last = tile.shard[-1]
    if not (isinstance(last.extent, ir.IntImm) and isinstance(last.stride, ir.IntImm)):
        return False
    if last.axis.name != "m" or last.stride.value != 1 or last.extent.value % w:
        return False
    if not all(_multiple_of(it.stride, w) for it in tile.shard[:-1]
               if it.axis.name == "m" and not is_one(it.extent)):
        return False
    if hasattr(layout, "layout_A"):
        return (1 << layout.layout_A.per_element) % w == 0
    return True


def copy_gmem_smem(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    dst, src = dst_src(call)
    exts = const_extents(dst, "gmem_smem")
    total = region_numel(dst)
    assert total is not None
    dtype = dst.buffer.dtype
    src_inner = src.region[-1].extent
    if not isinstance(src_inner, ir.IntImm):
        fail("gmem_smem needs constant extents")
    w = _chunk_elems(dtype, min(exts[-1], src_inner.value), [dst, src])
    chunks = total // w
    n = sctx.thread_extent()
    if not isinstance(n, ir.IntImm):
        fail("gmem_smem needs a constant thread count")
    tid = sctx.thread_index()
    trips = -(-chunks // n.value)
    k = ir.Var("chunk_k", "int32")
    lane = ir.Var("chunk_v", "int32")
    c = tid if trips == 1 else k * n.value + tid
    start = c * w
    views: list[ir.Buffer] = []

    def access(region: ir.BufferRegion) -> tuple[ir.Buffer, list[ir.PrimExpr]]:
        r_exts = [x.extent for x in region.region]
        idx = [fold_add(x.min, i) for x, i in zip(region.region, unflatten(start, r_exts))]
        if region.buffer.layout is None:
            idx[-1] = fold_add(idx[-1], lane)
            return region.buffer, idx
        view = flat_view(region.buffer, "flat")
        views.append(view)
        base = layout_offset(region.buffer, idx)
        return view, [fold_add(base, lane)]

    dbuf, didx = access(dst)
    sbuf, sidx = access(src)
    body: ir.Stmt = ir.BufferStore(dbuf, ir.BufferLoad(sbuf, sidx), didx)
    body = ir.For(lane, ir.const(0, "int32"), ir.const(w, "int32"),
                  ir.ForKind.VECTORIZED if w > 1 else ir.ForKind.SERIAL, body)
    if chunks % n.value:
        body = ir.IfThenElse(c < chunks, body)
    if trips > 1:
        kind = ir.ForKind.UNROLLED if trips <= 16 else ir.ForKind.SERIAL
        body = ir.For(k, ir.const(0, "int32"), ir.const(trips, "int32"), kind, body)
    barrier = sctx.barrier()
    stmts = [declare(views, body)]
    if barrier is not None:
        stmts.append(barrier)
    return ir.PrimFunc([], ir.seq(stmts))


# -- ldstmatrix --------------------------------------------------------------------------------


def ldmatrix_layout(rows: int, cols: int) -> ir.TileLayout:
    """The registers of a ``rows x cols`` 16-bit tile (both multiples of 8) spread over a warp
    as ``ldmatrix`` delivers them: 8x8 blocks in row-major order, in each block lane ``l``
    holding row ``l // 4``, columns ``2 * (l % 4)`` and ``+1`` (registers ``2 b``, ``2 b + 1``
    of block ``b``)."""
    if rows % 8 or cols % 8:
        raise ValueError(f"ldmatrix_layout: {rows} x {cols} is not a whole number of 8x8 blocks")
    rb, cb = rows // 8, cols // 8
    lane = Axis.get("laneid")
    return ir.TileLayout([Iter(rb, cb * 2), Iter(8, 4, lane), Iter(cb, 2), Iter(4, 1, lane),
                          Iter(2, 1)])


def _ldst_scope(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    if sctx.scope_kind not in ("warp", "warpgroup", "cta"):
        return False, (f"scope {sctx.scope_kind} (ldmatrix/stmatrix run per warp: a warp, "
                       "warpgroup or cta copy)")
    return True, ""


def register() -> None:
    base = [predicate("target", is_cuda), predicate("scope", thread_to_cta_scope)]
    for op in ("copy", "cast"):
        register_dispatch(op, "cuda", variant="reg", priority=10,
                          when=[*base, predicate("operands", _reg_operands)])(copy_reg)
    register_dispatch("copy", "cuda", variant="gmem_smem", priority=10,
                      when=[*base, predicate("operands", _gmem_smem_operands)])(copy_gmem_smem)
    register_dispatch("copy", "cuda", variant="ldstmatrix", priority=20,
                      when=[predicate("target", is_cuda), predicate("scope", _ldst_scope),
                            predicate("operands", ldstmatrix_operands)])(copy_ldstmatrix)
