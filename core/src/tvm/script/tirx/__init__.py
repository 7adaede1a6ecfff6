"""The ``T`` facade of TVMScript: ``from tvm.script import tirx as T``.

Inside ``@T.prim_func`` the body is never run: the parser reads its source and evaluates each
expression itself. The names here are what those expressions call. Expression builders
(``T.exp``, ``T.Select``, ``T.float32(0.5)``) return IR; statement builders (``T.alloc_buffer``,
``T.cta_id``, ``T.attr``, ``T.serial``) return small *spec* objects that the parser turns into
statements with the assignment target or the rest of the block.

Script namespaces (``T.cuda``, ``T.ptx``, ...) are looked up live in
:data:`tvm.script.namespace.NAMESPACES`, so a backend loaded after this module was imported
still shows up here; ``T.tile`` is :mod:`tvm.script.tirx.tile` (``Tx``), and ``T.cta``,
``T.warp``, ``T.wg``, ``T.warpgroup``, ``T.cluster``, ``T.thread`` are its scope prefixes.
"""

from __future__ import annotations

import builtins
import functools as _functools
import inspect as _inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..._hints import find_provider, install_hint
from ..._suggest import did_you_mean
from ...ir import expr as _E
from ...ir import stmt as _S
from ...ir.buffer import Buffer as _Buffer
from ...ir.dtype import DataType

# the arithmetic nodes themselves (T.Add(a, b) builds the node, never folded; the printer uses
# them for arithmetic on two immediates, which operators fold)
from ...ir.expr import Add, Cast, Div, FloorDiv, FloorMod, Max, Min, Mod, Mul, Sub, Var  # noqa: F401
from ...ir.expr import Broadcast as Broadcast
from ...ir.expr import Ramp as Ramp
from ...ir.expr import Select as Select
from ...ir.function import LaunchParams as _LaunchParams
from ...ir.function import PrimFunc
from ...ir.layout import AXES, Axis, TileLayout, layout_from_string
from ...ir.layout import ComposeLayout as ComposeLayout
from ...ir.layout import S as S
from ...ir.layout import SwizzleLayout as SwizzleLayout
from ...target import Target as _Target
from ...tirx import op as _tirx_op
from ...tirx.op import *  # noqa: F403 - builtin math is part of T
from ...tirx.op import __all__ as _op_all
from ..jit import Optional as Optional  # @T.jit and its parameter markers
from ..jit import constexpr as constexpr
from ..jit import jit as jit
from ..namespace import NAMESPACES
from . import tile as tile
from .tile import cluster as cluster
from .tile import cta as cta
from .tile import thread as thread
from .tile import warp as warp
from .tile import warpgroup as warpgroup
from .tile import wg as wg

# -- scalar types -----------------------------------------------------------------------------


class ScalarType(str):
    """``T.int32``, ``T.float32``, ...: a dtype (usable wherever a dtype string is) that also
    builds typed literals: ``T.float32(0.5)``, ``T.bool(True)``, ``T.int64(3)``; a call on an
    expression casts it; ``n = T.int32()`` in a script declares a variable."""

    def __call__(self, value: Any = None, *, name: str | None = None,
                 is_size_var: bool = False) -> Any:
        if value is None:
            return VarDecl(DataType(str(self)), name, is_size_var)
        dt = DataType(str(self))
        if isinstance(value, _E.PrimExpr):
            return value if value.dtype == dt else Cast(dt, value)
        if isinstance(value, str) and dt.is_float:  # T.float32("inf")
            return _E.const(float(value), dt)
        if dt.is_float:
            return _E.const(float(value), dt)  # a literal past the type's range is an error
        if isinstance(value, float) and not value.is_integer():
            raise TypeError(f"T.{self}({value!r}): a {dt} literal needs an integer value")
        return _E.IntImm(dt, int(value))

    def __repr__(self) -> str:
        return f"T.{str(self)}"


