"""Buffers, ranges and buffer regions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

from .dtype import DataType
from .expr import (
    Add,
    BinaryOp,
    BufferLoad,
    Call,
    Cast,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mul,
    PrimExpr,
    Ramp,
    Sub,
    Var,
    convert,
)
from .layout import ComposeLayout, SwizzleLayout, TileLayout, default_strides
from .node import Node
from .op import Op
from .span import Span
from .structural import structural_equal

__all__ = ["Buffer", "BufferRegion", "Range", "as_int64", "const_bytes", "const_numel", "const_span",
           "decl_buffer", "promote_int64", "wide_index"]


class Range(Node):
    """``[min, min + extent)``."""

    _fields = ("min", "extent")

    def __init__(self, min: Any, extent: Any) -> None:  # noqa: A002 - the IR's own field name
        self.min = convert(min)
        self.extent = convert(extent, self.min.dtype if isinstance(self.min, PrimExpr) else None)

    @staticmethod
    def from_min_extent(min: Any, extent: Any) -> Range:  # noqa: A002
        return Range(min, extent)

    def __repr__(self) -> str:
        return f"Range({self.min}, {self.extent})"


class Buffer(Node):
    """A multi-dimensional array in some storage scope.

    ``scope`` is a storage scope string: ``global`` (device or host memory), ``shared``,
    ``shared.dyn``, ``local``, or one a backend defines (``trn.sbuf``). ``layout`` (optional) is a
    :class:`TileLayout`; without one the buffer is row-major (or as ``strides`` says).
    Indexing builds IR: ``A[i, j]`` is a :class:`BufferLoad`; ``A[0:64, k:k+32]`` is a
    :class:`BufferRegion`.
    """

    _fields = ("data", "dtype", "shape", "strides", "elem_offset", "scope", "layout", "align",
               "axis_separators", "offset_factor")
    #: the access masks of :meth:`access_ptr` (``A.access_ptr(Buffer.WRITE)`` = ``"w"``)
    READ: ClassVar[int] = 1
    WRITE: ClassVar[int] = 2
    _buffer_def_fields = frozenset({"shape", "strides", "elem_offset"})
    span: Span | None = None  # where the parser read its declaration (not part of the structure)
    # a view (view/local/permute) the script declares where it is assigned; cleared once it is
    declare_in_script: bool = False

    def __init__(
        self,
        name: str,
        shape: Sequence[Any],
        dtype: str | DataType = "float32",
        *,
        strides: Sequence[Any] | None = None,
        scope: str = "global",
        layout: TileLayout | ComposeLayout | SwizzleLayout | None = None,
        data: Var | None = None,
        elem_offset: Any = 0,
        align: int = 0,
        axis_separators: Sequence[int] | None = None,
        offset_factor: int = 0,
    ) -> None:
        self.name = name
        self.dtype = DataType(dtype)
        self.shape = [convert(s) for s in shape]
        self.strides = [convert(s) for s in strides] if strides else []
        if not (isinstance(scope, str) and scope):
            raise TypeError(f"buffer {name}: scope must be a storage scope string such as "
                            f"'global', 'shared' or 'local', not {scope!r:.60}")
        self.scope = scope
        if isinstance(layout, SwizzleLayout):  # a swizzle of the row-major offsets (what a
            # canonicalized swizzled layout becomes), as T.decl_buffer(layout=...) takes it
            layout = ComposeLayout(layout, TileLayout.row_major(self.shape))
        self.layout = layout
        self.data = data if data is not None else Var(name, "handle", ptr_dtype=self.dtype, ptr_scope=scope)
        self.elem_offset = convert(elem_offset)
        self.align = int(align)
        # Apache TVM's: where the flattened (physical) shape splits into several dimensions, and
        # the factor elem_offset is a multiple of. Recorded, printed and compared; FlattenBuffer
        # supports only flat (1-D) physical buffers, so it rejects axis separators.
        self.axis_separators = [int(a) for a in axis_separators or ()]
        self.offset_factor = int(offset_factor)
        if any(not 0 < a < len(self.shape) for a in self.axis_separators) or \
                self.axis_separators != sorted(set(self.axis_separators)):
            raise ValueError(f"buffer {name}: axis_separators must be increasing dimension "
                             f"indices in 1..{len(self.shape) - 1}, got {self.axis_separators}")
        if self.offset_factor < 0:
            raise ValueError(f"buffer {name}: offset_factor must be >= 0, got {offset_factor}")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def static_shape(self) -> tuple[int, ...] | None:
        """The shape as Python ints, or None if some extent is symbolic."""
        out = []
        for s in self.shape:
            if not isinstance(s, IntImm):
                return None
            out.append(s.value)
        return tuple(out)

    def ptr_to(self, indices: Sequence[Any]) -> PrimExpr:
        """The address of the element at logical ``indices`` (``T.address_of(A[i, j])``)."""
        items = list(indices) if isinstance(indices, (list, tuple)) else [indices]
        if len(items) != len(self.shape):
            raise IndexError(f"{self.name}.ptr_to: {len(items)} index(es) for a buffer of "
                             f"{len(self.shape)} dimension(s)")
        return Op.get("tirx.address_of")(BufferLoad(self, items))

    def elem_offset_of(self, indices: Sequence[Any]) -> PrimExpr:
        """The memory offset, in elements from the buffer's start (its own ``elem_offset`` not
        included, as :meth:`access_ptr`'s ``offset`` counts), of the element at logical
        ``indices``: through the layout's memory axis, the strides, or row-major. A sub-view
        at ``A[32, 32]`` is ``T.decl_buffer(..., A.data, elem_offset=A.elem_offset +
        A.elem_offset_of([32, 32]))``."""
        items = list(indices) if isinstance(indices, (list, tuple)) else [indices]
        if len(items) != len(self.shape):
            raise IndexError(f"{self.name}.elem_offset_of: {len(items)} index(es) for a buffer "
                             f"of {len(self.shape)} dimension(s) (shape {list(self.shape)})")
        items = [convert(i) for i in items]
        if self.layout is not None:
            return self.layout.apply(items, list(self.shape)).get("m", convert(0))
        strides = list(self.strides) if self.strides else default_strides(self.shape)
        offset: PrimExpr = convert(0)
        for i, stride in zip(items, strides):
            offset = offset + i * stride
        return offset

    def access_ptr(self, access_mask: str | int, ptr_type: str = "handle", content_lanes: int = 1,
                   offset: Any = 0, extent: Any = None) -> PrimExpr:
        """``T.tvm_access_ptr`` of this buffer: the address of element ``offset`` (after the
        buffer's own ``elem_offset``), for ``extent`` elements (default: to the end) read
        (``"r"``), written (``"w"``) or both (``"rw"``, or the mask 1 | 2 as an int). With
        ``content_lanes`` > 1 the pointer is to vectors of that many elements, and offset and
        extent count vectors (the element counts divided by the lanes)."""
        mask = _access_mask(self.name, access_mask)
        if ptr_type != "handle":
            raise ValueError(f"{self.name}.access_ptr: ptr_type must be 'handle', got {ptr_type!r}")
        lanes = int(content_lanes)
        if lanes < 1:
            raise ValueError(f"{self.name}.access_ptr: content_lanes must be >= 1, got {lanes}")
        if extent is None:
            size: Any = 1
            for s in self.shape:
                size = size * s
            extent = size - offset
        start, count = self.elem_offset + offset, convert(extent)
        if lanes > 1:
            start, count = convert(start) // lanes, count // lanes
        ptype = Call(DataType(self.dtype).with_lanes(lanes), Op.get("tirx.type_annotation"), [])
        return Op.get("tirx.tvm_access_ptr")(ptype, self.data, start, count, convert(mask))

    # -- views: new buffers over this buffer's memory (DeclBuffer where a script assigns them) --
    def view(self, *shape: Any, layout: Any = None) -> Buffer:
        """A view of this buffer's memory: ``A.view(16, 64)`` with another shape of as many
        elements (one extent may be ``-1``: what is left), keeping the layout unless ``layout``
        is given; ``A.view("float16")`` reads the memory as another element type (the last
        dimension and the layout scaled by the ratio of the widths). In a script, ``B =
        A.view(...)`` declares ``B`` (a ``T.decl_buffer`` with ``data=A.data``)."""
        if len(shape) == 1 and isinstance(shape[0], (str, DataType)) and layout is None:
            return self._dtype_view(DataType(shape[0]))
        dims = list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (list, tuple)) \
            else list(shape)
        if not dims:
            raise ValueError(f"{self.name}.view: give the new shape, e.g. {self.name}.view(-1)")
        dims = _infer_view_shape(self, dims) if layout is None else dims
        if self.strides and not _same_shape(dims, self.shape):
            raise ValueError(f"{self.name}.view: a buffer with strides keeps its shape (the "
                             f"strides say nothing of another one); declare the view with "
                             f"T.decl_buffer(..., data={self.name}.data, strides=...)")
        return self._view(dims, self.dtype, self.layout if layout is None else layout,
                          self.elem_offset)

    def local(self, *shape: Any, layout: Any = None) -> Buffer:
        """What one thread holds of a tile distributed over threads: the buffer's layout without
        its thread-axis iterators (:meth:`TileLayout.storage`), as a view of shape ``shape``
        (default: one dimension of all the thread's elements)."""
        if self.layout is None:
            raise ValueError(f"{self.name}.local: the buffer has no layout, so no thread axes to "
                             f"take away; local() views a tile laid out over threads, e.g. "
                             f"layout=wg_local_layout(64)")
        storage = self.layout.storage()
        dims = list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (list, tuple)) \
            else list(shape)
        if not dims:
            dims = [storage.size()]
        return self._view(dims, self.dtype, storage if layout is None else layout,
                          self.elem_offset)

    def permute(self, *dims: int) -> Buffer:
        """A view with the dimensions in the order ``dims`` (``A.permute(1, 0)`` is the
        transpose): element ``[j, i]`` of the view is ``A[i, j]``."""
        order = list(dims[0]) if len(dims) == 1 and isinstance(dims[0], (list, tuple)) \
            else list(dims)
        if sorted(order) != list(range(len(self.shape))):
            raise ValueError(f"{self.name}.permute: {order} is not a permutation of the "
                             f"{len(self.shape)} dimension(s)")
        shape = [self.shape[d] for d in order]
        if self.strides:
            view = self._view(shape, self.dtype, self.layout, self.elem_offset)
            view.strides = [self.strides[d] for d in order]
            return view
        base = self.layout if self.layout is not None else TileLayout.row_major(self.shape)
        grouped, seps = base.group(self.shape)
        return self._view(shape, self.dtype, grouped.permute_by_groups(seps, order),
                          self.elem_offset)

    @property
    def allocated_addr(self) -> list[PrimExpr]:
        """Where the allocator placed this buffer, as the seed's one-element list
        (``tmem.allocated_addr[0]``): for tensor memory (scope ``tmem``) its TMEM address,
        which this project's TMEM buffers hold as their ``elem_offset``
        (``T.decl_buffer(..., scope="tmem", allocated_addr=a)`` sets it)."""
        return [self.elem_offset]

    def _dtype_view(self, dtype: DataType) -> Buffer:
        old, new = self.dtype.bits * self.dtype.lanes, dtype.bits * dtype.lanes
        if self.strides:
            raise ValueError(f"{self.name}.view({str(dtype)!r}): a buffer with strides cannot "
                             f"be read as another element type here")
        if new == old:
            return self._view(list(self.shape), dtype, self.layout, self.elem_offset)
        if max(new, old) % min(new, old):
            raise ValueError(f"{self.name}.view({str(dtype)!r}): {old}-bit elements cannot be "
                             f"read as {new}-bit ones (neither width divides the other)")
        last = self.shape[-1] if self.shape else convert(1)
        if new > old:
            ratio = new // old
            if isinstance(last, IntImm) and last.value % ratio:
                raise ValueError(f"{self.name}.view({str(dtype)!r}): the last dimension "
                                 f"({last.value}) is not a multiple of {ratio}")
            layout = self.layout.pack(ratio) if self.layout is not None else None
            shape = [*self.shape[:-1], last // ratio]
            offset = self.elem_offset // ratio
        else:
            ratio = old // new
            layout = self.layout.unpack(ratio) if self.layout is not None else None
            shape = [*self.shape[:-1], last * ratio]
            offset = self.elem_offset * ratio
        return self._view(shape, dtype, layout, _fold_int(offset))

    def _view(self, shape: Sequence[Any], dtype: DataType, layout: Any,
              elem_offset: Any) -> Buffer:
        view = Buffer(f"{self.name}_view", shape, dtype, scope=self.scope, layout=layout,
                      data=self.data, elem_offset=elem_offset, align=self.align,
                      strides=self.strides or None)
        view.declare_in_script = True
        return view

    def vload(self, indices: Sequence[Any], dtype: str | None = None) -> BufferLoad:
        return BufferLoad(self, list(indices), dtype)

    def full_region(self) -> BufferRegion:
        return BufferRegion(self, [Range(0, s) for s in self.shape])

    def __getitem__(self, key: Any) -> BufferLoad | BufferRegion:
        items = key if isinstance(key, tuple) else (key,)
        if len(items) > len(self.shape):
            raise IndexError(
                f"buffer {self.name} has {len(self.shape)} dimension(s) but {len(items)} "
                f"index(es) were given"
            )
        full = len(items) == len(self.shape)
        if full and any(isinstance(i, slice) and i.step is not None for i in items):
            return BufferLoad(self, strided_indices(self, items))  # A[0:8:2], as in the seed
        # as in the seed, fewer indices than dimensions name a region: A[i] is row i
        items = (*items, *(slice(None),) * (len(self.shape) - len(items)))
        if any(isinstance(i, slice) for i in items):
            ranges = []
            for i, ext in zip(items, self.shape):
                if isinstance(i, slice):
                    if i.step not in (None, 1):
                        raise IndexError("buffer slices take no step")
                    lo = convert(0) if i.start is None else convert(i.start)
                    hi = ext if i.stop is None else convert(i.stop)
                    ranges.append(Range(lo, _sub(hi, lo)))
                else:
                    ranges.append(Range(i, 1))
            return BufferRegion(self, ranges)
        return BufferLoad(self, list(items))

    def __repr__(self) -> str:
        return f"Buffer({self.name}, {[str(s) for s in self.shape]}, {self.dtype}, scope={self.scope})"

    __hash__ = Node.__hash__


def _infer_view_shape(buf: Buffer, dims: list[Any]) -> list[Any]:
    """``dims`` with its one ``-1`` replaced by what is left of ``buf``'s elements; checked
    against ``buf``'s element count when both are constant."""
    total: Any = convert(1)
    for s in buf.shape:
        total = _fold_int(total * s)
    holes = [k for k, d in enumerate(dims) if isinstance(d, int) and d == -1]
    if len(holes) > 1:
        raise ValueError(f"{buf.name}.view: only one extent may be -1, got {dims}")
    known: Any = convert(1)
    for k, d in enumerate(dims):
        if k not in holes:
            known = _fold_int(known * d)
    if holes:
        if isinstance(total, IntImm) and isinstance(known, IntImm) and total.value % known.value:
            raise ValueError(f"{buf.name}.view: {dims} cannot cover the {total.value} elements "
                             f"of {buf.name}")
        dims[holes[0]] = _fold_int(total // known)
    elif isinstance(total, IntImm) and isinstance(known, IntImm) and total.value != known.value:
        raise ValueError(f"{buf.name}.view: the shape {[_int_or(d) for d in dims]} has "
                         f"{known.value} elements but {buf.name} "
                         f"{[_int_or(d) for d in buf.shape]} has {total.value}")
    return dims


def _same_shape(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return len(a) == len(b) and all(_int_or(x) == _int_or(y) for x, y in zip(a, b))


def _int_or(x: Any) -> Any:
    x = convert(x)
    return x.value if isinstance(x, IntImm) else x


def _fold_int(e: Any) -> Any:
    """Constant integer arithmetic folded (views of static buffers keep static shapes)."""
    e = convert(e)
    if isinstance(e, (Mul, FloorDiv)) and isinstance(e.a, IntImm) and isinstance(e.b, IntImm):
        value = e.a.value * e.b.value if isinstance(e, Mul) else e.a.value // e.b.value
        return IntImm(e.dtype, value)
    return e


def strided_indices(buffer: Buffer, items: Sequence[Any]) -> list[Any]:
    """The indices of ``buffer[items]`` where a slice has a step: as in the seed, such a slice
    is a vector of lanes, ``0:8:2`` is ``Ramp(0, 2, 4)``, and a slice of one lane is its start.
    The step must be a positive constant and the bounds constant (the lanes are the vector's);
    ``ValueError`` otherwise."""
    out: list[Any] = []
    for item, dim in zip(items, buffer.shape):
        if not isinstance(item, slice):
            out.append(item)
            continue
        lo = convert(0) if item.start is None else convert(item.start)
        hi = dim if item.stop is None else convert(item.stop)
        step = 1 if item.step is None else item.step
        step_v = step.value if isinstance(step, IntImm) else step
        if not isinstance(step_v, int) or isinstance(step_v, bool) or step_v < 1:
            raise ValueError(f"the step of a slice of buffer {buffer.name} must be a positive "
                             f"integer constant, got {step}")
        span = _sub(hi, lo)
        if not isinstance(span, IntImm):
            raise ValueError(f"a slice of buffer {buffer.name} with a step needs constant bounds "
                             f"(its lanes are the vector's), got {lo}:{hi}")
        lanes = (span.value + step_v - 1) // step_v
        if lanes < 1:
            raise ValueError(f"the slice {lo}:{hi}:{step} of buffer {buffer.name} is empty")
        out.append(lo if lanes == 1 else Ramp(lo, step_v, lanes))
    return out


class BufferRegion(Node):
    """A rectangular region of a buffer: one :class:`Range` per dimension."""

    _fields = ("buffer", "region")

    def __init__(self, buffer: Buffer, region: Sequence[Range]) -> None:
        self.buffer = buffer
        self.region = list(region)
        if len(self.region) != len(buffer.shape):
            raise IndexError(f"region of {buffer.name} needs {len(buffer.shape)} ranges, got {len(self.region)}")

    @property
    def shape(self) -> list[PrimExpr]:
        return [r.extent for r in self.region]

    @property
    def dtype(self) -> DataType:
        return self.buffer.dtype

    def __getitem__(self, key: Any) -> BufferRegion:
        """A sub-region, indexed relative to this one (as in the seed): ``A[32:64, 0:32][0:16,
        0:16]`` is ``A[32:48, 0:16]``. An integer keeps one element of that dimension; fewer
        indices than dimensions keep the rest whole."""
        items = key if isinstance(key, tuple) else (key,)
        if len(items) > len(self.region):
            raise IndexError(f"region of {self.buffer.name} has {len(self.region)} dimension(s) "
                             f"but {len(items)} index(es) were given")
        items = (*items, *(slice(None),) * (len(self.region) - len(items)))
        ranges = []
        for dim, (i, r) in enumerate(zip(items, self.region)):
            if isinstance(i, slice):
                if i.step not in (None, 1):
                    raise IndexError("region slices take no step")
                lo = convert(0) if i.start is None else convert(i.start)
                hi = r.extent if i.stop is None else convert(i.stop)
                ext = _sub(hi, lo)
            else:
                lo, hi, ext = convert(i), convert(i) + 1, convert(1)
            _check_within(self.buffer.name, dim, lo, hi, r.extent)
            ranges.append(Range(_add(r.min, lo), ext))
        return BufferRegion(self.buffer, ranges)

    def __repr__(self) -> str:
        parts = ", ".join(f"{r.min}:{r.min}+{r.extent}" for r in self.region)
        return f"{self.buffer.name}[{parts}]"


def _add(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    if isinstance(b, IntImm) and b.value == 0:
        return a
    if isinstance(a, IntImm) and a.value == 0:
        return b
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return IntImm(a.dtype, a.value + b.value)
    return a + b


def _check_within(name: str, dim: int, lo: PrimExpr, hi: PrimExpr, extent: PrimExpr) -> None:
    """A sub-region's constant bounds must lie inside the region's constant extent."""
    vals = [x.value if isinstance(x, IntImm) else None for x in (lo, hi, extent)]
    if None in vals:
        return
    start, stop, size = vals
    if not 0 <= start < stop <= size:  # type: ignore[operator]
        raise IndexError(f"region of {name}: [{start}:{stop}] in dimension {dim} is outside "
                         f"the region's extent {size}; index a region from 0")


def _sub(hi: Any, lo: PrimExpr) -> PrimExpr:
    hi = convert(hi)
    if isinstance(hi, IntImm) and isinstance(lo, IntImm):
        return IntImm(hi.dtype, hi.value - lo.value)
    if isinstance(lo, IntImm) and lo.value == 0:
        return hi
    # A[k*32:k*32+32] -> extent 32 when hi is literally lo + c
    if isinstance(hi, Add) and hi.a is lo and isinstance(hi.b, IntImm):
        return hi.b
    if isinstance(hi, Add) and isinstance(hi.b, IntImm) and structural_equal(hi.a, lo):
        return hi.b
    return hi - lo


_INT32_MAX = 2**31 - 1


def const_numel(buf: Buffer) -> int | None:
    """The number of elements of ``buf``; None when its shape is not constant."""
    n = 1
    for dim in buf.shape:
        if not isinstance(dim, IntImm):
            return None
        n *= int(dim.value)
    return n


def const_bytes(buf: Buffer) -> int | None:
    """The bytes ``buf``'s elements take (sub-byte dtypes count a byte each); None when its
    shape is not constant."""
    n = const_numel(buf)
    return None if n is None else n * max(1, buf.dtype.bytes)


def const_span(buf: Buffer) -> int | None:
    """How many elements ``buf`` spans in memory (last reachable offset + 1), when its shape,
    strides and offset are constants; None otherwise (layouts included)."""
    if buf.layout is not None:
        return None
    consts = [x.value for x in (*buf.shape, *buf.strides, buf.elem_offset) if isinstance(x, IntImm)]
    if len(consts) != len(buf.shape) + len(buf.strides) + 1:
        return None
    dims, strides = consts[: len(buf.shape)], consts[len(buf.shape) : -1]
    offset = consts[-1]
    if any(d <= 0 for d in dims):
        return 0
    if not strides:
        return math.prod(dims) + offset
    return 1 + offset + sum((d - 1) * abs(st) for d, st in zip(dims, strides))


def wide_index(buf: Buffer, indices: Sequence[PrimExpr]) -> bool:
    """Whether offsets into ``buf`` need 64-bit arithmetic: an index or a symbolic extent is
    64-bit, or the buffer spans more than 2**31 - 1 elements."""
    if any(i.dtype.bits == 64 for i in indices):
        return True
    dims = [*buf.shape, *buf.strides, buf.elem_offset]
    if any(not isinstance(d, IntImm) and d.dtype.bits == 64 for d in dims):
        return True
    span = const_span(buf)
    return span is not None and span > _INT32_MAX


def as_int64(e: PrimExpr) -> PrimExpr:
    """``e`` as a 64-bit integer (immediates stay immediates)."""
    if e.dtype.bits == 64 or not e.dtype.is_integer:
        return e
    if isinstance(e, IntImm):
        return IntImm(DataType("int64").with_lanes(e.dtype.lanes), e.value)
    return Cast(DataType("int64").with_lanes(e.dtype.lanes), e)


# The signed integer arithmetic that promote_int64 redoes in 64 bits (it is exact there).
_PROMOTED: tuple[type[BinaryOp], ...] = (Add, Sub, Mul, FloorDiv, FloorMod, Min, Max)


def promote_int64(e: PrimExpr) -> PrimExpr:
    """``e`` computed in 64 bits: the signed ``+ - * // % min max`` of narrower integers are
    redone on 64-bit operands (so ``i * m + j`` cannot wrap at 2**31), anything else is cast.
    Where the narrow arithmetic did not overflow, the value is the same."""
    if e.dtype.bits == 64 or not e.dtype.is_integer:
        return e
    if isinstance(e, _PROMOTED) and e.dtype.is_int:
        return type(e)(promote_int64(e.a), promote_int64(e.b))
    return as_int64(e)


def decl_buffer(shape: Sequence[Any], dtype: str = "float32", name: str = "buffer", **kwargs: Any) -> Buffer:
    return Buffer(name, shape, dtype, **kwargs)


def _access_mask(name: str, mask: str | int) -> int:
    """``"r"`` 1, ``"w"`` 2, ``"rw"`` 3; an int is taken as it is (1..3)."""
    if isinstance(mask, int) and not isinstance(mask, bool) and 1 <= mask <= 3:
        return mask
    if isinstance(mask, str) and mask and set(mask) <= {"r", "w"}:
        return (1 if "r" in mask else 0) | (2 if "w" in mask else 0)
    raise ValueError(f"{name}.access_ptr: access_mask must be 'r', 'w' or 'rw' (or 1..3), "
                     f"got {mask!r}")
