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

__all__ = ["THREAD_AXES", "TMEM_AXES", "layout_names", "tcgen05_atom_layout",
           "tmem_datapath_layout", "wg_local_layout"]

#: CUDA's thread axes: name -> (scope, subscope), the units it counts and within what
THREAD_AXES = {"tx": ("cta", "thread"), "tid_in_wg": ("warpgroup", "thread"),
               "bx": ("thread", "cta"), "by": ("thread", "cta"), "bz": ("thread", "cta"),
               "cbx": ("cluster", "cta"), "cby": ("cluster", "cta"), "cbz": ("cluster", "cta")}

# How a layout's thread iterators fuse onto one axis when the layout spans threads within a
# wider scope (32 lanes a warp, 4 warps a warpgroup, 128 threads a warpgroup):
# axis -> {(subscope, scope) of the layout: (axis it becomes, stride factor)}.
_FUSIONS: dict[str, dict[tuple[str, str], tuple[str, int]]] = {
    "laneid": {("thread", "warpgroup"): ("tid_in_wg", 1), ("thread", "cta"): ("tx", 1)},
    "warpid": {("thread", "cta"): ("tx", 32)},
    "wgid": {("thread", "cta"): ("tx", 128), ("warp", "cta"): ("warpid", 4)},
    "tid_in_wg": {("thread", "cta"): ("tx", 1)},
    "wid_in_wg": {("thread", "warpgroup"): ("tid_in_wg", 32), ("thread", "cta"): ("tx", 32),
                  ("warp", "cta"): ("warpid", 1)},
}
# The reverse: an axis split at a scope in between (a layout of threads of a CTA read as warps
# of lanes): axis -> {scope: (axis counting those scopes, axis within one, units in one)}.
_SPLITS: dict[str, dict[str, tuple[str, str, int]]] = {
    "tx": {"warp": ("warpid", "laneid", 32), "warpgroup": ("wgid", "tid_in_wg", 128)},
    "warpid": {"warpgroup": ("wgid", "wid_in_wg", 4)},
    "tid_in_wg": {"warp": ("wid_in_wg", "laneid", 32)},
}
_GENERIC_SCOPES = {"laneid": ("warp", "thread"), "warpid": ("cta", "warp"),
                   "wgid": ("cta", "warpgroup"), "wid_in_wg": ("warpgroup", "warp")}
TMEM_AXES = ("TLane", "TCol")


def wg_local_layout(cols: Any, rows: Any = 128) -> TileLayout:
    """A warpgroup's ``(rows, cols)`` register tile: row ``r`` in thread ``r`` of the
    warpgroup (``tid_in_wg``), its ``cols`` elements contiguous in that thread's registers."""
    return TileLayout([Iter(rows, 1, Axis.get("tid_in_wg")), Iter(cols, 1, "m")])


#: tcgen05 MMA datapath -> the rows (M) of its accumulator in tensor memory
_DATAPATH_ROWS = {"D": 128, "F": 64}


def tmem_datapath_layout(datapath: str, rows: int, cols: int) -> TileLayout:
    """Where a tcgen05 MMA of datapath ``datapath`` (PTX ISA, "Data path layout
    organization") keeps its ``(rows, cols)`` accumulator in tensor memory: ``"D"`` (M = 128)
    puts row ``r`` in TMEM lane ``r``; ``"F"`` (M = 64) puts each warp's 16 rows in the first
    16 lanes of that warp's 32-lane quarter (row ``16w + i`` in lane ``32w + i``). Column
    ``c`` is TMEM column ``c`` in both."""
    if datapath not in _DATAPATH_ROWS:
        raise ValueError(f"tmem_datapath_layout: datapath must be one of "
                         f"{sorted(_DATAPATH_ROWS)}, got {datapath!r}")
    want = _DATAPATH_ROWS[datapath]
    if rows != want:
        raise ValueError(f"tmem_datapath_layout: datapath {datapath!r} holds {want} rows "
                         f"(its M), got rows={rows}")
    if datapath == "D":
        return TileLayout([Iter(rows, 1, "TLane"), Iter(cols, 1, "TCol")])
    return TileLayout([Iter(4, 32, "TLane"), Iter(16, 1, "TLane"), Iter(cols, 1, "TCol")])


#: tcgen05.ld/st shape -> (32-bit columns one repetition covers, the largest .num)
_TCGEN05_SHAPES = {"32x32b": (1, 128), "16x64b": (2, 128), "16x128b": (4, 64),
                   "16x256b": (8, 32)}

# The .16x* shapes: where lane l and register r of a warp put their 32-bit value in the
# warp's 16-row slab, as iterators (extent, stride, axis) over the slab's row bits (outer
# first) and column bits, for N repetitions (.xN). With t0 = l & 1, t1 = (l >> 1) & 1,
# t2 = l >> 2 for .16x64b and t0 = l & 3, t1 = l >> 2 for the others:
#   .16x64b:  row = t2 + 8 t0,  column = t1 + 2 r                          (N registers)
#   .16x128b: row = t1 + 8 a,   column = t0 + 4 b,         r = a + 2 b      (2N registers)
#   .16x256b: row = t1 + 8 a,   column = c + 2 t0 + 8 b,   r = c + 2 a + 4 b (4N registers)
# (PTX ISA, "Matrix fragments for tcgen05.ld/st"; CUTLASS's SM100_TMEM_LOAD_16dp* traits.)


