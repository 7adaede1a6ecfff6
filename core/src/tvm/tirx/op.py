"""Core builtin ops (``tirx.<name>``, category ``builtin``) and their expression builders.

``T.exp(x)`` and friends build :class:`~tvm.ir.Call` nodes of these ops; ``T.cast``, ``T.min``
and ``T.max`` build the dedicated expression nodes. Backend intrinsics are not here: each
backend registers its own, in its own script namespace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..ir import expr as E
from ..ir.buffer import Buffer
from ..ir.dtype import DataType
from ..ir.intrin import IntrinNamespace, IntrinTable, element
from ..ir.op import CallEffect, Op
from .op_host import (
    HOST_ENCODERS,
    TENSOR_MAP_SCOPE,
    HostDerived,
    call_packed,
    host_derived,
    tvm_stack_alloca,
)

__all__ = [
    "UNARY_MATH", "BINARY_MATH", "abs", "address_of", "all", "all_of", "any", "any_of", "bitwise_and", "bitwise_not", "bitwise_or",
    "bitwise_xor", "break_loop", "call_extern", "call_intrin", "cast", "ceildiv", "clz",
    "continue_loop", "device_entry", "floordiv", "floormod", "fma", "if_then_else", "likely",
    "max", "min", "popcount", "print_buffer", "reinterpret", "ret", "shift_left", "shift_right",
    "thread_return", "truncdiv", "truncmod", "tvm_kernel_replace_point",
    "HostDerived", "host_derived", "tvm_stack_alloca", "call_packed", "HOST_ENCODERS",
    # the classic thread intrinsics (barriers, warp shuffles, access pointers)
    "tvm_storage_sync", "tvm_warp_shuffle", "tvm_warp_shuffle_up", "tvm_warp_shuffle_down",
    "tvm_warp_shuffle_xor", "tvm_access_ptr", "STORAGE_SYNC_SCOPES",
    # markers and annotations
    "assume", "undef", "selector", "isnullptr", "tvm_tuple", "type_annotation", "dp4a",
    # wmma fragments (kept in core, as in the seed)
    "tvm_load_matrix_sync", "tvm_mma_sync", "tvm_bmma_sync", "tvm_fill_fragment",
    "tvm_store_matrix_sync",
    # Metal 4 cooperative tensors (kept in core, as in the seed)
    "cooperative_tensor_fill", "cooperative_tensor_load", "cooperative_tensor_store",
    "cooperative_tensor_multiply_accumulate",
    # the table of core's intrinsics (backends give them rules with INTRINSICS.add_rule)
    "INTRINSICS", "WebGPUNamespace",
]
WARP_SHUFFLE_OPS = ("tvm_warp_shuffle", "tvm_warp_shuffle_up", "tvm_warp_shuffle_down",
                    "tvm_warp_shuffle_xor")
#: what ``T.tvm_storage_sync(scope)`` may wait for (the seed's scopes; "global" is a grid barrier)
STORAGE_SYNC_SCOPES = ("shared", "shared.dyn", "warp", "global")

UNARY_MATH = (
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "floor", "ceil", "round",
    "trunc", "nearbyint", "fabs",
)
BINARY_MATH = ("pow", "fmod", "atan2", "hypot", "copysign", "nextafter")
_PREDICATES = ("isnan", "isinf", "isfinite")


def _bool_rule(args: Any) -> DataType:
    lanes = args[0].dtype.lanes if args and isinstance(args[0], E.PrimExpr) else 1
    return DataType("bool").with_lanes(lanes)


def _register_core_ops() -> None:
    pure = CallEffect.PURE
    for name in UNARY_MATH + BINARY_MATH + ("fma", "popcount", "clz", "bitwise_and", "bitwise_or",
                                            "bitwise_xor", "bitwise_not", "shift_left", "shift_right"):
        Op.register(f"tirx.{name}", effect=pure, dtype="arg0")
    for name in _PREDICATES:
        Op.register(f"tirx.{name}", effect=pure, dtype=_bool_rule)
    Op.register("tirx.abs", effect=pure, dtype="arg0")
    Op.register("tirx.if_then_else", effect=pure,
                dtype=lambda a: a[1].dtype if len(a) > 1 and isinstance(a[1], E.PrimExpr) else "void")
    Op.register("tirx.likely", effect=CallEffect.EXPR_ANNOTATION, dtype="arg0")
    Op.register("tirx.reinterpret", effect=pure, dtype=lambda a: a[0].value)
    Op.register("tirx.call_extern", effect=CallEffect.OPAQUE, dtype=lambda a: a[0].value)
    Op.register("tirx.call_intrin", effect=CallEffect.OPAQUE, dtype=lambda a: a[0].value)
    Op.register("tirx.address_of", effect=pure, dtype="handle")
    Op.register("tirx.ret", effect=CallEffect.OPAQUE)
    Op.register("tirx.device_entry", effect=CallEffect.OPAQUE)
    Op.register("tirx.launch_kernel", effect=CallEffect.OPAQUE)
    Op.register("tirx.host_derived", effect=pure, dtype="handle")
    Op.register("tirx.tvm_stack_alloca", effect=CallEffect.OPAQUE, dtype="handle")
    Op.register("tirx.call_packed", effect=CallEffect.OPAQUE, dtype="int32")
    Op.register("tirx.tvm_kernel_replace_point", effect=CallEffect.OPAQUE)
    Op.register("tirx.print_buffer", effect=CallEffect.OPAQUE)
    Op.register("tirx.thread_return", effect=CallEffect.OPAQUE)
    Op.register("tirx.continue_loop", effect=CallEffect.OPAQUE)
    Op.register("tirx.break_loop", effect=CallEffect.OPAQUE)
    Op.register("tirx.assume", effect=CallEffect.EXPR_ANNOTATION, dtype="bool")
    Op.register("tirx.undef", effect=CallEffect.PURE, dtype="int32")
    Op.register("tirx.selector", effect=CallEffect.EXPR_ANNOTATION, dtype="arg0")
    Op.register("tirx.isnullptr", effect=pure, dtype="bool")
    Op.register("tirx.tvm_tuple", effect=CallEffect.EXPR_ANNOTATION, dtype="handle")
    Op.register("tirx.type_annotation", effect=pure, script_dtype=True)
    Op.register("tirx.dp4a", effect=pure, dtype="int32")
    Op.register("tirx.tvm_storage_sync", effect=CallEffect.OPAQUE, dtype="int32")
    for name in WARP_SHUFFLE_OPS:  # (mask, value, lane, width, warp_size): value's type
        Op.register(f"tirx.{name}", effect=CallEffect.UPDATE_STATE,
                    dtype=lambda a: a[1].dtype if len(a) > 1 else "void")
    Op.register("tirx.tvm_access_ptr", effect=CallEffect.OPAQUE, dtype="handle")
    INTRINSICS.register_ops()


# -- core's intrinsics, declared once (tvm.ir.intrin): op, builder, T.<path> and printed form ----
#: core's own intrinsics: the wmma fragments and Metal 4 cooperative tensors (builtins, printed
#: T.<name>) and T.webgpu, kept in core as in the seed; core has no rules for them, backends add
#: theirs (INTRINSICS.add_rule in their own table)
INTRINSICS = IntrinTable(None)


def _handle_op(path: str, params: str, doc: str) -> None:
    INTRINSICS.declare(path, params, dtype="handle", effect=CallEffect.OPAQUE, doc=doc)


_handle_op("tvm_load_matrix_sync", "fragment, m, n, k, index, buffer_ptr, stride, layout",
           "Load the ``index``-th ``m x n x k`` fragment of ``fragment`` from ``buffer_ptr``.")
_handle_op("tvm_mma_sync",
           "fragment_d, index_d, fragment_a, index_a, fragment_b, index_b, fragment_c, index_c",
           "``d = a * b + c`` on wmma fragments.")
_handle_op("tvm_bmma_sync",
           "fragment_d, index_d, fragment_a, index_a, fragment_b, index_b, fragment_c, index_c",
           "``d = popc(a xor b) + c`` on 1-bit wmma fragments.")
_handle_op("tvm_fill_fragment", "fragment, m, n, k, index, value",
           "Fill the ``index``-th fragment of ``fragment`` with ``value``.")
_handle_op("tvm_store_matrix_sync", "fragment, m, n, k, index, buffer_ptr, stride, layout",
           "Store the ``index``-th fragment of ``fragment`` to ``buffer_ptr``.")
# -- Metal 4 cooperative tensors (MetalPerformancePrimitives)
_handle_op("cooperative_tensor_fill", "d, index, value, rows, cols",
           "Fill the ``index``-th ``rows x cols`` cooperative tensor of ``d`` with ``value``.")
_handle_op("cooperative_tensor_load",
           "d, index, ptr, stride, rows, cols, transpose_matrix=False, mma_M=0, mma_N=0, "
           "mma_K=0, operand_role=0",
           "Load a cooperative tensor from ``ptr`` (row stride ``stride``); ``mma_M/N/K`` and "
           "``operand_role`` name the matmul it feeds.")
_handle_op("cooperative_tensor_store",
           "d, index, ptr, stride, rows, cols, transpose_matrix=False, mma_M=0, mma_N=0, "
           "mma_K=0, operand_role=0",
           "Store a cooperative tensor to ``ptr`` (row stride ``stride``).")
_handle_op("cooperative_tensor_multiply_accumulate",
           "d, index_d, a, index_a, b, index_b, c, index_c, M, N, K, transpose_a=False, "
           "transpose_b=False",
           "``d = a @ b + c`` on cooperative tensors of an ``M x N x K`` matmul.")


# -- WebGPU subgroup shuffles (T.webgpu): a Buffer stands for its first element
def _shuffle_operands(var: Any, lane: Any) -> tuple[Any, ...]:
    return (element(var) if not isinstance(var, E.PrimExpr) else var, lane)


def _shuffle_delta(var: Any, delta: Any) -> tuple[Any, ...]:
    return _shuffle_operands(var, delta)


INTRINSICS.declare("webgpu.subgroup_shuffle", _shuffle_operands, nargs=2, dtype="arg0",
                   doc="The value of ``var`` in subgroup lane ``lane``.")
INTRINSICS.declare("webgpu.subgroup_shuffle_up", _shuffle_delta, nargs=2, dtype="arg0",
                   doc="The value of ``var`` in subgroup lane ``lane - delta``.")
INTRINSICS.declare("webgpu.subgroup_shuffle_down", _shuffle_delta, nargs=2, dtype="arg0",
                   doc="The value of ``var`` in subgroup lane ``lane + delta``.")


class WebGPUNamespace(IntrinNamespace):
    """``T.webgpu``: subgroup shuffles of WGSL, kept in core as in the seed (the ops print and
    parse with core alone; tvm-backend-webgpu gives them their WGSL)."""

    def __init__(self) -> None:
        super().__init__("webgpu", INTRINSICS.members("webgpu"))


_register_core_ops()


def _call(name: str, *args: Any) -> E.Call:
    return Op.get(f"tirx.{name}")(*args)


def _float_arg(x: Any) -> E.PrimExpr:
    e = E.convert(x)
    if not e.dtype.is_float:
        raise TypeError(f"expected a floating-point expression, got {e.dtype}; cast it with T.cast(x, 'float32')")
    return e


def _make_unary(name: str, result: str = "") -> Callable[[Any], E.Call]:
    def builder(x: Any) -> E.Call:
        return _call(name, _float_arg(x))

    builder.__name__ = name
    builder.__qualname__ = name
    builder.__doc__ = f"``{name}(x)`` of a floating-point expression{result} (op ``tirx.{name}``)."
    return builder


def _make_binary(name: str) -> Callable[[Any, Any], E.Call]:
    def builder(x: Any, y: Any) -> E.Call:
        a = E.convert(x) if isinstance(x, E.PrimExpr) or not isinstance(y, E.PrimExpr) else E._scalar_for(x, y)
        b = E._scalar_for(y, a) if not isinstance(y, E.PrimExpr) else y
        a, b = E._promote(a, b)
        return _call(name, a, b)

    builder.__name__ = name
    builder.__qualname__ = name
    builder.__doc__ = f"``{name}(x, y)`` (op ``tirx.{name}``)."
    return builder


def _make_predicate(name: str) -> Callable[[Any], E.Call]:
    return _make_unary(name, "; a bool")


# Spelled out one per line (not generated into globals()) so that type checkers and readers
# see every builder; test_op_builders checks these stay in step with the tuples above.
exp = _make_unary("exp")
exp2 = _make_unary("exp2")
exp10 = _make_unary("exp10")
log = _make_unary("log")
log2 = _make_unary("log2")
log10 = _make_unary("log10")
log1p = _make_unary("log1p")
sqrt = _make_unary("sqrt")
rsqrt = _make_unary("rsqrt")
sin = _make_unary("sin")
cos = _make_unary("cos")
tan = _make_unary("tan")
asin = _make_unary("asin")
acos = _make_unary("acos")
atan = _make_unary("atan")
sinh = _make_unary("sinh")
cosh = _make_unary("cosh")
tanh = _make_unary("tanh")
sigmoid = _make_unary("sigmoid")
erf = _make_unary("erf")
floor = _make_unary("floor")
ceil = _make_unary("ceil")
round = _make_unary("round")
trunc = _make_unary("trunc")
nearbyint = _make_unary("nearbyint")
fabs = _make_unary("fabs")
pow = _make_binary("pow")
fmod = _make_binary("fmod")
atan2 = _make_binary("atan2")
hypot = _make_binary("hypot")
copysign = _make_binary("copysign")
nextafter = _make_binary("nextafter")
isnan = _make_predicate("isnan")
isinf = _make_predicate("isinf")
isfinite = _make_predicate("isfinite")
__all__ += [*UNARY_MATH, *BINARY_MATH, *_PREDICATES]


def abs(x: Any) -> E.PrimExpr:  # noqa: A001 - the script's own name
    """Absolute value of an int or float expression."""
    return _call("abs", E.convert(x))


def fma(a: Any, b: Any, c: Any) -> E.Call:
    """``a * b + c`` with one rounding."""
    a_ = E.convert(a)
    return _call("fma", a_, E.convert(b, a_.dtype), E.convert(c, a_.dtype))


def cast(x: Any, dtype: str | DataType) -> E.PrimExpr:
    """Convert ``x`` to ``dtype`` (a :class:`~tvm.ir.Cast`)."""
    e = E.convert(x)
    return E.Cast(dtype, e)


def min(a: Any, b: Any, *rest: Any) -> E.PrimExpr:  # noqa: A001
    """``T.min(a, b)``; more arguments nest from the left, as in the seed:
    ``T.min(a, b, c)`` is ``T.min(T.min(a, b), c)``."""
    out = E._binary(E.Min, a, b)
    for c in rest:
        out = E._binary(E.Min, out, c)
    return out


def max(a: Any, b: Any, *rest: Any) -> E.PrimExpr:  # noqa: A001
    """``T.max(a, b)``; more arguments nest from the left (``T.max(T.max(a, b), c)``)."""
    out = E._binary(E.Max, a, b)
    for c in rest:
        out = E._binary(E.Max, out, c)
    return out


def floordiv(a: Any, b: Any) -> E.PrimExpr:
    return E._binary(E.FloorDiv, a, b)


def floormod(a: Any, b: Any) -> E.PrimExpr:
    return E._binary(E.FloorMod, a, b)


def truncdiv(a: Any, b: Any) -> E.PrimExpr:
    return E._binary(E.Div, a, b)


def truncmod(a: Any, b: Any) -> E.PrimExpr:
    return E._binary(E.Mod, a, b)


def ceildiv(a: Any, b: Any) -> E.PrimExpr:
    return floordiv(E.convert(a) + (E.convert(b) - 1) if isinstance(a, E.PrimExpr) or isinstance(b, E.PrimExpr)
                    else E.convert(a + b - 1), b)


def popcount(x: Any) -> E.Call:
    return _call("popcount", E.convert(x))


def clz(x: Any) -> E.Call:
    return _call("clz", E.convert(x))


def bitwise_and(a: Any, b: Any) -> E.PrimExpr:
    return E._bit_call("bitwise_and", a, b)


def bitwise_or(a: Any, b: Any) -> E.PrimExpr:
    return E._bit_call("bitwise_or", a, b)


def bitwise_xor(a: Any, b: Any) -> E.PrimExpr:
    return E._bit_call("bitwise_xor", a, b)


def bitwise_not(a: Any) -> E.PrimExpr:
    e = E.convert(a)
    return _call("bitwise_not", e)


def shift_left(a: Any, b: Any) -> E.PrimExpr:
    return E._bit_call("shift_left", a, b)


def shift_right(a: Any, b: Any) -> E.PrimExpr:
    return E._bit_call("shift_right", a, b)


def if_then_else(cond: Any, t: Any, f: Any) -> E.Call:
    """Like Select, but only the taken side is evaluated."""
    tv, fv = E._promote(E.convert(t), E.convert(f))
    return _call("if_then_else", E.convert(cond), tv, fv)


def likely(cond: Any) -> E.Call:
    return _call("likely", E.convert(cond))


def reinterpret(dtype: str | DataType, value: Any) -> E.Call:
    return _call("reinterpret", E.StringImm(str(DataType(dtype))), E.convert(value))


def call_extern(dtype: str | DataType, func_name: str, *args: Any) -> E.Call:
    """Call an external C function ``func_name`` returning ``dtype``."""
    return _call("call_extern", E.StringImm(str(DataType(dtype))), E.StringImm(func_name), *args)


def call_intrin(dtype: str | DataType, op_name: str, *args: Any) -> E.Call:
    """Call any registered op with an explicit result type."""
    return E.Call(dtype, Op.get(op_name), list(args))


def address_of(obj: Any) -> E.Call:
    """The address of a buffer element (a Buffer stands for its first element) or of an
    addressable variable; the address of a tensor-map variable (``T.handle("tensormap")``) is
    a ``uint64``, as in the seed."""
    if isinstance(obj, Buffer):
        obj = E.BufferLoad(obj, [E.IntImm("int32", 0)] * len(obj.shape))
    if isinstance(obj, E.BufferLoad):
        return _call("address_of", obj)
    if isinstance(obj, E.Var):
        if obj.ptr_scope == TENSOR_MAP_SCOPE:
            return E.Call("uint64", Op.get("tirx.address_of"), [obj])
        return _call("address_of", obj)
    raise TypeError(f"T.address_of takes a buffer, a buffer element or a variable, got "
                    f"{type(obj).__name__}")


def tvm_storage_sync(scope: str) -> E.Call:
    """``T.tvm_storage_sync("shared")``: a barrier of the threads sharing ``scope``'s memory
    (``"shared"`` / ``"shared.dyn"``: the CTA, ``"warp"``: the warp)."""
    text = scope.value if isinstance(scope, E.StringImm) else scope
    if text not in STORAGE_SYNC_SCOPES:
        raise ValueError(f"T.tvm_storage_sync: scope must be one of "
                         f"{', '.join(map(repr, STORAGE_SYNC_SCOPES))}, got {scope!r}")
    return _call("tvm_storage_sync", E.StringImm(text))


def _shuffle(name: str, third: str) -> Callable[..., E.Call]:
    def builder(mask: Any, value: Any, lane: Any, width: Any, warp_size: Any) -> E.Call:
        args = [E.convert(a) for a in (mask, value, lane, width, warp_size)]
        for what, a in zip(("mask", third, "width", "warp_size"), args[:1] + args[2:]):
            if not a.dtype.is_int and not a.dtype.is_uint:
                raise TypeError(f"T.{name}: {what} must be an integer, got a {a.dtype} value")
        return _call(name, *args)

    builder.__name__ = builder.__qualname__ = name
    builder.__doc__ = (f"``T.{name}(mask, value, {third}, width, warp_size)``: ``value`` from "
                       f"another lane of the warp (CUDA ``__shfl{name[16:]}_sync``), lanes in "
                       f"groups of ``width``.")
    return builder


tvm_warp_shuffle = _shuffle("tvm_warp_shuffle", "lane")
tvm_warp_shuffle_up = _shuffle("tvm_warp_shuffle_up", "delta")
tvm_warp_shuffle_down = _shuffle("tvm_warp_shuffle_down", "delta")
tvm_warp_shuffle_xor = _shuffle("tvm_warp_shuffle_xor", "lane_mask")


def tvm_access_ptr(ptype: Any, data: Any, offset: Any, extent: Any, rw_mask: Any) -> E.Call:
    """``T.tvm_access_ptr(T.type_annotation("float32"), A.data, offset, extent, rw_mask)``: the
    address of element ``offset`` of ``data`` as a pointer to ``ptype``'s type, for ``extent``
    elements read (``rw_mask`` 1), written (2) or both (3). ``Buffer.access_ptr`` builds it."""
    if not (isinstance(ptype, E.Call) and ptype.op.name == "tirx.type_annotation"):
        raise TypeError("T.tvm_access_ptr: the first argument is the element type, written "
                        f"T.type_annotation(\"float32\"), got {ptype!r}")
    if not (isinstance(data, E.Var) and data.dtype.is_handle):
        raise TypeError(f"T.tvm_access_ptr: data must be a buffer's data pointer (A.data), got "
                        f"{data!r}")
    return _call("tvm_access_ptr", ptype, data, E.convert(offset), E.convert(extent),
                 E.convert(rw_mask))



def all(*args: Any) -> E.PrimExpr:  # noqa: A001 - the seed's name (tvm.tirx.all)
    """``tvm.tirx.all(a, b, c)``: the classic builder of a conjunction, ``(a and b) and c``
    (``And`` nested from the left); one argument is itself."""
    return _chain(E.And, "all", args)


def any(*args: Any) -> E.PrimExpr:  # noqa: A001 - the seed's name (tvm.tirx.any)
    """``tvm.tirx.any(a, b, c)``: the disjunction ``(a or b) or c``; one argument is itself."""
    return _chain(E.Or, "any", args)


def _chain(cls: type[E.And] | type[E.Or], name: str, args: Sequence[Any]) -> E.PrimExpr:
    if not args:
        raise TypeError(f"tvm.tirx.{name}() needs at least one condition")
    conds = [E.convert(a) for a in args]
    for k, c in enumerate(conds):
        if not c.dtype.is_bool:
            raise TypeError(f"tvm.tirx.{name}(): argument {k} is a {c.dtype} value, not a "
                            f"condition (bool); compare it, e.g. x != 0")
    out = conds[0]
    for c in conds[1:]:
        out = cls(out, c)
    return out


def all_of(conds: Iterable[E.PrimExpr | bool]) -> E.PrimExpr | bool:
    """The conjunction of ``conds``, folded where it is known when the function is built: a
    constant true (a Python bool or a bool immediate) drops out, a constant false makes it
    ``False``; none left is ``True``, one is itself, more are ``And`` nested from the left. A
    constant result is a Python bool, so that a script's ``if`` on it picks its branch at
    build time (``if all_of([]):`` adds no ``IfThenElse``)."""
    return _fold(E.And, "all_of", conds, unit=True)


def any_of(conds: Iterable[E.PrimExpr | bool]) -> E.PrimExpr | bool:
    """The disjunction of ``conds``, folded like :func:`all_of`: a constant false drops out, a
    constant true makes it ``True``; none left is ``False``, one is itself, more are ``Or``
    nested from the left."""
    return _fold(E.Or, "any_of", conds, unit=False)


def _fold(cls: type[E.And] | type[E.Or], name: str, conds: Iterable[E.PrimExpr | bool],
          unit: bool) -> E.PrimExpr | bool:
    out: E.PrimExpr | None = None
    for k, c in enumerate(conds):
        if isinstance(c, bool) or isinstance(c, E.IntImm) and c.dtype.is_bool:
            if bool(c if isinstance(c, bool) else c.value) != unit:
                return not unit
            continue
        if not isinstance(c, E.PrimExpr) or not c.dtype.is_bool:
            what = c.dtype if isinstance(c, E.PrimExpr) else type(c).__name__
            raise TypeError(f"tvm.tirx.{name}(): condition {k} is a {what} value, not a "
                            f"condition (bool); compare it, e.g. x != 0")
        out = c if out is None else cls(out, c)
    return unit if out is None else out


def ret(value: Any) -> E.Call:
    return _call("ret", E.convert(value))


def device_entry() -> E.Call:
    """Marks where the device kernel starts in the kernel form."""
    return _call("device_entry")


def tvm_kernel_replace_point() -> E.Call:
    return _call("tvm_kernel_replace_point")


def print_buffer(*args: Any) -> E.Call:
    return _call("print_buffer", *args)


def thread_return() -> E.Call:
    return _call("thread_return")


def continue_loop() -> E.Call:
    return _call("continue_loop")


def break_loop() -> E.Call:
    return _call("break_loop")


# -- markers and annotations ------------------------------------------------------------------
def assume(cond: Any = None) -> E.Call:
    """Tell the analyzer that ``cond`` holds (``T.assume(n > 0)``); no code is emitted."""
    return _call("assume", E.convert(True if cond is None else cond))


def undef() -> E.Call:
    """An undefined value: its reads may be replaced by anything."""
    return _call("undef")


def selector(var: Any, pred: Any) -> E.Call:
    """The unique value of ``var`` among the active threads for which ``pred`` holds
    (analysis only: it must not reach codegen)."""
    v = E.convert(var)
    return E.Call(v.dtype, Op.get("tirx.selector"), [v, E.convert(pred)])


def isnullptr(x: Any) -> E.Call:
    """Whether the handle ``x`` is a null pointer."""
    return _call("isnullptr", E.convert(x))


def tvm_tuple(*value: Any) -> E.Call:
    """A tuple of values (an annotation argument, e.g. of ``T.attr``)."""
    return _call("tvm_tuple", *value)


def type_annotation(dtype: str | DataType) -> E.Call:
    """A value that carries only its type (``T.type_annotation("float32")``)."""
    return E.Call(DataType(dtype), Op.get("tirx.type_annotation"), [])


def dp4a(vec1: Any, vec2: Any, acc: Any = 0) -> E.Call:
    """The dot product of two int8x4 (or uint8x4) vectors plus the int32 ``acc``."""
    return _call("dp4a", E.convert(vec1), E.convert(vec2), E.convert(acc, "int32"))


# The builders of the declared intrinsics (INTRINSICS above), as module functions.
tvm_load_matrix_sync = INTRINSICS.builder("tvm_load_matrix_sync")
tvm_mma_sync = INTRINSICS.builder("tvm_mma_sync")
tvm_bmma_sync = INTRINSICS.builder("tvm_bmma_sync")
tvm_fill_fragment = INTRINSICS.builder("tvm_fill_fragment")
tvm_store_matrix_sync = INTRINSICS.builder("tvm_store_matrix_sync")
cooperative_tensor_fill = INTRINSICS.builder("cooperative_tensor_fill")
cooperative_tensor_load = INTRINSICS.builder("cooperative_tensor_load")
cooperative_tensor_store = INTRINSICS.builder("cooperative_tensor_store")
cooperative_tensor_multiply_accumulate = INTRINSICS.builder(
    "cooperative_tensor_multiply_accumulate")
