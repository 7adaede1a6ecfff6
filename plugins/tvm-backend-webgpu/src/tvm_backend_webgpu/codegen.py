"""Lowered IR to WGSL compute shaders (one module per kernel), on core's shader codegen
(tvm.shader).

WGSL keeps C's expressions and control flow, so most of it is data: type names (``i32``,
``u32``, ``f32``), typed literals (``3i``, ``2u``, ``0.5f``), conversion calls (``f32(x)``), its
builtins (``inverseSqrt``, ``countOneBits``, ``bitcast<u32>``) and the thread indices. The
declarations differ, and are overridden here: ``let`` and ``var`` with types after the name,
``for (var k: i32 = 0; ...; k++)``, ``array<f32, N>`` allocations (``var<workgroup>`` at module
scope for shared memory), ``select`` for ``?:``, ``_ = e;`` for a value computed for its
effect, and the entry point's signature. A kernel's buffers are storage bindings in order, its
scalars one uniform struct bound after them (WebGPU has no push constants), and its workgroup
size pipeline-overridable constants set per launch from the launch plan's block::

    // kernel: vadd_kernel
    override tvm_block_x: u32 = 1u;
    ...
    @group(0) @binding(0) var<storage, read_write> A: array<f32>;
    struct tvm_args_t { n: i32, }
    @group(0) @binding(3) var<uniform> tvm_args: tvm_args_t;

    @compute @workgroup_size(tvm_block_x, tvm_block_y, tvm_block_z)
    fn vadd_kernel(@builtin(workgroup_id) tvm_group: vec3<u32>,
                   @builtin(local_invocation_id) tvm_local: vec3<u32>) {
      let n: i32 = tvm_args.n;
      let bx: i32 = i32(tvm_group.x);
      ...

:func:`generate_wgsl` returns the modules joined into one source (each starts with its
``// kernel:`` line, :func:`split_modules` splits on it) and each kernel's
:class:`KernelLayout`, which the runtime follows.
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

__all__ = ["KernelLayout", "WGSLCodegen", "generate_wgsl", "split_modules"]

#: the WGSL modules of a source, by kernel name (split on core's ``sdk.KERNEL_MARKER`` lines)
split_modules = sdk.split_kernels

BLOCK_CONSTANTS = ("tvm_block_x", "tvm_block_y", "tvm_block_z")
INF_BITS = "bitcast<f32>(0x7f800000u)"

# WGSL keywords and reserved words (https://www.w3.org/TR/WGSL/#reserved-words), and the
# builtins a kernel name could shadow.
_WGSL_RESERVED = frozenset(["alias", "break", "case", "const", "const_assert", "continue", "continuing", "default", "diagnostic", "discard", "else", "enable", "false", "fn", "for", "if", "let", "loop", "override", "requires", "return", "struct", "switch", "true", "var", "while", "NULL", "Self", "abstract", "active", "alignas", "alignof", "as", "asm", "asm_fragment", "async", "attribute", "auto", "await", "become", "cast", "catch", "class", "co_await", "co_return", "co_yield", "coherent", "column_major", "common", "compile", "compile_fragment", "concept", "const_cast", "consteval", "constexpr", "constinit", "crate", "debugger", "decltype", "delete", "demote", "demote_to_helper", "do", "dynamic_cast", "enum", "explicit", "export", "extends", "extern", "external", "fallthrough", "filter", "final", "finally", "friend", "from", "fxgroup", "get", "goto", "groupshared", "highp", "impl", "implements", "import", "inline", "instanceof", "interface", "layout", "lowp", "macro", "macro_rules", "match", "mediump", "meta", "mod", "module", "move", "mut", "mutable", "namespace", "new", "nil", "noexcept", "noinline", "nointerpolation", "non_coherent", "noncoherent", "noperspective", "null", "nullptr", "of", "operator", "package", "packoffset", "partition", "pass", "patch", "pixelfragment", "precise", "precision", "premerge", "priv", "protected", "pub", "public", "readonly", "ref", "regardless", "register", "reinterpret_cast", "require", "resource", "restrict", "self", "set", "shared", "sizeof", "smooth", "snorm", "static", "static_assert", "static_cast", "std", "subroutine", "super", "target", "template", "this", "thread_local", "throw", "trait", "try", "type", "typedef", "typeid", "typename", "typeof", "union", "unless", "unorm", "unsafe", "unsized", "use", "using", "varying", "virtual", "volatile", "wgsl", "where", "with", "writeonly", "yield", "bool", "f16", "f32", "i32", "u32", "vec2", "vec3", "vec4", "mat2x2", "mat3x3", "mat4x4", "array", "atomic", "ptr", "sampler", "texture_2d", "main", "min", "max", "abs", "select", "exp", "exp2", "log", "log2", "sqrt", "pow", "sin", "cos", "tan", "floor", "ceil", "round", "trunc", "fma"])

_F32 = {
    "tirx.exp": "exp({0})", "tirx.exp2": "exp2({0})",
    "tirx.exp10": "exp2(({0}) * 3.3219280948873622f)",
    "tirx.log": "log({0})", "tirx.log2": "log2({0})",
    "tirx.log10": "(log2({0}) * 0.30102999566398120f)", "tirx.log1p": "log(1.0f + ({0}))",
    "tirx.sqrt": "sqrt({0})", "tirx.rsqrt": "inverseSqrt({0})",
    "tirx.sin": "sin({0})", "tirx.cos": "cos({0})", "tirx.tan": "tan({0})",
    "tirx.asin": "asin({0})", "tirx.acos": "acos({0})", "tirx.atan": "atan({0})",
    "tirx.sinh": "sinh({0})", "tirx.cosh": "cosh({0})", "tirx.tanh": "tanh({0})",
    "tirx.sigmoid": "(1.0f / (1.0f + exp(-({0}))))",
    # WGSL's round() rounds half to even, like numpy.round
    "tirx.floor": "floor({0})", "tirx.ceil": "ceil({0})", "tirx.round": "round({0})",
    "tirx.nearbyint": "round({0})", "tirx.trunc": "trunc({0})", "tirx.fabs": "abs({0})",
    "tirx.pow": "pow({0}, {1})", "tirx.fmod": "(({0}) % ({1}))", "tirx.atan2": "atan2({0}, {1})",
    "tirx.hypot": "sqrt(({0}) * ({0}) + ({1}) * ({1}))",
    "tirx.copysign": "bitcast<f32>((bitcast<u32>({0}) & 0x7fffffffu) | "
                     "(bitcast<u32>({1}) & 0x80000000u))",
    "tirx.fma": "fma({0}, {1}, {2})",
    "tirx.isnan": "(({0}) != ({0}))", "tirx.isinf": f"(abs({{0}}) == {INF_BITS})",
    "tirx.isfinite": f"(abs({{0}}) < {INF_BITS})",
}


def _rule_reinterpret(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
    return f"bitcast<{cg.storage_type(call.dtype)}>({args[1]})"


_TEMPLATES: dict[str, sdk.OpTemplate] = sdk.shader_templates(
    "WGSL",
    {name: {"float32": rule} for name, rule in _F32.items()},
    {"tirx.popcount": "countOneBits({0})",
     "tirx.clz": "countLeadingZeros({0})",
     "tirx.reinterpret": _rule_reinterpret,
     "tirx.shift_left": "(({0}) << u32({1}))",
     "tirx.shift_right": "(({0}) >> u32({1}))",
     "tirx.if_then_else": "select({2}, {1}, {0})",
     "tirx.address_of": sdk.rule_unsupported("WGSL has no pointers into storage buffers")},
)


@dataclass
class KernelLayout(sdk.BindingLayout):
    """How one kernel's parameters are bound, in parameter order: ``("buffer", binding,
    dtype)`` or ``("uniform", offset, dtype)``; the uniform struct (``uniform_size`` bytes) is
    at binding ``uniform_binding``."""

    uniform_size: int = 0
    uniform_binding: int = 0


class WGSLCodegen(sdk.ShaderCodegen):
    """One WGSL module for one kernel. See the module docstring."""

    target_kind: ClassVar[str] = "webgpu"
    language: ClassVar[str] = "WGSL"
    reserved_words: ClassVar[frozenset[str]] = _WGSL_RESERVED
    reserved_prefix: ClassVar[str] = "_"
    thread_index_names: ClassVar[dict[str, str]] = {
        "blockIdx.x": "tvm_group.x", "blockIdx.y": "tvm_group.y", "blockIdx.z": "tvm_group.z",
        "threadIdx.x": "tvm_local.x", "threadIdx.y": "tvm_local.y", "threadIdx.z": "tvm_local.z",
    }
    type_names: ClassVar[dict[str, str]] = {
        "int32": "i32", "uint32": "u32", "float32": "f32", "bool": "bool",
    }
    op_templates: ClassVar[dict[str, sdk.OpTemplate]] = _TEMPLATES

    def __init__(self, target: Any = None) -> None:
        super().__init__(target)
        self._workgroup_decls: list[str] = []
        self.layout: KernelLayout | None = None
        self.uses_subgroups = False

    def let_line(self, name: str, ctype: str, value: str) -> str:
        return f"let {name}: {ctype} = {value};"

    # -- structure ------------------------------------------------------------------------
    def print_function_body(self, func: PrimFunc) -> None:
        self._push_scope()
        for p in self._cur_info.params:
            if p.kind == "scalar":
                self.emit(self.let_line(p.c_name, self.c_type(DataType(p.dtype)),
                                        f"tvm_args.{p.c_name}"))
        self.print_stmt(func.body)
        self._pop_scope()

    def function_header(self, info: sdk.FunctionInfo) -> str:
        self.layout = self._layout(info)
        builtins = ("@builtin(workgroup_id) tvm_group: vec3<u32>, "
                    "@builtin(local_invocation_id) tvm_local: vec3<u32>")
        return (f"@compute @workgroup_size({', '.join(BLOCK_CONSTANTS)})\n"
                f"fn {info.symbol}({builtins})")

    def _layout(self, info: sdk.FunctionInfo) -> KernelLayout:
        layout = KernelLayout(info.symbol)
        binding = offset = 0
        for p in info.params:
            self.check_param(info, p)
            if p.kind in ("buffer", "handle"):
                dtype = self._elem_type(p)
                if dtype.is_bool:
                    raise CodegenError(f"target {self.target_kind!r}: buffer `{p.name}` holds "
                                       "bool, which WGSL cannot store; use int32 or uint8 "
                                       "arrays of 0/1")
                layout.params.append(("buffer", binding, str(dtype)))
                binding += 1
                continue
            dt = DataType(p.dtype)
            if str(dt) not in ("int32", "uint32", "float32"):
                raise CodegenError(f"target {self.target_kind!r}: scalar argument `{p.name}` of "
                                   f"kernel `{info.name}` has type {dt}; WGSL uniforms hold "
                                   "int32, uint32 and float32")
            layout.params.append(("uniform", offset, str(dt)))
            offset += 4
        limit = self.target_attr("max_storage_buffers_per_shader_stage", 8)
        if binding > limit:
            raise CodegenError(f"target {self.target_kind!r}: kernel `{info.name}` binds "
                               f"{binding} storage buffers; the target allows {limit} "
                               "(max_storage_buffers_per_shader_stage)")
        layout.uniform_size = -(-offset // 16) * 16
        layout.uniform_binding = binding
        return layout

    def preamble_lines(self) -> list[str]:
        assert self.layout is not None
        info = self._cur_info
        lines = [f"override {c}: u32 = 1u;" for c in BLOCK_CONSTANTS]
        if self.uses_subgroups:
            # The WGSL standard asks for `enable subgroups;`; wgpu-native's WGSL front end
            # does not accept it yet and takes the builtins from the device's feature alone.
            lines.append("// uses subgroup builtins: the device needs the 'subgroup' feature")
        buffers, members = self.layout.declarations(
            info, self.storage_type,
            lambda name, slot, wtype: (f"@group(0) @binding({slot}) var<storage, read_write> "
                                       f"{name}: array<{wtype}>;"),
            lambda name, slot, wtype: f"{name}: {wtype},")
        lines += buffers
        if members:
            lines.append(f"struct tvm_args_t {{ {' '.join(members)} }}")
            lines.append(f"@group(0) @binding({self.layout.uniform_binding}) var<uniform> "
                         "tvm_args: tvm_args_t;")
        return lines + self._workgroup_decls

    # -- statements -------------------------------------------------------------------------
    def loop_header(self, name: str, ctype: str, lo: str, hi: str) -> str:
        return f"for (var {name}: {ctype} = {lo}; {name} < {hi}; {name}++) {{"

    def stmt_LetStmt(self, stmt: S.LetStmt) -> None:
        v = stmt.var
        self.refuse_pointer(v)
        if self._nonneg(stmt.value):
            self._nonneg_vars.add(id(v))
        name = self.var_name(v)
        self.emit(self.let_line(name, self.c_type(v.dtype), self.print_expr(stmt.value)))
        self.print_stmt(stmt.body)

    def print_alloc(self, buffer: Buffer, annotations: Mapping[str, Any]) -> None:
        name = self.var_name(buffer.data, buffer.name)
        self._buffer_ptrs[id(buffer)] = name
        n = self.alloc_numel(buffer)
        decl = f"{name}: array<{self.storage_type(buffer.dtype)}, {max(n, 1)}>;"
        if buffer.scope not in ("shared", "shared.dyn"):
            self.emit(f"var {decl}")
            return
        self.reserve_shared(buffer, n)
        self._workgroup_decls.append(f"var<workgroup> {decl}")

    def stmt_Evaluate(self, stmt: S.Evaluate) -> None:
        value = stmt.value
        if isinstance(value, (E.IntImm, E.FloatImm)):
            return
        if isinstance(value, E.Call) and value.op.name == "tirx.ret":
            self.emit(f"return {self.print_expr(value.args[0])};")
            return
        text = self.print_expr(value)
        if not text:
            return
        # WGSL drops a value only through the phony assignment
        void = not isinstance(value, E.PrimExpr) or value.dtype.is_void
        self.emit(f"{text};" if void else f"_ = {text};")

    # -- types ------------------------------------------------------------------------------
    def storage_type(self, dt: DataType | str) -> str:
        dt = DataType(dt).element_of()
        name = self.type_names.get(str(dt))
        if name is None:
            raise CodegenError(f"data type {dt} is not supported by target {self.target_kind!r} "
                               f"(WGSL computes {', '.join(self.type_names)})")
        return name

    def c_type(self, dt: DataType | str) -> str:
        dt = DataType(dt)
        if dt.lanes > 1:
            raise CodegenError(f"target {self.target_kind!r}: vector type {dt} is printed lane "
                               "by lane")
        return self.storage_type(dt)

    # -- expressions ------------------------------------------------------------------------
    def expr_IntImm(self, e: E.IntImm) -> str:
        dt, v = e.dtype, e.value
        if dt.is_bool:
            return "true" if v else "false"
        self.storage_type(dt)
        if dt.is_uint:
            return f"{v}u"
        if v == -(2**31):
            return "(-2147483647i - 1i)"
        return f"({v}i)" if v < 0 else f"{v}i"

    def expr_FloatImm(self, e: E.FloatImm) -> str:
        v = e.value
        self.storage_type(e.dtype)
        if v != v:
            return "bitcast<f32>(0x7fc00000u)"
        if v in (float("inf"), float("-inf")):
            return INF_BITS if v > 0 else "bitcast<f32>(0xff800000u)"
        text = repr(v)
        if "e" not in text and "." not in text:
            text += ".0"
        return f"({text}f)" if v < 0 else f"{text}f"

    def expr_Select(self, e: E.Select) -> str:
        c, t, f = (self.print_expr(x) for x in (e.condition, e.true_value, e.false_value))
        return f"select({f}, {t}, {c})"

    def expr_Mod(self, e: E.Mod) -> str:
        # WGSL's % truncates (C's fmod for floats): TIR's Mod
        return self._arith(e, "%")

    def expr_FloorMod(self, e: E.FloorMod) -> str:
        if e.dtype.is_float:
            a, b = self.print_expr(e.a), self.print_expr(e.b)
            return f"({a} - floor({a} / {b}) * {b})"
        return super().expr_FloorMod(e)

    def _int_helper(self, e: E.BinaryOp, what: str) -> str:
        t = self.c_type(e.dtype)
        body = "select(q, q - 1i, r != 0i && ((r < 0i) != (b < 0i)))" if what == "floordiv" \
            else "select(r, r + b, r != 0i && ((r < 0i) != (b < 0i)))"
        self.add_helper(f"tvm_{what}_{t}",
                        f"fn tvm_{what}_{t}(a: {t}, b: {t}) -> {t} {{\n"
                        f"  let q = a / b;\n  let r = a % b;\n  return {body};\n}}")
        return f"tvm_{what}_{t}({self.print_expr(e.a)}, {self.print_expr(e.b)})"


def generate_wgsl(mod: IRModule | PrimFunc, target: Any = None
                  ) -> tuple[str, list[KernelLayout]]:
    """(the WGSL of every kernel of ``mod``, joined; each kernel's binding layout)."""
    return sdk.generate_shaders(WGSLCodegen, mod, target, what="generate_wgsl")

