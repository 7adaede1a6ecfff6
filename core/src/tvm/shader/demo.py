"""Demo kernels for GPUs that run core's generic tile-primitive variants at workgroup (CTA)
scope, such as the shader-style backends (``python -m tvm demo`` rows, and kernels their tests
run).

Three kernels in the kernel form: core's vector add, a row softmax (``Tx.cta.max``/``sum``
reductions and elementwise ops on a row per workgroup) and a tiled matmul (tiles staged in
shared memory with ``Tx.cta.copy``, multiplied with ``Tx.cta.gemm``). A backend adds the rows
where its device is present: ``demo_cases(TARGET, backend="vulkan (llvmpipe)")``.
"""

from __future__ import annotations

from typing import Any, no_type_check

from tvm.demo import KERNELS, DemoKernel, make_case, matmul_demo, softmax_demo
from tvm.demo import row_softmax_kernel as _row_softmax
from tvm.plugin import DemoCase
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

__all__ = ["demo_cases", "softmax_kernel", "tiled_matmul_kernel", "workgroup_kernels"]

SOFTMAX_M, SOFTMAX_N, SOFTMAX_THREADS = 64, 256, 64
MATMUL, TILE = 128, 16


def softmax_kernel(m: int = SOFTMAX_M, n: int = SOFTMAX_N, threads: int = SOFTMAX_THREADS
                   ) -> Any:
    """B = softmax(A) over rows: one row per workgroup, reductions and elementwise ops at CTA
    scope (core's variants, synchronised with the backend's workgroup barrier)."""
    return _row_softmax(m, n, threads)


@no_type_check  # TVMScript
def tiled_matmul_kernel(m: int = MATMUL, n: int = MATMUL, k: int = MATMUL, t: int = TILE) -> Any:
    """C = A @ B: a t x t tile of C per workgroup; each step of K stages a tile of A and of B in
    shared memory (``Tx.cta.copy``) and accumulates their product (``Tx.cta.gemm``)."""

    @T.prim_func
    def tiled_matmul(A: T.Buffer((m, k), "float32"), B: T.Buffer((k, n), "float32"),
                     C: T.Buffer((m, n), "float32")):
        T.device_entry()
        bx, by = T.cta_id([n // t, m // t])
        tx = T.thread_id([t * t])
        As = T.alloc_buffer((t, t), "float32", scope="shared")
        Bs = T.alloc_buffer((t, t), "float32", scope="shared")
        Cs = T.alloc_buffer((t, t), "float32", scope="shared")
        Tx.cta.fill(Cs, T.float32(0))
        for kk in T.serial(k // t):
            Tx.cta.copy(As, A[by * t:by * t + t, kk * t:kk * t + t])
            Tx.cta.copy(Bs, B[kk * t:kk * t + t, bx * t:bx * t + t])
            Tx.cta.gemm(Cs, As, Bs, Cs, beta=1.0)
        Tx.cta.copy(C[by * t:by * t + t, bx * t:bx * t + t], Cs)

    return tiled_matmul


def workgroup_kernels() -> list[DemoKernel]:
    """The demo kernels (core's vector add, a row softmax, a tiled matmul)."""
    return [
        KERNELS[0],  # core's vector add is already in the kernel form
        softmax_demo("row softmax (Tx.cta reductions)", softmax_kernel, SOFTMAX_M, SOFTMAX_N),
        matmul_demo("tiled matmul (shared memory)", tiled_matmul_kernel, MATMUL, MATMUL, MATMUL),
    ]


def demo_cases(target: str, backend: str) -> list[DemoCase]:
    """A row per kernel of :func:`workgroup_kernels` on ``target``; call it where the backend's
    device is present (``backend`` labels the rows, e.g. ``"vulkan (llvmpipe)"``)."""
    return [make_case(k, target, backend=backend, repeat=3) for k in workgroup_kernels()]
