"""A C-style source printer for lowered IR, specialised by data for C, CUDA, Metal, ...

The input is the module after the target's finalize passes (``docs/lowering.md`` section 5): flat
buffers, loops (serial, parallel, vectorized, unrolled, thread-bound), ``BufferLoad`` and
``BufferStore``, lets, ifs, asserts, allocations and calls of builtin ops or device intrinsics.
No tile-primitive call and no ``ScopeIdDef`` is left.

How a backend plugs in
----------------------
Subclass :class:`CodegenCStyle` and change *data* first:

* ``target_kind``: the key of per-op rules (``op.get_codegen(target_kind)``).
* ``kernel_prefix`` / ``function_prefix`` / ``kernel_return_type`` / ``function_return_type``:
  what comes before a kernel's or an exported host function's name (``extern "C" __global__``,
  ``kernel``), and the return types.
* ``restrict_keyword`` (``__restrict__``), ``pointer_qualifiers`` and ``storage_qualifiers`` (the
  address-space qualifier of a pointer parameter / of an allocation, per storage scope, e.g.
  ``{"shared": "__shared__ "}`` or Metal's ``{"global": "device "}``), ``align_attribute``.
* ``thread_index_names``: thread tag -> the builtin that reads it (``"threadIdx.x"`` ->
  ``"threadIdx.x"``, or Metal's ``"thread_position_in_threadgroup.x"``); a thread-bound loop
  whose tag is here becomes ``const int tx = <builtin>;``.
* ``type_names``, ``half_type`` / ``bfloat16_type`` (``None`` = no native type: values are
  computed in ``float`` and stored as ``uint16_t`` through conversion helpers), ``barrier``.
* ``unroll_pragma``, ``vectorize_pragma``.
* ``kernels_only`` (print the kernels of a split module, not its host part), ``helper_prefix``
  (``static __device__ __forceinline__`` for the C helpers of device code), ``int64_suffix``
  (``LL``: 64-bit literals without ``<stdint.h>`` macros), ``typed_handles`` (a handle
  parameter with a known pointer type is a typed buffer pointer), ``float16_helpers`` /
  ``bfloat16_helpers`` (the conversions of emulated 16-bit floats).
* ``op_templates``: builtin op name -> rule. A rule is a template string (``"expf({0})"``; the
  printed arguments are ``{0}``, ``{1}``...; ``{dtype}`` is the C result type), a dict keyed by
  data type (``"float32"``, then the type class ``"float"``/``"int"``/``"uint"``/``"bool"``, then
  ``"default"``), or a callable ``rule(codegen, call, args) -> str``. Copy the dict and update it
  in a subclass; a 16-bit float missing from a dict is computed through its ``float32`` entry.

Ops print through ``op.get_codegen(target_kind)`` first (same rule forms), then through
``op_templates``; an op with neither is a :class:`~tvm.error.TVMError` naming the op and the
target. Then override *methods* only where the structure differs: :meth:`print_thread_binding`
(host: loops; GPU: index reads), :meth:`print_parallel_for`, :meth:`print_alloc`,
:meth:`assert_fail_lines`, :meth:`function_header`, :meth:`preamble_lines`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

from ..arith.linear import affine_range
from ..error import CodegenError, located
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer
from ..ir.dtype import DataType
from ..ir.function import IRModule, PrimFunc
from ..ir.span import Span
from ..ir.visitor import substitute
from .bounds import BOUNDS_MESSAGE, Division, bounds_check_enabled, statement_checks
from .source_map import record_function

__all__ = ["CodegenCStyle", "CudaStyleCodegen", "FunctionInfo", "OpTemplate", "ParamInfo",
           "const_dims"]

OpRule = Union[str, Callable[["CodegenCStyle", E.Call, list[str]], str]]
OpTemplate = Union[OpRule, Mapping[str, OpRule]]

_C_KEYWORDS = frozenset(["auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true", "false", "main", "NULL", "abs", "exp", "exp2", "log", "log2", "log10", "sqrt", "sin", "cos", "tan", "pow", "fmod", "floor", "ceil", "round", "trunc", "min", "max", "fabs", "malloc", "free", "memcpy", "memset", "printf", "errno", "signbit", "isnan", "isinf"])


@dataclass
class ParamInfo:
    """One C parameter of a generated function.

    ``kind`` is ``buffer`` (a pointer to the buffer's data), ``scalar``, ``handle`` (an opaque
    pointer) or ``shape_var`` (a symbolic extent or stride that the caller derives from the
    buffers: ``source`` lists ``(param index, "shape" | "strides", dim)`` places to read it from).
    ``shape``/``strides`` entries are ints, C names of shape variables, or ``None`` (an expression
    the runtime cannot check).
    """

    name: str
    c_name: str
    kind: str
    dtype: str
    shape: list[Any] | None = None
    strides: list[Any] | None = None
    source: list[tuple[int, str, int]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "c_name": self.c_name, "kind": self.kind, "dtype": self.dtype,
                "shape": self.shape, "strides": self.strides,
                "source": [list(s) for s in self.source]}

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> ParamInfo:
        return ParamInfo(d["name"], d["c_name"], d["kind"], d["dtype"], d.get("shape"),
                         d.get("strides"), [tuple(s) for s in d.get("source", [])])  # type: ignore[misc]


@dataclass
class FunctionInfo:
    """A generated function: its IR name, C symbol, parameters (in C order) and kind."""

    name: str
    symbol: str
    params: list[ParamInfo]
    is_kernel: bool = False

    @property
    def user_params(self) -> list[ParamInfo]:
        """The parameters the caller passes (everything but derived shape variables)."""
        return [p for p in self.params if p.kind != "shape_var"]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "symbol": self.symbol, "is_kernel": self.is_kernel,
                "params": [p.to_dict() for p in self.params]}

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> FunctionInfo:
        return FunctionInfo(d["name"], d["symbol"], [ParamInfo.from_dict(p) for p in d["params"]],
                            bool(d.get("is_kernel", False)))


# -- rules of builtins that need more than a template --------------------------------------------


def _rule_address_of(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
    load = call.args[0]
    if not isinstance(load, E.BufferLoad):
        raise CodegenError(f"tirx.address_of expects a buffer load, got {type(load).__name__}")
    return f"(&{cg.buffer_ptr(load.buffer)}[{cg.flat_index(load.buffer, load.indices)}])"


def _rule_call_extern(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
    name = call.args[1].value if isinstance(call.args[1], E.StringImm) else str(call.args[1])
    return f"{name}({', '.join(args[2:])})"


def _rule_reinterpret(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
    src = call.args[1].dtype
    dst = call.dtype
    fn = f"tvm_reinterpret_{src}_to_{dst}"
    st, dt = cg.storage_type(src), cg.storage_type(dst)
    cg.add_helper(fn, f"static inline {dt} {fn}({st} x) {{ {dt} y; memcpy(&y, &x, sizeof(y)); "
                      f"return y; }}")
    value = args[1]
    if cg.is_emulated(src):
        value = f"{cg.to_storage_fn(src)}({value})"
    out = f"{fn}({value})"
    if cg.is_emulated(dst):
        out = f"{cg.from_storage_fn(dst)}({out})"
    return out


def _rule_abs(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
    dt = call.dtype
    if dt.is_float:
        return cg.render_math(call, {"float32": "fabsf({0})", "float64": "fabs({0})"}, args)
    if dt.is_uint or dt.is_bool:
        return args[0]
    return f"((({args[0]}) < 0) ? (-({args[0]})) : ({args[0]}))"


def _rule_popcount(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
    suffix = "ll" if call.dtype.bits == 64 else ""
    return f"(({cg.c_type(call.dtype)})__builtin_popcount{suffix}({args[0]}))"


def _rule_clz(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
    suffix = "ll" if call.dtype.bits == 64 else ""
    bits = 64 if call.dtype.bits == 64 else 32
    return f"(({cg.c_type(call.dtype)})(({args[0]}) == 0 ? {bits} : __builtin_clz{suffix}({args[0]})))"


def _f(name32: str, name64: str) -> dict[str, OpRule]:
    return {"float32": name32, "float64": name64}


_MATH_TEMPLATES: dict[str, OpTemplate] = {
    "tirx.exp": _f("expf({0})", "exp({0})"),
    "tirx.exp2": _f("exp2f({0})", "exp2({0})"),
    "tirx.exp10": _f("powf(10.0f, {0})", "pow(10.0, {0})"),
    "tirx.log": _f("logf({0})", "log({0})"),
    "tirx.log2": _f("log2f({0})", "log2({0})"),
    "tirx.log10": _f("log10f({0})", "log10({0})"),
    "tirx.log1p": _f("log1pf({0})", "log1p({0})"),
    "tirx.sqrt": _f("sqrtf({0})", "sqrt({0})"),
    "tirx.rsqrt": _f("(1.0f / sqrtf({0}))", "(1.0 / sqrt({0}))"),
    "tirx.sin": _f("sinf({0})", "sin({0})"),
    "tirx.cos": _f("cosf({0})", "cos({0})"),
    "tirx.tan": _f("tanf({0})", "tan({0})"),
    "tirx.asin": _f("asinf({0})", "asin({0})"),
    "tirx.acos": _f("acosf({0})", "acos({0})"),
    "tirx.atan": _f("atanf({0})", "atan({0})"),
    "tirx.sinh": _f("sinhf({0})", "sinh({0})"),
    "tirx.cosh": _f("coshf({0})", "cosh({0})"),
    "tirx.tanh": _f("tanhf({0})", "tanh({0})"),
    "tirx.sigmoid": _f("(1.0f / (1.0f + expf(-({0}))))", "(1.0 / (1.0 + exp(-({0}))))"),
    "tirx.erf": _f("erff({0})", "erf({0})"),
    "tirx.floor": _f("floorf({0})", "floor({0})"),
    "tirx.ceil": _f("ceilf({0})", "ceil({0})"),
    # round() rounds half to even, like numpy.round: nearbyint in the default rounding mode.
    "tirx.round": _f("nearbyintf({0})", "nearbyint({0})"),
    "tirx.nearbyint": _f("nearbyintf({0})", "nearbyint({0})"),
    "tirx.trunc": _f("truncf({0})", "trunc({0})"),
    "tirx.fabs": _f("fabsf({0})", "fabs({0})"),
    "tirx.pow": _f("powf({0}, {1})", "pow({0}, {1})"),
    "tirx.fmod": _f("fmodf({0}, {1})", "fmod({0}, {1})"),
    "tirx.atan2": _f("atan2f({0}, {1})", "atan2({0}, {1})"),
    "tirx.hypot": _f("hypotf({0}, {1})", "hypot({0}, {1})"),
    "tirx.copysign": _f("copysignf({0}, {1})", "copysign({0}, {1})"),
    "tirx.nextafter": _f("nextafterf({0}, {1})", "nextafter({0}, {1})"),
    "tirx.fma": {"float32": "fmaf({0}, {1}, {2})", "float64": "fma({0}, {1}, {2})",
                 "default": "(({0}) * ({1}) + ({2}))"},
    "tirx.isnan": {"float": "isnan({0})"},
    "tirx.isinf": {"float": "isinf({0})"},
    "tirx.isfinite": {"float": "isfinite({0})"},
}

_BASE_TEMPLATES: dict[str, OpTemplate] = {
    **_MATH_TEMPLATES,
    "tirx.abs": _rule_abs,
    "tirx.popcount": _rule_popcount,
    "tirx.clz": _rule_clz,
    "tirx.bitwise_and": "(({0}) & ({1}))",
    "tirx.bitwise_or": "(({0}) | ({1}))",
    "tirx.bitwise_xor": "(({0}) ^ ({1}))",
    "tirx.bitwise_not": "(~({0}))",
    "tirx.shift_left": "(({0}) << ({1}))",
    "tirx.shift_right": "(({0}) >> ({1}))",
    "tirx.if_then_else": "(({0}) ? ({1}) : ({2}))",
    "tirx.likely": "({0})",
    "tirx.reinterpret": _rule_reinterpret,
    "tirx.call_extern": _rule_call_extern,
    "tirx.address_of": _rule_address_of,
    "tirx.continue_loop": "continue",
    "tirx.break_loop": "break",
    "tirx.device_entry": "",
    "tirx.tvm_kernel_replace_point": "",
}


# -- C helpers used on demand ---------------------------------------------------------------------

_BF16_HELPERS = (
    ("tvm_bf16_to_f32", "static inline float tvm_bf16_to_f32(uint16_t v) {\n"
     "  uint32_t u = (uint32_t)v << 16; float f; memcpy(&f, &u, sizeof(f)); return f;\n}"),
    ("tvm_f32_to_bf16", "static inline uint16_t tvm_f32_to_bf16(float f) {\n"
     "  uint32_t u; memcpy(&u, &f, sizeof(u));\n"
     "  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);\n"
     "  u += 0x7fffu + ((u >> 16) & 1u);  /* round to nearest even */\n"
     "  return (uint16_t)(u >> 16);\n}"),
    ("tvm_round_bf16", "static inline float tvm_round_bf16(float f) "
     "{ return tvm_bf16_to_f32(tvm_f32_to_bf16(f)); }"),
)

_F16_HELPERS = (
    ("tvm_f16_to_f32", "static inline float tvm_f16_to_f32(uint16_t h) {\n"
     "  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;\n"
     "  float f;\n"
     "  if (e == 0) {\n"
     "    f = (float)m * 5.9604644775390625e-8f;  /* m * 2^-24 */\n"
     "    memcpy(&u, &f, sizeof(u)); u |= sign;\n"
     "  } else if (e == 31) {\n"
     "    u = sign | 0x7f800000u | (m << 13);\n"
     "  } else {\n"
     "    u = sign | ((e + 112u) << 23) | (m << 13);\n"
     "  }\n"
     "  memcpy(&f, &u, sizeof(f)); return f;\n}"),
    ("tvm_f32_to_f16", "static inline uint16_t tvm_f32_to_f16(float f) {\n"
     "  uint32_t u; memcpy(&u, &f, sizeof(u));\n"
     "  uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;\n"
     "  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);\n"
     "  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  /* rounds to infinity */\n"
     "  if (a < 0x38800000u) {  /* subnormal half: round to a multiple of 2^-24 */\n"
     "    float af; memcpy(&af, &a, sizeof(af));\n"
     "    return (uint16_t)(sign | (uint32_t)nearbyintf(af * 16777216.0f));\n"
     "  }\n"
     "  uint32_t h = (((a >> 23) - 112u) << 10) | ((a & 0x7fffffu) >> 13), rest = a & 0x1fffu;\n"
     "  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h += 1u;\n"
     "  return (uint16_t)(sign | h);\n}"),
    ("tvm_round_f16", "static inline float tvm_round_f16(float f) "
     "{ return tvm_f16_to_f32(tvm_f32_to_f16(f)); }"),
)


def _floordiv_helpers(ctype: str, suffix: str) -> list[tuple[str, str]]:
    return [
        (f"tvm_floordiv_{suffix}",
         f"static inline {ctype} tvm_floordiv_{suffix}({ctype} a, {ctype} b) {{\n"
         f"  {ctype} q = a / b, r = a % b;\n"
         f"  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;\n}}"),
        (f"tvm_floormod_{suffix}",
         f"static inline {ctype} tvm_floormod_{suffix}({ctype} a, {ctype} b) {{\n"
         f"  {ctype} r = a % b;\n"
         f"  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}}"),
    ]


class CodegenCStyle:
    """Prints lowered PrimFuncs as C-family source. See the module docstring for extension."""

    # -- data a subclass changes ------------------------------------------------------------
    target_kind: ClassVar[str] = "c"
    kernel_prefix: ClassVar[str] = ""
    function_prefix: ClassVar[str] = ""
    kernel_return_type: ClassVar[str] = "void"
    function_return_type: ClassVar[str] = "int32_t"
    restrict_keyword: ClassVar[str] = "restrict"
    pointer_qualifiers: ClassVar[dict[str, str]] = {}
    storage_qualifiers: ClassVar[dict[str, str]] = {}
    align_attribute: ClassVar[str] = "__attribute__((aligned({n})))"
    alloc_alignment: ClassVar[int] = 64
    # Allocations in these scopes (or smaller than max_stack_bytes) are stack/static arrays.
    stack_scopes: ClassVar[frozenset[str]] = frozenset({"local", "shared", "shared.dyn"})
    max_stack_bytes: ClassVar[int] = 16 * 1024
    thread_index_names: ClassVar[dict[str, str]] = {}
    type_names: ClassVar[dict[str, str]] = {
        "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
        "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
        "float32": "float", "float64": "double", "bool": "bool", "handle": "void*", "void": "void",
    }
    # Instance-overridable: the host picks _Float16 only when its compiler supports it.
    half_type: str | None = None
    bfloat16_type: str | None = None
    barrier: ClassVar[str | None] = None
    unroll_pragma: ClassVar[str | None] = "#pragma unroll"
    vectorize_pragma: ClassVar[str | None] = None
    op_templates: ClassVar[dict[str, OpTemplate]] = _BASE_TEMPLATES
    # What TVM_BOUNDS_FAIL(message) does before a failed bounds check takes the assert path
    # (CUDA: printf, as the trap that follows loses the message); a target may define the
    # macro itself before the source (the Metal emulator records the message).
    bounds_report: ClassVar[str] = "((void)0)"
    # (name, definition) of the helpers that convert emulated 16-bit floats (``to_storage_fn``,
    # ``from_storage_fn``, ``round_fn``); a dialect without memcpy supplies its own.
    float16_helpers: ClassVar[tuple[tuple[str, str], ...]] = _F16_HELPERS
    bfloat16_helpers: ClassVar[tuple[tuple[str, str], ...]] = _BF16_HELPERS
    # Device dialects: print only the kernels of a split module (the host part is the
    # executable's launch plan), every other function as a kernel.
    kernels_only: ClassVar[bool] = False
    # What C helpers (written "static inline ...") start with instead (CUDA, HIP: device code).
    helper_prefix: ClassVar[str] = "static inline "
    # per function being printed: the span of the statement behind each line, and the current
    _line_spans: list[Span | None]
    _span: Span | None
    # The suffix of 64-bit integer literals ("LL" -> 5LL, 5ULL); None: INT64_C()/UINT64_C().
    int64_suffix: ClassVar[str | None] = None
    # A handle parameter whose pointer type is known is a typed buffer pointer (a kernel
    # receives buffers as their data handles).
    typed_handles: ClassVar[bool] = False
    includes: ClassVar[tuple[str, ...]] = (
        "stdint.h", "stdbool.h", "stddef.h", "string.h", "math.h",
    )

    _lines: list[str]
    _indent: int
    _cur_info: FunctionInfo

    def __init__(self, target: Any = None) -> None:
        self.target = target
        #: check every buffer access at run time (``bounds_check=True`` / TVM_BOUNDS_CHECK=1)
        self.bounds_check = bounds_check_enabled()
        self.functions: list[FunctionInfo] = []
        self._helpers: dict[str, str] = {}
        self._chunks: list[str] = []
        self._global_names: set[str] = set()
        self._reset_function_state()

    # -- public entry points ------------------------------------------------------------------
    def generate(self, mod: IRModule | PrimFunc) -> str:
        """The whole translation unit for ``mod``."""
        if isinstance(mod, PrimFunc):
            mod = IRModule.from_expr(mod)
        for name, func in mod.functions.items():
            if self.kernels_only and func.attrs.get("tirx.is_host"):
                continue
            if self.kernels_only and not func.attrs.get("tirx.is_kernel"):
                func = func.with_attr("tirx.is_kernel", True)
            self.add_function(func, name)
        return self.finish()

    def add_function(self, func: PrimFunc, name: str | None = None) -> FunctionInfo:
        self._reset_function_state()
        name = str(func.attrs.get("global_symbol", name or func.name))
        symbol = self._symbol_name(name)
        is_kernel = bool(func.attrs.get("tirx.is_kernel", False))
        info = FunctionInfo(name, symbol, self._collect_params(func), is_kernel)
        self._cur_info = info
        self._indent = 1
        self.print_function_body(func)
        body, spans = self._lines, self._line_spans
        self._lines, self._line_spans = [], []
        header = self.function_header(info)
        text = "\n".join([header + " {", *body, "}"])
        self._chunks.append(text)
        record_function(text, [None, *spans, None])  # for compiler errors at script lines
        self.functions.append(info)
        return info

    def finish(self) -> str:
        parts = ["\n".join(self.preamble_lines())]
        if self._helpers:
            parts.append("\n\n".join(self._helpers.values()))
        parts.extend(self._chunks)
        return "\n\n".join(p for p in parts if p) + "\n"

    # -- overridable structure ------------------------------------------------------------------
    def preamble_lines(self) -> list[str]:
        return [f"#include <{h}>" for h in self.includes]

    def function_header(self, info: FunctionInfo) -> str:
        params = ", ".join(self.param_decl(p) for p in info.params) or "void"
        if info.is_kernel:
            return f"{self.kernel_prefix}{self.kernel_return_type} {info.symbol}({params})"
        return f"{self.function_prefix}{self.function_return_type} {info.symbol}({params})"

    def param_decl(self, p: ParamInfo) -> str:
        dt = DataType(p.dtype)
        if p.kind == "buffer":
            qual = self.pointer_qualifiers.get("global", "")
            restrict = f" {self.restrict_keyword}" if self.restrict_keyword else ""
            return f"{qual}{self.storage_type(dt)}*{restrict} {p.c_name}"
        if p.kind == "handle":
            return f"void* {p.c_name}"
        return f"{self.c_type(dt)} {p.c_name}"

    def print_function_body(self, func: PrimFunc) -> None:
        self._push_scope()
        self.print_stmt(func.body)
        self._pop_scope()
        if not self._cur_info.is_kernel and self.function_return_type != "void":
            self.emit("return 0;")

    def assert_fail_lines(self, message: str) -> list[str]:
        """What a failed assert does (host: record the message and return an error code)."""
        return [f"return tvm_fail({self.c_string(message)});"]

    def print_thread_binding(self, loop: S.For) -> None:
        """A thread-bound loop: read the thread index (GPU). The host prints a loop instead."""
        tag = loop.thread_tag or ""
        builtin = self.thread_index_names.get(tag)
        if builtin is None:
            raise CodegenError(f"target {self.target_kind!r} has no thread index {tag!r} "
                           f"(loop over `{loop.loop_var.name}`)")
        name = self.var_name(loop.loop_var)
        self._nonneg_vars.add(id(loop.loop_var))
        self.emit(f"const {self.c_type(loop.loop_var.dtype)} {name} = "
                  f"({self.c_type(loop.loop_var.dtype)}){builtin};")
        self.print_stmt(loop.body)

    def print_parallel_for(self, loop: S.For) -> None:
        """A parallel loop (the host prints OpenMP); by default a serial loop."""
        self.print_serial_for(loop)

    def print_alloc(self, buffer: Buffer, annotations: Mapping[str, Any]) -> None:
        name = self.var_name(buffer.data, buffer.name)
        self._buffer_ptrs[id(buffer)] = name
        ctype = self.storage_type(buffer.dtype)
        n = _const_numel(buffer)
        if n is not None and (buffer.scope in self.stack_scopes
                              or n * buffer.dtype.bytes <= self.max_stack_bytes):
            qual = self.storage_qualifiers.get(buffer.scope, "")
            align = " " + self.align_attribute.format(n=self.alloc_alignment) \
                if self.align_attribute else ""
            self.emit(f"{qual}{ctype} {name}[{max(n, 1)}]{align};")
            return
        self.print_heap_alloc(buffer, name, ctype)

    def alloc_bytes(self, buffer: Buffer, name: str) -> str:
        """The byte size of a heap allocation of ``buffer``, as C. A constant size beyond the
        address space is an error now; a symbolic one is multiplied out factor by factor with
        overflow checks into a ``size_t`` (a negative or overflowing size fails like an
        assert), so a huge shape can never become a small allocation."""
        ctype = self.storage_type(buffer.dtype)
        n = _const_numel(buffer)
        if n is not None:
            if n * buffer.dtype.bytes > _MAX_ALLOC_BYTES:
                raise CodegenError(f"buffer `{buffer.name}` needs {n * buffer.dtype.bytes} bytes "
                                   f"(shape {[_const_int(d) for d in buffer.shape]}), more than "
                                   "any address space holds")
            return f"(size_t)({n}) * sizeof({ctype})"
        self.add_helper("tvm_size_mul", _SIZE_MUL_HELPER)
        var = self._fresh(f"{name}_nbytes")
        factors = [f for dim in buffer.shape for f in _factors(dim)]
        checks = " || ".join(f"tvm_size_mul(&{var}, (int64_t)({_strip(self.print_expr(f))}))"
                             for f in factors)
        self.emit(f"size_t {var} = sizeof({ctype});")
        self.emit(f"if ({checks}) {{")
        self._indent += 1
        for line in self.assert_fail_lines(f"buffer {buffer.name}: the allocation size overflows "
                                           "or is negative"):
            self.emit(line)
        self._indent -= 1
        self.emit("}")
        return var

    def print_heap_alloc(self, buffer: Buffer, name: str, ctype: str) -> None:
        raise CodegenError(f"target {self.target_kind!r} cannot allocate buffer `{buffer.name}` "
                       f"(scope {buffer.scope!r}) of dynamic or large size")

    # -- helpers for rules ------------------------------------------------------------------------
    def add_helper(self, name: str, code: str) -> str:
        """Add a C helper definition (once per translation unit); returns its name."""
        if code.startswith("static inline ") and self.helper_prefix != "static inline ":
            code = self.helper_prefix + code[len("static inline "):]
        self._helpers.setdefault(name, code)
        return name

    def emit(self, line: str) -> None:
        self._lines.append("  " * self._indent + line if line else "")
        self._line_spans.append(self._span)

    def c_string(self, text: str) -> str:
        out = []
        for byte in text.encode("utf-8"):
            ch = chr(byte)
            if ch in '"\\':
                out.append("\\" + ch)
            elif 32 <= byte < 127:
                out.append(ch)
            else:
                out.append(f"\\{byte:03o}")
        return '"' + "".join(out) + '"'

    # -- types ------------------------------------------------------------------------------------
    def is_emulated(self, dt: DataType) -> bool:
        """A 16-bit float without a native type here: computed in float, stored as uint16_t."""
        dt = dt.element_of()
        if dt.code == "bfloat":
            return self.bfloat16_type is None
        if dt.code == "float" and dt.bits == 16:
            return self.half_type is None
        return False

    def _emul_suffix(self, dt: DataType) -> str:
        return "bf16" if dt.code == "bfloat" else "f16"

    def to_storage_fn(self, dt: DataType) -> str:
        self._need_emulation(dt)
        return f"tvm_f32_to_{self._emul_suffix(dt)}"

    def from_storage_fn(self, dt: DataType) -> str:
        self._need_emulation(dt)
        return f"tvm_{self._emul_suffix(dt)}_to_f32"

    def round_fn(self, dt: DataType) -> str:
        self._need_emulation(dt)
        return f"tvm_round_{self._emul_suffix(dt)}"

    def _need_emulation(self, dt: DataType) -> None:
        for name, code in (self.bfloat16_helpers if dt.code == "bfloat" else self.float16_helpers):
            self.add_helper(name, code)

    def c_type(self, dt: DataType | str) -> str:
        """The C type of a *value* of ``dt`` (emulated 16-bit floats compute in ``float``)."""
        dt = DataType(dt)
        if dt.lanes > 1:
            raise CodegenError(f"target {self.target_kind!r}: vector type {dt} has no C spelling here; "
                           "vector expressions are printed lane by lane")
        if self.is_emulated(dt):
            return "float"
        return self.storage_type(dt)

    def storage_type(self, dt: DataType | str) -> str:
        """The C type of ``dt`` in memory."""
        dt = DataType(dt).element_of()
        if dt.code == "bfloat":
            return self.bfloat16_type or "uint16_t"
        if dt.code == "float" and dt.bits == 16:
            return self.half_type or "uint16_t"
        name = self.type_names.get(str(dt))
        if name is None:
            raise CodegenError(f"data type {dt} is not supported by target {self.target_kind!r}")
        return name

    # -- names ------------------------------------------------------------------------------------
    def _reset_function_state(self) -> None:
        self._lines = []
        self._line_spans = []
        self._span = None
        self._indent = 0
        self._names: dict[int, str] = {}
        self._used: set[str] = set(self._global_names)
        self._buffer_ptrs: dict[int, str] = {}
        self._nonneg_vars: set[int] = set()
        self._ranges: dict[int, tuple[int, int]] = {}  # constant ranges of enclosing loops
        self._scopes: list[list[str]] = []
        self._parallel: list[str] = []
        self._label_counter = 0

    def _sanitize(self, hint: str) -> str:
        name = re.sub(r"\W", "_", hint) or "v"
        if name[0].isdigit():
            name = "v_" + name
        if name in _C_KEYWORDS or name.startswith("tvm_") or name.startswith("__"):
            name = name.lstrip("_") + "_"
            if name in _C_KEYWORDS or name.startswith("tvm_"):
                name = "v_" + name
        return name

    def _fresh(self, hint: str) -> str:
        base = self._sanitize(hint)
        name, i = base, 1
        while name in self._used:
            name = f"{base}_{i}"
            i += 1
        self._used.add(name)
        return name

    def _symbol_name(self, name: str) -> str:
        symbol = self._fresh(name)
        self._global_names.add(symbol)
        return symbol

    def var_name(self, var: E.Var, hint: str | None = None) -> str:
        """The C name of ``var`` (allocated on first use, unique within the function)."""
        found = self._names.get(id(var))
        if found is None:
            found = self._fresh(hint or var.name)
            self._names[id(var)] = found
        return found

    def buffer_ptr(self, buffer: Buffer) -> str:
        ptr = self._buffer_ptrs.get(id(buffer))
        return ptr if ptr is not None else self.var_name(buffer.data, buffer.name)

    # -- parameters -------------------------------------------------------------------------------
    def _collect_params(self, func: PrimFunc) -> list[ParamInfo]:
        params: list[ParamInfo] = []
        for p in func.params:
            buf = func.buffer_map.get(p)
            if buf is not None:
                name = self.var_name(buf.data, buf.name)
                self._names[id(p)] = name
                params.append(ParamInfo(buf.name, name, "buffer", str(buf.dtype)))
            elif p.dtype.is_handle and self.typed_handles and p.ptr_dtype is not None:
                params.append(ParamInfo(p.name, self.var_name(p), "buffer",
                                        str(p.ptr_dtype.element_of())))
            elif p.dtype.is_handle:
                params.append(ParamInfo(p.name, self.var_name(p), "handle", "handle"))
            else:
                params.append(ParamInfo(p.name, self.var_name(p), "scalar", str(p.dtype)))
        shape_vars: dict[int, ParamInfo] = {}
        for index, p in enumerate(func.params):
            buf = func.buffer_map.get(p)
            if buf is None:
                continue
            params[index].shape = [self._dim(d, index, "shape", k, shape_vars, params)
                                   for k, d in enumerate(buf.shape)]
            if buf.strides:
                params[index].strides = [self._dim(d, index, "strides", k, shape_vars, params)
                                         for k, d in enumerate(buf.strides)]
        params.extend(shape_vars.values())
        return params

    def _dim(self, d: E.PrimExpr, index: int, where: str, k: int,
             shape_vars: dict[int, ParamInfo], params: list[ParamInfo]) -> Any:
        if isinstance(d, E.IntImm):
            return d.value
        if not isinstance(d, E.Var):
            return None
        self._nonneg_vars.add(id(d))
        known = id(d) in self._names
        name = self.var_name(d)
        if known and id(d) not in shape_vars:
            for p in params:  # a scalar parameter: the runtime checks it against the array
                if p.c_name == name:
                    p.source.append((index, where, k))
            return name
        info = shape_vars.get(id(d))
        if info is None:
            info = shape_vars[id(d)] = ParamInfo(d.name, name, "shape_var", str(d.dtype))
        info.source.append((index, where, k))
        return name

    # -- scopes -----------------------------------------------------------------------------------
    def _push_scope(self) -> None:
        self._scopes.append([])

    def _pop_scope(self) -> None:
        for line in reversed(self._scopes.pop()):
            self.emit(line)

    # -- statements -------------------------------------------------------------------------------
    def print_stmt(self, stmt: S.Stmt) -> None:
        if (isinstance(stmt, S.Evaluate) and isinstance(stmt.value, E.Call)
                and stmt.value.op.name == "tirx.assume"):
            return  # a fact for the analyzer (index widths), no code
        method = getattr(self, f"stmt_{type(stmt).__name__}", None)
        if method is None:
            raise CodegenError(f"target {self.target_kind!r}: codegen cannot print a "
                           f"{type(stmt).__name__} statement")
        outer = self._span
        self._span = stmt.span or outer  # the lines printed now come from this statement
        try:
            if self.bounds_check:
                self.print_bounds_checks(stmt)
            method(stmt)
        finally:
            self._span = outer

    # -- run-time bounds checks ---------------------------------------------------------------
    def print_bounds_checks(self, stmt: S.Stmt) -> None:
        """Before ``stmt``, check every access it makes: each index against its dimension's
        extent, under the conditions the access runs under. A failed check reports through
        ``TVM_BOUNDS_FAIL(message)`` (``bounds_report``; a no-op unless the target defines it)
        and then does what a failed assert does (host: the function returns the error)."""
        seen: set[str] = set()
        for access in statement_checks(stmt):
            if isinstance(access, Division):
                self._print_division_check(access, seen)
                continue
            buf = access.buffer
            if len(access.indices) != len(buf.shape):
                continue  # a layout buffer read by its memory offset: no per-dimension extent
            lanes = max(i.dtype.lanes for i in access.indices)
            for lane in range(lanes):
                indices = [self.lane(i, lane) for i in access.indices] if lanes > 1 \
                    else access.indices
                for k, (index, extent) in enumerate(zip(indices, buf.shape)):
                    self._print_bound_check(buf, k, index, extent, access.guards, seen)

    def _print_division_check(self, div: Division, seen: set[str]) -> None:
        """Integer division by zero (and INT_MIN / -1) traps on most CPUs: fail instead."""
        a, b = div.expr.a, div.expr.b
        num, den = _strip(self.print_expr(a)), _strip(self.print_expr(b))
        bad = f"({den}) == 0"
        if div.expr.dtype.is_int:
            lo = self.expr_IntImm(E.IntImm(div.expr.dtype, E.int_range(div.expr.dtype)[0]))
            bad += f" || (({den}) == -1 && ({num}) == {lo})"
        self._print_failing_check(div.guards, bad, seen,
                                  f"{BOUNDS_MESSAGE} division by zero (or of the smallest "
                                  f"{div.expr.dtype} by -1) in `{_short(_script(div.expr))}`")

    def _print_failing_check(self, guards: list[E.PrimExpr], bad: str, seen: set[str],
                             message: str) -> None:
        cond = " && ".join([*(f"({_strip(self.print_expr(g))})" for g in guards), f"({bad})"])
        if cond in seen:
            return
        seen.add(cond)
        self.add_helper("TVM_BOUNDS_FAIL", f"#ifndef TVM_BOUNDS_FAIL\n#define "
                                           f"TVM_BOUNDS_FAIL(message) {self.bounds_report}\n#endif")
        self.emit(f"if ({cond}) {{")
        self._indent += 1
        self.emit(f"TVM_BOUNDS_FAIL({self.c_string(message)});")
        for line in self.assert_fail_lines(message):
            self.emit(line)
        self._indent -= 1
        self.emit("}")

    def _print_bound_check(self, buf: Buffer, k: int, index: E.PrimExpr, extent: E.PrimExpr,
                           guards: list[E.PrimExpr], seen: set[str]) -> None:
        if isinstance(extent, E.IntImm):
            reach = affine_range(index, self._ranges)
            if reach is not None and reach[0] >= 0 and reach[1] < extent.value:
                return  # in range for every iteration: nothing to check at run time
        idx, ext = _strip(self.print_expr(index)), _strip(self.print_expr(extent))
        bad = f"({idx}) >= ({ext})"
        if not index.dtype.is_uint:
            bad = f"({idx}) < 0 || {bad}"
        where = f" (dimension {k} of {len(buf.shape)})" if len(buf.shape) > 1 else ""
        text = _short(_script(index))
        self._print_failing_check(guards, bad, seen,
                                  f"{BOUNDS_MESSAGE} buffer {buf.name} index `{text}`{where} is "
                                  f"outside [0, {_short(_script(extent))})")

    def print_block(self, stmt: S.Stmt) -> None:
        """``stmt`` as the body of a braced block (its allocations end with the block)."""
        self._indent += 1
        self._push_scope()
        self.print_stmt(stmt)
        self._pop_scope()
        self._indent -= 1

    def stmt_SeqStmt(self, stmt: S.SeqStmt) -> None:
        for s in stmt.seq:
            self.print_stmt(s)

    def stmt_Evaluate(self, stmt: S.Evaluate) -> None:
        value = stmt.value
        if isinstance(value, (E.IntImm, E.FloatImm)):
            return
        if isinstance(value, E.Call) and value.op.name == "tirx.ret":
            self.emit(f"return {self.print_expr(value.args[0])};")
            return
        text = self.print_expr(value)
        if text:
            self.emit(text + ";")

    def stmt_BufferStore(self, stmt: S.BufferStore) -> None:
        lanes = max([stmt.value.dtype.lanes] + [i.dtype.lanes for i in stmt.indices])
        if lanes > 1:
            self.print_vector_store(stmt, lanes)
            return
        self._print_scalar_store(stmt.buffer, stmt.indices, stmt.value)

    def print_vector_store(self, stmt: S.BufferStore, lanes: int) -> None:
        """A store of ``lanes`` values; by default one scalar store per lane."""
        for lane in range(lanes):
            value = self.lane(stmt.value, lane)
            indices = [self.lane(i, lane) for i in stmt.indices]
            self._print_scalar_store(stmt.buffer, indices, value)

    def _print_scalar_store(self, buffer: Buffer, indices: list[E.PrimExpr],
                            value: E.PrimExpr) -> None:
        text = self.print_expr(value)
        if self.is_emulated(buffer.dtype):
            text = f"{self.to_storage_fn(buffer.dtype)}({text})"
        self.emit(f"{self.buffer_ptr(buffer)}[{self.flat_index(buffer, indices)}] = {text};")

    def stmt_For(self, loop: S.For) -> None:
        lo, ext = loop.min, loop.extent
        if isinstance(lo, E.IntImm) and isinstance(ext, E.IntImm) and ext.value > 0:
            # what bounds checks need not check at run time
            self._ranges[id(loop.loop_var)] = (lo.value, lo.value + ext.value - 1)
        try:
            self._print_for(loop)
        finally:
            self._ranges.pop(id(loop.loop_var), None)

    def _print_for(self, loop: S.For) -> None:
        kind = loop.kind
        if kind is S.ForKind.THREAD_BINDING:
            self.print_thread_binding(loop)
        elif kind is S.ForKind.PARALLEL:
            self.print_parallel_for(loop)
        elif kind is S.ForKind.UNROLLED:
            if self.unroll_pragma and isinstance(loop.extent, E.IntImm):
                self.emit(self.unroll_pragma.format(n=loop.extent.value))
            self.print_serial_for(loop)
        elif kind is S.ForKind.VECTORIZED:
            if self.vectorize_pragma:
                self.emit(self.vectorize_pragma)
            self.print_serial_for(loop)
        else:
            self.print_unroll_hint(loop)
            self.print_serial_for(loop)

    def print_unroll_hint(self, loop: S.For) -> None:
        """``T.serial(n, unroll=True)`` (annotation ``pragma_unroll``): the unroll pragma before
        the loop (one naming a count only when the extent is a constant)."""
        pragma = self.unroll_pragma
        if not (pragma and loop.annotations.get("pragma_unroll")):
            return
        if "{n}" in pragma and not isinstance(loop.extent, E.IntImm):
            return
        extent = loop.extent.value if isinstance(loop.extent, E.IntImm) else 0
        self.emit(pragma.format(n=extent))

    def print_serial_for(self, loop: S.For) -> None:
        v = loop.loop_var
        if isinstance(loop.min, E.IntImm) and loop.min.value >= 0:
            self._nonneg_vars.add(id(v))
        name = self.var_name(v)
        ctype = self.c_type(v.dtype)
        lo = self.print_expr(loop.min)
        if isinstance(loop.min, E.IntImm) and loop.min.value == 0:
            hi = self.print_expr(loop.extent)
        else:
            hi = f"({lo} + {self.print_expr(loop.extent)})"
        self.emit(f"for ({ctype} {name} = {lo}; {name} < {hi}; ++{name}) {{")
        self.print_block(loop.body)
        self.emit("}")

    def stmt_IfThenElse(self, stmt: S.IfThenElse) -> None:
        self.emit(f"if ({_strip(self.print_expr(stmt.condition))}) {{")
        self.print_block(stmt.then_case)
        if stmt.else_case is not None:
            self.emit("} else {")
            self.print_block(stmt.else_case)
        self.emit("}")

    def stmt_LetStmt(self, stmt: S.LetStmt) -> None:
        v = stmt.var
        if self._nonneg(stmt.value):
            self._nonneg_vars.add(id(v))
        name = self.var_name(v)
        value = self.print_expr(stmt.value)
        if v.dtype.is_handle:
            pointee = self.storage_type(v.ptr_dtype) if v.ptr_dtype is not None else "void"
            self.emit(f"{pointee}* {name} = ({pointee}*)({value});")
        else:
            self.emit(f"const {self.c_type(v.dtype)} {name} = {value};")
        self.print_stmt(stmt.body)

    def stmt_AttrStmt(self, stmt: S.AttrStmt) -> None:
        self.print_stmt(stmt.body)

    def stmt_AssertStmt(self, stmt: S.AssertStmt) -> None:
        msg = stmt.message.value if isinstance(stmt.message, E.StringImm) else str(stmt.message)
        self.emit(f"if (!({_strip(self.print_expr(stmt.condition))})) {{")
        self._indent += 1
        for line in self.assert_fail_lines(msg):
            self.emit(line)
        self._indent -= 1
        self.emit("}")

    def stmt_AllocBuffer(self, stmt: S.AllocBuffer) -> None:
        self.print_alloc(stmt.buffer, stmt.annotations)

    def stmt_DeclBuffer(self, stmt: S.DeclBuffer) -> None:
        buf = stmt.buffer
        data = buf.data
        if id(data) not in self._names:
            raise CodegenError(f"target {self.target_kind!r}: DeclBuffer `{buf.name}` views "
                           f"`{data.name}`, which is not defined here")
        base = self._names[id(data)]
        base_ptr = self._buffer_ptrs.get(id(data), base)
        if data.ptr_dtype is not None and data.ptr_dtype.element_of() != buf.dtype.element_of():
            # A view with another element type: a typed alias of the same memory.
            ctype = self.storage_type(buf.dtype)
            alias = self._fresh(buf.name)
            self.emit(f"{ctype}* {alias} = ({ctype}*)({base_ptr});")
            self._buffer_ptrs[id(buf)] = alias
        else:
            self._buffer_ptrs[id(buf)] = base_ptr

    def stmt_ScopeIdDef(self, stmt: S.ScopeIdDef) -> None:
        raise CodegenError(f"target {self.target_kind!r}: `{stmt.kind}` reached codegen; the "
                       "LowerKernelForm pass must turn it into thread-bound loops first")

    def stmt_TilePrimitiveCall(self, stmt: S.TilePrimitiveCall) -> None:
        raise CodegenError(f"target {self.target_kind!r}: tile primitive `{stmt.op.name}` reached "
                       "codegen; the TilePrimitiveDispatch pass must lower it first")

    # -- expressions ------------------------------------------------------------------------------
    def print_expr(self, e: Any) -> str:
        if isinstance(e, Buffer):
            return self.buffer_ptr(e)
        if isinstance(e, E.PrimExpr) and e.dtype.lanes > 1 and not isinstance(e, E.StringImm):
            raise CodegenError(f"target {self.target_kind!r}: a {e.dtype} expression "
                           f"({type(e).__name__}) outside a buffer store cannot be printed")
        method = getattr(self, f"expr_{type(e).__name__}", None)
        if method is None:
            for cls in type(e).__mro__[1:]:
                method = getattr(self, f"expr_{cls.__name__}", None)
                if method is not None:
                    break
        if method is None:
            raise CodegenError(f"target {self.target_kind!r}: codegen cannot print "
                           f"{type(e).__name__} {e!r}")
        span = getattr(e, "span", None)
        if span is not None:  # an op call of the user's script: errors point at its line
            with located(span):
                return method(e)
        return method(e)

    def expr_Var(self, v: E.Var) -> str:
        return self.var_name(v)

    def expr_IntImm(self, e: E.IntImm) -> str:
        dt, v = e.dtype, e.value
        if dt.is_bool:
            return "true" if v else "false"
        suffix = self.int64_suffix
        if dt.bits == 64 and suffix is not None:
            if dt.is_uint:
                return f"{v}U{suffix}"
            return f"(-9223372036854775807{suffix} - 1)" if v == -(2**63) else (
                f"({v}{suffix})" if v < 0 else f"{v}{suffix}")
        if dt.is_uint:
            return f"UINT64_C({v})" if dt.bits == 64 else (f"{v}U" if dt.bits == 32
                                                            else f"(({self.c_type(dt)}){v})")
        if dt.bits == 64:
            return "INT64_MIN" if v == -(2**63) else f"INT64_C({v})"
        if dt.bits == 32:
            return "(-2147483647 - 1)" if v == -(2**31) else (f"({v})" if v < 0 else str(v))
        return f"(({self.c_type(dt)}){v})"

    def expr_FloatImm(self, e: E.FloatImm) -> str:
        dt, v = e.dtype, e.value
        if math.isnan(v):
            text = "NAN"
        elif math.isinf(v):
            text = "INFINITY" if v > 0 else "(-INFINITY)"
        else:
            text = repr(v)
            if "e" not in text and "." not in text:
                text += ".0"
            if dt.bits != 64:
                text += "f"
            if v < 0:
                text = f"({text})"
        if dt.bits == 64:
            return text
        if self.is_emulated(dt):
            return f"{self.round_fn(dt)}({text})"
        if dt.bits == 16:
            return f"(({self.c_type(dt)}){text})"
        return text

    def expr_StringImm(self, e: E.StringImm) -> str:
        return self.c_string(e.value)

    def expr_Cast(self, e: E.Cast) -> str:
        dst, src = e.dtype, e.value.dtype
        value = self.print_expr(e.value)
        if dst == src:
            return value
        if dst.is_bool:
            return f"(({value}) != 0)"
        if self.is_emulated(dst):
            return f"{self.round_fn(dst)}((float)({value}))"
        if dst.is_integer and src.is_float:
            if isinstance(e.value, E.FloatImm):  # C leaves inf, nan and overflow undefined
                return self.expr_IntImm(E.IntImm(dst.element_of(), _saturate(e.value.value, dst)))
            if self.bounds_check:  # checked mode: every conversion is defined (saturating)
                return f"{self._saturating_cast(dst, src)}({value})"
        return f"(({self.c_type(dst)})({value}))"

    def _saturating_cast(self, dst: DataType, src: DataType) -> str:
        lo, hi = E.int_range(dst.element_of())
        ctype, stype = self.c_type(dst), self.c_type(src)
        name = f"tvm_sat_{dst.element_of()}_{src.element_of()}"
        lo_text, hi_text = self.expr_IntImm(E.IntImm(dst, lo)), self.expr_IntImm(E.IntImm(dst, hi))
        self.add_helper(name, f"static inline {ctype} {name}({stype} x) {{\n"
                              f"  if (x != x) return 0;\n"
                              f"  if (x <= {float(lo)!r}) return {lo_text};\n"
                              f"  if (x >= {float(hi)!r}) return {hi_text};\n"
                              f"  return ({ctype})x;\n}}")
        return name

    def _arith(self, e: E.BinaryOp, op: str) -> str:
        text = f"({self.print_expr(e.a)} {op} {self.print_expr(e.b)})"
        return f"{self.round_fn(e.dtype)}{text}" if self.is_emulated(e.dtype) else text

    def expr_Add(self, e: E.Add) -> str:
        return self._arith(e, "+")

    def expr_Sub(self, e: E.Sub) -> str:
        return self._arith(e, "-")

    def expr_Mul(self, e: E.Mul) -> str:
        return self._arith(e, "*")

    def expr_Div(self, e: E.Div) -> str:
        return self._arith(e, "/")

    def expr_Mod(self, e: E.Mod) -> str:
        if e.dtype.is_float:
            return self._float_call(e, {"float32": "fmodf({0}, {1})", "float64": "fmod({0}, {1})"})
        return self._arith(e, "%")

    def expr_FloorDiv(self, e: E.FloorDiv) -> str:
        dt = e.dtype
        if dt.is_float:
            return self._float_call(e, {"float32": "floorf({0} / {1})", "float64": "floor({0} / {1})"})
        if dt.is_uint or dt.is_bool or (self._nonneg(e.a) and _positive_const(e.b)):
            return self._arith(e, "/")
        return self._int_helper(e, "floordiv")

    def expr_FloorMod(self, e: E.FloorMod) -> str:
        dt = e.dtype
        if dt.is_float:
            return self._float_call(e, {"float32": "({0} - floorf({0} / {1}) * {1})",
                                        "float64": "({0} - floor({0} / {1}) * {1})"})
        if dt.is_uint or dt.is_bool or (self._nonneg(e.a) and _positive_const(e.b)):
            return self._arith(e, "%")
        return self._int_helper(e, "floormod")

    def _int_helper(self, e: E.BinaryOp, what: str) -> str:
        ctype = self.c_type(e.dtype)
        suffix = f"i{e.dtype.bits}"
        for name, code in _floordiv_helpers(ctype, suffix):
            self.add_helper(name, code)
        return f"tvm_{what}_{suffix}({self.print_expr(e.a)}, {self.print_expr(e.b)})"

    def _float_call(self, e: E.BinaryOp, table: Mapping[str, OpRule]) -> str:
        args = [self.print_expr(e.a), self.print_expr(e.b)]
        return self.render_template(table, e.dtype, args, e)

    def expr_Min(self, e: E.Min) -> str:
        if e.dtype.is_float:
            return self._float_call(e, {"float32": "fminf({0}, {1})", "float64": "fmin({0}, {1})"})
        a, b = self.print_expr(e.a), self.print_expr(e.b)
        return f"((({a}) < ({b})) ? ({a}) : ({b}))"

    def expr_Max(self, e: E.Max) -> str:
        if e.dtype.is_float:
            return self._float_call(e, {"float32": "fmaxf({0}, {1})", "float64": "fmax({0}, {1})"})
        a, b = self.print_expr(e.a), self.print_expr(e.b)
        return f"((({a}) > ({b})) ? ({a}) : ({b}))"

    def _cmp(self, e: E.BinaryOp, op: str) -> str:
        return f"({self.print_expr(e.a)} {op} {self.print_expr(e.b)})"

    def expr_EQ(self, e: E.EQ) -> str:
        return self._cmp(e, "==")

    def expr_NE(self, e: E.NE) -> str:
        return self._cmp(e, "!=")

    def expr_LT(self, e: E.LT) -> str:
        return self._cmp(e, "<")

    def expr_LE(self, e: E.LE) -> str:
        return self._cmp(e, "<=")

    def expr_GT(self, e: E.GT) -> str:
        return self._cmp(e, ">")

    def expr_GE(self, e: E.GE) -> str:
        return self._cmp(e, ">=")

    def expr_And(self, e: E.And) -> str:
        return self._cmp(e, "&&")

    def expr_Or(self, e: E.Or) -> str:
        return self._cmp(e, "||")

    def expr_Not(self, e: E.Not) -> str:
        return f"(!{self.print_expr(e.a)})"

    def expr_Select(self, e: E.Select) -> str:
        c, t, f = (self.print_expr(x) for x in (e.condition, e.true_value, e.false_value))
        return f"({c} ? {t} : {f})"

    def expr_BufferLoad(self, e: E.BufferLoad) -> str:
        text = f"{self.buffer_ptr(e.buffer)}[{self.flat_index(e.buffer, e.indices)}]"
        if self.is_emulated(e.buffer.dtype):
            return f"{self.from_storage_fn(e.buffer.dtype)}({text})"
        return text

    def expr_Let(self, e: E.Let) -> str:
        # C has no let-expression; the value is pure, so substitute it.
        return self.print_expr(substitute(e.body, {e.var: e.value}))

    def expr_Ramp(self, e: E.Ramp) -> str:
        raise CodegenError(f"target {self.target_kind!r}: a ramp outside a buffer store")

    def expr_Call(self, call: E.Call) -> str:
        op = call.op
        rule = op.get_codegen(self.target_kind)
        if rule is None:
            rule = self.op_templates.get(op.name)
        if rule is None:
            raise CodegenError(
                f"op `{op.name}` has no codegen rule for target {self.target_kind!r}: register one "
                f"with Op.get({op.name!r}).set_codegen({self.target_kind!r}, rule) in the "
                "backend's tvm_register_ops hook")
        args = [self.print_expr(a) if isinstance(a, (E.PrimExpr, Buffer)) else str(a)
                for a in call.args]
        key = next((a.dtype for a in call.args
                    if isinstance(a, E.PrimExpr) and not isinstance(a, E.StringImm)), call.dtype)
        return self.render_template(rule, key, args, call)

    # -- templates --------------------------------------------------------------------------------
    def render_math(self, call: E.Call, table: Mapping[str, OpRule], args: list[str]) -> str:
        return self.render_template(table, call.dtype, args, call)

    def render_template(self, rule: OpTemplate, dtype: DataType, args: list[str], node: Any) -> str:
        """Apply ``rule`` to printed ``args``; ``dtype`` selects an entry of a dict rule."""
        dtype = dtype.element_of()
        if isinstance(rule, Mapping):
            chosen = _pick(rule, dtype)
            if chosen is None and dtype.is_float and dtype.bits < 32 and "float32" in rule:
                return self._promoted(rule["float32"], node, args)
            if chosen is None:
                name = node.op.name if isinstance(node, E.Call) else type(node).__name__
                raise CodegenError(f"op `{name}` has no codegen rule for data type {dtype} on "
                               f"target {self.target_kind!r} (rules exist for {sorted(rule)})")
            rule = chosen
        return self._apply(rule, node, args)

    def _apply(self, rule: OpRule, node: Any, args: list[str]) -> str:
        if callable(rule):
            return rule(self, node, args)
        result_t = self.c_type(node.dtype) if not node.dtype.is_void else "void"
        return rule.format(*args, dtype=result_t)

    def _promoted(self, rule: OpRule, node: Any, args: list[str]) -> str:
        """Compute a 16-bit float op through its float32 rule."""
        fargs = [f"(float)({a})" if isinstance(x, E.PrimExpr) and x.dtype.is_float else a
                 for a, x in zip(args, _operands(node))]
        text = self._apply(rule, node, fargs)
        dt = node.dtype
        if not dt.is_float:
            return text
        if self.is_emulated(dt):
            return f"{self.round_fn(dt)}({text})"
        return f"(({self.c_type(dt)})({text}))"

    # -- indices and lanes ------------------------------------------------------------------------
    def flat_index(self, buffer: Buffer, indices: list[E.PrimExpr]) -> str:
        """The element offset of ``indices`` in ``buffer`` (flat, or row-major / strided)."""
        index: E.PrimExpr | None
        if len(indices) == 1:
            index = indices[0]
        else:
            index = None
            strides = buffer.strides or None
            for k, i in enumerate(indices):
                if strides is not None:
                    term = i * strides[k]
                    index = term if index is None else index + term
                else:
                    index = i if index is None else index * buffer.shape[k] + i
        assert index is not None
        if not (isinstance(buffer.elem_offset, E.IntImm) and buffer.elem_offset.value == 0):
            index = buffer.elem_offset + index
        try:
            return _strip(self.print_expr(index))
        except CodegenError as exc:
            if index.dtype.bits != 64 or "int64" not in str(exc):
                raise
            raise CodegenError(
                f"{exc}. The offsets into buffer `{buffer.name}` (extent "
                f"{', '.join(_script(d) for d in buffer.shape)}) are 64-bit because it may hold "
                "2**31 elements or more: bound each symbolic extent with a T.assume at the top "
                "of the function (T.assume(n <= 65536)) so that the analyzer can prove 32 bits "
                "enough") from None

    def lane(self, e: Any, lane: int) -> Any:
        """The scalar expression computing lane ``lane`` of vector expression ``e``."""
        if not isinstance(e, E.PrimExpr) or e.dtype.lanes == 1:
            return e
        if isinstance(e, E.Ramp):
            base = self.lane(e.base, lane)
            stride = self.lane(e.stride, lane)
            if lane == 0:
                return base
            if isinstance(stride, E.IntImm):
                return base + E.IntImm(stride.dtype, stride.value * lane)
            return base + stride * lane
        if isinstance(e, E.Broadcast):
            return e.value
        if isinstance(e, E.BinaryOp):
            return type(e)(self.lane(e.a, lane), self.lane(e.b, lane))
        if isinstance(e, E.Not):
            return E.Not(self.lane(e.a, lane))
        if isinstance(e, E.Select):
            return E.Select(self.lane(e.condition, lane), self.lane(e.true_value, lane),
                            self.lane(e.false_value, lane))
        if isinstance(e, E.Cast):
            return E.Cast(e.dtype.element_of(), self.lane(e.value, lane))
        if isinstance(e, E.BufferLoad):
            return E.BufferLoad(e.buffer, [self.lane(i, lane) for i in e.indices])
        if isinstance(e, E.Call):
            return E.Call(e.dtype.element_of(), e.op, [self.lane(a, lane) for a in e.args])
        if isinstance(e, E.Let):
            return self.lane(substitute(e.body, {e.var: e.value}), lane)
        raise CodegenError(f"target {self.target_kind!r}: cannot split a {e.dtype} "
                       f"{type(e).__name__} into lanes")

    def _nonneg(self, e: Any) -> bool:
        """A cheap proof that integer ``e`` is >= 0 (for plain '/' and '%' on floordiv)."""
        if isinstance(e, E.IntImm):
            return e.value >= 0
        if isinstance(e, E.Var):
            return id(e) in self._nonneg_vars
        if isinstance(e, E.FloorMod):
            return _positive_const(e.b) or (self._nonneg(e.a) and self._nonneg(e.b))
        if isinstance(e, (E.Add, E.Mul, E.FloorDiv, E.Div, E.Mod, E.Min, E.Max)):
            return self._nonneg(e.a) and self._nonneg(e.b)
        if isinstance(e, E.Cast):
            return e.dtype.is_integer and e.value.dtype.is_integer and self._nonneg(e.value)
        return bool(isinstance(e, E.PrimExpr) and e.dtype.is_uint)


def _pick(table: Mapping[str, OpRule], dt: DataType) -> OpRule | None:
    group = {"bfloat": "float", "float8_e4m3fn": "float", "float8_e5m2": "float"}.get(dt.code, dt.code)
    for key in (str(dt), group, "default"):
        if key in table:
            return table[key]
    return None


def _operands(node: Any) -> list[Any]:
    if isinstance(node, E.Call):
        return list(node.args)
    if isinstance(node, E.BinaryOp):
        return [node.a, node.b]
    return []


def _positive_const(e: Any) -> bool:
    return isinstance(e, E.IntImm) and e.value > 0


# The largest allocation a generated function asks for: what ptrdiff_t can index in bytes.
_MAX_ALLOC_BYTES = 2**63 - 1

_SIZE_MUL_HELPER = """\
static inline int tvm_size_mul(size_t* acc, int64_t n) {
  /* acc *= n; nonzero when n is negative or the product overflows size_t */
  if (n < 0) return 1;
  return __builtin_mul_overflow(*acc, (size_t)n, acc);
}"""


def _factors(e: E.PrimExpr) -> list[E.PrimExpr]:
    """The factors of a product (``n * m * 4`` -> n, m, 4), so that each is multiplied in with
    an overflow check rather than in the expression's own (narrower) type."""
    if isinstance(e, E.Mul) and e.dtype.is_integer:
        return _factors(e.a) + _factors(e.b)
    return [e]


