"""A tiled f16 GEMM on the tensor cores, written with tile primitives: ``Tx.cta.gemm`` lowered by
the CUDA backend's ``mma.m16n8k*`` variant (ldmatrix + mma.sync).

    C (f32, [m, n]) = A (f16/bf16, [m, k]) @ B (f16/bf16, [k, n])

One CTA of 4 warps per 128x128 tile of C. Per 32-wide K step the CTA stages A and B tiles in
shared memory with ``Tx.cta.copy`` (rows padded by 8 elements so ``ldmatrix`` is free of bank
conflicts), then ``Tx.cta.gemm(D, As, Bs, D, beta=1.0)`` accumulates into D, a ``local`` buffer
with the accumulator layout of a 2x2 split of the CTA's warps (64x64 per warp, 128 float
registers per thread). The epilogue writes each thread's fragment to C (PTX's m16n8 C layout).

    PYTHONPATH=core/src:tvm-backend-cuda/src python tvm-backend-cuda/examples/matmul_mma.py
"""

from __future__ import annotations

from typing import Any, no_type_check

BM, BN, BK = 128, 128, 32
WARPS_M, WARPS_N = 2, 2
PAD = 8  # elements of padding per shared row: 16 bytes, keeps ldmatrix rows on distinct banks


@no_type_check  # TVMScript: the parser gives these annotations meaning
def matmul_mma_kernel(m: int, n: int, k: int, dtype: str = "float16") -> Any:
    """The PrimFunc of C = A @ B; m, n multiples of 128, k a multiple of 32."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm_backend_cuda.dispatch.gemm_mma import mma_accumulator_layout

    if m % BM or n % BN or k % BK:
        raise ValueError(f"matmul_mma_kernel: m, n must be multiples of {BM}, k of {BK}; "
                         f"got {m}, {n}, {k}")
    layout = mma_accumulator_layout(BM, BN, WARPS_M, WARPS_N)
    tm, tn = BM // WARPS_M, BN // WARPS_N  # the warp's tile
    mt, nt = tm // 16, tn // 8  # its 16x8 mma tiles
    regs = mt * nt * 4

    @T.prim_func
    def matmul_mma(A: T.Buffer((m, k), dtype), B: T.Buffer((k, n), dtype),
                   C: T.Buffer((m, n), "float32")):
        T.device_entry()
        bx, by = T.cta_id([n // BN, m // BM])
        tx = T.thread_id([128])
        As = T.alloc_buffer((BM, BK + PAD), dtype, scope="shared")
        Bs = T.alloc_buffer((BK, BN + PAD), dtype, scope="shared")
        D = T.alloc_buffer((BM, BN), "float32", scope="local", layout=layout)
        # the same registers, by index (the layout's memory offset) rather than by element
        Dr = T.decl_buffer((regs,), "float32", data=D.data, scope="local")
        for i in T.unroll(regs):
            Dr[i] = T.float32(0)
        for kk in T.serial(k // BK):
            Tx.cta.copy(As[0:BM, 0:BK], A[by * BM:by * BM + BM, kk * BK:kk * BK + BK])
            Tx.cta.copy(Bs[0:BK, 0:BN], B[kk * BK:kk * BK + BK, bx * BN:bx * BN + BN])
            Tx.cta.gemm(D, As[0:BM, 0:BK], Bs[0:BK, 0:BN], D, beta=1.0)
            T.cuda.cta_sync()  # before the next copies overwrite the tiles
        for i in T.unroll(mt):
            for j in T.unroll(nt):
                for e in T.unroll(4):
                    C[by * BM + tx // 32 // WARPS_N * tm + i * 16 + e // 2 * 8 + tx % 32 // 4,
                      bx * BN + tx // 32 % WARPS_N * tn + j * 8 + tx % 4 * 2 + e % 2] = \
                        Dr[(i * nt + j) * 4 + e]

    return matmul_mma


def main() -> None:
    import numpy as np

    import tvm
    from tvm_backend_cuda.plugin import register_backend

    register_backend()
    m = n = k = 1024
    ex = tvm.compile(matmul_mma_kernel(m, n, k), target="cuda")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype("float16")
    b = rng.standard_normal((k, n)).astype("float16")
    import torch

    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    tc = torch.zeros((m, n), device="cuda")
    ex(ta, tb, tc)
    torch.cuda.synchronize()
    want = a.astype("float32") @ b.astype("float32")
    np.testing.assert_allclose(tc.cpu().numpy(), want, rtol=1e-2, atol=5e-2)
    print("ok")


if __name__ == "__main__":
    main()
