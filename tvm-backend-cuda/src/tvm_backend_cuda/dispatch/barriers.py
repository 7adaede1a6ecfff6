"""The barrier of each execution scope on CUDA (``register_scope_barrier("cuda", scope, fn)``).

Core's fallback deals a collective op's elements round-robin to the scope's threads and then
asks for the scope's barrier, so every thread sees every element afterwards:

| scope | barrier |
|---|---|
| warp | ``__syncwarp()`` |
| warpgroup | ``bar.sync 1 + warpgroup_id, 128`` (a named barrier per warpgroup; id 0 is ``__syncthreads``); ``__syncthreads()`` when the CTA is one warpgroup |
| cta | ``__syncthreads()`` |
| cluster | ``barrier.cluster.arrive`` + ``wait`` (sm_90+) |

The statements are calls of the backend's ``T.cuda`` intrinsics when they are registered (they
print as ``T.cuda.cta_sync()``), else ``call_extern`` of the CUDA builtins.
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import DispatchContext, register_scope_barrier
from tvm.error import DispatchFail
from tvm.ir import Call, Evaluate, IntImm, Op, Stmt, StringImm

from .common import needs_arch, sm_version

__all__ = ["register"]


def _intrin(name: str, *args: Any) -> Call | None:
    full = f"tirx.cuda.{name}"
    if not Op.exists(full):
        return None
    return Op.get(full)(*args)


def _extern(func: str) -> Call:
    return Op.get("tirx.call_extern")(StringImm("void"), StringImm(func), dtype="void")


def _sync(intrin: str, builtin: str) -> Stmt:
    call = _intrin(intrin)
    return Evaluate(call if call is not None else _extern(builtin))


def warp_barrier(sctx: DispatchContext, scope: str) -> Stmt:
    return _sync("warp_sync", "__syncwarp")


def cta_barrier(sctx: DispatchContext, scope: str) -> Stmt:
    return _sync("cta_sync", "__syncthreads")


def warpgroup_barrier(sctx: DispatchContext, scope: str) -> Stmt:
    cta = sctx.thread_extent("cta")
    if isinstance(cta, IntImm) and cta.value <= 128:
        return cta_barrier(sctx, "cta")
    tid = sctx.threads.named.get("warpgroup_id")
    group = tid if tid is not None else sctx.thread_index("cta") // 128
    call = _intrin("warpgroup_sync", group + 1)
    if call is None:
        raise DispatchFail("a warpgroup barrier needs the T.cuda.warpgroup_sync intrinsic, which "
                           "is not registered")
    return Evaluate(call)


def cluster_barrier(sctx: DispatchContext, scope: str) -> Stmt:
    arch = sm_version(sctx.target)
    if arch is not None and arch < 90:
        raise DispatchFail("cluster barriers "
                           + needs_arch("sm_90", sctx.target.attrs.get("arch"), or_newer=True)
                           .replace("needs", "need", 1))
    call = _intrin("cluster_sync")
    if call is None:
        raise DispatchFail("a cluster barrier needs the T.cuda.cluster_sync intrinsic, which is "
                           "not registered")
    return Evaluate(call)


def register() -> None:
    register_scope_barrier("cuda", "warp", warp_barrier)
    register_scope_barrier("cuda", "warpgroup", warpgroup_barrier)
    register_scope_barrier("cuda", "cta", cta_barrier)
    register_scope_barrier("cuda", "cluster", cluster_barrier)
