"""Shared-memory matrix descriptors of ``wgmma`` (sm_90a) and ``tcgen05.mma`` (sm_100a), derived
from a buffer's layout and the region a ``gemm_async`` call reads.

Both instructions read an operand tile from shared memory through a 64-bit descriptor: a start
address, a *leading* and a *stride* byte offset (LBO, SBO) and a swizzle mode. The hardware
reads element ``(mn, k)`` of the tile at ``swizzle(start + lin(mn, k))``, where ``swizzle`` XORs
address bits ``[4, 4 + b)`` with bits ``[7, 7 + b)`` of the shared-memory address (b = 3, 2, 1 for
128-, 64- and 32-byte swizzles, none without) and ``lin`` is one of the canonical forms below
(``e`` bytes per element, ``sw`` the swizzle width in bytes, ``W = sw / e`` elements, ``T = 16 / e``
elements per 16-byte chunk):

======== ========= ================================================= =============================
major    swizzle   lin(mn, k) in bytes                               LBO, SBO
======== ========= ================================================= =============================
K        none      (mn%8)*16 + (mn//8)*SBO + (k%T)*e + (k//T)*LBO    K core-matrix / MN 8-row step
K        sw        (mn%8)*sw + (mn//8)*SBO + k*e                     unused (encoded 16) / MN step
MN       none      (mn%T)*e + (mn//T)*SBO + (k%8)*16 + (k//8)*LBO    K 8-row step / MN core matrix
MN       sw        (mn%W)*e + (mn//W)*LBO + (k%8)*sw + (k//8)*SBO    MN atom step / K 8-row step
======== ========= ================================================= =============================

(CUTLASS's ``make_gmma_desc`` / ``make_umma_desc`` document the same canonical layouts.) One
*swizzle atom* is 8 rows of ``sw`` bytes along the contiguous axis (``[8, W]`` K-major,
``[W, 8]`` MN-major); a layout is usable when it tiles atoms with constant strides.

**Derivation** (the seed's rule, ``tcgen05.py`` of PR #19757, applied to both instructions):

1. The region has exactly two non-unit axes (the matrix); its innermost axis is the
   *contiguous axis*.
2. When the buffer is physically swizzled, the contiguous axis is rounded up to whole atoms
   anchored at the buffer origin (``[0, ceil(extent / W) * W)``). A *sub-atom* slice (extent not
   a multiple of W) is accepted only when its start is a multiple of 16 bytes; otherwise
   ``ValueError("gemm_async: contiguous-axis slice start ... is not 16B-aligned ...")``.
3. The rounded region is matched against the atoms of the 128-, 64- and 32-byte swizzles (then
   the no-swizzle core matrices), K-major first; the first that tiles it gives the swizzle,
   the major and the two strides. None: ``ValueError("gemm_async: no MMA SMEM descriptor
   matches region shape ...")`` with a hint naming the buffer's physical swizzle.
4. The *actual* region is then addressed per MMA tile: tile ``(mn-tile, k-step)`` starts at the
   physical address of its first element, a constant byte offset from the region's first
   element. Every element every tile reads is checked against the layout (for every value a
   symbolic region start can take), so a slice whose k-steps straddle a swizzle atom, or that
   starts inside an atom's rows, is refused instead of mis-addressed.

Addresses are evaluated numerically: the layout's ``apply`` gives the element offset as an
expression of the indices, evaluated over numpy index grids. Swizzled buffers must be allocated
aligned to the swizzle pattern (``8 * sw`` bytes; ``SMEMPool.alloc_mma`` aligns to 1024).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

from tvm.error import DispatchFail
from tvm.ir import (
    Add,
    Buffer,
    BufferLoad,
    BufferRegion,
    Call,
    Cast,
    DataType,
    FloorDiv,
    FloorMod,
    IntImm,
    Mul,
    Op,
    PrimExpr,
    Sub,
    Var,
    const,
    convert,
)
from tvm.ir.expr import Div, Max, Min, Mod
from tvm.ir.layout_axes import default_strides
from tvm.tirx.op import address_of

__all__ = [
    "SWIZZLE_NAMES",
    "accum_flag",
    "intrinsics_present",
    "operand_region",
    "target_arch",
    "MatrixDesc",
    "OperandPlan",
    "atom_shape",
    "known_divisor",
    "plan_operand",
    "physical_swizzle",
]

SWIZZLES = (128, 64, 32, 0)  # tried in this order; 0 = no swizzle (16-byte core-matrix rows)
# the seed's SwizzleMode names, used in the error hint
SWIZZLE_NAMES = {0: "SWIZZLE_NONE", 32: "SWIZZLE_32B_ATOM", 64: "SWIZZLE_64B_ATOM",
                 128: "SWIZZLE_128B_ATOM"}
_XOR_BITS = {0: 0, 32: 1, 64: 2, 128: 3}
_MAX_ORIGINS = 64  # symbolic region starts: values checked (evenly sampled beyond this)


def atom_shape(dtype: str | DataType, swizzle: int) -> list[int]:
    """``[8, W]``: one K-major swizzle atom of ``dtype`` (W elements = ``swizzle`` bytes; a 16-byte
    core-matrix row without swizzle)."""
    e = DataType(dtype).bits // 8
    return [8, (swizzle or 16) // e]


@dataclasses.dataclass(frozen=True)
class MatrixDesc:
    """Everything a shared-memory matrix descriptor holds besides its start address."""

    swizzle: int  # bytes: 128, 64, 32, or 0 for none
    mn_major: bool
    lbo: int  # leading dimension byte offset
    sbo: int  # stride dimension byte offset

    @property
    def swizzle_name(self) -> str:
        return SWIZZLE_NAMES[self.swizzle]

    def wgmma_bits(self) -> int:
        """The descriptor's constant bits for ``wgmma`` (start address 0): LBO in 16-29, SBO in
        32-45, layout type in 62-63 (1 = 128B, 2 = 64B, 3 = 32B swizzle)."""
        layout = {0: 0, 128: 1, 64: 2, 32: 3}[self.swizzle]
        return self._offsets() | (layout << 62)

    def tcgen05_bits(self) -> int:
        """The same for ``tcgen05``: version 1 in bits 46-47, swizzle in 61-63 (2 = 128B, 4 = 64B,
        6 = 32B)."""
        mode = {0: 0, 128: 2, 64: 4, 32: 6}[self.swizzle]
        return self._offsets() | (1 << 46) | (mode << 61)

    def _offsets(self) -> int:
        return (((self.lbo >> 4) & 0x3FFF) << 16) | (((self.sbo >> 4) & 0x3FFF) << 32)


@dataclasses.dataclass(frozen=True)
class OperandPlan:
    """How one ``gemm_async`` operand region is read: its descriptor, its matrix extents (MN, K),
    and the byte offset of each MMA tile ``(mn_tile, k_step)`` from the region's first element."""

    desc: MatrixDesc
    mn: int
    k: int
    origin: list[PrimExpr]  # indices of the region's first element
    offsets: dict[tuple[int, int], int]

    def start(self, mn_tile: int, k_step: int) -> int:
        return self.offsets[(mn_tile, k_step)]

    def value(self, region: BufferRegion, kind: str) -> PrimExpr:
        """The descriptor (uint64) of the region's first element, for ``kind`` ``"wgmma"`` or
        ``"tcgen05"``; tile ``(i, j)`` is this plus ``start(i, j) >> 4``."""
        bits = self.desc.wgmma_bits() if kind == "wgmma" else self.desc.tcgen05_bits()
        addr = Op.get("tirx.cuda.cvta_generic_to_shared")(
            address_of(BufferLoad(region.buffer, list(self.origin))))
        lo = Cast("uint64", (addr >> 4) & const(0x3FFF, "uint32"))
        return const(bits, "uint64") | lo


