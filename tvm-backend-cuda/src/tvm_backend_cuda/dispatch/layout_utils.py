"""How a register layout divides its dimensions between threads and each thread's registers
(the seed's ``operator.tile_primitive.layout_utils``): the question a register-to-register
``cast`` asks first, since it converts each thread's own elements and moves nothing between
threads."""

from __future__ import annotations

from typing import Any

from tvm.ir import IntImm, TileLayout

__all__ = ["cast_layout_supported_for_local", "get_layout_thread_local_partition"]

#: per thread axis, its shard dimensions and their extents
ThreadGroups = dict[Any, tuple[list[int], list[int]]]


def get_layout_thread_local_partition(layout: Any
                                      ) -> tuple[ThreadGroups, list[int], list[int]] | None:
    """``(thread_groups, local_dims, local_extents)`` of a register ``layout``: for each thread
    axis (``tx``, ``laneid``, ``warpid``, ...; in the order the layout first uses it) the shard
    dimensions bound to it and their extents, then the dimensions each thread keeps in its own
    registers (memory axes) and their extents. None where the layout is not a
    :class:`~tvm.ir.TileLayout`, binds no thread, keeps nothing per thread, or replicates over a
    thread axis (its elements would be held by several threads at once) or has a symbolic
    extent."""
    if not isinstance(layout, TileLayout):
        return None
    if any(it.axis.is_thread for it in layout.replica):
        return None
    groups: ThreadGroups = {}
    local_dims: list[int] = []
    local_extents: list[int] = []
    for dim, it in enumerate(layout.shard):
        if not isinstance(it.extent, IntImm):
            return None  # a symbolic extent: no static partition
        extent = it.extent.value
        if it.axis.is_thread:
            dims, extents = groups.setdefault(it.axis, ([], []))
            dims.append(dim)
            extents.append(extent)
        else:
            local_dims.append(dim)
            local_extents.append(extent)
    if not groups or not local_dims:
        return None
    return groups, local_dims, local_extents


def cast_layout_supported_for_local(layout: Any) -> bool:
    """Whether a register ``cast`` can convert ``layout``'s elements where they lie: it has a
    thread/register partition (:func:`get_layout_thread_local_partition`)."""
    return get_layout_thread_local_partition(layout) is not None
