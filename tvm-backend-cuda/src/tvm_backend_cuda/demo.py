"""The main job's GPU rows (``python -m tvm demo``): vector add, row softmax and a tiled matmul
written in the kernel form, compiled for the GPU that is present, run on torch tensors and
checked against numpy.

No rows without a CUDA device; torch is imported inside the row's ``run``.
"""

from __future__ import annotations

from typing import Any, no_type_check

from tvm.backend.sdk import (
    KERNELS,
    DemoCase,
    DemoKernel,
    make_case,
    matmul_demo,
    softmax_demo,
)
from tvm.backend.sdk import row_softmax_kernel as _row_softmax
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

from . import runtime

__all__ = ["GPU_KERNELS", "demo_cases", "gpu_kernels"]

SOFTMAX_M, SOFTMAX_N = 1024, 1024
MATMUL = 512
TILE = 16


def softmax_kernel(m: int = SOFTMAX_M, n: int = SOFTMAX_N, threads: int = 128) -> Any:
    """One CTA per row: the row max and sum go through the warp-shuffle reduction variant."""
    return _row_softmax(m, n, threads)


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def matmul_kernel(size: int = MATMUL, t: int = TILE) -> Any:
    """C = A @ B in float32: a 16x16 tile per CTA, one output per thread, operands staged in
    shared memory with ``Tx.cta.copy`` (core's fallback plus this backend's CTA barrier)."""
    n = size

    @T.prim_func
    def matmul(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32"),
               C: T.Buffer((n, n), "float32")):
        T.device_entry()
        bx, by = T.cta_id([n // t, n // t])
        tx, ty = T.thread_id([t, t])
        As = T.alloc_buffer((t, t), "float32", scope="shared")
        Bs = T.alloc_buffer((t, t), "float32", scope="shared")
        acc = T.alloc_buffer((1,), "float32", scope="local")
        acc[0] = T.float32(0)
        for kk in T.serial(n // t):
            Tx.cta.copy(As, A[by * t:by * t + t, kk * t:kk * t + t])
            Tx.cta.copy(Bs, B[kk * t:kk * t + t, bx * t:bx * t + t])
            for k in T.serial(t):
                acc[0] = acc[0] + As[ty, k] * Bs[k, tx]
            T.cuda.cta_sync()
        C[by * t + ty, bx * t + tx] = acc[0]

    return matmul


def gpu_kernels(softmax: tuple[int, int] = (SOFTMAX_M, SOFTMAX_N), matmul: int = MATMUL
                ) -> list[DemoKernel]:
    """The demo's GPU kernels, the row softmax at ``softmax`` (rows, columns) and the matmul at
    ``matmul`` (a multiple of the tile): smaller shapes run them under the CPU emulator."""
    m, n = softmax
    return [
        KERNELS[0],  # core's vector add is already in the kernel form
        softmax_demo("row softmax (warp shuffles)", lambda: softmax_kernel(m, n), m, n),
        matmul_demo("tiled matmul (smem)", lambda: matmul_kernel(matmul), matmul, matmul,
                    matmul),
    ]


GPU_KERNELS: list[DemoKernel] = gpu_kernels()


def _to_device(a: Any) -> Any:
    import torch

    return torch.from_numpy(a).cuda()


def _to_numpy(t: Any) -> Any:
    return t.cpu().numpy()


def _sync() -> None:
    import torch

    torch.cuda.synchronize()


def demo_cases(target: str = "cuda") -> list[DemoCase]:
    """One row per GPU kernel, for the GPU of this machine (``cuda`` with its own arch); none
    without a CUDA device."""
    if not runtime.has_cuda_device():
        return []
    return [make_case(k, target, backend="cuda", to_device=_to_device, to_numpy=_to_numpy,
                      synchronize=_sync) for k in GPU_KERNELS]
