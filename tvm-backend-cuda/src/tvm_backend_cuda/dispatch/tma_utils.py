"""Swizzled shared-memory layouts for TMA copies and the tensor cores (the seed's ``tma_utils``).

The hardware swizzles (TMA's ``CU_TENSOR_MAP_SWIZZLE_{32,64,128}B``, the ``wgmma`` and
``tcgen05`` shared-memory descriptors' layout types) permute the 16-byte chunks of each row of
an *atom*: 8 rows of 32, 64 or 128 bytes. Chunk ``c`` of row ``r`` is stored at chunk
``c ^ (r % 8 >> ...)`` of that row, i.e. the XOR of address bits [4, 4+B) with bits [7, 7+B)
(``B`` = 1, 2, 3): a :class:`~tvm.ir.SwizzleLayout` ``(per_element, B, 3)`` where
``2 ** per_element`` elements make 16 bytes.

- :func:`mma_atom_shape` / :func:`mma_atom_layout`: one atom, ``[8, swizzle_bytes / elem_bytes]``
  (no swizzle: the 8 x 16-byte core matrix);
- :func:`mma_shared_layout`: the atom tiled over the last two dims of a shape ``[..., R, C]``: the
  ``C / atom_cols`` column blocks one after another, each ``R`` rows of one atom row each (what a
  K-major wgmma/tcgen05 operand and a TMA box of ``atom_cols`` columns both use);
- :func:`tma_shared_layout`: what a TMA load of a box of that shape writes (row-major when not
  swizzled; as :func:`mma_shared_layout` when swizzled, since a swizzled box row is at most one
  atom row wide);
- :func:`get_swizzle_mode_from_layout`: the mode back from a buffer's layout.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from tvm.ir import ComposeLayout, DataType, IntImm, SwizzleLayout, TileLayout
from tvm.ir.layout import Iter

from ..tensor_map import array_geometry, encode_tiled_tensor_map

__all__ = [
    "box_columns",
    "encode_tensor_map",
    "tma_box",
    "SwizzleMode",
    "get_swizzle_mode_from_layout",
    "mma_atom_layout",
    "mma_atom_shape",
    "mma_shared_layout",
    "swizzle_bytes",
    "tma_shared_layout",
    "wgmma_layout_type",
]


class SwizzleMode(enum.IntEnum):
    """The shared-memory swizzle of a TMA box or MMA operand. The values are CUDA's
    ``CUtensorMapSwizzle`` (0 none, 1 32B, 2 64B, 3 128B)."""

    SWIZZLE_NONE = 0
    SWIZZLE_32B_ATOM = 1
    SWIZZLE_64B_ATOM = 2
    SWIZZLE_128B_ATOM = 3

    @staticmethod
    def parse(mode: Any) -> SwizzleMode:
        """A mode from itself, its int, its name or a short spelling (``"128B"``, ``"none"``)."""
        if isinstance(mode, SwizzleMode):
            return mode
        if isinstance(mode, int) and not isinstance(mode, bool):
            return SwizzleMode(mode)
        if isinstance(mode, str):
            key = mode.strip().upper().removeprefix("SWIZZLE_").removesuffix("_ATOM")
            for m in SwizzleMode:
                if m.name.removeprefix("SWIZZLE_").removesuffix("_ATOM") == key:
                    return m
        raise ValueError(f"unknown swizzle mode {mode!r}; expected one of "
                         f"{[m.name for m in SwizzleMode]} (or 'none', '32B', '64B', '128B')")


def swizzle_bytes(mode: SwizzleMode | Any) -> int:
    """Bytes of one atom row: 0 (none), 32, 64 or 128."""
    m = SwizzleMode.parse(mode)
    return 0 if m is SwizzleMode.SWIZZLE_NONE else 16 << int(m)


def wgmma_layout_type(mode: SwizzleMode | Any) -> int:
    """The wgmma descriptor's layout type (bits 62-63): 0 none, 1 128B, 2 64B, 3 32B."""
    m = SwizzleMode.parse(mode)
    return 0 if m is SwizzleMode.SWIZZLE_NONE else 4 - int(m)


def _elem_bits(dtype: Any) -> int:
    """Bits of one element: a whole number of them must fill a 16-byte chunk (float4 packs 32
    to a chunk, float32 4)."""
    dt = DataType(str(dtype))
    if dt.bits < 1 or 128 % dt.bits:
        raise ValueError(f"swizzled layouts need elements that pack a 16-byte chunk exactly, got "
                         f"{dt} ({dt.bits} bits)")
    return dt.bits


def _log2(n: int) -> int:
    return n.bit_length() - 1