class HandleType(ScalarType):
    """``T.handle``: the annotation of a handle parameter, and (called) a handle variable:
    ``p = T.handle("float16", "shared")`` is a pointer to float16 shared memory,
    ``tm = T.handle("tensormap")`` a TMA descriptor value (as ``T.TensorMap`` annotates)."""

    def __call__(self, value: Any = None, scope: str | None = None, *,  # type: ignore[override]
                 name: str | None = None, is_size_var: bool = False) -> Any:
        if value is None and scope is None:
            return super().__call__(name=name, is_size_var=is_size_var)
        if value == "tensormap":
            return HandleVar(name or "handle", "handle", ptr_scope=TensorMap.ptr_scope)
        ptr_dtype = "void" if value is None else str(DataType(value))
        return HandleVar(name or "handle", "handle", ptr_dtype=ptr_dtype,
                         ptr_scope=None if scope in (None, "", "global") else scope)


class HandleVar(Var):
    """The variable ``T.handle(dtype, scope)`` makes; ``p = T.handle(...)`` in a script
    declares ``p`` of that type."""


#: the seed's short spellings of data types (T.f32, T.i32, ...): the same types
DTYPE_ALIASES = {
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "f8e4m3": "float8_e4m3fn", "f8e5m2": "float8_e5m2",
}


_SCALAR_NAMES = (
    "int4", "int8", "int16", "int32", "int64", "uint4", "uint8", "uint16", "uint32", "uint64", "float16",
    "float32", "float64", "bfloat16", "float8_e4m3fn", "float8_e5m2", "bool", "handle",
)
for _name in _SCALAR_NAMES:
    globals()[_name] = ScalarType(_name) if _name != "handle" else HandleType(_name)
for _alias, _name in DTYPE_ALIASES.items():
    globals()[_alias] = ScalarType(_name)
int32: ScalarType
handle: ScalarType


class ParamType(ScalarType):
    """A parameter annotation for an opaque value passed to a kernel *by value*: the parameter
    is a ``handle`` variable whose ``ptr_scope`` says what it is, and the body uses it as the
    address of that value (a backend's codegen declares the parameter).

    ``T.TensorMap``: a 128-byte TMA descriptor (CUDA's ``CUtensorMap``) passed as a grid
    constant (``ptr_scope="grid_constant"``, as Apache TVM marks such parameters)."""

    ptr_scope: str
    spelling: str

    def __new__(cls, spelling: str, ptr_scope: str) -> ParamType:
        obj = super().__new__(cls, "handle")
        obj.spelling = spelling
        obj.ptr_scope = ptr_scope
        return obj

    def __call__(self, value: Any = None, *, name: str | None = None,
                 is_size_var: bool = False) -> Any:
        """``T.TensorMap()`` is the annotation itself (the seed's spelling: ``tm: T.TensorMap()``)."""
        if value is None and name is None and not is_size_var:
            return self
        raise TypeError(f"T.{self.spelling}() takes no arguments; write `tm: T.{self.spelling}` "
                        f"or `tm: T.{self.spelling}()` as a parameter annotation")

    def __repr__(self) -> str:
        return f"T.{self.spelling}"


TensorMap = ParamType("TensorMap", "grid_constant")
#: ptr_scope of a handle parameter -> its annotation (the printer writes it back)
PARAM_TYPES: dict[str, ParamType] = {TensorMap.ptr_scope: TensorMap}


@dataclass
class VarDecl:
    """``n = T.int32()``: declares a variable without a value (a symbolic shape, a free var)."""

    dtype: DataType
    name: str | None = None
    is_size_var: bool = False  # a tvm.tirx.SizeVar (known non-negative)