def _saturate(value: float, dtype: DataType) -> int:
    """``value`` converted to ``dtype`` the defined way: truncated, clamped, NaN to 0."""
    lo, hi = E.int_range(dtype.element_of())
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return hi if value > 0 else lo
    return max(lo, min(hi, int(value)))


def _script(e: Any) -> str:
    try:
        return str(e.script())
    except Exception:  # a message must not fail because an expression does not print
        return type(e).__name__


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _const_int(e: Any) -> Any:
    return e.value if isinstance(e, E.IntImm) else e


class CudaStyleCodegen(CodegenCStyle):
    """The data CUDA-style dialects share (CUDA C++, HIP): ``extern "C" __global__`` kernels,
    ``static __device__`` functions and helpers, ``__restrict__``, ``__shared__`` arrays (no heap
    in a kernel), ``threadIdx``/``blockIdx``, ``__syncthreads()``, plain C++ integer types and
    ``LL`` literals (no ``<stdint.h>`` needed), kernels only (the host part is a launch plan).
    A dialect sets its ``target_kind`` and ``includes`` and adds what differs."""

    kernel_prefix: ClassVar[str] = 'extern "C" __global__ '
    function_prefix: ClassVar[str] = "static __device__ "
    restrict_keyword: ClassVar[str] = "__restrict__"
    storage_qualifiers: ClassVar[dict[str, str]] = {"shared": "__shared__ "}
    alloc_alignment: ClassVar[int] = 16
    max_stack_bytes: ClassVar[int] = 0  # no heap in kernels: only the scopes below are arrays
    stack_scopes: ClassVar[frozenset[str]] = frozenset({"local", "shared", "warp"})
    thread_index_names: ClassVar[dict[str, str]] = {
        f"{kind}.{axis}": f"{kind}.{axis}" for kind in ("threadIdx", "blockIdx") for axis in "xyz"
    }
    type_names: ClassVar[dict[str, str]] = {
        "int8": "signed char", "int16": "short", "int32": "int", "int64": "long long",
        "uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int",
        "uint64": "unsigned long long", "float32": "float", "float64": "double", "bool": "bool",
        "handle": "void*", "void": "void",
    }
    barrier: ClassVar[str | None] = "__syncthreads()"
    unroll_pragma: ClassVar[str | None] = "#pragma unroll"
    vectorize_pragma: ClassVar[str | None] = None
    includes: ClassVar[tuple[str, ...]] = ()
    kernels_only: ClassVar[bool] = True
    helper_prefix: ClassVar[str] = "static __device__ __forceinline__ "
    int64_suffix: ClassVar[str | None] = "LL"


def const_dims(dims: Any) -> tuple[int, int, int] | None:
    """A launch's grid or block as three ints (missing dimensions are 1), or None when a
    dimension is not a constant."""
    if dims is None:
        return None
    out = []
    for d in dims:
        if not isinstance(d, E.IntImm):
            return None
        out.append(int(d.value))
    out += [1] * (3 - len(out))
    return out[0], out[1], out[2]


def _const_numel(buffer: Buffer) -> int | None:
    n = 1
    for s in buffer.shape:
        if not isinstance(s, E.IntImm):
            return None
        n *= s.value
    return n


def _strip(text: str) -> str:
    """Drop one pair of redundant outer parentheses."""
    if len(text) >= 2 and text[0] == "(" and text[-1] == ")":
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i != len(text) - 1:
                return text
        return text[1:-1]
    return text
