"""The test kernels of the CUDA backend, each with the oldest arch it needs and a numpy reference.

Every kernel here is compiled with NVRTC for sm_80, sm_90a and sm_100a on CI
(``test_nvrtc_kernels.py``, skipping archs older than ``min_arch`` or outside ``archs``), and run
on the GPU against numpy in ``test_gpu_kernels.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, no_type_check

import numpy as np

__all__ = ["KERNELS", "KernelCase"]


@dataclass(frozen=True)
class KernelCase:
    name: str
    build: Callable[[], Any]
    inputs: Callable[[Any], list[np.ndarray]]
    reference: Callable[..., np.ndarray]
    output: int
    min_arch: int = 80
    archs: tuple[int, ...] | None = None  # only these (wgmma exists on sm_90a alone)
    why: str = ""
    atol: float = 1e-5
    rtol: float = 1e-5


# -- plain kernels ---------------------------------------------------------------------------------


@no_type_check
def vector_add(n: int = 1 << 20, threads: int = 256) -> Any:
    from tvm.script import tirx as T

    @T.prim_func
    def vadd(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
             C: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([n // threads])
        tx = T.thread_id([threads])
        C[bx * threads + tx] = A[bx * threads + tx] + B[bx * threads + tx]

    return vadd


@no_type_check
def vector_add_f16(n: int = 1 << 16, threads: int = 128) -> Any:
    from tvm.script import tirx as T

    @T.prim_func
    def vadd_f16(A: T.Buffer((n,), "float16"), B: T.Buffer((n,), "bfloat16"),
                 C: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([n // threads])
        tx = T.thread_id([threads])
        i = bx * threads + tx
        C[i] = T.Cast("float32", A[i]) + T.Cast("float32", B[i])

    return vadd_f16


@no_type_check
def vector_add_vec4(n: int = 1 << 20, threads: int = 256) -> Any:
    """Four elements per thread through a vectorized loop: float4 loads and stores."""
    from tvm.script import tirx as T

    @T.prim_func
    def vadd4(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
              C: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([n // (threads * 4)])
        tx = T.thread_id([threads])
        for v in T.vectorized(4):
            C[bx * threads * 4 + tx * 4 + v] = A[bx * threads * 4 + tx * 4 + v] \
                + B[bx * threads * 4 + tx * 4 + v]

    return vadd4


# -- reductions: warp shuffles, atomics ------------------------------------------------------------


@no_type_check
def row_softmax(m: int = 512, n: int = 2048, threads: int = 128) -> Any:
    from tvm_backend_cuda.demo import softmax_kernel

    return softmax_kernel(m, n, threads)


@no_type_check
def row_sum_warps(m: int = 256, n: int = 1024, threads: int = 256) -> Any:
    """8 warps per CTA, 8 rows per CTA: Tx.cta.sum through the warp_shuffle variant."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    rows = 8

    @T.prim_func
    def row_sum(A: T.Buffer((m, n), "float32"), S: T.Buffer((m,), "float32")):
        T.device_entry()
        bx = T.cta_id([m // rows])
        tx = T.thread_id([threads])
        Tx.cta.sum(S[bx * rows:bx * rows + rows], A[bx * rows:bx * rows + rows, 0:n], axes=-1)

    return row_sum


@no_type_check
def total_sum_atomic(n: int = 1 << 18, chunk: int = 1024, threads: int = 128) -> Any:
    """Each CTA reduces a chunk with warp shuffles, then one atomicAdd per CTA."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    @T.prim_func
    def total(A: T.Buffer((n // chunk, chunk), "float32"), out: T.Buffer((1,), "float32")):
        T.device_entry()
        bx = T.cta_id([n // chunk])
        tx = T.thread_id([threads])
        part = T.alloc_buffer((1,), "float32", scope="shared")
        Tx.cta.sum(part[0:1], A[bx:bx + 1, 0:chunk], axes=-1)
        if tx == 0:
            T.cuda.atomic_add(out[0], part[0])

    return total


@no_type_check
def warp_allreduce_shfl(n: int = 4096) -> Any:
    """Explicit T.cuda.__shfl_xor_sync butterflies: every lane ends with its warp's sum."""
    from tvm.script import tirx as T

    @T.prim_func
    def allreduce(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([n // 128])
        tx = T.thread_id([128])
        v = T.alloc_buffer((1,), "float32", scope="local")
        v[0] = A[bx * 128 + tx]
        v[0] = v[0] + T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), v[0], 16, 32)
        v[0] = v[0] + T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), v[0], 8, 32)
        v[0] = v[0] + T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), v[0], 4, 32)
        v[0] = v[0] + T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), v[0], 2, 32)
        v[0] = v[0] + T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), v[0], 1, 32)
        B[bx * 128 + tx] = v[0]

    return allreduce


# -- matmul ----------------------------------------------------------------------------------------


@no_type_check
def tiled_matmul(size: int = 256) -> Any:
    from tvm_backend_cuda.demo import matmul_kernel

    return matmul_kernel(size)


