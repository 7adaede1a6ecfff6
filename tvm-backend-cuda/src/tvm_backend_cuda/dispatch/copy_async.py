"""``copy_async`` on CUDA: TMA, ``cp.async`` (LDGSTS), cluster shared memory, tensor memory.

| variant | priority | moves | completes |
|---|---|---|---|
| ``ldgsts`` | 20 | global -> shared, 4/8/16 bytes a thread (sm_80+) | ``cp.async`` group: ``config={"commit": True}`` commits, ``"wait": n`` waits for all but ``n`` groups |
| ``tma`` | 10 | global <-> shared, one bulk tensor copy per swizzle-atom column block (sm_90+) | loads: on the mbarrier ``config["mbar"]`` (the caller announces the bytes: ``Pipeline.producer_commit``); stores: a bulk group, waited for unless ``config={"wait": False}`` |
| ``dsmem`` | 10 | shared -> the shared memory of another CTA of the cluster (sm_90+) | on the mbarrier ``config["mbar"]`` of the destination CTA (``cp.async.bulk.shared::cluster``) |
| ``smem->tmem`` | 10 | shared -> tensor memory (``tcgen05.cp``, sm_100a) | ``tcgen05.commit`` by the caller |
| ``tmem<->local`` | 10 | tensor memory <-> registers (``tcgen05.ld``/``st``, sm_100a) | ``tcgen05.wait::ld``/``st`` (emitted) |

**TMA** (``dispatch="tma"``). The global operand is a region of a global buffer; the shared
one a region of a shared buffer whose layout is row-major or a TMA swizzle
(:func:`~.tma_utils.tma_shared_layout`, ``SMEMPool.alloc_mma``). The box is the region's
extents (innermost first); a swizzled tile wider than one atom row goes as one copy per
column block of ``atom_cols`` elements. Out-of-bounds rows and columns of a load are filled
with zeros by the hardware (and clipped on a store), so a region may hang over the edge of the
buffer and any shape works. The tensor map is a ``T.TensorMap`` parameter given as
``config={"tensor_map": TM}``, encoded on the host for that buffer with that box and swizzle:
:func:`~.tma_utils.encode_tensor_map` does it from the array and the shared tile
(``docs/decisions.md``, issue 12, says why it is not yet derived at launch).
At thread scope the calling thread issues the copies; at warp, warpgroup and CTA scope thread 0
of the scope does (a store at CTA scope first fences the shared writes of every thread into the
async proxy and meets at a barrier).
"""

from __future__ import annotations

from typing import Any

from tvm.ir import (
    Buffer,
    BufferLoad,
    BufferRegion,
    Evaluate,
    IfThenElse,
    IntImm,
    PrimFunc,
    Stmt,
    TilePrimitiveCall,
    Var,
    const,
    seq,
)
from tvm.tirx.operator.tile_primitive import DispatchContext, fail, predicate, register_dispatch
from tvm.tirx.operator.tile_primitive.common import bound_args, fold_add, region_of

from .. import op as _op
from .common import match_scope, sm_version_ok
from .tma_utils import SwizzleMode, box_columns, get_swizzle_mode_from_layout

__all__ = ["register", "tma_boxes"]

GRID_CONSTANT = "grid_constant"


def _regions(call: TilePrimitiveCall) -> tuple[BufferRegion, BufferRegion]:
    a = bound_args(call)
    dst, src = a["dst"], a["src"]
    if not isinstance(dst, (Buffer, BufferRegion)) or not isinstance(src, (Buffer, BufferRegion)):
        fail("dst and src must be buffers or buffer regions")
    return region_of(dst), region_of(src)


def _config(call: TilePrimitiveCall, key: str, default: Any = None) -> Any:
    return call.config.get(key, default)


# -- predicates --------------------------------------------------------------------------------