def _slab_iters(shape: str, n: int) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]], int]:
    if shape == "16x64b":
        rows = [(2, 1, "laneid"), (8, 4, "laneid")]
        return rows, [(n, 1, "m"), (2, 2, "laneid")], n
    if shape == "16x128b":
        rows = [(2, 1, "m"), (8, 4, "laneid")]
        return rows, [(n, 2, "m"), (4, 1, "laneid")], 2 * n
    rows = [(2, 2, "m"), (8, 4, "laneid")]
    return rows, [(n, 4, "m"), (4, 1, "laneid"), (2, 1, "m")], 4 * n


def tcgen05_atom_layout(instr_shape: str, tensor_shape: Any, dtype: Any) -> TileLayout:
    """The registers a warpgroup's ``tcgen05.ld``/``st`` of shape ``instr_shape`` fill, as the
    layout of a ``tensor_shape`` (rows, columns) tile of ``dtype`` elements (32-bit or 16-bit,
    two 16-bit elements to a 32-bit TMEM column and register). The repetition count ``.xN`` is
    the one the columns need.

    ``.32x32b``: thread ``t`` of the warpgroup holds row ``t`` (128 rows; warp ``w`` reaches
    TMEM lanes ``32w..32w+31``), its columns contiguous in its registers (what the tile copy
    between TMEM and registers moves). ``.16x64b`` / ``.16x128b`` / ``.16x256b``: warp ``w``
    holds rows ``16w..16w+15`` (64 rows), spread over its lanes as the PTX ISA's fragment
    figures say; 128 rows are two issues per warp, the second at row offset 16 into the next
    registers."""
    if instr_shape not in _TCGEN05_SHAPES:
        raise ValueError(f"tcgen05_atom_layout: instr_shape must be one of "
                         f"{list(_TCGEN05_SHAPES)}, got {instr_shape!r}")
    bits = DataType(dtype).bits
    if bits not in (16, 32):
        raise ValueError(f"tcgen05_atom_layout: dtype must be 16 or 32 bits wide, got {dtype} "
                         f"({bits} bits)")
    if len(tensor_shape) != 2:
        raise ValueError(f"tcgen05_atom_layout: tensor_shape must be (rows, cols), got "
                         f"{tensor_shape!r}")
    rows, cols = (int(x) for x in tensor_shape)
    per_reg = 32 // bits
    if cols < per_reg or cols % per_reg:
        raise ValueError(f"tcgen05_atom_layout: {cols} columns of {dtype} do not fill whole "
                         f"32-bit registers ({per_reg} per register)")
    if instr_shape == "32x32b":
        if rows != 128:
            raise ValueError(f"tcgen05_atom_layout: .32x32b covers the 128 TMEM lanes of a "
                             f"warpgroup, so rows must be 128, got {rows}")
        return wg_local_layout(cols, rows)
    if rows not in (64, 128):
        raise ValueError(f"tcgen05_atom_layout: .{instr_shape} covers 16 rows a warp, so rows "
                         f"must be 64 (one issue) or 128 (two), got {rows}")
    per_rep, most = _TCGEN05_SHAPES[instr_shape]
    n, left = divmod(cols // per_reg, per_rep)
    if left or n < 1 or n > most or n & (n - 1):
        raise ValueError(f"tcgen05_atom_layout: .{instr_shape} moves {per_rep} 32-bit columns a "
                         f"repetition (.x1 to .x{most}, powers of two), so {cols} columns of "
                         f"{dtype} are no whole .xN")
    row_iters, col_iters, regs = _slab_iters(instr_shape, n)
    slab = [(2, regs, "m")] if rows == 128 else []  # the second issue's registers follow
    iters = [(4, 1, "wid_in_wg"), *slab, *row_iters, *col_iters]
    if per_reg > 1:  # 16-bit: two elements to a register, the low one first
        iters = [(e, st * per_reg if ax == "m" else st, ax) for e, st, ax in iters]
        iters.append((per_reg, 1, "m"))
    return TileLayout([Iter(e, st, ax) for e, st, ax in iters])


def layout_names() -> dict[str, Any]:
    """What the ``tvm_layout_names`` hook returns: the axes above and the layout functions."""
    scopes = {**_GENERIC_SCOPES, **THREAD_AXES}
    names: dict[str, Any] = {
        n: Axis(n, "thread", scope=scope, subscope=sub,
                fusions={"cuda": _FUSIONS[n]} if n in _FUSIONS else None,
                splits={"cuda": _SPLITS[n]} if n in _SPLITS else None)
        for n, (scope, sub) in scopes.items()}
    names.update({n: Axis(n, "memory") for n in TMEM_AXES})
    names["wg_local_layout"] = wg_local_layout
    names["tcgen05_atom_layout"] = tcgen05_atom_layout
    names["tmem_datapath_layout"] = tmem_datapath_layout
    return names
