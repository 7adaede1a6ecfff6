"""Tile-primitive variants of target kind ``example``, and how its threads synchronise.

:func:`register_all` runs from the plugin's ``tvm_register_dispatch`` hook. It registers:

- the scope barrier. The example device runs a kernel's threads one after another (its code
  is C on this CPU), so its barrier is ``SERIAL``: a collective call (``Tx.cta.sum``) is done by
  the scope's thread 0 and needs no barrier. A GPU registers a function building its barrier
  statement per scope instead (``__syncthreads()`` for ``cta``); without one, core's generic
  variants decline wide-scope calls and say which barrier is missing;
- one variant: ``Tx.fma`` at thread scope on float32 becomes loops of the device's own
  ``T.example.fma`` intrinsic (priority 10). Everything else is lowered by core's generic
  ``fallback`` variant (priority -100), so a new backend runs every tile primitive from its
  first day and replaces what it can do better, one variant at a time.
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import (
    SERIAL,
    Operand,
    bound_args,
    fail,
    predicate,
    region_of,
    register_dispatch,
    register_scope_barrier,
)
from tvm.ir import BufferStore, For, ForKind, PrimFunc, Stmt, Var, const

from ..op import fma
from ..tags import KIND

__all__ = ["lower_fma", "register_all"]


def register_all() -> None:
    """Register this backend's scope barrier and variants."""
    register_scope_barrier(KIND, "*", SERIAL)
    register_dispatch("fma", KIND, variant="example_fma", priority=10,
                      when=[predicate("float32", _float32)])(lower_fma)


def _float32(call: Any, sctx: Any) -> tuple[bool, str]:
    dtype = region_of(bound_args(call)["dst"]).buffer.dtype
    return str(dtype) == "float32", f"T.example.fma is float32 only, dst is {dtype}"


def lower_fma(call: Any, sctx: Any) -> PrimFunc:
    """``dst[i...] = T.example.fma(src1[i...], src2[i...], src3[i...])``, one loop per
    dimension; sources broadcast over ``dst`` (a scalar source is the same everywhere)."""
    if sctx.scope_kind != "thread":
        fail("only at thread scope (the generic fallback spreads wider scopes)")
    args = bound_args(call)
    dst = region_of(args["dst"])
    srcs = [Operand(args[name], name).bind(dst.shape) for name in ("src1", "src2", "src3")]
    idx = [Var(f"i{k}", "int32") for k in range(len(dst.shape))]
    value = fma(*(s.load(idx) for s in srcs))
    body: Stmt = BufferStore(dst.buffer, value, [r.min + i for r, i in zip(dst.region, idx)])
    for var, extent in reversed(list(zip(idx, dst.shape))):
        body = For(var, const(0, "int32"), extent, ForKind.SERIAL, body)
    return PrimFunc([], body)
