"""Layout axes, shard iterators and the ``S[...]``/``R[...]`` notation that builds them, below
:mod:`tvm.ir.layout` (the layouts themselves); with the constant-folding arithmetic layouts use,
so that layouts of constant shapes stay readable."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._registry import Registry
from ._attr_is import FlagIs
from .expr import IntImm, PrimExpr, convert
from .node import Node


class _AxisMeta(type):
    """``Axis.laneid`` is ``Axis.get("laneid")``: every registered axis is a class attribute."""

    def __getattr__(cls, name: str) -> Axis:
        axis = AXES.get(name) if not name.startswith("_") else None
        if axis is None:
            raise AttributeError(f"type object 'Axis' has no attribute {name!r} (no layout axis "
                                 f"of that name is registered; known: {sorted(AXES.keys())})")
        return axis


#: a fusion rule: (subscope, scope) of a layout -> (axis, stride factor) the iterator moves to
FusionRules = dict[tuple[str, str], tuple[str, int]]
#: a split rule: a scope within this axis's -> (axis counting those scopes, axis within one,
#: units of this axis in one): ``tx`` split at ``warp`` is ``(warpid, laneid, 32)``
SplitRules = dict[str, tuple[str, str, int]]


class Axis(metaclass=_AxisMeta):
    """A named layout axis, of kind ``memory`` or ``thread``. Compare with ``is``.

    A thread axis names a position of a thread among its peers: ``laneid`` is the thread's
    place (its *subscope*, ``thread``) within a warp (its *scope*). ``fusions`` say, per target
    kind, how an iterator on this axis is rewritten when a layout spans a wider range of scopes
    (``laneid`` under a layout of threads in a CTA becomes ``tx``): see
    :meth:`TileLayout.canonicalize`; ``splits`` the reverse, per target kind, at a scope in
    between (``tx`` at ``warp`` is ``warpid`` and ``laneid``)."""

    __slots__ = ("fusions", "kind", "name", "scope", "splits", "subscope")

    def __init__(self, name: str, kind: str, *, scope: str | None = None,
                 subscope: str | None = None,
                 fusions: dict[str, FusionRules] | None = None,
                 splits: dict[str, SplitRules] | None = None) -> None:
        if kind not in ("memory", "thread"):
            raise ValueError(f"axis kind must be 'memory' or 'thread', not {kind!r}")
        if kind == "memory" and (scope or subscope):
            raise ValueError(f"axis {name!r}: only a thread axis has a scope and subscope")
        self.name = name
        self.kind = kind
        self.scope = scope
        self.subscope = subscope
        self.fusions: dict[str, FusionRules] = {k: dict(v) for k, v in (fusions or {}).items()}
        self.splits: dict[str, SplitRules] = {k: dict(v) for k, v in (splits or {}).items()}

    is_memory = FlagIs("kind", "memory")
    is_thread = FlagIs("kind", "thread")

    def get_scope(self) -> Any:
        """The execution scope this axis counts threads within (``ExecScope``), or None."""
        return _exec_scope(self.scope)

    def get_subscope(self) -> Any:
        """The execution scope of the units this axis counts (``ExecScope``), or None."""
        return _exec_scope(self.subscope)

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
    def register(name: str, kind: str = "memory", *, scope: str | None = None,
                 subscope: str | None = None, fusions: dict[str, FusionRules] | None = None,
                 splits: dict[str, SplitRules] | None = None, override: bool = False) -> Axis:
        """The axis ``name``, registered if new. Registering an existing axis of the same kind
        again adds what it did not have yet: its scopes, and fusion and split rules for more
        target kinds (a backend adds its target's rules to core's generic thread axes)."""
        existing = AXES.get(name)
        if existing is not None and existing.kind == kind and not override:
            existing._merge(scope, subscope, fusions or {})
            for target_kind, rules in (splits or {}).items():
                existing.splits.setdefault(target_kind, {}).update(rules)
            return existing
        axis = Axis(name, kind, scope=scope, subscope=subscope, fusions=fusions, splits=splits)
        return AXES.register(name, axis, override=override)

    def _merge(self, scope: str | None, subscope: str | None,
               fusions: dict[str, FusionRules]) -> None:
        for field, value in (("scope", scope), ("subscope", subscope)):
            mine = getattr(self, field)
            if value is not None and mine is not None and mine != value:
                raise ValueError(f"axis {self.name!r} has {field} {mine!r}; it cannot be "
                                 f"registered again with {field} {value!r}")
            if mine is None:
                setattr(self, field, value)
        for kind, rules in fusions.items():
            self.fusions.setdefault(kind, {}).update(rules)

    def fuse(self, target_kind: str, subscope: str, scope: str) -> tuple[Axis, int] | None:
        """The axis and stride factor an iterator on this axis becomes in a layout of
        ``subscope`` units within ``scope`` on ``target_kind``; None if it stays."""
        rule = self.fusions.get(target_kind, {}).get((subscope, scope))
        if rule is None:
            return None
        return Axis.get(rule[0]), rule[1]

    def split(self, target_kind: str, scope: str) -> tuple[Axis, Axis, int] | None:
        """``(outer axis, inner axis, units in one)`` this axis splits into at ``scope`` on
        ``target_kind``; None if it has no such rule."""
        rule = self.splits.get(target_kind, {}).get(scope)
        if rule is None:
            return None
        return Axis.get(rule[0]), Axis.get(rule[1]), rule[2]

    def __rmatmul__(self, stride: Any) -> AxisStride:
        return AxisStride(stride, self)

    def __repr__(self) -> str:
        return f"Axis({self.name!r})"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (Axis.get, (self.name,))


# The current target's kind, for the fusion and split rules: tvm.target installs the source
# when it is imported (it sits above the IR); without it no target can be current.
_TARGET_KIND_SOURCE: list[Callable[[], str | None]] = []


def set_target_kind_source(source: Callable[[], str | None]) -> None:
    """Make ``source()`` what :func:`current_target_kind` returns."""
    _TARGET_KIND_SOURCE[:] = [source]


def current_target_kind() -> str | None:
    """The kind name of the target of the enclosing ``with Target(...)``, or None."""
    return _TARGET_KIND_SOURCE[0]() if _TARGET_KIND_SOURCE else None


def _exec_scope(name: str | None) -> Any:
    if name is None:
        return None
    from .stmt import ExecScope  # noqa: PLC0415 - ir.stmt imports ir.buffer, which imports the layouts

    return ExecScope(name)


AXES: Registry[str, Axis] = Registry("layout axis")
AXES.register("m", Axis("m", "memory"))
# the generic thread axes: (name, scope, subscope)
for _name, _scope, _subscope in (("laneid", "warp", "thread"), ("warpid", "cta", "warp"),
                            ("wid_in_wg", "warpgroup", "warp"), ("wgid", "cta", "warpgroup"),
                            ("cta_id", None, None), ("tid", None, None)):
    AXES.register(_name, Axis(_name, "thread", scope=_scope, subscope=_subscope))


class AxisStride:
    """``stride @ axis``: the right-hand side of a shard iterator in ``S[...]``, or, added to a
    layout spec, an offset on ``axis`` (``S[8 : 4 @ laneid] + 1 @ laneid``)."""

    __slots__ = ("axis", "stride")

    def __init__(self, stride: Any, axis: Axis) -> None:
        self.stride = stride
        self.axis = axis

    def __add__(self, other: Any) -> Any:
        return _Offset({self.axis: self.stride}) + other

    def __radd__(self, other: Any) -> Any:
        return other + _Offset({self.axis: self.stride})


class _Offset:
    """A sum of ``value @ axis`` terms (a plain number is on ``m``): a layout's offset."""

    __slots__ = ("terms",)

    def __init__(self, terms: dict[Axis, Any]) -> None:
        self.terms = terms

    def __add__(self, other: Any) -> Any:
        if isinstance(other, _LayoutSpec):
            return other.__radd__(self)
        terms = dict(self.terms)
        for axis, value in _offset_terms(other).items():
            terms[axis] = _add(terms[axis], value) if axis in terms else value
        return _Offset(terms)

    __radd__ = __add__


