"""NVSHMEM: compile + link on CI (no GPU needed), one PE on one GPU (`gpu`), several PEs (`gpu`,
needs 2+ GPUs; runs examples/nvshmem_collectives.py against torch.distributed/NCCL)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tvm.error import BackendNotInstalledError, CompileError
from tvm_backend_cuda import nvshmem

needs_nvshmem = pytest.mark.skipif(
    not nvshmem.is_available(),
    reason=f"NVSHMEM wheel not installed: {nvshmem.unavailable_reason()}",
)

# The device API the brief names, thread-level: my_pe, putmem_nbi, quiet, barrier_all.
ALLGATHER_SRC = r"""
#include <nvshmem.h>
#include <nvshmemx.h>

// dst: symmetric, n_pes * n floats; src: symmetric, n floats. One block; thread 0 talks.
extern "C" __global__ void allgather_put(float* dst, const float* src, int n) {
  int me = nvshmem_my_pe();
  int npes = nvshmem_n_pes();
  if (threadIdx.x == 0) {
    for (int i = 0; i < npes; ++i) {
      int pe = (me + i) % npes;
      nvshmem_putmem_nbi(dst + (size_t)me * n, src, (size_t)n * sizeof(float), pe);
    }
    nvshmem_quiet();
    nvshmem_barrier_all();
  }
}
"""

# Block-scoped calls: every thread of the block takes part.
ALLREDUCE_SRC = r"""
#include <nvshmem.h>
#include <nvshmemx.h>

// out[j] = sum over PEs of src[j]. work: symmetric, n_pes * n floats; src: symmetric, n floats.
extern "C" __global__ void allreduce_sum(float* out, float* work, const float* src, int n) {
  int me = nvshmem_my_pe();
  int npes = nvshmem_n_pes();
  for (int i = 0; i < npes; ++i) {
    int pe = (me + i) % npes;
    nvshmemx_putmem_nbi_block(work + (size_t)me * n, src, (size_t)n * sizeof(float), pe);
  }
  nvshmemx_barrier_all_block();  // completes the puts, then waits for every PE's
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    float acc = 0.f;
    for (int p = 0; p < npes; ++p) acc += work[(size_t)p * n + j];
    out[j] = acc;
  }
  nvshmemx_barrier_all_block();  // nobody overwrites work while a PE still reads it
}
"""

PLAIN_SRC = r"""
extern "C" __global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}
"""

ET_EXEC = 2


@pytest.fixture(autouse=True)
def _shared_cache(tmp_path_factory, monkeypatch):
    """One cubin cache for this module: NVSHMEM's headers make each NVRTC compile take seconds,
    and these tests compile the same few sources again and again."""
    global _CACHE
    if _CACHE is None:
        _CACHE = tmp_path_factory.mktemp("nvshmem-cache")
    monkeypatch.setenv("TVM_CACHE_DIR", str(_CACHE))


_CACHE = None


def _elf_type(cubin: bytes) -> int:
    assert cubin[:4] == b"\x7fELF"
    return struct.unpack_from("<H", cubin, 16)[0]


# -- pure Python -----------------------------------------------------------------------------------


def test_uses_nvshmem_detects_calls_and_headers():
    assert nvshmem.uses_nvshmem(ALLGATHER_SRC)
    assert nvshmem.uses_nvshmem("int x = nvshmemx_barrier_all_block ();")
    assert nvshmem.uses_nvshmem('#include "nvshmem.h"\n')
    assert not nvshmem.uses_nvshmem(PLAIN_SRC)
    assert not nvshmem.uses_nvshmem("int my_nvshmem_pe = 0; // nvshmem")


def test_missing_wheel_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    monkeypatch.delenv("TVM_NVSHMEM_HOME", raising=False)
    monkeypatch.delenv("NVSHMEM_HOME", raising=False)
    nvshmem._find.cache_clear()
    try:
        assert not nvshmem.is_available()
        with pytest.raises(BackendNotInstalledError, match="pip install nvidia-nvshmem-cu13"):
            nvshmem.compile_and_link_nvshmem(ALLGATHER_SRC, "sm_90a")
    finally:
        nvshmem._find.cache_clear()


def test_safety_env_overrides_the_caller(monkeypatch):
    monkeypatch.setenv("NVSHMEM_DISABLE_NVLS", "0")
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")
    monkeypatch.delenv("NVSHMEM_SYMMETRIC_SIZE", raising=False)
    nvshmem._prepare_env({"NVSHMEM_DEBUG": "WARN"}, 1 << 28, single_host=True)
    assert os.environ["NVSHMEM_DISABLE_NVLS"] == "1"
    assert os.environ["NCCL_NVLS_ENABLE"] == "0"
    assert os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1"
    assert os.environ["NVSHMEM_SYMMETRIC_SIZE"] == str(1 << 28)
    assert os.environ["NVSHMEM_DEBUG"] == "WARN"
    # a user's NVLS=0 in env= does not turn multicast back on either
    nvshmem._prepare_env({"NVSHMEM_DISABLE_NVLS": "0"}, None, single_host=True)
    assert os.environ["NVSHMEM_DISABLE_NVLS"] == "1"


# -- compile and link (CI: no GPU, no driver) ----------------------------------------------------


@needs_nvshmem
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a", "sm_100a"])
def test_compile_and_link(arch):
    cubin = nvshmem.compile_and_link_nvshmem(ALLGATHER_SRC, arch)
    assert _elf_type(cubin) == ET_EXEC  # linked, not relocatable
    assert b"allgather_put" in cubin
    # NVSHMEM's device state, which nvshmemx_culibrary_init fills in at load time
    assert b"nvshmemi_device_state_d" in cubin


@needs_nvshmem
def test_compile_nvshmem_options_and_block_api():
    compiled = nvshmem.compile_nvshmem(ALLREDUCE_SRC, "sm_90a")
    assert "-rdc=true" in compiled.options
    inc = str(nvshmem.find_nvshmem().include_dir)
    assert f"-I{inc}" in compiled.options
    assert _elf_type(compiled.cubin) == ET_EXEC
    # the relocatable object is cached: a second compile is a cache hit, the link is reused
    again = nvshmem.compile_nvshmem(ALLREDUCE_SRC, "sm_90a")
    assert again.from_cache and again.cubin == compiled.cubin


@needs_nvshmem
def test_plain_kernels_take_the_normal_path():
    compiled = nvshmem.compile_auto(PLAIN_SRC, "sm_90a")
    assert "-rdc=true" not in compiled.options
    assert not any("nvshmem" in o for o in compiled.options)
    linked = nvshmem.compile_auto(ALLGATHER_SRC, "sm_90a")
    assert "-rdc=true" in linked.options


@needs_nvshmem
def test_link_error_carries_the_linker_log():
    src = ALLGATHER_SRC + r"""
