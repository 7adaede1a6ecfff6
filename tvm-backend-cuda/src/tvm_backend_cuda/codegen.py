"""CUDA C++ from lowered IR, printed by core's C-style codegen base.

Input: the module after ``SplitHostDevice`` and the device finalizer (``docs/lowering.md`` sections
4 and 5). Every kernel (``tirx.is_kernel``) becomes::

    extern "C" __global__ void __launch_bounds__(128) main_kernel(float* __restrict__ A, ...)

The host function (``tirx.is_host``) is not printed: the executable interprets its launches.

CUDA differs from C mostly by *data* (class attributes below): the kernel prefix, ``__restrict__``,
``__shared__`` for shared scopes, the ``threadIdx``/``blockIdx`` spellings, ``half`` /
``__nv_bfloat16`` / ``__nv_fp8_*`` types, ``__syncthreads()``. The methods overridden are where
the structure differs:

- the kernel header: ``__launch_bounds__(N)`` when the block has a constant size ``N``;
  ``(N, M)`` with ``tirx.launch_bounds_min_blocks_per_sm = M``; a third operand with
  ``tirx.launch_bounds_max_blocks_per_cluster``; ``__cluster_dims__(x, y, z)`` when the kernel
  runs in clusters. The attribute names never reach the source.
- ``shared.dyn`` allocations: one ``extern __shared__`` byte array per kernel, aligned to the
  largest ``align`` of the dynamic buffers (16 at least), each buffer at its offset from
  :func:`tvm.tirx.transform.dyn_smem_layout` (the size the launch asks for). Static ``shared`` and
  ``local`` arrays are ``__attribute__((aligned(max(16, align))))``.
- ``T.TensorMap`` parameters (``ptr_scope="grid_constant"``): ``const __grid_constant__
  CUtensorMap TM``, the variable printed as ``(&TM)`` (``docs/lowering.md`` section 8).
- vector stores of 2 or 4 contiguous 32-bit values (``float4``, ``int2``, ...) at an index that is
  a provable multiple of the lane count; the executable checks the alignment of such parameters.
- headers: ``cuda_fp16.h`` / ``cuda_bf16.h`` / ``cuda_fp8.h`` only when the source uses their
  types, plus any a device-intrinsic rule asks for (``need_header``).

Device intrinsics print through their rule ``op.get_codegen("cuda")``: either the C-style form
``rule(codegen, call, args) -> str`` or the intrinsics contract ``rule(call, emit) -> str`` where
``emit(expr)`` prints a sub-expression and ``emit.ctx`` is this codegen (``arch``,
``add_helper``, ``need_header``, ``c_type``).
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from tvm.backend.sdk import CudaStyleCodegen, FunctionInfo, KernelCodegen, ParamInfo, const_dims
from tvm.error import NotModelledError, TVMError
from tvm.ir import expr as E
from tvm.ir import stmt as S
from tvm.ir.buffer import Buffer
from tvm.ir.function import IRModule, PrimFunc

from .compiler import needed_headers
from .emulator_asm import INLINE_ASM as _INLINE_ASM
from .intrinsics._base import EMULATE_ATTR, RULE_ATTR
from .tags import sm_version
from .vector_access import is_const, multiple_of, ramp_base, vector_loads

__all__ = ["CudaCodegen", "KernelInfo", "generate_cuda", "sm_version"]

MIN_BLOCKS_PER_SM = "tirx.launch_bounds_min_blocks_per_sm"
MAX_BLOCKS_PER_CLUSTER = "tirx.launch_bounds_max_blocks_per_cluster"
GRID_CONSTANT = "grid_constant"  # ptr_scope of a T.TensorMap parameter
TENSOR_MAP = "tensormap"  # its ParamInfo kind, and its type in the executable's kernel table
# cuda.h's CUtensorMap, for translation units that do not include cuda.h (NVRTC has no driver
# header without a toolkit): 128 opaque bytes, 64-byte aligned.
CU_TENSOR_MAP_DECL = """\
#ifndef __cuda_cuda_h__
typedef struct CUtensorMap_st { alignas(64) unsigned long long opaque[16]; } CUtensorMap;
#endif"""