def accum_flag(accum: Any) -> PrimExpr:
    """``accum`` (a Python or IR boolean) as the int32 flag of an MMA's first K step (scale-d /
    enable-input-d: 0 overwrites the accumulators)."""
    if isinstance(accum, (bool, int, IntImm)):
        return const(int(accum.value if isinstance(accum, IntImm) else accum), "int32")
    if isinstance(accum, PrimExpr):
        return Cast("int32", accum) if str(accum.dtype) != "int32" else accum
    raise DispatchFail(f"accum must be a boolean constant or expression, got {accum!r}")


def operand_region(arg: Any, name: str) -> BufferRegion:
    """``arg`` (a buffer or a region) as a region; declines the variant otherwise."""
    if not isinstance(arg, (Buffer, BufferRegion)):
        raise DispatchFail(f"{name} must be a buffer or a buffer region")
    return arg.full_region() if isinstance(arg, Buffer) else arg


def target_arch(sctx: Any) -> str:
    """The target's ``arch`` attribute ("" when unset)."""
    return str(sctx.target.attrs.get("arch") or "") if sctx.target is not None else ""


def intrinsics_present(ops: Sequence[str]) -> Callable[[Any, Any], tuple[bool, str]]:
    """A dispatch predicate: every op in ``ops`` is registered."""

    def check(call: Any, sctx: Any) -> tuple[bool, str]:
        missing = [o for o in ops if not Op.exists(o)]
        return (not missing, f"{', '.join(missing)} not registered" if missing else "")

    return check