def _offset_terms(x: Any) -> dict[Axis, Any]:
    if isinstance(x, _Offset):
        return x.terms
    if isinstance(x, AxisStride):
        return {x.axis: x.stride}
    if isinstance(x, (int, PrimExpr)) and not isinstance(x, bool):
        return {Axis.get("m"): x}
    raise TypeError(f"a layout offset is a sum of `value @ axis` terms and numbers (on m), "
                    f"not {type(x).__name__} ({x!r})")


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
    """What ``S[...]`` and ``R[...]`` build; ``+`` joins a shard spec, replica specs and
    offsets (``S[...] + R[...] + 1 @ laneid + 64``)."""

    def __init__(self, iters: list[Iter], replica: list[Iter] | None = None,
                 offset: dict[Axis, Any] | None = None) -> None:
        super().__init__(iters)
        self.replica_iters = replica or []
        self.offset = offset or {}

    def __add__(self, other: Any) -> _LayoutSpec:
        if not isinstance(other, _LayoutSpec):
            offset = (_Offset(self.offset) + _Offset(_offset_terms(other))).terms
            return _LayoutSpec(self.iters, self.replica_iters, offset)
        if self.iters and other.iters:
            raise TypeError("a TileLayout takes one S[...] (shard) spec")
        offset = (_Offset(self.offset) + _Offset(other.offset)).terms
        return _LayoutSpec(self.iters or other.iters, self.replica_iters + other.replica_iters,
                           offset)

    def __radd__(self, other: Any) -> _LayoutSpec:
        offset = (_Offset(_offset_terms(other)) + _Offset(self.offset)).terms
        return _LayoutSpec(self.iters, self.replica_iters, offset)


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
