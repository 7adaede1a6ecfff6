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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..._hints import find_provider, install_hint
from ..._suggest import did_you_mean
from ...ir import expr as _E
from ...ir import stmt as _S
from ...ir.buffer import BufferRegion as _BufferRegion
from ...ir.dtype import DataType

# the arithmetic nodes themselves (T.Add(a, b) builds the node, never folded; the printer uses
# them for arithmetic on two immediates, which operators fold)
from ...ir.expr import Add, Cast, Div, FloorDiv, FloorMod, Max, Min, Mod, Mul, Sub, Var  # noqa: F401
from ...ir.expr import Broadcast as Broadcast
from ...ir.expr import Ramp as Ramp
from ...ir.expr import Select as Select
from ...ir.expr import Shuffle as Shuffle
from ...ir.function import LaunchParams as _LaunchParams
from ...ir.function import PrimFunc
from ...ir.layout import AXES, Axis
from ...ir.layout import ComposeLayout as ComposeLayout
from ...ir.layout import R as R
from ...ir.layout import S as S
from ...ir.layout import SwizzleLayout as SwizzleLayout
from ...ir.layout import TileLayout as TileLayout
from ...target import Target as _Target
from ...tirx import op as _tirx_op
from ...tirx.op import *  # noqa: F403 - builtin math is part of T
from ...tirx.op import __all__ as _op_all
from ..ir import _check_flags
from ..jit import Optional as Optional  # @T.jit and its parameter markers
from ..jit import constexpr as constexpr
from ..jit import jit as jit
from ..namespace import NAMESPACES
from ..source import parse_function
from . import _loops
from . import tile as tile
from ._buffers import (
    Buffer as Buffer,
)
from ._buffers import (
    BufferSpec as BufferSpec,
)
from ._buffers import (
    alloc_buffer as alloc_buffer,
)
from ._buffers import (
    alloc_local as alloc_local,
)
from ._buffers import (
    alloc_scalar as alloc_scalar,
)
from ._buffers import (
    alloc_shared as alloc_shared,
)
from ._buffers import (
    buffer as buffer,
)
from ._buffers import (
    decl_buffer as decl_buffer,
)
from ._buffers import (
    decl_scalar as decl_scalar,
)
from ._buffers import (
    local_scalar as local_scalar,
)
from ._buffers import (
    match_buffer as match_buffer,
)
from ._buffers import (
    meta_class as meta_class,
)
from ._buffers import (
    shared_scalar as shared_scalar,
)
from ._loops import (
    FloatImm as FloatImm,
)
from ._loops import (
    GridSpec as GridSpec,
)
from ._loops import (
    IntImm as IntImm,
)
from ._loops import (
    LaunchThreadSpec as LaunchThreadSpec,
)
from ._loops import (
    LoopSpec as LoopSpec,
)
from ._loops import (
    ScopeIdSpec as ScopeIdSpec,
)
from ._loops import (
    StringImm as StringImm,
)
from ._loops import (
    grid as grid,
)
from ._loops import (
    launch_thread as launch_thread,
)
from ._loops import (
    parallel as parallel,
)
from ._loops import (
    serial as serial,
)
from ._loops import (
    thread_binding as thread_binding,
)
from ._loops import (
    unroll as unroll,
)
from ._loops import (
    vectorized as vectorized,
)
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
    ``tm = T.handle("tensormap")`` a TMA descriptor value (as ``T.TensorMap`` annotates);
    ``T.handle(0)`` is a handle literal (how the printer writes one)."""

    def __call__(self, value: Any = None, scope: str | None = None, *,  # type: ignore[override]
                 name: str | None = None, is_size_var: bool = False) -> Any:
        if value is None and scope is None:
            return super().__call__(name=name, is_size_var=is_size_var)
        if isinstance(value, int) and not isinstance(value, builtins.bool) and scope is None:
            return _E.IntImm(DataType("handle"), value)  # T.handle(0): an address literal
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


# -- buffers, loops and kernel ids: in ._buffers and ._loops -------------------------------

for _kind in _S.SCOPE_ID_KINDS:  # T.cta_id, T.thread_id, ...: made in ._loops
    globals()[_kind] = getattr(_loops, _kind)


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


#: the attribute key of T.hint, as the seed names it
HINT = "tirx_hint"


def hint(message: str | None = None, **attrs: Any) -> AttrSpec:
    """``T.hint("message", key=value, ...)``: a directive for whoever reads the program (a tool,
    an agent), over the rest of the block or a ``with`` block. It is one attribute statement
    ``tirx_hint`` whose node is the map ``{"message": message, key: value, ...}`` (no
    ``"message"`` when none is given: ``T.hint(access=A[0:64])``) and whose value is the
    message; values are Python scalars, expressions or buffer regions. Printed back as
    ``T.hint``; code generation ignores it."""
    if message is not None and not isinstance(message, builtins.str):
        raise TypeError(f"T.hint expects a message string, got {type(message).__name__}")
    if "message" in attrs:
        raise TypeError("T.hint: 'message' is the first argument, not a keyword attribute")
    if message is None and not attrs:
        raise TypeError("T.hint needs a message or at least one keyword attribute")
    for key, value in attrs.items():
        if not isinstance(value, (builtins.str, builtins.int, builtins.float, builtins.bool,
                                  _E.PrimExpr, _BufferRegion)):
            raise TypeError(f"T.hint: attribute {key}={value!r} must be a str, int, float, bool, "
                            f"an expression or a buffer region, not {type(value).__name__}")
    node = ({} if message is None else {"message": message}) | attrs
    return AttrSpec({HINT: message or ""}, node=node)


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
        if isinstance(dtype, Var):  # T.let[T.Var(name="p", dtype=PointerType(...))]: its type
            if dtype.dtype.is_handle:
                return LetType("handle", HandleVar(dtype.name, "handle", ptr_dtype=dtype.ptr_dtype,
                                                   ptr_scope=dtype.ptr_scope))
            return LetType(str(dtype.dtype))
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

    def __init__(self, fn: Callable[..., Any], bound_args: tuple[Any, ...] = ()) -> None:
        self.fn = fn
        #: leading arguments already given: the instance of a method (``obj.step()``)
        self.bound_args = bound_args
        _functools.update_wrapper(self, fn)

    def __get__(self, obj: Any, objtype: Any = None) -> InlineFunction:
        """A ``@T.inline`` method of a class: ``obj.step()`` passes ``obj`` as ``self``."""
        if obj is None:
            return self
        return InlineFunction(self.fn, (*self.bound_args, obj))

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



#: the function attribute of ``@T.prim_func(persistent=True)``
PERSISTENT_KERNEL = "tirx.persistent_kernel"


def mark_persistent(func: PrimFunc) -> PrimFunc:
    """``func`` with the seed's persistent-kernel flag (``@T.prim_func(persistent=True)``)."""
    return func.with_attr(PERSISTENT_KERNEL, True)


