"""Walking a swizzled shared-memory tile with additions instead of a swizzle per access (the
seed's ``copy/_swizzle_iter``).

A thread that copies a tile between registers and a swizzled shared buffer visits the offsets
``M0 + ds_k``: its start ``M0`` and the offsets ``ds_k`` of the outer iterations ``k``. Applying
the :class:`~tvm.ir.layout.SwizzleLayout` (``p`` = ``per_element``, ``sw`` = ``swizzle_len``,
``at`` = ``atom_len``; chunks of ``C = 2**p`` elements; chunk index ``q = M // C``, whose bits
``[0, sw)`` are XORed with bits ``[at, at + sw)``) at every access costs an XOR and shifts. When

(a) every outer stride is a whole number of chunks, a power of two ``C * 2**bj``;
(b) each such bit ``bj`` lies below ``at`` (it never carries into the row bits) and no two
    iterations share a bit;
(c) the start's chunk index ``M0 // C`` has a zero at each of those bits for every thread,

then ``swizzle(M0 + ds_k) = swizzle(M0) + sum of signed_strides[j] over the bits j set in k``,
with ``signed_strides[j] = sigma_j * C * 2**bj``: ``sigma_j = +1`` for a bit in ``[sw, at)`` (not
XORed) and ``1 - 2 * bit_(at + bj)(M0 // C)`` for a bit in ``[0, sw)`` (the XOR flips the added
bit when the row bit is set). The sign depends on the thread (through ``M0``), so it is computed
once per thread (:func:`emit_init`), and each iteration adds (:func:`emit_iter_offset`).

An iteration whose stride is a multiple of the swizzle's period ``2**(p + at + sw)`` moves whole
swizzle blocks, which the swizzle maps onto themselves: it adds ``coord * stride`` whatever its
extent (a :class:`_LinearIter`). Other extents must be powers of two, split into binary
iterations (a :class:`_BitIter`), outermost bit first. Anything else is rejected
(:func:`try_recognize` returns None) and the caller applies the swizzle per access.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tvm.ir import ComposeLayout, IntImm, PrimExpr, SwizzleLayout, const
from tvm.ir.linear import to_linear

__all__ = ["SwizzlePattern", "emit_init", "emit_iter_offset", "get_swizzle", "try_recognize"]


@dataclass(frozen=True)
class _BitIter:
    """An outer iteration of power-of-two extent: ``n_bits`` binary iterations whose signed
    strides are ``signed_strides[slot_start : slot_start + n_bits]`` (outermost bit first)."""

    ext: int
    stride: int
    n_bits: int
    slot_start: int


@dataclass(frozen=True)
class _LinearIter:
    """An outer iteration over whole swizzle blocks: adds ``coord * stride``."""

    ext: int
    stride: int


@dataclass
class SwizzlePattern:
    """What :func:`try_recognize` found: the swizzle, the outer iterations (outermost first), and
    per binary iteration its bit ``bj`` of the chunk index and its stride ``C * 2**bj``."""

    swizzle: SwizzleLayout
    outer_iters: list[_BitIter | _LinearIter] = field(default_factory=list)
    bit_positions: list[int] = field(default_factory=list)
    iter_strides_elems: list[int] = field(default_factory=list)

    @property
    def n_binary_iters(self) -> int:
        return len(self.bit_positions)


def get_swizzle(layout: object) -> SwizzleLayout | None:
    """The swizzle of ``layout``: itself, a ComposeLayout's ``layout_A``, else None."""
    if isinstance(layout, SwizzleLayout):
        return layout
    if isinstance(layout, ComposeLayout):
        return layout.layout_A
    return None


def _known_multiple(e: PrimExpr | int) -> int:
    """A number that ``e`` is always a multiple of (0: ``e`` is 0)."""
    if isinstance(e, int):
        return abs(e)
    if isinstance(e, IntImm):
        return abs(e.value)
    lin = to_linear(e)
    g = abs(lin.const)
    for _, c in lin.nonzero_terms():
        g = math.gcd(g, abs(c))
    return g


