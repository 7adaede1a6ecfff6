"""Two implementations of the rule contract's ``emit``: one over core's C-style code generator,
and a self-contained one that renders a single call (tests, docs, debugging)."""

from __future__ import annotations

import json
from typing import Any

from tvm.ir import DataType
from tvm.ir import expr as E
from tvm.ir.buffer import Buffer

from ._base import get_rule

_C_TYPES = {
    "bool": "bool",
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "long long",
    "uint8": "unsigned char",
    "uint16": "unsigned short",
    "uint32": "unsigned int",
    "uint64": "unsigned long long",
    "float16": "half",
    "bfloat16": "nv_bfloat16",
    "float32": "float",
    "float64": "double",
    "handle": "void*",
    "float8_e4m3fn": "__nv_fp8_e4m3",
    "float8_e5m2": "__nv_fp8_e5m2",
    "void": "void",
}


def c_type(dtype: DataType | str) -> str:
    dt = DataType(dtype)
    name = _C_TYPES.get(str(dt.element_of()))
    if name is None or dt.lanes != 1:
        raise TypeError(f"no CUDA C++ scalar type for {dt}")
    return name


class _CStyleContext:
    def __init__(self, cg: Any) -> None:
        self.cg = cg
        target = getattr(cg, "target", None)
        arch = getattr(target, "attrs", {}).get("arch") if target is not None else None
        self.arch: int | None = int("".join(c for c in arch if c.isdigit())) if arch else None

    def add_helper(self, name: str, source: str) -> str:
        return self.cg.add_helper(name, source)

    def need_header(self, header: str) -> None:
        need = getattr(self.cg, "need_header", None)
        if need is not None:
            need(header)
        else:  # a plain C-style printer: an include among the helpers, before any use
            self.cg.add_helper(f"#include <{header}>", f"#include <{header}>")

    def c_type(self, dtype: DataType | str) -> str:
        if DataType(dtype).is_handle:
            return "void*"
        return self.cg.c_type(dtype)


class CStyleEmit:
    """``emit`` over a :class:`tvm.codegen.c_style.CodegenCStyle` (what core's base calls)."""

    def __init__(self, cg: Any) -> None:
        self.cg = cg
        self.ctx = _CStyleContext(cg)

    def __call__(self, expr: Any) -> str:
        return self.cg.print_expr(expr)


class _SnippetContext:
    def __init__(self, arch: int | None) -> None:
        self.arch = arch
        self.helpers: dict[str, str] = {}
        self.headers: list[str] = []

    def add_helper(self, name: str, source: str) -> str:
        self.helpers.setdefault(name, source)
        return name

    def need_header(self, header: str) -> None:
        if header not in self.headers:
            self.headers.append(header)

    def c_type(self, dtype: DataType | str) -> str:
        return c_type(dtype)


_BIN = {
    E.Add: "+",
    E.Sub: "-",
    E.Mul: "*",
    E.Div: "/",
    E.Mod: "%",
    E.EQ: "==",
    E.NE: "!=",
    E.LT: "<",
    E.LE: "<=",
    E.GT: ">",
    E.GE: ">=",
    E.And: "&&",
    E.Or: "||",
}


class SnippetEmit:
    """Renders variables by name, ``A[i]`` for a one-index buffer element, literals, arithmetic,
    casts, ``address_of`` and nested intrinsic calls: enough for one intrinsic call."""

    def __init__(self, arch: int | None = None) -> None:
        self.ctx = _SnippetContext(arch)

    def __call__(self, expr: Any) -> str:
        e = expr
        if isinstance(e, E.StringImm):
            return json.dumps(e.value)
        if isinstance(e, E.IntImm):
            if e.dtype.is_bool:
                return "true" if e.value else "false"
            suffix = {"uint32": "u", "int64": "ll", "uint64": "ull"}.get(str(e.dtype), "")
            return f"{e.value}{suffix}"
        if isinstance(e, E.FloatImm):
            return f"{e.value!r}f" if e.dtype.bits == 32 else repr(e.value)
        if isinstance(e, E.Var):
            return e.name
        if isinstance(e, Buffer):
            return e.data.name
        if isinstance(e, E.BufferLoad):
            return f"{e.buffer.data.name}[{', '.join(self(i) for i in e.indices)}]"
        if isinstance(e, E.Cast):
            return f"(({c_type(e.dtype)})({self(e.value)}))"
        if type(e) in _BIN:
            return f"({self(e.a)} {_BIN[type(e)]} {self(e.b)})"
        if isinstance(e, E.Call):
            if e.op.name == "tirx.address_of":
                return f"(&({self(e.args[0])}))"
            return get_rule(e.op)(e, self)
        raise TypeError(f"SnippetEmit cannot render {type(e).__name__}")


def render(call: E.Call, arch: int | None = None) -> tuple[str, dict[str, str], list[str]]:
    """``(text, helpers, headers)`` of one intrinsic call."""
    emit = SnippetEmit(arch)
    text = emit(call)
    return text, dict(emit.ctx.helpers), list(emit.ctx.headers)
