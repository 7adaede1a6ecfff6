"""Planning ``tcgen05.cp``: which shared -> tensor memory copies move a laid-out region.

``tcgen05.cp`` reads a matrix of ``rows`` x 16 (or 32) bytes from shared memory through a
matrix descriptor (K-major canonical layout: 8-row core matrices of 16-byte rows, the rows of a
core matrix 16 bytes apart, or one swizzle-atom row apart when swizzled; the 8-row groups
``SBO`` bytes apart; a second 16-byte column ``LBO`` bytes on) and writes row ``r`` to TMEM lane
``r`` (``.warpx4``: 32 rows to each of the four 32-lane quarters) from the address's column.

:func:`plan_cp` works from where the two layouts put every element: the TMEM layout gives a
(lane, column) of each, the shared one a byte offset. The copy splits into the 16-byte TMEM
column chunks the instruction writes; each chunk must be covered exactly, and its source bytes
must follow the descriptor's pattern (after undoing the swizzle of the shared layout). The TMEM
layout picks the shape: with the replica ``R[4 : 32@TLane]`` (the data of 32 lanes broadcast to
all four quarters) ``.32x128b.warpx4``; without one, 128 lanes, ``.128x256b`` when every pair of
chunks reads as one 32-byte row, else ``.128x128b``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tvm import ir
from tvm.backend.sdk import fail
from tvm.error import DispatchFail
from tvm.ir.layout import ComposeLayout, TileLayout
from tvm.ir.linear import Linear, to_linear

from .common import const_int
from .tma_utils import SwizzleMode, get_swizzle_mode_from_layout, swizzle_bytes

__all__ = ["CP_128X128B", "CP_128X256B", "CP_32X128B_WARPX4", "CpIssue", "CpPlan", "CpShape",
           "element_coords", "plan_cp"]


@dataclass(frozen=True)
class CpShape:
    """One ``tcgen05.cp`` form: ``rows`` source rows of ``row_bytes`` bytes each."""

    name: str
    rows: int
    row_bytes: int
    multicast: str = ""


CP_32X128B_WARPX4 = CpShape("32x128b", 32, 16, "warpx4")
CP_128X256B = CpShape("128x256b", 128, 32)
CP_128X128B = CpShape("128x128b", 128, 16)

#: the replica of a TMEM layout whose 32 lanes ``.warpx4`` broadcasts to all 128
WARPX4_REPLICA = (4, 32, "TLane")


@dataclass(frozen=True)
class CpIssue:
    """One instruction: the 32-bit TMEM column it writes first (from the buffer's address),
    the byte offset in the shared buffer of its row 0, and the descriptor's leading and stride
    byte offsets."""

    column: int
    start: int
    lbo: int
    sbo: int


@dataclass(frozen=True)
class CpPlan:
    """The issues, and what a variable region start adds to all of them: ``src_shift``
    elements to every shared start, ``column_shift`` 32-bit columns to every TMEM column."""

    shape: CpShape
    swizzle: SwizzleMode
    issues: tuple[CpIssue, ...]
    src_shift: ir.PrimExpr | None = None
    column_shift: ir.PrimExpr | None = None


# -- where a layout puts each element ----------------------------------------------------------


def element_coords(region: ir.BufferRegion) -> dict[str, Any]:
    """Axis -> numpy array: where the buffer's layout puts each element of ``region`` (in
    row-major order of the region); ``"m"`` is the memory offset in elements, swizzled. A layout
    with replicas gives replica 0's coordinates. A buffer without a layout is row-major."""
    import numpy as np  # noqa: PLC0415 - numpy loads when a copy is lowered, not at import

    buf = region.buffer
    shape = [const_int(s, f"the shape of {buf.name}") for s in buf.shape]
    mins = [const_int(r.min, f"the start of the region of {buf.name}") for r in region.region]
    exts = [const_int(r.extent, f"the extent of the region of {buf.name}") for r in region.region]
    idx = np.indices(exts).reshape(len(exts), -1).astype(np.int64) + np.array(mins)[:, None]
    flat = np.ravel_multi_index(tuple(idx), shape) if shape else np.zeros(1, np.int64)
    lay = buf.layout
    swizzle = None
    if isinstance(lay, ComposeLayout):
        swizzle, lay = lay.layout_A, lay.layout_B
    if lay is None:
        return {"m": flat}
    if not isinstance(lay, TileLayout):
        fail(f"{buf.name}'s layout {lay!r} is not a TileLayout or a swizzled one")
    coords: dict[str, Any] = {it.axis.name: np.zeros_like(flat) for it in lay.shard}
    rest = flat
    shard = lay.shard
    for pos in range(len(shard) - 1, -1, -1):
        it = shard[pos]
        ext = const_int(it.extent, f"an extent of {buf.name}'s layout")
        stride = const_int(it.stride, f"a stride of {buf.name}'s layout")
        digit = rest % ext if pos > 0 else rest
        coords[it.axis.name] = coords[it.axis.name] + digit * stride
        rest = rest // ext
    for axis, off in lay.offset.items():
        coords[axis.name] = coords.get(axis.name, 0) + const_int(off, f"{buf.name}'s layout offset")
    if swizzle is not None and "m" in coords:
        coords["m"] = _swizzle(coords["m"], swizzle.per_element, swizzle.swizzle_len,
                               swizzle.atom_len, swizzle.swizzle_inner)
    return coords


