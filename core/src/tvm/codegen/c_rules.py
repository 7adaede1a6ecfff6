"""What the C-style printers share besides the class: op rules (``OpRule``, ``OpTemplate``,
the builtin templates and the rules that need code), the C helper code emitted on demand (16-bit
float conversions, floor division), and small functions over expressions and printed text."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Union

from ..error import CodegenError
from ..ir import expr as E
from ..ir.dtype import DataType

if TYPE_CHECKING:
    from .c_style import CodegenCStyle

OpRule = Union[str, Callable[["CodegenCStyle", E.Call, list[str]], str]]
OpTemplate = Union[OpRule, Mapping[str, OpRule]]

_C_KEYWORDS = frozenset(["auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true", "false", "main", "NULL", "abs", "exp", "exp2", "log", "log2", "log10", "sqrt", "sin", "cos", "tan", "pow", "fmod", "floor", "ceil", "round", "trunc", "min", "max", "fabs", "malloc", "free", "memcpy", "memset", "printf", "errno", "signbit", "isnan", "isinf"])

# -- rules of builtins that need more than a template --------------------------------------------


def _rule_address_of(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
    load = call.args[0]
    if not isinstance(load, E.BufferLoad):
        raise CodegenError(f"tirx.address_of expects a buffer load, got {type(load).__name__}")
    return f"(&{cg.buffer_ptr(load.buffer)}[{cg.flat_index(load.buffer, load.indices)}])"


def _rule_access_ptr(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
    """``T.tvm_access_ptr(type, data, offset, extent, mask)``: ``data + offset`` as a pointer to
    the type (extent and mask are for analyses, not for the address)."""
    ctype = cg.storage_type(call.args[0].dtype)
    # the pointer's address space where the dialect has them (MSL: device, threadgroup)
    qual = cg.pointer_qualifiers.get(getattr(call.args[1], "ptr_scope", None) or "global", "")
    return f"(({qual}{ctype}*)({args[1]}) + ({args[2]}))"


def sync_scope(call: E.Call) -> str:
    """The scope of a ``T.tvm_storage_sync(scope)`` call, as text."""
    scope = call.args[0]
    return scope.value if isinstance(scope, E.StringImm) else str(scope)


def storage_sync_rule(barriers: Mapping[str, str], missing: str,
                      error: type[Exception] = CodegenError) -> OpRule:
    """The rule of ``T.tvm_storage_sync(scope)`` in a dialect whose barrier for each scope is
    one fixed statement, ``barriers[scope]``; another scope raises ``error`` with the message
    ``T.tvm_storage_sync('<scope>') has no <missing>`` (the dialect's form and what to do)."""

    def rule(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
        scope = sync_scope(call)
        barrier = barriers.get(scope)
        if barrier is None:
            raise error(f"T.tvm_storage_sync({scope!r}) has no {missing}")
        return barrier

    return rule


def _rule_storage_sync(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
    """``T.tvm_storage_sync(scope)`` in CUDA-style code: the CTA's barrier for shared memory,
    ``__syncwarp()`` for a warp; a grid-wide barrier has no single statement."""
    scope = sync_scope(call)
    if scope in ("shared", "shared.dyn") and cg.barrier:
        return cg.barrier
    if scope == "warp":
        return "__syncwarp()"
    raise CodegenError(f"T.tvm_storage_sync({scope!r}) has no {cg.target_kind} form: a barrier "
                       "across CTAs needs a cooperative launch; end the kernel there and launch "
                       "another (or use the scopes 'shared' and 'warp')")


def _rule_shuffle(fn: str) -> OpRule:
    def rule(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
        warp = call.args[4]
        if not isinstance(warp, E.IntImm) or warp.value != 32:
            raise CodegenError(f"{call.op.name}: warp_size must be 32 on {cg.target_kind}, got "
                               f"{args[4]}")
        return f"{fn}({args[0]}, {args[1]}, {args[2]}, {args[3]})"

    return rule


#: the classic thread intrinsics in CUDA-style dialects (CUDA C++, HIP)
CUDA_STYLE_TEMPLATES: dict[str, OpRule] = {
    "tirx.tvm_storage_sync": _rule_storage_sync,
    "tirx.tvm_warp_shuffle": _rule_shuffle("__shfl_sync"),
    "tirx.tvm_warp_shuffle_up": _rule_shuffle("__shfl_up_sync"),
    "tirx.tvm_warp_shuffle_down": _rule_shuffle("__shfl_down_sync"),
    "tirx.tvm_warp_shuffle_xor": _rule_shuffle("__shfl_xor_sync"),
}


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


def _shift(op: str) -> OpRule:
    """``a << n`` / ``a >> n``: a literal amount is printed bare (``(x) >> 3``, as hand-written
    CUDA reads), any other in parentheses."""
    def rule(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
        n = args[1]
        return f"(({args[0]}) {op} {n if n.isdigit() else f'({n})'})"

    return rule


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
    "tirx.shift_left": _shift("<<"),
    "tirx.shift_right": _shift(">>"),
    "tirx.if_then_else": "(({0}) ? ({1}) : ({2}))",
    "tirx.likely": "({0})",
    "tirx.reinterpret": _rule_reinterpret,
    "tirx.call_extern": _rule_call_extern,
    "tirx.address_of": _rule_address_of,
    "tirx.tvm_access_ptr": _rule_access_ptr,
    "tirx.type_annotation": "",
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
