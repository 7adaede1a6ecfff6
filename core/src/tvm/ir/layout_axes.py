"""Layout axes, shard iterators and the ``S[...]``/``R[...]`` notation that builds them, below
:mod:`tvm.ir.layout` (the layouts themselves); with the constant-folding arithmetic layouts use,
so that layouts of constant shapes stay readable."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._registry import Registry
from ._attr_is import AttrIs
from .expr import IntImm, PrimExpr, convert
from .node import Node


class Axis:
    """A named layout axis, of kind ``memory`` or ``thread``. Compare with ``is``."""

    __slots__ = ("kind", "name")

    def __init__(self, name: str, kind: str) -> None:
        if kind not in ("memory", "thread"):
            raise ValueError(f"axis kind must be 'memory' or 'thread', not {kind!r}")
        self.name = name
        self.kind = kind

    is_memory = AttrIs("kind", "memory")
    is_thread = AttrIs("kind", "thread")

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
