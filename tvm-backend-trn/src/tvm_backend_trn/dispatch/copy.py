"""``copy`` on trn (variant ``default``, priority 10).

HBM -> SBUF is one ``nki.load`` (a DMA with the access patterns of both layouts), SBUF -> HBM
one ``nki.store``; on-chip copies with matching partition dims are a ``tensor_copy`` (which
also evicts PSUM and casts). When the partition dims differ (a transpose), the source goes
through the tensor engine: ``psum = src.T @ I`` in chunks of 128, then ``tensor_copy`` into
the destination; the identity tensor and the PSUM tile are workspaces.
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import DispatchContext, fail, register_dispatch
from tvm.ir import BufferRegion, Evaluate, PrimFunc, Range, TilePrimitiveCall, seq

from .common import (
    TRN_ONLY,
    check_layout,
    elements,
    emit,
    func,
    loop,
    nki,
    nonunit,
    on_chip,
    pdims,
    region,
    segments,
    shape_of,
    workspace,
)

__all__ = ["copy_trn", "register"]


def _p_positions(r: BufferRegion) -> list[int]:
    """Positions (among the region's non-unit dims) of the dims on partitions."""
    p = set(pdims(r.buffer))
    return [i for i, (d, _) in enumerate(nonunit(r)) if d in p]


def copy_trn(op: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    dst, src = region(op.args[0]), region(op.args[1])
    if src.buffer.scope == "global" and dst.buffer.scope == "global":
        fail("HBM -> HBM copies are not supported on Trainium; stage through SBUF")
    for r, what in ((dst, "dst"), (src, "src")):
        if r.buffer.scope not in ("global", "trn.sbuf", "trn.psum"):
            fail(f"{what} {r.buffer.name!r} is in {r.buffer.scope}; expected global, trn.sbuf or "
                 f"trn.psum")
        check_layout(r.buffer, what)
    if elements(dst) != elements(src):
        fail(f"dst {shape_of(dst)} and src {shape_of(src)} have different sizes")
    if src.buffer.scope == "global":
        return func([emit(nki.nki_load(dst, src))])
    if dst.buffer.scope == "global":
        if src.buffer.scope == "trn.psum":
            fail("DMA cannot read PSUM: copy PSUM -> SBUF first, then SBUF -> HBM")
        return func([emit(nki.nki_store(dst, src))])
    if _p_positions(dst) == _p_positions(src) and \
            [n for _, n in nonunit(dst)] == [n for _, n in nonunit(src)]:
        return func([emit(nki.nki_tensor_copy(dst, src))])
    return _transpose(op, sctx, dst, src)


def _transpose(op: TilePrimitiveCall, sctx: DispatchContext, dst: BufferRegion,
               src: BufferRegion) -> PrimFunc:
    s_dims, d_dims = nonunit(src), nonunit(dst)
    if len(s_dims) != 2 or [n for _, n in s_dims] != [n for _, n in d_dims]:
        fail("a copy that changes the partition dim must be a 2-D transpose "
             f"(src {shape_of(src)}, dst {shape_of(dst)})")
    if src.buffer.scope != "trn.sbuf":
        fail("the transpose path reads its source from SBUF (tensor engine input)")
    sp, dp = _p_positions(src), _p_positions(dst)
    if len(sp) != 1 or len(dp) != 1 or sp == dp:
        fail("partition dims of src and dst must be the two different dims of a 2-D tile")
    a_pos = sp[0]  # the src partition dim becomes dst's free dim
    b_pos = 1 - a_pos
    na, nb = s_dims[a_pos][1], s_dims[b_pos][1]
    dtype = str(src.buffer.dtype)
    ident = workspace(op, sctx, "identity", (na, na), dtype, "trn.sbuf", "Identity tensor")
    shape = (na, 128) if a_pos == 0 else (128, na)
    ann = "FP" if a_pos == 0 else "PF"
    psum = workspace(op, sctx, "transpose_psum", shape, "float32", "trn.psum",
                     "Accumulation psum buffer", annotation=ann)
    if not sctx.alloc_only:
        key = ("trn.identity", id(ident))
        if not sctx.cache_get(key):
            sctx.cache_set(key, True)
            sctx.add_init_stmt(Evaluate(nki.nki_identity(ident, na)))
    stmts = []
    for count, size, first in segments(nb, 128):
        def body(j: Any, size: int = size, first: int = first) -> Any:
            start = first + j * size
            s = _sub(src, s_dims[b_pos][0], start, size)
            d = _sub(dst, d_dims[b_pos][0], start, size)
            p = _sub(psum.full_region(), 1 - a_pos, 0, size)
            return _seq(emit(nki.nki_matmul(p, s, ident, False)),
                        emit(nki.nki_tensor_copy(d, p)))
        stmts.append(loop("j", count, body))
    return func(stmts)


def _sub(r: BufferRegion, dim: int, start: Any, size: int) -> BufferRegion:
    ranges = list(r.region)
    ranges[dim] = Range(ranges[dim].min + start if not _is_zero(ranges[dim].min) else start,
                        size)
    return BufferRegion(r.buffer, ranges)


def _is_zero(e: Any) -> bool:
    return getattr(e, "value", None) == 0


def _seq(*stmts: Any) -> Any:
    return seq(list(stmts))


def register() -> None:
    register_dispatch("copy", "trn", variant="default", priority=10, when=[TRN_ONLY])(copy_trn)
    register_dispatch("cast", "trn", variant="default", priority=10, when=[TRN_ONLY])(_cast)


def _cast(op: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    dst, src = region(op.args[0]), region(op.args[1])
    if not (on_chip(dst.buffer) and on_chip(src.buffer)):
        fail("cast runs on chip: both operands in SBUF/PSUM (DMA does not cast)")
    return copy_trn(op, sctx)
