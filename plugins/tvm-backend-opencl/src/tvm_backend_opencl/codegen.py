"""Lowered IR to OpenCL C, on core's C-style codegen base.

OpenCL C differs from the base mostly by data: ``__kernel void``, the ``__global`` / ``__local``
address spaces, work-item functions for the thread indices (``get_group_id(0)``,
``get_local_id(0)``), ``barrier(CLK_LOCAL_MEM_FENCE)``, OpenCL's type names (``uchar``,
``long``, ``half``) and its overloaded math (``exp``, not ``expf``), ``as_<type>`` for bit casts.
The methods overridden are where the structure differs:

* the kernel header: ``__attribute__((reqd_work_group_size(X, Y, Z)))`` when the work-group
  has a constant size (OpenCL's launch bounds), checked against the target's
  ``max_threads_per_block``;
* ``__local`` arrays are declared at the top of the kernel (OpenCL allows them only in the
  kernel's outermost scope), and ``shared.dyn`` buffers live in one ``__local uchar*`` kernel
  argument whose size the launch sets (``cl.LocalMemory``);
* vector stores of 2, 3, 4, 8 or 16 lanes are printed with OpenCL's vector types
  (``vstore4(vload4(0, A + i) + (float4)(1.0f), 0, C + i)``) when every load is contiguous;
  anything else is printed lane by lane;
* ``float16`` without ``cl_khr_fp16`` (target ``fp16=False``) is stored as 16 bits and
  computed in ``float`` through ``vload_half``/``vstore_half_rte``; ``bfloat16`` always is.

A kernel (``tirx.is_kernel``) is printed as::

    __kernel void __attribute__((reqd_work_group_size(128, 1, 1)))
    vadd_kernel(__global float* restrict A, __global float* restrict C, int n) {
      const int bx = (int)get_group_id(0);
      ...
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
from tvm.ir.visitor import post_order_visit

__all__ = ["DYN_SMEM", "KernelInfo", "OpenCLCodegen", "generate_opencl"]

DYN_SMEM = "tvm_dyn_smem"
VECTOR_LANES = (2, 3, 4, 8, 16)
LOCAL_SCOPES = ("shared", "shared.dyn")

# Words of OpenCL C that generated names must avoid (beyond C's).
_CL_RESERVED = frozenset(["kernel", "global", "local", "constant", "private", "read_only", "write_only", "read_write", "uchar", "ushort", "uint", "ulong", "half", "long", "image2d_t", "image3d_t", "sampler_t", "event_t", "select", "clamp", "mix", "step", "sign", "dot", "cross", "length", "distance", "normalize", "barrier", "mem_fence", "get_global_id", "get_local_id", "get_group_id", "get_local_size", "get_num_groups", "convert_float", "vload4", "vstore4", "as_float", "as_int", "as_uint"])


def _cl_math(expr: str) -> dict[str, str]:
    """A math rule for OpenCL's overloaded builtins (float, double and, with fp16, half)."""
    return {"float": expr}


_MATH: dict[str, sdk.OpTemplate] = {
    f"tirx.{name}": _cl_math(f"{name}({{0}})")
    for name in ("exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin",
                 "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "erf", "floor",
                 "ceil", "trunc", "rint", "fabs")
}
_MATH.update({
    "tirx.sigmoid": _cl_math("(1.0f / (1.0f + exp(-({0}))))"),
    # round() rounds half to even, like numpy.round: OpenCL's rint in the default mode.
    "tirx.round": _cl_math("rint({0})"),
    "tirx.nearbyint": _cl_math("rint({0})"),
    "tirx.pow": _cl_math("pow({0}, {1})"),
    "tirx.fmod": _cl_math("fmod({0}, {1})"),
    "tirx.atan2": _cl_math("atan2({0}, {1})"),
    "tirx.hypot": _cl_math("hypot({0}, {1})"),
    "tirx.copysign": _cl_math("copysign({0}, {1})"),
    "tirx.nextafter": _cl_math("nextafter({0}, {1})"),
    "tirx.fma": {"float": "fma({0}, {1}, {2})", "default": "(({0}) * ({1}) + ({2}))"},
    "tirx.isnan": {"float": "isnan({0})"},
    "tirx.isinf": {"float": "isinf({0})"},
    "tirx.isfinite": {"float": "isfinite({0})"},
})


