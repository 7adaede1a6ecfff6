"""Buffer builders of ``T``: ``T.Buffer`` (parameters), ``T.match_buffer``, ``T.alloc_buffer``
(and ``alloc_shared`` / ``alloc_local``), ``T.decl_buffer`` and the scalar cells
(``T.local_scalar``, ``T.shared_scalar``, ``T.alloc_scalar``, ``T.decl_scalar``). Each returns a
:class:`BufferSpec` that the parser names after the assignment target. ``T.meta_class`` marks a
helper class whose instances own the buffers their constructor describes."""

from __future__ import annotations

import builtins
import functools
from dataclasses import dataclass, field
from typing import Any

from ...ir import expr as _E
from ...ir.buffer import Buffer as _Buffer
from ...ir.dtype import DataType
from ...ir.expr import Var
from ...ir.layout import ComposeLayout, SwizzleLayout, TileLayout, layout_from_string
from ...ir.stmt import ALLOCATED_ADDR


@dataclass
class BufferSpec:
    """The description of a buffer; the parser names it after its assignment target."""

    kind: str  # "param", "match", "alloc", "decl"
    shape: tuple[Any, ...]
    dtype: str
    kwargs: dict[str, Any]
    handle: Any = None  # match_buffer's handle parameter
    annotations: dict[str, Any] = field(default_factory=dict)  # alloc_buffer's
    scalar: bool = False  # T.local_scalar & co: the name is the element, not the buffer
    init: Any = None  # T.local_scalar(init=v): the value stored right after the allocation

    def __post_init__(self) -> None:
        if _CREATED:  # inside a T.meta_class constructor: it must keep what it allocates
            _CREATED[-1].append(self)

    def make(self, name: str) -> _Buffer:
        return _Buffer(name, self.shape, self.dtype, **self.kwargs)

    def __getattr__(self, name: str) -> Any:
        """Outside a parse (the seed's ``IRBuilder`` blocks), a spec reads as the buffer it
        describes: ``pool.alloc_mma(shape, dtype).layout``."""
        kwargs = self.__dict__.get("kwargs")
        if name.startswith("_") or kwargs is None or name not in _BUFFER_ATTRS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self.make("buffer"), name)


# the buffers described while T.meta_class constructors run (innermost last)
_CREATED: list[list[BufferSpec]] = []

# what a spec reads of the buffer it describes outside a parse (BufferSpec.__getattr__)
_BUFFER_ATTRS = frozenset(("layout", "strides", "scope", "data", "elem_offset", "ndim",
                           "static_shape", "allocated_addr", "name", "align"))


def _shape(shape: Any) -> tuple[Any, ...]:
    if isinstance(shape, (list, tuple)):
        return tuple(shape)
    return (shape,)


def _value_dtype(dtype: Any) -> str:
    """A buffer's element type: any data type but void."""
    dt = DataType(dtype)
    if dt.is_void:
        raise ValueError("a buffer holds values: its dtype cannot be 'void'")
    return str(dt)


def _extents(shape: Any) -> tuple[Any, ...]:
    """A buffer shape, checked: every extent an int >= 1 or an integer expression."""
    dims = _shape(shape)
    for k, d in enumerate(dims):
        value = d.value if isinstance(d, _E.IntImm) else d
        if isinstance(d, _E.PrimExpr) and not isinstance(d, _E.IntImm):
            if not d.dtype.is_integer or d.dtype.lanes != 1:
                raise TypeError(f"buffer extent {k} is a {d.dtype} expression; extents are "
                                "integers")
        elif isinstance(value, builtins.bool) or not isinstance(value, int):
            raise TypeError(f"buffer extent {k} is {type(d).__name__} {d!r}; extents are "
                            "ints >= 1 or integer expressions, e.g. (64, n)")
        elif value < 1:
            raise ValueError(f"buffer extent {k} is {value}; extents must be at least 1")
    return dims


