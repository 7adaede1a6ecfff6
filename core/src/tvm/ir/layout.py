"""Tile layouts: how a buffer's logical elements map onto memory and thread axes.

A :class:`TileLayout` is a list of *shard* iterators ``(extent, stride@axis)``. The logical
index space of the buffer (row-major, flattened) is split into digits, outermost iterator first;
digit ``i`` contributes ``digit * stride_i`` to the coordinate on ``axis_i``. Memory axes (``m``,
and those backends add, e.g. Trainium's ``P``, ``F`` and ``Bank``) give addresses; thread axes
(``laneid``, ``warpid``, ...) say which thread holds the element. *Replica* iterators name thread
axes over which every element is replicated.

The set of axes is open: ``Axis.register("P", kind="memory", owner=...)`` adds one.

Axes, iterators and the ``S[...]``/``R[...]`` notation are in ``layout_axes`` (re-exported here).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._registry import Registry
from ..error import LayoutError
from .expr import PrimExpr, convert
from .layout_algebra import (
    add_offset,
    fuse_by_scope,
    fuse_contiguous,
    layout_scope,
    remove_units,
    scope_wider,
    slice_group,
    sort_replica,
    split_by_scope,
    split_offset,
)
from .layout_axes import (
    AXES,
    Axis,
    Iter,
    R,
    S,
    _add,
    _div,
    _exec_scope,
    _mod,
    _mul,
    _ShardSpec,
    _sub,
    _val,
    current_target_kind,
    default_strides,
)
from .layout_axes import AxisStride as AxisStride
from .node import Node
from .structural import structural_equal

__all__ = ["AXES", "LAYOUT_NAMES", "SCOPE_LAYOUTS", "Axis", "ComposeLayout", "Iter", "R", "S",
           "ScopeLayout", "SwizzleLayout", "TileLayout", "layout_from_string"]



def _apply_args(layout: TileLayout, coords: tuple[Any, ...], shape: Sequence[Any] | None
                ) -> tuple[Sequence[Any], Sequence[Any]]:
    """``apply``'s two spellings: ``(indices, shape)`` and the seed's ``(*indices, shape=)``."""
    if len(coords) == 2 and shape is None and all(isinstance(c, (list, tuple)) for c in coords):
        return coords[0], coords[1]
    if len(coords) == 1 and isinstance(coords[0], (list, tuple)):
        coords = tuple(coords[0])
    if len(coords) == 1 and shape is None:  # one index: the element's flat position
        return coords, [layout.size()]
    if shape is None:
        shape = [it.extent for it in layout.shard]
    if len(coords) != len(shape):
        raise ValueError(f"apply: {len(coords)} indices for a shape of {len(shape)} dimensions "
                         f"({list(shape)}); give one index per dimension, or shape=")
    return coords, shape


class TileLayout(Node):
    _fields = ("shard", "replica", "offset")

    def __init__(self, shard: Sequence[Iter] | _ShardSpec = (),
                 replica: Sequence[Iter] | _ShardSpec = (),
                 offset: dict[Any, Any] | None = None) -> None:
        if isinstance(shard, _ShardSpec):
            # S[...] + R[...] + 1 @ laneid: one spec carries all three
            replica = getattr(shard, "replica_iters", None) or replica
            offset = {**getattr(shard, "offset", {}), **(offset or {})}
            shard = shard.iters
        if isinstance(replica, _ShardSpec):
            replica = replica.iters
        self.shard = list(shard)
        self.replica = list(replica)
        self.offset: dict[Axis, PrimExpr] = {
            (k if isinstance(k, Axis) else Axis.get(k)): convert(v)
            for k, v in (offset or {}).items()}

    @staticmethod
    def from_iters(shard: Sequence[Iter] = (), replica: Sequence[Iter] = (),
                   offset: dict[Any, Any] | None = None) -> TileLayout:
        return TileLayout(shard, replica, offset)

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
        for it in self.shard + self.replica:
            if it.axis.name == axis:
                total = _add(total, _mul(_sub(it.extent, 1), it.stride))
        for ax, off in self.offset.items():
            if ax.name == axis:
                total = _add(total, off)
        return total

    def is_memory_only(self) -> bool:
        return all(it.axis.is_memory for it in self.shard) and not self.replica

    def apply(self, *args: Any, shape: Sequence[Any] | None = None) -> dict[str, PrimExpr]:
        """Coordinates on each axis of the logical element at ``indices`` of ``shape``:
        ``apply(indices, shape)``, or the seed's ``apply(i, j, k, shape=None)`` (``shape``
        defaults to the layout's own, its iterators' extents); one index alone is the
        element's flat position."""
        indices, shape = _apply_args(self, args, shape)
        flat: PrimExpr = convert(0)
        for idx, ext in zip(indices, shape):
            flat = _add(_mul(flat, ext), convert(idx))
        coords: dict[str, PrimExpr] = {}
        for it in self.shard:  # every axis gets a coordinate, an extent-1 one's too
            coords.setdefault(it.axis.name, convert(0))
        # contiguous iterators fused first: the same map, with fewer digits to split off
        shard = fuse_contiguous(remove_units(self.shard))
        digits = _split_digits(flat, [it.extent for it in shard])
        for it, digit in reversed(list(zip(shard, digits))):  # innermost term first
            _accumulate(coords, it.axis.name, _mul(digit, it.stride))
        for axis, off in self.offset.items():
            _accumulate(coords, axis.name, off)
        return coords

    def apply_to_shape(self, coord: Sequence[Any], shape: Sequence[Any]) -> list[PrimExpr]:
        """The digit of each shard iterator for the element at ``coord`` of ``shape``: split
        per dimension where the iterators group by ``shape`` (each dimension's index split
        over its own iterators), else from the flat position."""
        if len(coord) != len(shape):
            raise ValueError(f"apply_to_shape: {len(coord)} indices for a shape of "
                             f"{len(shape)} dimensions ({list(shape)})")
        try:
            grouped, seps = self.group(shape)
        except ValueError:
            flat: Any = convert(0)
            for idx, ext in zip(coord, shape):
                flat = _add(_mul(flat, ext), convert(idx))
            return _split_digits(flat, [it.extent for it in self.shard])
        digits: list[PrimExpr] = []
        for d in range(len(shape)):
            digits += _split_digits(convert(coord[d]),
                                    [it.extent for it in grouped.shard[seps[d]:seps[d + 1]]])
        return digits

    # -- canonical form and scopes -----------------------------------------------------------
    def get_scope(self) -> tuple[Any, Any] | None:
        """``(subscope, scope)`` (``ExecScope``s) of the threads this layout spreads over:
        ``laneid`` alone is threads within a warp, with ``warpid`` threads within a CTA.
        None for a layout of memory axes only; ``ValueError`` when its thread axes do not
        form one chain of scopes."""
        found = layout_scope(self._all_axes())
        if found is None:
            return None
        return _exec_scope(found[0]), _exec_scope(found[1])

    def verify_well_formed(self) -> bool:
        """True if the layout's thread axes form one chain of scopes (see :meth:`get_scope`);
        ``ValueError`` saying what is wrong otherwise."""
        layout_scope(self._all_axes())
        return True

    def _all_axes(self) -> list[Axis]:
        return [it.axis for it in self.shard + self.replica] + list(self.offset)

    def canonicalize(self) -> TileLayout:
        """The same map in one normal form: extent-1 iterators and zero offsets dropped; under
        a target (``with Target(...)``), thread iterators moved onto the axis the target fuses
        them to for this layout's scopes (``warpid`` and ``laneid`` of a CTA-wide layout onto
        ``tx``); neighbouring iterators on one axis that step contiguously merged; replica
        iterators in one order."""
        shard = remove_units(self.shard)
        replica = list(self.replica)
        offset = {ax: v for ax, v in self.offset.items() if _val(v) != 0}
        shard, replica, offset = self._fuse_scopes(shard, replica, offset)
        return TileLayout(fuse_contiguous(shard), sort_replica(replica), offset)

    def _fuse_scopes(self, shard: list[Iter], replica: list[Iter], offset: dict[Axis, Any]
                     ) -> tuple[list[Iter], list[Iter], dict[Axis, Any]]:
        kind = current_target_kind()
        found = layout_scope(self._all_axes()) if kind is not None else None
        if kind is None or found is None:
            return shard, replica, offset
        moved: dict[Axis, Any] = {}
        for it in fuse_by_scope([Iter(1, v, ax) for ax, v in offset.items()], kind, *found):
            add_offset(moved, it.axis, it.stride)
        return (fuse_by_scope(shard, kind, *found), fuse_by_scope(replica, kind, *found),
                moved)

    def slice(self, shape: Sequence[Any], region: Sequence[Any]) -> TileLayout | None:
        """The layout of the sub-tile ``region`` (per dimension a ``(begin, end)`` pair or a
        :class:`~tvm.ir.Range`) of this layout over ``shape``: element ``i`` of the region
        sits where element ``begin + i`` of the whole does (the difference goes into the
        result's offset). None when a dimension's run is no single strided pattern of the
        iterators covering it."""
        if len(region) != len(shape):
            raise ValueError(f"slice: the region has {len(region)} dimensions, the shape "
                             f"{list(shape)} has {len(shape)}; give one range per dimension")
        grouped, seps = self.group(shape)
        shard: list[Iter] = []
        offset: dict[Axis, Any] = dict(self.offset)
        for d, r in enumerate(region):
            begin, extent = _region_bounds(r, d)
            group = fuse_contiguous(remove_units(grouped.shard[seps[d]:seps[d + 1]]))
            part = slice_group(group, begin, extent)
            if part is None:
                return None
            shard += part[0]
            for ax, v in part[1].items():
                add_offset(offset, ax, v)
        return TileLayout(shard, grouped.replica, offset)

    # -- building layouts from layouts ------------------------------------------------------
    def tile(self, outer: TileLayout, outer_shape: Sequence[Any],
             inner_shape: Sequence[Any]) -> TileLayout:
        """This layout (the *inner* one, over ``inner_shape``) repeated in the arrangement
        ``outer`` gives (over ``outer_shape``): the result covers the shape
        ``outer_shape[d] * inner_shape[d]``, and element ``o * inner_shape + i`` (per dimension)
        sits at ``inner(i)`` plus ``outer(o)`` with each of ``outer``'s strides multiplied by
        this layout's span on that stride's axis (so tiles never overlap)."""
        return _tile(self, outer, outer_shape, inner_shape)

    def is_tile_inner(self, tiled: Any, tiled_shape: Sequence[Any],
                      inner_shape: Sequence[Any]) -> TileLayout | None:
        """The outer layout ``o`` with ``self.tile(o, tiled_shape / inner_shape, inner_shape)``
        equal to ``tiled`` (over ``tiled_shape``), if ``tiled`` is this layout tiled so; None
        otherwise. Under a target, ``tiled``'s thread axes are first split at this layout's
        scope (a CTA layout on ``tx`` read as warps of lanes for a layout of lanes)."""
        if not isinstance(tiled, TileLayout):
            return None
        return _is_tile_inner(self, tiled, tiled_shape, inner_shape)

    def is_tile_outer(self, tiled: Any, tiled_shape: Sequence[Any],
                      outer_shape: Sequence[Any]) -> TileLayout | ComposeLayout | None:
        """The inner layout ``i`` with ``i.tile(self, outer_shape, tiled_shape /
        outer_shape)`` equal to ``tiled``, if there is one; None otherwise. A swizzled
        ``tiled`` gives the swizzled inner layout."""
        if isinstance(tiled, ComposeLayout):
            inner = self.is_tile_outer(tiled.layout_B, tiled_shape, outer_shape)
            return None if inner is None else ComposeLayout(tiled.layout_A, inner)  # type: ignore[arg-type]
        if not isinstance(tiled, TileLayout):
            return None
        return _is_tile_outer(self, tiled, tiled_shape, outer_shape)

    def direct_sum(self, left: TileLayout, left_shape: Sequence[Any],
                   right_shape: Sequence[Any]) -> TileLayout:
        """``left ⊕ self``: the layout over the interleaved shape ``[left_shape[0],
        right_shape[0], left_shape[1], ...]`` whose element ``(a0, b0, a1, b1, ...)`` sits at
        ``left(a0, a1, ...) + self(b0, b1, ...)`` on every axis (unlike :meth:`tile`, no
        stride is scaled: the caller makes the two fit together)."""
        return _direct_sum(left, self, left_shape, right_shape)

    def is_direct_sum_right(self, sum_layout: Any, interleaved_shape: Sequence[Any],
                            right_shape: Sequence[Any]) -> TileLayout | None:
        """The ``left`` with ``self.direct_sum(left, ...)`` equal to ``sum_layout`` over
        ``interleaved_shape``, if its right-hand blocks are this layout's; None otherwise."""
        return _direct_sum_part(sum_layout, self, interleaved_shape, right_shape, known_left=False)

    def is_direct_sum_left(self, sum_layout: Any, interleaved_shape: Sequence[Any],
                           left_shape: Sequence[Any]) -> TileLayout | None:
        """The ``right`` with ``right.direct_sum(self, ...)`` equal to ``sum_layout`` over
        ``interleaved_shape``, if its left-hand blocks are this layout's; None otherwise."""
        return _direct_sum_part(sum_layout, self, interleaved_shape, left_shape, known_left=True)

    def tile_to(self, to_shape: Sequence[Any], current_shape: Sequence[Any]) -> TileLayout:
        """This layout over ``current_shape`` repeated row-major until it covers ``to_shape``
        (each dimension of ``to_shape`` a multiple of the current one)."""
        tiles = _tile_counts(to_shape, current_shape)
        return self.tile(TileLayout.row_major(tiles), tiles, current_shape)

    def storage(self) -> TileLayout:
        """The memory part of this layout: its iterators on thread axes dropped (what one thread
        holds of a distributed tile)."""
        return TileLayout([it for it in self.shard if not it.axis.is_thread],
                          [it for it in self.replica if not it.axis.is_thread],
                          {ax: v for ax, v in self.offset.items() if not ax.is_thread})

    def group(self, shape: Sequence[Any]) -> tuple[TileLayout, list[int]]:
        """This layout with its iterators split so that consecutive runs of them cover the
        dimensions of ``shape`` one by one, and the run boundaries (``seps[d]:seps[d + 1]`` are
        dimension ``d``'s iterators). ``ValueError`` when the iterators cannot be split so."""
        return _group(self, shape)

    def permute_dims(self, perm: Sequence[int]) -> TileLayout:
        """The shard iterators in the order ``perm`` gives."""
        if sorted(perm) != list(range(len(self.shard))):
            raise LayoutError(f"permute_dims: {list(perm)} is not a permutation of the "
                             f"{len(self.shard)} shard iterators of {self!r}")
        return TileLayout([self.shard[i] for i in perm], self.replica)

    def permute_by_groups(self, seps: Sequence[int], perm: Sequence[int]) -> TileLayout:
        """Runs of iterators (``seps`` as :meth:`group` returns them) in the order ``perm``."""
        if sorted(perm) != list(range(len(seps) - 1)):
            raise LayoutError(f"permute_by_groups: {list(perm)} is not a permutation of the "
                             f"{len(seps) - 1} groups")
        order = [k for g in perm for k in range(seps[g], seps[g + 1])]
        return self.permute_dims(order)

    def unpack(self, num: int) -> TileLayout:
        """Each element split into ``num`` contiguous ones (a view as a type ``num`` times
        narrower): every stride times ``num``, and an innermost iterator of ``num``."""
        shard = [Iter(it.extent, _mul(it.stride, num) if it.axis.is_memory else it.stride,
                      it.axis) for it in self.shard]
        offset = {ax: _mul(v, num) if ax.is_memory else v for ax, v in self.offset.items()}
        return TileLayout([*shard, Iter(num, 1, "m")], self.replica, offset)

    def pack(self, num: int) -> TileLayout:
        """``num`` contiguous elements as one (a view as a type ``num`` times wider): the
        innermost iterator must be memory with stride 1 and an extent ``num`` divides."""
        last = self.shard[-1] if self.shard else None
        ext = _val(last.extent) if last is not None else None
        if last is None or _val(last.stride) != 1 or not last.axis.is_memory or \
                not isinstance(ext, int) or ext % num:
            raise ValueError(f"{self!r} cannot pack {num} elements into one: its innermost "
                             f"iterator must be contiguous memory of a multiple of {num}")
        shard = [Iter(it.extent, _div(it.stride, num) if it.axis.is_memory else it.stride,
                      it.axis) for it in self.shard[:-1]]
        if any(ax.is_memory and _val(_mod(v, num)) != 0 for ax, v in self.offset.items()):
            raise ValueError(f"{self!r} cannot pack {num} elements into one: its memory offset "
                             f"does not start at a multiple of {num}")
        offset = {ax: _div(v, num) if ax.is_memory else v for ax, v in self.offset.items()}
        return TileLayout([*shard, Iter(ext // num, 1, last.axis)], self.replica, offset)

    def broadcast(self, num: int, position: int = -1, axis: Axis | str = "m") -> TileLayout:
        """A stride-0 iterator of extent ``num`` inserted at ``position`` (as ``list.insert``
        counts; -1 appends): ``num`` consecutive logical elements along it are one stored
        element."""
        shard = list(self.shard)
        at = position if position >= 0 else len(shard) + 1 + position
        if not 0 <= at <= len(shard):
            raise ValueError(f"broadcast: position {position} is outside the {len(shard)} "
                             f"iterators of {self!r}")
        shard.insert(at, Iter(num, 0, axis))
        return TileLayout(shard, self.replica, self.offset)

    def is_trivial(self) -> bool:
        """The layout is the identity: its canonical form one contiguous run of memory."""
        return _is_identity(self.canonicalize())

    def is_swizzle(self) -> bool:
        return False

    def to_psum(self) -> TileLayout:
        """The Trainium PSUM form of this SBUF layout (its free axis onto banks): the
        ``to_psum_layout`` a loaded backend provides."""
        return _trainium_fn("to_psum", "to_psum_layout")(self)

    @staticmethod
    def trainium(annotation: str, shape: Sequence[Any], is_psum: bool = False) -> TileLayout:
        """A Trainium layout from a ``P``/``F`` annotation per dimension of ``shape`` (the
        ``trainium_layout`` a loaded Trainium backend provides)."""
        return _trainium_fn("trainium", "trainium_layout")(annotation, shape, is_psum)

    def __repr__(self) -> str:
        ext = ", ".join(str(it.extent) for it in self.shard)
        strides = ", ".join(str(it.stride) if it.axis.name == "m" else f"{it.stride}@{it.axis.name}"
                            for it in self.shard)
        offset = "".join(f" + {v}@{ax.name}" for ax, v in self.offset.items())
        return f"TileLayout(S[({ext}):({strides})]{offset})"


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

    _fields = ("per_element", "swizzle_len", "atom_len", "swizzle_inner")
    __script_ctor__ = "SwizzleLayout"
    #: fields the printer leaves out at these values
    __script_defaults__ = {"swizzle_inner": True}

    def __init__(self, per_element: int, swizzle_len: int, atom_len: int,
                 swizzle_inner: bool = True) -> None:
        for name, v in (("per_element", per_element), ("swizzle_len", swizzle_len),
                        ("atom_len", atom_len)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"SwizzleLayout: {name} must be a non-negative int, got {v!r}")
        if swizzle_len > atom_len:
            raise ValueError(f"SwizzleLayout: swizzle_len ({swizzle_len}) must not exceed "
                             f"atom_len ({atom_len}); the XORed bit ranges would overlap")
        if not isinstance(swizzle_inner, bool):
            raise ValueError(f"SwizzleLayout: swizzle_inner must be a bool, got "
                             f"{swizzle_inner!r}")
        self.per_element = per_element
        self.swizzle_len = swizzle_len
        self.atom_len = atom_len
        #: True: the low bit range (the chunk within a row) is XORed with the row bits (the
        #: tensor-core and TMA swizzles); False: the row bits are XORed with the chunk bits
        self.swizzle_inner = swizzle_inner

    @property
    def block(self) -> int:
        """Elements in one block that the swizzle permutes within."""
        return 1 << (self.per_element + self.atom_len + self.swizzle_len)

    def swizzle(self, offset: Any) -> Any:
        """The swizzled offset: an int for an int, else an expression."""
        if self.swizzle_len == 0:
            return offset
        mask = (1 << self.swizzle_len) - 1
        low, high = self.per_element, self.per_element + self.atom_len
        src, dst = (high, low) if self.swizzle_inner else (low, high)
        value = _val(offset)
        if isinstance(value, int):
            return convert(value ^ (((value >> src) & mask) << dst))
        e = convert(offset)
        return e ^ (((e >> src) & mask) << dst)

    def size(self, axis: str | None = None) -> PrimExpr:
        """Elements in one block (a swizzle has no axes but memory)."""
        _memory_only_axis("size", axis)
        return convert(self.block)

    def span(self, axis: str | None = None) -> PrimExpr:
        _memory_only_axis("span", axis)
        return convert(self.block)

    def storage(self) -> SwizzleLayout:
        return self

    def verify_well_formed(self) -> bool:
        return True  # the constructor checked the bit ranges

    def is_trivial(self) -> bool:
        return self.swizzle_len == 0

    def is_swizzle(self) -> bool:
        return True

    def canonicalize(self) -> SwizzleLayout:
        return self

    def unpack(self, num: int) -> SwizzleLayout:
        return _swizzle_scaled(self, num, +1)

    def pack(self, num: int) -> SwizzleLayout:
        return _swizzle_scaled(self, num, -1)

    def tile(self, outer: TileLayout, outer_shape: Sequence[Any],
             inner_shape: Sequence[Any]) -> ComposeLayout:
        """This swizzle over the row-major ``inner_shape``, repeated as ``outer`` says."""
        return ComposeLayout(self, TileLayout.row_major(inner_shape)).tile(
            outer, outer_shape, inner_shape)

    def is_tile_inner(self, tiled: Any, tiled_shape: Sequence[Any],
                      inner_shape: Sequence[Any]) -> TileLayout | None:
        """The outer layout that tiles this swizzle (over the row-major ``inner_shape``) into
        ``tiled``: a layout swizzled the same way, or this swizzle itself over the row-major
        ``tiled_shape``; None otherwise."""
        rows = TileLayout.row_major(inner_shape)
        if isinstance(tiled, ComposeLayout) and structural_equal(tiled.layout_A, self):
            return rows.is_tile_inner(tiled.layout_B, tiled_shape, inner_shape)
        if isinstance(tiled, SwizzleLayout) and structural_equal(tiled, self):
            return rows.is_tile_inner(TileLayout.row_major(tiled_shape), tiled_shape,
                                      inner_shape)
        return None

    def is_tile_outer(self, tiled: Any, tiled_shape: Sequence[Any],
                      outer_shape: Sequence[Any]) -> None:
        """A swizzle is never the outer layout of a tiling (it would swizzle whole tiles)."""
        return None

    def slice(self, shape: Sequence[Any], region: Sequence[Any]) -> ComposeLayout | None:
        """The region of this swizzle over the row-major ``shape`` (see
        :meth:`TileLayout.slice`)."""
        return ComposeLayout(self, TileLayout.row_major(shape)).slice(shape, region)

    def apply(self, indices: Any, shape: Sequence[Any] | None = None) -> dict[str, PrimExpr]:
        """``{"m": swizzled offset}`` of the element at ``indices`` (an offset, or indices of
        the row-major ``shape``), as :meth:`TileLayout.apply` gives coordinates: the seed's
        ``layout.apply(i)["m"]``."""
        if isinstance(indices, (list, tuple)):
            if shape is None and len(indices) != 1:
                raise ValueError(f"SwizzleLayout.apply: {len(indices)} indices need the shape "
                                 "they index")
            flat: Any = convert(0)
            for idx, ext in zip(indices, shape if shape is not None else [1]):
                flat = _add(_mul(flat, ext), convert(idx))
            indices = flat
        return {"m": self.swizzle(indices)}

    def is_memory_only(self) -> bool:
        return True

    def __repr__(self) -> str:
        inner = "" if self.swizzle_inner else ", swizzle_inner=False"
        return (f"SwizzleLayout(per_element={self.per_element}, swizzle_len={self.swizzle_len}, "
                f"atom_len={self.atom_len}{inner})")


class ComposeLayout(Node):
    """``layout_B`` then ``layout_A``: the TileLayout ``layout_B`` maps logical elements to
    offsets, the :class:`SwizzleLayout` ``layout_A`` permutes the memory offsets (as TVM's
    ``ComposeLayout(swizzle, tile)``). Thread axes of ``layout_B`` pass through."""

    _fields = ("layout_A", "layout_B")
    __script_ctor__ = "ComposeLayout"
    layout_A: SwizzleLayout  # noqa: N815 - the seed's field names
    layout_B: TileLayout  # noqa: N815

    def __init__(self, layout_A: SwizzleLayout | ComposeLayout,  # noqa: N803
                 layout_B: TileLayout) -> None:  # noqa: N803
        if isinstance(layout_A, ComposeLayout) and layout_A.layout_B.is_trivial():
            # a swizzle atom written as the swizzle of an identity tile (the CUDA backend's
            # mma_atom_layout): on offsets it is the swizzle alone
            layout_A = layout_A.layout_A
        if not isinstance(layout_A, SwizzleLayout):
            raise TypeError(f"ComposeLayout: layout_A must be a SwizzleLayout (or the "
                            f"ComposeLayout of a swizzle and an identity tile), got "
                            f"{type(layout_A).__name__}")
        if not isinstance(layout_B, TileLayout):
            raise TypeError(f"ComposeLayout: layout_B must be a TileLayout, got "
                            f"{type(layout_B).__name__}")
        self.layout_A = layout_A
        self.layout_B = layout_B

    @property
    def tile_layout(self) -> TileLayout:
        """The tile part (``layout_B``), by the seed's other name for it."""
        return self.layout_B

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

    def apply(self, *args: Any, shape: Sequence[Any] | None = None) -> dict[str, PrimExpr]:
        indices, full_shape = _apply_args(self.layout_B, args, shape)
        coords = self.layout_B.apply(indices, full_shape)
        if "m" in coords:
            coords["m"] = self.layout_A.swizzle(coords["m"])
        return coords

    def tile(self, outer: TileLayout, outer_shape: Sequence[Any],
             inner_shape: Sequence[Any]) -> ComposeLayout:
        """The swizzled tile repeated (see :meth:`TileLayout.tile`); the swizzle stays on the
        result, which needs each tile's memory span to be whole swizzle blocks."""
        span = _val(self.layout_B.span("m"))
        block = self.layout_A.block
        if not isinstance(span, int) or span % block:
            raise ValueError(f"tile: the swizzled tile spans {span} elements, not a multiple of "
                             f"its swizzle's block of {block}; the tiles would swizzle across "
                             f"each other")
        return ComposeLayout(self.layout_A, self.layout_B.tile(outer, outer_shape, inner_shape))

    def tile_to(self, to_shape: Sequence[Any], current_shape: Sequence[Any]) -> ComposeLayout:
        tiles = _tile_counts(to_shape, current_shape)
        return self.tile(TileLayout.row_major(tiles), tiles, current_shape)

    def storage(self) -> ComposeLayout:
        return ComposeLayout(self.layout_A, self.layout_B.storage())

    def verify_well_formed(self) -> bool:
        return self.layout_B.verify_well_formed()

    def is_trivial(self) -> bool:
        return False

    def is_swizzle(self) -> bool:
        return False

    def broadcast(self, num: int, position: int = -1, axis: Axis | str = "m") -> ComposeLayout:
        """The swizzle over the tile layout's broadcast (see :meth:`TileLayout.broadcast`)."""
        return ComposeLayout(self.layout_A, self.layout_B.broadcast(num, position, axis))

    def is_tile_inner(self, tiled: Any, tiled_shape: Sequence[Any],
                      inner_shape: Sequence[Any]) -> TileLayout | None:
        """The outer layout that tiles this one into ``tiled``, a layout with the same
        swizzle; None otherwise."""
        if isinstance(tiled, ComposeLayout) and structural_equal(tiled.layout_A, self.layout_A):
            return self.layout_B.is_tile_inner(tiled.layout_B, tiled_shape, inner_shape)
        return None

    def is_tile_outer(self, tiled: Any, tiled_shape: Sequence[Any],
                      outer_shape: Sequence[Any]) -> None:
        """A swizzled layout is never the outer layout of a tiling."""
        return None

    def canonicalize(self) -> ComposeLayout | SwizzleLayout:
        """The swizzle alone when the canonical tile layout is the identity (one contiguous
        run), else the swizzle over the canonical tile layout."""
        tile = self.layout_B.canonicalize()
        if _is_identity(tile):
            return self.layout_A
        return ComposeLayout(self.layout_A, tile)

    def slice(self, shape: Sequence[Any], region: Sequence[Any]) -> ComposeLayout | None:
        """The swizzle over the region of the tile layout (see :meth:`TileLayout.slice`)."""
        sliced = self.layout_B.slice(shape, region)
        return None if sliced is None else ComposeLayout(self.layout_A, sliced)

    def group(self, shape: Sequence[Any]) -> tuple[ComposeLayout, list[int]]:
        grouped, seps = self.layout_B.group(shape)
        return ComposeLayout(self.layout_A, grouped), seps

    def unpack(self, num: int) -> ComposeLayout:
        return ComposeLayout(_swizzle_scaled(self.layout_A, num, +1), self.layout_B.unpack(num))

    def pack(self, num: int) -> ComposeLayout:
        return ComposeLayout(_swizzle_scaled(self.layout_A, num, -1), self.layout_B.pack(num))

    def permute_by_groups(self, seps: Sequence[int], perm: Sequence[int]) -> ComposeLayout:
        return ComposeLayout(self.layout_A, self.layout_B.permute_by_groups(seps, perm))

    def __repr__(self) -> str:
        return f"ComposeLayout({self.layout_A!r}, {self.layout_B!r})"


def _is_identity(layout: TileLayout) -> bool:
    """One iterator of stride 1 on a memory axis, nothing else."""
    if len(layout.shard) > 1 or layout.replica or layout.offset:
        return False
    return not layout.shard or (layout.shard[0].axis.is_memory and
                                _val(layout.shard[0].stride) == 1)


def _memory_only_axis(what: str, axis: str | None) -> None:
    if axis is not None and axis != "m":
        raise ValueError(f"{what}: a swizzle layout has only the memory axis m, not {axis!r}")


def _swizzle_scaled(sw: SwizzleLayout, num: int, sign: int) -> SwizzleLayout:
    """The swizzle of the same bytes counted in elements ``num`` times narrower (``sign`` +1)
    or wider (-1): ``per_element`` moves by log2(num)."""
    if num < 1 or num & (num - 1):
        raise ValueError(f"a swizzled layout is viewed at a power-of-two ratio, not {num}")
    shift = num.bit_length() - 1
    per_element = sw.per_element + sign * shift
    if per_element < 0:
        raise ValueError(f"{sw!r} keeps {1 << sw.per_element} element(s) together; it cannot "
                         f"pack {num}")
    return SwizzleLayout(per_element, sw.swizzle_len, sw.atom_len, sw.swizzle_inner)


def _static_dims(shape: Sequence[Any], what: str) -> list[int]:
    dims = [_val(convert(d)) for d in shape]
    if not all(isinstance(d, int) for d in dims):
        raise ValueError(f"{what}: the shape {list(shape)} must be constant")
    return dims


def _tile_counts(to_shape: Sequence[Any], current_shape: Sequence[Any]) -> list[int]:
    """How many tiles of ``current_shape`` fit each dimension of ``to_shape`` (exactly)."""
    to = _static_dims(to_shape, "tile_to")
    cur = _static_dims(current_shape, "tile_to")
    if len(to) != len(cur):
        raise ValueError(f"tile_to: the shape {to} and the tile's shape {cur} have different "
                         f"ranks")
    for d, (t, c) in enumerate(zip(to, cur)):
        if c < 1 or t < c or t % c:
            raise ValueError(f"tile_to: dimension {d} of {to} is not a multiple of the tile's "
                             f"{c} (tile shape {cur}); give a shape the tile divides")
    return [t // c for t, c in zip(to, cur)]


def _group(layout: TileLayout, shape: Sequence[Any]) -> tuple[TileLayout, list[int]]:
    """Split ``layout``'s iterators into runs covering the dimensions of ``shape``."""
    dims = [convert(d) for d in shape]
    iters = list(layout.shard)
    if len(iters) == len(dims) and all(_same(it.extent, d) for it, d in zip(iters, dims)):
        return layout, list(range(len(dims) + 1))
    sizes = _static_dims(dims, "group")
    exts = [_val(it.extent) for it in iters]
    if not all(isinstance(e, int) for e in exts):
        raise ValueError(f"group: {layout!r} has symbolic extents that do not match the shape "
                         f"{sizes} one to one")
    out: list[Iter] = []
    seps = [0]
    pos, left = 0, exts[0] if exts else 1
    for d, size in enumerate(sizes):
        need = size
        while need > 1:
            while pos < len(iters) and left == 1:  # extent-1 iterators cover nothing
                pos += 1
                left = exts[pos] if pos < len(iters) else 1
            if pos >= len(iters):
                raise ValueError(f"group: {layout!r} covers fewer elements than the shape "
                                 f"{sizes}")
            it = iters[pos]
            # the iterator's low part keeps its stride; a high part peeled off steps further
            take = min(left, need)
            if (need % take) if take == left else (left % need):
                raise ValueError(f"group: dimension {d} ({size}) of {sizes} does not split "
                                 f"the iterators of {layout!r}")
            out.append(Iter(take, _mul(it.stride, left // take), it.axis))
            need //= take
            left //= take
        seps.append(len(out))
    if any(e != 1 for e in exts[pos + 1:]) or (pos < len(iters) and left != 1):
        raise ValueError(f"group: {layout!r} covers more elements than the shape {sizes}")
    return TileLayout(out, layout.replica), seps


def _trainium_fn(method: str, name: str) -> Any:
    fn = LAYOUT_NAMES.get(name)
    if fn is None:
        raise AttributeError(f"TileLayout.{method} needs the Trainium backend (it provides "
                             f"{name}); install it with 'pip install tvm-backend-trn'")
    return fn


def _split_digits(flat: Any, extents: Sequence[Any]) -> list[Any]:
    """``flat`` as mixed-radix digits over ``extents`` (outermost first); the outermost digit
    is not wrapped, so positions past the end keep stepping by its stride."""
    digits: list[Any] = []
    rest = flat
    for pos in range(len(extents) - 1, -1, -1):
        digits.append(_mod(rest, extents[pos]) if pos > 0 else rest)
        rest = _div(rest, extents[pos])
    return digits[::-1]


def _accumulate(coords: dict[str, Any], name: str, term: Any) -> None:
    coords[name] = _add(coords[name], term) if name in coords else convert(term)


def _region_bounds(r: Any, d: int) -> tuple[Any, Any]:
    """``(begin, extent)`` of one dimension of a slice's region."""
    if hasattr(r, "min") and hasattr(r, "extent"):  # a Range (ir.buffer imports this module)
        return r.min, r.extent
    if isinstance(r, (tuple, list)) and len(r) == 2:
        return convert(r[0]), _sub(r[1], r[0])
    raise TypeError(f"slice: dimension {d} of the region must be a (begin, end) pair or a "
                    f"Range, got {r!r}")


def _same(a: Any, b: Any) -> bool:
    return bool(structural_equal(convert(a), convert(b)))


def _tile(inner: TileLayout, outer: TileLayout, outer_shape: Sequence[Any],
          inner_shape: Sequence[Any]) -> TileLayout:
    if not isinstance(outer, TileLayout):
        raise TypeError(f"tile: the outer layout must be a TileLayout, got "
                        f"{type(outer).__name__}")
    if len(outer_shape) != len(inner_shape):
        raise ValueError(f"tile: outer shape {list(outer_shape)} and inner shape "
                         f"{list(inner_shape)} have different ranks")
    inner, outer = inner.canonicalize(), outer.canonicalize()
    og, oseps = outer.group(outer_shape)
    ig, iseps = inner.group(inner_shape)
    scale = {ax.name: inner.span(ax.name) for ax in og.axes()}
    shard: list[Iter] = []
    for d in range(len(inner_shape)):
        shard += [Iter(it.extent, _mul(it.stride, scale[it.axis.name]), it.axis)
                  for it in og.shard[oseps[d]:oseps[d + 1]]]
        shard += ig.shard[iseps[d]:iseps[d + 1]]
    replica = list(inner.replica) + [Iter(it.extent, _mul(it.stride, inner.span(it.axis.name)),
                                          it.axis) for it in outer.replica]
    offset = dict(inner.offset)
    for ax, v in outer.offset.items():
        add_offset(offset, ax, v)
    return TileLayout(shard, replica, offset).canonicalize()


def _tile_factors(what: str, tiled_shape: Sequence[Any], part: Sequence[Any]
                  ) -> list[Any] | None:
    """``tiled_shape[d] / part[d]`` per dimension; None if ``part`` does not divide it."""
    if len(tiled_shape) != len(part):
        raise ValueError(f"{what}: the tiled shape {list(tiled_shape)} and the tile's shape "
                         f"{list(part)} have different ranks")
    out = []
    for t, p in zip(tiled_shape, part):
        if _val(_mod(t, p)) != 0:
            return None
        out.append(_div(t, p))
    return out


def _split_tiled(tiled: TileLayout, scope: str) -> TileLayout:
    """``tiled`` with its thread axes split at ``scope`` by the current target's rules."""
    kind = current_target_kind()
    if kind is None:
        return tiled
    return TileLayout(split_by_scope(tiled.shard, kind, scope),
                      split_by_scope(tiled.replica, kind, scope),
                      split_offset(tiled.offset, kind, scope))


def _offset_difference(whole: TileLayout, part: TileLayout) -> dict[Axis, Any]:
    return {ax: _sub(v, part.offset[ax]) if ax in part.offset else v
            for ax, v in whole.offset.items()}


def _rescaled(it: Iter, spans: dict[str, Any]) -> Iter | None:
    """An outer iterator of a tiled layout with its stride counted in tiles of the inner
    layout's span on its axis; None if it does not step whole tiles."""
    span = spans.get(it.axis.name)
    if span is None or _val(it.extent) == 1:
        return it
    if _val(_mod(it.stride, span)) != 0:
        return None
    return Iter(it.extent, _div(it.stride, span), it.axis)


def _same_iter(a: Iter, b: Iter, *, strides: bool) -> bool:
    if not _same(a.extent, b.extent):
        return False
    return _val(a.extent) == 1 or (a.axis is b.axis and (not strides or _same(a.stride, b.stride)))


def _is_tile_inner(inner: TileLayout, tiled: TileLayout, tiled_shape: Sequence[Any],
                   inner_shape: Sequence[Any]) -> TileLayout | None:
    tiled, inner = tiled.canonicalize(), inner.canonicalize()
    ts, ins = tiled.get_scope(), inner.get_scope()
    if ts is not None and ins is not None:
        if ts[0] != ins[0] or scope_wider(ins[1], ts[1]):
            return None
        if scope_wider(ts[1], ins[1]):
            tiled = _split_tiled(tiled, ins[1])
    outer_shape = _tile_factors("is_tile_inner", tiled_shape, inner_shape)
    if outer_shape is None:
        return None
    try:
        tg, tseps = tiled.group([x for pair in zip(outer_shape, inner_shape) for x in pair])
        ig, iseps = inner.group(inner_shape)
    except ValueError:
        return None
    spans = {it.axis.name: inner.span(it.axis.name) for it in inner.shard}
    shard: list[Iter] = []
    for d in range(len(inner_shape)):
        mine = ig.shard[iseps[d]:iseps[d + 1]]
        theirs = tg.shard[tseps[2 * d]:tseps[2 * d + 2]]
        if len(mine) > len(theirs):
            return None
        cut = len(theirs) - len(mine)
        if not all(_same_iter(a, b, strides=True) for a, b in zip(mine, theirs[cut:])):
            return None
        for it in theirs[:cut]:
            scaled = _rescaled(it, spans)
            if scaled is None:
                return None
            shard.append(scaled)
    replica = []
    for it in tiled.replica:
        if any(structural_equal(it, r) for r in inner.replica):
            continue
        scaled = _rescaled(it, spans)
        if scaled is None:
            return None
        replica.append(scaled)
    return TileLayout(shard, replica, _offset_difference(tiled, inner))


def _is_tile_outer(outer: TileLayout, tiled: TileLayout, tiled_shape: Sequence[Any],
                   outer_shape: Sequence[Any]) -> TileLayout | None:
    tiled, outer = tiled.canonicalize(), outer.canonicalize()
    ts, os_ = tiled.get_scope(), outer.get_scope()
    if ts is not None and os_ is not None:
        if ts[1] != os_[1] or scope_wider(ts[0], os_[0]):
            return None
        if scope_wider(os_[0], ts[0]):
            tiled = _split_tiled(tiled, os_[0])
    inner_shape = _tile_factors("is_tile_outer", tiled_shape, outer_shape)
    if inner_shape is None:
        return None
    try:
        tg, tseps = tiled.group([x for pair in zip(outer_shape, inner_shape) for x in pair])
        og, oseps = outer.group(outer_shape)
    except ValueError:
        return None
    shard: list[Iter] = []
    for d in range(len(outer_shape)):
        mine = og.shard[oseps[d]:oseps[d + 1]]
        theirs = tg.shard[tseps[2 * d]:tseps[2 * d + 2]]
        if len(mine) > len(theirs):
            return None
        if not all(_same_iter(a, b, strides=False) for a, b in zip(mine, theirs)):
            return None
        shard += theirs[len(mine):]
    replica = [it for it in tiled.replica
               if not any(structural_equal(it, r) for r in outer.replica)]
    found = TileLayout(shard, replica, _offset_difference(tiled, outer))
    try:
        again = found.tile(outer, outer_shape, inner_shape)
    except ValueError:
        return None
    return found if structural_equal(again, tiled.canonicalize()) else None


def _direct_sum(left: TileLayout, right: TileLayout, left_shape: Sequence[Any],
                right_shape: Sequence[Any]) -> TileLayout:
    if not isinstance(left, TileLayout):
        raise TypeError(f"direct_sum: the left layout must be a TileLayout, got "
                        f"{type(left).__name__}")
    if len(left_shape) != len(right_shape):
        raise ValueError(f"direct_sum: the left shape {list(left_shape)} and the right shape "
                         f"{list(right_shape)} have different ranks")
    lg, lseps = left.canonicalize().group(left_shape)
    rg, rseps = right.canonicalize().group(right_shape)
    shard: list[Iter] = []
    for d in range(len(left_shape)):
        shard += lg.shard[lseps[d]:lseps[d + 1]] + rg.shard[rseps[d]:rseps[d + 1]]
    offset = dict(lg.offset)
    for ax, v in rg.offset.items():
        add_offset(offset, ax, v)
    return TileLayout(shard, lg.replica + rg.replica, offset).canonicalize()


def _direct_sum_part(sum_layout: Any, known: TileLayout, interleaved_shape: Sequence[Any],
                     known_shape: Sequence[Any], *, known_left: bool) -> TileLayout | None:
    """The other addend of ``sum_layout`` given ``known`` (its left or right one)."""
    if not isinstance(sum_layout, TileLayout):
        return None
    if len(interleaved_shape) != 2 * len(known_shape):
        raise ValueError(f"direct sum: the interleaved shape {list(interleaved_shape)} must "
                         f"have twice the dimensions of {list(known_shape)}")
    total, known = sum_layout.canonicalize(), known.canonicalize()
    try:
        sg, sseps = total.group(interleaved_shape)
        kg, kseps = known.group(known_shape)
    except ValueError:
        return None
    shard: list[Iter] = []
    for d in range(len(known_shape)):
        left = sg.shard[sseps[2 * d]:sseps[2 * d + 1]]
        right = sg.shard[sseps[2 * d + 1]:sseps[2 * d + 2]]
        mine, other = (left, right) if known_left else (right, left)
        expected = kg.shard[kseps[d]:kseps[d + 1]]
        if len(mine) != len(expected) or \
                not all(_same_iter(a, b, strides=True) for a, b in zip(mine, expected)):
            return None
        shard += other
    replica = [it for it in total.replica
               if not any(structural_equal(it, r) for r in known.replica)]
    offset = dict(total.offset)
    for ax, v in known.offset.items():
        add_offset(offset, ax, _sub(0, v))
    return TileLayout(shard, replica, offset)


class ScopeLayout:
    """A backend's meaning of a layout written as a string for buffers of ``scope``:
    ``make(annotation, shape)`` returns the layout (Trainium's ``layout="PF"`` in
    ``trn.sbuf``). Returned from the ``tvm_layout_names`` hook, it is registered in
    :data:`SCOPE_LAYOUTS` rather than as a name."""

    __slots__ = ("make", "scope")

    def __init__(self, scope: str, make: Any) -> None:
        self.scope = scope
        self.make = make

    def __repr__(self) -> str:
        return f"ScopeLayout({self.scope!r}, {getattr(self.make, '__name__', self.make)})"


#: layout functions (and other non-axis names) backends add: name -> object
LAYOUT_NAMES: Registry[str, Any] = Registry("layout name")
#: storage scope -> what a layout string means in it (ScopeLayout.make)
SCOPE_LAYOUTS: Registry[str, Any] = Registry("scope layout")


def layout_from_string(text: str, shape: Sequence[Any], scope: str) -> Any:
    """The layout a string names for a buffer of ``shape`` in ``scope``: ``"default"`` is the
    row-major layout every buffer without one has (``None``); any other string is read by the
    backend that owns ``scope`` (:class:`ScopeLayout`)."""
    if text == "default":
        return None
    make = SCOPE_LAYOUTS.get(scope)
    if make is None:
        known = ", ".join(sorted(SCOPE_LAYOUTS.keys())) or "none loaded"
        raise ValueError(f"layout {text!r}: a layout string other than 'default' is read by the "
                         f"backend of the buffer's scope, and scope {scope!r} has no reader "
                         f"(scopes with one: {known}); give a T.TileLayout instead")
    return make(text, list(shape))
