"""CUDA's layout vocabulary (``tvm.tirx.layout`` names the CUDA backend provides).

Axes: ``tx`` (thread in the CTA), ``tid_in_wg`` (thread in the warpgroup), ``bx``/``by``/``bz``
(CTA in the grid), ``cbx``/``cby``/``cbz`` (CTA in the cluster) are thread axes; ``TLane`` and
``TCol`` (tensor memory lanes and 32-bit columns, sm_100a) are memory axes. Functions:
:func:`wg_local_layout`, :func:`tcgen05_atom_layout`.
"""

from __future__ import annotations

from typing import Any

from tvm.ir.dtype import DataType
from tvm.ir.layout import Axis, Iter, TileLayout

__all__ = ["THREAD_AXES", "TMEM_AXES", "layout_names", "tcgen05_atom_layout", "wg_local_layout"]

THREAD_AXES = ("tx", "tid_in_wg", "bx", "by", "bz", "cbx", "cby", "cbz")
TMEM_AXES = ("TLane", "TCol")


def wg_local_layout(cols: Any, rows: Any = 128) -> TileLayout:
    """A warpgroup's ``(rows, cols)`` register tile: row ``r`` in thread ``r`` of the
    warpgroup (``tid_in_wg``), its ``cols`` elements contiguous in that thread's registers."""
    return TileLayout([Iter(rows, 1, Axis.get("tid_in_wg")), Iter(cols, 1, "m")])


#: the tcgen05.ld/st shapes of the PTX ISA; the register layout of the .16x* ones is not built here
_TCGEN05_SHAPES = ("32x32b", "16x64b", "16x128b", "16x256b")


def tcgen05_atom_layout(instr_shape: str, tensor_shape: Any, dtype: Any) -> TileLayout:
    """The registers a warpgroup's ``tcgen05.ld``/``st`` of shape ``instr_shape`` fill, as the
    layout of a ``tensor_shape`` (rows, columns) tile of ``dtype`` elements: for ``.32x32b``
    thread ``t`` of the warpgroup holds row ``t`` (warp ``w`` reaches TMEM lanes
    ``32w..32w+31``), its columns contiguous in its registers (two 16-bit elements to a 32-bit
    register). That is the shape the tile copy between TMEM and registers moves
    (``Tx.copy_async`` tmem<->local). The ``.16x64b``/``.16x128b``/``.16x256b`` shapes spread a
    row over several threads; they are refused (no variant here moves them)."""
    if instr_shape not in _TCGEN05_SHAPES:
        raise ValueError(f"tcgen05_atom_layout: instr_shape must be one of "
                         f"{list(_TCGEN05_SHAPES)}, got {instr_shape!r}")
    if instr_shape != "32x32b":
        raise NotImplementedError(f"tcgen05_atom_layout: the .{instr_shape} register layout is "
                                  f"not built here (the TMEM copies move .32x32b); use "
                                  f"'32x32b', one row per thread")
    bits = DataType(dtype).bits
    if bits not in (16, 32):
        raise ValueError(f"tcgen05_atom_layout: dtype must be 16 or 32 bits wide, got {dtype} "
                         f"({bits} bits)")
    if len(tensor_shape) != 2:
        raise ValueError(f"tcgen05_atom_layout: tensor_shape must be (rows, cols), got "
                         f"{tensor_shape!r}")
    rows, cols = (int(x) for x in tensor_shape)
    if rows != 128:
        raise ValueError(f"tcgen05_atom_layout: .32x32b covers the 128 TMEM lanes of a "
                         f"warpgroup, so rows must be 128, got {rows}")
    per_reg = 32 // bits
    if cols < per_reg or cols % per_reg:
        raise ValueError(f"tcgen05_atom_layout: {cols} columns of {dtype} do not fill whole "
                         f"32-bit registers ({per_reg} per register)")
    return wg_local_layout(cols, rows)


def layout_names() -> dict[str, Any]:
    """What the ``tvm_layout_names`` hook returns: the axes above and the layout functions."""
    names: dict[str, Any] = {n: Axis(n, "thread") for n in THREAD_AXES}
    names.update({n: Axis(n, "memory") for n in TMEM_AXES})
    names["wg_local_layout"] = wg_local_layout
    names["tcgen05_atom_layout"] = tcgen05_atom_layout
    return names
