"""``copy_async`` on CUDA: TMA, ``cp.async`` (LDGSTS), cluster shared memory, tensor memory.

| variant | priority | moves | completes |
|---|---|---|---|
| ``ldgsts`` | 20 | global -> shared, 4/8/16 bytes a thread (sm_80+) | ``cp.async`` group: ``config={"commit": True}`` commits, ``"wait": n`` waits for all but ``n`` groups |
| ``tma`` | 10 | global <-> shared, one bulk tensor copy per swizzle-atom column block (sm_90+) | loads: on the mbarrier ``config["mbar"]`` (the caller announces the bytes: ``Pipeline.producer_commit``); stores: a bulk group, waited for unless ``config={"wait": False}`` |
| ``dsmem`` | 10 | shared -> the shared memory of another CTA of the cluster (sm_90+) | on the mbarrier ``config["mbar"]`` of the destination CTA (``cp.async.bulk.shared::cluster``) |
| ``smem->tmem`` | 10 | shared -> tensor memory (``tcgen05.cp`` ``.32x128b.warpx4``, ``.128x256b``, ``.128x128b`` as the layouts allow: :mod:`.tcgen05_cp`; sm_100a) | ``tcgen05.commit`` by the caller |
| ``tmem<->local`` | 10 | tensor memory <-> registers (``tcgen05.ld``/``st``, sm_100a) | ``tcgen05.wait::ld``/``st`` (emitted) |

**TMA** (``dispatch="tma"``). The global operand is a region of a global buffer; the shared
one a region of a shared buffer whose layout is row-major or a TMA swizzle
(:func:`~.tma_utils.tma_shared_layout`, ``SMEMPool.alloc_mma``). The box is the region's
extents (innermost first); a swizzled tile wider than one atom row goes as one copy per
column block of ``atom_cols`` elements, and a dim the shared layout does not take densely
(:func:`dense_box`) in chunks, one copy each. A global buffer laid out in another dim order
(column-major) is mapped in that order (:func:`memory_order`). Out-of-bounds rows and columns of a load are filled
with zeros by the hardware (and clipped on a store), so a region may hang over the edge of the
buffer and any shape works. The tensor map is derived: the global buffer must be a parameter
of the kernel's function, and the executable encodes the map on the host at launch from the
array passed for it (its pointer, shape and strides; ``cuTensorMapEncodeTiled``) with the box
and swizzle of this copy, reuses it while the array is unchanged, and passes it as a
``__grid_constant__`` kernel parameter (:func:`derived_tensor_map`; copies of one buffer with
one box share a map). ``config={"tensor_map": TM}`` passes an explicit ``T.TensorMap``
parameter instead, encoded by the caller (:func:`~.tma_utils.encode_tensor_map`);
``config={"l2_promotion": n}`` sets a derived map's L2 promotion (default 2, 128 bytes).
At thread scope the calling thread issues the copies; at warp, warpgroup and CTA scope thread 0
of the scope does (a store at CTA scope first fences the shared writes of every thread into the
async proxy and meets at a barrier).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from tvm import ir
from tvm.backend.sdk import (
    Analyzer,
    DispatchContext,
    fail,
    fold_add,
    predicate,
    register_dispatch,
)
from tvm.ir.structural import structural_equal
from tvm.tirx.op import HostDerived, address_of, host_derived

from .. import op as _op
from ..emulated_tensor_map import VIEW
from ..layout import tcgen05_atom_layout, tmem_datapath_layout
from ..runtime import TENSOR_MAP_KIND  # the host-derived kernel argument of a TMA copy
from ._tiles import declare, flat_view, layout_offset, unflatten
from .common import const_extents, dst_src, is_cuda, match_scope, region_numel, sm_version_ok
from .copy import _chunk_elems
from .tcgen05_cp import element_coords, plan_cp
from .tma_utils import SwizzleMode, box_columns, get_swizzle_mode_from_layout, swizzle_bytes

__all__ = ["OOB_MODES", "TENSOR_MAP_KIND", "copy_dsmem_impl", "copy_tma_impl", "derived_tensor_map",
           "dsmem_chunks", "register", "tma_boxes"]

GRID_CONSTANT = "grid_constant"
DEFAULT_L2_PROMOTION = 2  # CU_TENSOR_MAP_L2_PROMOTION_L2_128B


def derived_tensor_map(buffer: ir.Buffer, box: list[int], swizzle: SwizzleMode,
                       l2_promotion: int = DEFAULT_L2_PROMOTION,
                       view: tuple[list[int], list[int]] | None = None) -> Any:
    """The tensor map of global ``buffer`` (a parameter of the kernel's function) with box
    ``box`` (outermost first) and ``swizzle``, encoded on the host at launch from the array
    passed for it (``tirx.host_derived`` of kind ``cuda.tensor_map``; the runtime reads the
    params ``[element dtype, swizzle, l2 promotion, *box]``). ``view``: (dims, byte strides
    but the innermost), outermost first, of a map of its own geometry over the array's memory
    instead of the array's (``MapParams``)."""
    params: list[int | str] = [str(buffer.dtype), int(swizzle), int(l2_promotion), *box]
    if view is not None:
        params += [VIEW, *view[0], *view[1]]
    return host_derived(TENSOR_MAP_KIND, GRID_CONSTANT, buffer, params)




def _config(call: ir.TilePrimitiveCall, key: str, default: Any = None) -> Any:
    return call.config.get(key, default)


# -- predicates --------------------------------------------------------------------------------




def _sm90(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    ok, why = sm_version_ok(sctx, 90)
    return ok, (f"TMA {why}" if not ok else "")


def _tma_direction(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    dst, src = dst_src(call)
    ds, ss = dst.buffer.scope, src.buffer.scope
    if ss == "global" and match_scope(ds, "shared*") or ds == "global" and match_scope(ss, "shared*"):
        return True, ""
    return False, f"copies {ss} -> {ds}; TMA moves global <-> shared"


def _tensor_map_config(call: ir.TilePrimitiveCall) -> Any:
    """``config["tensor_map"]``; the seed's ``T.address_of(map)`` stands for the map."""
    tm = _config(call, "tensor_map")
    if isinstance(tm, ir.Call) and tm.op.name == "tirx.address_of" and tm.args:
        return tm.args[0]
    return tm


def _tma_tensor_map(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    tm = _tensor_map_config(call)
    if tm is None:
        return True, ""  # derived from the global buffer at launch (derived_tensor_map)
    grid_constant = isinstance(tm, ir.Var) and tm.ptr_scope == GRID_CONSTANT
    if not grid_constant and HostDerived.of(tm) is None:
        return False, ("config['tensor_map'] must be a T.TensorMap parameter or a host-encoded "
                       f"T.handle(\"tensormap\"), got {tm!r}")
    return True, ""


def _tma_scope(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    if sctx.scope_kind == "cluster":
        return False, "scope cluster (TMA copies are issued per CTA: thread, warp, warpgroup, cta)"
    return True, ""


# -- the boxes ---------------------------------------------------------------------------------


def tma_boxes(global_region: ir.BufferRegion, shared_region: ir.BufferRegion,
              order: list[int] | None = None) -> tuple[list[int], int]:
    """(box extents outermost first, number of column blocks) of a TMA copy between the two
    regions: the box is the global region's extents (its dims in memory order ``order``, the
    logical dim of each box dim, outermost first; default the logical order) with the
    innermost cut to one swizzle atom row when the shared buffer is swizzled."""
    extents = []
    dims = order if order is not None else range(len(global_region.region))
    for r in (global_region.region[d] for d in dims):
        if not isinstance(r.extent, ir.IntImm):
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


def _shared_element(region: ir.BufferRegion, steps: Sequence[int], order: list[int]
                    ) -> ir.BufferLoad:
    """The element of the region ``steps[i]`` further along box dim ``i`` (logical dim
    ``order[i]``) than its first one."""
    idx = [r.min for r in region.region]
    for d, step in zip(order, steps):
        if step:
            idx[d] = fold_add(idx[d], ir.const(step, idx[d].dtype))
    return ir.BufferLoad(region.buffer, idx)


def memory_order(buf: ir.Buffer) -> list[int] | None:
    """The logical dims of global ``buf`` outermost first in memory when its layout is another
    order of a dense row-major one (``TileLayout(S[(M, K): (1, M)])``: column-major), else
    None (row-major, or no such layout): a TMA map of it views the array's memory in that
    order (``derived_tensor_map``'s ``view``)."""
    lay, shape = buf.layout, buf.static_shape()
    if not isinstance(lay, ir.TileLayout) or shape is None or len(lay.shard) != len(shape):
        return None
    if lay.offset or any(it.axis.name != "m" for it in lay.shard):
        return None
    strides = [_const_int(it.stride) for it in lay.shard]
    if [_const_int(it.extent) for it in lay.shard] != list(shape) or None in strides:
        return None
    order = sorted(range(len(shape)), key=lambda d: -(strides[d] or 0))
    want = 1
    for d in reversed(order):
        if strides[d] != want:
            return None
        want *= shape[d]
    return None if order == sorted(order) else order


def _const_int(x: Any) -> int | None:
    return x if isinstance(x, int) else x.value if isinstance(x, ir.IntImm) else None


def dense_box(shared: ir.BufferRegion, box: list[int], order: list[int] | None = None
              ) -> list[int]:
    """The box (outermost first) that lands densely in ``shared``'s layout: ``box`` where each
    dim is strided by the product of the box's inner extents, else a smaller extent there.
    A TMA box is written densely into shared memory, so a dim that the layout strides
    otherwise (the stage of a ``[stages, rows, K]`` tile laid out K-atom by K-atom, a stage dim
    between rows and columns) goes one index at a time (extent 1), and a dim that is linear
    only over its first ``e`` indices (the rows of an MN-major tile, 8 to an atom) goes ``e``
    at a time; once a dim is cut, the dims outside it go one index at a time. The caller
    issues one copy per chunk. Strides are read from the layout before its swizzle, which
    permutes only within an atom."""
    buf = shared.buffer
    if buf.layout is None or len(shared.region) != len(box):
        return list(box)
    lay = buf.layout.layout_B if isinstance(buf.layout, ir.ComposeLayout) else buf.layout
    if not isinstance(lay, ir.TileLayout):
        return list(box)
    ana = Analyzer()

    dims = order if order is not None else list(range(len(box)))

    def offset(d: int, j: int) -> int | None:
        idx = [ir.const(j if i == dims[d] else 0, "int32") for i in range(len(box))]
        value = ana.simplify(lay.apply(idx, buf.shape).get("m", ir.const(0, "int32")))
        return value.value if isinstance(value, ir.IntImm) else None

    def linear_extent(d: int, stride: int) -> int:
        """The largest divisor ``e`` of ``box[d]`` with index ``j < e`` at ``j * stride``."""
        e = 1
        while e < box[d] and offset(d, e) == e * stride:
            e += 1
        while box[d] % e:
            e -= 1
        return e

    if len(box) > 1 and box[-1] > 1 and offset(len(box) - 1, 1) != 1:
        fail(f"the shared layout does not keep the TMA box's innermost dim (dim {dims[-1]} of "
             f"the region, contiguous in global memory) contiguous",
             fix="lay the shared tile out with that dim innermost (MN-major for an MN-major "
                 "global operand)")
    out = list(box)
    dense, cut = box[-1], False
    for d in range(len(box) - 2, -1, -1):
        if box[d] == 1:
            continue
        if cut or offset(d, 1) != dense:
            out[d] = 1  # one index at a time: the dims outside may still be dense
        else:
            out[d] = linear_extent(d, dense)
            dense *= out[d]
            cut = out[d] != box[d]
        if out[d] != box[d]:
            _check_chunk_aligned(buf, d, out[d], offset(d, out[d]))
    return out


def _check_chunk_aligned(buf: ir.Buffer, d: int, chunk: int, step: int | None) -> None:
    """A box's shared address is where its first row starts before the swizzle, which only
    the first row of a swizzle atom shares with its swizzled place: a chunk of a swizzled tile
    must step by whole atoms."""
    mode = get_swizzle_mode_from_layout(buf.layout)
    if mode is SwizzleMode.SWIZZLE_NONE:
        return
    atom = 8 * swizzle_bytes(mode)
    if step is None or step * buf.dtype.bytes % atom:
        fail(f"the shared layout takes dim {d} of the TMA box {chunk} at a time, which does not "
             f"start each copy on a {atom}-byte swizzle atom",
             fix="lay the tile out so that the box lands densely, or by whole swizzle atoms")


def _memory_view(buf: ir.Buffer, order: list[int]) -> tuple[list[int], list[int]]:
    """(dims, byte strides but the innermost), outermost first, of global ``buf`` in memory
    order ``order``."""
    shape = buf.static_shape()
    assert shape is not None and isinstance(buf.layout, ir.TileLayout)
    strides = [(_const_int(buf.layout.shard[d].stride) or 0) * buf.dtype.bytes
               for d in order[:-1]]
    return [shape[d] for d in order], strides


def _check_sizes(glob: ir.BufferRegion, shared: ir.BufferRegion) -> None:
    g, s = region_numel(glob), region_numel(shared)
    if g is not None and s is not None and g != s:
        fail(f"the global region has {g} elements, the shared one {s}")
    if glob.buffer.dtype != shared.buffer.dtype:
        fail(f"TMA copies without converting: {glob.buffer.dtype} vs {shared.buffer.dtype}")
    layout = shared.buffer.layout
    if get_swizzle_mode_from_layout(layout) is SwizzleMode.SWIZZLE_NONE and layout is not None:
        shape = shared.buffer.static_shape()
        if shape is None or not ir.structural_equal(layout, ir.TileLayout.row_major(list(shape))):
            fail("an unswizzled TMA box lands row-major; the shared buffer's layout is not "
                 "(use tma_shared_layout(dtype, 'none', shape) or no layout)")


def _single_issuer(sctx: DispatchContext, body: ir.Stmt) -> ir.Stmt:
    if sctx.scope_kind == "thread" or sctx.is_single_thread():
        return body
    return ir.IfThenElse(sctx.thread_index() == 0, body)


OOB_MODES = ("none", "zero", "nan")  # config["oob"]: what a load reads out of bounds


def _check_oob(call: ir.TilePrimitiveCall, dtype: ir.DataType) -> None:
    """``config["oob"]``: ``"none"`` or ``"zero"`` (the default; out-of-bounds elements of a
    load read as zero, a store clips them) or ``"nan"`` (the seed's NaN fill, floats only;
    declined here: this backend's tensor maps fill zeros)."""
    mode = _config(call, "oob")
    if mode is None:
        return
    if not isinstance(mode, str) or mode not in OOB_MODES:
        fail(f"Unsupported TMA oob mode {mode!r}; expected one of {', '.join(OOB_MODES)}")
    if mode == "nan":
        if not dtype.is_float:
            fail(f"the TMA oob mode 'nan' requires a floating-point dtype, the copy moves {dtype}",
                 fix="use oob='zero' (out-of-bounds elements read as zero)")
        fail("the TMA oob mode 'nan' (NaN fill of out-of-bounds elements) is not supported: "
             "this backend's tensor maps fill zeros",
             fix="use oob='zero', or mask the out-of-bounds elements after the load")


def tma_copy(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    dst, src = dst_src(call)
    load = src.buffer.scope == "global"
    glob, shared = (src, dst) if load else (dst, src)
    _check_oob(call, glob.buffer.dtype)
    _check_sizes(glob, shared)
    mem = memory_order(glob.buffer)
    order = mem if mem is not None else list(range(len(glob.region)))
    if mem is not None and len(shared.region) != len(glob.region):
        fail(f"the global buffer {glob.buffer.name} is laid out in another dim order "
             f"({glob.buffer.layout}), so the shared region must have its dims, not "
             f"{len(shared.region)}")
    # the shared dim of each box dim: the same dim, or counted from the last when the shared
    # region has more (extent-1) dims
    shared_dims = [d + len(shared.region) - len(glob.region) for d in order]
    box, blocks = tma_boxes(glob, shared, order)
    chunk = dense_box(shared, box, order)
    tm = _tensor_map_config(call)
    if chunk != box and tm is not None:
        fail(f"the shared layout does not take the box {box} densely (it takes {chunk} at a "
             f"time), which an explicit tensor map's box cannot follow",
             fix="drop config['tensor_map'] (the map is then derived), or lay the tile out so "
                 "that the box lands densely")
    steps = [range(0, b, c) for b, c in zip(box[:-1], chunk[:-1])]
    box = chunk
    if tm is None:
        tm = derived_tensor_map(glob.buffer, box, get_swizzle_mode_from_layout(shared.buffer.layout),
                                _config(call, "l2_promotion", DEFAULT_L2_PROMOTION),
                                _memory_view(glob.buffer, order) if mem is not None else None)
    elif mem is not None:
        fail(f"the global buffer {glob.buffer.name} is laid out {glob.buffer.layout}, which an "
             f"explicit tensor map does not describe",
             fix="drop config['tensor_map'] (the map is then derived from the layout)")
    rank = len(box)
    coords_outer_first = [glob.region[d].min for d in order]
    cache_hint = _config(call, "cache_hint", "")
    issues: list[ir.Stmt] = []
    for outer, j in itertools.product(itertools.product(*steps), range(blocks)):
        coords = list(coords_outer_first)
        for d, step in enumerate(outer):
            coords[d] = fold_add(coords[d], ir.const(step, coords[d].dtype))
        coords[-1] = fold_add(coords[-1], ir.const(j * box[-1], coords[-1].dtype))
        inner_first = list(reversed(coords))
        smem = _shared_element(shared, [*outer, j * box[-1]], shared_dims)
        if load:
            mbar = _config(call, "mbar")
            if mbar is None:
                fail("a TMA load completes on an mbarrier: pass config={'mbar': bar[stage]}")
            issues.append(ir.Evaluate(_op.ptx_cp_async_bulk_tensor_global_to_cluster(
                rank, smem, mbar, tm, _config(call, "cta_mask", 0), _config(call, "cta_group", 1),
                cache_hint, *inner_first)))
        else:
            issues.append(ir.Evaluate(_op.ptx_cp_async_bulk_tensor_shared_to_global(
                rank, smem, tm, cache_hint, *inner_first)))
    if load:
        return ir.PrimFunc([], _single_issuer(sctx, ir.seq(issues)))
    issues.append(ir.Evaluate(_op.ptx_cp_async_bulk_commit_group()))
    if _config(call, "wait", True):
        issues.append(ir.Evaluate(_op.ptx_cp_async_bulk_wait_group(0, True)))
    store = _single_issuer(sctx, ir.seq(issues))
    if sctx.scope_kind == "thread" or sctx.is_single_thread():
        fence = ir.Evaluate(_op.ptx_fence_proxy_async("shared::cta"))
        return ir.PrimFunc([], ir.seq([fence, store]))
    barrier = sctx.barrier()
    pre: list[ir.Stmt] = [ir.Evaluate(_op.ptx_fence_proxy_async("shared::cta"))]
    if barrier is not None:
        pre.append(barrier)
    return ir.PrimFunc([], ir.seq([*pre, store]))


# -- ldgsts (cp.async) -------------------------------------------------------------------------


def _sm80(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    ok, why = sm_version_ok(sctx, 80)
    return ok, (f"cp.async {why}" if not ok else "")


def _ldgsts_operands(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    dst, src = dst_src(call)
    if not (src.buffer.scope == "global" and match_scope(dst.buffer.scope, "shared*")):
        return False, f"copies {src.buffer.scope} -> {dst.buffer.scope}; cp.async moves global -> shared"
    if "tensor_map" in call.config or "mbar" in call.config:
        return False, "a TMA-style call (config names a tensor_map or mbar)"
    if dst.buffer.dtype != src.buffer.dtype:
        return False, "cp.async copies bytes: dst and src must have one dtype"
    if sctx.scope_kind == "cluster":
        return False, "scope cluster (cp.async is per CTA)"
    return True, ""


def ldgsts_copy(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    """The scope's threads issue ``cp.async`` of 16 (8, 4) bytes each, round-robin over the
    region, then commit a group (``config`` may add ``prefetch_size``, ``cache_hint`` /
    ``cache_policy``, ``predicate`` and ``fill_mode="zero"``); ``config={"wait": n}`` waits until at most ``n`` groups are
    pending and meets at the scope's barrier (without it the copy stays in flight: wait with
    ``T.ptx.cp_async.wait_group`` + a barrier, or a later call's ``wait``)."""
    dst, src = dst_src(call)
    exts = const_extents(dst, "ldgsts")
    total = math.prod(exts)
    dtype = dst.buffer.dtype
    inner = src.region[-1].extent
    if not isinstance(inner, ir.IntImm):
        fail("ldgsts needs constant extents")
    w = _chunk_elems(dtype, min(exts[-1], inner.value), [dst, src])
    if w * dtype.bytes < 4:
        fail(f"rows of {exts[-1]} x {dtype} do not split into 4-byte pieces")
    chunks = total // w
    n = sctx.thread_extent()
    if not isinstance(n, ir.IntImm):
        fail("ldgsts needs a constant thread count")
    k = ir.Var("cp_k", "int32")
    trips = -(-chunks // n.value)
    c = sctx.thread_index() if trips == 1 else k * n.value + sctx.thread_index()
    start = c * w
    views: list[ir.Buffer] = []

    def element(region: ir.BufferRegion) -> ir.BufferLoad:
        idx = [fold_add(x.min, i) for x, i in
               zip(region.region, unflatten(start, [x.extent for x in region.region]))]
        if region.buffer.layout is None:
            return ir.BufferLoad(region.buffer, idx)
        view = flat_view(region.buffer, "flat")
        views.append(view)
        return ir.BufferLoad(view, [layout_offset(region.buffer, idx)])

    # the seed's ldgsts config: prefetch size, L2 cache hint, a predicate per thread and
    # zero-fill where it fails (without fill_mode="zero" a failed predicate leaves dst as is)
    body: ir.Stmt = ir.Evaluate(_op.ptx_cp_async(
        element(dst), element(src), w * dtype.bytes,
        cache_hint=_config(call, "cache_hint", ""), cache_policy=_config(call, "cache_policy"),
        prefetch_size=_config(call, "prefetch_size", -1),
        predicate=_config(call, "predicate", -1), fill_mode=_config(call, "fill_mode", "")))
    if chunks % n.value:
        body = ir.IfThenElse(c < chunks, body)
    if trips > 1:
        body = ir.For(k, ir.const(0, "int32"), ir.const(trips, "int32"),
                      ir.ForKind.UNROLLED if trips <= 16 else ir.ForKind.SERIAL, body)
    stmts = [declare(views, body), ir.Evaluate(_op.ptx_cp_async_commit_group())]
    wait = _config(call, "wait")
    if wait is not None:
        stmts.append(ir.Evaluate(_op.ptx_cp_async_wait_group(wait)))
        barrier = sctx.barrier()
        if barrier is not None:
            stmts.append(barrier)
    return ir.PrimFunc([], ir.seq(stmts))


# -- dsmem (cluster shared memory) -----------------------------------------------------------


def _dsmem_rank(call: ir.TilePrimitiveCall) -> Any:
    """The destination CTA's rank in the cluster: ``config["remote_cta_id"]`` (the seed's
    name) or ``config["cta_id"]``."""
    for key in ("remote_cta_id", "cta_id"):
        if key in call.config:
            return call.config[key]
    return None


def _dsmem_operands(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    dst, src = dst_src(call)
    if not (match_scope(dst.buffer.scope, "shared*") and match_scope(src.buffer.scope, "shared*")):
        return False, f"copies {src.buffer.scope} -> {dst.buffer.scope}; dsmem moves shared -> shared"
    if _dsmem_rank(call) is None:
        return False, ("dsmem needs config['remote_cta_id']: the rank in the cluster of the CTA "
                       "whose shared memory receives the copy")
    if "mbar" not in call.config:
        return False, ("dsmem needs config['mbar']: the destination CTA's mbarrier (bar[i] or "
                       "bar.ptr_to([i])) on which the bytes complete")
    if dst.buffer.dtype != src.buffer.dtype:
        return False, "dsmem copies bytes: dst and src must have one dtype"
    return True, ""


def _memory_offsets(region: ir.BufferRegion) -> tuple[Any, ir.PrimExpr]:
    """(offsets, base): the memory offset (elements) of every element of ``region`` in
    row-major order relative to its first one (a numpy array), and the first one's offset."""
    buf = region.buffer
    lay = buf.layout
    if lay is not None and (not isinstance(lay, ir.TileLayout) or not lay.is_memory_only()):
        fail(f"{buf.name}'s layout {lay} is not a plain memory layout (a swizzle or thread "
             "axes); dsmem copies bytes between strided shared regions")
    base = layout_offset(buf, [r.min for r in region.region])
    if not all(isinstance(r.min, ir.IntImm) for r in region.region):
        shape = buf.static_shape()
        if lay is not None and (shape is None or not ir.structural_equal(
                lay, ir.TileLayout.row_major(list(shape)))):
            fail(f"the region of {buf.name} starts at a variable index and the buffer has a "
                 "layout: dsmem needs constant starts there")
        # row-major: the relative offsets do not depend on the start
        region = ir.BufferRegion(buf, [ir.Range(ir.const(0, r.extent.dtype), r.extent)
                                       for r in region.region])
    offs = element_coords(region)["m"]
    return offs - offs[0], base


def dsmem_chunks(dst: ir.BufferRegion, src: ir.BufferRegion) -> tuple[int, list[int], list[int]]:
    """(elements per bulk copy, the copies' dst offsets, their src offsets; offsets relative to
    each region's first element) of a copy between two shared regions: the longest runs that
    are contiguous in both."""
    import math as _m  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415

    d, _ = _memory_offsets(dst)
    s, _ = _memory_offsets(src)
    if d.size != s.size:
        fail(f"dst has {d.size} elements, src {s.size}")
    n = int(d.size)
    breaks = np.nonzero((np.diff(d) != 1) | (np.diff(s) != 1))[0] + 1
    run = _m.gcd(n, *(int(b) for b in breaks)) if breaks.size else n
    return run, [int(x) for x in d[::run]], [int(x) for x in s[::run]]


def _progression(xs: list[int]) -> int | None:
    step = xs[1] - xs[0] if len(xs) > 1 else 0
    return step if all(b - a == step for a, b in zip(xs, xs[1:])) else None


def _mbar_address(mbar: Any) -> ir.PrimExpr:
    if isinstance(mbar, ir.BufferLoad):
        return address_of(mbar)
    if isinstance(mbar, ir.PrimExpr) and mbar.dtype.is_handle:
        return mbar
    fail(f"config['mbar'] must be a barrier element (bar[0]) or its address (bar.ptr_to([0])), "
         f"got {mbar!r}")


def dsmem_copy(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    """``cp.async.bulk.shared::cluster.shared::cta`` copies of the region into the shared
    memory of cluster CTA ``config["remote_cta_id"]`` (or ``"cta_id"``), completing on its
    mbarrier ``config["mbar"]`` (the receiver announces the bytes with ``arrive.expect_tx``):
    one copy per run of elements contiguous in both buffers (row-major or strided
    ``TileLayout`` s), each a multiple of 16 bytes. Issued by thread 0 of the scope."""
    dst, src = dst_src(call)
    run, d_starts, s_starts = dsmem_chunks(dst, src)
    nbytes = run * src.buffer.dtype.bytes
    if nbytes % 16:
        fail(f"bulk copies move multiples of 16 bytes; the longest run contiguous in both "
             f"{dst.buffer.name} and {src.buffer.name} is {run} elements ({nbytes} bytes)",
             fix="give both buffers layouts whose innermost runs match and hold 16-byte multiples")
    rank = _dsmem_rank(call)
    bar = _op.ptx_mapa(_mbar_address(_config(call, "mbar")), rank, space="shared::cluster",
                       ptx_type="u32", return_type="uint32")
    dflat, sflat = flat_view(dst.buffer, "dsmem"), flat_view(src.buffer, "dsmem")
    d_base, s_base = _memory_offsets(dst)[1], _memory_offsets(src)[1]

    def issue(d_off: Any, s_off: Any) -> ir.Stmt:
        first = ir.BufferLoad(dflat, [fold_add(d_base, d_off)])
        remote = _op.ptx_mapa(address_of(first), rank, space="shared::cluster", ptx_type="u32",
                              return_type="uint32")
        return ir.Evaluate(_op.ptx_cp_async_bulk_shared_to_cluster(
            remote, ir.BufferLoad(sflat, [fold_add(s_base, s_off)]), nbytes, bar))

    d_step, s_step = _progression(d_starts), _progression(s_starts)
    if len(d_starts) == 1:
        body = issue(ir.const(d_starts[0], "int32"), ir.const(s_starts[0], "int32"))
    elif d_step is not None and s_step is not None:
        k = ir.Var("chunk", "int32")
        body = ir.For(k, ir.const(0, "int32"), ir.const(len(d_starts), "int32"),
                      ir.ForKind.UNROLLED,
                      issue(fold_add(ir.const(d_starts[0], "int32"), k * d_step),
                            fold_add(ir.const(s_starts[0], "int32"), k * s_step)))
    else:
        body = ir.seq([issue(ir.const(a, "int32"), ir.const(b, "int32"))
                       for a, b in zip(d_starts, s_starts)])
    pre = ir.Evaluate(_op.ptx_fence_proxy_async("shared::cta"))
    return ir.PrimFunc([], declare([dflat, sflat], ir.seq([pre, _single_issuer(sctx, body)])))


# -- tensor memory (sm_100a) -----------------------------------------------------------------


def _sm100(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    ok, why = sm_version_ok(sctx, 100)
    return ok, (f"tcgen05 {why}" if not ok else "")


def _smem_tmem_operands(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    dst, src = dst_src(call)
    if dst.buffer.scope != "tmem" or not match_scope(src.buffer.scope, "shared*"):
        return False, f"copies {src.buffer.scope} -> {dst.buffer.scope}; smem->tmem moves shared -> tmem"
    return True, ""


def _tmem_local_operands(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    dst, src = dst_src(call)
    pair = {dst.buffer.scope, src.buffer.scope}
    if pair != {"tmem", "local"}:
        return False, f"copies {src.buffer.scope} -> {dst.buffer.scope}; tmem<->local moves tmem <-> registers"
    reg, tm = (dst, src) if dst.buffer.scope == "local" else (src, dst)
    bits = reg.buffer.dtype.bits
    if 32 % bits or tm.buffer.dtype.bits != bits:
        return False, (f"tcgen05.ld/st move 32-bit registers: {reg.buffer.dtype} registers with "
                       f"{tm.buffer.dtype} in TMEM (one type, 8, 16 or 32 bits wide)")
    if sctx.scope_kind != "warpgroup":
        return False, f"scope {sctx.scope_kind} (a warpgroup reaches the 128 TMEM lanes)"
    return True, ""


def _tmem_addr(region: ir.BufferRegion) -> ir.PrimExpr:
    """TMEM address of the region's first element: the buffer's address (its elem_offset,
    see lang.TMEMPool) + (row << 16) + column (32-bit columns: 32 / bits elements of a
    narrower type share one)."""
    buf = region.buffer
    row, col = region.region[0].min, region.region[1].min
    per = 32 // buf.dtype.bits
    return buf.elem_offset + (row << 16) + (col if per == 1 else col // per)


def smem_to_tmem(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    """``tcgen05.cp``: the shared region into the tensor-memory region, one instruction per
    16-byte (``.32x128b.warpx4``, ``.128x128b``) or 32-byte (``.128x256b``) TMEM column chunk,
    as :func:`~.tcgen05_cp.plan_cp` finds from the two layouts, each with its own shared-memory
    descriptor. Issued by one thread (thread 0 of a wider scope); ``config={"cta_group": 2}``
    issues for a CTA pair. The caller commits (``tcgen05.commit``) and waits on the mbarrier."""
    dst, src = dst_src(call)
    plan = plan_cp(dst, src)
    group = _config(call, "cta_group", 1)
    desc = ir.Buffer("cp_desc", [1], "uint64", scope="local")
    flat = flat_view(src.buffer, "cp")
    eb = src.buffer.dtype.bytes
    stmts: list[ir.Stmt] = [ir.AllocBuffer(desc), ir.DeclBuffer(flat)]
    for issue in plan.issues:
        first = ir.BufferLoad(flat, [_plus(issue.start // eb, plan.src_shift)])
        stmts.append(ir.Evaluate(_op.ptx_tcgen05_encode_matrix_descriptor(
            ir.BufferLoad(desc, [ir.const(0, "int32")]), first, issue.lbo // 16,
            issue.sbo // 16, int(plan.swizzle))))
        stmts.append(ir.Evaluate(_op.ptx_tcgen05_cp(
            dst.buffer.elem_offset, ir.BufferLoad(desc, [ir.const(0, "int32")]),
            shape=plan.shape.name, cta_group=group, multicast=plan.shape.multicast,
            col=_plus(issue.column, plan.column_shift))))
    return ir.PrimFunc([], _single_issuer(sctx, ir.seq(stmts)))


def _plus(value: int, shift: ir.PrimExpr | None) -> ir.PrimExpr:
    """``value`` + ``shift`` (a variable region start's share)."""
    out = ir.const(value, "int32")
    return out if shift is None else fold_add(out, shift)


#: the .16x* atoms: 32-bit columns a repetition covers, registers a repetition fills
_ATOM_16X = {"16x64b": (2, 1), "16x128b": (4, 2), "16x256b": (8, 4)}


def _same_layout(a: Any, b: Any) -> bool:
    return a is not None and structural_equal(a.canonicalize(), b.canonicalize())


def _const_2d(buf: ir.Buffer) -> tuple[int, int] | None:
    """``buf``'s (rows, columns) when it is 2-D with constant extents and has a layout."""
    dims = [d.value for d in buf.shape if isinstance(d, ir.IntImm)]
    if buf.layout is None or len(buf.shape) != 2 or len(dims) != 2:
        return None
    return dims[0], dims[1]


def _atom_16x(reg: ir.BufferRegion) -> str | None:
    """The ``.16x*`` shape whose ``tcgen05_atom_layout`` the registers are laid out by, if any
    (else the tile copy moves them with ``.32x32b``)."""
    buf = reg.buffer
    dims = _const_2d(buf)
    if dims is None:
        return None
    for shape in _ATOM_16X:
        try:
            atom = tcgen05_atom_layout(shape, dims, buf.dtype)
        except ValueError:
            continue
        if _same_layout(buf.layout, atom):
            return shape
    return None


def _is_datapath_f(tm: ir.BufferRegion) -> bool:
    """Whether the TMEM buffer is laid out as an M=64 accumulator (datapath F)."""
    dims = _const_2d(tm.buffer)
    if dims is None or dims[0] != 64:
        return False
    return _same_layout(tm.buffer.layout, tmem_datapath_layout("F", 64, dims[1]))


def _tmem_local_16x(shape: str, load: bool, tm: ir.BufferRegion, reg: ir.BufferRegion,
                    view: ir.Buffer, first: ir.PrimExpr, words: int,
                    sctx: DispatchContext) -> list[ir.Stmt]:
    """``tcgen05.ld``/``st`` ``.16x64b``/``.16x128b``/``.16x256b``: warp ``w`` moves the 16
    rows ``16w..16w+15`` of a 64-row fragment (TMEM lanes ``32w..32w+15``); 128 rows are a
    second issue at lane offset 16 into the next registers (``tcgen05_atom_layout``)."""
    rows, cols = _const_2d(reg.buffer) or (0, 0)
    extent = tm.region[0].extent
    if not isinstance(extent, ir.IntImm) or extent.value != rows:
        fail(f"the .{shape} atom moves the {rows} TMEM rows the registers hold")
    whole = all(isinstance(r.min, ir.IntImm) and r.min.value == 0 and
                isinstance(r.extent, ir.IntImm) and r.extent.value == n
                for r, n in zip(reg.region, (rows, cols), strict=True))
    if not whole or words * (32 // reg.buffer.dtype.bits) != cols:
        fail(f"the .{shape} atom fills all of the {rows} x {cols} registers laid out by "
             "tcgen05_atom_layout: copy the whole register tile, as many TMEM columns wide")
    if _is_datapath_f(tm) and rows != 64:
        fail(f"a datapath F TMEM tile (M=64: 16 rows in each warp's quarter) takes the 64-row "
             f".{shape} atom, not {rows} rows")
    per_rep, regs_per_rep = _ATOM_16X[shape]
    n = words // per_rep
    nregs = regs_per_rep * n
    warp = sctx.thread_index() // 32
    base = _tmem_addr(tm)
    stmts: list[ir.Stmt] = []
    for s in range(rows // 64):
        regs = [ir.BufferLoad(view, [fold_add(first, ir.const(s * nregs + q, "int32"))])
                for q in range(nregs)]
        addr = base + ((warp * 32 + 16 * s) << 16)
        make = _op.ptx_tcgen05_ld if load else _op.ptx_tcgen05_st
        stmts.append(ir.Evaluate(make(addr, *regs, shape=shape, num=n)))
    return stmts


def tmem_local(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    """``tcgen05.ld``/``st`` ``.32x32b``: at warpgroup scope thread ``t`` owns row ``t`` of a
    ``[128, C]`` TMEM tile (warp ``w`` reaches lanes ``32w..32w+31``); its registers (a local
    ``[C]`` buffer, or the row of a ``[128, C]`` one laid out over ``tid``, from the region's
    first column) hold the columns. Up to 32 columns per instruction; a ``wait::ld``/``st``
    follows. Elements narrower than 32 bits go 32 / bits to a TMEM column and a register (the
    low one first), so the region's columns must start and end on whole 32-bit columns."""
    dst, src = dst_src(call)
    load = src.buffer.scope == "tmem"
    tm, reg = (src, dst) if load else (dst, src)
    cols = tm.region[1].extent
    if not isinstance(cols, ir.IntImm):
        fail("the TMEM region needs a constant column count")
    per = 32 // reg.buffer.dtype.bits  # elements to a 32-bit register
    reg_first = reg.region[-1].min
    for what, v in (("column count", cols), ("first TMEM column", tm.region[1].min),
                    ("first register column", reg_first)):
        if per > 1 and not (isinstance(v, ir.IntImm) and v.value % per == 0):
            fail(f"{reg.buffer.dtype} elements go {per} to a 32-bit TMEM column: the {what} "
                 f"must be a constant multiple of {per}, got {v}")
    view = flat_view(reg.buffer, "regs")
    if per > 1:  # the same registers as 32-bit words
        offset = view.elem_offset
        if not isinstance(offset, ir.IntImm) or offset.value % per:
            fail(f"the registers of {reg.buffer.name} must start on a whole 32-bit register")
        view = ir.Buffer(view.name, [view.shape[0] // per], "uint32", scope=view.scope,
                         data=view.data, elem_offset=offset.value // per, align=view.align)
    first = reg_first
    if per > 1 and isinstance(reg_first, ir.IntImm):  # checked above: a multiple of per
        first = ir.const(reg_first.value // per, "int32")
    words = cols.value // per
    atom = _atom_16x(reg)
    if atom is not None:
        moves = _tmem_local_16x(atom, load, tm, reg, view, first, words, sctx)
        moves.append(ir.Evaluate(_op.ptx_tcgen05_wait_ld() if load else
                                 _op.ptx_tcgen05_wait_st()))
        return ir.PrimFunc([], ir.seq([ir.DeclBuffer(view), *moves]))
    if _is_datapath_f(tm):
        fail("a datapath F TMEM tile (M=64: 16 rows in each warp's quarter) is moved by the "
             ".16x* atoms: lay the registers out with tcgen05_atom_layout('16x..b', (64, C), "
             "dtype), not .32x32b rows")
    warp = sctx.thread_index() // 32
    base = _tmem_addr(tm)
    stmts: list[ir.Stmt] = []
    c = 0
    while c < words:
        num = 1
        while num * 2 <= min(32, words - c):
            num *= 2
        regs = [ir.BufferLoad(view, [fold_add(first, ir.const(c + q, "int32"))])
                for q in range(num)]
        addr = base + ((warp * 32) << 16)
        if load:
            stmts.append(ir.Evaluate(_op.ptx_tcgen05_ld(addr, *regs, shape="32x32b", num=num,
                                                        col=c)))
        else:
            stmts.append(ir.Evaluate(_op.ptx_tcgen05_st(addr, *regs, shape="32x32b", num=num,
                                                        col=c)))
        c += num
    stmts.append(ir.Evaluate(_op.ptx_tcgen05_wait_ld() if load else _op.ptx_tcgen05_wait_st()))
    return ir.PrimFunc([], ir.seq([ir.DeclBuffer(view), *stmts]))


def _when_tma() -> list[Any]:
    return [predicate("target", is_cuda), predicate("arch", _sm90),
            predicate("direction", _tma_direction), predicate("tensor_map", _tma_tensor_map),
            predicate("scope", _tma_scope)]


def _when_dsmem() -> list[Any]:
    return [predicate("target", is_cuda), predicate("arch", _sm90),
            predicate("operands", _dsmem_operands)]


def _checked(when: list[Any], impl: Any, call: ir.TilePrimitiveCall,
             sctx: DispatchContext) -> ir.PrimFunc:
    for pred in when:
        ok, why = pred.check(call, sctx)
        if not ok:
            fail(f"predicate '{pred.name}'" + (f": {why}" if why else ""))
    result: ir.PrimFunc = impl(call, sctx)
    return result


def copy_tma_impl(op_call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    """The seed's entry of the ``tma`` variant: ``op_call`` (a ``copy_async``) lowered in
    ``sctx`` to the PrimFunc of its bulk tensor copies, or
    :class:`~tvm.error.DispatchFail` with the reason the variant declines. The tensor map is a
    ``tirx.host_derived`` argument, encoded at launch (the module docs), not host init
    statements."""
    return _checked(_when_tma(), tma_copy, op_call, sctx)


def copy_dsmem_impl(op_call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    """The seed's entry of the ``dsmem`` variant (:func:`dsmem_copy`), or
    :class:`~tvm.error.DispatchFail` with the reason it declines."""
    return _checked(_when_dsmem(), dsmem_copy, op_call, sctx)


def register() -> None:
    cuda = predicate("target", is_cuda)
    register_dispatch("copy_async", "cuda", variant="tma", priority=10, when=_when_tma())(tma_copy)
    register_dispatch("copy_async", "cuda", variant="ldgsts", priority=20, when=[
        cuda, predicate("arch", _sm80), predicate("operands", _ldgsts_operands)])(ldgsts_copy)
    register_dispatch("copy_async", "cuda", variant="dsmem", priority=10,
                      when=_when_dsmem())(dsmem_copy)
    register_dispatch("copy_async", "cuda", variant="smem->tmem", priority=10, when=[
        cuda, predicate("arch", _sm100), predicate("operands", _smem_tmem_operands)])(smem_to_tmem)
    register_dispatch("copy_async", "cuda", variant="tmem<->local", priority=10, when=[
        cuda, predicate("arch", _sm100), predicate("operands", _tmem_local_operands)])(tmem_local)
