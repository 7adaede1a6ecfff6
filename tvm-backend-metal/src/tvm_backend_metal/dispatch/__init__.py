"""Tile-primitive variants for the ``metal`` target kind, and how Metal synchronises a scope.

Called from the ``tvm_register_dispatch`` hook. Modules, one per family:

* :mod:`.elementwise`: unary/binary/fill/copy ops spread over the threads of a threadgroup
  (``threadgroup`` variant), no barrier between elementwise ops on the same elements;
* :mod:`.reduction`: ``sum``/``max``/``min`` over rows with SIMD-group reductions
  (``simd_sum``/``simd_max``/``simd_min``) and a threadgroup combine (``simdgroup`` variant);
* :mod:`.gemm`: ``gemm`` on 8x8 SIMD-group matrices (``simdgroup_matrix`` variant).

Core's generic ``fallback`` variant stays available for everything else; it synchronises the
threads of a threadgroup with the barriers registered here.
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import register_scope_barrier
from tvm.ir import Evaluate

from .. import op

__all__ = ["register_all", "scope_barrier"]

KIND = "metal"


def scope_barrier(sctx: Any, scope: str) -> Any:
    """The barrier of a scope on Metal: ``threadgroup_barrier`` for a threadgroup (CTA),
    ``simdgroup_barrier`` for a SIMD group (warp); both order device and threadgroup memory,
    since a tile op may write either."""
    if scope == "cta":
        return Evaluate(op.threadgroup_barrier("device_threadgroup"))
    return Evaluate(op.simdgroup_barrier("device_threadgroup"))


def register_all() -> None:
    register_scope_barrier(KIND, "cta", scope_barrier)
    register_scope_barrier(KIND, "warp", scope_barrier)
    # The variant modules load when the hook runs, not when the plugin is imported (a backend
    # that is incompatible or fails its checks never pays for them).
    from . import elementwise, gemm, reduction  # noqa: PLC0415 - import-time budget (variants)

    for module in (elementwise, gemm, reduction):
        module.register()
