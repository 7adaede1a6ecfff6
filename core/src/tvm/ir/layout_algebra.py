"""The algebra of shard iterators behind :class:`~tvm.ir.layout.TileLayout`'s
``canonicalize`` and ``slice``: functions from iterator lists and offsets to iterator lists and
offsets, so that they need no layout class.

An offset is a ``dict`` axis -> expression added to that axis's coordinate of every element.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .expr import PrimExpr, convert
from .layout_axes import Axis, Iter, _add, _div, _mod, _mul, _sub, _val
from .linear import Linear, to_linear

__all__ = ["add_offset", "fuse_by_scope", "fuse_contiguous", "layout_scope", "remove_units",
           "scope_wider", "slice_group", "sort_replica", "split_by_scope", "split_offset"]

Offset = dict[Axis, PrimExpr]


def _linear(e: Any) -> Linear:
    return to_linear(convert(e))


def _simplify(e: Any) -> PrimExpr:
    """``e`` with its affine part collected (``stage + 1 - stage`` is 1)."""
    e = convert(e)
    return e if isinstance(_val(e), int) else _linear(e).to_expr()


def _proves_equal(a: Any, b: Any) -> bool:
    va, vb = _val(convert(a)), _val(convert(b))
    if isinstance(va, int) and isinstance(vb, int):
        return va == vb
    diff = _linear(a).add(_linear(b), -1)
    return diff.is_const and diff.const == 0


def _proves_le(a: Any, b: Any) -> bool:
    """``a <= b`` for every value of the variables in them (their difference is constant)."""
    diff = _linear(b).add(_linear(a), -1)
    return diff.is_const and diff.const >= 0


def add_offset(offset: Offset, axis: Axis, value: Any) -> None:
    """``offset[axis] += value`` (``offset`` is changed)."""
    offset[axis] = _add(offset[axis], value) if axis in offset else convert(value)


# -- canonical form --------------------------------------------------------------------------
def remove_units(shard: Sequence[Iter]) -> list[Iter]:
    """The iterators of extent other than 1; one ``1:1`` iterator (on the first one's axis) if
    none is left, so that a layout of one element keeps a shard."""
    kept = [it for it in shard if _val(it.extent) != 1]
    if not kept and shard:
        return [Iter(1, 1, shard[0].axis)]
    return kept


def fuse_contiguous(shard: Sequence[Iter]) -> list[Iter]:
    """Neighbouring iterators on one axis where the outer one steps exactly over the inner
    one (``outer.stride == inner.extent * inner.stride``) merged into one."""
    out: list[Iter] = []
    for it in shard:
        last = out[-1] if out else None
        if last is not None and last.axis is it.axis and \
                _proves_equal(last.stride, _mul(it.extent, it.stride)):
            out[-1] = Iter(_mul(last.extent, it.extent), it.stride, it.axis)
        else:
            out.append(it)
    return out


def sort_replica(replica: Sequence[Iter]) -> list[Iter]:
    """Replica iterators in one order (they form a set: their order means nothing)."""
    return sorted(replica, key=lambda it: (it.axis.name, str(it.stride), str(it.extent)))


def layout_scope(axes: Sequence[Axis]) -> tuple[str, str] | None:
    """``(subscope, scope)`` that the thread axes among ``axes`` span together: the narrowest
    unit any of them counts, and the widest scope their chain of scopes reaches (``laneid``
    and ``warpid`` together: threads within a CTA). None without thread axes; ``ValueError``
    when the axes do not form one chain (``wgid`` with ``laneid``: no axis says which warp of
    the warpgroup a lane is in)."""
    from .stmt import EXEC_SCOPES  # noqa: PLC0415 - ir.stmt imports ir.buffer, which imports the layouts

    rank = {name: i for i, name in enumerate(EXEC_SCOPES)}  # thread first, cluster last
    parent: dict[str, str] = {}
    inner: str | None = None
    for axis in axes:
        if not axis.is_thread:
            continue
        if axis.scope is None or axis.subscope is None:
            raise ValueError(f"thread axis {axis.name!r} has no scope and subscope; register it "
                             f"with Axis.register({axis.name!r}, 'thread', scope=..., "
                             f"subscope=...)")
        sub, scope = axis.subscope, axis.scope
        if parent.setdefault(sub, scope) != scope:
            raise ValueError(f"ill-formed layout: axes count {sub} units within both "
                             f"{parent[sub]} and {scope}")
        if inner is None or rank.get(sub, -1) < rank.get(inner, -1):
            inner = sub
    if inner is None:
        return None
    outer, steps = inner, 0
    while outer in parent and steps <= len(parent):
        outer, steps = parent[outer], steps + 1
    if steps != len(parent):
        chain = ", ".join(f"{k} in {v}" for k, v in parent.items())
        raise ValueError(f"ill-formed layout: its thread axes ({chain}) do not form one chain "
                         f"of scopes from {inner}; add the axes that connect them")
    return inner, outer


def fuse_by_scope(iters: Sequence[Iter], target_kind: str, subscope: str,
                  scope: str) -> list[Iter]:
    """Each iterator moved onto the axis its axis's fusion rule for ``target_kind`` names for a
    layout of ``subscope`` units within ``scope`` (its stride scaled); others unchanged."""
    out = []
    for it in iters:
        rule = it.axis.fuse(target_kind, subscope, scope)
        out.append(it if rule is None else Iter(it.extent, _mul(it.stride, rule[1]), rule[0]))
    return out


def scope_wider(a: str, b: str) -> bool:
    """Scope ``a`` holds more than scope ``b`` (a CTA more than a warp)."""
    from .stmt import EXEC_SCOPES  # noqa: PLC0415 - ir.stmt imports ir.buffer, which imports the layouts

    return EXEC_SCOPES.index(a) > EXEC_SCOPES.index(b)


def split_by_scope(iters: Sequence[Iter], target_kind: str, scope: str) -> list[Iter]:
    """Each iterator on an axis with a split rule at ``scope`` for ``target_kind`` rewritten
    onto the two axes it names (``tx`` at ``warp``: ``warpid`` and ``laneid``, 32 threads a
    warp); an iterator that crosses the boundary unevenly stays as it is."""
    out: list[Iter] = []
    for it in iters:
        rule = it.axis.split(target_kind, scope)
        out += [it] if rule is None else _split_iter(it, *rule)
    return out


def _split_iter(it: Iter, outer: Axis, inner: Axis, units: int) -> list[Iter]:
    reach = _mul(it.extent, it.stride)
    if _proves_le(reach, units):  # all within one unit of the outer axis
        return [Iter(it.extent, it.stride, inner)]
    if _proves_equal(_mod(units, it.stride), 0) and _proves_equal(_mod(reach, units), 0):
        per_unit = _div(units, it.stride)  # the low steps stay inside one unit, the rest step units
        return [Iter(_div(it.extent, per_unit), 1, outer), Iter(per_unit, it.stride, inner)]
    if _proves_equal(_mod(it.stride, units), 0):  # whole units at a time
        return [Iter(it.extent, _div(it.stride, units), outer)]
    return [it]


def split_offset(offset: Offset, target_kind: str, scope: str) -> Offset:
    """``offset`` with each coordinate on an axis that splits at ``scope`` written on the two
    axes it splits into."""
    out: Offset = {}
    for axis, value in offset.items():
        rule = axis.split(target_kind, scope)
        if rule is None:
            add_offset(out, axis, value)
            continue
        outer, inner, units = rule
        add_offset(out, outer, _simplify(_div(value, units)))
        add_offset(out, inner, _simplify(_mod(value, units)))
    return out


# -- slicing ---------------------------------------------------------------------------------
def slice_group(shard: Sequence[Iter], begin: Any, extent: Any
                ) -> tuple[list[Iter], Offset] | None:
    """The iterators and offset that address elements ``begin .. begin + extent`` of the
    (canonical) iterators ``shard`` that together cover one dimension; None when that run is
    no single strided pattern (it wraps around an inner iterator at an arbitrary place).

    A run starting at a multiple of the inner iterators' size and a multiple of it long keeps
    them whole; the iterator it stops in is cut to the run's length. The one shape of a run
    that crosses an iterator's end is a run of two equal halves either side of it (``2:jump``
    around ``c:stride``)."""
    m = len(shard)
    if m == 0:
        return None
    begin, extent = _simplify(begin), _simplify(extent)
    below: list[Any] = [convert(1)] * m  # product of the extents inside iterator k
    for k in range(m - 2, -1, -1):
        below[k] = _mul(below[k + 1], shard[k + 1].extent)
    digits: list[Any] = []
    offset: Offset = {}
    for k, it in enumerate(shard):
        # one iterator: the caller keeps the run inside it, so begin needs no wrap-around
        d = _div(begin, below[k]) if m == 1 else _mod(_div(begin, below[k]), it.extent)
        digits.append(_simplify(d))
        add_offset(offset, it.axis, _simplify(_mul(d, it.stride)))
    if m == 1:
        return [Iter(extent, shard[0].stride, shard[0].axis)], offset
    rest = convert(extent)
    kept: list[Iter] = []
    pivot = m - 1
    while pivot >= 0 and _proves_equal(digits[pivot], 0) and \
            _proves_equal(_mod(rest, shard[pivot].extent), 0):
        kept.insert(0, shard[pivot])
        rest = _div(rest, shard[pivot].extent)
        pivot -= 1
    if pivot < 0:
        return (kept, offset) if _proves_equal(rest, 1) else None
    it = shard[pivot]
    if _proves_le(_add(digits[pivot], rest), it.extent):
        return [Iter(rest, it.stride, it.axis), *kept], offset
    return _straddle(shard, pivot, digits, rest, kept, offset)


def _straddle(shard: Sequence[Iter], pivot: int, digits: list[Any], rest: Any,
              kept: list[Iter], offset: Offset) -> tuple[list[Iter], Offset] | None:
    """A run of ``rest`` that ends ``rest / 2`` into the next step of the iterator outside
    ``pivot``: two halves of ``c = rest / 2``, the second ``jump`` further than the first's
    end."""
    it = shard[pivot]
    half = _div(rest, 2)
    if not (_proves_equal(_mod(rest, 2), 0) and
            _proves_equal(_add(digits[pivot], half), it.extent)):
        return None
    outer = shard[pivot - 1] if pivot > 0 else None
    if outer is not None and not (_proves_le(_add(digits[pivot - 1], 1), outer.extent) and
                                  outer.axis is it.axis):
        return None
    jump = _sub(outer.stride if outer is not None else 0, _mul(_sub(it.extent, half), it.stride))
    return [Iter(2, jump, it.axis), Iter(half, it.stride, it.axis), *kept], offset