# -- buffers ----------------------------------------------------------------------------------


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

    def make(self, name: str) -> _Buffer:
        return _Buffer(name, self.shape, self.dtype, **self.kwargs)


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
    if layout is not None:
        if not isinstance(layout, (TileLayout, ComposeLayout)):
            raise TypeError(f"layout must be a T.TileLayout (or a T.ComposeLayout of a "
                            f"T.SwizzleLayout and a T.TileLayout), got {type(layout).__name__}")
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
           align: int = 0, axis_separators: Any = None, offset_factor: int = 0) -> BufferSpec:
    """The annotation of a buffer parameter: ``A: T.Buffer((64, 64), "float32")``."""
    dims = _extents(shape)
    return BufferSpec("param", dims, _value_dtype(dtype),
                      _with_extras(_buffer_kwargs(strides, scope, layout, elem_offset, align,
                                                  shape=dims), axis_separators, offset_factor))


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
                 offset_factor: int = 0) -> BufferSpec:
    """``A = T.alloc_buffer((64,), "float32", scope="shared")``: an allocation for the rest of
    the block."""
    dims = _extents(shape)
    return BufferSpec("alloc", dims, _value_dtype(dtype),
                      _with_extras(_buffer_kwargs(strides, scope, layout, 0, align, shape=dims),
                                   axis_separators, offset_factor),
                      annotations=dict(annotations or {}))


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


def decl_buffer(shape: Any, dtype: str = "float32", *, data: Any = None, scope: str = "global",
                layout: Any = None, strides: Any = None, elem_offset: Any = 0,
                align: int = 0, axis_separators: Any = None,
                offset_factor: int = 0, allocated_addr: Any = None) -> BufferSpec:
    """``A = T.decl_buffer((64,), "float32", data=B.data)``: a view of existing memory.

    ``allocated_addr=a`` (the seed's spelling for tensor memory) is where the allocator put the
    buffer: a ``tmem`` buffer's TMEM address, which this project keeps as its ``elem_offset``
    (``Buffer.allocated_addr`` reads it back; the printer writes ``elem_offset=``)."""
    if data is not None and not (isinstance(data, Var) and data.dtype.is_handle):
        raise TypeError("T.decl_buffer(data=...) expects a handle variable such as `B.data`")
    if allocated_addr is not None:
        elem_offset = _allocated_offset(allocated_addr, elem_offset, scope)
    dims = _extents(shape)
    return BufferSpec("decl", dims, _value_dtype(dtype),
                      _with_extras(_buffer_kwargs(strides, scope, layout, elem_offset, align,
                                                  data, shape=dims),
                                   axis_separators, offset_factor))


