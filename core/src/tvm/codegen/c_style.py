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
  whose tag is here becomes ``const int tx = <builtin>;`` (``{extent}`` in it is the loop's
  extent). ``reserved_names``: the dialect's
  predefined names (``blockIdx``), which a variable so named is renamed around.
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

from typing import ClassVar

from ..ir.function import IRModule, PrimFunc
from .c_base import FunctionInfo, ParamInfo
from .c_rules import CUDA_STYLE_TEMPLATES, OpTemplate, const_dims
from .c_stmt import CStmtPrinter
from .source_map import record_function

__all__ = ["CodegenCStyle", "CudaStyleCodegen", "FunctionInfo", "OpTemplate", "ParamInfo",
           "const_dims"]


class CodegenCStyle(CStmtPrinter):
    """Prints lowered PrimFuncs as C-family source. See the module docstring for extension.

    Its layers, each a module: :class:`~tvm.codegen.c_base.CBase` (data, types, names),
    :class:`~tvm.codegen.c_expr.CExprPrinter` (expressions),
    :class:`~tvm.codegen.c_stmt.CStmtPrinter` (structure and statements); this class adds the
    entry points."""

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
        **{f"{kind}.{axis}": f"{kind}.{axis}" for kind in ("threadIdx", "blockIdx")
           for axis in "xyz"},
        # the CTA's index in its cluster (the loop's extent is the cluster's size on that axis;
        # clusters tile the grid, so it is the block index modulo that size)
        **{f"clusterCtaIdx.{axis}": f"(blockIdx.{axis} % {{extent}})" for axis in "xyz"},
    }
    reserved_names: ClassVar[frozenset[str]] = frozenset(
        {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"})
    type_names: ClassVar[dict[str, str]] = {
        "int8": "signed char", "int16": "short", "int32": "int", "int64": "long long",
        "uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int",
        "uint64": "unsigned long long", "float32": "float", "float64": "double", "bool": "bool",
        "handle": "void*", "void": "void",
    }
    barrier: ClassVar[str | None] = "__syncthreads()"
    # the classic barriers and warp shuffles (T.tvm_storage_sync, T.tvm_warp_shuffle*)
    op_templates: ClassVar[dict[str, OpTemplate]] = {**CodegenCStyle.op_templates,
                                                     **CUDA_STYLE_TEMPLATES}
    unroll_pragma: ClassVar[str | None] = "#pragma unroll"
    vectorize_pragma: ClassVar[str | None] = None
    includes: ClassVar[tuple[str, ...]] = ()
    kernels_only: ClassVar[bool] = True
    helper_prefix: ClassVar[str] = "static __device__ __forceinline__ "
    int64_suffix: ClassVar[str | None] = "LL"