# -- numeric evaluation of layouts -------------------------------------------------------------
def _np() -> Any:
    import numpy

    return numpy


_BIT_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "tirx.bitwise_and": lambda a, b: a & b,
    "tirx.bitwise_or": lambda a, b: a | b,
    "tirx.bitwise_xor": lambda a, b: a ^ b,
    "tirx.shift_left": lambda a, b: a << b,
    "tirx.shift_right": lambda a, b: a >> b,
}


def _eval(e: Any, env: dict[Var, Any]) -> Any:
    """Evaluate an integer index expression over numpy arrays (indices are non-negative)."""
    np = _np()
    if isinstance(e, int):
        return np.int64(e)
    if isinstance(e, IntImm):
        return np.int64(e.value)
    if isinstance(e, Var):
        if e not in env:
            raise ValueError(f"the layout's address depends on {e.name}, which is not an index")
        return env[e]
    if isinstance(e, Cast):
        return _eval(e.value, env)
    binary: dict[type, Callable[[Any, Any], Any]] = {
        Add: lambda a, b: a + b, Sub: lambda a, b: a - b, Mul: lambda a, b: a * b,
        FloorDiv: lambda a, b: a // b, FloorMod: lambda a, b: a % b, Div: lambda a, b: a // b,
        Mod: lambda a, b: a % b, Min: np.minimum, Max: np.maximum,
    }
    fn = binary.get(type(e))
    if fn is not None:
        return fn(_eval(e.a, env), _eval(e.b, env))
    if isinstance(e, Call) and e.op.name in _BIT_OPS:
        return _BIT_OPS[e.op.name](_eval(e.args[0], env), _eval(e.args[1], env))
    raise ValueError(f"cannot evaluate {type(e).__name__} `{e}` in a shared-memory layout")


def _static(xs: Sequence[Any], what: str) -> list[int]:
    out = []
    for x in xs:
        if not isinstance(x, IntImm):
            raise ValueError(f"{what} must be constant, got {[str(v) for v in xs]}")
        out.append(x.value)
    return out


class _Addresses:
    """Byte addresses (from the buffer's allocation base) of a buffer's elements."""

    def __init__(self, buf: Buffer) -> None:
        self.buf = buf
        self.shape = _static(buf.shape, f"the shape of {buf.name}")
        self.esize = buf.dtype.bits // 8
        idx = [Var(f"i{d}", "int64") for d in range(len(self.shape))]
        self.vars = idx
        self.expr = self._offset_expr(idx)

    def _offset_expr(self, idx: list[Var]) -> PrimExpr:
        buf = self.buf
        if buf.layout is not None:
            off = buf.layout.apply(idx, buf.shape)["m"]
        else:
            strides: list[Any] = list(buf.strides) or default_strides(self.shape)
            off = const(0, "int64")
            for i, s in zip(idx, strides):
                off = off + i * convert(s)
        if isinstance(buf.elem_offset, IntImm):
            return off + buf.elem_offset.value if buf.elem_offset.value else off
        return off  # a symbolic view offset is the allocator's to align

    def __call__(self, index: Sequence[Any]) -> Any:
        np = _np()
        env = {v: np.asarray(x, dtype=np.int64) for v, x in zip(self.vars, index)}
        return _eval(self.expr, env) * self.esize


def _swz(addr: Any, swizzle: int) -> Any:
    b = _XOR_BITS[swizzle]
    if not b:
        return addr
    return addr ^ (((addr >> 7) & ((1 << b) - 1)) << 4)


# -- matching the atoms ------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Match:
    swizzle: int
    contiguous: int  # 0: the matrix's first axis is contiguous (the MN-style atom), 1: the second
    s_q: int  # byte stride between 8-groups of the strided axis
    s_p: int  # byte stride between atoms (core matrices) of the contiguous axis