def _is_cuda(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    return (True, "") if sctx.is_target("cuda") else (False, "non-cuda target")


def _sm90(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    ok, why = sm_version_ok(sctx, 90)
    return ok, (f"TMA {why}" if not ok else "")


def _tma_direction(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    dst, src = _regions(call)
    ds, ss = dst.buffer.scope, src.buffer.scope
    if ss == "global" and match_scope(ds, "shared*") or ds == "global" and match_scope(ss, "shared*"):
        return True, ""
    return False, f"copies {ss} -> {ds}; TMA moves global <-> shared"


def _tma_tensor_map(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    tm = _config(call, "tensor_map")
    if tm is None:
        return False, ("no tensor map: pass config={'tensor_map': TM}, a T.TensorMap parameter "
                       "encoded for the global buffer (tma_utils.encode_tensor_map)")
    if not (isinstance(tm, Var) and tm.ptr_scope == GRID_CONSTANT):
        return False, f"config['tensor_map'] must be a T.TensorMap parameter, got {tm!r}"
    return True, ""


def _tma_scope(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    if sctx.scope_kind == "cluster":
        return False, "scope cluster (TMA copies are issued per CTA: thread, warp, warpgroup, cta)"
    return True, ""


# -- the boxes ---------------------------------------------------------------------------------


def tma_boxes(global_region: BufferRegion, shared_region: BufferRegion) -> tuple[list[int], int]:
    """(box extents outermost first, number of column blocks) of a TMA copy between the two
    regions: the box is the global region's extents with the innermost cut to one swizzle atom
    row when the shared buffer is swizzled."""
    extents = []
    for r in global_region.region:
        if not isinstance(r.extent, IntImm):
            fail(f"the global region {global_region!r} has a non-constant extent")
        extents.append(r.extent.value)
    if len(extents) > 5:
        fail(f"TMA copies boxes of at most 5 dims, the region has {len(extents)}")
    inner = extents[-1]
    sbuf = shared_region.buffer
    cols = box_columns(sbuf.layout, sbuf.dtype, inner)
    if inner % cols:
        fail(f"the innermost extent {inner} is not a whole number of {cols}-element swizzle "
             "atom rows")
    if cols * sbuf.dtype.bytes % 16:
        fail(f"a TMA box row must be a multiple of 16 bytes; {cols} x {sbuf.dtype} is not")
    box = extents[:-1] + [cols]
    if any(b > 256 for b in box):
        fail(f"TMA box dims are at most 256; the box is {box}")
    return box, inner // cols


def _shared_element(region: BufferRegion, offset_cols: int) -> BufferLoad:
    """The first element of the region, ``offset_cols`` further along its innermost dim."""
    idx = [r.min for r in region.region]
    idx[-1] = fold_add(idx[-1], const(offset_cols, idx[-1].dtype))
    return BufferLoad(region.buffer, idx)


def _check_sizes(glob: BufferRegion, shared: BufferRegion) -> None:
    def numel(reg: BufferRegion) -> int | None:
        n = 1
        for r in reg.region:
            if not isinstance(r.extent, IntImm):
                return None
            n *= r.extent.value
        return n

    g, s = numel(glob), numel(shared)
    if g is not None and s is not None and g != s:
        fail(f"the global region has {g} elements, the shared one {s}")
    if glob.buffer.dtype != shared.buffer.dtype:
        fail(f"TMA copies without converting: {glob.buffer.dtype} vs {shared.buffer.dtype}")
    inner = shared.region[-1].extent
    layout = shared.buffer.layout
    if get_swizzle_mode_from_layout(layout) is SwizzleMode.SWIZZLE_NONE and layout is not None \
            and not layout.is_memory_only():
        fail("the shared buffer's layout is not a memory layout")
    del inner


def _single_issuer(sctx: DispatchContext, body: Stmt) -> Stmt:
    if sctx.scope_kind == "thread" or sctx.is_single_thread():
        return body
    return IfThenElse(sctx.thread_index() == 0, body)


def tma_copy(call: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    dst, src = _regions(call)
    load = src.buffer.scope == "global"
    glob, shared = (src, dst) if load else (dst, src)
    _check_sizes(glob, shared)
    box, blocks = tma_boxes(glob, shared)
    tm = _config(call, "tensor_map")
    rank = len(box)
    coords_outer_first = [r.min for r in glob.region]
    cache_hint = _config(call, "cache_hint", "")
    issues: list[Stmt] = []
    for j in range(blocks):
        coords = list(coords_outer_first)
        coords[-1] = fold_add(coords[-1], const(j * box[-1], coords[-1].dtype))
        inner_first = list(reversed(coords))
        smem = _shared_element(shared, j * box[-1])
        if load:
            mbar = _config(call, "mbar")
            if mbar is None:
                fail("a TMA load completes on an mbarrier: pass config={'mbar': bar[stage]}")
            issues.append(Evaluate(_op.ptx_cp_async_bulk_tensor_global_to_cluster(
                rank, smem, mbar, tm, _config(call, "cta_mask", 0), _config(call, "cta_group", 1),
                cache_hint, *inner_first)))
        else:
            issues.append(Evaluate(_op.ptx_cp_async_bulk_tensor_shared_to_global(
                rank, smem, tm, cache_hint, *inner_first)))
    if load:
        return PrimFunc([], _single_issuer(sctx, seq(issues)))
    issues.append(Evaluate(_op.ptx_cp_async_bulk_commit_group()))
    if _config(call, "wait", True):
        issues.append(Evaluate(_op.ptx_cp_async_bulk_wait_group(0, True)))
    store = _single_issuer(sctx, seq(issues))
    if sctx.scope_kind == "thread" or sctx.is_single_thread():
        return PrimFunc([], seq([Evaluate(_op.ptx_fence_proxy_async("shared::cta")), store]))
    barrier = sctx.barrier()
    pre: list[Stmt] = [Evaluate(_op.ptx_fence_proxy_async("shared::cta"))]
    if barrier is not None:
        pre.append(barrier)
    return PrimFunc([], seq([*pre, store]))


def register() -> None:
    register_dispatch("copy_async", "cuda", variant="tma", priority=10, when=[
        predicate("target", _is_cuda), predicate("arch", _sm90),
        predicate("direction", _tma_direction), predicate("tensor_map", _tma_tensor_map),
        predicate("scope", _tma_scope),
    ])(tma_copy)

