"""CUDA's layout vocabulary (``tvm.tirx.layout`` names the CUDA backend provides).

Axes: ``tx`` (thread in the CTA), ``tid_in_wg`` (thread in the warpgroup), ``bx``/``by``/``bz``
(CTA in the grid), ``cbx``/``cby``/``cbz`` (CTA in the cluster) are thread axes; ``TLane`` and
``TCol`` (tensor memory lanes and 32-bit columns, sm_100a) are memory axes. Functions:
:func:`wg_local_layout`.
"""

from __future__ import annotations

from typing import Any

from tvm.ir.layout import Axis, Iter, TileLayout

__all__ = ["THREAD_AXES", "TMEM_AXES", "layout_names", "wg_local_layout"]

THREAD_AXES = ("tx", "tid_in_wg", "bx", "by", "bz", "cbx", "cby", "cbz")
TMEM_AXES = ("TLane", "TCol")


def wg_local_layout(cols: Any, rows: Any = 128) -> TileLayout:
    """A warpgroup's ``(rows, cols)`` register tile: row ``r`` in thread ``r`` of the
    warpgroup (``tid_in_wg``), its ``cols`` elements contiguous in that thread's registers."""
    return TileLayout([Iter(rows, 1, Axis.get("tid_in_wg")), Iter(cols, 1, "m")])


def layout_names() -> dict[str, Any]:
    """What the ``tvm_layout_names`` hook returns: the axes above and the layout functions."""
    names: dict[str, Any] = {n: Axis(n, "thread") for n in THREAD_AXES}
    names.update({n: Axis(n, "memory") for n in TMEM_AXES})
    names["wg_local_layout"] = wg_local_layout
    return names
