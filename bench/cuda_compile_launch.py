"""NVRTC compile time and launch overhead of tvm_backend_cuda, side by side with bare cuda.core.

    PYTHONPATH=core/src:tvm-backend-cuda/src python bench/cuda_compile_launch.py [--out FILE]

Prints a Markdown table with the date and machine. Compile rows run anywhere (NVRTC needs no
GPU); launch rows need a GPU and torch. Launch overhead is host time per asynchronous launch of
an empty 4-argument kernel, averaged over a batch, best batch of several.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import socket
import statistics
import sys
import tempfile
import time

VADD = r"""
extern "C" __global__ void vadd(const float* __restrict__ a, const float* __restrict__ b,
                                float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""
FP16_BF16 = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
FP8 = "#include <cuda_fp8.h>\n"
HALF_VADD = FP16_BF16 + r"""
extern "C" __global__ void hvadd(const __half* a, const __nv_bfloat16* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = __half2float(__hadd(a[i], a[i])) + __bfloat162float(b[i]);
}
"""
MMA = r"""
extern "C" __global__ void mma_16816(const unsigned* a, const unsigned* b, float* d, int k_tiles) {
  int lane = threadIdx.x;
  float c0 = 0.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;
  for (int k = 0; k < k_tiles; ++k) {
    const unsigned* ak = a + k * 128; const unsigned* bk = b + k * 64;
    asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
      : "r"(ak[lane * 4]), "r"(ak[lane * 4 + 1]), "r"(ak[lane * 4 + 2]), "r"(ak[lane * 4 + 3]),
        "r"(bk[lane * 2]), "r"(bk[lane * 2 + 1]));
  }
  d[lane * 4 + 0] = c0; d[lane * 4 + 1] = c1; d[lane * 4 + 2] = c2; d[lane * 4 + 3] = c3;
}
"""
WGMMA_FENCES = r"""
extern "C" __global__ void __launch_bounds__(128, 1) wg(float* out) {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n" ::);
  out[threadIdx.x] = 1.0f;
}
"""
CCCL_BARRIER = "#include <cuda/barrier>\n" + VADD
NOOP = r"""
extern "C" __global__ void noop(const float* a, const float* b, float* c, int n) {}
"""


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for dist in ("cuda-core", "cuda-bindings", "nvidia-cuda-nvrtc", "nvidia-cuda-runtime", "torch"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "-"
    return out


def _gpu_line() -> str:
    from tvm_backend_cuda.runtime import has_cuda_device, no_device_reason

    if not has_cuda_device():
        return f"none ({no_device_reason()[:80]})"
    from cuda.bindings import driver
    from cuda.core import Device

    dev = Device(0)
    _, drv = driver.cuDriverGetVersion()
    return f"{dev.name}, sm_{''.join(map(str, dev.compute_capability))}, driver CUDA {drv // 1000}.{drv % 1000 // 10}"


def bench_compile(reps: int) -> list[tuple[str, str, str, str]]:
    from tvm.error import CompileError
    from tvm_backend_cuda.compiler import compile_cuda

    rows = []
    cases = [
        ("vadd, no headers", VADD, "sm_90a"),
        ("vadd, no headers", VADD, "sm_80"),
        ("vadd + cuda_fp16.h + cuda_bf16.h (unused)", FP16_BF16 + VADD, "sm_90a"),
        ("vadd + cuda_fp8.h (unused)", FP8 + VADD, "sm_90a"),
        ("half/bf16 vadd (headers used)", HALF_VADD, "sm_90a"),
        ("mma.sync m16n8k16 loop, inline PTX", MMA, "sm_90a"),
        ("mma.sync + fp16/bf16 headers", FP16_BF16 + MMA, "sm_90a"),
        ("wgmma fence/commit/wait + setmaxnreg", WGMMA_FENCES, "sm_90a"),
        ("vadd + <cuda/barrier> (CCCL)", CCCL_BARRIER, "sm_90a"),
    ]
    # CCCL is not in the runtime wheel: measure it against a toolkit's headers where one exists.
    cuda_home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    cccl = [f"-I{cuda_home}/include/cccl"] if os.path.isdir(f"{cuda_home}/include/cccl/cuda") else []
    first = True
    for label, src, arch in cases:
        times = []
        extra = cccl if src is CCCL_BARRIER else []
        if extra:
            label += f" (-I{cuda_home}/include/cccl)"
        try:
            for _ in range(reps):
                t0 = time.perf_counter()
                compile_cuda(src, arch, options=extra, cache=False)
                times.append(time.perf_counter() - t0)
        except CompileError as e:
            rows.append((label, arch, "n/a", e.log.splitlines()[0][:60] if e.log else str(e)[:60]))
            continue
        note = "first compile in process" if first else ""
        first = False
        rows.append((label, arch, f"{statistics.median(times) * 1e3:.1f} ms",
                     f"min {min(times) * 1e3:.1f}, first {times[0] * 1e3:.1f} ms {note}".strip()))
    # cache hit

    with tempfile.TemporaryDirectory() as d:
        old = os.environ.get("TVM_CACHE_DIR")
        os.environ["TVM_CACHE_DIR"] = d
        try:
            compile_cuda(HALF_VADD, "sm_90a")
            hits = []
            for _ in range(reps * 4):
                t0 = time.perf_counter()
                r = compile_cuda(HALF_VADD, "sm_90a")
                hits.append(time.perf_counter() - t0)
                assert r.from_cache
        finally:
            if old is None:
                del os.environ["TVM_CACHE_DIR"]
            else:
                os.environ["TVM_CACHE_DIR"] = old
    rows.append(("disk cache hit (half/bf16 vadd)", "sm_90a",
                 f"{statistics.median(hits) * 1e3:.2f} ms", f"min {min(hits) * 1e3:.2f} ms"))
    return rows


def _per_launch(fn, n: int, rounds: int, sync) -> float:
    """Best (over rounds) mean host seconds per call of fn, n calls a round."""
    best = float("inf")
    for _ in range(rounds):
        sync()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = (time.perf_counter() - t0) / n
        sync()
        best = min(best, dt)
    return best


def bench_launch(n: int, rounds: int) -> list[tuple[str, str, str, str]]:
    import numpy as np
    import torch
    from cuda.core import Device, LaunchConfig, ObjectCode, launch

    from tvm_backend_cuda.compiler import compile_cuda
    from tvm_backend_cuda.runtime import CudaModule, _wrap_stream

    dev = Device(0)
    dev.set_current()
    major, minor = dev.compute_capability
    arch = f"sm_{major}{minor}" + ("a" if major >= 9 else "")
    cubin = compile_cuda(NOOP, arch).cubin
    a = torch.randn(1024, device="cuda")
    b = torch.randn(1024, device="cuda")
    c = torch.empty_like(a)
    sync = torch.cuda.synchronize

    # bare cuda.core: kernel, config and stream built once, pointers pre-extracted
    kern = ObjectCode.from_cubin(cubin).get_kernel("noop")
    cfg = LaunchConfig(grid=(4, 1, 1), block=(256, 1, 1))
    stream = _wrap_stream(torch.cuda.current_stream().cuda_stream)
    pa, pb, pc, nn = a.data_ptr(), b.data_ptr(), c.data_ptr(), np.int32(1024)

    def bare_ints():
        launch(stream, cfg, kern, pa, pb, pc, nn)

    def bare_tensors():  # what a user writes with torch tensors
        launch(stream, cfg, kern, a.data_ptr(), b.data_ptr(), c.data_ptr(), np.int32(1024))

    mod = CudaModule(cubin, {"noop": [("a", "ptr"), ("b", "ptr"), ("c", "ptr"), ("n", "int32")]},
                     arch=arch)
    k = mod.get_kernel("noop")
    args = [a, b, c, 1024]

    def ours_module():
        mod.launch("noop", 4, 256, args)

    def ours_kernel():
        k.launch(4, 256, args)

    def ours_kernel_tuple_grid():
        k.launch((4, 1, 1), (256, 1, 1), args)

    def torch_add():
        torch.add(a, 1.0, out=c)

    cases = [
        ("bare cuda.core launch, ints pre-extracted", bare_ints),
        ("bare cuda.core launch, data_ptr() + np.int32 per call", bare_tensors),
        ("ours: CudaModule.launch('noop', ..., torch tensors)", ours_module),
        ("ours: CudaKernel.launch(..., torch tensors)", ours_kernel),
        ("ours: CudaKernel.launch, 3-tuple grid/block", ours_kernel_tuple_grid),
        ("torch.add(a, 1.0, out=c), 1024 elements (reference)", torch_add),
    ]
    for _, fn in cases:  # warm up: loads, caches
        for _ in range(200):
            fn()
    results = {label: _per_launch(fn, n, rounds, sync) for label, fn in cases}
    base = results[cases[0][0]]
    base_user = results[cases[1][0]]
    rows = []
    for label, _ in cases:
        t = results[label]
        rows.append((label, arch, f"{t * 1e6:.2f} us",
                     f"{t / base:.2f}x bare-ints, {t / base_user:.2f}x bare-data_ptr"))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5, help="compiles per kernel")
    ap.add_argument("--launches", type=int, default=20000, help="launches per timed batch")
    ap.add_argument("--rounds", type=int, default=5, help="timed batches (best is kept)")
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--smoke", action="store_true", help="1 compile per kernel, no launches")
    opts = ap.parse_args()
    if opts.smoke:
        opts.reps = 1

    from tvm_backend_cuda.compiler import include_dirs, nvrtc_version
    from tvm_backend_cuda.runtime import has_cuda_device

    lines = [
        "# CUDA backend: NVRTC compile time and launch overhead",
        "",
        f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"- machine: {socket.gethostname()}, {platform.platform()}, {platform.processor() or platform.machine()}, Python {platform.python_version()}",
        f"- GPU: {_gpu_line()}",
        f"- NVRTC {'.'.join(map(str, nvrtc_version()))}; headers: {', '.join(include_dirs()) or 'none'}",
        "- packages: " + ", ".join(f"{k} {v}" for k, v in _versions().items()),
        f"- command: {' '.join([sys.executable.rsplit('/', 1)[-1], *sys.argv])}",
        "",
        "| what | arch | time (median / best) | notes |",
        "|---|---|---|---|",
    ]
    rows = bench_compile(opts.reps)
    if opts.smoke:
        rows.append(("launch overhead", "-", "skipped", "--smoke"))
    elif has_cuda_device():
        try:
            rows += bench_launch(opts.launches, opts.rounds)
        except ImportError as e:
            rows.append(("launch overhead", "-", "skipped", f"needs torch ({e})"))
    else:
        rows.append(("launch overhead", "-", "skipped", "no CUDA device"))
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    text = "\n".join(lines)
    print(text)
    if opts.out:
        with open(opts.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