# -- cp.async (T.ptx ops) --------------------------------------------------------------------------


@no_type_check
def cp_async_copy(n: int = 1 << 16, threads: int = 128) -> Any:
    """global -> shared with 16-byte cp.async per thread, commit, wait, then shared -> global x2."""
    from tvm.script import tirx as T

    per = threads * 4

    @T.prim_func
    def cp_async_double(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([n // per])
        tx = T.thread_id([threads])
        S = T.alloc_buffer((per,), "float32", scope="shared")
        T.ptx.cp_async(S[tx * 4], A[bx * per + tx * 4], 16)
        T.ptx.cp_async.commit_group()
        T.ptx.cp_async.wait_group(0)
        T.cuda.cta_sync()
        for j in T.serial(4):
            B[bx * per + tx * 4 + j] = S[tx * 4 + j] * T.float32(2)

    return cp_async_double


# -- inline CUDA through T.cuda.func_call ----------------------------------------------------------

_MMA_SRC = r"""
__device__ __forceinline__ void tvm_test_ldmatrix_mma(const half* A, const half* Bt, float* C) {
  __shared__ __attribute__((aligned(16))) half As[16 * 16];
  __shared__ __attribute__((aligned(16))) half Bs[8 * 16];
  int lane = threadIdx.x;
  for (int i = lane; i < 256; i += 32) As[i] = A[i];
  for (int i = lane; i < 128; i += 32) Bs[i] = Bt[i];
  __syncwarp();
  unsigned a0, a1, a2, a3, b0, b1;
  unsigned aaddr = (unsigned)__cvta_generic_to_shared(&As[(lane % 16) * 16 + (lane / 16) * 8]);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(aaddr));
  unsigned baddr = (unsigned)__cvta_generic_to_shared(&Bs[(lane % 8) * 16 + ((lane / 8) % 2) * 8]);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
               : "=r"(b0), "=r"(b1) : "r"(baddr));
  float c0 = 0.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  int g = lane / 4, t = lane % 4;
  C[g * 8 + t * 2] = c0; C[g * 8 + t * 2 + 1] = c1;
  C[(g + 8) * 8 + t * 2] = c2; C[(g + 8) * 8 + t * 2 + 1] = c3;
}
"""


@no_type_check
def ldmatrix_mma() -> Any:
    from tvm.script import tirx as T

    @T.prim_func
    def mma_tile(A: T.Buffer((16, 16), "float16"), Bt: T.Buffer((8, 16), "float16"),
                 C: T.Buffer((16, 8), "float32")):
        T.device_entry()
        tx = T.thread_id([32])
        T.cuda.func_call("tvm_test_ldmatrix_mma", A.data, Bt.data, C.data, source_code=_MMA_SRC)

    return mma_tile


_BULK_SRC = r"""
__device__ __forceinline__ void tvm_test_bulk_copy(const float* src, float* dst) {
  __shared__ __attribute__((aligned(128))) float buf[1024];
  __shared__ __attribute__((aligned(8))) unsigned long long bar;
  unsigned bar_addr = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_addr) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(bar_addr), "r"(4096) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1], %2, [%3];"
                 :: "r"((unsigned)__cvta_generic_to_shared(buf)),
                    "l"(src + blockIdx.x * 1024), "r"(4096), "r"(bar_addr) : "memory");
  }
  unsigned done = 0;
  while (!done) {
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done) : "r"(bar_addr), "r"(0) : "memory");
  }
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) dst[blockIdx.x * 1024 + i] = buf[i] + 1.0f;
}
"""


@no_type_check
def tma_bulk_copy(blocks: int = 64) -> Any:
    from tvm.script import tirx as T

    n = blocks * 1024

    @T.prim_func
    def bulk_copy(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([blocks])
        tx = T.thread_id([128])
        T.cuda.func_call("tvm_test_bulk_copy", A.data, B.data, source_code=_BULK_SRC)

    return bulk_copy


_WGMMA_SRC = r"""
__device__ __forceinline__ unsigned long long tvm_test_desc(const void* smem, unsigned lbo,
                                                            unsigned sbo) {
  unsigned long long addr = (unsigned long long)__cvta_generic_to_shared(smem);
  return ((addr & 0x3FFFFULL) >> 4) | ((unsigned long long)((lbo >> 4) & 0x3FFF) << 16) |
         ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32);
}
// D[64x8] = A[64x16] @ Bt[8x16]^T in f32 from f16: one wgmma.m64n8k16, operands in shared memory
// in the no-swizzle core-matrix layout (8 rows x 16 bytes per core matrix).
__device__ __forceinline__ void tvm_test_wgmma(const half* A, const half* Bt, float* D) {
  __shared__ __attribute__((aligned(128))) half As[64 * 16];
  __shared__ __attribute__((aligned(128))) half Bs[8 * 16];
  int t = threadIdx.x;
  for (int e = t; e < 64 * 16; e += 128) {
    int m = e / 16, k = e % 16;
    As[((m / 8) * 2 + k / 8) * 64 + (m % 8) * 8 + k % 8] = A[e];
  }
  for (int e = t; e < 8 * 16; e += 128) {
    int n = e / 16, k = e % 16;
    Bs[(k / 8) * 64 + n * 8 + k % 8] = Bt[e];
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  unsigned long long da = tvm_test_desc(As, 128, 256), db = tvm_test_desc(Bs, 128, 256);
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %6, 0;\n\t"
               "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 "
               "{%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n\t}"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(da), "l"(db), "r"(0));
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  int w = t / 32, l = t % 32;
  int row = w * 16 + l / 4, col = (l % 4) * 2;
  D[row * 8 + col] = d0; D[row * 8 + col + 1] = d1;
  D[(row + 8) * 8 + col] = d2; D[(row + 8) * 8 + col + 1] = d3;
}
"""


@no_type_check
def wgmma_tile() -> Any:
    from tvm.script import tirx as T

    @T.prim_func
    def wgmma_m64n8k16(A: T.Buffer((64, 16), "float16"), Bt: T.Buffer((8, 16), "float16"),
                       D: T.Buffer((64, 8), "float32")):
        T.device_entry()
        tx = T.thread_id([128])
        T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})
        T.cuda.func_call("tvm_test_wgmma", A.data, Bt.data, D.data, source_code=_WGMMA_SRC)

    return wgmma_m64n8k16


# -- inputs and references -------------------------------------------------------------------------


def _f32(rng: Any, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype("float32")


def _f16(rng: Any, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype("float16")


def _z(*shape: int) -> np.ndarray:
    return np.zeros(shape, "float32")


def _softmax(a: np.ndarray, _b: Any) -> np.ndarray:
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _warp_sums(a: np.ndarray, _b: Any) -> np.ndarray:
    return np.repeat(a.reshape(-1, 32).sum(1), 32)


KERNELS: list[KernelCase] = [
    KernelCase("vector_add", vector_add, lambda r: [_f32(r, 1 << 20), _f32(r, 1 << 20),
                                                    _z(1 << 20)],
               lambda a, b, _c: a + b, 2),
    KernelCase("vector_add_vec4", vector_add_vec4,
               lambda r: [_f32(r, 1 << 20), _f32(r, 1 << 20), _z(1 << 20)],
               lambda a, b, _c: a + b, 2),
    KernelCase("vector_add_f16_bf16", vector_add_f16,
               lambda r: [_f16(r, 1 << 16), _f32(r, 1 << 16), _z(1 << 16)],
               lambda a, b, _c: a.astype("float32") + b, 2, atol=1e-2, rtol=1e-2),
    KernelCase("row_softmax", row_softmax, lambda r: [_f32(r, 512, 2048), _z(512, 2048)],
               _softmax, 1, atol=1e-6, rtol=1e-4),
    KernelCase("row_sum_warps", row_sum_warps, lambda r: [_f32(r, 256, 1024), _z(256)],
               lambda a, _s: a.astype("float64").sum(1), 1, atol=1e-3, rtol=1e-4),
    KernelCase("total_sum_atomic", total_sum_atomic, lambda r: [_f32(r, 256, 1024), _z(1)],
               lambda a, _o: np.array([a.astype("float64").sum()]), 1, atol=5e-2, rtol=1e-4),
    KernelCase("warp_allreduce_shfl", warp_allreduce_shfl, lambda r: [_f32(r, 4096), _z(4096)],
               _warp_sums, 1, atol=1e-4, rtol=1e-5),
    KernelCase("tiled_matmul", tiled_matmul,
               lambda r: [_f32(r, 256, 256), _f32(r, 256, 256), _z(256, 256)],
               lambda a, b, _c: a.astype("float64") @ b.astype("float64"), 2, atol=1e-3,
               rtol=1e-4),
    KernelCase("cp_async_copy", cp_async_copy, lambda r: [_f32(r, 1 << 16), _z(1 << 16)],
               lambda a, _b: a * 2, 1),
    KernelCase("ldmatrix_mma", ldmatrix_mma, lambda r: [_f16(r, 16, 16), _f16(r, 8, 16), _z(16, 8)],
               lambda a, bt, _c: a.astype("float32") @ bt.astype("float32").T, 2, atol=1e-2,
               rtol=1e-3),
    KernelCase("tma_bulk_copy_mbarrier", tma_bulk_copy, lambda r: [_f32(r, 64 * 1024),
                                                                   _z(64 * 1024)],
               lambda a, _b: a + 1, 1, min_arch=90,
               why="cp.async.bulk and mbarrier expect_tx need sm_90"),
    KernelCase("wgmma_m64n8k16", wgmma_tile, lambda r: [_f16(r, 64, 16), _f16(r, 8, 16),
                                                        _z(64, 8)],
               lambda a, bt, _d: a.astype("float32") @ bt.astype("float32").T, 2, min_arch=90,
               archs=(90,), why="wgmma exists on sm_90a only", atol=1e-2, rtol=1e-3),
]
