"""Elementwise tile primitives on Metal: variant ``threadgroup``.

The elements are dealt round-robin to the threads of the threadgroup (consecutive threads take
consecutive elements, so device-memory accesses coalesce), as core's generic lowering does; the
difference is the barrier that follows: when the destination lives in threadgroup memory it is
``threadgroup_barrier(mem_flags::mem_threadgroup)``, which fences only threadgroup memory,
instead of a fence of device memory too. Thread-scope calls and other destinations are left to
the generic ``fallback`` variant.
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import (
    TILE_OPS,
    bound_args,
    fallback_impl,
    predicate,
    region_of,
    register_dispatch,
)
from tvm.ir import Evaluate, Mutator, PrimFunc
from tvm.ir import expr as E

from .. import op

__all__ = ["ELEMENTWISE_OPS", "register"]

VARIANT = "threadgroup"
PRIORITY = 10


def _elementwise_ops() -> tuple[str, ...]:
    return tuple(name for name, spec in TILE_OPS.items()
                 if spec.family in ("copy", "cast", "fill", "unary", "binary", "fma", "select")
                 and name not in ("copy_async", "permute_layout"))


ELEMENTWISE_OPS: tuple[str, ...] = ()


def _cta_into_threadgroup_memory(call: Any, sctx: Any) -> tuple[bool, str]:
    if not sctx.is_cta:
        return False, f"scope is {sctx.scope_kind}, not cta"
    if sctx.is_single_thread():
        return False, "the threadgroup has one thread"
    dst = region_of(bound_args(call)["dst"]).buffer
    if dst.scope not in ("shared", "shared.dyn"):
        return False, f"dst `{dst.name}` is in {dst.scope!r} memory, not threadgroup memory"
    return True, ""


def _lower(call: Any, sctx: Any) -> Any:
    func = fallback_impl(call.op_name)(call, sctx)
    return PrimFunc(func.params, _narrow_barriers(func.body), func.buffer_map, func.attrs)


def _narrow_barriers(body: Any) -> Any:
    """The generic lowering's barrier fences device memory too; only threadgroup memory was
    written, so fence that alone."""
    target = op.op_name("threadgroup_barrier")

    class _Narrow(Mutator):
        def visit_Evaluate(self, s: Evaluate) -> Any:
            v = s.value
            if isinstance(v, E.Call) and v.op.name == target:
                return Evaluate(op.threadgroup_barrier("threadgroup"))
            return s

    return _Narrow().visit(body)


def register() -> None:
    global ELEMENTWISE_OPS
    ELEMENTWISE_OPS = _elementwise_ops()
    when = [predicate("cta_into_threadgroup_memory", _cta_into_threadgroup_memory)]
    for name in ELEMENTWISE_OPS:
        register_dispatch(name, "metal", variant=VARIANT, priority=PRIORITY, when=when)(_lower)