# the C dialects' rules, which the two CUDA rules below fall back to (both are callables)
_ADDRESS_OF = cast(Callable[..., str], KernelCodegen.op_templates["tirx.address_of"])
_REINTERPRET = cast(Callable[..., str], KernelCodegen.op_templates["tirx.reinterpret"])
_VECTOR_NAMES = {"float32": "float", "int32": "int", "uint32": "uint"}
_LANE_FIELDS = "xyzw"
_CHUNK_TYPES = {16: "uint4", 8: "uint2", 4: "unsigned int"}


#: NVRTC has no <cstdint>: a translation unit that uses the fixed-width integer types (inline
#: CUDA of T.cuda.func_call, say) gets them declared first. 64-bit types are ``long long`` on
#: every host (``long`` is 32-bit on Windows).
FIXED_WIDTH_INT_TYPEDEFS = (
    "typedef signed char int8_t;\ntypedef short int16_t;\ntypedef int int32_t;\n"
    "typedef long long int64_t;\ntypedef unsigned char uint8_t;\n"
    "typedef unsigned short uint16_t;\ntypedef unsigned int uint32_t;\n"
    "typedef unsigned long long uint64_t;"
)
_INT_TYPE_USE = re.compile(r"\bu?int(?:8|16|32|64)_t\b")
# what declares those types already: a header (a second typedef of another type would not
# compile) or the source's own typedefs
_DECLARES_INT_TYPES = re.compile(
    r"#\s*include\s*[<\"](?:cstdint|stdint\.h|cuda/std/cstdint|nvshmem[^>\"]*)[>\"]"
    r"|typedef[^;]*\bu?int(?:8|16|32|64)_t\s*;"
)


def uses_undeclared_int_types(body: str, headers: list[str]) -> bool:
    """Whether ``body`` uses ``int32_t`` and friends with nothing that declares them."""
    if not _INT_TYPE_USE.search(body) or _DECLARES_INT_TYPES.search(body):
        return False
    return not any(h in ("cstdint", "stdint.h", "cuda/std/cstdint") or h.startswith("nvshmem")
                   for h in headers)


@dataclass

