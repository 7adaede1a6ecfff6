"""``tvm.tirx.exec_context``: which threads are active at a point of a kernel, and how the
current execution scope groups them.

A kernel starts with every thread active. Filters (``if`` conditions on a thread id such as
``warp_id < 8``) narrow that set; a scope change (``with T.warpgroup():``) does not change which
threads run, only how they are grouped: into *inter* axes (which instance of the scope, e.g. the
warpgroup index) and *intra* axes (which thread inside one instance, e.g. the lane and the warp
within the warpgroup).

The active set is a box: one arithmetic progression (:class:`AxisRange`) on each of the three
hardware axes ``laneid``, ``warpid`` and ``cta_id`` (a CTA id of several dimensions has one axis
a dimension in place of ``cta_id``: :data:`CTA_AXES`). A filter whose result is not a box (half
of one warp and all of the next) is an :class:`~tvm.error.ExecContextError`, as is a warpgroup
scope over warps that are not whole warpgroups or parts of one.

Everything here is an immutable value: a filter or a scope change returns a new context and
leaves the one it came from as it was, so a walker over the IR keeps a stack of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from ..error import ExecContextError
from ..ir.expr import EQ, GE, GT, LE, LT, NE, And, Call, Cast, FloorMod, IntImm, Mod, Var
from ..ir.op import ELECTS_ONE_LANE, Op
from ..ir.stmt import EXEC_SCOPES, ExecScope
from .operator.tile_primitive.dispatch_context import WARP_SIZE, WARPGROUP_SIZE

__all__ = [
    "AXES", "CLUSTER", "CTA", "CTA_AXES", "KERNEL", "LANE_CTA_THREAD", "LANE_FLAT", "LANE_KINDS",
    "LANE_WG_OUTER", "LANE_WG_THREAD", "LANE_W_INNER", "SCOPE_KINDS", "THREAD", "WARP",
    "WARPGROUP", "WG_SIZE", "ActiveSet", "AxisRange", "ExecContext", "ExecContextError",
    "LaneBinding", "Split", "filter_modulo", "filter_narrow", "initial_A", "scope_switch",
    "split_at_call",
]

#: warps in a warpgroup
WG_SIZE = WARPGROUP_SIZE // WARP_SIZE

THREAD = ExecScope("thread")
WARP = ExecScope("warp")
WARPGROUP = ExecScope("warpgroup")
CTA = ExecScope("cta")
CLUSTER = ExecScope("cluster")
#: the whole kernel, the scope at its entry (not a scope a tile primitive call can name)
KERNEL = "kernel"
#: widest first
SCOPE_KINDS: tuple[str, ...] = (KERNEL, *sorted(EXEC_SCOPES, key=lambda s: ExecScope(s).kind))

#: the hardware axes of the active set, innermost first
AXES = ("laneid", "warpid", "cta_id")
#: the axes that replace ``cta_id`` for a CTA id of several dimensions, fastest first: the CTA
#: in the grid (``bx, by = T.cta_id([4, 2])``) and the CTA in its cluster
CTA_AXES = (("bx", "by", "bz"), ("cbx", "cby", "cbz"))

#: a filter on one axis of the active set, by its own index
LANE_FLAT = "flat"
#: a filter on the warpgroup index (``warpid // WG_SIZE``)
LANE_WG_OUTER = "wg_outer"
#: a filter on the warp index within its warpgroup (``warpid % WG_SIZE``)
LANE_W_INNER = "w_inner"
#: a filter on the thread index in the CTA (``warpid * 32 + laneid``)
LANE_CTA_THREAD = "cta_thread"
#: a filter on the thread index in the warpgroup (``(warpid % WG_SIZE) * 32 + laneid``)
LANE_WG_THREAD = "wg_thread"
LANE_KINDS = (LANE_FLAT, LANE_WG_OUTER, LANE_W_INNER, LANE_CTA_THREAD, LANE_WG_THREAD)


def _check_int(what: str, value: object, least: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExecContextError(f"{what} must be an int, got {value!r}")
    if least is not None and value < least:
        raise ExecContextError(f"{what} must be at least {least}, got {value}")
    return value


@dataclass(frozen=True)
class AxisRange:
    """The active values of one axis: ``offset + stride * i`` for ``i`` in ``[0, extent)``.

    With a ``selector`` (a ``T.selector(var, pred)`` expression) the axis has one active value
    that the program picks at run time (the lane ``T.ptx.elect_sync()`` elects): ``selector``
    stands for the offset, which is not known here, so such an axis takes no further filter.
    """

    extent: int
    offset: int = 0
    stride: int = 1
    selector: Any = None

    def __post_init__(self) -> None:
        _check_int("AxisRange extent", self.extent, 1)
        _check_int("AxisRange offset", self.offset, 0)
        _check_int("AxisRange stride", self.stride, 1)
        if self.selector is not None and self.extent != 1:
            raise ExecContextError(f"an AxisRange with a selector has one value (extent 1), "
                                   f"got extent {self.extent}")

    def __repr__(self) -> str:
        chosen = "" if self.selector is None else f", selector={self.selector!r}"
        return f"AxisRange(extent={self.extent}, offset={self.offset}, stride={self.stride}{chosen})"

    def _known(self, what: str) -> None:
        if self.selector is not None:
            raise ExecContextError(f"cannot {what} an axis whose one active value is chosen at "
                                   f"run time ({self.selector}); filter before the selection")

    @property
    def last(self) -> int:
        return self.offset + self.stride * (self.extent - 1)

    def as_range(self) -> range:
        self._known("list the values of")
        return range(self.offset, self.last + 1, self.stride)

    def __contains__(self, value: object) -> bool:
        return value in self.as_range()

    def __str__(self) -> str:
        if self.selector is not None:
            return f"{{{self.selector}}}"
        if self.extent == 1:
            return f"{{{self.offset}}}"
        if self.stride == 1:
            return f"[{self.offset}, {self.last + 1})"
        if self.extent <= 3:
            return "{" + ", ".join(map(str, self.as_range())) + "}"
        return f"{{{self.offset}, {self.offset + self.stride}, ..., {self.last}}}"

    def clip(self, lo: int, hi: int) -> AxisRange | None:
        """The active values in ``[lo, hi)``, or None when there are none."""
        self._known("filter")
        first = max(0, -((self.offset - lo) // self.stride))  # ceil((lo - offset) / stride)
        stop = min(self.extent, -((self.offset - hi) // self.stride))
        return _from_range(self.as_range()[first:stop]) if first < stop else None

    def intersect(self, lo: int, hi: int) -> AxisRange:
        """The active values in ``[lo, hi)``; an error if there are none."""
        kept = self.clip(lo, hi)
        if kept is None:
            raise ExecContextError(f"the filter [{lo}, {hi}) leaves an empty range of the active "
                                   f"values {self}; filter to a range that overlaps them")
        return kept

    def modulo(self, modulus: int, residue: int) -> AxisRange:
        """The active values congruent to ``residue`` modulo ``modulus``; an error if none."""
        self._known("filter")
        _check_int("modulus", modulus, 1)
        empty = (f"no active value of {self} is {residue} modulo {modulus} (the modulo filter "
                 f"leaves an empty range); pick a residue that some active value has")
        # offset + stride * i == residue (mod modulus): solvable iff gcd(stride, modulus)
        # divides the difference; then i runs over one residue class modulo modulus / gcd.
        g = math.gcd(self.stride, modulus)
        diff = (residue - self.offset) % modulus
        if diff % g:
            raise ExecContextError(empty)
        period = modulus // g
        first = (diff // g) * pow(self.stride // g, -1, period) % period
        if first >= self.extent:
            raise ExecContextError(empty)
        return _from_range(self.as_range()[first::period])


def _from_range(values: range) -> AxisRange:
    return AxisRange(len(values), values.start, values.step)


@dataclass(frozen=True)
class ActiveSet:
    """The active threads: every combination of the active lanes, warps and CTAs."""

    laneid: AxisRange
    warpid: AxisRange
    cta_id: AxisRange
    #: a CTA id of several dimensions: one ``(name, range)`` a dimension (names from
    #: :data:`CTA_AXES`), which then stand for ``cta_id`` (that field is the whole product)
    cta_axes: tuple[tuple[str, AxisRange], ...] = ()

    @property
    def size(self) -> int:
        return self.laneid.extent * self.warpid.extent * math.prod(
            self.axis(a).extent for a in self.cta_names)

    @property
    def cta_names(self) -> list[str]:
        """The axes that say which CTA: ``["cta_id"]``, or one per dimension of the CTA id."""
        return [name for name, _ in self.cta_axes] or ["cta_id"]

    @property
    def axis_names(self) -> list[str]:
        return ["laneid", "warpid", *self.cta_names]

    def axis(self, name: str) -> AxisRange:
        if self.cta_axes and name in self.axis_names[2:]:
            return dict(self.cta_axes)[name]
        return getattr(self, self._check(name))

    def replace_axis(self, name: str, axis_range: AxisRange) -> ActiveSet:
        if self.cta_axes and name in self.axis_names[2:]:
            axes = tuple((a, axis_range if a == name else r) for a, r in self.cta_axes)
            return replace(self, cta_axes=axes)
        return replace(self, **{self._check(name): axis_range})  # type: ignore[arg-type]

    def _check(self, name: str) -> str:
        if _check_axis(name) not in self.axis_names:
            raise ExecContextError(f"this active set has no axis {name!r}; its axes are "
                                   f"{self.axis_names}")
        return name


def _check_axis(name: str) -> str:
    if name not in AXES and not any(name in names for names in CTA_AXES):
        raise ExecContextError(f"unknown active-set axis {name!r}; expected one of {AXES} or, "
                               f"for a CTA id of several dimensions, of {CTA_AXES}")
    return name


@dataclass(frozen=True)
class LaneBinding:
    """What a user's thread-id variable (a ``ScopeIdDef`` var) indexes, so that a filter on it
    can narrow the active set: ``axis`` is one of :data:`AXES` for :data:`LANE_FLAT`, ``warpid``
    for the warpgroup-factor kinds, and a free label (e.g. ``"thread"``) for the flat thread
    kinds; ``declared_extent`` is the extent the kernel declared for the variable."""

    axis: str
    kind: str
    declared_extent: int

    def __post_init__(self) -> None:
        if self.kind not in LANE_KINDS:
            raise ExecContextError(f"unknown lane binding kind {self.kind!r}; expected one of "
                                   f"{LANE_KINDS}")
        if self.kind == LANE_FLAT:
            _check_axis(self.axis)
        if self.kind in (LANE_WG_OUTER, LANE_W_INNER) and self.axis != "warpid":
            raise ExecContextError(f"a {self.kind!r} binding indexes warps: its axis must be "
                                   f"'warpid', got {self.axis!r}")
        _check_int("LaneBinding declared_extent", self.declared_extent, 1)


def initial_A(*, lane_ext: int = WARP_SIZE, warp_ext: int, cta_ext: int = 1,
              cta_axes: Sequence[tuple[str, int]] = ()) -> ActiveSet:
    """The active set at the kernel's entry: every lane of every warp of every CTA. ``cta_axes``
    (``[("cbx", 2), ("cby", 3)]``) splits the CTAs into one axis a dimension; their extents
    multiply to ``cta_ext``."""
    _check_int("initial_A: warp_ext", warp_ext, 1)
    _check_int("initial_A: cta_ext", cta_ext, 1)
    if _check_int("initial_A: lane_ext", lane_ext, 1) > WARP_SIZE:
        raise ExecContextError(f"initial_A: lane_ext must be at most the warp size {WARP_SIZE}, "
                               f"got {lane_ext}; count the extra threads in warp_ext")
    axes = tuple((_check_axis(name), AxisRange(_check_int(f"initial_A: {name} extent", ext, 1)))
                 for name, ext in cta_axes)
    if axes and math.prod(r.extent for _, r in axes) != cta_ext:
        raise ExecContextError(f"initial_A: the CTA axes {list(cta_axes)} make "
                               f"{math.prod(r.extent for _, r in axes)} CTAs, not cta_ext="
                               f"{cta_ext}; give cta_ext as their product")
    if any(name in ("laneid", "warpid", "cta_id") for name, _ in axes):
        raise ExecContextError(f"initial_A: cta_axes names the CTA dimensions, one of "
                               f"{CTA_AXES}; got {[name for name, _ in axes]}")
    return ActiveSet(AxisRange(lane_ext), AxisRange(warp_ext), AxisRange(cta_ext), axes)


# -- warpgroups --------------------------------------------------------------------------------

def _split_warps(warps: AxisRange) -> tuple[AxisRange, AxisRange] | None:
    """``(warp in warpgroup, warpgroup)`` whose product is ``warps``, or None when the warps are
    no such product (they take different warps of different warpgroups)."""
    group, first = divmod(warps.offset, WG_SIZE)
    if warps.last // WG_SIZE == group:  # all in one warpgroup
        return AxisRange(warps.extent, first, warps.stride), AxisRange(1, group)
    if warps.stride % WG_SIZE == 0:  # the same warp of several warpgroups
        return AxisRange(1, first), AxisRange(warps.extent, group, warps.stride // WG_SIZE)
    # the same warps of consecutive warpgroups, starting at the first of them
    per_group = WG_SIZE // warps.stride
    if WG_SIZE % warps.stride or first >= warps.stride or warps.extent % per_group:
        return None
    return (AxisRange(per_group, first, warps.stride),
            AxisRange(warps.extent // per_group, group))


def _join_warps(in_group: AxisRange, group: int) -> AxisRange:
    """The warps ``in_group`` of warpgroup ``group``."""
    return AxisRange(in_group.extent, group * WG_SIZE + in_group.offset, in_group.stride)


def _narrow_threads(warps: AxisRange, lanes: AxisRange, lo: int, hi: int,
                    what: str) -> tuple[AxisRange, AxisRange]:
    """Narrow ``warps x lanes`` to the threads ``warp * WARP_SIZE + lane`` in ``[lo, hi)``."""
    # a warp has an active thread in [lo, hi) only if its last lane is >= lo and its first < hi
    w_lo = -((lanes.last - lo) // WARP_SIZE)
    w_hi = -((lanes.offset - hi) // WARP_SIZE)
    hit = warps.clip(w_lo, w_hi)
    if hit is None:
        raise ExecContextError(f"the {what} filter [{lo}, {hi}) selects no active thread "
                               f"(warps {warps}, lanes {lanes})")
    if hit.extent == 1:
        base = hit.offset * WARP_SIZE
        return hit, lanes.intersect(lo - base, hi - base)
    # several warps: a box only if each keeps all its active lanes; the first and the last
    # warps are the ones that could lose some
    if hit.offset * WARP_SIZE + lanes.offset >= lo and hit.last * WARP_SIZE + lanes.last < hi:
        return hit, lanes
    raise ExecContextError(
        f"the {what} filter [{lo}, {hi}) over warps {warps} and lanes {lanes} would keep part of "
        f"a warp beside whole warps, a non-rectangular active set; split it into a filter on "
        f"whole warps and one on the lanes of a single warp")


def _filter_flat(A: ActiveSet, binding: LaneBinding, lo: int, hi: int) -> ActiveSet:
    return A.replace_axis(binding.axis, A.axis(binding.axis).intersect(lo, hi))


def _filter_cta_thread(A: ActiveSet, binding: LaneBinding, lo: int, hi: int) -> ActiveSet:
    warps, lanes = _narrow_threads(A.warpid, A.laneid, lo, hi, "CTA thread")
    return replace(A, warpid=warps, laneid=lanes)


def _filter_wg_thread(A: ActiveSet, binding: LaneBinding, lo: int, hi: int) -> ActiveSet:
    parts = _split_warps(A.warpid)
    if parts is None:
        raise ExecContextError(
            f"a filter on the thread index in the warpgroup needs the active warps {A.warpid} "
            f"to be the same warps of each warpgroup; filter them to whole warpgroups or to one "
            f"warpgroup first")
    in_group, groups = parts
    warps, lanes = _narrow_threads(in_group, A.laneid, lo, hi, "warpgroup thread")
    if (warps, lanes) == (in_group, A.laneid):
        return A
    if groups.extent == 1:
        return replace(A, warpid=_join_warps(warps, groups.offset), laneid=lanes)
    if warps.extent == 1:  # the same warp of each warpgroup: warps a whole warpgroup apart
        first = groups.offset * WG_SIZE + warps.offset
        return replace(A, warpid=AxisRange(groups.extent, first, WG_SIZE), laneid=lanes)
    raise ExecContextError(
        f"the warpgroup thread filter [{lo}, {hi}) keeps warps {warps} of each of multiple "
        f"warpgroups {groups}, which the active set cannot represent; filter on one warpgroup "
        f"first (a wg_outer binding)")


def _filter_wg_outer(A: ActiveSet, binding: LaneBinding, lo: int, hi: int) -> ActiveSet:
    parts = _split_warps(A.warpid)
    if parts is None or parts[0] != AxisRange(WG_SIZE):
        raise ExecContextError(
            f"a filter on the warpgroup index needs the active warps aligned to WG_SIZE="
            f"{WG_SIZE} (whole warpgroups); the active warps are {A.warpid}")
    groups = parts[1].intersect(lo, hi)
    return A.replace_axis("warpid", AxisRange(groups.extent * WG_SIZE, groups.offset * WG_SIZE))


def _filter_w_inner(A: ActiveSet, binding: LaneBinding, lo: int, hi: int) -> ActiveSet:
    parts = _split_warps(A.warpid)
    if parts is None or parts[1].extent != 1:
        raise ExecContextError(
            f"a filter on the warp index in the warpgroup needs the active warps in one "
            f"warpgroup, but {A.warpid} spans multiple warpgroups; filter on the warpgroup "
            f"first (a wg_outer binding)")
    in_group, group = parts
    return A.replace_axis("warpid", _join_warps(in_group.intersect(lo, hi), group.offset))


_FILTERS: dict[str, Callable[[ActiveSet, LaneBinding, int, int], ActiveSet]] = {
    LANE_FLAT: _filter_flat,
    LANE_CTA_THREAD: _filter_cta_thread,
    LANE_WG_THREAD: _filter_wg_thread,
    LANE_WG_OUTER: _filter_wg_outer,
    LANE_W_INNER: _filter_w_inner,
}


def filter_narrow(A: ActiveSet, binding: LaneBinding, lo: int, hi: int) -> ActiveSet:
    """The threads of ``A`` whose ``binding`` index lies in ``[lo, hi)``."""
    if _check_int("filter_narrow: hi", hi) <= _check_int("filter_narrow: lo", lo):
        raise ExecContextError(f"the filter range [{lo}, {hi}) is empty or inverted; "
                               f"give lo < hi")
    return _FILTERS[binding.kind](A, binding, lo, hi)


def filter_modulo(A: ActiveSet, axis: str, modulus: int, residue: int) -> ActiveSet:
    """The threads of ``A`` whose index on ``axis`` is ``residue`` modulo ``modulus``."""
    _check_int("filter_modulo: modulus", modulus, 1)
    return A.replace_axis(axis, A.axis(axis).modulo(modulus, residue))


# -- scopes ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Split:
    """The active axes as one scope sees them: ``inter`` picks an instance of the scope,
    ``intra`` a thread inside it."""

    inter: dict[str, AxisRange] = field(default_factory=dict)
    intra: dict[str, AxisRange] = field(default_factory=dict)


# the axes inside one instance of each scope (the rest pick the instance)
_INTRA: dict[str, tuple[str, ...]] = {
    KERNEL: (), THREAD: (), WARP: ("laneid",), CTA: ("laneid", "warpid"), CLUSTER: AXES,
}


def scope_switch(A: ActiveSet, scope_kind: str) -> Split:
    """Group the threads of ``A`` by the scope ``scope_kind`` (one of :data:`SCOPE_KINDS`)."""
    if scope_kind == WARPGROUP:
        return _warpgroup_split(A)
    if scope_kind not in _INTRA:
        raise ExecContextError(f"unknown scope kind {scope_kind!r}; expected one of "
                               f"{SCOPE_KINDS}")
    intra = [n for a in _INTRA[scope_kind] for n in (A.cta_names if a == "cta_id" else [a])]
    return Split(inter={a: A.axis(a) for a in A.axis_names if a not in intra},
                 intra={a: A.axis(a) for a in intra})


def _warpgroup_split(A: ActiveSet) -> Split:
    parts = _split_warps(A.warpid)
    if parts is None:
        boundary = (A.warpid.offset // WG_SIZE + 1) * WG_SIZE
        raise ExecContextError(
            f"cannot enter warpgroup scope: the active warps {A.warpid} take different warps of "
            f"different warpgroups (the range crosses warpgroup boundary {boundary} unaligned, "
            f"WG_SIZE={WG_SIZE}); filter the warps to whole warpgroups or to one of them")
    in_group, groups = parts
    return Split(inter={"wgid": groups, **{a: A.axis(a) for a in A.cta_names}},
                 intra={"laneid": A.laneid, "wid_in_wg": in_group})


@dataclass(frozen=True)
class ExecContext:
    """The state at one point of a kernel: the active threads ``A``, the current scope and how
    that scope groups ``A`` (``inter``, ``intra``, as :func:`scope_switch` gives them)."""

    A: ActiveSet
    scope_kind: str
    inter: dict[str, AxisRange]
    intra: dict[str, AxisRange]

    @staticmethod
    def at(A: ActiveSet, scope_kind: str) -> ExecContext:
        """The context of the threads ``A`` in scope ``scope_kind``."""
        split = scope_switch(A, scope_kind)
        return ExecContext(A, scope_kind, split.inter, split.intra)

    @staticmethod
    def at_kernel_entry(*, lane_ext: int = WARP_SIZE, warp_ext: int, cta_ext: int = 1,
                        cta_axes: Sequence[tuple[str, int]] = ()) -> ExecContext:
        return ExecContext.at(initial_A(lane_ext=lane_ext, warp_ext=warp_ext, cta_ext=cta_ext,
                                        cta_axes=cta_axes), KERNEL)

    def with_filter(self, binding: LaneBinding, lo: int, hi: int) -> ExecContext:
        return ExecContext.at(filter_narrow(self.A, binding, lo, hi), self.scope_kind)

    def with_cta_axis_modulo(self, axis: str, modulus: int, residue: int) -> ExecContext:
        return ExecContext.at(filter_modulo(self.A, axis, modulus, residue), self.scope_kind)

    def with_scope_switch(self, scope_kind: str) -> ExecContext:
        return ExecContext.at(self.A, scope_kind)


# -- a call's context, read from the kernel ----------------------------------------------------

# what a filter on each single-variable thread id narrows
_ID_BINDINGS: dict[str, tuple[str, str]] = {
    "lane_id": ("laneid", LANE_FLAT),
    "warp_id": ("warpid", LANE_FLAT),
    "warpgroup_id": ("warpid", LANE_WG_OUTER),
    "warp_id_in_wg": ("warpid", LANE_W_INNER),
    "thread_id": ("thread", LANE_CTA_THREAD),
    "thread_id_in_wg": ("thread", LANE_WG_THREAD),
}
#: the CTA pair: ``cta_id_in_pair == r`` keeps the CTAs of rank ``r`` modulo 2 in the cluster
_PAIR = "cta_id_in_pair"
_Binding = LaneBinding | str  # a LaneBinding, or _PAIR


@dataclass
class _Kernel:
    """What the kernel's thread ids say: the CTA axes and what a filter on each id narrows."""

    cta_axes: list[tuple[str, int]]  # (name, extent), fastest first
    bindings: dict[Var, _Binding]
    in_cluster: bool  # the CTA axes are a cluster's (so cta_id_in_pair filters them)
    lane_var: Var | None  # T.lane_id(), what a lane selector names

    @staticmethod
    def read(defs: Sequence[Any]) -> _Kernel:
        by_kind = {d.kind: d for d in defs}
        cta_axes: list[tuple[str, int]] = []
        bindings: dict[Var, _Binding] = {}
        in_cluster = False
        # the active set's CTAs are a cluster's where the kernel has clusters, else the grid's;
        # the others' ids are not filters (a grid CTA filter does not pick CTAs of a cluster)
        for kind, names in (("cta_id_in_cluster", CTA_AXES[1]), ("cta_id", CTA_AXES[0])):
            d = by_kind.get(kind)
            extents = [] if d is None else [_const_int(e) for e in d.extents]
            known = [e for e in extents if e is not None and e >= 1]
            if d is None or not known or len(known) < len(extents) or len(known) > len(names):
                continue  # absent, or not constant: counted as one CTA
            axis_names = ["cta_id"] if len(known) == 1 else list(names[: len(known)])
            cta_axes = list(zip(axis_names, known))
            bindings = {v: LaneBinding(a, LANE_FLAT, e) for v, (a, e) in zip(d.vars, cta_axes)}
            in_cluster = kind == "cta_id_in_cluster"
            break
        for d in defs:
            if d.kind == _PAIR and len(d.vars) == 1:
                bindings[d.vars[0]] = _PAIR
            if d.kind in _ID_BINDINGS and len(d.vars) == len(d.extents) == 1:
                extent = _const_int(d.extents[0])
                if extent is not None and extent >= 1:
                    axis, kind = _ID_BINDINGS[d.kind]
                    bindings[d.vars[0]] = LaneBinding(axis, kind, extent)
        lane = by_kind.get("lane_id")
        lane_var = lane.vars[0] if lane is not None and len(lane.vars) == 1 else None
        return _Kernel(cta_axes, bindings, in_cluster, lane_var)


