"""The rule contract of CUDA intrinsics and helpers for writing rules.

A *rule* turns one :class:`tvm.ir.Call` of a device intrinsic into CUDA C++::

    def rule(call: Call, emit: Emit) -> str

``emit(expr)`` renders a sub-expression to C++. The returned text is a C++ expression for an op
with a value, or a statement *without* its final ``;`` for a void op (the codegen adds it).
Rules that need more than one statement, or a value out of inline assembly, define a
``__device__ __forceinline__`` helper through ``emit.ctx.add_helper(name, source)`` and return
a call of it. ``emit.ctx`` is the :class:`CodegenContext` (README.md in this folder).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from tvm.error import TVMError
from tvm.ir import DataType, Op
from tvm.ir import expr as E

__all__ = [
    "CodegenContext",
    "Emit",
    "Rule",
    "arg_dtype",
    "arg_str",
    "asm",
    "bool_arg",
    "get_rule",
    "int_arg",
    "matrix_descriptor_rule",
    "str_arg",
    "table_arg",
]


class CodegenContext(Protocol):
    """What a rule may ask of the code generator besides rendering expressions."""

    arch: int | None  # SM version being compiled for (80, 90, 100), None when unknown

    def add_helper(self, name: str, source: str) -> str:
        """Define ``source`` once per translation unit under ``name`` (before kernels)."""

    def need_header(self, header: str) -> None:
        """Ask for ``#include <header>`` at the top of the translation unit (once)."""

    def c_type(self, dtype: DataType | str) -> str:
        """The C++ spelling of a data type (``float``, ``half``, ``unsigned int``...)."""


class Emit(Protocol):
    @property
    def ctx(self) -> CodegenContext: ...  # read-only, so any context implementation fits

    def __call__(self, expr: Any) -> str: ...


Rule = Callable[[E.Call, Emit], str]
V = TypeVar("V")

RULE_ATTR = "cuda.intrin_rule"  # the op attribute holding the rule(call, emit) of this package
# the op attribute holding the emulation rule(call, emit): C++ for the CPU emulator
EMULATE_ATTR = "cuda.emulate_rule"


def get_rule(op: Op | str) -> Rule:
    """The ``rule(call, emit)`` of a CUDA intrinsic."""
    op = Op.get(op) if isinstance(op, str) else op
    rule: Rule | None = op.get_attr(RULE_ATTR)
    if rule is None:
        raise KeyError(f"{op.name} is not a CUDA intrinsic of tvm-backend-cuda")
    return rule


def arg_dtype(i: int) -> Callable[[Sequence[Any]], DataType]:
    """Result type rule: the type of operand ``i``."""

    def rule(args: Sequence[Any]) -> DataType:
        return (
            args[i].dtype if len(args) > i and isinstance(args[i], E.PrimExpr) else DataType("void")
        )

    return rule


def arg_str(i: int, mapping: dict[str, str] | None = None) -> Callable[[Sequence[Any]], str]:
    """Result type rule: a string operand (mapped through ``mapping`` when given)."""

    def rule(args: Sequence[Any]) -> str:
        if len(args) <= i or not isinstance(args[i], E.StringImm):
            return "void"
        v = args[i].value
        return mapping.get(v, "void") if mapping is not None else v

    return rule


# -- helpers for rules ---------------------------------------------------------------------------
def fail(call: E.Call, why: str) -> TVMError:
    return TVMError(f"cannot generate CUDA for `{call.op.name}`: {why}")


def str_arg(call: E.Call, i: int) -> str:
    a = call.args[i]
    if isinstance(a, E.StringImm):
        return a.value
    raise fail(call, f"operand {i} must be a string literal, got {a!r}")


def table_arg(call: E.Call, i: int, table: Mapping[str, V], what: str) -> V:
    """The entry of ``table`` for string operand ``i``; else fails with ``what`` and the value
    (``unknown mma data type 'f7'``)."""
    t = str_arg(call, i)
    if t not in table:
        raise fail(call, f"{what} {t!r}")
    return table[t]


def int_arg(call: E.Call, i: int) -> int:
    a = call.args[i]
    if isinstance(a, E.IntImm):
        return int(a.value)
    raise fail(call, f"operand {i} must be an integer constant, got {a!r}")


def bool_arg(call: E.Call, i: int) -> bool:
    return bool(int_arg(call, i))


def is_const(a: Any, value: int | None = None) -> bool:
    return isinstance(a, E.IntImm) and (value is None or int(a.value) == value)