def mma_atom_shape(dtype: Any, mode: SwizzleMode | Any) -> list[int]:
    """``[8, cols]``: 8 rows of one swizzle atom row (16 bytes when not swizzled)."""
    row = swizzle_bytes(mode) or 16
    return [8, row * 8 // _elem_bits(dtype)]


def _swizzle(dtype: Any, mode: SwizzleMode) -> SwizzleLayout:
    # a 16-byte chunk of elements stays together
    return SwizzleLayout(_log2(128 // _elem_bits(dtype)), int(mode), 3)


def mma_atom_layout(dtype: Any, mode: SwizzleMode | Any) -> TileLayout | ComposeLayout:
    """One atom: 8 rows x ``cols`` elements, row-major, swizzled as ``mode`` says."""
    m = SwizzleMode.parse(mode)
    rows, cols = mma_atom_shape(dtype, m)
    tile = TileLayout([Iter(rows, cols), Iter(cols, 1)])
    if m is SwizzleMode.SWIZZLE_NONE:
        return tile
    return ComposeLayout(_swizzle(dtype, m), tile)


def _static(shape: Sequence[Any]) -> list[int]:
    out = []
    for d in shape:
        v = d.value if isinstance(d, IntImm) else d
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise ValueError(f"swizzled layouts need a static positive shape, got {list(shape)}")
        out.append(v)
    return out


def mma_shared_layout(dtype: Any, mode: SwizzleMode | Any,
                      shape: Sequence[Any]) -> TileLayout | ComposeLayout:
    """The atom of ``mode`` tiled over the last two dims of ``shape`` (``[..., R, C]``): column
    block ``C // cols`` outer, then the ``R`` rows (each one atom row), then the ``cols``
    elements of the row; leading dims outermost, row-major. ``R`` must be a multiple of 8 and
    ``C`` of the atom's ``cols``."""
    m = SwizzleMode.parse(mode)
    dims = _static(shape)
    if len(dims) < 2:
        raise ValueError(f"mma_shared_layout: shape {dims} has fewer than 2 dims; the atom tiles "
                         "the last two (rows, cols)")
    rows, cols = dims[-2], dims[-1]
    _, atom_cols = mma_atom_shape(dtype, m)
    if rows % 8 or cols % atom_cols:
        raise ValueError(f"mma_shared_layout: shape {dims} does not tile the {m.name} atom "
                         f"[8, {atom_cols}] of {DataType(str(dtype))}: rows must be a multiple "
                         f"of 8 and cols of {atom_cols}")
    plane = rows * cols
    iters: list[Iter] = []
    stride = plane
    lead: list[Iter] = []
    for d in reversed(dims[:-2]):
        lead.append(Iter(d, stride))
        stride *= d
    iters.extend(reversed(lead))
    iters += [Iter(rows, atom_cols), Iter(cols // atom_cols, rows * atom_cols), Iter(atom_cols, 1)]
    tile = TileLayout(iters)
    if m is SwizzleMode.SWIZZLE_NONE:
        return tile
    return ComposeLayout(_swizzle(dtype, m), tile)


def tma_shared_layout(dtype: Any, mode: SwizzleMode | Any,
                      shape: Sequence[Any]) -> TileLayout | ComposeLayout:
    """The layout a TMA load of a box of ``shape`` writes with swizzle ``mode``: row-major
    without a swizzle; with one, the box's rows are atom rows (a swizzled box is at most one
    atom row wide, so a wider tile is several boxes side by side: :func:`mma_shared_layout`)."""
    m = SwizzleMode.parse(mode)
    dims = _static(shape)
    if m is SwizzleMode.SWIZZLE_NONE:
        return TileLayout.row_major(dims)
    return mma_shared_layout(dtype, m, dims)


def get_swizzle_mode_from_layout(layout: Any) -> SwizzleMode:
    """The swizzle of a buffer layout (``SWIZZLE_NONE`` for a plain TileLayout or None)."""
    if isinstance(layout, ComposeLayout):
        sw = layout.layout_A
        if sw.atom_len == 3 and sw.swizzle_len in (1, 2, 3):
            return SwizzleMode(sw.swizzle_len)
        raise ValueError(f"layout {layout!r} is not a TMA/MMA swizzle (needs atom_len 3 and "
                         "swizzle_len 1, 2 or 3)")
    return SwizzleMode.SWIZZLE_NONE


def box_columns(layout: Any, dtype: Any, cols: int) -> int:
    """Columns one TMA box may span for a buffer of this layout: the atom row when swizzled,
    else all ``cols``."""
    mode = get_swizzle_mode_from_layout(layout)
    if mode is SwizzleMode.SWIZZLE_NONE:
        return cols
    return mma_atom_shape(dtype, mode)[1]


# -- host side: the tensor map a TMA copy_async expects -----------------------------------------

def tma_box(shape: Sequence[int], dtype: Any, swizzle: SwizzleMode | Any) -> list[int]:
    """The box (outermost first) of the copies between a global buffer and a shared tile of
    ``shape``: the tile's extents, the innermost cut to one atom row when swizzled (the rule
    the ``tma`` copy_async variant follows)."""
    dims = _static(shape)
    mode = SwizzleMode.parse(swizzle)
    if mode is SwizzleMode.SWIZZLE_NONE:
        return dims
    cols = mma_atom_shape(dtype, mode)[1]
    return dims[:-1] + [min(cols, dims[-1])]


def encode_tensor_map(array: Any, tile: Sequence[int], swizzle: SwizzleMode | Any = "none",
                      *, dtype: Any = None, l2_promotion: int = 2) -> Any:
    """``cuTensorMapEncodeTiled`` for a CUDA ``array`` (torch, or anything DLPack describes)
    and a shared tile of shape ``tile`` (the shared region of the
    ``Tx.copy_async(..., dispatch="tma")`` calls that use it; its rank is the array's), with
    swizzle ``swizzle``. Out-of-bounds elements read as zero. Returns a
    ``cuda.bindings.driver.CUtensorMap`` (pass it as the ``T.TensorMap`` argument); for a CPU
    array (device -1: torch's CPU tensors), the CUDA emulator's map of it. A copy without
    ``config["tensor_map"]`` needs none of this: the executable derives its map."""
    ptr, shape, strides, device = array_geometry(array)
    if len(shape) != len(tile):
        raise ValueError(f"encode_tensor_map: the array has {len(shape)} dims, the tile "
                         f"{len(tile)}; give the tile with one extent per array dim")
    dt = DataType(str(dtype if dtype is not None else array.dtype).replace("torch.", ""))
    mode = SwizzleMode.parse(swizzle)
    return encode_tiled_tensor_map(ptr, shape, strides, str(dt), tma_box(tile, dt, mode),
                                   int(mode), l2_promotion, what="encode_tensor_map",
                                   emulated=device < 0)