extern __device__ int tvm_missing_device_fn(int);
extern "C" __global__ void broken(int* x) { x[0] = tvm_missing_device_fn(nvshmem_my_pe()); }
"""
    with pytest.raises(CompileError) as info:
        nvshmem.compile_and_link_nvshmem(src, "sm_90a")
    err = info.value
    assert "nvJitLink" in str(err) and "sm_90a" in str(err)
    assert "tvm_missing_device_fn" in err.log
    assert "libnvshmem_device.a" in err.command


@needs_nvshmem
def test_nvrtc_error_names_rdc_and_headers():
    with pytest.raises(CompileError) as info:
        nvshmem.compile_and_link_nvshmem(ALLGATHER_SRC + "\nthis is not C++;\n", "sm_90a")
    assert "-rdc=true" in info.value.command
    assert "error" in info.value.log


@needs_nvshmem
def test_unique_id_without_a_gpu():
    from tvm_backend_cuda.runtime import has_cuda_device

    if nvshmem.find_nvshmem().version < (3, 8, 0) and not has_cuda_device():
        # seen with 3.4.5: nvshmemx_get_uniqueid aborts the process when no driver is present
        pytest.skip("NVSHMEM < 3.8 cannot make a unique id without a CUDA driver")
    uid = nvshmem.get_unique_id()
    assert len(uid) == 128
    assert struct.unpack_from("<i", uid, 0)[0] == (1 << 16) + 128  # nvshmemx_uniqueid_v1
    assert nvshmem._host_lib().version() == nvshmem.find_nvshmem().version


# -- one PE on one GPU -------------------------------------------------------------------------


@pytest.fixture
def ctx(nvshmem_one_pe):
    return nvshmem_one_pe  # conftest.py: one context per session (the GPU's, or the emulator's)


def _sync(ctx) -> None:
    if ctx.torch_device != "cpu":  # the emulator's launches are synchronous
        import torch

        torch.cuda.synchronize()


@pytest.mark.gpu
def test_init_single_pe(ctx):
    assert (ctx.my_pe(), ctx.n_pes()) == (0, 1)
    assert nvshmem.current_context() is ctx
    assert os.environ["NVSHMEM_DISABLE_NVLS"] == "1"
    assert nvshmem.NvshmemContext.init() is ctx  # idempotent
    with pytest.raises(RuntimeError, match="already initialised"):
        nvshmem.NvshmemContext.init(0, 2, unique_id=bytes(128))


@pytest.mark.gpu
def test_symmetric_zeros(ctx):
    import torch

    t = ctx.zeros((4, 1024), "float32")
    assert t.shape == (4, 1024) and t.dtype == torch.float32
    assert t.device == torch.device(ctx.torch_device)
    assert torch.count_nonzero(t).item() == 0
    assert ctx.peer_pointer(t, 0) == t.data_ptr()  # this PE's own copy
    b = ctx.zeros(3, torch.bfloat16)
    b += 1.5
    assert b.tolist() == [1.5, 1.5, 1.5]
    ctx.free(b)
    ctx.free(t)


@pytest.mark.gpu
def test_allgather_put_to_self(ctx):
    import torch

    n = 4096
    mod = ctx.compile(ALLGATHER_SRC, {"allgather_put": ["ptr", "ptr", "int32"]})
    src = ctx.zeros(n, "float32")
    dst = ctx.zeros(ctx.n_pes() * n, "float32")
    src.copy_(torch.arange(n, dtype=torch.float32, device=src.device))
    ctx.launch(mod.get_kernel("allgather_put"), 1, 32, [dst, src, n], collective=True)
    _sync(ctx)
    assert torch.equal(dst, src.repeat(ctx.n_pes()))
    for t in (src, dst):
        ctx.free(t)


@pytest.mark.gpu
def test_allreduce_single_pe_matches_torch(ctx):
    import torch

    n = 1 << 16
    mod = ctx.compile(ALLREDUCE_SRC, {"allreduce_sum": ["ptr", "ptr", "ptr", "int32"]})
    dev = ctx.torch_device
    g = torch.Generator(device=dev).manual_seed(0)
    src = ctx.zeros(n, "float32")
    src.copy_(torch.randint(-64, 64, (n,), device=dev, generator=g).float())
    work = ctx.zeros(ctx.n_pes() * n, "float32")
    out = torch.empty(n, device=dev)
    for _ in range(3):  # relaunching is safe: the trailing barrier guards the work buffer
        ctx.launch((mod, "allreduce_sum"), 1, 1024, [out, work, src, n], collective=True)
    _sync(ctx)
    expected = src * ctx.n_pes()  # what torch.distributed.all_reduce(SUM) gives on one rank
    assert torch.equal(out, expected)
    ctx.free(src)
    ctx.free(work)


@pytest.mark.gpu
def test_collective_launch_too_large_is_refused(ctx):

    mod = ctx.compile(ALLGATHER_SRC, {"allgather_put": ["ptr", "ptr", "int32"]})
    x = ctx.zeros(8, "float32")
    with pytest.raises(ValueError, match="cannot all be resident"):
        ctx.launch(mod.get_kernel("allgather_put"), 100_000, 1024, [x, x, 1], collective=True)
    _sync(ctx)
    ctx.free(x)


@pytest.mark.gpu
def test_plain_module_is_refused(ctx):
    from tvm_backend_cuda.compiler import compile_cuda
    from tvm_backend_cuda.runtime import CudaModule

    mod = CudaModule(compile_cuda(PLAIN_SRC, "sm_90a"), ["scale"])
    with pytest.raises(TypeError, match="plain CudaModule"):
        ctx.launch(mod.get_kernel("scale"), 1, 32, [0, 0])


# -- several PEs -----------------------------------------------------------------------------------

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "nvshmem_collectives.py"


@pytest.mark.gpu
@pytest.mark.not_emulated("several PEs, one GPU each: the CUDA emulator runs NVSHMEM with one PE")
@needs_nvshmem
def test_multi_pe_against_nccl():
    torch = pytest.importorskip("torch")
    n = torch.cuda.device_count()
    if n < 2:
        pytest.skip(f"needs 2 or more GPUs for 2+ PEs; this machine has {n}")
    env = dict(os.environ, **nvshmem.SAFETY_ENV)
    res = subprocess.run([sys.executable, str(EXAMPLE), "--nprocs", str(n), "--check"],
                         env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "allgather OK" in res.stdout and "allreduce OK" in res.stdout


# -- the DSL: T.nvshmem ops through codegen, compile and link ------------------------------------


@needs_nvshmem
def test_dsl_kernel_with_nvshmem_ops_links():
    import tvm
    from tvm.script import tirx as T
    from tvm_backend_cuda.plugin import register_backend

    register_backend()

    @T.prim_func
    def put_all(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])  # noqa: F841
        tx = T.thread_id([32])  # noqa: F841
        me = T.nvshmem.my_pe()
        T.nvshmem.putmem_nbi(T.address_of(B[0]), T.address_of(A[0]), 4096, me)
        T.nvshmem.quiet()
        T.nvshmem.barrier_all()

    ex = tvm.compile(put_all, target="nvidia/nvidia-h100")  # through nvshmem.compile_auto
    assert "-rdc=true" in ex.nvrtc_options
    src = ex.inspect_source()
    assert "#include <nvshmem.h>" in src and "nvshmem_barrier_all();" in src
    assert _elf_type(ex.cubin) == ET_EXEC and b"nvshmemi_device_state_d" in ex.cubin
    # and the same source through our entry point directly
    assert _elf_type(nvshmem.compile_auto(src, "sm_90a").cubin) == ET_EXEC