def _buffer_kwargs(strides: Any, scope: str, layout: Any, elem_offset: Any, align: int,
                   data: Any = None, *, shape: Any = ()) -> dict[str, Any]:
    kw: dict[str, Any] = {"scope": scope}
    if strides:
        kw["strides"] = list(_shape(strides))
    if isinstance(layout, str):  # "default", or a string the scope's backend reads ("PF")
        layout = layout_from_string(layout, shape, scope)
    if isinstance(layout, SwizzleLayout) and shape:  # the swizzle of the row-major offsets
        layout = ComposeLayout(layout, TileLayout.row_major(list(shape)))
    if layout is not None:
        if not isinstance(layout, (TileLayout, ComposeLayout)):
            raise TypeError(f"layout must be a T.TileLayout, a T.SwizzleLayout (of the row-major "
                            f"offsets) or a T.ComposeLayout of a T.SwizzleLayout and a "
                            f"T.TileLayout, got {type(layout).__name__}")
        kw["layout"] = layout
    if elem_offset is not None and not (isinstance(elem_offset, int) and elem_offset == 0):
        kw["elem_offset"] = elem_offset
    if align:
        kw["align"] = align
    if data is not None:
        kw["data"] = data
    return kw


def _with_extras(kw: dict[str, Any], axis_separators: Any, offset_factor: int) -> dict[str, Any]:
    if axis_separators:
        kw["axis_separators"] = list(axis_separators)
    if offset_factor:
        kw["offset_factor"] = offset_factor
    return kw


def Buffer(shape: Any, dtype: str = "float32", *, strides: Any = None,  # noqa: N802
           scope: str = "global", layout: Any = None, elem_offset: Any = 0,
           align: int = 0, axis_separators: Any = None, offset_factor: int = 0,
           data: Any = None) -> BufferSpec:
    """The annotation of a buffer parameter: ``A: T.Buffer((64, 64), "float32")``. With
    ``data=`` (``alias = T.Buffer((1,), "uint32", data=B.data, scope="shared")`` in a body, as
    the seed writes it) a view of existing memory: the same as :func:`decl_buffer`."""
    if data is not None and not (isinstance(data, Var) and data.dtype.is_handle):
        raise TypeError(f"T.Buffer(data=...) expects a handle variable such as `B.data`, got "
                        f"{data!r:.60}")
    dims = _extents(shape)
    return BufferSpec("param", dims, _value_dtype(dtype),
                      _with_extras(_buffer_kwargs(strides, scope, layout, elem_offset, align,
                                                  data, shape=dims),
                                   axis_separators, offset_factor))


def match_buffer(param: Any, shape: Any, dtype: str = "float32", *, strides: Any = None,
                 scope: str = "global", layout: Any = None, elem_offset: Any = 0,
                 align: int = 0, axis_separators: Any = None,
                 offset_factor: int = 0) -> BufferSpec:
    """``A = T.match_buffer(a, (n,), "float32")``: the buffer behind handle parameter ``a``."""
    if not isinstance(param, Var) or not param.dtype.is_handle:
        raise TypeError("T.match_buffer expects a `T.handle` parameter as its first argument")
    dims = _extents(shape)
    return BufferSpec("match", dims, _value_dtype(dtype),
                      _with_extras(_buffer_kwargs(strides, scope, layout, elem_offset, align,
                                                  shape=dims), axis_separators, offset_factor),
                      handle=param)


def alloc_buffer(shape: Any, dtype: str = "float32", *, scope: str = "global",
                 layout: Any = None, strides: Any = None, align: int = 0,
                 annotations: dict[str, Any] | None = None, axis_separators: Any = None,
                 offset_factor: int = 0, allocated_addr: Any = None) -> BufferSpec:
    """``A = T.alloc_buffer((64,), "float32", scope="shared")``: an allocation for the rest of
    the block.

    ``allocated_addr=[a, ...]`` says where the allocation already lives (a backend allocator
    writes it, e.g. Trainium's ``TrnNaiveAllocator``: the byte address in each partition); it
    is the allocation's annotation ``"allocated_addr"``, a list of integers, which the
    allocator keeps and the printer writes back as ``allocated_addr=``."""
    dims = _extents(shape)
    ann = dict(annotations or {})
    if allocated_addr is not None:
        ann[ALLOCATED_ADDR] = _address_list(allocated_addr)
    return BufferSpec("alloc", dims, _value_dtype(dtype),
                      _with_extras(_buffer_kwargs(strides, scope, layout, 0, align, shape=dims),
                                   axis_separators, offset_factor),
                      annotations=ann)


def _address_list(addr: Any) -> list[Any]:
    """``allocated_addr`` of an allocation: a list of integers (a single one is wrapped)."""
    items = list(addr) if isinstance(addr, (list, tuple)) else [addr]
    out: list[Any] = []
    for a in items:
        if isinstance(a, _E.IntImm):
            a = builtins.int(a.value)
        if isinstance(a, builtins.bool) or not isinstance(a, (builtins.int, _E.PrimExpr)) \
                or (isinstance(a, _E.PrimExpr) and not a.dtype.is_integer):
            raise TypeError(f"T.alloc_buffer(allocated_addr=...) takes integer addresses, e.g. "
                            f"allocated_addr=[0]; got {a!r:.60}")
        out.append(a)
    if not out:
        raise ValueError("T.alloc_buffer(allocated_addr=[]) gives no address; leave it out to "
                         "let the allocator place the buffer")
    return out


