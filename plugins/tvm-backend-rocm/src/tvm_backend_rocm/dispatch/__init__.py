"""How the threads of a scope synchronise on AMD GPUs (``register_scope_barrier``), for core's
generic fallback variants:

| scope | barrier |
|---|---|
| warp | ``__builtin_amdgcn_wave_barrier()`` (a wavefront runs in lock step; core's warp of 32 is a whole RDNA wavefront or half a CDNA one) |
| cta | ``__syncthreads()`` |

Warpgroups and clusters are NVIDIA's; ops at those scopes decline on this target.
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import register_scope_barrier
from tvm.ir import Evaluate, Op, StringImm

__all__ = ["KIND", "register_all"]

KIND = "rocm"
BARRIERS = {"cta": "__syncthreads", "warp": "__builtin_amdgcn_wave_barrier"}


def scope_barrier(sctx: Any, scope: str) -> Any:
    call = Op.get("tirx.call_extern")(StringImm("void"), StringImm(BARRIERS[scope]),
                                      dtype="void")
    return Evaluate(call)


def register_all() -> None:
    for scope in BARRIERS:
        register_scope_barrier(KIND, scope, scope_barrier)
