"""Lowered IR to Metal Shading Language, on core's C-style codegen base.

Metal differs from the base mostly by data: ``kernel void``, the ``device`` address space of
buffer arguments (``[[buffer(i)]]``), ``constant T&`` scalars, ``threadgroup`` allocations for
shared memory, the thread-index attributes, MSL's type names (``int``, ``uint``, ``half``,
``bfloat``), its overloaded math (``exp``, not ``expf``) and ``threadgroup_barrier``. The few
methods overridden here are where MSL's structure differs: the kernel signature (built-in
position arguments), simdgroup-matrix allocations, 64-bit literals and float min/max/mod.

A kernel (``tirx.is_kernel``) is printed as::

    kernel void vadd_kernel(device float* A [[buffer(0)]], constant int& n [[buffer(1)]],
                            uint3 blockIdx [[threadgroup_position_in_grid]],
                            uint3 threadIdx [[thread_position_in_threadgroup]]) {
      const int bx = (int)blockIdx.x;
      ...

Buffer arguments are bound in parameter order: ``[[buffer(i)]]`` is the i-th kernel parameter
(arrays and scalars alike), which is how :mod:`.executable` launches it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from tvm.backend import sdk
from tvm.error import TVMError
from tvm.ir import expr as E
from tvm.ir import stmt as S
from tvm.ir.buffer import Buffer
from tvm.ir.dtype import DataType
from tvm.ir.function import IRModule, PrimFunc
from tvm.ir.visitor import post_order_visit

from .op import SIMDGROUP_SCOPE

__all__ = ["MetalCodegen", "SIMDGROUP_SCOPE", "generate_msl"]

_MATRIX_ELEMS = 64  # an 8x8 simdgroup matrix

# Words of MSL (and of the metal namespace) that generated names must avoid.
_MSL_RESERVED = frozenset(["kernel", "vertex", "fragment", "device", "constant", "threadgroup", "thread", "threadgroup_imageblock", "ray_data", "object_data", "half", "bfloat", "uint", "uchar", "ushort", "ulong", "char", "short", "long", "size_t", "ptrdiff_t", "metal", "using", "namespace", "template", "typename", "class", "private", "public", "protected", "this", "new", "delete", "operator", "true", "false", "threadIdx", "blockIdx", "simd_lane", "simd_group", "min", "max", "clamp", "select", "as_type", "dot", "mix", "step", "sign"])


def _msl(expr: str, name64: str | None = None) -> dict[str, Any]:
    """A math rule for float and half (MSL's overloads); bfloat goes through float."""
    return {"float32": expr, "float16": expr}


_MATH: dict[str, sdk.OpTemplate] = {
    f"tirx.{name}": _msl(f"{name}({{0}})")
    for name in ("exp", "exp2", "exp10", "log", "log2", "log10", "sqrt", "rsqrt", "sin", "cos",
                 "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "floor", "ceil",
                 "trunc", "rint", "fabs")
}
_MATH.update({
    "tirx.log1p": _msl("log(1.0f + ({0}))"),
    "tirx.sigmoid": _msl("(1.0f / (1.0f + exp(-({0}))))"),
    # round() rounds half to even, like numpy.round: MSL's rint.
    "tirx.round": _msl("rint({0})"),
    "tirx.nearbyint": _msl("rint({0})"),
    "tirx.pow": _msl("pow({0}, {1})"),
    "tirx.fmod": _msl("fmod({0}, {1})"),
    "tirx.atan2": _msl("atan2({0}, {1})"),
    "tirx.hypot": _msl("sqrt(({0}) * ({0}) + ({1}) * ({1}))"),
    "tirx.copysign": _msl("copysign({0}, {1})"),
    "tirx.fma": {"float32": "fma({0}, {1}, {2})", "float16": "fma({0}, {1}, {2})",
                 "default": "(({0}) * ({1}) + ({2}))"},
    "tirx.isnan": {"float": "isnan({0})"},
    "tirx.isinf": {"float": "isinf({0})"},
    "tirx.isfinite": {"float": "isfinite({0})"},
})


def _rule_reinterpret(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
    return f"as_type<{cg.storage_type(call.dtype)}>({args[1]})"


def _rule_abs(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
    dt = call.dtype
    if dt.is_float and dt.code == "bfloat":
        return f"(({cg.c_type(dt)})fabs((float)({args[0]})))"
    if dt.is_float:
        return f"fabs({args[0]})"
    if dt.is_uint or dt.is_bool:
        return args[0]
    return f"abs({args[0]})"


def _rule_popcount(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
    return f"(({cg.c_type(call.dtype)})popcount({args[0]}))"


def _rule_clz(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
    return f"(({cg.c_type(call.dtype)})clz({args[0]}))"


def _rule_unsupported(what: str) -> Any:
    def rule(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
        raise TVMError(f"op `{call.op.name}` is not supported on target 'metal': {what}")

    return rule


_rule_storage_sync = sdk.storage_sync_rule(
    {"shared": "threadgroup_barrier(mem_flags::mem_threadgroup)",
     "shared.dyn": "threadgroup_barrier(mem_flags::mem_threadgroup)",
     "warp": "simdgroup_barrier(mem_flags::mem_threadgroup)"},
    "Metal form (no barrier across threadgroups); end the kernel there and launch another",
    TVMError)


def _rule_shuffle(fn: str) -> Any:
    """The classic warp shuffles as SIMD-group shuffles (32 lanes; ``width`` must be 32)."""

    def rule(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
        width, warp = call.args[3], call.args[4]
        if not all(isinstance(x, E.IntImm) and x.value == 32 for x in (width, warp)):
            raise TVMError(f"{call.op.name}: Metal shuffles a whole SIMD group of 32 lanes; "
                           f"width and warp_size must be 32, got {args[3]} and {args[4]}")
        return f"{fn}({args[1]}, (ushort)({args[2]}))"

    return rule


_TEMPLATES: dict[str, sdk.OpTemplate] = {
    **sdk.CodegenCStyle.op_templates,
    **_MATH,
    "tirx.abs": _rule_abs,
    "tirx.popcount": _rule_popcount,
    "tirx.clz": _rule_clz,
    "tirx.reinterpret": _rule_reinterpret,
    "tirx.erf": _rule_unsupported("MSL has no erf"),
    "tirx.nextafter": _rule_unsupported("MSL has no nextafter"),
    "tirx.tvm_storage_sync": _rule_storage_sync,
    "tirx.tvm_warp_shuffle": _rule_shuffle("simd_shuffle"),
    "tirx.tvm_warp_shuffle_up": _rule_shuffle("simd_shuffle_up"),
    "tirx.tvm_warp_shuffle_down": _rule_shuffle("simd_shuffle_down"),
    "tirx.tvm_warp_shuffle_xor": _rule_shuffle("simd_shuffle_xor"),
}


class MetalCodegen(sdk.CodegenCStyle):
    """MSL for Apple GPUs. See the module docstring for what differs from the C base."""

    target_kind: ClassVar[str] = "metal"
    kernel_prefix: ClassVar[str] = "kernel "
    function_prefix: ClassVar[str] = "static inline "
    function_return_type: ClassVar[str] = "void"
    restrict_keyword: ClassVar[str] = ""
    pointer_qualifiers: ClassVar[dict[str, str]] = {
        "global": "device ", "shared": "threadgroup ", "shared.dyn": "threadgroup ",
        "constant": "constant ", "local": "thread ",
    }
    storage_qualifiers: ClassVar[dict[str, str]] = {
        "shared": "threadgroup ", "shared.dyn": "threadgroup ",
    }
    # MSL arrays are aligned to their element type; nothing vectorises across elements here.
    align_attribute: ClassVar[str] = ""
    alloc_alignment: ClassVar[int] = 16
    thread_index_names: ClassVar[dict[str, str]] = {
        "blockIdx.x": "blockIdx.x", "blockIdx.y": "blockIdx.y", "blockIdx.z": "blockIdx.z",
        "threadIdx.x": "threadIdx.x", "threadIdx.y": "threadIdx.y", "threadIdx.z": "threadIdx.z",
    }
    # The kernel arguments that read the thread indices: name, MSL type, attribute.
    builtin_params: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ("blockIdx", "uint3", "threadgroup_position_in_grid"),
        ("threadIdx", "uint3", "thread_position_in_threadgroup"),
    )
    type_names: ClassVar[dict[str, str]] = {
        "int8": "char", "int16": "short", "int32": "int", "int64": "long",
        "uint8": "uchar", "uint16": "ushort", "uint32": "uint", "uint64": "ulong",
        "float32": "float", "bool": "bool", "handle": "device void*", "void": "void",
    }
    half_type = "half"
    bfloat16_type = "bfloat"
    barrier: ClassVar[str | None] = "threadgroup_barrier(mem_flags::mem_threadgroup);"
    unroll_pragma: ClassVar[str | None] = "#pragma unroll({n})"
    vectorize_pragma: ClassVar[str | None] = None
    op_templates: ClassVar[dict[str, sdk.OpTemplate]] = _TEMPLATES
    includes: ClassVar[tuple[str, ...]] = ("metal_stdlib", "metal_simdgroup_matrix")

    def __init__(self, target: Any = None) -> None:
        super().__init__(target)
        self._handle_types: dict[int, DataType] = {}
        self._handle_scopes: dict[int, str] = {}

    # -- structure ------------------------------------------------------------------------
    def preamble_lines(self) -> list[str]:
        return [*super().preamble_lines(), "using namespace metal;"]

    def add_function(self, func: PrimFunc, name: str | None = None) -> sdk.FunctionInfo:
        self._handle_types, self._handle_scopes = _pointee_types(func)
        return super().add_function(func, name)

    def function_header(self, info: sdk.FunctionInfo) -> str:
        if not info.is_kernel:
            raise TVMError(
                f"target 'metal': function `{info.name}` is not a kernel; only the kernels of "
                "the split module (tirx.is_kernel) are printed as MSL, the host part runs in "
                "Python")
        params = [self.param_decl_at(p, i) for i, p in enumerate(info.params)]
        params += [f"{t} {n} [[{attr}]]" for n, t, attr in self.builtin_params]
        sep = ",\n" + " " * (len(self.kernel_prefix) + 5 + len(info.symbol) + 1)
        return f"{self.kernel_prefix}{self.kernel_return_type} {info.symbol}({sep.join(params)})"

    def param_decl_at(self, p: sdk.ParamInfo, index: int) -> str:
        """A kernel parameter bound to ``[[buffer(index)]]``."""
        if p.kind == "handle":
            var_id = next((k for k, n in self._names.items() if n == p.c_name), None)
            dtype = self._handle_types.get(var_id) if var_id is not None else None
            scope = self._handle_scopes.get(var_id, "global") if var_id is not None else "global"
            qual = self.pointer_qualifiers.get(scope, "device ")
            elem = self.storage_type(dtype) if dtype is not None else "uchar"
            return f"{qual}{elem}* {p.c_name} [[buffer({index})]]"
        if p.kind == "buffer":
            return f"device {self.storage_type(DataType(p.dtype))}* {p.c_name} [[buffer({index})]]"
        return f"constant {self.c_type(DataType(p.dtype))}& {p.c_name} [[buffer({index})]]"

    def assert_fail_lines(self, message: str) -> list[str]:
        # A GPU thread cannot report: a failed assert ends the thread (as TVM's Metal codegen).
        return ["return;"]

    def print_alloc(self, buffer: Buffer, annotations: Mapping[str, Any]) -> None:
        if buffer.scope != SIMDGROUP_SCOPE:
            super().print_alloc(buffer, annotations)
            return
        name = self.var_name(buffer.data, buffer.name)
        self._buffer_ptrs[id(buffer)] = name
        n = sdk.const_numel(buffer)
        if n is None or n % _MATRIX_ELEMS:
            raise TVMError(f"simdgroup buffer `{buffer.name}` must hold a constant multiple of "
                           f"64 elements (8x8 matrices), got shape {buffer.shape}")
        elem = {"float32": "float", "float16": "half", "bfloat16": "bfloat"}.get(str(buffer.dtype))
        if elem is None:
            raise TVMError(f"simdgroup buffer `{buffer.name}` has dtype {buffer.dtype}; simdgroup "
                           "matrices hold float32, float16 or bfloat16")
        self.emit(f"simdgroup_{elem}8x8 {name}[{n // _MATRIX_ELEMS}];")

    def print_heap_alloc(self, buffer: Buffer, name: str, ctype: str) -> None:
        raise TVMError(f"target 'metal' cannot allocate buffer `{buffer.name}` (scope "
                       f"{buffer.scope!r}) of dynamic or large size inside a kernel: give it a "
                       "constant shape, or pass it as an argument")

    # -- names ----------------------------------------------------------------------------
    def _sanitize(self, hint: str) -> str:
        name = super()._sanitize(hint)
        return name + "_" if name in _MSL_RESERVED else name

    # -- expressions ----------------------------------------------------------------------
    def expr_IntImm(self, e: E.IntImm) -> str:
        dt, v = e.dtype, e.value
        if dt.bits == 64 and not dt.is_bool:
            # MSL has no INT64_C/UINT64_C macros.
            return f"(({self.c_type(dt)}){v}{'UL' if dt.is_uint else 'L'})"
        return super().expr_IntImm(e)

    def expr_Min(self, e: E.Min) -> str:
        return self._min_max(e, "min")

    def expr_Max(self, e: E.Max) -> str:
        return self._min_max(e, "max")

    def _min_max(self, e: E.BinaryOp, fn: str) -> str:
        a, b = self.print_expr(e.a), self.print_expr(e.b)
        if e.dtype.code == "bfloat":
            return f"(({self.c_type(e.dtype)}){fn}((float)({a}), (float)({b})))"
        return f"{fn}({a}, {b})"

    def expr_Mod(self, e: E.Mod) -> str:
        if e.dtype.is_float:
            return self._float_binary(e, "fmod({0}, {1})")
        return super().expr_Mod(e)

    def expr_FloorDiv(self, e: E.FloorDiv) -> str:
        if e.dtype.is_float:
            return self._float_binary(e, "floor({0} / {1})")
        return super().expr_FloorDiv(e)

    def expr_FloorMod(self, e: E.FloorMod) -> str:
        if e.dtype.is_float:
            return self._float_binary(e, "({0} - floor({0} / {1}) * {1})")
        return super().expr_FloorMod(e)

    def _float_binary(self, e: E.BinaryOp, template: str) -> str:
        return self.render_template({"float32": template, "float16": template}, e.dtype,
                                    [self.print_expr(e.a), self.print_expr(e.b)], e)


def _pointee_types(func: PrimFunc) -> tuple[dict[int, DataType], dict[int, str]]:
    """Element type and storage scope of each handle parameter, from the buffers viewing it
    (a kernel receives data handles; its DeclBuffers and accesses say what they point to)."""
    types: dict[int, DataType] = {}
    scopes: dict[int, str] = {}
    for p in func.params:
        if p.dtype.is_handle and p.ptr_dtype is not None:
            types[id(p)] = p.ptr_dtype.element_of()
        if p.dtype.is_handle and p.ptr_scope:
            scopes[id(p)] = p.ptr_scope
    for p, buf in func.buffer_map.items():
        types.setdefault(id(p), buf.dtype.element_of())

    def visit(n: Any) -> None:
        if isinstance(n, (S.DeclBuffer, S.AllocBuffer, E.BufferLoad, S.BufferStore)):
            buf = n.buffer
            types.setdefault(id(buf.data), buf.dtype.element_of())
            if buf.scope in ("shared", "shared.dyn"):
                scopes.setdefault(id(buf.data), buf.scope)

    post_order_visit(func.body, visit)
    return types, scopes


def generate_msl(mod: IRModule | PrimFunc, target: Any = None) -> tuple[str, list[sdk.FunctionInfo]]:
    """(MSL source, signatures) of the kernels of ``mod`` (functions with ``tirx.is_kernel``)."""
    if isinstance(mod, PrimFunc):
        mod = IRModule.from_expr(mod)
    kernels = {n: f for n, f in mod.functions.items() if f.attrs.get("tirx.is_kernel")}
    if not kernels:
        raise TVMError("generate_msl: the module has no kernel (tirx.is_kernel); lower it with "
                       "the target's pipeline first (tvm.compile does)")
    cg = MetalCodegen(target)
    source = cg.generate(IRModule(kernels, mod.attrs))
    return source, cg.functions