def _rule_reinterpret(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
    src, dst = call.args[1].dtype, call.dtype
    if src.bits != dst.bits:
        raise CodegenError(f"reinterpret of {src} as {dst}: the sizes differ")
    value = args[1]
    if cg.is_emulated(src):
        value = f"{cg.to_storage_fn(src)}({value})"
    out = f"as_{cg.storage_type(dst)}({value})"
    return f"{cg.from_storage_fn(dst)}({out})" if cg.is_emulated(dst) else out


def _rule_abs(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
    dt = call.dtype
    if dt.is_float:
        return f"fabs({args[0]})"
    if dt.is_uint or dt.is_bool:
        return args[0]
    return f"(({cg.c_type(dt)})abs({args[0]}))"  # abs() of a signed int is unsigned in OpenCL


def _rule_popcount(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
    return f"(({cg.c_type(call.dtype)})popcount({args[0]}))"


def _rule_clz(cg: sdk.CodegenCStyle, call: E.Call, args: list[str]) -> str:
    return f"(({cg.c_type(call.dtype)})clz({args[0]}))"


_TEMPLATES: dict[str, sdk.OpTemplate] = {
    **sdk.CodegenCStyle.op_templates,
    **_MATH,
    "tirx.abs": _rule_abs,
    "tirx.popcount": _rule_popcount,
    "tirx.clz": _rule_clz,
    "tirx.reinterpret": _rule_reinterpret,
}

# 16-bit floats without native arithmetic: stored as ushort, computed in float. OpenCL has no
# memcpy; vload_half/vstore_half_rte convert (they need no cl_khr_fp16), and bfloat16 is the
# upper half of a float's bits.
_F16_HELPERS = (
    ("tvm_f16_to_f32", "static inline float tvm_f16_to_f32(ushort h) "
     "{ return vload_half(0, (const half*)&h); }"),
    ("tvm_f32_to_f16", "static inline ushort tvm_f32_to_f16(float f) "
     "{ ushort h; vstore_half_rte(f, 0, (half*)&h); return h; }"),
    ("tvm_round_f16", "static inline float tvm_round_f16(float f) "
     "{ return tvm_f16_to_f32(tvm_f32_to_f16(f)); }"),
)
_BF16_HELPERS = (
    ("tvm_bf16_to_f32", "static inline float tvm_bf16_to_f32(ushort v) "
     "{ return as_float((uint)v << 16); }"),
    ("tvm_f32_to_bf16", "static inline ushort tvm_f32_to_bf16(float f) {\n"
     "  uint u = as_uint(f);\n"
     "  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);\n"
     "  u += 0x7fffu + ((u >> 16) & 1u);  /* round to nearest even */\n"
     "  return (ushort)(u >> 16);\n}"),
    ("tvm_round_bf16", "static inline float tvm_round_bf16(float f) "
     "{ return tvm_bf16_to_f32(tvm_f32_to_bf16(f)); }"),
)


@dataclass
class KernelInfo:
    """A printed kernel: its C signature and whether it takes the dynamic ``__local`` buffer
    (an extra last argument whose size the launch gives)."""

    info: sdk.FunctionInfo
    dyn_smem: bool = False

    @property
    def name(self) -> str:
        return self.info.symbol


class OpenCLCodegen(sdk.CodegenCStyle):
    """OpenCL C kernels from lowered PrimFuncs (see the module docstring)."""

    target_kind: ClassVar[str] = "opencl"
    kernel_prefix: ClassVar[str] = "__kernel "
    function_prefix: ClassVar[str] = "static inline "
    function_return_type: ClassVar[str] = "void"
    pointer_qualifiers: ClassVar[dict[str, str]] = {
        "global": "__global ", "shared": "__local ", "shared.dyn": "__local ",
        "constant": "__constant ", "local": "__private ",
    }
    storage_qualifiers: ClassVar[dict[str, str]] = {"shared": "__local ", "shared.dyn": "__local "}
    alloc_alignment: ClassVar[int] = 16
    max_stack_bytes: ClassVar[int] = 0  # no heap in kernels: only the scopes below are arrays
    stack_scopes: ClassVar[frozenset[str]] = frozenset({"local", "shared", "warp"})
    thread_index_names: ClassVar[dict[str, str]] = {
        **{f"blockIdx.{a}": f"get_group_id({i})" for i, a in enumerate("xyz")},
        **{f"threadIdx.{a}": f"get_local_id({i})" for i, a in enumerate("xyz")},
    }
    type_names: ClassVar[dict[str, str]] = {
        "int8": "char", "int16": "short", "int32": "int", "int64": "long",
        "uint8": "uchar", "uint16": "ushort", "uint32": "uint", "uint64": "ulong",
        "float32": "float", "float64": "double", "bool": "bool", "handle": "void*",
        "void": "void",
    }
    barrier: ClassVar[str | None] = "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"
    unroll_pragma: ClassVar[str | None] = "__attribute__((opencl_unroll_hint({n})))"
    vectorize_pragma: ClassVar[str | None] = None
    op_templates: ClassVar[dict[str, sdk.OpTemplate]] = _TEMPLATES
    includes: ClassVar[tuple[str, ...]] = ()
    kernels_only: ClassVar[bool] = True
    int64_suffix: ClassVar[str | None] = "L"
    typed_handles: ClassVar[bool] = True
    float16_helpers: ClassVar[tuple[tuple[str, str], ...]] = _F16_HELPERS
    bfloat16_helpers: ClassVar[tuple[tuple[str, str], ...]] = _BF16_HELPERS

    def __init__(self, target: Any = None) -> None:
        super().__init__(target)
        attrs = target.attrs if target is not None else {}
        self.half_type = "half" if attrs.get("fp16", False) else None
        self.max_work_group = int(attrs.get("max_threads_per_block", 1024))
        self.max_local_bytes = int(attrs.get("max_shared_memory_per_block", 32768))
        self.kernels: list[KernelInfo] = []
        self._func: PrimFunc | None = None
        self._hoisted: set[int] = set()
        self._dyn_offsets: dict[int, int] = {}
        self._uses_double = False
        self._uses_half = False

    # -- module ---------------------------------------------------------------------------
    def add_function(self, func: PrimFunc, name: str | None = None) -> sdk.FunctionInfo:
        self._func = func
        self._hoisted = set()
        placed, total = sdk.dyn_smem_layout(func.body)
        self._dyn_offsets = {id(buf): off for buf, off in placed}
        info = super().add_function(func, name)
        if info.is_kernel:
            self._check_local_memory(info, func, total)
            self.kernels.append(KernelInfo(info, bool(placed)))
        return info

    def preamble_lines(self) -> list[str]:
        lines = []
        if self._uses_double:
            lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
        if self._uses_half and self.half_type is not None:
            lines.append("#pragma OPENCL EXTENSION cl_khr_fp16 : enable")
        return lines

    # -- kernel header ----------------------------------------------------------------------
    def function_header(self, info: sdk.FunctionInfo) -> str:
        if not info.is_kernel:
            return super().function_header(info)
        params = [self.param_decl(p) for p in info.params]
        if self._dyn_offsets:
            params.append(f"__local uchar* {DYN_SMEM}")
        attrs = self._work_group_attribute(info)
        head = f"{self.kernel_prefix}{self.kernel_return_type} {attrs}{info.symbol}"
        return f"{head}({', '.join(params) or 'void'})"

    def _work_group_attribute(self, info: sdk.FunctionInfo) -> str:
        launch = self._func.attrs.get("tirx.launch") if self._func is not None else None
        block = sdk.const_dims(getattr(launch, "block", None))
        if block is None:
            return ""
        size = block[0] * block[1] * block[2]
        if size > self.max_work_group:
            raise CodegenError(
                f"target 'opencl': kernel `{info.name}` has work-groups of {size} work-items "
                f"{block}, more than the target's max_threads_per_block={self.max_work_group}; "
                "use fewer threads per CTA (or a target with a larger limit)")
        return f"__attribute__((reqd_work_group_size({block[0]}, {block[1]}, {block[2]})))\n"

    def _check_local_memory(self, info: sdk.FunctionInfo, func: PrimFunc, dyn_bytes: int) -> None:
        static = 0

        def visit(n: Any) -> None:
            nonlocal static
            if isinstance(n, S.AllocBuffer) and n.buffer.scope == "shared":
                count = sdk.const_numel(n.buffer)
                static += (count or 0) * n.buffer.dtype.bytes

        post_order_visit(func.body, visit)
        if static + dyn_bytes > self.max_local_bytes:
            raise CodegenError(
                f"target 'opencl': kernel `{info.name}` uses {static + dyn_bytes} bytes of "
                f"__local memory, more than the target's max_shared_memory_per_block="
                f"{self.max_local_bytes}")

    # -- parameters -------------------------------------------------------------------------
    def param_decl(self, p: sdk.ParamInfo) -> str:
        self._note_type(DataType(p.dtype) if p.kind != "handle" else None)
        if p.kind == "scalar" and DataType(p.dtype).is_bool:
            return f"uchar {p.c_name}"  # bool is not a valid kernel argument type in OpenCL C
        return super().param_decl(p)

    # -- statements ---------------------------------------------------------------------------
    def print_function_body(self, func: PrimFunc) -> None:
        if self._cur_info.is_kernel:
            self._hoist_local_arrays(func)
        super().print_function_body(func)

    def _hoist_local_arrays(self, func: PrimFunc) -> None:
        """``__local`` arrays may only be declared in the kernel's outermost scope."""
        found: list[S.AllocBuffer] = []

        def visit(n: Any) -> None:
            if isinstance(n, S.AllocBuffer) and n.buffer.scope in LOCAL_SCOPES:
                found.append(n)

        post_order_visit(func.body, visit)
        for alloc in found:
            self._declare_local(alloc.buffer)
            self._hoisted.add(id(alloc.buffer))

    def _declare_local(self, buffer: Buffer) -> None:
        name = self.var_name(buffer.data, buffer.name)
        self._buffer_ptrs[id(buffer)] = name
        ctype = self.storage_type(buffer.dtype)
        if buffer.scope == "shared.dyn":
            self.emit(f"__local {ctype}* {name} = (__local {ctype}*)({DYN_SMEM} + "
                      f"{self._dyn_offsets[id(buffer)]});")
            return
        n = sdk.const_numel(buffer)
        if n is None:
            raise CodegenError(f"target 'opencl': __local buffer `{buffer.name}` needs a constant "
                               f"shape, got {list(buffer.shape)}")
        align = max(self.alloc_alignment, buffer.align)
        self.emit(f"__local {ctype} {name}[{max(n, 1)}] {self.align_attribute.format(n=align)};")

    def print_alloc(self, buffer: Buffer, annotations: Mapping[str, Any]) -> None:
        if id(buffer) in self._hoisted:
            return
        self._note_type(buffer.dtype)
        n = sdk.const_numel(buffer)
        if n is None or not (buffer.scope in self.stack_scopes or self._private_global(buffer)):
            raise CodegenError(
                f"target 'opencl': a kernel cannot allocate buffer `{buffer.name}` in scope "
                f"{buffer.scope!r} (shape {list(buffer.shape)}): allocate it in 'local', "
                "'shared' or 'shared.dyn' with a constant shape, or pass it as a parameter")
        name = self.var_name(buffer.data, buffer.name)
        self._buffer_ptrs[id(buffer)] = name
        align = self.align_attribute.format(n=max(self.alloc_alignment, buffer.align))
        self.emit(f"{self.storage_type(buffer.dtype)} {name}[{max(n, 1)}] {align};")

    def _private_global(self, buffer: Buffer) -> bool:
        """A small ``global`` allocation of a kernel of one work-item (host-form code runs as
        one CTA of one thread) is that work-item's private array: nobody else could see it."""
        launch = self._func.attrs.get("tirx.launch") if self._func is not None else None
        one = (1, 1, 1)
        single = (sdk.const_dims(getattr(launch, "block", None)) == one
                  and sdk.const_dims(getattr(launch, "grid", None)) == one)
        n = sdk.const_numel(buffer) or 0
        return (buffer.scope == "global" and single
                and n * buffer.dtype.bytes <= sdk.CodegenCStyle.max_stack_bytes)

    def assert_fail_lines(self, message: str) -> list[str]:
        # A work-item cannot report: a failed assert ends it (as Apache TVM's OpenCL codegen).
        text = message.replace("*/", "* /").replace("\n", " ")
        return [f"return;  /* {text} */"]

    def stmt_LetStmt(self, stmt: S.LetStmt) -> None:
        v = stmt.var
        if v.dtype.is_handle and v.ptr_dtype is not None:
            # A pointer into a buffer: it points into the buffer's address space.
            name = self.var_name(v)
            pointee = self.storage_type(v.ptr_dtype)
            space = self.pointer_qualifiers.get(v.ptr_scope or "global", "__global ")
            self.emit(f"{space}{pointee}* {name} = ({space}{pointee}*)"
                      f"({self.print_expr(stmt.value)});")
            self.print_stmt(stmt.body)
            return
        super().stmt_LetStmt(stmt)

    # -- vector stores ------------------------------------------------------------------------
    def print_vector_store(self, stmt: S.BufferStore, lanes: int) -> None:
        index = stmt.indices[0] if len(stmt.indices) == 1 else None
        value = self._vector(stmt.value, lanes) if _contiguous(index, lanes) else None
        if value is None or self.is_emulated(stmt.buffer.dtype) or lanes not in VECTOR_LANES:
            super().print_vector_store(stmt, lanes)
            return
        assert isinstance(index, E.Ramp)
        base = self.flat_index(stmt.buffer, [index.base])
        self.emit(f"vstore{lanes}({value}, 0, {self.buffer_ptr(stmt.buffer)} + {base});")

    def _vector(self, e: Any, lanes: int) -> str | None:
        """``e`` as an OpenCL vector expression of ``lanes`` lanes, or None where it is not
        one (then the store is printed lane by lane)."""
        if not isinstance(e, E.PrimExpr) or e.dtype.lanes != lanes or lanes not in VECTOR_LANES:
            return None
        dt = e.dtype.element_of()
        if self.is_emulated(dt) or dt.is_bool:
            return None
        vtype = f"{self.storage_type(dt)}{lanes}"
        if isinstance(e, E.Broadcast):
            return f"(({vtype})({self.print_expr(e.value)}))"
        if isinstance(e, E.BufferLoad):
            index = e.indices[0] if len(e.indices) == 1 else None
            if not _contiguous(index, lanes) or self.is_emulated(e.buffer.dtype):
                return None
            assert isinstance(index, E.Ramp)
            base = self.flat_index(e.buffer, [index.base])
            return f"vload{lanes}(0, {self.buffer_ptr(e.buffer)} + {base})"
        if isinstance(e, E.Cast):
            inner = self._vector(e.value, lanes)
            return None if inner is None else f"convert_{vtype}({inner})"
        op = _VECTOR_BINARY.get(type(e))
        if op is not None and isinstance(e, E.BinaryOp):
            if type(e) in (E.Div, E.Mod) and not dt.is_float:
                return None  # C's truncation; keep the scalar printing's rules
            a, b = self._vector(e.a, lanes), self._vector(e.b, lanes)
            if a is None or b is None:
                return None
            return f"{op}({a}, {b})" if op.isidentifier() else f"({a} {op} {b})"
        return None

    # -- expressions ----------------------------------------------------------------------------
    def expr_FloatImm(self, e: E.FloatImm) -> str:
        self._note_type(e.dtype)
        return super().expr_FloatImm(e)

    def expr_Cast(self, e: E.Cast) -> str:
        self._note_type(e.dtype)
        return super().expr_Cast(e)

    def expr_Min(self, e: E.Min) -> str:
        return self._min_max(e, "min", "fmin")

    def expr_Max(self, e: E.Max) -> str:
        return self._min_max(e, "max", "fmax")

    def _min_max(self, e: E.BinaryOp, int_fn: str, float_fn: str) -> str:
        a, b = self.print_expr(e.a), self.print_expr(e.b)
        if e.dtype.is_float:
            text = f"{float_fn}({a}, {b})"
            return f"{self.round_fn(e.dtype)}({text})" if self.is_emulated(e.dtype) else text
        return f"{int_fn}({a}, {b})"

    def expr_Mod(self, e: E.Mod) -> str:
        if e.dtype.is_float:
            return self._float_call(e, {"float": "fmod({0}, {1})"})
        return super().expr_Mod(e)

    def expr_FloorDiv(self, e: E.FloorDiv) -> str:
        if e.dtype.is_float:
            return self._float_call(e, {"float": "floor({0} / {1})"})
        return super().expr_FloorDiv(e)

    def expr_FloorMod(self, e: E.FloorMod) -> str:
        if e.dtype.is_float:
            return self._float_call(e, {"float": "({0} - floor({0} / {1}) * {1})"})
        return super().expr_FloorMod(e)

    # -- types ----------------------------------------------------------------------------------
    def storage_type(self, dt: DataType | str) -> str:
        dt = DataType(dt).element_of()
        if self.is_emulated(dt):
            return "ushort"
        self._note_type(dt)
        return super().storage_type(dt)

    def _note_type(self, dt: DataType | None) -> None:
        """Remember the types whose extension pragma the source needs."""
        if dt is None:
            return
        if dt.code == "float" and dt.bits == 64:
            self._uses_double = True
        elif dt.code == "float" and dt.bits == 16:
            self._uses_half = True

    def _sanitize(self, hint: str) -> str:
        name = super()._sanitize(hint)
        return name + "_" if name in _CL_RESERVED else name


_VECTOR_BINARY: dict[type, str] = {
    E.Add: "+", E.Sub: "-", E.Mul: "*", E.Div: "/",
}


def _contiguous(index: Any, lanes: int) -> bool:
    return (isinstance(index, E.Ramp) and index.lanes == lanes
            and isinstance(index.stride, E.IntImm) and index.stride.value == 1
            and index.base.dtype.lanes == 1)


def generate_opencl(mod: IRModule | PrimFunc, target: Any = None) -> tuple[str, list[KernelInfo]]:
    """(OpenCL C source, the kernels in it) for a lowered module."""
    cg = OpenCLCodegen(target)
    source = cg.generate(mod)
    return source, cg.kernels