def asm(
    template: str, outputs: Sequence[str] = (), inputs: Sequence[str] = (), memory: bool = True
) -> str:
    """``asm volatile("template" : outputs : inputs : "memory")`` (escapes the template)."""
    text = template.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n\\t")
    parts = [f'"{text}"', ", ".join(outputs), ", ".join(inputs)]
    if memory:
        parts.append('"memory"')
    while len(parts) > 1 and not parts[-1]:
        parts.pop()
    head, *rest = parts
    return "asm volatile(" + head + "".join(f" : {x}" if x else " :" for x in rest) + ")"


def smem_addr(emit: Emit, a: Any) -> str:
    """A 32-bit shared-memory address operand for PTX from a pointer or an address value."""
    if isinstance(a, E.PrimExpr) and not a.dtype.is_handle:
        if isinstance(a, E.BufferLoad):  # an element of a buffer in shared memory
            return f"(unsigned)__cvta_generic_to_shared(&({emit(a)}))"
        return f"(unsigned)({emit(a)})"
    return f"(unsigned)__cvta_generic_to_shared((void*)({emit(a)}))"


def gaddr(emit: Emit, a: Any) -> str:
    """A 64-bit generic/global address operand from a pointer, a buffer element or an integer."""
    if isinstance(a, E.BufferLoad):
        return f"(unsigned long long)(&({emit(a)}))"
    return f"(unsigned long long)({emit(a)})"


def ptr(emit: Emit, a: Any, ctype: str) -> str:
    """``(ctype*)`` view of a pointer operand (or of the address of a buffer element)."""
    if isinstance(a, E.BufferLoad):
        return f"(({ctype}*)(&({emit(a)})))"
    return f"(({ctype}*)({emit(a)}))"


def lvalue(emit: Emit, a: Any, ctype: str) -> str:
    """A C++ lvalue of type ``ctype`` for a register operand: a buffer element or a pointer."""
    if isinstance(a, E.BufferLoad):
        return f"(*({ctype}*)(&({emit(a)})))"
    return f"(*({ctype}*)({emit(a)}))"


def u32(emit: Emit, a: Any) -> str:
    return f"(unsigned)({emit(a)})"


def helper(emit: Emit, name: str, source: str) -> str:
    emit.ctx.add_helper(name, source)
    return name


def cta_group(call: E.Call, i: int) -> int:
    g = int_arg(call, i)
    if g not in (1, 2):
        raise fail(call, f"cta_group must be 1 or 2, got {g}")
    return g


_TYPE_HEADERS = {
    "float16": "cuda_fp16.h",
    "bfloat16": "cuda_bf16.h",
    "float8_e4m3fn": "cuda_fp8.h",
    "float8_e5m2": "cuda_fp8.h",
}


def ctype(emit: Emit, dtype: Any) -> str:
    """``emit.ctx.c_type(dtype)``, asking for the header that declares it (half, bfloat16, fp8)."""
    header = _TYPE_HEADERS.get(str(DataType(dtype).element_of()))
    if header:
        emit.ctx.need_header(header)
    return emit.ctx.c_type(dtype)


def matrix_descriptor_rule(
    helper_name: str, what: str, layout_doc: str, decl: str, bits: str
) -> Rule:
    """The rule of an ``encode_matrix_descriptor(desc, addr, ldo, sdo, swizzle)``: a helper packs
    the start address (``>> 4``) and the leading/stride offsets, given in 16-byte units as the
    seed takes them (``ldo=1, sdo=64``: 16 and 1024 bytes), at bits 0, 16 and 32, ORed with
    ``bits`` (the layout from ``swizzle``, after the C declaration ``decl``;
    ``layout_doc`` says where the bits go)."""
    head = f"__device__ __forceinline__ unsigned long long {helper_name}("
    source = (
        f"// {what}: start address (>> 4), leading and stride offsets in 16-byte units,\n"
        f"// {layout_doc}.\n"
        f"{head}unsigned addr, unsigned ldo,\n"
        f"{' ' * len(head)}unsigned sdo, int swizzle) {{\n"
        f"  {decl}\n"
        "  return (unsigned long long)((addr & 0x3FFFFu) >> 4)\n"
        "         | ((unsigned long long)(ldo & 0x3FFFu) << 16)\n"
        f"         | ((unsigned long long)(sdo & 0x3FFFu) << 32) | {bits};\n"
        "}"
    )

    def rule(call: E.Call, emit: Emit) -> str:
        helper(emit, helper_name, source)
        desc, addr, ldo, sdo, swizzle = call.args
        return (
            f"*{ptr(emit, desc, 'unsigned long long')} = {helper_name}({smem_addr(emit, addr)}, "
            f"(unsigned)({emit(ldo)}), (unsigned)({emit(sdo)}), (int)({emit(swizzle)}))"
        )

    return rule
