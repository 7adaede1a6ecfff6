"""Lowered IR to GLSL compute shaders (one per kernel), on core's shader codegen (tvm.shader).

GLSL differs from C mostly by data: type names (``int``, ``uint``, ``int64_t``), overloaded math
without suffixes (``exp``, ``inversesqrt``, ``roundEven``), the thread indices
(``gl_WorkGroupID``, ``gl_LocalInvocationID``), constructor casts (``float(x)``), literal
suffixes (``2u``, ``5l``, ``1.5lf``) and no ``static inline``. The structure differs in a few
places, overridden here: a shader has one entry, ``void main()``; a kernel's buffers are storage
buffer blocks bound in order (``layout(set = 0, binding = i) buffer``), its scalars one
push-constant block, its shared allocations ``shared`` arrays at file scope, and the workgroup
size specialization constants (set per launch from the launch plan's block). There are no
pointers: a typed view of another type is an error.

One shader per kernel::

    // kernel: vadd_kernel
    #version 450
    layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
    layout(std430, set = 0, binding = 0) buffer tvm_buffer_0 { float A[]; };
    layout(push_constant) uniform tvm_push_constants { layout(offset = 0) int n; };
    void main() {
      const int bx = int(gl_WorkGroupID.x);
      ...

:func:`generate_glsl` returns the shaders joined into one source (each starts with its
``// kernel:`` line, which :func:`split_shaders` splits on) and, per kernel, how its
parameters are bound (:class:`KernelLayout`), which the runtime follows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from tvm.backend import sdk
from tvm.error import CodegenError
from tvm.ir import expr as E
from tvm.ir import stmt as S
from tvm.ir.buffer import Buffer
from tvm.ir.dtype import DataType
from tvm.ir.function import IRModule, PrimFunc

__all__ = ["GLSLCodegen", "KernelLayout", "generate_glsl", "split_shaders"]

#: the shaders of a source, by kernel name (split on core's ``sdk.KERNEL_MARKER`` lines)
split_shaders = sdk.split_kernels

GLSL_VERSION = "#version 450"

# Words of GLSL (keywords, reserved words, builtin functions a name could shadow).
_GLSL_RESERVED = frozenset(["attribute", "const", "uniform", "varying", "buffer", "shared", "coherent", "volatile", "restrict", "readonly", "writeonly", "atomic_uint", "layout", "centroid", "flat", "smooth", "noperspective", "patch", "sample", "break", "continue", "do", "for", "while", "switch", "case", "default", "if", "else", "subroutine", "in", "out", "inout", "float", "double", "int", "void", "bool", "true", "false", "invariant", "precise", "discard", "return", "mat2", "mat3", "mat4", "dmat2", "dmat3", "dmat4", "vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4", "bvec2", "bvec3", "bvec4", "dvec2", "dvec3", "dvec4", "uint", "uvec2", "uvec3", "uvec4", "lowp", "mediump", "highp", "precision", "sampler1D", "sampler2D", "sampler3D", "image1D", "image2D", "struct", "common", "partition", "active", "asm", "class", "union", "enum", "typedef", "template", "this", "resource", "goto", "inline", "noinline", "public", "static", "extern", "external", "interface", "long", "short", "half", "fixed", "unsigned", "superp", "input", "output", "filter", "sizeof", "cast", "namespace", "using", "main", "barrier", "min", "max", "abs", "sign", "floor", "ceil", "trunc", "round", "fract", "mod", "clamp", "mix", "step", "exp", "exp2", "log", "log2", "sqrt", "pow", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "isnan", "isinf", "fma", "dot", "length", "int8_t", "int16_t", "int64_t", "uint8_t", "uint16_t", "uint64_t", "float16_t", "float64_t"])

# Math of GLSL.std.450: float32 everywhere, float64 only where GLSL has the double overload.
_F32_ONLY = {
    "tirx.exp": "exp({0})", "tirx.exp2": "exp2({0})", "tirx.exp10": "exp2(({0}) * 3.3219280948873622f)",
    "tirx.log": "log({0})", "tirx.log2": "log2({0})",
    "tirx.log10": "(log2({0}) * 0.30102999566398120f)",
    "tirx.log1p": "log(1.0f + ({0}))",
    "tirx.sin": "sin({0})", "tirx.cos": "cos({0})", "tirx.tan": "tan({0})",
    "tirx.asin": "asin({0})", "tirx.acos": "acos({0})", "tirx.atan": "atan({0})",
    "tirx.sinh": "sinh({0})", "tirx.cosh": "cosh({0})", "tirx.tanh": "tanh({0})",
    "tirx.sigmoid": "(1.0f / (1.0f + exp(-({0}))))",
    "tirx.pow": "pow({0}, {1})", "tirx.atan2": "atan({0}, {1})",
    "tirx.hypot": "sqrt(({0}) * ({0}) + ({1}) * ({1}))",
    "tirx.copysign": "uintBitsToFloat((floatBitsToUint({0}) & 0x7fffffffu) | "
                     "(floatBitsToUint({1}) & 0x80000000u))",
}
_F32_F64 = {
    "tirx.sqrt": "sqrt({0})", "tirx.rsqrt": "inversesqrt({0})", "tirx.floor": "floor({0})",
    "tirx.ceil": "ceil({0})", "tirx.trunc": "trunc({0})", "tirx.fabs": "abs({0})",
    # round() rounds half to even, like numpy.round
    "tirx.round": "roundEven({0})", "tirx.nearbyint": "roundEven({0})",
    "tirx.fmod": "(({0}) - ({1}) * trunc(({0}) / ({1})))",
    "tirx.fma": "fma({0}, {1}, {2})",
    "tirx.isnan": "isnan({0})", "tirx.isinf": "isinf({0})",
    "tirx.isfinite": "(!isnan({0}) && !isinf({0}))",
}


def _rule_popcount(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
    _require_32bit(cg, call)
    return f"{cg.c_type(call.dtype)}(bitCount({args[0]}))"


def _rule_clz(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
    _require_32bit(cg, call)
    return f"{cg.c_type(call.dtype)}(31 - findMSB({args[0]}))"


def _require_32bit(cg: sdk.CodegenCStyle, call: E.Call) -> None:
    if call.dtype.bits != 32:
        raise CodegenError(f"op `{call.op.name}` on target {cg.target_kind!r} works on 32-bit "
                           f"integers only, got {call.dtype}")


_BITCASTS = {("float32", "int32"): "floatBitsToInt", ("float32", "uint32"): "floatBitsToUint",
             ("int32", "float32"): "intBitsToFloat", ("uint32", "float32"): "uintBitsToFloat",
             ("int32", "uint32"): "uint", ("uint32", "int32"): "int"}


def _rule_reinterpret(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
    src, dst = str(call.args[1].dtype), str(call.dtype)
    fn = _BITCASTS.get((src, dst))
    if fn is None:
        raise CodegenError(f"target {cg.target_kind!r} cannot reinterpret {src} as {dst}; "
                           f"it can: {', '.join(f'{a}->{b}' for a, b in _BITCASTS)}")
    return f"{fn}({args[1]})"


_TEMPLATES: dict[str, sdk.OpTemplate] = sdk.shader_templates(
    "GLSL",
    {name: {"float32": rule} for name, rule in _F32_ONLY.items()},
    {name: {"float32": rule, "float64": rule.replace("0.0f", "0.0").replace("1.0f", "1.0")}
     for name, rule in _F32_F64.items()},
    {"tirx.popcount": _rule_popcount,
     "tirx.clz": _rule_clz,
     "tirx.reinterpret": _rule_reinterpret,
     "tirx.fma": {"float32": "fma({0}, {1}, {2})", "float64": "fma({0}, {1}, {2})",
                  "default": "(({0}) * ({1}) + ({2}))"}},
)

# Extensions a shader needs: by data type, and by GLSL builtin a call_extern names.
_TYPE_EXTENSIONS = {
    "int64": "GL_EXT_shader_explicit_arithmetic_types_int64",
    "uint64": "GL_EXT_shader_explicit_arithmetic_types_int64",
}
EXTERN_EXTENSIONS = {
    "subgroupAdd": "GL_KHR_shader_subgroup_arithmetic",
    "subgroupMax": "GL_KHR_shader_subgroup_arithmetic",
    "subgroupMin": "GL_KHR_shader_subgroup_arithmetic",
    "subgroupBarrier": "GL_KHR_shader_subgroup_basic",
    "subgroupMemoryBarrier": "GL_KHR_shader_subgroup_basic",
    "subgroupElect": "GL_KHR_shader_subgroup_basic",
}
# The target flag that allows each optional data type.
_TYPE_FLAGS = {"float64": "supports_float64", "int64": "supports_int64",
               "uint64": "supports_int64"}
_PUSH_ALIGN = {"int32": 4, "uint32": 4, "float32": 4, "int64": 8, "uint64": 8, "float64": 8}


@dataclass
class KernelLayout(sdk.BindingLayout):
    """How one kernel's parameters are bound, in parameter order: ``("buffer", binding,
    dtype)`` or ``("push", offset, dtype)``; ``push_size`` bytes of push constants."""

    push_size: int = 0

    @property
    def n_buffers(self) -> int:
        return sum(1 for p in self.params if p[0] == "buffer")


class GLSLCodegen(sdk.ShaderCodegen):
    """One GLSL compute shader for one kernel. See the module docstring."""

    target_kind: ClassVar[str] = "vulkan"
    language: ClassVar[str] = "GLSL"
    reserved_words: ClassVar[frozenset[str]] = _GLSL_RESERVED
    reserved_prefix: ClassVar[str] = "gl_"
    thread_index_names: ClassVar[dict[str, str]] = {
        "blockIdx.x": "gl_WorkGroupID.x", "blockIdx.y": "gl_WorkGroupID.y",
        "blockIdx.z": "gl_WorkGroupID.z", "threadIdx.x": "gl_LocalInvocationID.x",
        "threadIdx.y": "gl_LocalInvocationID.y", "threadIdx.z": "gl_LocalInvocationID.z",
    }
    type_names: ClassVar[dict[str, str]] = {
        "int32": "int", "uint32": "uint", "float32": "float", "float64": "double",
        "int64": "int64_t", "uint64": "uint64_t", "bool": "bool", "void": "void",
    }
    op_templates: ClassVar[dict[str, sdk.OpTemplate]] = _TEMPLATES

    def __init__(self, target: Any = None) -> None:
        super().__init__(target)
        self._extensions: dict[str, None] = {}
        self._shared_decls: list[str] = []
        self.layout: KernelLayout | None = None

    def let_line(self, name: str, ctype: str, value: str) -> str:
        return f"const {ctype} {name} = {value};"

    def use_builtin(self, name: str) -> None:
        ext = EXTERN_EXTENSIONS.get(name)
        if ext:
            self._extensions.setdefault(ext)

    # -- structure ------------------------------------------------------------------------
    def function_header(self, info: sdk.FunctionInfo) -> str:
        self.layout = self._layout(info)
        return "void main()"

    def _layout(self, info: sdk.FunctionInfo) -> KernelLayout:
        layout = KernelLayout(info.symbol)
        binding = offset = 0
        for p in info.params:
            self.check_param(info, p)
            if p.kind in ("buffer", "handle"):
                layout.params.append(("buffer", binding, str(self._elem_type(p))))
                binding += 1
                continue
            dt = DataType(p.dtype)
            self.storage_type(dt)  # a type the target supports
            align = _PUSH_ALIGN.get(str(dt))
            if align is None:
                raise CodegenError(f"target {self.target_kind!r}: scalar argument `{p.name}` of "
                                   f"kernel `{info.name}` has type {dt}; push constants hold "
                                   f"{', '.join(_PUSH_ALIGN)}")
            offset = -(-offset // align) * align
            layout.params.append(("push", offset, str(dt)))
            offset += align
        layout.push_size = offset
        self._check_limits(info, layout)
        return layout

    def _check_limits(self, info: sdk.FunctionInfo, layout: KernelLayout) -> None:
        limit = self.target_attr("max_push_constants_size", 128)
        if layout.push_size > limit:
            raise CodegenError(f"target {self.target_kind!r}: the scalar arguments of kernel "
                               f"`{info.name}` take {layout.push_size} bytes of push constants; "
                               f"the target allows {limit} (max_push_constants_size)")

    def preamble_lines(self) -> list[str]:
        assert self.layout is not None
        info = self._cur_info
        lines = [GLSL_VERSION]
        lines += [f"#extension {ext} : require" for ext in self._extensions]
        lines.append("layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;")
        buffers, members = self.layout.declarations(
            info, self.storage_type,
            lambda name, slot, ctype: (f"layout(std430, set = 0, binding = {slot}) buffer "
                                       f"tvm_buffer_{slot} {{ {ctype} {name}[]; }};"),
            lambda name, slot, ctype: f"layout(offset = {slot}) {ctype} {name};")
        lines += buffers
        if members:
            lines.append(f"layout(push_constant) uniform tvm_push_constants {{ "
                         f"{' '.join(members)} }};")
        return lines + self._shared_decls

    def print_alloc(self, buffer: Buffer, annotations: Mapping[str, Any]) -> None:
        name = self.var_name(buffer.data, buffer.name)
        self._buffer_ptrs[id(buffer)] = name
        n = self.alloc_numel(buffer)
        ctype = self.storage_type(buffer.dtype)
        if buffer.scope in ("shared", "shared.dyn"):
            self.reserve_shared(buffer, n)
            self._shared_decls.append(f"shared {ctype} {name}[{max(n, 1)}];")
            return
        self.emit(f"{ctype} {name}[{max(n, 1)}];")

    def stmt_LetStmt(self, stmt: S.LetStmt) -> None:
        self.refuse_pointer(stmt.var)
        super().stmt_LetStmt(stmt)

    # -- types ------------------------------------------------------------------------------
    def storage_type(self, dt: DataType | str) -> str:
        dt = DataType(dt).element_of()
        name = self.type_names.get(str(dt))
        if name is None:
            raise CodegenError(f"data type {dt} is not supported by target {self.target_kind!r} "
                               f"(it compiles {', '.join(self._supported())})")
        flag = _TYPE_FLAGS.get(str(dt))
        if flag is not None and not self.target_attr(flag, False):
            raise CodegenError(f"data type {dt} needs a device with {flag}=True; target "
                               f"{self.target_kind!r} does not declare it (add "
                               f"\"{flag}\": True to the target if the device has it)")
        ext = _TYPE_EXTENSIONS.get(str(dt))
        if ext:
            self._extensions.setdefault(ext)
        return name

    def _supported(self) -> list[str]:
        return [t for t in self.type_names if t not in ("void",)
                and (t not in _TYPE_FLAGS or self.target_attr(_TYPE_FLAGS[t], False))]

    # -- expressions ------------------------------------------------------------------------
    def expr_IntImm(self, e: E.IntImm) -> str:
        dt, v = e.dtype, e.value
        if dt.is_bool:
            return "true" if v else "false"
        suffix = {"uint32": "u", "int64": "l", "uint64": "ul"}.get(str(dt))
        if suffix is not None:
            self.storage_type(dt)
            text = f"{v}{suffix}"
            return f"({text})" if v < 0 else text
        if dt.bits == 32:
            return "(-2147483647 - 1)" if v == -(2**31) else (f"({v})" if v < 0 else str(v))
        return f"{self.c_type(dt)}({v})"

    def expr_FloatImm(self, e: E.FloatImm) -> str:
        dt, v = e.dtype, e.value
        ctype = self.c_type(dt)
        if v != v or v in (float("inf"), float("-inf")):
            bits = "0x7fc00000u" if v != v else ("0x7f800000u" if v > 0 else "0xff800000u")
            text = f"uintBitsToFloat({bits})"
            return text if dt.bits == 32 else f"{ctype}({text})"
        text = repr(v)
        if "e" not in text and "." not in text:
            text += ".0"
        text += "lf" if dt.bits == 64 else "f"
        return f"({text})" if v < 0 else text

    def expr_Mod(self, e: E.Mod) -> str:
        a, b = self.print_expr(e.a), self.print_expr(e.b)
        if e.dtype.is_float:
            return f"({a} - {b} * trunc({a} / {b}))"
        if e.dtype.is_uint or (self._nonneg(e.a) and self._nonneg(e.b)):
            return f"({a} % {b})"
        return self._int_helper(e, "truncmod")

    def expr_FloorMod(self, e: E.FloorMod) -> str:
        if e.dtype.is_float:
            return f"mod({self.print_expr(e.a)}, {self.print_expr(e.b)})"
        return super().expr_FloorMod(e)

    def _int_helper(self, e: E.BinaryOp, what: str) -> str:
        # GLSL's % is undefined for negative operands (glslang emits OpSMod): the helpers use
        # only the truncating division.
        t = self.c_type(e.dtype)
        suffix = f"i{e.dtype.bits}"
        zero = "0" if e.dtype.bits == 32 else "0l"
        one = "1" if e.dtype.bits == 32 else "1l"
        self.add_helper(f"tvm_truncmod_{suffix}",
                        f"{t} tvm_truncmod_{suffix}({t} a, {t} b) {{ return a - (a / b) * b; }}")
        if what == "floordiv":
            self.add_helper(f"tvm_floordiv_{suffix}",
                            f"{t} tvm_floordiv_{suffix}({t} a, {t} b) {{\n"
                            f"  {t} q = a / b, r = a - q * b;\n"
                            f"  return (r != {zero} && ((r < {zero}) != (b < {zero}))) ? q - {one}"
                            " : q;\n}")
        if what == "floormod":
            self.add_helper(f"tvm_floormod_{suffix}",
                            f"{t} tvm_floormod_{suffix}({t} a, {t} b) {{\n"
                            f"  {t} r = tvm_truncmod_{suffix}(a, b);\n"
                            f"  return (r != {zero} && ((r < {zero}) != (b < {zero}))) ? r + b"
                            " : r;\n}")
        return f"tvm_{what}_{suffix}({self.print_expr(e.a)}, {self.print_expr(e.b)})"


def generate_glsl(mod: IRModule | PrimFunc, target: Any = None
                  ) -> tuple[str, list[KernelLayout]]:
    """(the GLSL of every kernel of ``mod``, joined; each kernel's parameter layout)."""
    return sdk.generate_shaders(GLSLCodegen, mod, target, what="generate_glsl")

