"""From buffer regions to NKI access patterns.

A buffer's layout splits each logical dimension into *digits* (the layout's shard iterators:
``(extent, stride@axis)``). A region ``[lo, lo + n)`` of one dimension is a product of strided
digits when it covers whole inner digits and part of one more; its start is split into the
digits' coordinates with affine integer division (loop variables have known ranges). The
digits of all dimensions, in row-major order, describe the region as strided axes:

* on-chip buffers (``trn.sbuf``, ``trn.psum``): the ``P`` digits are the partitions of an
  instruction, the ``F`` and ``Bank`` digits its free access pattern (a bank is 2 KiB);
* HBM buffers (``global``, row-major): every digit is a stride in elements; which one is the
  partition dim follows from the on-chip operand of the same instruction.

Everything here is integer arithmetic on :class:`isa.Affine` index expressions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tvm.error import TVMError
from tvm.ir import Buffer, BufferLoad, BufferRegion, Range
from tvm.ir import expr as E

from . import isa
from .isa import AP, Affine
from .layout import is_trainium_layout, to_psum_layout, trainium_layout

__all__ = [
    "ON_CHIP",
    "AccessError",
    "Digit",
    "View",
    "buffer_layout",
    "group_aps",
    "region_of",
    "single_ap",
    "to_affine",
    "view_of",
]

ON_CHIP = ("trn.sbuf", "trn.psum")
PSUM_BANK_BYTES = isa.PSUM_BANK_BYTES


class AccessError(TVMError):
    """A region cannot be expressed as an NKI access pattern."""


# ------------------------------------------------------------------------------ affine indices


Ranges = Mapping[str, tuple[int, int]]  # var -> (min, max) inclusive


def to_affine(e: Any, env: Mapping[Any, Affine]) -> Affine:
    """An IR integer expression as an Affine over the loop variables in ``env``."""
    if isinstance(e, int):
        return Affine(e)
    if isinstance(e, E.IntImm):
        return Affine(e.value)
    if isinstance(e, E.Var):
        if e in env:
            return env[e]
        raise AccessError(f"index variable {e.name!r} is not a loop variable of the kernel")
    if isinstance(e, E.Add):
        return to_affine(e.a, env) + to_affine(e.b, env)
    if isinstance(e, E.Sub):
        return to_affine(e.a, env) - to_affine(e.b, env)
    if isinstance(e, E.Mul):
        a, b = to_affine(e.a, env), to_affine(e.b, env)
        if not a.terms:
            return b * a.const
        if not b.terms:
            return a * b.const
        raise AccessError(f"index {e} is not affine (a product of loop variables)")
    if isinstance(e, E.Cast):
        return to_affine(e.value, env)
    raise AccessError(f"index {e} is not an affine expression of loop variables "
                      f"({type(e).__name__} is not supported in Trainium indices)")


def _bounds(a: Affine, ranges: Ranges) -> tuple[int, int]:
    lo = hi = a.const
    for v, c in a.terms:
        vmin, vmax = ranges.get(v, (None, None))
        if vmin is None or vmax is None:
            raise AccessError(f"the range of loop variable {v!r} is unknown")
        lo += min(c * vmin, c * vmax)
        hi += max(c * vmin, c * vmax)
    return lo, hi


def divmod_affine(a: Affine, c: int, ranges: Ranges) -> tuple[Affine, Affine]:
    """``(q, r)`` with ``a == q * c + r`` and ``0 <= r < c`` for every value of the loop vars."""
    if c == 1:
        return a, Affine(0)
    q_terms = tuple((v, k // c) for v, k in a.terms if k % c == 0)
    r_terms = tuple((v, k) for v, k in a.terms if k % c != 0)
    q = Affine(a.const // c, q_terms)
    r = Affine(a.const % c, r_terms)
    lo, hi = _bounds(r, ranges)
    if lo // c != hi // c:
        raise AccessError(f"index {_fmt(a)} crosses a layout digit of extent {c}; tile the "
                          f"operation so that it does not")
    shift = lo // c
    return q + shift, r - shift * c


def _fmt(a: Affine) -> str:
    parts = [f"{k}*{v}" if k != 1 else v for v, k in a.terms]
    if a.const or not parts:
        parts.append(str(a.const))
    return " + ".join(parts)


# ------------------------------------------------------------------------------ layouts


def buffer_layout(buf: Buffer) -> Any:
    """The layout of ``buf``: its own, or for an on-chip buffer without one the default
    ``P`` on dim 0 and ``F`` on the rest (PSUM banked)."""
    if buf.layout is not None:
        return buf.layout
    if buf.scope in ON_CHIP:
        shape = _static_shape(buf)
        ann = "P" + "F" * (len(shape) - 1) if shape else ""
        return trainium_layout(ann, shape, is_psum=buf.scope == "trn.psum")
    return None


def _static_shape(buf: Buffer) -> tuple[int, ...]:
    shape = buf.static_shape()
    if shape is None:
        raise AccessError(f"buffer {buf.name!r} has a symbolic shape; Trainium kernels need "
                          f"static shapes")
    return shape


def _const_stride(buf: Buffer, stride: E.PrimExpr) -> int:
    if not isinstance(stride, E.IntImm):
        raise AccessError(f"buffer {buf.name!r} has a symbolic stride {stride}; Trainium kernels "
                          f"need static strides")
    return stride.value


@dataclass(frozen=True)
class _Iter:
    extent: int
    stride: int
    axis: str


def dim_iters(buf: Buffer) -> list[list[_Iter]]:
    """The layout iterators of each logical dimension of ``buf`` (outer to inner)."""
    shape = _static_shape(buf)
    layout = buffer_layout(buf)
    if layout is None:
        strides = [_const_stride(buf, s) for s in buf.strides] if buf.strides else None
        if strides is None:
            strides, acc = [], 1
            for n in reversed(shape):
                strides.append(acc)
                acc *= n
            strides.reverse()
        return [[_Iter(n, s, "m")] for n, s in zip(shape, strides)]
    iters = [_Iter(int(it.extent.value), int(it.stride.value), it.axis.name)
             for it in layout.shard]
    groups: list[list[_Iter]] = []
    pos = 0
    for n in shape:
        group: list[_Iter] = []
        prod = 1
        while prod < n or (n == 1 and not group and pos < len(iters) and iters[pos].extent == 1):
            if pos >= len(iters):
                break
            group.append(iters[pos])
            prod *= iters[pos].extent
            pos += 1
        if prod != n:
            raise AccessError(f"the layout of buffer {buf.name!r} does not split along its "
                              f"dimensions (shape {shape}, layout {layout})")
        groups.append(group)
    return groups


def p_dims(buf: Buffer) -> list[int]:
    """The logical dimensions of an on-chip buffer that lie (partly) on partitions."""
    return [d for d, g in enumerate(dim_iters(buf)) if any(it.axis == "P" for it in g)]


# ------------------------------------------------------------------------------ views


@dataclass(frozen=True)
class Digit:
    """One strided axis of a region: ``count`` steps of ``stride`` along ``axis``.

    ``dim`` is the logical dimension it comes from; ``lstride`` its step in that dimension's
    index (relative to the region's start)."""

    axis: str
    stride: int
    count: int
    dim: int
    lstride: int


@dataclass(frozen=True)
class View:
    """A region as a start coordinate per axis plus its digits in row-major order."""

    buffer: Buffer
    start: dict[str, Affine]
    digits: tuple[Digit, ...]
    name: str = ""

    @property
    def on_chip(self) -> bool:
        return self.buffer.scope in ON_CHIP

    @property
    def elements(self) -> int:
        return math.prod(d.count for d in self.digits)


def region_of(arg: Any) -> BufferRegion:
    if isinstance(arg, BufferRegion):
        return arg
    if isinstance(arg, Buffer):
        return arg.full_region()
    if isinstance(arg, BufferLoad):
        return BufferRegion(arg.buffer, [Range(i, 1) for i in arg.indices])
    raise AccessError(f"expected a buffer, a region or an element, got {type(arg).__name__}")


def view_of(arg: Any, env: Mapping[Any, Affine], ranges: Ranges, name: str = "") -> View:
    region = region_of(arg)
    buf = region.buffer
    groups = dim_iters(buf)
    start: dict[str, Affine] = {}
    digits: list[Digit] = []
    for d, (rng, group) in enumerate(zip(region.region, groups)):
        lo = to_affine(rng.min, env)
        ext = rng.extent
        if not isinstance(ext, E.IntImm):
            raise AccessError(f"region of {buf.name!r} has a symbolic extent {ext}")
        dim_digits, coords = _split_range(buf, d, lo, ext.value, group, ranges)
        digits.extend(dim_digits)
        for axis, value in coords.items():
            start[axis] = start.get(axis, Affine()) + value
    return View(buf, start, tuple(dg for dg in digits if dg.count > 1), name or buf.name)


def _split_range(buf: Buffer, d: int, lo: Affine, n: int, group: Sequence[_Iter],
                 ranges: Ranges) -> tuple[list[Digit], dict[str, Affine]]:
    """Digits covering ``[lo, lo + n)`` of dim ``d`` and the start coordinate on each axis."""
    inner = 1
    k = len(group) - 1
    covered: list[Digit] = []
    while k >= 0 and n % (inner * group[k].extent) == 0:
        it = group[k]
        covered.append(Digit(it.axis, it.stride, it.extent, d, inner))
        inner *= it.extent
        k -= 1
    rest = n // inner
    if rest > 1:
        if k < 0 or rest > group[k].extent:
            raise AccessError(f"region [{_fmt(lo)}, +{n}) of dim {d} of buffer {buf.name!r} "
                              f"exceeds the dimension")
        it = group[k]
        covered.append(Digit(it.axis, it.stride, rest, d, inner))
    covered.reverse()
    # start coordinates: split lo into the digits of the group, innermost first
    coords: dict[str, Affine] = {}
    x = lo
    for idx in range(len(group) - 1, -1, -1):
        it = group[idx]
        if idx == 0:
            digit = x
        else:
            x, digit = divmod_affine(x, it.extent, ranges)
        if idx > k and (digit.terms or digit.const):
            raise AccessError(f"region [{_fmt(lo)}, +{n}) of dim {d} of buffer {buf.name!r} "
                              f"does not start at a multiple of {it.extent}")
        if idx == k and rest > 1:
            _, hi = _bounds(digit, ranges)
            if hi + rest > it.extent:
                raise AccessError(f"region [{_fmt(lo)}, +{n}) of dim {d} of buffer "
                                  f"{buf.name!r} crosses a layout digit of extent {it.extent}")
        coords[it.axis] = coords.get(it.axis, Affine()) + digit * it.stride
    return covered, coords


# ------------------------------------------------------------------------------ refinement


def _refine(a: list[Digit], b: list[Digit]) -> tuple[list[Digit], list[Digit]]:
    """Split digits so that both lists have the same counts in the same order."""
    a, b = list(a), list(b)
    out_a: list[Digit] = []
    out_b: list[Digit] = []
    while a and b:
        x, y = a.pop(), b.pop()
        if x.count == y.count:
            out_a.append(x)
            out_b.append(y)
        elif x.count < y.count and y.count % x.count == 0:
            out_a.append(x)
            out_b.append(replace(y, count=x.count))
            b.append(replace(y, count=y.count // x.count, stride=y.stride * x.count,
                             lstride=y.lstride * x.count))
        elif y.count < x.count and x.count % y.count == 0:
            out_b.append(y)
            out_a.append(replace(x, count=y.count))
            a.append(replace(x, count=x.count // y.count, stride=x.stride * y.count,
                             lstride=x.lstride * y.count))
        else:
            raise AccessError("operands have incompatible shapes for an element-wise instruction")
    if a or b:
        raise AccessError("operands of an element-wise instruction have different sizes")
    out_a.reverse()
    out_b.reverse()
    return out_a, out_b


def _mergeable(outer: Digit, inner: Digit) -> bool:
    return outer.axis == inner.axis and outer.stride == inner.stride * inner.count


# ------------------------------------------------------------------------------ APs


def _elem_stride(view: View, d: Digit) -> int:
    if d.axis == "Bank":
        return d.stride * (PSUM_BANK_BYTES // view.buffer.dtype.bytes)
    return d.stride


def _offset(view: View) -> Affine:
    off = view.start.get("F", Affine()) + view.start.get("m", Affine())
    bank = view.start.get("Bank")
    if bank is not None:
        off = off + bank * (PSUM_BANK_BYTES // view.buffer.dtype.bytes)
    return off


def _simplify(a: Affine) -> Any:
    return a if a.terms else a.const


def group_aps(views: Sequence[View], names: Sequence[str], *, what: str,
              keep_apart: Sequence[int] = ()) -> list[AP]:
    """APs of the operands of one element-wise instruction (element ``i`` of each corresponds).

    The first on-chip view decides which digits are partitions. ``keep_apart`` lists logical
    dims of the first view whose digits must not merge with others (reduction axes).
    """
    anchor = next((i for i, v in enumerate(views) if v.on_chip), None)
    if anchor is None:
        raise AccessError(f"{what}: no operand is in SBUF or PSUM")
    digits = [list(v.digits) for v in views]
    # refine every operand against the anchor until all agree
    for _ in range(2):
        for i in range(len(views)):
            if i != anchor:
                digits[anchor], digits[i] = _refine(digits[anchor], digits[i])
    n = len(digits[anchor])
    p_idx = [j for j, dg in enumerate(digits[anchor]) if dg.axis == "P"]
    for i, v in enumerate(views):
        if v.on_chip:
            other = [j for j, dg in enumerate(digits[i]) if dg.axis == "P"]
            if other != p_idx:
                raise AccessError(
                    f"{what}: the partition dims of {names[i]} ({v.buffer.name}) do not match "
                    f"those of {names[anchor]} ({views[anchor].buffer.name}); transpose "
                    f"through an identity matmul (Tx.copy does) first")
    if p_idx and p_idx != list(range(p_idx[0], p_idx[-1] + 1)):
        raise AccessError(f"{what}: partition digits are not adjacent")
    aps = []
    for i, v in enumerate(views):
        ds = digits[i]
        part = [ds[j] for j in p_idx]
        free = [ds[j] for j in range(n) if j not in p_idx]
        partitions, p_stride = 1, 1
        if part:
            merged = part[-1]
            for outer in reversed(part[:-1]):
                if not _mergeable(outer, merged):
                    raise AccessError(f"{what}: the partitions of {names[i]} are not contiguous")
                merged = replace(merged, count=merged.count * outer.count)
            partitions = merged.count
            p_stride = merged.stride
            if v.on_chip and p_stride != 1:
                raise AccessError(f"{what}: partitions of {names[i]} step by {p_stride}")
        aps.append((v, partitions, p_stride, free))
    # merge adjacent free digits where every operand allows it
    frees = [list(a[3]) for a in aps]
    j = len(frees[0]) - 1 if frees else -1
    while j > 0:
        ok = all(_mergeable(f[j - 1], f[j]) for f in frees)
        ok = ok and not (keep_apart and (frees[0][j - 1].dim in keep_apart)
                         != (frees[0][j].dim in keep_apart))
        if ok:
            for f in frees:
                f[j - 1:j + 1] = [replace(f[j], count=f[j].count * f[j - 1].count)]
        j -= 1
    out = []
    for (v, partitions, p_stride, _), free in zip(aps, frees):
        pattern = tuple((_elem_stride(v, d), d.count) for d in free) or ((1, 1),)
        if v.on_chip:
            out.append(AP(v.name, partitions, pattern, offset=_simplify(_offset(v)),
                          p_start=_simplify(v.start.get("P", Affine()))))
        else:
            out.append(AP(v.name, partitions, pattern, offset=_simplify(_offset(v)),
                          p_stride=p_stride))
    return out


def free_digits(view: View) -> list[Digit]:
    """The free digits of an on-chip view after :func:`single_ap`'s merging (for reductions)."""
    return [d for d in view.digits if d.axis != "P"]


def single_ap(view: View, name: str, *, what: str, keep_apart: Sequence[int] = ()) -> AP:
    """The AP of an on-chip operand by itself (its ``P`` digits are its partitions)."""
    if not view.on_chip:
        raise AccessError(f"{what}: {name} ({view.buffer.name}) must be in SBUF or PSUM, not "
                          f"{view.buffer.scope}")
    return group_aps([view], [name], what=what, keep_apart=keep_apart)[0]


def psum_layout_of(buf: Buffer) -> Any:
    """Helper for tests: the PSUM layout of a buffer's SBUF-style layout."""
    lay = buffer_layout(buf)
    return lay if lay is None or not is_trainium_layout(lay) else to_psum_layout(lay)


def axis_size(layout: Any, axis: str) -> int:
    """Product of the extents of the layout's iterators on ``axis`` (static)."""
    return math.prod(int(it.extent.value) for it in layout.shard if it.axis.name == axis)


def axis_span(layout: Any, axis: str) -> int:
    """One past the largest coordinate on ``axis`` (static; 0 when the axis is absent)."""
    its = [it for it in layout.shard if it.axis.name == axis]
    if not its:
        return 1 if axis == "F" else 0  # a partition holds one element
    return 1 + sum((int(it.extent.value) - 1) * int(it.stride.value) for it in its)