def _lin(m: _Match, q: Any, p: Any, esize: int) -> Any:
    """Canonical pre-swizzle byte offset of element (q along the strided axis, p along the
    contiguous axis)."""
    w = (m.swizzle or 16) // esize
    pitch = m.swizzle or 16
    return (q % 8) * pitch + (q // 8) * m.s_q + (p % w) * esize + (p // w) * m.s_p


def _grid(addr: _Addresses, base: list[int], axes: tuple[int, int],
          extents: tuple[int, int]) -> tuple[Any, Any, Any]:
    """Addresses of a 2-D window: (addresses[r, c], r grid, c grid)."""
    np = _np()
    r, c = np.meshgrid(np.arange(extents[0]), np.arange(extents[1]), indexing="ij")
    index: list[Any] = list(base)
    index[axes[0]] = base[axes[0]] + r
    index[axes[1]] = base[axes[1]] + c
    return addr(index), r, c


def _try(addr: _Addresses, base: list[int], axes: tuple[int, int], extents: tuple[int, int],
         swizzle: int, contiguous: int) -> _Match | None:
    """Does the window tile the atoms of ``swizzle`` with axis ``contiguous`` contiguous?"""
    np = _np()
    esize = addr.esize
    w = (swizzle or 16) // esize
    q_ext, p_ext = (extents[1], extents[0]) if contiguous == 0 else extents
    if q_ext % 8 or p_ext % w:
        return None
    a, r, c = _grid(addr, base, axes, extents)
    q, p = (c, r) if contiguous == 0 else (r, c)
    if contiguous == 0:
        a = a.T
        q, p = q.T, p.T
    u = _swz(a, swizzle)
    u0 = int(u[0, 0])
    if swizzle and u0 % (8 * swizzle):
        return None  # the window does not start on an atom boundary of the pattern
    s_q = int(u[8, 0] - u0) if q_ext > 8 else 0
    s_p = int(u[0, w] - u0) if p_ext > w else 0
    m = _Match(swizzle, contiguous, s_q, s_p)
    if not np.array_equal(u - u0, _lin(m, q, p, esize)):
        return None
    return m


def _match(addr: _Addresses, base: list[int], axes: tuple[int, int],
           extents: tuple[int, int], k_axis: int) -> _Match | None:
    """The first (swizzle, orientation) whose atoms tile the window; K contiguous first."""
    for swizzle in SWIZZLES:
        for contiguous in (k_axis, 1 - k_axis):
            m = _try(addr, base, axes, extents, swizzle, contiguous)
            if m is not None:
                return m
    return None


def physical_swizzle(buf: Buffer) -> int | None:
    """The swizzle (bytes, 0 for none) whose atoms tile the buffer's last two axes, or None when
    no atom tiles them (a plain row-major buffer, for one) or the shape is symbolic."""
    if buf.ndim < 2:
        return None
    try:
        addr = _Addresses(buf)
    except ValueError:
        return None
    nd = len(addr.shape)
    m = _match(addr, [0] * nd, (nd - 2, nd - 1), (addr.shape[-2], addr.shape[-1]), 1)
    return None if m is None else m.swizzle


# -- symbolic region starts --------------------------------------------------------------------
def known_divisor(e: Any) -> int:
    """A positive integer that provably divides ``e`` (1 when nothing better is known; 0 as a
    constant counts as divisible by anything, returned as 1 << 30)."""
    if isinstance(e, int):
        return abs(e) or 1 << 30
    if isinstance(e, IntImm):
        return abs(e.value) or 1 << 30
    if isinstance(e, Mul):
        return min(known_divisor(e.a) * known_divisor(e.b), 1 << 30)
    if isinstance(e, (Add, Sub)):
        return math.gcd(known_divisor(e.a), known_divisor(e.b))
    if isinstance(e, Cast):
        return known_divisor(e.value)
    if isinstance(e, Call) and e.op.name == "tirx.shift_left" and isinstance(e.args[1], IntImm):
        return min(known_divisor(e.args[0]) << e.args[1].value, 1 << 30)
    return 1


def _origins(region: BufferRegion, shape: list[int]) -> list[list[int]]:
    """Concrete values for the region's start: its constant mins, and for each symbolic min every
    multiple of its known divisor that keeps the region inside the buffer."""
    choices: list[list[int]] = []
    for d, rg in enumerate(region.region):
        if isinstance(rg.min, IntImm):
            choices.append([rg.min.value])
            continue
        ext = rg.extent.value  # type: ignore[attr-defined]
        g = known_divisor(rg.min)
        vals = list(range(0, shape[d] - ext + 1, g)) or [0]
        choices.append(vals)
    combos = [list(c) for c in itertools.product(*choices)]
    if len(combos) > _MAX_ORIGINS:
        step = len(combos) / _MAX_ORIGINS
        combos = [combos[int(i * step)] for i in range(_MAX_ORIGINS)] + [combos[-1]]
    return combos


# -- the plan ----------------------------------------------------------------------------------
def _matrix_axes(region: BufferRegion) -> tuple[int, int]:
    ext = [r.extent for r in region.region]
    if not all(isinstance(x, IntImm) for x in ext):
        raise ValueError(f"gemm_async: the operand region {[str(x) for x in ext]} of "
                         f"{region.buffer.name} must have constant extents")
    dims = [d for d, x in enumerate(ext) if x.value != 1]  # type: ignore[attr-defined]
    if len(dims) != 2:
        raise ValueError(f"Expected exactly 2 non-unit dims in region "
                         f"{[x.value for x in ext]}")  # type: ignore[attr-defined]
    return dims[0], dims[1]


def _round_contiguous(region: BufferRegion, phys: int | None, dtype: DataType) -> list[list[Any]]:
    """The seed's rounding step: ``[min, extent]`` per axis of the descriptor region."""
    rg = [[r.min, r.extent.value] for r in region.region]  # type: ignore[attr-defined]
    cax = len(rg) - 1
    if not phys:
        return rg
    elem_per_16b = 128 // dtype.bits
    atom_inner = atom_shape(dtype, phys)[-1]
    contig = rg[cax][1]
    rounded = -(-contig // atom_inner) * atom_inner
    if rounded != contig:
        start = region.region[cax].min
        if known_divisor(start) % elem_per_16b:
            raise ValueError(
                f"gemm_async: contiguous-axis slice start {start} is not 16B-aligned "
                f"(={elem_per_16b} elements, dtype {dtype}). A sub-atom contiguous slice must "
                f"start on a 16B boundary; otherwise keep that axis full and split on a "
                f"stride/outer axis instead (lay the operand out MN-major).")
        rg[cax] = [const(0, "int32"), rounded]
    return rg


def _no_match(shape_2d: list[int], dtype: DataType, phys: int | None) -> ValueError:
    hint = ""
    if phys:
        atom_inner = atom_shape(dtype, phys)[-1]
        hint = (f" The buffer is physically {SWIZZLE_NAMES[phys]}-swizzled (contiguous atom = "
                f"{atom_inner} elements / {phys} B); the region's layout does not tile it.")
    return ValueError(f"gemm_async: no MMA SMEM descriptor matches region shape {shape_2d} "
                      f"for dtype {dtype}.{hint}")


def plan_operand(region: BufferRegion, *, transposed: bool, mma_mn: int, mma_k: int,
                 name: str = "operand") -> OperandPlan:
    """Derive the descriptor and per-tile start offsets of one ``gemm_async`` operand.

    ``region`` is ``[MN, K]`` (``transposed``: ``[K, MN]``) in shared memory; the MMA reads it in
    tiles of ``mma_mn`` x ``mma_k``. Raises ``ValueError`` with the seed's messages (module
    docstring) when no descriptor can address it.
    """
    buf = region.buffer
    dtype = buf.dtype
    a0, a1 = _matrix_axes(region)
    if a1 != len(region.region) - 1:
        raise ValueError(f"gemm_async: the innermost axis of the {name} region must be one of its "
                         f"two matrix axes (region extents "
                         f"{[str(r.extent) for r in region.region]})")
    addr = _Addresses(buf)
    phys = physical_swizzle(buf)
    desc_rg = _round_contiguous(region, phys, dtype)
    shape_2d = [desc_rg[a0][1], desc_rg[a1][1]]
    k_axis = 0 if transposed else 1  # matrix axis (0 = a0, 1 = a1) that holds K
    base = [v.value if isinstance(v, IntImm) else 0 for v, _ in desc_rg]
    m = _match(addr, base, (a0, a1), (shape_2d[0], shape_2d[1]), k_axis)
    if m is None:
        raise _no_match(shape_2d, dtype, phys)
    mn_major = m.contiguous != k_axis
    desc = _descriptor(m, mn_major)
    ext = (region.region[a0].extent.value, region.region[a1].extent.value)  # type: ignore[attr-defined]
    mn, k = (ext[1], ext[0]) if transposed else ext
    if mn % mma_mn or k % mma_k:
        raise ValueError(f"gemm_async: the {name} region is {mn} x {k} (MN x K); it must be whole "
                         f"{mma_mn} x {mma_k} MMA tiles")
    offsets = _tile_offsets(addr, region, (a0, a1), transposed, desc, m, mma_mn, mma_k, name)
    return OperandPlan(desc, mn, k, [r.min for r in region.region], offsets)


def _descriptor(m: _Match, mn_major: bool) -> MatrixDesc:
    if not mn_major:
        lbo = m.s_p if m.swizzle == 0 else 16  # unused by swizzled K-major layouts
        return MatrixDesc(m.swizzle, False, lbo, m.s_q)
    if m.swizzle == 0:
        return MatrixDesc(0, True, m.s_q, m.s_p)
    return MatrixDesc(m.swizzle, True, m.s_p, m.s_q)


def _hw_lin(desc: MatrixDesc, mn: Any, k: Any, esize: int) -> Any:
    """Pre-swizzle byte offset at which the MMA reads element (mn, k) of a tile."""
    sw = desc.swizzle
    t = 16 // esize
    if not desc.mn_major:
        if sw == 0:
            return (mn % 8) * 16 + (mn // 8) * desc.sbo + (k % t) * esize + (k // t) * desc.lbo
        return (mn % 8) * sw + (mn // 8) * desc.sbo + k * esize
    if sw == 0:
        return (mn % t) * esize + (mn // t) * desc.sbo + (k % 8) * 16 + (k // 8) * desc.lbo
    w = sw // esize
    return (mn % w) * esize + (mn // w) * desc.lbo + (k % 8) * sw + (k // 8) * desc.sbo


def _tile_offsets(addr: _Addresses, region: BufferRegion, axes: tuple[int, int],
                  transposed: bool, desc: MatrixDesc, m: _Match, mma_mn: int, mma_k: int,
                  name: str) -> dict[tuple[int, int], int]:
    np = _np()
    a0, a1 = axes
    ext = (region.region[a0].extent.value, region.region[a1].extent.value)  # type: ignore[attr-defined]
    mn_ext, k_ext = (ext[1], ext[0]) if transposed else ext
    mn_g, k_g = np.meshgrid(np.arange(mma_mn), np.arange(mma_k), indexing="ij")
    lin = _hw_lin(desc, mn_g, k_g, addr.esize)
    found: dict[tuple[int, int], int] | None = None
    for origin in _origins(region, addr.shape):
        offsets: dict[tuple[int, int], int] = {}
        start0 = int(addr(origin))
        for t_mn, t_k in itertools.product(range(mn_ext // mma_mn), range(k_ext // mma_k)):
            rows = t_mn * mma_mn + mn_g
            cols = t_k * mma_k + k_g
            r, c = (cols, rows) if transposed else (rows, cols)
            index: list[Any] = list(origin)
            index[a0] = origin[a0] + r
            index[a1] = origin[a1] + c
            want = addr(index)
            start = int(want[0, 0])
            got = _swz(start + lin, desc.swizzle)
            if start % 16 or not np.array_equal(got, want):
                bad = np.argwhere(got != want)
                where = (f"element (mn={int(bad[0][0])}, k={int(bad[0][1])}) of tile "
                         f"({t_mn}, {t_k})" if len(bad) else f"tile ({t_mn}, {t_k}) start")
                raise ValueError(
                    f"gemm_async: the {name} region of {region.buffer.name} (start "
                    f"{list(origin)}) is not addressable by one {desc.swizzle_name} "
                    f"{'MN' if desc.mn_major else 'K'}-major descriptor: {where} is not where "
                    f"the layout puts it. Start MMA tiles on swizzle-atom rows (multiples of 8) "
                    f"and keep each {mma_k}-wide K step inside one atom.")
            offsets[(t_mn, t_k)] = start - start0
        if found is None:
            found = offsets
        elif found != offsets:
            raise ValueError(f"gemm_async: the {name} region's tile offsets depend on its symbolic "
                             f"start {[str(r.min) for r in region.region]}; use a layout whose "
                             f"atoms repeat with constant strides along that axis")
    assert found is not None
    return found
