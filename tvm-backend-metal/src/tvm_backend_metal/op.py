"""Metal's device intrinsics: ``tirx.metal.*`` ops, their builders and their MSL codegen rules.

Each intrinsic is one declaration (core's :class:`tvm.ir.intrin.IntrinTable`, ``INTRINSICS``)
on its MSL rule: the op, its builder here (the seed's name, ``simdgroup_load``), its ``T.metal``
member (``script.py`` derives the namespace from the table) and printed form come from it.

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
from tvm.ir.intrin import IntrinTable

from .tags import KIND

__all__ = ["INTRINSICS", "OPS", "SIMDGROUP_SCOPE", "register_ops"]  # and the builders (below)

NS = "metal"
# The storage scope of a buffer of 8x8 simdgroup matrices (the codegen declares it as such).
SIMDGROUP_SCOPE = "metal.simdgroup"
# mem_flags of the barriers, by the string argument of T.metal.threadgroup_barrier(...).
MEM_FLAGS = {
    "threadgroup": "mem_flags::mem_threadgroup",
    "device": "mem_flags::mem_device",
    "device_threadgroup": "mem_flags::mem_device | mem_flags::mem_threadgroup",
    "none": "mem_flags::mem_none",
}

#: every Metal intrinsic; builders are named as the op (``simdgroup_load``)
INTRINSICS = IntrinTable(KIND, builder_format="{name}")


def op_name(name: str) -> str:
    return f"tirx.{NS}.{name}"


def _declare(name: str, params: Any, rule: Any, *, nargs: int, dtype: str,
             seed_alias: bool = False, doc: str = "") -> None:
    """``T.metal.<name>``: an op ordered with respect to the others and to divergent control
    flow (a shuffle reads other lanes' registers: the seed's kOpaque, TVM's kUpdateState)."""
    INTRINSICS.declare(f"{NS}.{name}", params, rule=rule, nargs=nargs, dtype=dtype,
                       # the seed's op names of the matrix ops are flat: tirx.simdgroup_load
                       alias=f"tirx.{name}" if seed_alias else None,
                       attrs={"global_symbol": name}, doc=doc)


# -- operands ----------------------------------------------------------------------------------


def _handle(d: Any) -> Any:
    """The seed passes ``A.data``; a Buffer is accepted for it too."""
    return d.data if isinstance(d, Buffer) else d


def _scalar(var: Any) -> Any:
    """A Buffer stands for its first element (``var[0]``), as in the seed."""
    if isinstance(var, Buffer):
        return var[0]
    return E.convert(var)


def _fill(d: Any, index: Any, value: Any, col: int = 8, row: int = 8) -> tuple[Any, ...]:
    """``d[index] = make_filled_simdgroup_matrix<T, col, row>(value)``."""
    return (_handle(d), index, value, col, row)


def _load(d: Any, index: Any, ptr: Any, stride: Any, col: int = 8, row: int = 8,
          transpose_matrix: bool = False) -> tuple[Any, ...]:
    """Load the 8x8 matrix at ``ptr`` (``stride`` elements per row) into ``d[index]``."""
    return (_handle(d), index, ptr, stride, col, row, transpose_matrix)


def _store(d: Any, index: Any, ptr: Any, stride: Any, col: int = 8, row: int = 8,
           transpose_matrix: bool = False) -> tuple[Any, ...]:
    """Store ``d[index]`` to the 8x8 matrix at ``ptr`` (``stride`` elements per row)."""
    return (_handle(d), index, ptr, stride, col, row, transpose_matrix)


def _mma(d: Any, index_d: Any, a: Any, index_a: Any, b: Any, index_b: Any, c: Any,
         index_c: Any) -> tuple[Any, ...]:
    """``d[index_d] = a[index_a] * b[index_b] + c[index_c]`` on 8x8 SIMD-group matrices."""
    return (_handle(d), index_d, _handle(a), index_a, _handle(b), index_b, _handle(c), index_c)


def _lane(var: Any, lane: Any) -> tuple[Any, ...]:
    return (_scalar(var), lane)


def _delta(var: Any, delta: Any) -> tuple[Any, ...]:
    return (_scalar(var), delta)


def _mask(var: Any, mask: Any) -> tuple[Any, ...]:
    return (_scalar(var), mask)


def _value(var: Any) -> tuple[Any, ...]:
    return (_scalar(var),)


def _check_mem(mem: Any) -> tuple[Any, ...]:
    if isinstance(mem, str) and mem not in MEM_FLAGS:
        raise ValueError(f"unknown Metal memory scope {mem!r}; expected one of {sorted(MEM_FLAGS)}")
    return (mem,)


def _threadgroup_mem(mem: str = "threadgroup") -> tuple[Any, ...]:
    return _check_mem(mem)


def _simdgroup_mem(mem: str = "none") -> tuple[Any, ...]:
    return _check_mem(mem)


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


# -- the declarations ----------------------------------------------------------------------------

_declare("make_filled_simdgroup_matrix", _fill, _rule_fill, nargs=5, dtype="handle",
         seed_alias=True)
_declare("simdgroup_load", _load, _rule_load_store("simdgroup_load"), nargs=7, dtype="handle",
         seed_alias=True)
_declare("simdgroup_store", _store, _rule_load_store("simdgroup_store"), nargs=7,
         dtype="handle", seed_alias=True)
_declare("simdgroup_multiply_accumulate", _mma, _rule_mma, nargs=8, dtype="handle",
         seed_alias=True)
# The SIMD-group functions of a value: (name, operands, number of operands, what it returns).
# Each is the MSL function of the same name on its operands (``simd_shuffle({0}, {1})``) and
# has the type of its first operand.
_SIMD_VALUE_FUNCTIONS = (
    ("simd_shuffle", _lane, 2, "The value of ``var`` in lane ``lane`` of the SIMD group."),
    ("simd_shuffle_up", _delta, 2,
     "The value of ``var`` in lane ``lane - delta`` (own value for the first lanes)."),
    ("simd_shuffle_down", _delta, 2,
     "The value of ``var`` in lane ``lane + delta`` (own value for the last lanes)."),
    ("simd_shuffle_xor", _mask, 2,
     "The value of ``var`` in lane ``lane ^ mask`` (butterfly exchange)."),
    ("simd_broadcast", _lane, 2,
     "The value of ``var`` in lane ``lane`` (``lane`` the same for the whole SIMD group)."),
    ("simd_sum", _value, 1, "The sum of ``var`` over the active lanes of the SIMD group."),
    ("simd_max", _value, 1, "The maximum of ``var`` over the active lanes of the SIMD group."),
    ("simd_min", _value, 1, "The minimum of ``var`` over the active lanes of the SIMD group."),
)
for _name, _operands, _nargs, _doc in _SIMD_VALUE_FUNCTIONS:
    _template = f"{_name}({', '.join(f'{{{i}}}' for i in range(_nargs))})"
    _declare(_name, _operands, _template, nargs=_nargs, dtype="arg0", doc=_doc)
_declare("threadgroup_barrier", _threadgroup_mem, _rule_barrier("threadgroup_barrier"), nargs=1,
         dtype="void", doc="``threadgroup_barrier(mem_flags::mem_<mem>)``: every thread of the "
                           "threadgroup waits.")
_declare("simdgroup_barrier", _simdgroup_mem, _rule_barrier("simdgroup_barrier"), nargs=1,
         dtype="void", doc="``simdgroup_barrier(mem_flags::mem_<mem>)``: every thread of the "
                           "SIMD group waits.")

# Every op this backend registers (short names; the op is tirx.metal.<name>).
OPS = tuple(spec.op_suffix for spec in INTRINSICS.specs())
__all__ += sorted(INTRINSICS.builders())


def register_ops() -> None:
    """Register every ``tirx.metal.*`` op with its MSL rule (the ``tvm_register_ops`` hook)."""
    INTRINSICS.register_ops()


# the builders (INTRINSICS.builders()) are this module's attributes too
__getattr__, __dir__ = INTRINSICS.module_hooks(globals())