def _log2_exact(n: int) -> int | None:
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else None


def try_recognize(swizzle: SwizzleLayout, iter_extents: list[int], iter_strides: list[int],
                  M0: PrimExpr | int) -> SwizzlePattern | None:  # noqa: N803 - the seed's name
    """The pattern of the outer iterations (``iter_extents``/``iter_strides`` in elements,
    outermost first) from start offset ``M0``, or None when conditions (a)-(c) of the module
    docstring do not hold."""
    if len(iter_extents) != len(iter_strides):
        raise ValueError(f"try_recognize: {len(iter_extents)} extents but {len(iter_strides)} "
                         "strides; give one stride per outer iteration")
    if not swizzle.swizzle_inner:
        return None
    p, sw, at = swizzle.per_element, swizzle.swizzle_len, swizzle.atom_len
    chunk, period = 1 << p, 1 << (p + at + sw)
    pat = SwizzlePattern(swizzle)
    for ext, stride in zip(iter_extents, iter_strides):
        if ext == 1:
            pat.outer_iters.append(_LinearIter(1, stride))
            continue
        if stride % period == 0:
            pat.outer_iters.append(_LinearIter(ext, stride))
            continue
        n_bits = _log2_exact(ext)
        if n_bits is None or stride % chunk:
            return None  # a non-power-of-two extent inside a block, or (a)
        bit0 = _log2_exact(stride // chunk)
        if bit0 is None:
            return None  # (a): not a power of two chunks
        slot = len(pat.bit_positions)
        for b in reversed(range(n_bits)):  # outermost bit first
            pat.bit_positions.append(bit0 + b)
            pat.iter_strides_elems.append(stride << b)
        pat.outer_iters.append(_BitIter(ext, stride, n_bits, slot))
    bits = pat.bit_positions
    if any(b >= at for b in bits) or len(set(bits)) != len(bits):
        return None  # (b)
    if bits:
        m = _known_multiple(M0)
        if m and m % (chunk << (max(bits) + 1)):
            return None  # (c): the start's chunk index may have one of those bits set
    return pat


def emit_init(pattern: SwizzlePattern, M0: PrimExpr) -> tuple[PrimExpr, list[PrimExpr]]:  # noqa: N803
    """(the swizzled start offset, the thread's signed stride of each binary iteration)."""
    sw, at, p = pattern.swizzle.swizzle_len, pattern.swizzle.atom_len, pattern.swizzle.per_element
    if not pattern.swizzle.swizzle_inner:
        raise ValueError("emit_init: only a swizzle_inner=True swizzle has this pattern")
    base = pattern.swizzle.swizzle(M0)
    q = M0 // const(1 << p, M0.dtype)
    signed: list[PrimExpr] = []
    for bj, stride in zip(pattern.bit_positions, pattern.iter_strides_elems):
        if bj >= sw:
            signed.append(const(stride, M0.dtype))
        else:
            row_bit = (q >> const(at + bj, M0.dtype)) & const(1, M0.dtype)
            signed.append((const(1, M0.dtype) - row_bit * const(2, M0.dtype))
                          * const(stride, M0.dtype))
    return base, signed


def emit_iter_offset(pattern: SwizzlePattern, signed_strides: list[PrimExpr], base: PrimExpr,
                     coords: list[int]) -> PrimExpr:
    """The swizzled offset at the outer coordinates ``coords`` (constants: the iterations are
    unrolled): ``base`` plus the signed strides of the set bits and the linear moves."""
    if len(coords) != len(pattern.outer_iters):
        raise ValueError(f"emit_iter_offset: {len(coords)} coordinates for "
                         f"{len(pattern.outer_iters)} outer iterations")
    off = base
    for it, c in zip(pattern.outer_iters, coords):
        if isinstance(it, _LinearIter):
            if c:
                off = off + const(c * it.stride, base.dtype)
            continue
        for b in range(it.n_bits):
            if (c >> (it.n_bits - 1 - b)) & 1:
                off = off + signed_strides[it.slot_start + b]
    return off