def split_at_call(defs: Sequence[Any], guards: Sequence[Any], scope_kind: str,
                  cta_threads: Any) -> Split | None:
    """The (inter, intra) split of a tile primitive call at ``scope_kind``, inside the
    ``if`` conditions ``guards`` (outermost first), in a kernel whose thread ids are ``defs``
    (resolved ``ScopeIdDef``s) with ``cta_threads`` threads a CTA. None when the thread count
    is not a constant or the scope cannot group the active threads. A condition, or a part of a
    conjunction, that is not a filter the model represents (not on a thread id, ``!=``, ``or``,
    a range that keeps no thread or is not a box ...) leaves the active set as it was: the
    result then covers more threads than run, never fewer."""
    n_threads = _cta_threads(defs, cta_threads)
    if n_threads is None or n_threads < 1:
        return None
    kernel = _Kernel.read(defs)
    cta_axes = kernel.cta_axes if len(kernel.cta_axes) > 1 else []
    A = initial_A(lane_ext=min(n_threads, WARP_SIZE), warp_ext=-(-n_threads // WARP_SIZE),
                  cta_ext=math.prod(e for _, e in kernel.cta_axes), cta_axes=cta_axes)
    for guard in guards:
        A = _apply_guard(A, guard, kernel)
    try:
        return scope_switch(A, scope_kind)
    except ExecContextError:
        return None


def _cta_threads(defs: Sequence[Any], counted: Any) -> int | None:
    """The CTA's thread count: ``counted`` (from the thread and lane ids), or what the warp or
    warpgroup ids imply where the kernel declared only those."""
    n = _const_int(counted)
    for d in defs:
        size = {"warp_id": WARP_SIZE, "warpgroup_id": WARPGROUP_SIZE}.get(d.kind)
        if size is not None and len(d.extents) == 1:
            extent = _const_int(d.extents[0])
            if extent is None:
                return None
            n = None if n is None else max(n, extent * size)
    return n


def _const_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return value.value if isinstance(value, IntImm) else None


def _conjuncts(cond: Any) -> list[Any]:
    """The parts of a conjunction: ``a & b`` of two conditions, and of a condition with an
    integer such as ``T.ptx.elect_sync()``, which reads ``bitwise_and(uint32(a), b) != 0``."""
    if isinstance(cond, Cast) and cond.value.dtype.is_bool:
        return _conjuncts(cond.value)
    if isinstance(cond, And):
        return _conjuncts(cond.a) + _conjuncts(cond.b)
    if isinstance(cond, NE) and _const_int(cond.b) == 0 and isinstance(cond.a, Call) \
            and getattr(cond.a.op, "name", None) == "tirx.bitwise_and":
        return [part for arg in cond.a.args for part in _conjuncts(arg)]
    return [cond]


# ``c < x`` is ``x > c``
_FLIPPED = {LT: GT, LE: GE, GT: LT, GE: LE, EQ: EQ}


def _atom(cond: Any, bindings: dict[Var, _Binding]) -> tuple[Any, ...] | None:
    """``("range", var, lo, hi)`` for ``var`` compared with a constant, ``("mod", var, m, r)``
    for ``var % m == r``; None for anything else."""
    op = type(cond)
    if op not in _FLIPPED:
        return None
    lhs, rhs = cond.a, cond.b
    if _const_int(lhs) is not None and _const_int(rhs) is None:
        lhs, rhs, op = rhs, lhs, _FLIPPED[op]
    c = _const_int(rhs)
    if c is None:
        return None
    if op is EQ and isinstance(lhs, (FloorMod, Mod)) and lhs.a in bindings:
        m = _const_int(lhs.b)
        return ("mod", lhs.a, m, c) if m is not None and m >= 1 and 0 <= c < m else None
    if not isinstance(lhs, Var) or lhs not in bindings:
        return None
    lo, hi = {EQ: (c, c + 1), LT: (None, c), LE: (None, c + 1), GT: (c + 1, None),
              GE: (c, None)}[op]
    return ("range", lhs, lo, hi)


def _apply_guard(A: ActiveSet, guard: Any, kernel: _Kernel) -> ActiveSet:
    steps, elects = _filters(guard, kernel)
    # a filter the current set cannot take is tried again while another one succeeds
    while steps:
        left = []
        for step in steps:
            try:
                A = step(A)
            except ExecContextError:
                left.append(step)
        if len(left) == len(steps):
            break
        steps = left
    if elects and kernel.lane_var is not None and A.laneid.extent > 1:
        # one lane of those active: which one, the program finds out at run time
        selector = Call(kernel.lane_var.dtype, Op.get("tirx.selector"),
                        [kernel.lane_var, elects[0]])
        A = A.replace_axis("laneid", AxisRange(1, selector=selector))
    return A


def _filters(guard: Any, kernel: _Kernel) -> tuple[list[Callable[[ActiveSet], ActiveSet]],
                                                   list[Any]]:
    """The filters of ``guard`` on thread ids, coarsest first (a thread range in a warpgroup
    fits once the warpgroup is one), and its parts that elect one lane."""
    bindings = kernel.bindings
    # bounds on one variable are merged first: the two halves of ``lo <= tid < hi`` alone
    # can each be a shape the active set cannot hold
    ranges: dict[Var, tuple[int | None, int | None]] = {}
    mods: list[tuple[Var, int, int]] = []
    elects: list[Any] = []
    for part in _conjuncts(guard):
        if _elects_one_lane(part):
            elects.append(part)
            continue
        atom = _atom(part, bindings)
        if atom is None:
            continue
        if atom[0] == "mod":
            mods.append(atom[1:])
            continue
        _, var, lo, hi = atom
        old_lo, old_hi = ranges.get(var, (None, None))
        ranges[var] = (_tighter(old_lo, lo, max), _tighter(old_hi, hi, min))
    order = sorted([*((_coarseness(bindings[var]), i,
                       partial(_narrow, kernel=kernel, binding=bindings[var], lo=lo, hi=hi))
                      for i, (var, (lo, hi)) in enumerate(ranges.items())),
                    *((_coarseness(bindings[var]), len(ranges) + i,
                       partial(_modulo, binding=bindings[var], m=m, r=r))
                      for i, (var, m, r) in enumerate(mods))], key=lambda t: t[:2])
    return [step for *_, step in order], elects


def _elects_one_lane(cond: Any) -> bool:
    """``elect()`` or ``elect() != 0`` of an op that elects one lane (:data:`ELECTS_ONE_LANE`)."""
    if isinstance(cond, NE) and _const_int(cond.b) == 0:
        cond = cond.a
    op = getattr(cond, "op", None) if isinstance(cond, Call) else None
    return isinstance(op, Op) and bool(op.get_attr(ELECTS_ONE_LANE))


def _coarseness(binding: _Binding) -> int:
    if not isinstance(binding, LaneBinding):
        return 0  # the CTA pair
    if binding.kind == LANE_FLAT:
        return {"laneid": 4, "warpid": 2}.get(binding.axis, 0)  # the CTA axes 0
    return {LANE_WG_OUTER: 1, LANE_W_INNER: 3}.get(binding.kind, 4)


def _tighter(old: int | None, new: int | None, pick: Callable[[int, int], int]) -> int | None:
    return new if old is None else old if new is None else pick(old, new)


def _narrow(A: ActiveSet, *, kernel: _Kernel, binding: _Binding, lo: int | None,
            hi: int | None) -> ActiveSet:
    if binding == _PAIR:  # cta_id_in_pair is in [0, 2): a range is one value or both
        lo, hi = max(lo or 0, 0), min(2 if hi is None else hi, 2)
        return _pair(A, kernel, lo) if hi - lo == 1 else A
    assert isinstance(binding, LaneBinding)
    lo, hi = max(lo or 0, 0), binding.declared_extent if hi is None else hi
    return filter_narrow(A, binding, lo, min(hi, binding.declared_extent))


def _modulo(A: ActiveSet, *, binding: _Binding, m: int, r: int) -> ActiveSet:
    if isinstance(binding, LaneBinding) and binding.kind == LANE_FLAT:
        return filter_modulo(A, binding.axis, m, r)
    return A


def _pair(A: ActiveSet, kernel: _Kernel, value: int) -> ActiveSet:
    """The CTAs whose rank in the cluster (``x + X * y + X * Y * z``) is ``value`` modulo 2.
    The rank's parity follows one axis when that axis alone moves it (its active values step
    by an odd amount with an odd weight): the filter keeps that axis's values of one parity.
    Any other shape (no cluster, several such axes) is not filtered."""
    if not kernel.in_cluster:
        return A
    moving: list[str] = []
    parity = value  # what the moving axis must make up, modulo 2
    weight = 1
    for name, extent in kernel.cta_axes:
        r = A.axis(name)
        if r.extent > 1 and weight % 2 and r.stride % 2:
            moving.append(name)
        else:
            parity -= weight * r.offset  # the same for every active value, modulo 2
        weight *= extent
    if len(moving) != 1:
        return A  # constant parity (the filter keeps all or none) or several axes move it
    return filter_modulo(A, moving[0], 2, parity % 2)
