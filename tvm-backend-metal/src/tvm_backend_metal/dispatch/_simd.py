"""What the Metal variants share: the SIMD-group view of the threads around a call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvm.error import DispatchFail
from tvm.ir import Evaluate, IntImm

from .. import op

SIMD_WIDTH = 32


@dataclass(frozen=True)
class SimdThreads:
    """The calling thread as a lane of one of ``groups`` SIMD groups that share the call."""

    lane: Any  # index in the SIMD group, 0..31
    group: Any  # SIMD group index among those running the call
    groups: int
    threads: int


def simd_threads(sctx: Any) -> SimdThreads:
    """Lane and SIMD group of the calling thread at a ``cta`` or ``warp`` scope; declines when
    the scope's threads are not whole SIMD groups of a constant count."""
    if sctx.scope_kind not in ("cta", "warp"):
        raise DispatchFail(f"scope is {sctx.scope_kind}; this variant runs at cta or warp scope")
    n = sctx.thread_extent()
    if not isinstance(n, IntImm):
        raise DispatchFail(f"the {sctx.scope_kind} has a symbolic thread count {n}")
    if n.value % SIMD_WIDTH:
        raise DispatchFail(f"the {sctx.scope_kind} has {n.value} threads, not a multiple of the "
                           f"SIMD-group width {SIMD_WIDTH}")
    tid = sctx.thread_index()
    groups = n.value // SIMD_WIDTH
    lane = tid if groups == 1 and sctx.scope_kind == "warp" else tid % SIMD_WIDTH
    group = tid // SIMD_WIDTH if groups > 1 else IntImm("int32", 0)
    return SimdThreads(lane, group, groups, n.value)


def barrier_after(sctx: Any, *buffers: Any) -> Any:
    """The barrier that makes the call's writes visible to its scope: only threadgroup memory
    is fenced when every written buffer lives there."""
    mem = ("threadgroup" if all(b.scope in ("shared", "shared.dyn") for b in buffers)
           else "device_threadgroup")
    if sctx.scope_kind == "warp":
        return Evaluate(op.simdgroup_barrier(mem))
    return Evaluate(op.threadgroup_barrier(mem))


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)