def prim_func(func: Any = None, *, private: bool = False, check_well_formed: bool = True,
              s_tir: bool = False, persistent: bool = False) -> Any:
    """Decorator: parse the function's source into a :class:`~tvm.ir.PrimFunc`.

    ``@T.prim_func`` or ``@T.prim_func(private=True)`` (no ``global_symbol`` attribute).
    ``persistent=True`` marks a persistent kernel (attribute ``tirx.persistent_kernel``,
    printed back as the decorator's keyword). As in the seed, it is a record for tools and
    schedules: the launch bounds come from ``tirx.launch_bounds_min_blocks_per_sm`` only.
    ``s_tir=True`` is the seed's flag for its schedulable-TIR dialect: there is one dialect
    here, so the function is parsed as usual; ``check_well_formed`` is accepted likewise (the
    IR is always verified where it is lowered).
    """
    _check_flags(s_tir=s_tir, check_well_formed=check_well_formed)
    frame = _inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    outer = dict(caller.f_locals) if caller is not None else {}
    del frame, caller

    def wrap(fn: Any) -> PrimFunc:
        parsed = parse_function(fn, private=private, extra_vars=outer)
        return mark_persistent(parsed) if persistent else parsed

    if func is None:
        return wrap
    return wrap(func)


prim_func.__tvm_script_prim_func__ = True  # type: ignore[attr-defined]
__tvm_script_namespace__ = True  # T.constexpr is @T.jit's marker (jit.NAMESPACE_MARK)

__all__ = sorted(
    set(_op_all)
    | set(_SCALAR_NAMES)
    | set(DTYPE_ALIASES)
    | set(_S.SCOPE_ID_KINDS)
    | {
        "Broadcast", "Buffer", "Cast", "ComposeLayout", "FloatImm", "IntImm", "Let", "Ramp",
        "R", "S", "Select", "Shuffle", "StringImm",
        "SwizzleLayout", "TensorMap", "TileLayout",
        "alloc_buffer",
        "attr", "axis", "buffer", "cluster", "cta", "decl_buffer", "evaluate", "func_attr", "grid", "laneid",
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


#: the seed's schedulable-TIR script forms, which this dialect does not read
_SCHEDULABLE = frozenset(("block", "sblock", "init", "where", "reads", "writes"))


def _missing(name: str) -> str:
    msg = f"module 'tvm.script.tirx' has no attribute {name!r}"
    public = [n for n in __dir__() if not n.startswith("_")]
    if name in _SCHEDULABLE:
        return (f"{msg}; T.{name} is schedulable TIR, which scripts here do not write: write "
                f"the block's body directly (tvm.tirx.SBlock builds the node in Python)")
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