def alloc_shared(shape: Any, dtype: str = "float32", *, layout: Any = None, strides: Any = None,
                 align: int = 0, annotations: dict[str, Any] | None = None,
                 scope: str = "shared") -> BufferSpec:
    """``A = T.alloc_shared((64,), "float16")``: :func:`alloc_buffer` in ``shared`` memory."""
    return alloc_buffer(shape, dtype, scope=scope, layout=layout, strides=strides, align=align,
                        annotations=annotations)


def alloc_local(shape: Any, dtype: str = "float32", *, layout: Any = None, strides: Any = None,
                align: int = 0, annotations: dict[str, Any] | None = None,
                scope: str = "local") -> BufferSpec:
    """``acc = T.alloc_local((8,), "float32")``: :func:`alloc_buffer` in ``local`` memory
    (registers)."""
    return alloc_buffer(shape, dtype, scope=scope, layout=layout, strides=strides, align=align,
                        annotations=annotations)


def decl_buffer(shape: Any, dtype: str = "float32", data: Any = None, strides: Any = None,
                elem_offset: Any = 0, scope: str | None = None, *,
                layout: Any = None, align: int = 0, axis_separators: Any = None,
                offset_factor: int = 0, allocated_addr: Any = None) -> BufferSpec:
    """``A = T.decl_buffer((64,), "float32", data=B.data)``: a view of existing memory. The
    seed's positional order ``T.decl_buffer(shape, dtype, data, strides, elem_offset, scope)``
    is accepted (``T.decl_buffer((64, 64), "float16", pool.data, elem_offset=0)``). Without
    ``scope`` the view is in the memory of ``data`` (as in the seed, where a buffer's scope is
    its data pointer's), else in ``global`` memory.

    ``allocated_addr=a`` (the seed's spelling for tensor memory) is where the allocator put the
    buffer: a ``tmem`` buffer's TMEM address, which this project keeps as its ``elem_offset``
    (``Buffer.allocated_addr`` reads it back; the printer writes ``elem_offset=``)."""
    if data is not None and not (isinstance(data, Var) and data.dtype.is_handle):
        hint = (f"; for a view of buffer {data.name!r} pass {data.name}.data"
                if isinstance(data, _Buffer) else f", got {data!r:.60}")
        raise TypeError(f"T.decl_buffer(data=...) expects a handle variable such as `B.data`"
                        f"{hint}")
    if scope is None:
        scope = data.ptr_scope if data is not None and data.ptr_scope else "global"
    if allocated_addr is not None:
        elem_offset = _allocated_offset(allocated_addr, elem_offset, scope)
    dims = _extents(shape)
    return BufferSpec("decl", dims, _value_dtype(dtype),
                      _with_extras(_buffer_kwargs(strides, scope, layout, elem_offset, align,
                                                  data, shape=dims),
                                   axis_separators, offset_factor))


def buffer(shape: Any, dtype: str = "float32", data: Any = None, strides: Any = None,
           elem_offset: Any = 0, scope: str | None = None, *, layout: Any = None, align: int = 0,
           axis_separators: Any = None, offset_factor: int = 0) -> _Buffer:
    """The seed's ``T.buffer(shape, dtype, ...)``: a buffer object made in Python, outside a
    parsed function (named ``buffer``), e.g. for a ``tvm.tirx.DeclBuffer`` built by hand. The
    arguments are :func:`decl_buffer`'s; inside ``@T.prim_func`` declare buffers with
    ``T.Buffer`` annotations, ``T.decl_buffer`` or ``T.alloc_buffer``."""
    return decl_buffer(shape, dtype, data, strides, elem_offset, scope, layout=layout,
                       align=align, axis_separators=axis_separators,
                       offset_factor=offset_factor).make("buffer")


