"""HIP C++ from lowered IR, on core's C-style codegen base.

HIP is CUDA's dialect for AMD GPUs, so the printing is CUDA-style, and the differences from C
are data (class attributes below), as in the CUDA backend, which this module does not import:
``extern "C" __global__``, ``__restrict__``, ``__shared__``, ``threadIdx``/``blockIdx``,
``__syncthreads()``, ``_Float16`` for ``float16`` (clang's native half on AMDGPU), ``bfloat16``
stored as 16 bits and computed in ``float``. Where HIP differs from CUDA:

* ``#include <hip/hip_runtime.h>`` (no NVRTC-style header-free translation units);
* ``__launch_bounds__(N, W)``: HIP's second operand is the minimum number of *wavefronts per
  execution unit* (SIMD), not CUDA's blocks per multiprocessor, so
  ``tirx.launch_bounds_min_blocks_per_sm = M`` becomes ``W = ceil(M * ceil(N / wave) / 4)``
  (four SIMDs per compute unit); AMD GPUs have no thread-block clusters, so a kernel that runs in
  clusters is refused;
* core's helpers (``static inline``) become ``static __device__ __forceinline__``.

A kernel (``tirx.is_kernel``) is printed as::

    extern "C" __global__ void __launch_bounds__(128) vadd_kernel(float* __restrict__ A, ...) {
      const int bx = (int)blockIdx.x;
      ...
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from tvm.backend import sdk
from tvm.error import CodegenError
from tvm.ir import expr as E
from tvm.ir.buffer import Buffer
from tvm.ir.function import IRModule, PrimFunc

__all__ = ["HipCodegen", "generate_hip"]

MIN_BLOCKS_PER_SM = "tirx.launch_bounds_min_blocks_per_sm"
MAX_BLOCKS_PER_CLUSTER = "tirx.launch_bounds_max_blocks_per_cluster"
SIMDS_PER_CU = 4


# A wavefront runs in lock step: its barrier only orders the compiler's memory accesses.
_rule_storage_sync = sdk.storage_sync_rule(
    {"shared": "__syncthreads()", "shared.dyn": "__syncthreads()",
     "warp": "__builtin_amdgcn_wave_barrier()"},
    "HIP form (no barrier across workgroups); end the kernel there and launch another")


def _rule_shuffle(fn: str) -> Any:
    """The classic shuffles as HIP's ``__shfl`` / ``__shfl_up`` / ``__shfl_down`` (a wavefront
    of the target's width: ``warp_size`` must be it)."""

    def rule(cg: Any, call: E.Call, args: list[str]) -> str:
        warp = call.args[4]
        if not isinstance(warp, E.IntImm) or warp.value != cg.wave:
            raise CodegenError(f"{call.op.name}: warp_size must be the wavefront width "
                               f"{cg.wave} on this target, got {args[4]}")
        return f"{fn}({args[1]}, {args[2]}, {args[3]})"

    return rule


class HipCodegen(sdk.KernelCodegen):
    """HIP C++ kernels from lowered PrimFuncs (see the module docstring): core's CUDA-style data,
    HIP's header, and typed kernel pointers."""

    target_kind: ClassVar[str] = "rocm"
    trap: ClassVar[str] = "__builtin_trap()"
    includes: ClassVar[tuple[str, ...]] = ("hip/hip_runtime.h",)
    typed_handles: ClassVar[bool] = True
    op_templates: ClassVar[dict[str, Any]] = {
        **sdk.CudaStyleCodegen.op_templates,
        "tirx.tvm_storage_sync": _rule_storage_sync,
        "tirx.tvm_warp_shuffle": _rule_shuffle("__shfl"),
        "tirx.tvm_warp_shuffle_up": _rule_shuffle("__shfl_up"),
        "tirx.tvm_warp_shuffle_down": _rule_shuffle("__shfl_down"),
        "tirx.tvm_warp_shuffle_xor": _rule_shuffle("__shfl_xor"),
    }

    def __init__(self, target: Any = None) -> None:
        super().__init__(target)
        self.half_type = "_Float16"
        attrs = target.attrs if target is not None else {}
        self.wave = int(attrs.get("thread_warp_size", 64))
        self.max_threads = int(attrs.get("max_threads_per_block", 1024))
        self.max_lds = int(attrs.get("max_shared_memory_per_block", 65536))
        self.kernels: list[sdk.FunctionInfo] = []

    # -- module ---------------------------------------------------------------------------
    def add_function(self, func: PrimFunc, name: str | None = None) -> sdk.FunctionInfo:
        info = super().add_function(func, name)  # lays out the dynamic shared memory
        if info.is_kernel:
            self.kernels.append(info)
        return info

    # -- kernel header (KernelCodegen puts the attributes before the name) -----------------
    def kernel_attributes(self, info: sdk.FunctionInfo, func: PrimFunc) -> str:
        launch = func.attrs.get("tirx.launch")
        cluster = sdk.const_dims(getattr(launch, "cluster", None))
        if (cluster is not None and cluster != (1, 1, 1)) or func.attrs.get(MAX_BLOCKS_PER_CLUSTER):
            raise CodegenError(f"target 'rocm': kernel `{info.name}` runs in thread-block "
                               "clusters, which AMD GPUs do not have")
        block = sdk.const_dims(getattr(launch, "block", None))
        min_blocks = func.attrs.get(MIN_BLOCKS_PER_SM)
        if isinstance(min_blocks, E.IntImm):
            min_blocks = min_blocks.value
        if block is None:
            if min_blocks is not None:
                raise CodegenError(f"target 'rocm': kernel `{info.name}`: launch-bounds hints "
                                   "need a block of constant size")
            return ""
        threads = block[0] * block[1] * block[2]
        if threads > self.max_threads:
            raise CodegenError(
                f"target 'rocm': kernel `{info.name}` has blocks of {threads} threads {block}, "
                f"more than the target's max_threads_per_block={self.max_threads}")
        if min_blocks is None:
            return f"__launch_bounds__({threads})"
        waves = math.ceil(int(min_blocks) * math.ceil(threads / self.wave) / SIMDS_PER_CU)
        return f"__launch_bounds__({threads}, {waves})"

    # -- statements (KernelCodegen: the trap, kernel arrays, dynamic shared memory) ----------
    def print_other_alloc(self, buffer: Buffer, annotations: Mapping[str, Any]) -> None:
        raise CodegenError(
            f"target 'rocm': a kernel cannot allocate buffer `{buffer.name}` in scope "
            f"{buffer.scope!r} (shape {list(buffer.shape)}): allocate it in 'local', "
            "'shared' or 'shared.dyn' with a constant shape, or pass it as a parameter")



def generate_hip(mod: IRModule | PrimFunc, target: Any = None) -> tuple[str, list[sdk.FunctionInfo]]:
    """(HIP C++ source, the kernels in it) for a lowered module."""
    cg = HipCodegen(target)
    source = cg.generate(mod)
    return source, cg.kernels
