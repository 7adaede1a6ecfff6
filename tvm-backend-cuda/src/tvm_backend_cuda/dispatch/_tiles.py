"""Where the elements of a tile live, for the register and shared-memory variants.

**Registers spread over threads.** A ``local`` buffer whose layout has thread axes
(``T.TileLayout(T.S[(C, 128, 8):(8, 1 @ T.tid, 1)])``) holds one logical tile spread over the
threads of the call's scope: the layout's iterators split the logical (row-major) index into
digits; a digit on a thread axis (``tid``: the thread's index in the scope; ``tx``: in the CTA;
``tid_in_wg``: in the warpgroup; ``laneid``, ``warpid``, ``wid_in_wg``, ``wgid``) is fixed by the calling thread, a digit on the memory axis
``m`` is a register offset. :func:`owned` lists, for the calling thread, its registers as
loops over the memory digits, with the register offset and the element's position in the
region. A ``local`` buffer without thread axes is private to each thread: every thread holds
(and works on) all of it.

The innermost memory digit, when it has stride 1 and is the last logical digit, becomes a
vectorized loop: the partner operand (global or shared) is then read or written with 16-byte
(or 8-, 4-byte) accesses by the CUDA code generator; the other digits become unrolled loops,
so register offsets are constants and the arrays stay in registers.

**Flat views.** Registers and laid-out shared buffers are accessed through a flat view of the
same memory (``T.decl_buffer`` of their data, no layout), at offsets the variant computes: a
register offset, or a swizzled shared offset whose low bits (one 16-byte chunk) are the
vector lanes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tvm.backend.sdk import DispatchContext, fail, fold_add, fold_mul, unflatten
from tvm.ir import (
    Buffer,
    BufferLoad,
    BufferRegion,
    DeclBuffer,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    PrimExpr,
    Stmt,
    TileLayout,
    Var,
    const,
    seq,
)
from tvm.ir import expr as E
from tvm.ir.linear import to_linear
from tvm.tirx.op import all_of

__all__ = [
    "Owned",
    "flat_view",
    "is_distributed",
    "is_local",
    "layout_offset",
    "owned",
    "pair_run",
    "unflatten",
]

THREAD_AXES = ("tid", "laneid", "warpid", "wid_in_wg", "wgid", "tid_in_wg", "tx")
MAX_VECTOR = 16  # elements in one vectorized loop at most


def is_local(region: BufferRegion | Buffer) -> bool:
    buf = region.buffer if isinstance(region, BufferRegion) else region
    return buf.scope == "local"


def _layout(buf: Buffer) -> TileLayout | None:
    lay = buf.layout
    return lay if isinstance(lay, TileLayout) else None


def is_distributed(region: BufferRegion | Buffer) -> bool:
    """A ``local`` buffer whose layout spreads it over threads."""
    buf = region.buffer if isinstance(region, BufferRegion) else region
    lay = _layout(buf)
    return buf.scope == "local" and lay is not None and any(
        it.axis.is_thread for it in lay.shard)


def _const(e: Any, what: str) -> int:
    if not isinstance(e, IntImm):
        fail(f"{what} must be a constant, got {e}")
    return e.value


def flatten(idx: Sequence[PrimExpr], extents: Sequence[PrimExpr]) -> PrimExpr:
    out: PrimExpr = const(0, "int32")
    for i, e in zip(idx, extents):
        out = fold_add(fold_mul(out, e), i)
    return out


def flat_view(buf: Buffer, tag: str = "flat") -> Buffer:
    """A 1-D view (no layout) of ``buf``'s memory, ``elem_offset`` kept."""
    lay = buf.layout
    if lay is None:
        size = 1
        for s in buf.shape:
            size *= _const(s, f"the shape of {buf.name}")
    else:
        size = _const(lay.span("m"), f"the size of {buf.name}'s layout")
    return Buffer(f"{buf.name}_{tag}", [size], buf.dtype, scope=buf.scope, data=buf.data,
                  elem_offset=buf.elem_offset, align=buf.align)


