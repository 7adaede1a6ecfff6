"""``sum``, ``max``, ``min`` on trn (variant ``reduction``, p0): ``tensor_reduce`` over free
axes of an SBUF/PSUM source into an SBUF destination. Reducing across partitions is declined.
With ``accum=True`` the result goes to a ``partial`` workspace and is combined into dst."""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import DispatchContext, fail, register_dispatch
from tvm.ir import BufferRegion, IntImm, PrimFunc, TilePrimitiveCall

from .common import (
    TRN_ONLY,
    check_layout,
    emit,
    func,
    nki,
    nonunit,
    on_chip,
    pdims,
    region,
    shape_of,
    workspace,
)

__all__ = ["COMBINE", "normalize_axes", "reduction_trn", "register"]

COMBINE = {"sum": "add", "max": "maximum", "min": "minimum"}


def normalize_axes(axes: Any, ndim: int) -> list[int]:
    items = axes if isinstance(axes, (list, tuple)) else [axes]
    out = []
    for a in items:
        v = a.value if isinstance(a, IntImm) else a
        if not isinstance(v, int) or not -ndim <= v < ndim:
            fail(f"reduction axis {a} out of range for a {ndim}-D source")
        out.append(v % ndim)
    return sorted(set(out))


def check_reduce(dst: BufferRegion, src: BufferRegion, axes: list[int]) -> None:
    if not on_chip(src.buffer):
        fail(f"src {src.buffer.name!r} must be in trn.sbuf or trn.psum")
    if dst.buffer.scope != "trn.sbuf":
        fail(f"dst {dst.buffer.name!r} must be in trn.sbuf")
    check_layout(src.buffer, "src")
    check_layout(dst.buffer, "dst")
    p = set(pdims(src.buffer))
    for a in axes:
        if a in p and shape_of(src)[a] > 1:
            fail(f"axis {a} of {src.buffer.name!r} lies on partitions; Trainium reduces free "
                 f"axes only")
    kept = [n for d, n in nonunit(src) if d not in axes]
    if kept != [n for _, n in nonunit(dst)]:
        fail(f"dst {shape_of(dst)} does not match src {shape_of(src)} reduced over {axes}")


def reduction_trn(op: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    dst, src = region(op.args[0]), region(op.args[1])
    axes = normalize_axes(op.args[2], len(src.region))
    accum = bool(getattr(op.args[3], "value", op.args[3]))
    check_reduce(dst, src, axes)
    name = op.op_name
    if not accum:
        return func([emit(nki.nki_tensorreduce(dst, src, name, False, *axes))])
    shape = shape_of(dst)
    p = set(pdims(dst.buffer))
    ann = "".join("P" if d in p else "F" for d in range(len(shape)))
    partial = workspace(op, sctx, "partial", shape, "float32", "trn.sbuf",
                        "Partial reduce buffer", annotation=ann)
    return func([emit(nki.nki_tensorreduce(partial, src, name, False, *axes)),
                 emit(nki.nki_tensortensor(dst, dst, partial, COMBINE[name]))])


def register() -> None:
    for name in COMBINE:
        register_dispatch(name, "trn", variant="reduction", priority=0,
                          when=[TRN_ONLY])(reduction_trn)
