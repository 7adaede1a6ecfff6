"""Tile-primitive variants for the ``opencl`` target kind, and how OpenCL synchronises a scope.

Called from the ``tvm_register_dispatch`` hook:

* the barrier of a work-group (``cta`` scope): ``barrier(CLK_LOCAL_MEM_FENCE |
  CLK_GLOBAL_MEM_FENCE)``, which core's generic fallback variants put after a collective op.
  OpenCL has no portable barrier for a part of a work-group (sub-groups are optional), so ops
  at ``warp`` or ``warpgroup`` scope decline on this target with core's message;
* :mod:`.reduction`: ``sum``/``max``/``min`` over rows by the whole work-group, a tree in
  ``__local`` memory (``workgroup_tree``), where the fallback would leave most work-items idle.
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import register_scope_barrier
from tvm.ir import Evaluate

from .. import op
from . import reduction

__all__ = ["KIND", "register_all", "scope_barrier"]

KIND = "opencl"


def scope_barrier(sctx: Any, scope: str) -> Any:
    """``barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)``: a tile op may write either."""
    return Evaluate(op.barrier("local_global"))


def register_all() -> None:
    register_scope_barrier(KIND, "cta", scope_barrier)
    reduction.register()