class KernelInfo:
    """A printed kernel: its C signature, the PrimFunc it came from, and the parameters whose
    pointer must be aligned (bytes) because the kernel accesses them with vector types."""

    info: FunctionInfo
    func: PrimFunc
    vector_align: dict[str, int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.info.symbol


class _Emit:
    """The ``emit`` of the intrinsics' rule contract: prints sub-expressions; ``ctx`` is the
    codegen."""

    __slots__ = ("cg", "ctx")

    def __init__(self, cg: CudaCodegen) -> None:
        self.cg = cg
        self.ctx = cg

    def __call__(self, e: Any) -> str:
        if isinstance(e, (E.PrimExpr, Buffer)):
            return self.cg.print_expr(e)
        return str(e)


_RULE_ARITY: dict[int, int] = {}


def _rule_arity(rule: Any) -> int:
    key = id(rule)
    n = _RULE_ARITY.get(key)
    if n is None:
        try:
            params = [p for p in inspect.signature(rule, follow_wrapped=False).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            n = len(params)
        except (TypeError, ValueError):
            n = 3
        _RULE_ARITY[key] = n
    return n


class CudaCodegen(KernelCodegen):
    """CUDA C++ kernels from lowered PrimFuncs (see the module docstring). The CUDA-style data
    (kernel prefix, ``__restrict__``, ``__shared__``, thread indices, ``__syncthreads()``, plain
    C++ types) is core's :class:`~tvm.codegen.c_style.CudaStyleCodegen`, and the kernel's memory
    (dynamic shared memory, kernel arrays), its trap and its attributes are core's
    :class:`~tvm.backend.kernel_codegen.KernelCodegen`, both shared with HIP."""

    target_kind: ClassVar[str] = "cuda"
    # Plain C++ types (NVRTC has no <stdint.h> without a toolkit), and NVIDIA's fp8 types.
    type_names: ClassVar[dict[str, str]] = {
        **CudaStyleCodegen.type_names,
        "float8_e4m3fn": "__nv_fp8_e4m3", "float8_e5m2": "__nv_fp8_e5m2",
    }
    op_templates: ClassVar[dict[str, Any]] = {
        **KernelCodegen.op_templates,
        "tirx.address_of": lambda cg, call, args: cg._address_of(call, args),
        "tirx.reinterpret": lambda cg, call, args: cg._reinterpret(call, args),
    }
    # A failed run-time bounds check prints its message, then traps (assert_fail_lines).
    bounds_report: ClassVar[str] = 'printf("tvm: %s (block %d, thread %d)\\n", message, ' \
        "(int)blockIdx.x, (int)threadIdx.x)"

    def __init__(self, target: Any = None, *, emulate: bool = False) -> None:
        super().__init__(target)
        self.emulate = emulate
        self._intrin: str | None = None  # the intrinsic being rendered (emulate mode)
        self.half_type = "half"
        self.bfloat16_type = "__nv_bfloat16"
        self.arch: int | None = sm_version(target)
        self.kernels: list[KernelInfo] = []
        self._headers: list[str] = []
        self._emit = _Emit(self)
        self._vector_align: dict[str, int] = {}
        self._param_names: dict[int, str] = {}
        self._temp_names: dict[int, str] = {}
        self._temp_lanes: dict[int, str] = {}  # vector loads read into register arrays
        self._grid_constants: set[int] = set()  # ids of T.TensorMap parameters

    # -- the rule context (intrinsics/README.md) ------------------------------------------------
    def need_header(self, header: str) -> None:
        """``#include <header>`` at the top of the translation unit (once)."""
        if header not in self._headers:
            self._headers.append(header)

    # -- module -------------------------------------------------------------------------------
    def add_function(self, func: PrimFunc, name: str | None = None) -> FunctionInfo:
        self._vector_align = {}
        info = super().add_function(func, name)  # lays out the dynamic shared memory
        if info.is_kernel:
            self.kernels.append(KernelInfo(info, func, dict(self._vector_align)))
        return info

    def finish(self) -> str:
        body = super().finish()
        headers = list(self._headers)
        for h in needed_headers(body):
            if h not in headers:
                headers.append(h)
        # cuda_fp8.h includes the fp16 and bf16 headers itself
        if "cuda_fp8.h" in headers:
            headers = [h for h in headers if h not in ("cuda_fp16.h", "cuda_bf16.h")]
        lines = [f"#include <{h}>" for h in headers]
        if uses_undeclared_int_types(body, headers):
            lines.append(FIXED_WIDTH_INT_TYPEDEFS)
        return ("\n".join(lines) + "\n\n" + body) if lines else body

    def preamble_lines(self) -> list[str]:
        return []

    # -- kernel header (KernelCodegen puts the attributes before the name) -----------------------
    def kernel_attributes(self, info: FunctionInfo, func: PrimFunc) -> str:
        launch = func.attrs.get("tirx.launch")
        parts: list[str] = []
        cluster = const_dims(getattr(launch, "cluster", None))
        if cluster is not None and cluster != (1, 1, 1):
            parts.append(f"__cluster_dims__({cluster[0]}, {cluster[1]}, {cluster[2]})")
        block = const_dims(getattr(launch, "block", None))
        min_blocks = _positive_attr(func, MIN_BLOCKS_PER_SM)
        max_cluster = _positive_attr(func, MAX_BLOCKS_PER_CLUSTER)
        if block is not None:
            bounds = [str(block[0] * block[1] * block[2])]
            if min_blocks is not None or max_cluster is not None:
                bounds.append(str(min_blocks if min_blocks is not None else 0))
            if max_cluster is not None:
                bounds.append(str(max_cluster))
            parts.append(f"__launch_bounds__({', '.join(bounds)})")
        elif min_blocks is not None or max_cluster is not None:
            raise TVMError(f"kernel {func.name}: launch-bounds hints need a block of constant "
                           f"size, got {getattr(launch, 'block', None)}")
        return " ".join(parts)

    # -- parameters -----------------------------------------------------------------------------
    def _collect_params(self, func: PrimFunc) -> list[ParamInfo]:
        params = super()._collect_params(func)
        for p, var in zip(params, func.params):
            if p.kind == "handle" and isinstance(var, E.Var) and var.ptr_scope == GRID_CONSTANT:
                # ``T.TensorMap``: the descriptor itself is the parameter; the body's handle is
                # its address (expr_Var), which is what the TMA instructions take.
                p.kind = TENSOR_MAP
                self._grid_constants.add(id(var))
                self.add_helper("CUtensorMap", CU_TENSOR_MAP_DECL)
            # A kernel receives buffers as their data handles: type them by what they point to.
            elif p.kind == "handle" and isinstance(var, E.Var) and var.ptr_dtype is not None:
                p.kind = "buffer"
                p.dtype = str(var.ptr_dtype.element_of())
            self._param_names[id(var)] = p.name
        return params

    def param_decl(self, p: ParamInfo) -> str:
        if p.kind == TENSOR_MAP:
            return f"const __grid_constant__ CUtensorMap {p.c_name}"
        return super().param_decl(p)

    # -- statements (KernelCodegen: traps, kernel arrays, dynamic shared memory) ----------------
    def print_heap_alloc(self, buffer: Buffer, name: str, ctype: str) -> None:
        raise TVMError(f"kernel cannot allocate buffer `{buffer.name}` in scope {buffer.scope!r}"
                       f" (shape {list(buffer.shape)}): allocate in 'local', 'shared' or "
                       "'shared.dyn' with a constant shape, or pass it as a parameter")

    # -- vector stores ---------------------------------------------------------------------------
    def print_vector_store(self, stmt: S.BufferStore, lanes: int) -> None:
        vtype = self._vector_type(stmt.buffer, stmt.indices, lanes)
        if vtype is None or not self._vectorizable(stmt.value, lanes):
            self._print_chunked_store(stmt, lanes)
            return
        temps: list[str] = []
        for load in vector_loads(stmt.value):
            ltype = self._vector_type(load.buffer, load.indices, lanes)
            if ltype is None:
                continue
            tmp = self._fresh("vec")
            base = self.flat_index(load.buffer, [ramp_base(load.indices[0])])
            self.emit(f"const {ltype} {tmp} = *(const {ltype}*)(&{self.buffer_ptr(load.buffer)}"
                      f"[{base}]);")
            self._temp_names[id(load)] = tmp
            temps.append(tmp)
        try:
            values = [self.print_expr(self._lane_of(stmt.value, k)) for k in range(lanes)]
        finally:
            for load in vector_loads(stmt.value):
                self._temp_names.pop(id(load), None)
        base = self.flat_index(stmt.buffer, [ramp_base(stmt.indices[0])])
        self.emit(f"*({vtype}*)(&{self.buffer_ptr(stmt.buffer)}[{base}]) = "
                  f"make_{vtype}({', '.join(values)});")

    def _print_chunked_store(self, stmt: S.BufferStore, lanes: int) -> None:
        """A vector store of any element type: every contiguous, provably aligned vector load
        of the value is read with 16-, 8- or 4-byte accesses into a register array (its lanes
        read back through a typed pointer, which the compiler keeps in registers), and the
        store is written the same way when its target allows, else lane by lane (``local``
        targets: registers)."""
        loads = vector_loads(stmt.value)
        for load in loads:
            plan = self._chunk_plan(load.buffer, load.indices, lanes)
            if plan is None:
                continue
            ctype, width = plan
            tmp = self._fresh("vec")
            self.emit(f"{ctype} {tmp}[{lanes // width}];")
            for c, addr in self._chunk_addresses(load, lanes, width):
                self.emit(f"{tmp}[{c}] = *(const {ctype}*)({addr});")
            elem = self.storage_type(load.buffer.dtype.element_of())
            self._temp_lanes[id(load)] = f"((const {elem}*){tmp})"
        try:
            values = [self._lane_of(stmt.value, k) for k in range(lanes)]
            plan = self._chunk_plan(stmt.buffer, stmt.indices, lanes)
            if plan is None:
                for k, value in enumerate(values):
                    indices = [self.lane(i, k) for i in stmt.indices]
                    self._print_scalar_store(stmt.buffer, indices, value)
                return
            ctype, width = plan
            tmp = self._fresh("st")
            elem = self.storage_type(stmt.buffer.dtype.element_of())
            self.emit(f"{ctype} {tmp}[{lanes // width}];")
            for k, value in enumerate(values):
                self.emit(f"(({elem}*){tmp})[{k}] = {self.print_expr(value)};")
            for c, addr in self._chunk_addresses(stmt, lanes, width):
                self.emit(f"*({ctype}*)({addr}) = {tmp}[{c}];")
        finally:
            for load in loads:
                self._temp_lanes.pop(id(load), None)

    def _chunk_addresses(self, access: E.BufferLoad | S.BufferStore, lanes: int, width: int
                         ) -> Iterator[tuple[int, str]]:
        """``(c, "&ptr[index]")`` of each ``width``-element access ``c`` of a ``lanes``-wide
        vector load or store."""
        base = ramp_base(access.indices[0])
        ptr = self.buffer_ptr(access.buffer)
        for c in range(lanes // width):
            yield c, f"&{ptr}[{self.flat_index(access.buffer, [base + c * width if c else base])}]"

    def _chunk_plan(self, buffer: Buffer, indices: list[Any], lanes: int) -> tuple[str, int] | None:
        """(C type of one access, elements per access) for reading or writing ``lanes``
        contiguous elements of ``buffer`` at a provably aligned index with 16/8/4-byte
        accesses; None when that cannot be shown (or for registers)."""
        if len(indices) != 1 or buffer.scope not in ("global", "shared", "shared.dyn"):
            return None
        dt = buffer.dtype.element_of()
        if self.is_emulated(dt) or dt.bits % 8 or dt.is_bool:
            return None
        index = indices[0]
        if not (isinstance(index, E.Ramp) and is_const(index.stride, 1)):
            return None
        param = self._param_names.get(id(buffer.data))
        if buffer.scope == "global" and param is None:
            return None  # a view of unknown alignment
        total = lanes * dt.bytes
        for nbytes in (16, 8, 4):
            width = nbytes // dt.bytes
            if width < 1 or total % nbytes or nbytes < dt.bytes:
                continue
            offset = buffer.elem_offset
            if not multiple_of(index.base, width) or not (
                    is_const(offset, 0) or multiple_of(offset, width)):
                continue
            if param is not None:
                self._vector_align[param] = max(self._vector_align.get(param, 0), nbytes)
            return _CHUNK_TYPES[nbytes], width
        return None

    def _lane_of(self, e: Any, lane: int) -> Any:
        if isinstance(e, E.BufferLoad) and id(e) in self._temp_lanes:
            v = E.Var("lane", e.dtype.element_of())
            self._names[id(v)] = f"{self._temp_lanes[id(e)]}[{lane}]"
            return v
        if isinstance(e, E.BufferLoad) and id(e) in self._temp_names:
            v = E.Var("lane", e.dtype.element_of())
            self._names[id(v)] = f"{self._temp_names[id(e)]}.{_LANE_FIELDS[lane]}"
            return v
        if isinstance(e, E.BinaryOp) and e.dtype.lanes > 1:
            return type(e)(self._lane_of(e.a, lane), self._lane_of(e.b, lane))
        if isinstance(e, E.Cast) and e.dtype.lanes > 1:
            return E.Cast(e.dtype.element_of(), self._lane_of(e.value, lane))
        if isinstance(e, E.Call) and e.dtype.lanes > 1:
            return E.Call(e.dtype.element_of(), e.op, [self._lane_of(a, lane) for a in e.args])
        return self.lane(e, lane)

    def _vectorizable(self, value: Any, lanes: int) -> bool:
        return value.dtype.lanes == lanes

    def _vector_type(self, buffer: Buffer, indices: list[Any], lanes: int) -> str | None:
        """``float4`` etc. when ``buffer[indices]`` is ``lanes`` contiguous, aligned elements."""
        name = _VECTOR_NAMES.get(str(buffer.dtype.element_of()))
        if name is None or lanes not in (2, 4) or len(indices) != 1:
            return None
        index = indices[0]
        if not (isinstance(index, E.Ramp) and is_const(index.stride, 1)):
            return None
        offset = buffer.elem_offset
        if not multiple_of(index.base, lanes) or not (
                is_const(offset, 0) or multiple_of(offset, lanes)):
            return None
        param = self._param_names.get(id(buffer.data))
        if param is not None:
            align = lanes * buffer.dtype.bytes
            self._vector_align[param] = max(self._vector_align.get(param, 0), align)
        elif buffer.scope not in ("local", "shared", "shared.dyn"):
            return None  # a view of unknown alignment
        return f"{name}{lanes}"

    # -- expressions ----------------------------------------------------------------------------
    def expr_FloatImm(self, e: E.FloatImm) -> str:
        v = e.value
        if not (math.isnan(v) or math.isinf(v)):
            return super().expr_FloatImm(e)
        # no <math.h> macros in NVRTC without headers: build the bits
        if e.dtype.bits == 64:
            bits = "0x7ff8000000000000LL" if math.isnan(v) else "0x7ff0000000000000LL"
            text = f"__longlong_as_double({bits})"
        else:
            text = f"__int_as_float({'0x7fc00000' if math.isnan(v) else '0x7f800000'})"
        if math.isinf(v) and v < 0:
            text = f"(-{text})"
        if e.dtype.bits in (16, 8) or e.dtype.code == "bfloat":
            return f"(({self.c_type(e.dtype)})({text}))"
        return text

    def expr_Call(self, call: E.Call) -> str:
        if self.emulate and call.op.get_attr(RULE_ATTR) is not None:
            return self._emulated_call(call)
        rule = call.op.get_codegen(self.target_kind)
        if callable(rule) and _rule_arity(rule) == 2:
            return rule(call, self._emit)
        return super().expr_Call(call)

    # -- the CPU emulator (emulator.py) -----------------------------------------------------------
    def _emulated_call(self, call: E.Call) -> str:
        """An intrinsic for the emulator: its emulation body where its spec declares one, else
        its CUDA rule when that renders plain CUDA C++ (the shim's built-ins); a rule that needs
        PTX without an emulation body is an error naming the intrinsic."""
        emulation = call.op.get_attr(EMULATE_ATTR)
        # the helpers an emulation body adds may hold inline PTX (a T.cuda.func_call's
        # hand-written source): the emulator translates that (emulator_asm); a CUDA rule's PTX
        # without an emulation body stays an error naming the intrinsic
        outer, self._intrin = self._intrin, None if emulation is not None else call.op.name
        try:
            if emulation is not None:
                return str(emulation(call, self._emit))
            text = str(call.op.get_attr(RULE_ATTR)(call, self._emit))
            if _INLINE_ASM.search(text):
                raise _not_emulated(call.op.name)
            return text
        finally:
            self._intrin = outer

    def add_helper(self, name: str, code: str) -> str:
        if self.emulate and self._intrin is not None and _INLINE_ASM.search(code):
            raise _not_emulated(self._intrin)
        return super().add_helper(name, code)

    def _address_of(self, call: E.Call, args: list[str]) -> str:
        """``T.address_of(m)`` of a ``T.TensorMap`` parameter: the map's address as the seed
        prints it (``(unsigned long long)(&(m))``); a buffer element's as the C dialects do."""
        arg = call.args[0] if call.args else None
        if isinstance(arg, E.Var) and id(arg) in self._grid_constants:
            return f"((unsigned long long)(&({self.var_name(arg)})))"
        return _ADDRESS_OF(self, call, args)

    def _reinterpret(self, call: E.Call, args: list[str]) -> str:
        """``T.reinterpret`` between a pointer and a 64-bit integer: C++'s
        ``reinterpret_cast`` (as the seed prints it); other pairs through the C dialects' copy
        of the bits."""
        src, dst = call.args[1].dtype, call.dtype
        if src.is_handle and dst.bits == 64 and dst.is_integer and dst.lanes == 1:
            return f"reinterpret_cast<{dst}_t>({args[1]})"
        if dst.is_handle and src.bits == 64 and src.is_integer and src.lanes == 1:
            return f"reinterpret_cast<void*>({args[1]})"
        return _REINTERPRET(self, call, args)

    def expr_Var(self, v: E.Var) -> str:
        name = self._names.get(id(v))
        if name is None:
            name = self.var_name(v)
        return f"(&{name})" if id(v) in self._grid_constants else name


# -- helpers --------------------------------------------------------------------------------------

def _not_emulated(op_name: str) -> NotModelledError:
    path = op_name.removeprefix("tirx.")
    return NotModelledError(
        f"intrinsic {path} has no emulation body; the CUDA emulator cannot run a kernel that "
        f"uses it (its CUDA rule emits PTX). Run the kernel on a GPU, or give the intrinsic's "
        f"@intrin spec an emulate= rule (tvm_backend_cuda/intrinsics)")


def _positive_attr(func: PrimFunc, key: str) -> int | None:
    value = func.attrs.get(key)
    if value is None:
        return None
    if isinstance(value, E.IntImm):
        value = value.value
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise TVMError(f"kernel {func.name}: {key} must be a positive integer, got {value!r}")
    return value


def generate_cuda(mod: IRModule | PrimFunc, target: Any = None, *, emulate: bool = False
                  ) -> tuple[str, list[KernelInfo]]:
    """(CUDA C++ source, the kernels in it) for a lowered module; ``emulate``: for the CPU
    emulator (intrinsics render their emulation bodies, :mod:`.emulator`)."""
    cg = CudaCodegen(target, emulate=emulate)
    source = cg.generate(mod)
    return source, cg.kernels
