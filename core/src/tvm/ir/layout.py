"""Tile layouts: how a buffer's logical elements map onto memory and thread axes.

A :class:`TileLayout` is a list of *shard* iterators ``(extent, stride@axis)``. The logical
index space of the buffer (row-major, flattened) is split into digits, outermost iterator first;
digit ``i`` contributes ``digit * stride_i`` to the coordinate on ``axis_i``. Memory axes (``m``,
and those backends add, e.g. Trainium's ``P``, ``F`` and ``Bank``) give addresses; thread axes
(``laneid``, ``warpid``, ...) say which thread holds the element. *Replica* iterators name thread
axes over which every element is replicated.

The set of axes is open: ``Axis.register("P", kind="memory", owner=...)`` adds one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._registry import Registry
from .expr import IntImm, PrimExpr, convert
from .node import Node

__all__ = ["AXES", "Axis", "ComposeLayout", "Iter", "R", "S", "SwizzleLayout", "TileLayout"]


class Axis:
    """A named layout axis, of kind ``memory`` or ``thread``. Compare with ``is``."""

    __slots__ = ("kind", "name")

    def __init__(self, name: str, kind: str) -> None:
        if kind not in ("memory", "thread"):
            raise ValueError(f"axis kind must be 'memory' or 'thread', not {kind!r}")
        self.name = name
        self.kind = kind

    @property
    def is_memory(self) -> bool:
        return self.kind == "memory"

    @property
    def is_thread(self) -> bool:
        return self.kind == "thread"

    @staticmethod
    def get(name: str) -> Axis:
        axis = AXES.get(name)
        if axis is None:
            raise KeyError(
                f"unknown layout axis {name!r}; known axes: {sorted(AXES.keys())}. Backends add "
                f"theirs with Axis.register(name, kind)"
            )
        return axis

    @staticmethod
    def register(name: str, kind: str = "memory", *, override: bool = False) -> Axis:
        existing = AXES.get(name)
        if existing is not None and existing.kind == kind and not override:
            return existing
        return AXES.register(name, Axis(name, kind), override=override)

    def __rmatmul__(self, stride: Any) -> AxisStride:
        return AxisStride(stride, self)

    def __repr__(self) -> str:
        return f"Axis({self.name!r})"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (Axis.get, (self.name,))


AXES: Registry[str, Axis] = Registry("layout axis")
for _name, _kind in (("m", "memory"), ("laneid", "thread"), ("warpid", "thread"),
                     ("wid_in_wg", "thread"), ("wgid", "thread"), ("cta_id", "thread"),
                     ("tid", "thread")):
    AXES.register(_name, Axis(_name, _kind))


class AxisStride:
    """``stride @ axis``, the right-hand side of a shard iterator in ``S[...]``."""

    __slots__ = ("axis", "stride")

    def __init__(self, stride: Any, axis: Axis) -> None:
        self.stride = stride
        self.axis = axis


class Iter(Node):
    """One shard iterator: ``extent`` values stepping by ``stride`` along ``axis``."""

    _fields = ("extent", "stride", "axis_name")

    def __init__(self, extent: Any, stride: Any, axis: Axis | str = "m") -> None:
        self.extent = convert(extent)
        self.stride = convert(stride)
        self.axis = axis if isinstance(axis, Axis) else Axis.get(axis)

    @property
    def axis_name(self) -> str:
        return self.axis.name

    def __repr__(self) -> str:
        return f"Iter({self.extent}, {self.stride}@{self.axis.name})"


class TileLayout(Node):
    _fields = ("shard", "replica")

    def __init__(self, shard: Sequence[Iter] | _ShardSpec,
                 replica: Sequence[Iter] | _ShardSpec = ()) -> None:
        if isinstance(shard, _ShardSpec):
            # S[...] + R[...]: one spec carries both
            replica = getattr(shard, "replica_iters", None) or replica
            shard = shard.iters
        if isinstance(replica, _ShardSpec):
            replica = replica.iters
        self.shard = list(shard)
        self.replica = list(replica)
        for it in self.replica:
            if not it.axis.is_thread:
                raise ValueError(f"replica iterator {it!r} must be on a thread axis")

    @staticmethod
    def from_iters(shard: Sequence[Iter], replica: Sequence[Iter] = (), exclude: Any = None) -> TileLayout:
        return TileLayout(shard, replica)

    @staticmethod
    def row_major(shape: Sequence[Any], axis: Axis | str = "m") -> TileLayout:
        strides = default_strides(shape)
        return TileLayout([Iter(e, s, axis) for e, s in zip(shape, strides)])

    # -- queries -----------------------------------------------------------------------------
    def axes(self) -> list[Axis]:
        seen: list[Axis] = []
        for it in self.shard + self.replica:
            if it.axis not in seen:
                seen.append(it.axis)
        return seen

    def size(self, axis: str | None = None) -> PrimExpr:
        """Product of the extents of the shard iterators (on ``axis`` if given)."""
        total: PrimExpr = convert(1)
        for it in self.shard:
            if axis is None or it.axis.name == axis:
                total = _mul(total, it.extent)
        return total

    def span(self, axis: str = "m") -> PrimExpr:
        """One past the largest coordinate reached on ``axis``."""
        total: PrimExpr = convert(1)
        for it in self.shard:
            if it.axis.name == axis:
                total = _add(total, _mul(_sub(it.extent, 1), it.stride))
        return total

    def is_memory_only(self) -> bool:
        return all(it.axis.is_memory for it in self.shard) and not self.replica

    def apply(self, indices: Sequence[Any], shape: Sequence[Any]) -> dict[str, PrimExpr]:
        """Coordinates on each axis of the logical element at ``indices`` of ``shape``."""
        flat: PrimExpr = convert(0)
        for idx, ext in zip(indices, shape):
            flat = _add(_mul(flat, ext), convert(idx))
        coords: dict[str, PrimExpr] = {}
        rest = flat
        for pos in range(len(self.shard) - 1, -1, -1):
            it = self.shard[pos]
            digit = _mod(rest, it.extent) if pos > 0 else rest
            rest = _div(rest, it.extent)
            term = _mul(digit, it.stride)
            name = it.axis.name
            coords[name] = _add(coords[name], term) if name in coords else term
        return coords

    def __repr__(self) -> str:
        ext = ", ".join(str(it.extent) for it in self.shard)
        strides = ", ".join(str(it.stride) if it.axis.name == "m" else f"{it.stride}@{it.axis.name}"
                            for it in self.shard)
        return f"TileLayout(S[({ext}):({strides})])"


class SwizzleLayout(Node):
    """An XOR swizzle of memory offsets (CUTLASS's ``Swizzle<B, M, S>``; TVM's SwizzleLayout).

    On an offset ``a`` (in elements): the ``swizzle_len`` bits of ``a`` starting at bit
    ``per_element`` are XORed with the ``swizzle_len`` bits starting at bit ``per_element +
    atom_len``. ``2 ** per_element`` consecutive elements (one 16-byte chunk for the shared
    memory swizzles of the tensor cores and TMA) stay together; the chunk index within a row of
    ``2 ** swizzle_len`` chunks is permuted by the row index. Blocks of
    ``2 ** (per_element + atom_len + swizzle_len)`` elements map onto themselves, so the span of
    a layout composed with it is unchanged when it is a multiple of that block.

    It acts on memory offsets only; :class:`ComposeLayout` applies it after a TileLayout.
    """

    _fields = ("per_element", "swizzle_len", "atom_len")
    __script_ctor__ = "SwizzleLayout"

    def __init__(self, per_element: int, swizzle_len: int, atom_len: int) -> None:
        for name, v in (("per_element", per_element), ("swizzle_len", swizzle_len),
                        ("atom_len", atom_len)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"SwizzleLayout: {name} must be a non-negative int, got {v!r}")
        if swizzle_len > atom_len:
            raise ValueError(f"SwizzleLayout: swizzle_len ({swizzle_len}) must not exceed "
                             f"atom_len ({atom_len}); the XORed bit ranges would overlap")
        self.per_element = per_element
        self.swizzle_len = swizzle_len
        self.atom_len = atom_len

    @property
    def block(self) -> int:
        """Elements in one block that the swizzle permutes within."""
        return 1 << (self.per_element + self.atom_len + self.swizzle_len)

    def swizzle(self, offset: Any) -> Any:
        """The swizzled offset: an int for an int, else an expression."""
        if self.swizzle_len == 0:
            return offset
        mask = (1 << self.swizzle_len) - 1
        shift = self.per_element + self.atom_len
        value = _val(offset)
        if isinstance(value, int):
            return convert(value ^ (((value >> shift) & mask) << self.per_element))
        e = convert(offset)
        return e ^ (((e >> shift) & mask) << self.per_element)

    def is_memory_only(self) -> bool:
        return True

    def __repr__(self) -> str:
        return (f"SwizzleLayout(per_element={self.per_element}, swizzle_len={self.swizzle_len}, "
                f"atom_len={self.atom_len})")


class ComposeLayout(Node):
    """``layout_B`` then ``layout_A``: the TileLayout ``layout_B`` maps logical elements to
    offsets, the :class:`SwizzleLayout` ``layout_A`` permutes the memory offsets (as TVM's
    ``ComposeLayout(swizzle, tile)``). Thread axes of ``layout_B`` pass through."""

    _fields = ("layout_A", "layout_B")
    __script_ctor__ = "ComposeLayout"

    def __init__(self, layout_A: SwizzleLayout, layout_B: TileLayout) -> None:  # noqa: N803
        if not isinstance(layout_A, SwizzleLayout):
            raise TypeError(f"ComposeLayout: layout_A must be a SwizzleLayout, got "
                            f"{type(layout_A).__name__}")
        if not isinstance(layout_B, TileLayout):
            raise TypeError(f"ComposeLayout: layout_B must be a TileLayout, got "
                            f"{type(layout_B).__name__}")
        self.layout_A = layout_A
        self.layout_B = layout_B

    @property
    def shard(self) -> list[Iter]:
        return self.layout_B.shard

    @property
    def replica(self) -> list[Iter]:
        return self.layout_B.replica

    def axes(self) -> list[Axis]:
        return self.layout_B.axes()

    def size(self, axis: str | None = None) -> PrimExpr:
        return self.layout_B.size(axis)

    def span(self, axis: str = "m") -> PrimExpr:
        span = self.layout_B.span(axis)
        block = self.layout_A.block
        value = _val(span)
        if axis == "m" and isinstance(value, int) and value % block:
            return convert((value + block - 1) // block * block)
        return span

    def is_memory_only(self) -> bool:
        return self.layout_B.is_memory_only()

    def apply(self, indices: Sequence[Any], shape: Sequence[Any]) -> dict[str, PrimExpr]:
        coords = self.layout_B.apply(indices, shape)
        if "m" in coords:
            coords["m"] = self.layout_A.swizzle(coords["m"])
        return coords

    def __repr__(self) -> str:
        return f"ComposeLayout({self.layout_A!r}, {self.layout_B!r})"


class _ShardSpec:
    def __init__(self, iters: list[Iter]) -> None:
        self.iters = iters


class _S:
    """``S[...]`` builds the shard iterators of a TileLayout, in every form Apache TVM accepts:
    ``S[(e0, e1):(s0, s1 @ axis)]``, ``S[8 : 4 @ laneid]`` (one dimension), ``S[8, 4, 2]`` and
    ``S[8]`` (extents only: row-major strides on ``m``); a stride may be ``k @ axis``, an axis
    name (stride 1 on it) or a ``(stride, axis)`` pair. ``S[...] + R[...]`` adds replicas."""

    def __getitem__(self, key: Any) -> _ShardSpec:
        return _LayoutSpec(_iters_of(key, "S"))


def _iters_of(key: Any, what: str) -> list[Iter]:
    if isinstance(key, slice):
        if key.step is not None:
            raise TypeError(f"write {what}[(extents...):(strides...)], e.g. {what}[(8, 16):(16, 1)]")
        extents = key.start if isinstance(key.start, (tuple, list)) else (key.start,)
        strides = key.stop if isinstance(key.stop, (tuple, list)) else (key.stop,)
        if len(extents) != len(strides):
            raise ValueError(f"{what}[...] has {len(extents)} extents but {len(strides)} strides")
    else:  # extents only: row-major on memory
        extents = tuple(key) if isinstance(key, (tuple, list)) else (key,)
        strides = tuple(default_strides(extents))
    return [_iter(e, s) for e, s in zip(extents, strides)]


def _iter(extent: Any, stride: Any) -> Iter:
    if isinstance(stride, AxisStride):
        return Iter(extent, stride.stride, stride.axis)
    if isinstance(stride, (str, Axis)):
        return Iter(extent, 1, stride)
    if isinstance(stride, tuple) and len(stride) == 2:
        return Iter(extent, stride[0], stride[1])
    return Iter(extent, stride, "m")


class _LayoutSpec(_ShardSpec):
    """What ``S[...]`` and ``R[...]`` build; ``+`` joins a shard spec and a replica spec."""

    def __init__(self, iters: list[Iter], replica: list[Iter] | None = None) -> None:
        super().__init__(iters)
        self.replica_iters = replica or []

    def __add__(self, other: Any) -> _LayoutSpec:
        if not isinstance(other, _LayoutSpec):
            raise TypeError("a layout spec adds only S[...] and R[...] (offsets such as "
                            "`+ 1 @ laneid` are not supported here)")
        if self.iters and other.iters:
            raise TypeError("a TileLayout takes one S[...] (shard) spec")
        return _LayoutSpec(self.iters or other.iters, self.replica_iters + other.replica_iters)

    __radd__ = __add__


class _R:
    """``R[...]``: replica iterators (on thread axes), in the forms ``S[...]`` takes."""

    def __getitem__(self, key: Any) -> _LayoutSpec:
        return _LayoutSpec([], _iters_of(key, "R"))


S = _S()
R = _R()


def default_strides(shape: Sequence[Any]) -> list[Any]:
    strides: list[Any] = []
    acc: Any = 1
    for ext in reversed(list(shape)):
        strides.append(acc)
        acc = _mul(acc, ext) if isinstance(acc, PrimExpr) or isinstance(ext, PrimExpr) else acc * int(ext)
    return list(reversed(strides))


# constant-folding helpers, so layouts of constant shapes stay readable
def _val(x: Any) -> Any:
    if isinstance(x, IntImm):
        return x.value
    return x


def _fold(op: str, a: Any, b: Any) -> Any:
    a, b = _val(a), _val(b)
    if isinstance(a, int) and isinstance(b, int):
        if op == "+":
            return convert(a + b)
        if op == "-":
            return convert(a - b)
        if op == "*":
            return convert(a * b)
        if b == 0:
            raise ZeroDivisionError(f"layout arithmetic: {a} {op} 0")
        return convert(a // b if op == "//" else a % b)
    ea, eb = convert(a), convert(b)
    if op == "*":
        if isinstance(a, int) and a == 1:
            return eb
        if isinstance(b, int) and b == 1:
            return ea
        return ea * eb
    if op == "+":
        if isinstance(a, int) and a == 0:
            return eb
        if isinstance(b, int) and b == 0:
            return ea
        return ea + eb
    if op == "-":
        return ea - eb
    if op == "//":
        return ea // eb
    return ea % eb


def _mul(a: Any, b: Any) -> Any:
    return _fold("*", a, b)


def _add(a: Any, b: Any) -> Any:
    return _fold("+", a, b)


def _sub(a: Any, b: Any) -> Any:
    return _fold("-", a, b)


def _div(a: Any, b: Any) -> Any:
    return _fold("//", a, b)


def _mod(a: Any, b: Any) -> Any:
    return _fold("%", a, b)
