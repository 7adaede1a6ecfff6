"""NVRTC compilation: hand-written kernels for sm_80 / sm_90a / sm_100a, errors, headers, cache.

Runs without a GPU or driver (NVRTC and the headers come from wheels).
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import pytest

from tvm.error import CompileError, TargetError
from tvm_backend_cuda import compiler
from tvm_backend_cuda.compiler import compile_cuda, compile_ptx, needed_headers, parse_arch

ARCHS = ["sm_80", "sm_90a", "sm_100a"]

VADD = r"""
extern "C" __global__ void vadd(const float* __restrict__ a, const float* __restrict__ b,
                                float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""

HALF_TYPES = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void half_ops(const __half* a, const __nv_bfloat16* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __half h = __hadd(a[i], __float2half(1.0f));
    __nv_bfloat16 bb = __hmul(b[i], __float2bfloat16(2.0f));
    out[i] = __half2float(h) + __bfloat162float(bb);
  }
}
"""

FP8_TYPES = r"""
#include <cuda_fp8.h>
extern "C" __global__ void fp8_cvt(const float* x, __nv_fp8_e4m3* y, __nv_fp8_e5m2* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { y[i] = __nv_fp8_e4m3(x[i]); z[i] = __nv_fp8_e5m2(x[i]); }
}
"""

MMA_M16N8K16 = r"""
extern "C" __global__ void mma_16816(const unsigned* a, const unsigned* b, float* d) {
  int lane = threadIdx.x;
  unsigned a0 = a[lane * 4 + 0], a1 = a[lane * 4 + 1], a2 = a[lane * 4 + 2], a3 = a[lane * 4 + 3];
  unsigned b0 = b[lane * 2 + 0], b1 = b[lane * 2 + 1];
  float c0 = 0.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  d[lane * 4 + 0] = c0; d[lane * 4 + 1] = c1; d[lane * 4 + 2] = c2; d[lane * 4 + 3] = c3;
}
"""

CP_ASYNC = r"""
extern "C" __global__ void cp_async_copy(const float4* src, float4* dst) {
  __shared__ __align__(16) float4 buf[128];
  unsigned saddr = (unsigned)__cvta_generic_to_shared(&buf[threadIdx.x]);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(saddr),
               "l"(src + blockIdx.x * 128 + threadIdx.x));
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.wait_group 0;\n" ::);
  __syncthreads();
  dst[blockIdx.x * 128 + threadIdx.x] = buf[127 - threadIdx.x];
}
"""

# mbarrier with test_wait: sm_80 and later
MBARRIER = r"""
extern "C" __global__ void mbar(int* out) {
  __shared__ __align__(8) unsigned long long bar;
  unsigned addr = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0)
    asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" :: "r"(addr), "r"(blockDim.x));
  __syncthreads();
  unsigned long long state;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];\n" : "=l"(state) : "r"(addr));
  unsigned done = 0;
  while (!done) {
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.shared.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(addr), "l"(state));
  }
  out[threadIdx.x] = 1;
}
"""

# try_wait.parity and fence.mbarrier_init exist from sm_90 on
MBARRIER_TRY_WAIT = r"""
extern "C" __global__ void mbar_try_wait(int* out) {
  __shared__ __align__(8) unsigned long long bar;
  unsigned addr = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(addr), "r"(blockDim.x));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::);
  }
  __syncthreads();
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(addr));
  unsigned done = 0;
  while (!done) {
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(addr), "r"(0));
  }
  out[threadIdx.x] = 1;
}
"""

WGMMA_SETMAXNREG = r"""
extern "C" __global__ void __launch_bounds__(128, 1) wg_fences(float* out) {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(0) : "memory");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(240));
  out[threadIdx.x] = 1.0f;
}
"""

TCGEN05_ALLOC = r"""
extern "C" __global__ void tmem_alloc(unsigned* out) {
  __shared__ unsigned taddr;
  unsigned dst = (unsigned)__cvta_generic_to_shared(&taddr);
  if (threadIdx.x < 32) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n"
                 :: "r"(dst), "r"(32));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::);
  }
  __syncthreads();
  if (threadIdx.x == 0) out[0] = taddr;
  __syncthreads();
  if (threadIdx.x < 32)
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" :: "r"(taddr), "r"(32));
}
"""


def _any(arch: str) -> str | None:
    return None


def _min_sm90(arch: str) -> str | None:
    return None if parse_arch(arch)[0] >= 90 else "needs sm_90 or later"


def _only_sm90a(arch: str) -> str | None:
    return None if arch == "sm_90a" else "wgmma exists on sm_90a only"


def _only_sm100a(arch: str) -> str | None:
    return None if arch in ("sm_100a", "sm_103a") else "tcgen05 needs sm_100a"


KERNELS = {
    "vadd": (VADD, _any),
    "half_ops": (HALF_TYPES, _any),
    "fp8_cvt": (FP8_TYPES, _any),
    "mma_16816": (MMA_M16N8K16, _any),
    "cp_async_copy": (CP_ASYNC, _any),
    "mbar": (MBARRIER, _any),
    "mbar_try_wait": (MBARRIER_TRY_WAIT, _min_sm90),
    "wg_fences": (WGMMA_SETMAXNREG, _only_sm90a),
    "tmem_alloc": (TCGEN05_ALLOC, _only_sm100a),
}

EM_CUDA = 190


def _assert_cubin(cubin: bytes, kernel: str) -> None:
    assert cubin[:4] == b"\x7fELF", cubin[:16]
    assert cubin[4] == 2  # ELFCLASS64
    (e_machine,) = struct.unpack_from("<H", cubin, 18)
    assert e_machine == EM_CUDA
    assert kernel.encode() in cubin  # the extern "C" symbol, unmangled


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_kernel_compiles(kernel: str, arch: str) -> None:
    source, needs = KERNELS[kernel]
    reason = needs(arch)
    if reason:
        pytest.skip(f"{kernel} on {arch}: {reason}")
    out = compile_cuda(source, arch)
    _assert_cubin(out.cubin, kernel)
    assert out.arch == arch
    assert out.options[0] == f"--gpu-architecture={arch}"
    assert out.source == source
    assert not out.from_cache and out.compile_time_s > 0


def test_wgmma_rejected_without_arch_suffix() -> None:
    with pytest.raises(CompileError) as info:
        compile_cuda(WGMMA_SETMAXNREG, "sm_90")
    assert "wgmma" in info.value.log or "setmaxnreg" in info.value.log
    assert "--gpu-architecture=sm_90" in str(info.value)


def test_tcgen05_rejected_on_hopper() -> None:
    with pytest.raises(CompileError) as info:
        compile_cuda(TCGEN05_ALLOC, "sm_90a")
    assert "tcgen05" in info.value.log


def test_compile_error_carries_log_and_options() -> None:
    broken = 'extern "C" __global__ void broken(float* x) { x[0] = undefined_thing + 1; }\n'
    with pytest.raises(CompileError) as info:
        compile_cuda(broken, "sm_80", options=["-lineinfo"], name="broken.cu")
    err = info.value
    text = str(err)
    assert 'identifier "undefined_thing" is undefined' in err.log
    assert "broken.cu(1)" in err.log
    assert err.log in text or err.log.rstrip() in text
    assert err.command.startswith("nvrtc --gpu-architecture=sm_80 -std=c++17 ")
    assert "-lineinfo" in err.command and err.command.endswith("broken.cu")
    assert "command: nvrtc --gpu-architecture=sm_80" in text
    assert "NVRTC 13." in text and "NVRTC_ERROR_COMPILATION" in text


def test_warnings_reach_the_log(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    src = 'extern "C" __global__ void w(int* x) { int unused_var = 3; x[0] = 1; }\n'
    out = compile_cuda(src, "sm_80")
    _assert_cubin(out.cubin, "w")
    assert 'warning #177-D: variable "unused_var" was declared but never referenced' in out.log
    assert compile_cuda(src, "sm_80").log == out.log  # kept in the cache entry too
    assert compile_cuda(src, "sm_80", options=["-w"]).log == ""


@pytest.mark.parametrize(
    ("arch", "message"),
    [
        ("sm80", "expected 'sm_XX' or 'sm_XXa'"),
        ("compute_90a", "expected 'sm_XX' or 'sm_XXa'"),
        ("sm_9", "expected 'sm_XX' or 'sm_XXa'"),
        ("sm_80a", "the 'a' suffix exists from sm_90 on"),
        ("sm_35", "cannot compile for sm_35; it supports sm_75"),
    ],
)
def test_bad_arch(arch: str, message: str) -> None:
    with pytest.raises(TargetError, match=message):
        compile_cuda(VADD, arch)
    assert issubclass(TargetError, ValueError)


def test_parse_arch() -> None:
    assert parse_arch("sm_80") == (80, "")
    assert parse_arch("sm_90a") == (90, "a")
    assert parse_arch("sm_100a") == (100, "a")
    assert parse_arch("sm_100f") == (100, "f")


def test_arch_flag_in_options_is_rejected() -> None:
    with pytest.raises(ValueError, match="arch argument"):
        compile_cuda(VADD, "sm_80", options=["-arch=sm_90"])
    with pytest.raises(TypeError, match="sequence of strings"):
        compile_cuda(VADD, "sm_80", options="-lineinfo")  # type: ignore[arg-type]


def test_compile_ptx() -> None:
    ptx = compile_ptx(VADD, "sm_90a")
    assert ".target sm_90a" in ptx
    assert ".entry vadd(" in ptx
    ptx80 = compile_ptx(MMA_M16N8K16, "sm_80")
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx80


# -- headers ----------------------------------------------------------------------------------


def test_headers_come_from_wheels() -> None:
    dirs = compiler.include_dirs()
    assert dirs, "no CUDA headers found; install nvidia-cuda-runtime"
    assert os.path.isfile(os.path.join(dirs[0], "cuda_fp16.h"))
    assert "site-packages" in dirs[0] or "dist-packages" in dirs[0]


def test_wheel_headers_beat_cuda_home(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    fake = tmp_path / "include"
    fake.mkdir()
    (fake / "cuda_fp16.h").write_text("#error wrong header\n")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    compiler.include_dirs.cache_clear()
    try:
        assert str(fake) not in compiler.include_dirs()
        compile_cuda(HALF_TYPES, "sm_80")
    finally:
        compiler.include_dirs.cache_clear()


def test_include_override(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    (tmp_path / "mine.h").write_text("#define MINE 7\n")
    wheel_dirs = compiler.include_dirs()
    monkeypatch.setenv("TVM_CUDA_INCLUDE", os.pathsep.join([str(tmp_path), *wheel_dirs]))
    compiler.include_dirs.cache_clear()
    try:
        src = '#include <mine.h>\nextern "C" __global__ void k(int* x) { x[0] = MINE; }\n'
        out = compile_cuda(src, "sm_80")
        assert f"-I{tmp_path}" in out.options
    finally:
        compiler.include_dirs.cache_clear()


def test_needed_headers() -> None:
    assert needed_headers(VADD) == []
    assert needed_headers("__global__ void f(half* x) {}") == ["cuda_fp16.h"]
    assert needed_headers("__device__ __nv_bfloat16 y; __host__ void g();") == ["cuda_bf16.h"]
    assert needed_headers("__nv_fp8_e4m3 a; __half b;") == ["cuda_fp16.h", "cuda_fp8.h"]
    assert needed_headers(HALF_TYPES) == []  # already included
    # __host__ / __hidden names must not look like half intrinsics
    assert needed_headers("__host__ __device__ int __hidden_thing(int);") == []
    assert needed_headers("x = __hadd2(a, b);") == ["cuda_fp16.h"]


def test_needed_headers_are_enough() -> None:
    body = 'extern "C" __global__ void k(__half* a, __nv_bfloat16* b) { a[0] = __float2half(1.f); b[0] = __float2bfloat16(2.f); }\n'
    with pytest.raises(CompileError):
        compile_cuda(body, "sm_80")
    includes = "".join(f"#include <{h}>\n" for h in needed_headers(body))
    _assert_cubin(compile_cuda(includes + body, "sm_80").cubin, "k")


# -- cache ------------------------------------------------------------------------------------


def _entries(root) -> list:
    # compile_cuda's entries in core's compile cache (namespace cuda-nvrtc)
    return sorted(p for p in (root / "cuda-nvrtc").rglob("*.bin") if not p.name.startswith("."))


def test_cache_hit_and_key(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    first = compile_cuda(VADD, "sm_80")
    assert not first.from_cache
    (entry,) = _entries(tmp_path)
    second = compile_cuda(VADD, "sm_80")
    assert second.from_cache and second.cubin == first.cubin
    assert second.compile_time_s == 0.0
    # each part of the key makes a new entry
    assert not compile_cuda(VADD, "sm_90a").from_cache
    assert not compile_cuda(VADD, "sm_80", options=["-lineinfo"]).from_cache
    assert not compile_cuda(VADD + "\n// changed\n", "sm_80").from_cache
    assert len(_entries(tmp_path)) == 4
    assert entry.exists()


def test_cache_disabled(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    compile_cuda(VADD, "sm_80", cache=False)
    assert compile_cuda(VADD, "sm_80", cache=False).from_cache is False
    assert _entries(tmp_path) == []


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "header_only"])
def test_corrupt_cache_entry_is_rebuilt(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                        damage: str) -> None:
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    good = compile_cuda(VADD, "sm_80")
    (entry,) = _entries(tmp_path)
    data = entry.read_bytes()
    if damage == "truncate":
        bad = data[: len(data) - 100]
    elif damage == "flip":
        i = len(data) - 50
        bad = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]
    elif damage == "garbage":
        bad = b"\x7fELF not a cache entry at all" * 10
    elif damage == "empty":
        bad = b""
    else:
        bad = data[:40]
    entry.write_bytes(bad)
    again = compile_cuda(VADD, "sm_80")
    assert not again.from_cache  # rebuilt, not loaded
    assert again.cubin == good.cubin
    assert entry.read_bytes() == data  # and the entry is repaired
    assert compile_cuda(VADD, "sm_80").from_cache


def test_unwritable_cache_is_not_an_error(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TVM_CACHE_DIR", str(blocker))
    out = compile_cuda(VADD, "sm_80")
    _assert_cubin(out.cubin, "vadd")


def test_no_temp_files_left(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    compile_cuda(VADD, "sm_80")
    assert not [p for p in (tmp_path / "cuda").rglob(".tmp-*")]


def test_import_is_light() -> None:
    code = (
        "import sys, tvm_backend_cuda\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('cuda', 'numpy', 'torch')]\n"
        "assert not heavy, heavy\n"
        "from tvm_backend_cuda import runtime, compiler\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('cuda', 'torch', 'cupy')]\n"
        "assert not heavy, heavy\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=os.environ.copy())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
