"""A Triton GEMM of the same job as ``tvm_backend_cuda.kernels``' GEMM: C[m, n] = A[m, k] @ B[n, k]^T
(B K-major, like a Linear layer's weight), float32 accumulation, bfloat16 out; float8 e4m3
operands with two float32 per-tensor scales. Written for this benchmark (the classic tiled
``tl.dot`` loop with grouped program ordering; Triton pipelines the loads itself).

Only imported on the GPU machine (``import triton`` there).
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl


@triton.jit
def _abt_kernel(a_ptr, b_ptr, c_ptr, sa_ptr, sb_ptr, M, N, K,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                SCALED: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    per_group = GROUP_M * grid_n
    group = pid // per_group
    first_m = group * GROUP_M
    size_m = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % size_m
    pid_n = (pid % per_group) // size_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rn[:, None] * K + rk[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kb in range(0, tl.cdiv(K, BK)):
        k_ok = rk[None, :] < K - kb * BK
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & k_ok, other=0.0)
        b = tl.load(b_ptrs, mask=(rn[:, None] < N) & k_ok, other=0.0)
        acc = tl.dot(a, tl.trans(b), acc)
        a_ptrs += BK
        b_ptrs += BK
    if SCALED:
        acc = acc * (tl.load(sa_ptr) * tl.load(sb_ptr))
    c_ptrs = c_ptr + rm[:, None] * N + rn[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul_abt(a: Any, b: Any, c: Any, scale_a: Any = None, scale_b: Any = None) -> Any:
    """c = (a @ b.T) [* scale_a * scale_b]; a [M, K], b [N, K] (bf16, or fp8 e4m3 with the two
    float32 one-element scale tensors), c [M, N] bf16."""
    M, K = a.shape
    N = b.shape[0]
    scaled = scale_a is not None
    bk = 128 if a.element_size() == 1 else 64
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 256),)
    _abt_kernel[grid](a, b, c, scale_a if scaled else c, scale_b if scaled else c, M, N, K,
                      BM=128, BN=256, BK=bk, GROUP_M=8, SCALED=scaled, num_warps=8,
                      num_stages=3)
    return c