def alloc_scalar(dtype: Any = "float32", scope: str = "global", *, init: Any = None) -> BufferSpec:
    """``x = T.alloc_scalar("int32", "local")``: one value in ``scope``, a 0-d buffer named
    by its element. In the script ``x`` reads the value, ``x = v`` and ``x += v`` store into
    it, and ``x.source`` (or ``x.buffer``) is the buffer; the IR is the 0-d allocation, so it
    prints as ``T.alloc_buffer((), ...)`` with ``x[()]`` accesses."""
    spec = alloc_buffer((), dtype, scope=scope)
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
    ``elem_offset`` of existing memory, used as :func:`alloc_scalar`'s is (a 0-d
    ``T.decl_buffer``)."""
    if data is None:
        raise TypeError("T.decl_scalar views existing memory: give its data, e.g. "
                        "T.decl_scalar(\"uint32\", pool.data, \"shared.dyn\", 0); for a new "
                        "value use T.local_scalar or T.shared_scalar")
    spec = decl_buffer((), dtype, data=data, scope=scope, elem_offset=elem_offset)
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


# -- loops ------------------------------------------------------------------------------------


@dataclass
class LoopSpec:
    """``T.serial(...)`` and friends: the iterator of a ``for`` statement."""

    kind: _S.ForKind
    start: Any
    stop: Any
    thread: str | None = None
    annotations: dict[str, Any] = field(default_factory=dict)


def _loop(kind: _S.ForKind) -> Callable[..., LoopSpec]:
    def make(start: Any, stop: Any = None, *, annotations: dict[str, Any] | None = None) -> LoopSpec:
        if stop is None:
            start, stop = 0, start
        return LoopSpec(kind, start, stop, None, dict(annotations or {}))

    make.__name__ = make.__qualname__ = kind.value
    make.__doc__ = f"``for i in T.{kind.value}(extent)`` or ``(start, stop)``: a {kind.value} loop."
    return make


def serial(start: Any, stop: Any = None, *, annotations: dict[str, Any] | None = None,
           unroll: bool | None = None) -> LoopSpec:
    """``for i in T.serial(n)`` or ``(start, stop)``: a serial loop. ``unroll=True`` keeps the
    loop and asks the compiler to unroll it (annotation ``pragma_unroll``: CUDA's ``#pragma
    unroll``); ``unroll=False`` forbids unrolling (``disable_unroll``), as in the seed."""
    ann = dict(annotations or {})
    if unroll is not None:
        ann["pragma_unroll" if unroll else "disable_unroll"] = True
    if stop is None:
        start, stop = 0, start
    return LoopSpec(_S.ForKind.SERIAL, start, stop, None, ann)


parallel = _loop(_S.ForKind.PARALLEL)
vectorized = _loop(_S.ForKind.VECTORIZED)
unroll = _loop(_S.ForKind.UNROLLED)


def thread_binding(start: Any, stop: Any = None, *, thread: str,
                   annotations: dict[str, Any] | None = None) -> LoopSpec:
    """``for tx in T.thread_binding(128, thread="threadIdx.x")``: a loop bound to a thread axis."""
    if stop is None:
        start, stop = 0, start
    return LoopSpec(_S.ForKind.THREAD_BINDING, start, stop, thread, dict(annotations or {}))


def IntImm(dtype: str | DataType, value: Any) -> _E.IntImm:  # noqa: N802 - the seed's name
    """``T.IntImm("int32", 3)``: the classic immediate constructor (range-checked, as
    ``T.int32(3)``, which the printer writes)."""
    dt = DataType(str(dtype))
    if not (dt.is_integer or dt.is_bool) or dt.lanes != 1:
        raise TypeError(f"T.IntImm makes an integer or bool immediate, not a {dt} one; use "
                        f"T.FloatImm for floats")
    return _E.IntImm(dt, value)


def FloatImm(dtype: str | DataType, value: Any) -> _E.PrimExpr:  # noqa: N802 - the seed's name
    """``T.FloatImm("float16", 1.5)``: the classic float immediate constructor (a finite value
    past the type's range is an error, as for ``T.float16(...)``)."""
    dt = DataType(str(dtype))
    if not dt.is_float or dt.lanes != 1:
        raise TypeError(f"T.FloatImm makes a float immediate, not a {dt} one; use T.IntImm for "
                        f"integers")
    return _E.const(float(value), dt)


StringImm = _E.StringImm


@dataclass
class LaunchThreadSpec:
    """``x = T.launch_thread("threadIdx.x", n)``: the classic builder of a thread axis."""

    thread: str
    extent: Any


_THREAD_TAGS = tuple(f"{k}.{a}" for k in ("blockIdx", "threadIdx") for a in "xyz")


def launch_thread(thread: str, extent: Any) -> LaunchThreadSpec:
    """``bx = T.launch_thread("blockIdx.x", 4)`` (over the rest of the block) or ``with
    T.launch_thread("threadIdx.x", 128) as tx:``: the seed's classic thread-axis builder, the
    loop ``for bx in T.thread_binding(4, thread="blockIdx.x")`` here (and printed so)."""
    if thread not in _THREAD_TAGS:
        raise ValueError(f"T.launch_thread: unknown thread axis {thread!r}; expected one of "
                         f"{', '.join(_THREAD_TAGS)}")
    return LaunchThreadSpec(thread, extent)


@dataclass
class GridSpec:
    extents: tuple[Any, ...]


def grid(*extents: Any) -> GridSpec:
    """``for i, j in T.grid(4, 8)``: nested serial loops."""
    if not extents:
        raise TypeError("T.grid needs at least one extent")
    return GridSpec(tuple(extents))


# -- kernel form ------------------------------------------------------------------------------


@dataclass
class ScopeIdSpec:
    kind: str
    #: None for the deferred form ``T.thread_id()``: the extent the other ids imply
    extents: list[Any] | None


def _scope_id(kind: str) -> Callable[..., ScopeIdSpec]:
    def make(extents: Sequence[Any] | None = None) -> ScopeIdSpec:
        if extents is None:
            return ScopeIdSpec(kind, None)
        if not isinstance(extents, (list, tuple)):
            raise TypeError(f"T.{kind} expects a list of extents, e.g. T.{kind}([32])")
        if not extents:
            raise TypeError(f"T.{kind}([]) has no extents; write T.{kind}([n]), or T.{kind}() "
                            f"for the extent the kernel's other ids imply")
        return ScopeIdSpec(kind, list(extents))

    make.__name__ = make.__qualname__ = kind
    make.__doc__ = (f"``x = T.{kind}([n])`` / ``x, y = T.{kind}([n, m])``: kernel index "
                    f"variables; ``x = T.{kind}()``: one index whose extent the kernel's other "
                    f"ids imply (e.g. ``T.thread_id()`` beside ``T.warp_id([4])``).")
    return make


for _kind in _S.SCOPE_ID_KINDS:
    globals()[_kind] = _scope_id(_kind)


# -- attributes, lets, evaluation ------------------------------------------------------------


@dataclass
class AttrSpec:
    """``T.attr({"key": value, ...})``: attributes over the rest of the block (or a ``with``)."""

    items: dict[str, Any]
    node: Any = None


def attr(*args: Any, node: Any = None) -> AttrSpec:
    """``T.attr({"key": value, ...}, node=...)``, or the classic ``T.attr(node, "key", value)``
    of one attribute (the seed's builder; an int node is that integer's immediate)."""
    if len(args) == 3:
        if node is not None:
            raise TypeError("T.attr(node, key, value) names its node first; node= is for the "
                            'dict form T.attr({"key": value}, node=...)')
        node, key, value = args
        if not isinstance(key, str):
            raise TypeError(f"T.attr(node, key, value): the key must be a string, got {key!r}")
        return AttrSpec({key: value}, _attr_node(node))
    if len(args) != 1:
        raise TypeError(f'T.attr takes a dict (T.attr({{"key": 1}})) or a node, a key and a '
                        f"value (T.attr(0, \"key\", 1)); got {len(args)} positional arguments")
    items = args[0]
    if not isinstance(items, dict) or not items:
        raise TypeError('T.attr expects a non-empty dict, e.g. T.attr({"key": 1})')
    for key in items:
        if not isinstance(key, str):
            raise TypeError(f"T.attr keys must be strings, got {key!r}")
    return AttrSpec(dict(items), _attr_node(node))


def _attr_node(node: Any) -> Any:
    """An int node (the classic ``T.attr(0, ...)``) is its immediate, however it is written."""
    if isinstance(node, builtins.int) and not isinstance(node, builtins.bool):
        return _E.convert(node)
    return node


HINT = "tirx.hint"


def hint(message: str = "", **attrs: Any) -> AttrSpec:
    """``T.hint("message", key=value, ...)``: a directive for whoever reads the program (a tool,
    an agent), over the rest of the block or a ``with`` block. It is the attribute statement
    ``tirx.hint`` (and ``tirx.hint.<key>`` per keyword), which code generation ignores."""
    if not isinstance(message, str):
        raise TypeError(f"T.hint expects a message string, got {type(message).__name__}")
    items: dict[str, Any] = {HINT: message}
    items.update({f"{HINT}.{k}": v for k, v in attrs.items()})
    return AttrSpec(items)


@dataclass
class FuncAttrSpec:
    items: dict[str, Any]


def func_attr(items: dict[str, Any]) -> FuncAttrSpec:
    """``T.func_attr({"key": value})``: function attributes (first statements of a body)."""
    if not isinstance(items, dict):
        raise TypeError("T.func_attr expects a dict")
    return FuncAttrSpec(dict(items))


@dataclass
class LetSpec:
    """``with T.let(value) as x:``: a LetStmt whose body is the ``with`` block."""

    value: Any
    dtype: str | None = None


@dataclass(frozen=True)
class LetType:
    """``x: T.let[T.int32] = v``: a let of the given type (``T.let[...]`` is the annotation)."""

    dtype: str
    handle: Var | None = None  # T.let[T.handle("tensormap")]: a handle of that pointer type


class _Let:
    """``T.let``: ``with T.let(v) as x:``, and the seed's annotations ``x: T.let = v`` and
    ``x: T.let[T.int32] = v`` (a let over the rest of the block)."""

    __name__ = "let"

    def __call__(self, value: Any, dtype: str | None = None) -> LetSpec:
        return LetSpec(value, str(DataType(dtype)) if dtype is not None else None)

    def __getitem__(self, dtype: Any) -> LetType:
        if isinstance(dtype, HandleVar):
            return LetType("handle", dtype)
        return LetType(str(DataType(str(dtype))))

    def __repr__(self) -> str:
        return "T.let"


let = _Let()


def Let(var: Var, value: Any, body: Any) -> _E.Let:  # noqa: N802 - TVMScript spelling
    """The let expression. In a script the first argument is a new name: ``T.Let(x, 1, x + 1)``."""
    return _E.Let(var, value, body)


def evaluate(value: Any) -> _S.Evaluate:
    """Evaluate an expression for its side effects."""
    return _S.Evaluate(value)


@dataclass
class MetaVar:
    value: Any


def meta_var(value: Any) -> MetaVar:
    """``x = T.meta_var(expr)`` binds ``x`` to ``expr`` itself (substituted, no LetStmt)."""
    return MetaVar(value)


def axis(name: str) -> Axis:
    """A layout axis by name, e.g. ``T.axis("P")`` for one a backend registered."""
    return Axis.get(name)


# thread axes of layouts: T.laneid, T.warpid, ... (T.cta_id is the kernel-form builder above;
# its axis is written T.axis("cta_id"))
laneid = AXES["laneid"]
warpid = AXES["warpid"]
wid_in_wg = AXES["wid_in_wg"]
wgid = AXES["wgid"]
tid = AXES["tid"]


def launch_params(grid: Any, block: Any, cluster: Any = None, dyn_smem_bytes: Any = 0) -> Any:
    """How a split-off kernel is launched (an attribute of device functions)."""
    return _LaunchParams(grid, block, cluster, dyn_smem_bytes)


def target(config: Any) -> Any:
    """``T.target({...})``: a :class:`tvm.target.Target` (how function attributes print one)."""
    return _Target(config)


# -- functions -------------------------------------------------------------------------------


class InlineFunction:
    """``@T.inline``: a kernel macro. Called inside a ``@T.prim_func`` body, its body is parsed
    in place with the call's arguments bound to its parameters (names it does not define
    resolve, as in Python, to its own closure and module); a body that is a single ``return
    <expr>`` is an expression. Called outside a script, it is an error."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        _functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"T.inline function {self.fn.__name__}() is parsed into the kernel that "
                        f"calls it; call it inside a @T.prim_func body")


def inline(fn: Any = None) -> Any:
    """Decorator: ``@T.inline`` (or ``@T.inline()``) makes a kernel macro
    (:class:`InlineFunction`)."""
    if fn is None:
        return InlineFunction
    if not callable(fn):
        raise TypeError("T.inline decorates a function: write @T.inline or @T.inline()")
    return InlineFunction(fn)



def prim_func(func: Any = None, *, private: bool = False, check_well_formed: bool = True,
              s_tir: bool = False) -> Any:
    """Decorator: parse the function's source into a :class:`~tvm.ir.PrimFunc`.

    ``@T.prim_func`` or ``@T.prim_func(private=True)`` (no ``global_symbol`` attribute).
    ``s_tir=True`` is the seed's flag for its schedulable-TIR dialect: there is one dialect
    here, so the function is parsed as usual; ``check_well_formed`` is accepted likewise (the
    IR is always verified where it is lowered).
    """
    from ..ir import _check_flags  # noqa: PLC0415 - beside parse_function's import below

    _check_flags(s_tir=s_tir, check_well_formed=check_well_formed)
    from ..parser import parse_function  # noqa: PLC0415 - a cycle: the parser reads T's spec classes when it is imported

    frame = _inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    outer = dict(caller.f_locals) if caller is not None else {}
    del frame, caller

    def wrap(fn: Any) -> PrimFunc:
        return parse_function(fn, private=private, extra_vars=outer)

    if func is None:
        return wrap
    return wrap(func)


prim_func.__tvm_script_prim_func__ = True  # type: ignore[attr-defined]

__all__ = sorted(
    set(_op_all)
    | set(_SCALAR_NAMES)
    | set(DTYPE_ALIASES)
    | set(_S.SCOPE_ID_KINDS)
    | {
        "Broadcast", "Buffer", "Cast", "ComposeLayout", "FloatImm", "IntImm", "Let", "Ramp",
        "S", "Select", "StringImm",
        "SwizzleLayout", "TensorMap", "TileLayout",
        "alloc_buffer",
        "attr", "axis", "cluster", "cta", "decl_buffer", "evaluate", "func_attr", "grid", "laneid",
        "launch_params", "launch_thread", "let", "match_buffer", "meta_var", "parallel", "prim_func", "serial", "target", "thread",
        "thread_binding", "tid", "tile", "unroll", "vectorized", "warp", "warpgroup", "warpid",
        "wg", "wgid", "wid_in_wg",
    }
)


webgpu = _tirx_op.WebGPUNamespace()

__all__ += ["webgpu", "Add", "Div", "FloorDiv", "FloorMod", "Max", "Min", "Mod", "Mul", "Sub",
            "alloc_local", "alloc_shared", "hint", "inline", "Optional", "constexpr", "jit",
            "alloc_scalar", "local_scalar", "shared_scalar", "decl_scalar"]


def __getattr__(name: str) -> Any:
    ns = NAMESPACES.get(name)
    if ns is not None:
        return ns
    dtype = _dtype_named(name)
    if dtype is not None:  # T.float32x4, T.uint8x3, T.void: every type the printer writes
        return ScalarType(dtype)
    raise AttributeError(_missing(name))


def _dtype_named(name: str) -> str | None:
    """``name`` if it is the canonical spelling of a data type, else None."""
    try:
        spelled = str(DataType(name))
    except (ValueError, TypeError):
        return None
    return spelled if spelled == name else None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(NAMESPACES.keys()))


def _missing(name: str) -> str:
    msg = f"module 'tvm.script.tirx' has no attribute {name!r}"
    public = [n for n in __dir__() if not n.startswith("_")]
    hint = _install_hint(name) or (did_you_mean(name, public) if not name.startswith("_") else "")
    return f"{msg}; {hint}" if hint else msg


def _install_hint(name: str) -> str | None:
    if name.startswith("_"):
        return None
    entry = find_provider("script namespace", name)
    if entry is None:
        return None
    return (f"the script namespace {name!r} comes with the {entry.name} backend; "
            f"{install_hint(entry.distribution)}")

