"""Helpers shared by the trn dispatch variants."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from tvm import ir
from tvm.backend.sdk import DispatchContext, fail

from .. import op as nki
from ..access import ON_CHIP, AccessError, p_dims, region_of
from ..layout import is_trainium_layout, trainium_layout

__all__ = [
    "TRN_ONLY", "Operand", "classify", "emit", "func", "loop", "region", "require_trn",
    "shape_of", "static", "workspace",
]

PARTITIONS = 128
WORKSPACE_KEY = "trn.workspace"
_RUN_ALLOC = "Run tvm.tirx.trn.transform.TrnPrivateBufferAlloc first."


def require_trn(op_call: ir.TilePrimitiveCall, sctx: DispatchContext) -> None:
    if not (sctx.is_target("trn") and sctx.scope_kind == "thread"):
        fail("requires Trainium target and thread exec_scope")


def _trn_thread(op_call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    if sctx.is_target("trn") and sctx.scope_kind == "thread":
        return True, ""
    return False, "requires Trainium target and thread exec_scope"


TRN_ONLY = _trn_thread


def region(arg: Any) -> ir.BufferRegion:
    """:func:`~tvm_backend_trn.access.region_of`, declining the variant where it fails."""
    try:
        return region_of(arg)
    except AccessError as err:
        fail(str(err))


def static(x: Any) -> int:
    if isinstance(x, ir.IntImm):
        return x.value
    if isinstance(x, int):
        return x
    fail(f"Trainium needs static extents, got {x}")


def shape_of(r: ir.BufferRegion) -> list[int]:
    return [static(rg.extent) for rg in r.region]


def nonunit(r: ir.BufferRegion) -> list[tuple[int, int]]:
    """``(dim, extent)`` of the region's dims with extent > 1."""
    return [(d, n) for d, n in enumerate(shape_of(r)) if n > 1]


def on_chip(buf: ir.Buffer) -> bool:
    return buf.scope in ON_CHIP


def check_layout(buf: ir.Buffer, what: str) -> None:
    """Decline unless an on-chip buffer has a Trainium layout (or none: the default)."""
    if on_chip(buf) and buf.layout is not None and not is_trainium_layout(buf.layout):
        fail(f"{what} {buf.name!r} in {buf.scope} has a non-Trainium layout")


def pdims(buf: ir.Buffer) -> list[int]:
    try:
        return p_dims(buf)
    except AccessError as err:
        fail(str(err))


def func(stmts: Sequence[ir.Stmt]) -> ir.PrimFunc:
    """A variant's result: a parameterless PrimFunc over the call's own buffers."""
    return ir.PrimFunc([], ir.seq([s for s in stmts if s is not None]))


def emit(call: ir.PrimExpr) -> ir.Stmt:
    return ir.Evaluate(call)


def loop(name: str, extent: int, body_fn: Any, kind: str = "affine") -> ir.Stmt:
    """``for v in range(extent): body_fn(v)``; a single iteration is inlined."""
    if extent == 1:
        return body_fn(ir.IntImm("int32", 0))
    v = ir.Var(name, "int32")
    return ir.For(v, 0, extent, ir.ForKind.SERIAL, body_fn(v), annotations={"nki.loop": kind})


def segments(extent: int, tile: int) -> list[tuple[int, int, int]]:
    """``(count, size, first)``: ``count`` full tiles of ``size`` from ``first``, plus a tail."""
    full, rest = divmod(extent, tile)
    out = []
    if full:
        out.append((full, tile, 0))
    if rest:
        out.append((1, rest, full * tile))
    return out


def workspace(op_call: ir.TilePrimitiveCall, sctx: DispatchContext, name: str,
              shape: Sequence[int], dtype: str, scope: str, what: str,
              annotation: str | None = None) -> ir.Buffer:
    """The workspace buffer ``name`` of the call. In alloc-only mode (TrnPrivateBufferAlloc)
    it is created and recorded; otherwise it must already be in the call's workspace."""
    have = op_call.workspace.get(name)
    if have is not None:
        got = [static(s) for s in have.shape]
        if got != list(shape) or have.scope != scope:
            fail(f"workspace {name!r} must be {scope} {list(shape)}, got {have.scope} {got}")
        return have
    if not sctx.alloc_only:
        fail(f"{what} must be specified in workspace. {_RUN_ALLOC}")
    ann = annotation or ("P" + "F" * (len(shape) - 1))
    buf = ir.Buffer(name, list(shape), dtype, scope=scope,
                    layout=trainium_layout(ann, tuple(shape), is_psum=scope == "trn.psum"))
    sctx.shared_state.setdefault(WORKSPACE_KEY, {})[name] = buf
    return buf


class Operand:
    """A source operand relative to the destination region: ``scalar``, ``tile`` (same
    shape) or ``column`` (one value per partition, broadcast along the free dims)."""

    def __init__(self, kind: str, value: Any) -> None:
        self.kind = kind
        self.value = value


def classify(arg: Any, dst: ir.BufferRegion, what: str) -> Operand:
    if isinstance(arg, (int, float)):
        return Operand("scalar", ir.FloatImm("float32", float(arg)))
    if isinstance(arg, (ir.FloatImm, ir.IntImm)):
        return Operand("scalar", ir.FloatImm("float32", float(arg.value)))
    if isinstance(arg, ir.PrimExpr) and not isinstance(arg, ir.BufferLoad):
        fail(f"{what} must be a constant, a tile or a [P, 1] column on Trainium, got {arg}")
    r = region(arg)
    if not on_chip(r.buffer):
        fail(f"{what} {r.buffer.name!r} is in {r.buffer.scope}; Trainium engines read SBUF or "
             f"PSUM")
    check_layout(r.buffer, what)
    src = [n for _, n in nonunit(r)]
    if src == [n for _, n in nonunit(dst)]:
        return Operand("tile", r)
    dst_p = set(pdims(dst.buffer))
    column = [n for d, n in nonunit(dst) if d in dst_p]
    if src == column and set(pdims(r.buffer)) & {d for d, _ in nonunit(r)}:
        return Operand("column", r)
    fail(f"{what} of shape {shape_of(r)} neither matches the destination {shape_of(dst)} nor "
         f"is one value per partition")


def opname(value: Any) -> str:
    return value.value if isinstance(value, ir.StringImm) else str(value)


def elements(r: ir.BufferRegion) -> int:
    return math.prod(shape_of(r))


__all__ += ["PARTITIONS", "check_layout", "elements", "nki", "nonunit", "on_chip", "opname",
            "pdims", "segments"]
