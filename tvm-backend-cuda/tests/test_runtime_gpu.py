"""cuda.core runtime: launches on the GPU (marker ``gpu``) and its behaviour without one.

GPU tests check results against torch (or numpy) on the lent H200; they skip cleanly elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest

from tvm_backend_cuda import runtime
from tvm_backend_cuda.compiler import compile_cuda
from tvm_backend_cuda.runtime import CudaModule, has_cuda_device, no_device_reason

VADD = r"""
extern "C" __global__ void vadd(const float* __restrict__ a, const float* __restrict__ b,
                                float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""
VADD_SIG = {"vadd": [("a", "ptr"), ("b", "ptr"), ("c", "ptr"), ("n", "int32")]}

BIG_SMEM = r"""
extern "C" __global__ void reverse_smem(const float* in, float* out, int n) {
  extern __shared__ float s[];
  const float* src = in + blockIdx.x * n;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = src[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[blockIdx.x * n + i] = s[n - 1 - i];
}
"""

SCALARS = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void scalars(double* out, signed char a, unsigned short b, int c,
                                   long long d, __half e, __nv_bfloat16 f, float g, double h,
                                   bool i, unsigned long long j, unsigned char k) {
  out[0] = a; out[1] = b; out[2] = c; out[3] = (double)d; out[4] = __half2float(e);
  out[5] = __bfloat162float(f); out[6] = g; out[7] = h; out[8] = i ? 1.0 : 0.0;
  out[9] = (double)j; out[10] = k;
}
"""
SCALAR_TYPES = ["ptr", "int8", "uint16", "int32", "int64", "float16", "bfloat16", "float32",
                "float64", "bool", "uint64", "uint8"]

CLUSTER = r"""
extern "C" __global__ void cluster_info(unsigned* out) {
  unsigned rank, nrank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(nrank));
  if (threadIdx.x == 0) {
    out[blockIdx.x * 3 + 0] = rank; out[blockIdx.x * 3 + 1] = nrank;
    out[blockIdx.x * 3 + 2] = gridDim.x;
  }
}
"""

WG_FENCES = r"""
extern "C" __global__ void __launch_bounds__(128, 1) wg_fences(float* out) {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(0) : "memory");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(240));
  out[threadIdx.x] = 1.0f + threadIdx.x;
}
"""

CP_ASYNC = r"""
extern "C" __global__ void cp_async_rev(const float4* src, float4* dst) {
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


def _vadd_module(arch: str = "sm_90a") -> CudaModule:
    return CudaModule(compile_cuda(VADD, arch), VADD_SIG)


# -- without a GPU (these also run on CI) --------------------------------------------------------


@pytest.mark.skipif(has_cuda_device(), reason="a CUDA device is present")
def test_no_device_is_reported_not_raised() -> None:
    assert has_cuda_device() is False
    assert no_device_reason()


@pytest.mark.skipif(has_cuda_device(), reason="a CUDA device is present")
def test_launch_without_device_raises_clearly() -> None:
    mod = _vadd_module()
    with pytest.raises(RuntimeError, match="^no CUDA device is present: "):
        mod.launch("vadd", 4, 128, [0x1000, 0x2000, 0x3000, 512])


def test_module_holds_cubin_without_device() -> None:
    compiled = compile_cuda(VADD, "sm_90a")
    mod = CudaModule(compiled, ["vadd"])
    assert mod.cubin == compiled.cubin and mod.arch == "sm_90a"
    assert mod.kernel_names == ["vadd"]
    assert repr(mod.get_kernel("vadd")) == "<CudaKernel vadd(...)>"
    assert repr(_vadd_module().get_kernel("vadd")) == "<CudaKernel vadd(ptr, ptr, ptr, int32)>"


def test_module_argument_errors() -> None:
    with pytest.raises(ValueError, match="needs a cubin"):
        CudaModule(b"not elf", ["vadd"])
    mod = _vadd_module()
    with pytest.raises(KeyError, match="no kernel 'vsub' in this module; it has: vadd"):
        mod.get_kernel("vsub")
    with pytest.raises(ValueError, match="unsupported kernel parameter type 'float128'"):
        CudaModule(compile_cuda(VADD, "sm_80"), {"vadd": ["ptr", "ptr", "ptr", "float128"]})


def test_argument_checks_before_any_device_work() -> None:
    mod = _vadd_module()
    a = np.zeros(16, np.float32)
    with pytest.raises(TypeError, match=r"takes 4 arguments \(a, b, c, n\), got 3"):
        mod.launch("vadd", 1, 16, [a, a, a])
    with pytest.raises(ValueError, match=r"kernel parameter 'b' \(#1\) is a host array"):
        mod.launch("vadd", 1, 16, [0x1000, a, 0x2000, 16])
    with pytest.raises(TypeError, match=r"parameter 'a' \(#0\) expects a device array"):
        mod.launch("vadd", 1, 16, ["x", 0x1000, 0x2000, 16])
    with pytest.raises(TypeError, match=r"parameter 'n' \(#3\) is a int32 scalar"):
        mod.launch("vadd", 1, 16, [0x1000, 0x1000, 0x2000, "sixteen"])
    untyped = CudaModule(compile_cuda(VADD, "sm_80"), ["vadd"])
    with pytest.raises(TypeError, match="has no exact C type"):
        untyped.launch("vadd", 1, 16, [0x1000, 0x1000, 0x2000, 16.0])


def test_bfloat16_scalar_rounding() -> None:
    bits = runtime._float_to_bf16_bits
    assert int(bits(1.0)) == 0x3F80
    assert int(bits(-2.0)) == 0xC000
    assert int(bits(3.14159)) == 0x4049  # 3.140625
    assert int(bits(1.0 + 2.0**-8)) == 0x3F80  # halfway: ties to even
    assert int(bits(1.0 + 3 * 2.0**-8)) == 0x3F82  # halfway: ties to even (up)
    assert int(bits(float("nan"))) == 0x7FC0
    assert int(bits(float("inf"))) == 0x7F80


def test_cluster_grid_must_divide() -> None:
    with pytest.raises(ValueError, match="not a multiple of the cluster shape"):
        runtime._make_config(7, 32, 0, 2)
    with pytest.raises(ValueError, match="block must be"):
        runtime._make_config(8, 0, 0, None)


# -- on the GPU -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch


def _arch_of_device() -> str:
    from cuda.core import Device

    major, minor = Device(0).compute_capability
    return f"sm_{major}{minor}" + ("a" if major >= 9 else "")


def _module(source: str, signatures: dict, device: str):
    """``CudaModule`` of ``source`` on the GPU; the emulator's module of it on ``cpu``."""
    if device == "cuda":
        return CudaModule(compile_cuda(source, _arch_of_device()), signatures)
    from tvm_backend_cuda.emulator import load_source

    return load_source(source, signatures)


def _sync(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 1000, 1 << 20])
def test_vadd_matches_torch(device: str, n: int) -> None:
    torch = pytest.importorskip("torch")
    mod = _module(VADD, VADD_SIG, device)
    a = torch.randn(n, device=device)
    b = torch.randn(n, device=device)
    c = torch.empty_like(a)
    mod.launch("vadd", (n + 255) // 256, 256, [a, b, c, n])
    _sync(device)
    assert torch.equal(c, a + b)


@pytest.mark.gpu
def test_vadd_on_a_torch_side_stream(device: str, cuda_streams) -> None:
    """On torch's current stream (emulated: the emulator's current stream), or ``stream=``."""
    torch = pytest.importorskip("torch")
    mod = _module(VADD, VADD_SIG, device)
    n = 1 << 16
    a = torch.randn(n, device=device)
    b = torch.randn(n, device=device)
    c = torch.zeros_like(a)
    d = torch.empty_like(a)
    s = cuda_streams.Stream()
    with cuda_streams.stream(s):  # the current torch stream is taken when args are torch tensors
        cuda_streams.busy()  # a launch elsewhere would run before the doubling is queued
        mod.launch("vadd", n // 256, 256, [a, b, c, n])
        cuda_streams.host(lambda: torch.mul(c, 2, out=d))  # ordered after the launch
    s.synchronize()
    assert torch.equal(d, (a + b) * 2)
    c2 = torch.zeros_like(a)
    _sync(device)  # the zero fill ran on the current stream, which s does not wait for
    mod.launch("vadd", n // 256, 256, [a, b, c2, n], stream=s)  # an explicit torch stream
    s.synchronize()
    assert torch.equal(c2, a + b)


@pytest.mark.gpu
def test_vadd_untyped_with_a_non_torch_array_library(device: str) -> None:
    """A module given kernel names only (no signature), launched with another library's
    arrays: CuPy's on the GPU; under the emulator numpy's (its host arrays), the parameters
    read from the kernel's declaration in the source."""
    n = 4096
    if device == "cuda":
        xp = pytest.importorskip("cupy")
    else:
        xp = np
    a = xp.arange(n, dtype=xp.float32)
    b = xp.full(n, 0.5, dtype=xp.float32)
    c = xp.zeros(n, dtype=xp.float32)
    mod = _module(VADD, ["vadd"], device)  # no signature
    mod.launch("vadd", n // 128, 128, [a, b, c, np.int32(n)])
    if device == "cuda":
        xp.cuda.get_current_stream().synchronize()
        got = xp.asnumpy(c)
    else:
        mod.synchronize()
        got = c
        assert mod.get_kernel("vadd").params == [*VADD_SIG["vadd"]]
    np.testing.assert_array_equal(got, np.arange(n, dtype=np.float32) + 0.5)


@pytest.mark.gpu
def test_dlpack_only_object(device: str) -> None:
    torch = pytest.importorskip("torch")

    class OnlyDLPack:  # neither torch nor cupy: goes through StridedMemoryView
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, *args, **kwargs):
            return self.t.__dlpack__(*args, **kwargs)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    mod = _module(VADD, VADD_SIG, device)
    a = torch.randn(512, device=device)
    c = torch.zeros_like(a)
    mod.launch("vadd", 2, 256, [OnlyDLPack(a), OnlyDLPack(a), OnlyDLPack(c), 512])
    mod.synchronize()  # module stream: not torch's
    _sync(device)
    assert torch.equal(c, a + a)


class _OnCudaDevice:
    """A DLPack array that says it lives on CUDA device 0 (kDLCUDA); its memory is never
    there to read."""

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)

    def __dlpack__(self, *args, **kwargs):
        raise AssertionError("an array on a CUDA device was read on the host")


@pytest.mark.gpu
def test_device_checks(device: str, request: pytest.FixtureRequest) -> None:
    """Arrays where the kernel cannot read them are refused, naming the parameter, what it is
    and what to pass: on the GPU host arrays beside CUDA tensors; under the emulator (which
    takes host arrays) arrays on a CUDA device, before their memory is touched."""
    if device == "cuda":
        torch = request.getfixturevalue("torch")
        mod = CudaModule(compile_cuda(VADD, _arch_of_device()), VADD_SIG)
        a = torch.randn(16, device="cuda")
        host = torch.randn(16)
        with pytest.raises(ValueError, match=r"'b' \(#1\) is a torch tensor on cpu"):
            mod.launch("vadd", 1, 16, [a, host, a, 16])
        with pytest.raises(ValueError, match=r"'c' \(#2\) is a host array \(numpy.ndarray\)"):
            mod.launch("vadd", 1, 16, [a, a, np.zeros(16, np.float32), 16])
        return
    torch = pytest.importorskip("torch")
    mod = _module(VADD, VADD_SIG, device)
    a = torch.randn(16)
    c = torch.zeros(16)
    instead = r"the CUDA emulator runs the kernel on the CPU; pass a host array instead \(numpy"
    with pytest.raises(ValueError, match=r"kernel 'vadd': parameter 'b' \(#1\) is an array "
                       r"\([\w.]*_OnCudaDevice\) on a CUDA device \(DLPack device "
                       rf"type 2, device 0\), but {instead}"):
        mod.launch("vadd", 1, 16, [a, _OnCudaDevice(), c, 16])
    with pytest.raises(ValueError, match=r"kernel 'vadd': parameter 'c' \(#2\) is a torch "
                       rf"tensor on meta, but {instead}"):
        mod.launch("vadd", 1, 16, [a, a, torch.empty(16, device="meta"), 16])
    mod.synchronize()
    assert torch.equal(c, torch.zeros(16))  # nothing was launched


@pytest.mark.gpu
def test_more_than_48kb_dynamic_shared_memory(device: str) -> None:
    """Past 48 KB of dynamic shared memory with the opt-in, up to the device's limit (under the
    emulator, its device's: sm_90's); one launch past that limit is refused."""
    torch = pytest.importorskip("torch")
    if device == "cuda":
        from cuda.core import Device

        optin = Device(0).properties.max_shared_memory_per_block_optin
    else:
        from tvm_backend_cuda.emulator import SHARED_OPTIN_BYTES as optin
    n = (min(optin, 200 * 1024)) // 4  # floats
    assert n * 4 > 48 * 1024
    mod = _module(BIG_SMEM, {"reverse_smem": [("in", "ptr"), ("out", "ptr"), ("n", "int32")]},
                  device)
    x = torch.randn(3 * n, device=device)
    y = torch.empty_like(x)
    mod.launch("reverse_smem", 3, 256, [x, y, n], shmem=n * 4)
    _sync(device)
    assert torch.equal(y.view(3, n), x.view(3, n).flip(1))
    # a smaller launch after the opt-in still works; one past the device limit is refused
    mod.launch("reverse_smem", 3, 256, [x, y, 1024], shmem=4096)
    _sync(device)
    assert torch.equal(y[:3 * 1024].view(3, 1024), x[:3 * 1024].view(3, 1024).flip(1))
    with pytest.raises(ValueError, match="allows at most"):
        mod.launch("reverse_smem", 1, 256, [x, y, n], shmem=optin + 4096)


@pytest.mark.gpu
def test_scalar_argument_types(device: str) -> None:
    torch = pytest.importorskip("torch")
    sig = (SCALAR_TYPES if device == "cuda"
           else [(f"p{i}", t) for i, t in enumerate(SCALAR_TYPES)])  # the emulator names them
    mod = _module(SCALARS, {"scalars": sig}, device)
    out = torch.zeros(11, dtype=torch.float64, device=device)
    values = [out, -5, 65535, -(2**31), 2**40 + 1, 1.5, 3.14159, 0.1, 0.1, True, 2**63 + 5, 200]
    mod.launch("scalars", 1, 1, values)
    _sync(device)
    got = out.cpu().tolist()
    expected = [-5.0, 65535.0, float(-(2**31)), float(2**40 + 1), 1.5, 3.140625,
                float(np.float32(0.1)), 0.1, 1.0, float(np.uint64(2**63 + 5)), 200.0]
    assert got == expected


@pytest.mark.gpu
def test_cluster_launch(device: str) -> None:
    torch = pytest.importorskip("torch")
    if device == "cuda" and int(_arch_of_device()[3:5]) < 90:
        pytest.skip("clusters need sm_90")
    out = torch.zeros(8 * 3, dtype=torch.int32, device=device)
    # hand-written inline PTX reading %cluster_ctarank: under the emulator, its helpers
    mod = _module(CLUSTER, {"cluster_info": [("out", "ptr")]}, device)
    mod.launch("cluster_info", 8, 32, [out], cluster=2)  # grid counts blocks
    _sync(device)
    rows = out.view(8, 3).cpu().tolist()
    assert rows == [[i % 2, 2, 8] for i in range(8)]


@pytest.mark.gpu
def test_hopper_kernels_run(device: str) -> None:
    torch = pytest.importorskip("torch")
    if device == "cuda" and _arch_of_device() != "sm_90a":
        pytest.skip("wgmma/setmaxnreg kernel needs an sm_90a device")
    # wgmma fences, setmaxnreg and cp.async written as inline PTX
    mod = _module(WG_FENCES, {"wg_fences": [("out", "ptr")]}, device)
    out = torch.zeros(128, device=device)
    mod.launch("wg_fences", 1, 128, [out])
    cp_mod = _module(CP_ASYNC, {"cp_async_rev": [("src", "ptr"), ("dst", "ptr")]}, device)
    src = torch.randn(4 * 128 * 4, device=device)
    dst = torch.empty_like(src)
    cp_mod.launch("cp_async_rev", 4, 128, [src, dst])
    _sync(device)
    assert torch.equal(out, torch.arange(1, 129, dtype=torch.float32, device=device))
    assert torch.equal(dst.view(4, 128, 4), src.view(4, 128, 4).flip(1))


@pytest.mark.gpu
def test_wrong_arch_cubin_is_refused_clearly(device: str) -> None:
    """Code built for another arch than the device's (the H200's sm_90a, or the emulated
    device's) is refused when it loads, naming both."""
    torch = pytest.importorskip("torch")
    if device == "cuda":
        mod = CudaModule(compile_cuda(VADD, "sm_100a"), VADD_SIG)
    else:
        from tvm_backend_cuda.emulator import load_source

        mod = load_source(VADD, VADD_SIG, arch="sm_100a")
    a = torch.zeros(16, device=device)
    with pytest.raises(RuntimeError, match=r"built for sm_100a and cannot run on device 0"):
        mod.launch("vadd", 1, 16, [a, a, a, 16])


@pytest.mark.gpu
def test_missing_kernel_name(device: str) -> None:
    """A kernel the source does not define: the GPU's module says so at launch, the emulator's
    when it builds the source."""
    torch = pytest.importorskip("torch")
    if device == "cuda":
        mod = CudaModule(compile_cuda(VADD, _arch_of_device()), {"vadd_typo": ["ptr"]})
        a = torch.zeros(16, device="cuda")
        with pytest.raises(RuntimeError, match="'vadd_typo' is not in the cubin"):
            mod.launch("vadd_typo", 1, 16, [a])
        return
    with pytest.raises(RuntimeError, match=r"'vadd_typo' is not in the CUDA source \(its "
                                           r"kernels: vadd\)"):
        _module(VADD, {"vadd_typo": [("a", "ptr")]}, device)
