"""The CUDA kernel-authoring helpers (the seed's ``tvm.backend.cuda.lang``; also reachable as
``tvm.tirx.cuda.lang`` once the backend is loaded).

Python objects used inside ``@T.prim_func`` bodies that emit ordinary IR: ``x = Helper(...)``
places the helper's setup statements (allocations, barrier initialisation) at that point and
binds ``x``; its methods return statements or expressions. The printed function is plain
TVMScript (``T.alloc_buffer``, ``T.decl_buffer``, ``T.ptx.mbarrier.*``), which parses back to
the same IR without the helpers.

| module | names |
|---|---|
| :mod:`.pipeline` | MBarrier, TMABar, TCGen05Bar, Pipeline, PipelineState |
| :mod:`.alloc_pool` | SMEMPool, TMEMPool, TMEMStages |
| :mod:`.warp_role` | WarpRole, WarpgroupRole |
| :mod:`.smem_desc` | SmemDescriptor |
| :mod:`.tile_scheduler` | BaseTileScheduler, PersistentTileScheduler2D, ClusterPersistentScheduler2D, GroupMajor3D, FlashAttentionLinearScheduler, FlashAttentionLPTScheduler, RankAwareGroupMajorTileScheduler, IndexedTripleTileScheduler |

The swizzled shared layouts live beside the copy variants, in
:mod:`tvm_backend_cuda.dispatch.tma_utils` (``SwizzleMode``, ``mma_shared_layout``, ...), and are
re-exported here. Names load on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_HELPER_MODULES = {
    "MBarrier": ".pipeline",
    "Pipeline": ".pipeline",
    "PipelineState": ".pipeline",
    "TCGen05Bar": ".pipeline",
    "TMABar": ".pipeline",
    "BaseTileScheduler": ".tile_scheduler",
    "ClusterPersistentScheduler2D": ".tile_scheduler",
    "FlashAttentionLPTScheduler": ".tile_scheduler",
    "FlashAttentionLinearScheduler": ".tile_scheduler",
    "GroupMajor3D": ".tile_scheduler",
    "IndexedTripleTileScheduler": ".tile_scheduler",
    "PersistentTileScheduler2D": ".tile_scheduler",
    "RankAwareGroupMajorTileScheduler": ".tile_scheduler",
    "SMEMPool": ".alloc_pool",
    "TMEMPool": ".alloc_pool",
    "TMEMStages": ".alloc_pool",
    "WarpRole": ".warp_role",
    "WarpgroupRole": ".warp_role",
    "SmemDescriptor": ".smem_desc",
    "SwizzleMode": "..dispatch.tma_utils",
    "get_swizzle_mode_from_layout": "..dispatch.tma_utils",
    "mma_atom_layout": "..dispatch.tma_utils",
    "mma_atom_shape": "..dispatch.tma_utils",
    "mma_shared_layout": "..dispatch.tma_utils",
    "tma_shared_layout": "..dispatch.tma_utils",
}

#: every name the table serves, in sorted order
__all__ = sorted(_HELPER_MODULES)

_SUBMODULES = frozenset({"alloc_pool", "pipeline", "smem_desc", "tile_scheduler", "warp_role"})


def __getattr__(name: str) -> Any:
    module_name = _HELPER_MODULES.get(name)
    if module_name is not None:
        value = getattr(import_module(module_name, __name__), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)