def alloc_scalar(dtype: Any = "float32", scope: str = "global", *, init: Any = None) -> BufferSpec:
    """``x = T.alloc_scalar("int32", "local")``: one value in ``scope``, a one-element buffer
    named by its element (as in the seed). In the script ``x`` reads the value, ``x = v`` and
    ``x += v`` store into it, and ``x.source`` (or ``x.buffer``) is the buffer; the IR is the
    ``(1,)`` allocation with ``x[0]`` accesses, which prints as ``x: T.int32`` in ``local``
    memory (the seed's annotation form) and as ``T.alloc_buffer((1,), ...)`` elsewhere."""
    spec = alloc_buffer((1,), dtype, scope=scope)
    spec.scalar, spec.init = True, init
    return spec


def local_scalar(dtype: Any = "float32", *, init: Any = None) -> BufferSpec:
    """``i = T.local_scalar("int32")``: :func:`alloc_scalar` in ``local`` memory (a register);
    ``init=`` stores a first value."""
    return alloc_scalar(dtype, "local", init=init)


def shared_scalar(dtype: Any = "float32") -> BufferSpec:
    """``flag = T.shared_scalar("int32")``: :func:`alloc_scalar` in ``shared`` memory (one
    value for the CTA)."""
    return alloc_scalar(dtype, "shared")


def decl_scalar(dtype: Any = "float32", data: Any = None, scope: str = "global",
                elem_offset: Any = 0) -> BufferSpec:
    """``t = T.decl_scalar("uint32", pool.data, "shared.dyn", 0)``: the value at element
    ``elem_offset`` of existing memory, used as :func:`alloc_scalar`'s is (a one-element
    ``T.decl_buffer``)."""
    if data is None:
        raise TypeError("T.decl_scalar views existing memory: give its data, e.g. "
                        "T.decl_scalar(\"uint32\", pool.data, \"shared.dyn\", 0); for a new "
                        "value use T.local_scalar or T.shared_scalar")
    spec = decl_buffer((1,), dtype, data=data, scope=scope, elem_offset=elem_offset)
    spec.scalar = True
    return spec


def _allocated_offset(addr: Any, elem_offset: Any, scope: str) -> Any:
    if scope != "tmem":
        raise ValueError(f"allocated_addr= places a tensor-memory buffer (scope 'tmem'), not "
                         f"one in {scope!r}; for other memory give data= and elem_offset=")
    addr = _E.convert(addr)
    if not isinstance(addr, _E.PrimExpr) or not addr.dtype.is_integer:
        raise TypeError(f"allocated_addr must be an integer expression (the TMEM address), "
                        f"got {addr!r:.60}")
    if isinstance(elem_offset, builtins.int) and elem_offset == 0:
        return addr
    return addr + elem_offset


#: the class attribute that marks a T.meta_class
META_CLASS = "__tvm_meta_class__"


def meta_class(cls: type) -> type:
    """Decorator (the seed's ``@T.meta_class``): a helper class whose constructor may allocate
    buffers and scalars for each instance, kept as its attributes
    (``self.buf = T.alloc_local((2,), "int32")``, ``self.n = T.local_scalar("int32")``). An
    instance made in a script and assigned to a name (``first = Holder(x)``) allocates them
    there, named after the instance and the attribute (``first_buf``, ``first_n``), and the
    attributes become those buffers (a scalar reads its value). Buffers passed in stay as
    they are. A buffer the constructor describes without keeping it on ``self`` is an error:
    nothing would own it."""
    if not isinstance(cls, type):
        raise TypeError(f"T.meta_class decorates a class, got {type(cls).__name__}")
    init = cls.__init__  # type: ignore[misc]

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807
        created: list[BufferSpec] = []
        _CREATED.append(created)
        try:
            init(self, *args, **kwargs)
        finally:
            _CREATED.pop()
        kept = {id(v) for v in owned_buffers(self).values()}
        stray = [spec for spec in created if id(spec) not in kept]
        if stray:
            what = ", ".join(f"a {'scalar' if sp.scalar else 'buffer'} of shape "
                             f"{tuple(sp.shape)} ({sp.dtype}, {sp.kwargs.get('scope')})"
                             for sp in stray)
            raise TypeError(f"{cls.__name__}.__init__ allocates {what} without keeping it on "
                            f"self; a T.meta_class instance owns what it allocates: assign it "
                            f"to an attribute (self.tmp = T.alloc_buffer(...)), or allocate it "
                            f"in the kernel and pass it in")

    cls.__init__ = __init__  # type: ignore[misc]
    setattr(cls, META_CLASS, True)
    return cls


def owned_buffers(obj: Any) -> dict[str, BufferSpec]:
    """The buffers a T.meta_class instance owns, by attribute (not yet allocated)."""
    return {k: v for k, v in vars(obj).items() if isinstance(v, BufferSpec)}
