"""Tile-primitive dispatch variants of target kind ``example``: none of its own yet.

Core's generic variants serve this kind. A variant for it is registered here, e.g.::

    from tvm.tirx.operator.tile_primitive import register_dispatch

    @register_dispatch("add", "example", variant="vectorized")
    def add_vectorized(op_call, sctx): ...

and :func:`register_all` (called by the plugin's ``tvm_register_dispatch`` hook) imports the
modules that do so.
"""

from __future__ import annotations

__all__ = ["register_all"]


def register_all() -> None:
    """Register this backend's variants (none: core's generic ones apply)."""
