"""Metal's device intrinsics: ``tirx.metal.*`` ops, their builders and their MSL codegen rules.

The seed's SIMD-group matrix ops (8x8 only, as on Apple GPUs; the shape parameters mirror the
Metal spec) and SIMD shuffles, plus the SIMD-group reductions and barriers the dispatch variants
use. Each op is a ``device_intrin`` of namespace ``metal``, printed ``T.metal.<name>(...)``; the
seed's flat names of the matrix ops (``tirx.simdgroup_load``, ...) are aliases.

>>> from tvm_backend_metal import op
>>> op.simdgroup_load(A_sg.data, 0, T.address_of(A[0]), 8)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvm.error import TVMError
from tvm.ir import expr as E
from tvm.ir.buffer import Buffer
from tvm.ir.op import CallEffect, Op

__all__ = [
    "OPS",
    "SIMDGROUP_SCOPE",
    "make_filled_simdgroup_matrix",
    "register_ops",
    "simd_broadcast",
    "simd_max",
    "simd_min",
    "simd_shuffle",
    "simd_shuffle_down",
    "simd_shuffle_up",
    "simd_shuffle_xor",
    "simd_sum",
    "simdgroup_barrier",
    "simdgroup_load",
    "simdgroup_multiply_accumulate",
    "simdgroup_store",
    "threadgroup_barrier",
]

NS = "metal"
MATRIX_OPS = ("make_filled_simdgroup_matrix", "simdgroup_load", "simdgroup_store",
              "simdgroup_multiply_accumulate")
SHUFFLE_OPS = ("simd_shuffle", "simd_shuffle_up", "simd_shuffle_down", "simd_shuffle_xor",
               "simd_broadcast")
REDUCE_OPS = ("simd_sum", "simd_max", "simd_min")
BARRIER_OPS = ("threadgroup_barrier", "simdgroup_barrier")
# Every op this backend registers (short names; the op is tirx.metal.<name>).
OPS = MATRIX_OPS + SHUFFLE_OPS + REDUCE_OPS + BARRIER_OPS
# The storage scope of a buffer of 8x8 simdgroup matrices (the codegen declares it as such).
SIMDGROUP_SCOPE = "metal.simdgroup"
# mem_flags of the barriers, by the string argument of T.metal.threadgroup_barrier(...).
MEM_FLAGS = {
    "threadgroup": "mem_flags::mem_threadgroup",
    "device": "mem_flags::mem_device",
    "device_threadgroup": "mem_flags::mem_device | mem_flags::mem_threadgroup",
    "none": "mem_flags::mem_none",
}


def op_name(name: str) -> str:
    return f"tirx.{NS}.{name}"


# -- builders ----------------------------------------------------------------------------------


def _call(name: str, *args: Any, dtype: Any = None) -> Any:
    return Op.get(op_name(name))(*args, dtype=dtype)


def _handle(d: Any) -> Any:
    """The seed passes ``A.data``; a Buffer is accepted for it too."""
    return d.data if isinstance(d, Buffer) else d


def _scalar(var: Any) -> Any:
    """A Buffer stands for its first element (``var[0]``), as in the seed."""
    if isinstance(var, Buffer):
        return var[0]
    return E.convert(var)


def make_filled_simdgroup_matrix(d: Any, index: Any, value: Any, col: int = 8,
                                 row: int = 8) -> Any:
    """``d[index] = make_filled_simdgroup_matrix<T, col, row>(value)``."""
    return _call("make_filled_simdgroup_matrix", _handle(d), index, value, col, row,
                 dtype="handle")


def simdgroup_load(d: Any, index: Any, ptr: Any, stride: Any, col: int = 8, row: int = 8,
                   transpose_matrix: bool = False) -> Any:
    """Load the 8x8 matrix at ``ptr`` (``stride`` elements per row) into ``d[index]``."""
    return _call("simdgroup_load", _handle(d), index, ptr, stride, col, row,
                 bool(transpose_matrix) if isinstance(transpose_matrix, bool) else transpose_matrix,
                 dtype="handle")


def simdgroup_store(d: Any, index: Any, ptr: Any, stride: Any, col: int = 8, row: int = 8,
                    transpose_matrix: bool = False) -> Any:
    """Store ``d[index]`` to the 8x8 matrix at ``ptr`` (``stride`` elements per row)."""
    return _call("simdgroup_store", _handle(d), index, ptr, stride, col, row,
                 bool(transpose_matrix) if isinstance(transpose_matrix, bool) else transpose_matrix,
                 dtype="handle")


def simdgroup_multiply_accumulate(d: Any, index_d: Any, a: Any, index_a: Any, b: Any,
                                  index_b: Any, c: Any, index_c: Any) -> Any:
    """``d[index_d] = a[index_a] * b[index_b] + c[index_c]`` on 8x8 SIMD-group matrices."""
    return _call("simdgroup_multiply_accumulate", _handle(d), index_d, _handle(a), index_a,
                 _handle(b), index_b, _handle(c), index_c, dtype="handle")


def simd_shuffle(var: Any, lane: Any) -> Any:
    """The value of ``var`` in lane ``lane`` of the SIMD group."""
    v = _scalar(var)
    return _call("simd_shuffle", v, lane, dtype=v.dtype)


def simd_shuffle_up(var: Any, delta: Any) -> Any:
    """The value of ``var`` in lane ``lane - delta`` (own value for the first lanes)."""
    v = _scalar(var)
    return _call("simd_shuffle_up", v, delta, dtype=v.dtype)


def simd_shuffle_down(var: Any, delta: Any) -> Any:
    """The value of ``var`` in lane ``lane + delta`` (own value for the last lanes)."""
    v = _scalar(var)
    return _call("simd_shuffle_down", v, delta, dtype=v.dtype)


def simd_shuffle_xor(var: Any, mask: Any) -> Any:
    """The value of ``var`` in lane ``lane ^ mask`` (butterfly exchange)."""
    v = _scalar(var)
    return _call("simd_shuffle_xor", v, mask, dtype=v.dtype)


def simd_broadcast(var: Any, lane: Any) -> Any:
    """The value of ``var`` in lane ``lane`` (``lane`` the same for the whole SIMD group)."""
    v = _scalar(var)
    return _call("simd_broadcast", v, lane, dtype=v.dtype)


def simd_sum(var: Any) -> Any:
    """The sum of ``var`` over the active lanes of the SIMD group."""
    v = _scalar(var)
    return _call("simd_sum", v, dtype=v.dtype)


def simd_max(var: Any) -> Any:
    """The maximum of ``var`` over the active lanes of the SIMD group."""
    v = _scalar(var)
    return _call("simd_max", v, dtype=v.dtype)


def simd_min(var: Any) -> Any:
    """The minimum of ``var`` over the active lanes of the SIMD group."""
    v = _scalar(var)
    return _call("simd_min", v, dtype=v.dtype)


def threadgroup_barrier(mem: str = "threadgroup") -> Any:
    """``threadgroup_barrier(mem_flags::mem_<mem>)``: every thread of the threadgroup waits."""
    _check_mem(mem)
    return _call("threadgroup_barrier", mem, dtype="void")


def simdgroup_barrier(mem: str = "none") -> Any:
    """``simdgroup_barrier(mem_flags::mem_<mem>)``: every thread of the SIMD group waits."""
    _check_mem(mem)
    return _call("simdgroup_barrier", mem, dtype="void")


def _check_mem(mem: Any) -> None:
    if isinstance(mem, str) and mem not in MEM_FLAGS:
        raise ValueError(f"unknown Metal memory scope {mem!r}; expected one of {sorted(MEM_FLAGS)}")


# -- codegen rules (target kind "metal") --------------------------------------------------------


def _const_int(call: Any, pos: int, what: str) -> int:
    arg = call.args[pos]
    if not isinstance(arg, E.IntImm):
        raise TVMError(f"`{call.op.name}`: {what} must be a constant, got {arg}")
    return arg.value


def _check_8x8(call: Any, col_pos: int) -> None:
    col, row = _const_int(call, col_pos, "col"), _const_int(call, col_pos + 1, "row")
    if (col, row) != (8, 8):
        raise TVMError(f"`{call.op.name}`: only 8x8 matrices are supported on Metal, but got "
                       f"{col}x{row}")


def _rule_fill(cg: Any, call: Any, args: list[str]) -> str:
    _check_8x8(call, 3)
    elem = cg.storage_type(call.args[2].dtype)
    return f"{args[0]}[{args[1]}] = make_filled_simdgroup_matrix<{elem}, 8, 8>({args[2]})"


def _rule_load_store(name: str) -> Callable[[Any, Any, list[str]], str]:
    def rule(cg: Any, call: Any, args: list[str]) -> str:
        _check_8x8(call, 4)
        return f"{name}({args[0]}[{args[1]}], {args[2]}, {args[3]}, 0, {args[6]})"

    return rule


def _rule_mma(cg: Any, call: Any, args: list[str]) -> str:
    d, idd, a, ia, b, ib, c, ic = args
    return f"simdgroup_multiply_accumulate({d}[{idd}], {a}[{ia}], {b}[{ib}], {c}[{ic}])"


def _rule_barrier(name: str) -> Callable[[Any, Any, list[str]], str]:
    def rule(cg: Any, call: Any, args: list[str]) -> str:
        mem = call.args[0].value if isinstance(call.args[0], E.StringImm) else "threadgroup"
        return f"{name}({MEM_FLAGS[mem]})"

    return rule


def _signature(name: str) -> tuple[str, ...]:
    return {
        "make_filled_simdgroup_matrix": ("d", "index", "value", "col", "row"),
        "simdgroup_load": ("d", "index", "ptr", "stride", "col", "row", "transpose_matrix"),
        "simdgroup_store": ("d", "index", "ptr", "stride", "col", "row", "transpose_matrix"),
        "simdgroup_multiply_accumulate": ("d", "index_d", "a", "index_a", "b", "index_b", "c",
                                          "index_c"),
        "simd_shuffle": ("var", "lane"),
        "simd_shuffle_up": ("var", "delta"),
        "simd_shuffle_down": ("var", "delta"),
        "simd_shuffle_xor": ("var", "mask"),
        "simd_broadcast": ("var", "lane"),
        "threadgroup_barrier": ("mem",),
        "simdgroup_barrier": ("mem",),
    }.get(name, ("var",))


def _codegen_rules() -> dict[str, Any]:
    rules: dict[str, Any] = {
        "make_filled_simdgroup_matrix": _rule_fill,
        "simdgroup_load": _rule_load_store("simdgroup_load"),
        "simdgroup_store": _rule_load_store("simdgroup_store"),
        "simdgroup_multiply_accumulate": _rule_mma,
        "threadgroup_barrier": _rule_barrier("threadgroup_barrier"),
        "simdgroup_barrier": _rule_barrier("simdgroup_barrier"),
    }
    for name in SHUFFLE_OPS:
        rules[name] = f"{name}({{0}}, {{1}})"
    for name in REDUCE_OPS:
        rules[name] = f"{name}({{0}})"
    return rules


def register_ops() -> None:
    """Register every ``tirx.metal.*`` op with its MSL rule (the ``tvm_register_ops`` hook)."""
    rules = _codegen_rules()
    for name in OPS:
        # All of them are ordered with respect to each other and to divergent control flow (a
        # shuffle reads other lanes' registers): the seed's kOpaque, which is TVM's kUpdateState.
        effect = CallEffect.UPDATE_STATE
        dtype = "arg0" if name in SHUFFLE_OPS + REDUCE_OPS else (
            "void" if name in BARRIER_OPS else "handle")
        op = Op.register(op_name(name), category="device_intrin", namespace=NS,
                         printer_name=f"{NS}.{name}", effect=effect, dtype=dtype,
                         signature=_signature(name), global_symbol=name)
        op.set_codegen(NS, rules[name])
        if name in MATRIX_OPS:  # the seed's op names for these are flat: tirx.simdgroup_load
            Op.register_alias(f"tirx.{name}", op_name(name))
