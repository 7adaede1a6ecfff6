"""Our CUDA kernels against torch / cuBLAS on the same inputs, NVRTC compile time, launch overhead.

    PYTHONPATH=core/src:tvm-backend-cuda/src python bench/cuda_kernels.py [--out docs/perf.md]

Writes a markdown table (date, machine) to stdout and appends it to --out when given.
Budgets: NVRTC compile of a typical generated kernel < 100 ms; host time per launch of our
executable < 1.5x a bare cuda.core launch of the same cubin (bench/cuda_launch_overhead.py
measures that one more carefully, variants taking turns).
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import time
from typing import Any


def _gpu_time_ms(fn: Any, iters: int = 50, warmup: int = 5) -> float:
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def _host_us(fn: Any, n: int = 20000, rounds: int = 5) -> float:
    import torch

    best = float("inf")
    for _ in range(rounds):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n * 1e6)
        torch.cuda.synchronize()
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ns = ap.parse_args()

    import torch

    import tvm
    from tvm_backend_cuda.compiler import compile_cuda
    from tvm_backend_cuda.demo import matmul_kernel, softmax_kernel
    from tvm_backend_cuda.plugin import register_backend

    register_backend()
    import sys

    sys.path.insert(0, "tvm-backend-cuda/tests")
    sys.path.insert(0, "tvm-backend-cuda/examples")
    from cuda_kernels import vector_add, vector_add_vec4

    torch.backends.cuda.matmul.allow_tf32 = False
    rows: list[tuple[str, str, str, str]] = []

    # -- kernels vs torch ------------------------------------------------------------------------
    n = 1 << 24
    a, b, c = (torch.randn(n, device="cuda") for _ in range(3))
    for label, build in (("vector add (scalar)", vector_add), ("vector add (float4)", vector_add_vec4)):
        ex = tvm.compile(build(n), target="cuda")
        ours = _gpu_time_ms(lambda ex=ex: ex(a, b, c))
        ref = _gpu_time_ms(lambda: torch.add(a, b, out=c))
        gbs = 3 * n * 4 / ours / 1e6
        rows.append((f"{label}, 2^24 f32", f"{ours:.3f} ms ({gbs:.0f} GB/s)",
                     f"torch.add {ref:.3f} ms", f"{ref / ours:.2f}x"))

    m, k = 4096, 4096
    x = torch.randn(m, k, device="cuda")
    y = torch.empty_like(x)
    ex = tvm.compile(softmax_kernel(m, k, 128), target="cuda")
    ours = _gpu_time_ms(lambda: ex(x, y))
    ref = _gpu_time_ms(lambda: torch.softmax(x, -1))
    torch.testing.assert_close(y, torch.softmax(x, -1), rtol=1e-4, atol=1e-6)
    rows.append(("row softmax 4096x4096 f32", f"{ours:.3f} ms", f"torch.softmax {ref:.3f} ms",
                 f"{ref / ours:.2f}x"))

    size = 2048
    A, B = (torch.randn(size, size, device="cuda") for _ in range(2))
    C = torch.empty_like(A)
    ex = tvm.compile(matmul_kernel(size), target="cuda")
    ours = _gpu_time_ms(lambda: ex(A, B, C), iters=10)
    ref = _gpu_time_ms(lambda: torch.matmul(A, B), iters=10)
    torch.testing.assert_close(C, A @ B, rtol=1e-3, atol=1e-2)
    fl = 2 * size**3
    rows.append((f"matmul {size}^3 f32 (16x16 smem tiles)",
                 f"{ours:.3f} ms ({fl / ours / 1e9:.1f} TFLOP/s)",
                 f"cuBLAS (torch.matmul, no TF32) {ref:.3f} ms ({fl / ref / 1e9:.1f} TFLOP/s)",
                 f"{ref / ours:.2f}x"))

    # f16 on the tensor cores: Tx.cta.gemm lowered by the mma.m16n8k16 variant (ldmatrix +
    # mma.sync; 128x128 CTA tile, 4 warps, no software pipelining) vs cuBLAS f16
    from matmul_mma import matmul_mma_kernel

    size = 4096
    A16, B16 = (torch.randn(size, size, device="cuda", dtype=torch.float16) for _ in range(2))
    C32 = torch.empty(size, size, device="cuda")
    ex = tvm.compile(matmul_mma_kernel(size, size, size), target="cuda")
    ours = _gpu_time_ms(lambda: ex(A16, B16, C32), iters=10)
    ref = _gpu_time_ms(lambda: torch.matmul(A16, B16), iters=10)
    torch.testing.assert_close(C32, A16.float() @ B16.float(), rtol=1e-3, atol=1e-2)
    fl = 2 * size**3
    rows.append((f"matmul f16 (Tx.gemm, mma.sync) {size}^3, f32 accumulate",
                 f"{ours:.3f} ms ({fl / ours / 1e9:.1f} TFLOP/s)",
                 f"cuBLAS f16 (torch.matmul) {ref:.3f} ms ({fl / ref / 1e9:.1f} TFLOP/s)",
                 f"{ref / ours:.2f}x"))

    # -- NVRTC compile time ---------------------------------------------------------------------
    src = tvm.compile(softmax_kernel(4096, 4096, 128), target="cuda").inspect_source()
    arch = tvm.compile(vector_add(), target="cuda").arch
    times = []
    for _ in range(5):
        t = time.perf_counter()
        compile_cuda(src, arch, cache=False)
        times.append((time.perf_counter() - t) * 1e3)
    nv = statistics.median(times)
    rows.append(("NVRTC compile, generated softmax kernel", f"{nv:.1f} ms (median of 5)",
                 "budget 100 ms", "ok" if nv < 100 else "OVER"))
    t = time.perf_counter()
    tvm.compile(softmax_kernel(1024, 1024, 128), target="cuda", cache=False)
    full = (time.perf_counter() - t) * 1e3
    rows.append(("tvm.compile end to end (parse+lower+codegen+NVRTC), softmax", f"{full:.1f} ms",
                 "", ""))

    # -- launch overhead ------------------------------------------------------------------------
    import numpy as np
    from cuda.core import Device, LaunchConfig, ObjectCode, launch

    small = 1 << 12
    sa, sb, sc = (torch.randn(small, device="cuda") for _ in range(3))
    ex = tvm.compile(vector_add(small, 128), target="cuda")
    ex(sa, sb, sc)
    dev = Device(0)
    dev.set_current()
    kern = ObjectCode.from_cubin(ex.cubin).get_kernel(ex.kernel_names[0])
    cfg = LaunchConfig(grid=(small // 128, 1, 1), block=(128, 1, 1))
    from cuda.core import Stream

    stream = Stream.from_handle(torch.cuda.current_stream().cuda_stream)
    pa, pb, pc = sa.data_ptr(), sb.data_ptr(), sc.data_ptr()
    bare = _host_us(lambda: launch(stream, cfg, kern, pa, pb, pc))
    bare_ptr = _host_us(lambda: launch(stream, cfg, kern, sa.data_ptr(), sb.data_ptr(),
                                       sc.data_ptr()))
    ours_us = _host_us(lambda: ex(sa, sb, sc))
    rows.append(("host time per launch: bare cuda.core.launch, pointers pre-extracted",
                 f"{bare:.2f} us", "", "1.00x"))
    rows.append(("host time per launch: bare cuda.core.launch, data_ptr() per call",
                 f"{bare_ptr:.2f} us", "", f"{bare_ptr / bare:.2f}x"))
    rows.append(("host time per launch: our executable ex(a, b, c) (checks + launch)",
                 f"{ours_us:.2f} us", "budget 1.5x of the pre-extracted bare launch",
                 f"{ours_us / bare:.2f}x"))
    del np

    props = torch.cuda.get_device_properties(0)
    head = (f"## CUDA kernels ({datetime.date.today().isoformat()}, {props.name}, "
            f"{platform.node()}, torch {torch.__version__})\n\n"
            "`PYTHONPATH=core/src:tvm-backend-cuda/src python bench/cuda_kernels.py`\n\n"
            "| what | ours | reference | ref time / ours |\n|---|---|---|---|\n")
    table = head + "\n".join(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows) + "\n"
    print(table)
    if ns.out:
        with open(ns.out, "a") as f:
            f.write("\n" + table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