def layout_offset(buf: Buffer, idx: Sequence[PrimExpr]) -> PrimExpr:
    """The memory offset (elements, without ``elem_offset``) of logical ``buf[idx]``."""
    lay = buf.layout
    if lay is None:
        return flatten(idx, buf.shape)
    coords = lay.apply(list(idx), buf.shape)
    return coords.get("m", const(0, "int32"))


def _thread_axis_value(name: str, sctx: DispatchContext) -> PrimExpr:
    tid = sctx.thread_index()
    if name == "tid":
        return tid
    if name == "tx":  # the thread's index in the CTA, whatever the call's scope
        return sctx.thread_index("cta")
    if name == "tid_in_wg":
        return sctx.thread_index("warpgroup")
    if name == "laneid":
        return tid if sctx.scope_kind == "warp" else tid % 32
    if name == "warpid":
        return tid // 32
    if name == "wid_in_wg":
        return (tid // 32) % 4
    return tid // 128  # wgid


def _axis_threads(name: str, n: int) -> int:
    return {"tid": n, "tx": n, "tid_in_wg": min(n, 128), "laneid": min(n, 32), "warpid": max(1, n // 32),
            "wid_in_wg": max(1, min(n, 128) // 32), "wgid": max(1, n // 128)}[name]


@dataclass
class Owned:
    """The calling thread's registers of a region.

    ``loops`` (unrolled) and ``vec`` (vectorized, or None) are the loop variables and extents;
    ``m`` the register offset and ``r`` the element's row-major position in the region, both
    at ``vec``'s lane 0 (add the vector variable for the others); ``guards``: conditions for
    the thread to own anything and for the element to be inside the region.
    """

    loops: list[tuple[Var, int]]
    vec: tuple[Var, int] | None
    m: PrimExpr
    r: PrimExpr
    thread_guard: PrimExpr | None = None
    elem_guard: PrimExpr | None = None
    buffer: Buffer | None = None
    layout_key: tuple[Any, ...] = field(default_factory=tuple)

    @property
    def lanes(self) -> int:
        return self.vec[1] if self.vec is not None else 1

    @property
    def lane(self) -> PrimExpr:
        return self.vec[0] if self.vec is not None else const(0, "int32")

    def count(self) -> int:
        n = self.lanes
        for _, e in self.loops:
            n *= e
        return n

    def wrap(self, body: Stmt, *, vectorize: bool = True) -> Stmt:
        """``body`` inside the loops and guards."""
        stmt = body
        if self.vec is not None:
            kind = ForKind.VECTORIZED if vectorize else ForKind.UNROLLED
            stmt = For(self.vec[0], const(0, "int32"), const(self.vec[1], "int32"), kind, stmt)
        if self.elem_guard is not None:  # never depends on the vector lane (see owned)
            stmt = IfThenElse(self.elem_guard, stmt)
        for v, ext in reversed(self.loops):
            stmt = For(v, const(0, "int32"), const(ext, "int32"), ForKind.UNROLLED, stmt)
        if self.thread_guard is not None:
            stmt = IfThenElse(self.thread_guard, stmt)
        return stmt


def _key(lay: TileLayout) -> tuple[Any, ...]:
    return tuple((it.extent.value if isinstance(it.extent, IntImm) else str(it.extent),
                  it.stride.value if isinstance(it.stride, IntImm) else str(it.stride),
                  it.axis.name) for it in lay.shard)


def owned(region: BufferRegion, sctx: DispatchContext, *, max_vec: int = MAX_VECTOR) -> Owned:
    """The calling thread's part of a ``local`` region (see the module docstring)."""
    buf = region.buffer
    if buf.scope != "local":
        fail(f"{buf.name} is in '{buf.scope}' memory, not registers")
    shape = [_const(s, f"the shape of {buf.name}") for s in buf.shape]
    lay = _layout(buf)
    if lay is None:
        return _private(region, shape, max_vec)
    if len(shape) > 1 and not _is_whole(region, shape):
        # a register group may straddle the region's bounds in another dimension: the elements
        # are guarded one by one, so none is vectorized
        max_vec = 1
    iters = [(_const(it.extent, "a layout extent"), _const(it.stride, "a layout stride"),
              it.axis.name) for it in lay.shard]
    total = math.prod(e for e, _, _ in iters)
    numel = math.prod(shape)
    if total != numel:
        fail(f"the layout of {buf.name} covers {total} elements, its shape {shape} has {numel}")
    weights = []
    w = 1
    for e, _, _ in reversed(iters):
        weights.append(w)
        w *= e
    weights.reverse()
    n_threads = sctx.thread_extent()
    n = n_threads.value if isinstance(n_threads, IntImm) else None
    guards: list[PrimExpr] = []
    j: PrimExpr = const(0, "int32")
    m: PrimExpr = const(0, "int32")
    loops: list[tuple[Var, int]] = []
    vec: tuple[Var, int] | None = None
    coverage: dict[str, int] = {}
    for pos, ((ext, stride, axis), weight) in enumerate(zip(iters, weights)):
        if ext == 1:
            continue
        if axis in THREAD_AXES:
            value = _thread_axis_value(axis, sctx)
            digit = value if stride == 1 else value // stride
            top = stride * ext
            if n is None or _axis_threads(axis, n) > top:
                digit = digit % ext
            coverage[axis] = max(coverage.get(axis, 1), top)
            j = fold_add(j, fold_mul(digit, const(weight, "int32")))
            continue
        if axis != "m":
            fail(f"the layout of {buf.name} uses axis {axis!r}; registers use m and thread axes")
        var = Var(f"{buf.name}_r{pos}", "int32")
        last = pos == len(iters) - 1
        lanes = _vector_lanes(ext, max_vec) if last and stride == 1 and weight == 1 else 1
        if lanes == ext:
            vec = (var, ext)
        elif lanes > 1:  # a long run of registers: a loop over vectors of `lanes`
            loops.append((var, ext // lanes))
            vec = (Var(f"{buf.name}_v{pos}", "int32"), lanes)
            j = fold_add(j, fold_mul(var, const(lanes, "int32")))
            m = fold_add(m, fold_mul(var, const(lanes, "int32")))
            continue
        else:
            loops.append((var, ext))
        j = fold_add(j, fold_mul(var if vec is None or var is not vec[0] else const(0, "int32"),
                                 const(weight, "int32")))
        if vec is None or var is not vec[0]:
            m = fold_add(m, fold_mul(var, const(stride, "int32")))
    if n is not None:
        for axis, top in coverage.items():
            if _axis_threads(axis, n) > top:
                guards.append(E.LT(_thread_axis_value(axis, sctx), const(top, "int32")))
    thread_guard = _guard(guards)
    r, elem_guard = _region_position(region, shape, j, vec)
    return Owned(loops, vec, m, r, thread_guard, elem_guard, buf, _key(lay))


def _vector_lanes(ext: int, max_vec: int) -> int:
    """The lanes of the vectors a run of ``ext`` consecutive registers is copied in: all of
    them where they fit in ``max_vec``, else the largest power of two up to ``max_vec`` that
    divides ``ext``."""
    if ext <= max_vec:
        return ext
    lanes = 1
    while lanes * 2 <= max_vec and ext % (lanes * 2) == 0:
        lanes *= 2
    return lanes


def _private(region: BufferRegion, shape: list[int], max_vec: int) -> Owned:
    """A thread-private local region: the thread holds all of it (row-major registers)."""
    exts = [_const(r.extent, "a register region's extent") for r in region.region]
    mins = [r.min for r in region.region]
    loops: list[tuple[Var, int]] = []
    idx: list[PrimExpr] = []
    vec: tuple[Var, int] | None = None
    for d, e in enumerate(exts):
        if e == 1:
            idx.append(const(0, "int32"))
            continue
        var = Var(f"{region.buffer.name}_i{d}", "int32")
        if d == len(exts) - 1 and e <= max_vec:
            vec = (var, e)
            idx.append(const(0, "int32"))
        else:
            loops.append((var, e))
            idx.append(var)
    absolute = [fold_add(lo, i) for lo, i in zip(mins, idx)]
    m = flatten(absolute, [const(s, "int32") for s in shape])
    r = flatten(idx, [const(e, "int32") for e in exts])
    return Owned(loops, vec, m, r, None, None, region.buffer, ("private",))


def _region_position(region: BufferRegion, shape: list[int], j: PrimExpr,
                     vec: tuple[Var, int] | None) -> tuple[PrimExpr, PrimExpr | None]:
    """(row-major position in the region, guard that the element is in it) of logical
    element ``j`` of the buffer."""
    mins = [r.min for r in region.region]
    exts = [r.extent for r in region.region]
    if _is_whole(region, shape):
        return j, None
    if len(shape) == 1:
        lo, ext = mins[0], exts[0]
        lanes = vec[1] if vec is not None else 1
        inside = E.And(E.GE(j, lo), E.LT(j, fold_add(lo, ext)))
        if vec is not None and not (_multiple(lo, lanes) and _multiple(ext, lanes)):
            fail(f"the region of {region.buffer.name} does not start and end on a "
                 f"{lanes}-element register group")
        return j - lo, inside
    idx = unflatten(j, [const(s, "int32") for s in shape])
    conds = [E.And(E.GE(i, lo), E.LT(i, fold_add(lo, e))) for i, lo, e in zip(idx, mins, exts)]
    if vec is not None:
        fail(f"a vectorized part of a multi-dimensional region of {region.buffer.name}")
    return flatten([i - lo for i, lo in zip(idx, mins)], exts), _guard(conds)


def _is_whole(region: BufferRegion, shape: list[int]) -> bool:
    """The region is all of the buffer."""
    return all(isinstance(r.min, IntImm) and r.min.value == 0 for r in region.region) and all(
        isinstance(r.extent, IntImm) and r.extent.value == s
        for r, s in zip(region.region, shape))


def _guard(conds: Sequence[PrimExpr]) -> PrimExpr | None:
    """The conjunction of ``conds`` as a guard: None where it always holds."""
    cond = all_of(conds)
    return None if cond is True else E.convert(cond)


def _multiple(e: PrimExpr, n: int) -> bool:
    return isinstance(e, IntImm) and e.value % n == 0


def region_index(region: BufferRegion, r: PrimExpr, lane: PrimExpr, lanes: int) -> list[PrimExpr]:
    """Absolute indices of the element at row-major position ``r + lane`` of ``region`` (its
    innermost extent a multiple of ``lanes``, so the lanes stay in one row)."""
    exts = [x.extent for x in region.region]
    if lanes > 1:
        inner = exts[-1]
        if not (isinstance(inner, IntImm) and inner.value % lanes == 0):
            fail(f"the innermost extent {inner} of {region.buffer.name}'s region is not a "
                 f"multiple of {lanes}")
    idx = unflatten(r, exts)
    if lanes > 1:
        idx[-1] = fold_add(idx[-1], lane)
    return [fold_add(x.min, i) for x, i in zip(region.region, idx)]


def load_at(region: BufferRegion, r: PrimExpr, lane: PrimExpr, lanes: int) -> BufferLoad:
    return BufferLoad(region.buffer, region_index(region, r, lane, lanes))


def pair_run(own: Owned) -> tuple[Var, int] | None:
    """The loop over register pairs of ``own``'s innermost run: an even run starting at an even
    register (so each pair is one aligned 8-byte register pair); None otherwise."""
    if own.lanes < 2 or own.lanes % 2:
        return None
    lin = to_linear(own.m)
    if lin.const % 2 or any(c % 2 for _, c in lin.nonzero_terms()):
        return None
    return Var("pair", "int32"), own.lanes // 2


def declare(views: Sequence[Buffer], body: Stmt) -> Stmt:
    return seq([*(DeclBuffer(v) for v in views), body])


def same_distribution(a: Owned, b: Owned) -> bool:
    return a.layout_key == b.layout_key and a.count() == b.count()


Body = Callable[[PrimExpr, PrimExpr, PrimExpr], Stmt]
