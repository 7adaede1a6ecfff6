"""Tile-primitive dispatch of the CUDA backend: scope barriers and fast variants.

Imported by the ``tvm_register_dispatch`` hook (:func:`register_all`), inside the backend's
registration transaction, so everything registered here is owned by ``tvm-backend-cuda``.

- :mod:`.barriers`: the barrier of every multi-thread scope (warp, warpgroup, cta, cluster), so
  core's generic fallback works at those scopes on CUDA;
- :mod:`.reduction`: ``sum``/``max``/``min`` through warp shuffles (variant ``warp_shuffle``).
"""

from __future__ import annotations

__all__ = ["register_all"]


def register_all() -> None:
    """Register the barriers and the variants (a re-load after a rollback registers again)."""
    from . import barriers, reduction

    barriers.register()
    reduction.register()