def _swizzle(a: Any, per_element: int, length: int, atom: int, inner: bool = True) -> Any:
    """SwizzleLayout.swizzle on an array of offsets (an XOR of bit ranges: its own inverse)."""
    mask = (1 << length) - 1
    low, high = per_element, per_element + atom
    src, dst = (high, low) if inner else (low, high)
    return a ^ (((a >> src) & mask) << dst)


def _pinned(region: ir.BufferRegion) -> tuple[ir.BufferRegion, ir.PrimExpr | None,
                                               dict[str, int]]:
    """A region whose start is a variable in one dimension (a pipeline stage: ``S[st * 32:
    st * 32 + 32, :]``) as (the region starting at 0 there, the start divided by its known
    factor ``g`` (32), the step of each axis per ``g``). Every start the dimension allows (the
    multiples of ``g``) must move each element by the same step times the start (checked
    numerically); otherwise a DispatchFail."""
    import numpy as np  # noqa: PLC0415

    buf = region.buffer
    dims = [d for d, r in enumerate(region.region) if not isinstance(r.min, ir.IntImm)]
    if not dims:
        return region, None, {}
    if len(dims) > 1:
        fail(f"the region of {buf.name} starts at variable indices in {len(dims)} dims; "
             "tcgen05.cp takes one variable start (e.g. a pipeline stage)")
    d = dims[0]
    start = to_linear(region.region[d].min)
    g = math.gcd(start.const, *(c for _, c in start.nonzero_terms())) or 1
    units = Linear(start.dtype, [(a, c // g) for a, c in start.nonzero_terms()],
                   start.const // g)

    def at(v: int) -> ir.BufferRegion:
        rng = list(region.region)
        rng[d] = ir.Range(ir.const(v, "int32"), rng[d].extent)
        return ir.BufferRegion(buf, rng)

    size = const_int(buf.shape[d], f"dim {d} of {buf.name}")
    ext = const_int(region.region[d].extent, f"the extent of the region of {buf.name}")
    base = element_coords(at(0))
    steps = {a: 0 for a in base}
    for v in range(g, size - ext + 1, g):
        moved = element_coords(at(v))
        for a, c in base.items():
            delta = moved[a] - c
            if v == g:
                steps[a] = int(delta[0])
            if not np.all(delta == v // g * steps[a]):
                fail(f"{buf.name}'s layout does not move the region by one step per {g} of its "
                     f"variable start in dim {d} (at {v} it does not); tcgen05.cp adds the "
                     "start to the addresses",
                     fix=f"use a layout whose dim {d} is one stride outside the copied tile")
    return at(0), units.to_expr(), steps


# -- the TMEM side ------------------------------------------------------------------------------


def _is_warpx4(tm: ir.BufferRegion) -> bool:
    """Whether the TMEM buffer's layout (a 2-D buffer without one: lane = row, column = col)
    is the ``.warpx4`` broadcast of 32 lanes; a DispatchFail if it is no TMEM layout."""
    buf = tm.buffer
    lay = buf.layout
    if lay is None:
        if len(buf.shape) != 2:
            fail(f"tensor-memory buffer {buf.name} has {len(buf.shape)} dims and no layout",
                 fix="give it a layout over TLane and TCol, e.g. "
                     "TileLayout(S[(32, C):(1@TLane, 1@TCol)] + R[4 : 32@TLane])")
        lay = TileLayout([ir.Iter(buf.shape[0], 1, "TLane"), ir.Iter(buf.shape[1], 1, "TCol")])
    if not isinstance(lay, TileLayout):
        fail(f"tensor-memory buffer {buf.name} has layout {lay!r}; tcgen05.cp writes a "
             "TileLayout over TLane and TCol")
    axes = {it.axis.name for it in lay.shard} | {a.name for a in lay.offset}
    if not axes <= {"TLane", "TCol"}:
        fail(f"tensor-memory buffer {buf.name}'s layout uses axes {sorted(axes)}; only TLane "
             "and TCol place tensor memory")
    reps = [(const_int(r.extent, "a replica extent"), const_int(r.stride, "a replica stride"), r.axis.name)
            for r in lay.replica]
    if reps and reps != [WARPX4_REPLICA]:
        fail(f"tensor-memory buffer {buf.name} has replicas {reps}; tcgen05.cp broadcasts 32 "
             "lanes to the four lane quarters (.warpx4), the replica R[4 : 32@TLane]")
    return bool(reps)


# -- the plan -----------------------------------------------------------------------------------


def _chunks(dst: ir.BufferRegion, src: ir.BufferRegion, rows: int, warpx4: bool
            ) -> dict[int, Any]:
    """16-byte TMEM column chunk -> the ``[rows, 16]`` array of the shared-buffer byte offset
    each of its bytes comes from (lane-relative rows)."""
    import numpy as np  # noqa: PLC0415

    eb = src.buffer.dtype.bytes
    tc = element_coords(dst)
    lane = tc.get("TLane", np.zeros_like(tc.get("TCol", 0)))
    byte = tc.get("TCol", np.zeros_like(lane)) * eb
    sbytes = element_coords(src)["m"] * eb
    if lane.size != sbytes.size:
        fail(f"dst has {lane.size} elements, src {sbytes.size}")
    if lane.min() < 0 or lane.max() >= rows:
        where = "lanes 0-31 (the .warpx4 replica broadcasts them to the other quarters)" \
            if warpx4 else "lanes 0-127"
        fail(f"the copy writes TMEM lanes {int(lane.min())}-{int(lane.max())}; tcgen05.cp "
             f"writes {where}")
    out: dict[int, Any] = {}
    seen: dict[int, Any] = {}
    for j in range(eb):  # each byte of a multi-byte element
        b = byte + j
        for c in np.unique(b // 16):
            sel = b // 16 == c
            cell = out.setdefault(int(c), np.full((rows, 16), -1, np.int64))
            hits = seen.setdefault(int(c), np.zeros((rows, 16), np.int64))
            np.add.at(hits, (lane[sel], b[sel] % 16), 1)
            cell[lane[sel], b[sel] % 16] = sbytes[sel] + j
    for c, hits in seen.items():
        if (hits != 1).any():
            what = "twice" if (hits > 1).any() else "only in part"
            fail(f"the copy writes TMEM columns {4 * c}-{4 * c + 3} (32-bit) {what}; "
                 f"tcgen05.cp.{'32x128b' if warpx4 else '128x128b'} writes all {rows} lanes x "
                 "16 bytes of them",
                 fix="copy whole 16-byte column chunks of every lane")
    return out


def _match(u: Any, sw: int, what: str) -> tuple[int, int, int]:
    """(start, lbo, sbo) of the descriptor under which the unswizzled byte offsets ``u`` (an
    ``[rows, bytes]`` array) are the canonical K-major matrix, else a DispatchFail. Unswizzled:
    a core matrix's rows 16 bytes apart, a second 16-byte column ``lbo`` on; swizzled: rows one
    atom row (``sw`` bytes) apart, a row's bytes contiguous, the matrix in the first row of an
    atom (the descriptor sets no base offset); the 8-row groups ``sbo`` apart, whole atoms."""
    import numpy as np  # noqa: PLC0415

    rows, width = u.shape
    start = int(u[0, 0])
    sbo = int(u[8, 0]) - start if rows > 8 else 0
    lbo = int(u[0, 16]) - start if width > 16 and not sw else 0
    r = np.arange(rows)[:, None]
    k = np.arange(width)[None, :]
    if sw:
        want = start + (r % 8) * sw + (r // 8) * sbo + k
    else:
        want = start + (r % 8) * 16 + (r // 8) * sbo + (k % 16) + (k // 16) * lbo
    if start % 16 or sbo % 16 or lbo % 16 or sbo < 0 or lbo < 0 or not np.array_equal(u, want):
        pitch = f"one {sw}-byte atom row" if sw else "16 bytes"
        fail(f"{what} are not a matrix tcgen05.cp reads: the 8 rows of a core matrix "
             f"{pitch} apart, each 8-row group at one stride (16-byte aligned)",
             fix="lay the shared tile out as 8-row core matrices (mma_shared_layout) and copy "
                 "rows that start on a core matrix")
    if sw and (start % (8 * sw) >= sw or sbo % (8 * sw)):
        fail(f"{what} start in row {start % (8 * sw) // sw} of a {sw}-byte swizzle atom (at "
             f"byte {start}, 8-row groups {sbo} bytes apart); a swizzled descriptor reads 8-row "
             "atoms from their first row",
             fix="copy rows that start on a multiple of 8")
    return start, lbo, sbo


def plan_cp(dst: ir.BufferRegion, src: ir.BufferRegion) -> CpPlan:
    """The ``tcgen05.cp`` issues that copy shared region ``src`` into tensor-memory region
    ``dst`` (the module docs), or a DispatchFail saying why none can."""
    sbuf = src.buffer
    if sbuf.dtype.bits != dst.buffer.dtype.bits or sbuf.dtype.bits % 8:
        fail(f"tcgen05.cp copies bits: {sbuf.dtype} into {dst.buffer.dtype} (one width, whole "
             "bytes)")
    warpx4 = _is_warpx4(dst)
    mode = get_swizzle_mode_from_layout(sbuf.layout)
    sw = swizzle_bytes(mode)
    rows = 32 if warpx4 else 128
    if isinstance(sbuf.layout, ComposeLayout):
        _check_swizzled(sbuf, sbuf.layout, mode)
    dst, d_start, d_steps = _pinned(dst)
    src, s_start, s_steps = _pinned(src)
    column_shift = _column_shift(dst.buffer, d_start, d_steps)
    src_shift = _src_shift(sbuf, s_start, s_steps, sw)
    chunks = _chunks(dst, src, rows, warpx4)
    if sw:
        _starts_on_atom(src, sw)
    shape = CP_32X128B_WARPX4 if warpx4 else CP_128X128B
    layouts = {c: _unswizzle(b, mode) for c, b in chunks.items()}
    if not warpx4 and _pairs(layouts, sw):
        shape = CP_128X256B
    issues = []
    step = shape.row_bytes // 16
    for c in sorted(layouts)[::step]:
        u = layouts[c] if step == 1 else _join(layouts[c], layouts[c + 1])
        where = f"the bytes of {sbuf.name} copied to TMEM columns {4 * c}-{4 * (c + step) - 1}"
        start, lbo, sbo = _match(u, sw, where)
        issues.append(CpIssue(4 * c, start, lbo, sbo))
    return CpPlan(shape, mode, tuple(issues), src_shift, column_shift)


def _column_shift(buf: ir.Buffer, start: ir.PrimExpr | None, steps: dict[str, int]
                  ) -> ir.PrimExpr | None:
    """32-bit TMEM columns a variable start of the TMEM region moves the copy by."""
    if start is None:
        return None
    nbytes = steps.get("TCol", 0) * buf.dtype.bytes
    if steps.get("TLane", 0) or nbytes % 16:
        fail(f"a variable start of the region of {buf.name} moves it by {steps.get('TLane', 0)} "
             f"lanes and {nbytes} bytes of columns per step; tcgen05.cp needs whole 16-byte "
             "column chunks in the same lanes")
    return start * (nbytes // 4)


def _src_shift(buf: ir.Buffer, start: ir.PrimExpr | None, steps: dict[str, int], sw: int
               ) -> ir.PrimExpr | None:
    """Elements a variable start of the shared region moves every descriptor by."""
    if start is None:
        return None
    nbytes = steps.get("m", 0) * buf.dtype.bytes
    unit = 8 * sw if sw else 16
    if nbytes % unit:
        fail(f"a variable start of the region of {buf.name} moves it by {nbytes} bytes per "
             f"step, not a multiple of {unit} (a descriptor start "
             f"{'on a swizzle atom' if sw else '16-byte aligned'})")
    return start * steps.get("m", 0)


def _check_swizzled(sbuf: ir.Buffer, lay: ComposeLayout, mode: SwizzleMode) -> None:
    """The descriptor swizzles 16-byte chunks of shared-memory *addresses*: the layout's
    swizzle must be that one, and the buffer must start on the pattern's period."""
    period = 8 * swizzle_bytes(mode)  # bytes the swizzle pattern repeats over
    if (1 << lay.layout_A.per_element) * sbuf.dtype.bytes != 16:
        fail(f"{sbuf.name}'s swizzle keeps {1 << lay.layout_A.per_element} elements together; "
             f"the descriptor's keeps 16 bytes ({16 // sbuf.dtype.bytes} x {sbuf.dtype})",
             fix="use mma_shared_layout(dtype, mode, shape) for the shared tile")
    if sbuf.align < period:
        fail(f"{sbuf.name} is {mode.name} swizzled: the descriptor swizzles shared-memory "
             f"address bits, so the buffer must be {period}-byte aligned (align={sbuf.align})",
             fix=f"allocate it with align={period} or more")
    offset = sbuf.elem_offset
    if not isinstance(offset, ir.IntImm) or offset.value * sbuf.dtype.bytes % period:
        fail(f"{sbuf.name} is {mode.name} swizzled and starts at element {offset} of its "
             f"memory, not on a {period}-byte boundary")


def _starts_on_atom(src: ir.BufferRegion, sw: int) -> None:
    """A swizzled copy starts on an atom's first byte (the seed's rule; the chunks after it
    may start further along the atom's first row, as the descriptor of a K step does)."""
    placed = int(element_coords(src)["m"][0]) * src.buffer.dtype.bytes
    first = _swizzle(placed, 4, (sw // 16).bit_length() - 1, 3)
    if first % (8 * sw):
        row, col = first % (8 * sw) // sw, first % sw
        fail(f"the region of {src.buffer.name} starts at row {row}, byte {col} of a {sw}-byte "
             "swizzle atom; a swizzled tcgen05.cp copy starts on an atom",
             fix="copy a region whose first row is a multiple of 8 and whose first column is "
                 "a multiple of the atom's width")


def _unswizzle(b: Any, mode: SwizzleMode) -> Any:
    """Byte offsets before the 16-byte-chunk swizzle ``mode`` (bits 4.. XOR bits 7..)."""
    if mode is SwizzleMode.SWIZZLE_NONE:
        return b
    return _swizzle(b, 4, int(mode), 3)


def _join(a: Any, b: Any) -> Any:
    import numpy as np  # noqa: PLC0415

    return np.concatenate([a, b], axis=1)


def _pairs(layouts: dict[int, Any], sw: int) -> bool:
    """Whether the chunks go two by two (even, odd) into the 32-byte rows ``.128x256b`` reads."""
    keys = sorted(layouts)
    if any(k % 2 or k + 1 not in layouts for k in keys[::2]) or len(keys) % 2:
        return False
    try:
        for k in keys[::2]:
            _match(_join(layouts[k], layouts[k + 1]), sw, "")
    except DispatchFail:
        return False
    return True
