"""Tile primitives on Vulkan: core's generic variants, synchronised by the workgroup barrier.

Core's ``fallback`` variants deal a CTA-scope op's elements round-robin to the workgroup's
invocations and put the scope's barrier after it; this module says what that barrier is on
Vulkan (:func:`~tvm_backend_vulkan.op.workgroup_barrier`). A subgroup is not a fixed 32 lanes
on Vulkan (lavapipe has 8, AMD 64), so no warp-scope barrier is registered: a warp-scope tile
op on Vulkan fails with core's message naming the missing barrier.
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import register_scope_barrier

from ..op import workgroup_barrier

__all__ = ["KIND", "register_all", "scope_barrier"]

KIND = "vulkan"


def scope_barrier(sctx: Any, scope: str) -> Any:
    """The barrier of a CTA (workgroup) on Vulkan."""
    return workgroup_barrier()


def register_all() -> None:
    register_scope_barrier(KIND, "cta", scope_barrier)
