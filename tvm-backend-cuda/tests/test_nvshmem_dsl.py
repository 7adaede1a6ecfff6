"""Issue 8's examples in our DSL (examples/nvshmem_dsl.py): an all-gather, an all-reduce (signal
and barrier forms) and a GEMM whose B operand is gathered from the other PEs inside the kernel,
written with ``T.nvshmem`` ops and compiled by ``tvm.compile``.

CI (no GPU): the generated source, NVRTC + nvJitLink into a linked cubin holding NVSHMEM's device
state, the put-with-signal shim, and the missing-wheel error. ``gpu``: one PE, checked against
torch; the example with one PE against torch.distributed (NCCL on the GPU, gloo under the CUDA
emulator); and, with 2+ GPUs, the example with one process per GPU against NCCL, with bandwidth
beside NCCL's.
"""

from __future__ import annotations

import importlib.util
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import tvm
from tvm.error import BackendNotInstalledError
from tvm_backend_cuda import nvshmem, nvshmem_link
from tvm_backend_cuda.plugin import register_backend

register_backend()

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "nvshmem_dsl.py"
_spec = importlib.util.spec_from_file_location("nvshmem_dsl", EXAMPLE)
X: Any = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(X)  # type: ignore[union-attr]

needs_nvshmem = pytest.mark.skipif(
    not nvshmem.is_available(),
    reason=f"NVSHMEM wheel not installed: {nvshmem.unavailable_reason()}",
)
ET_EXEC = 2

# The sizes the GPU tests use with one PE, so that their compiles hit the CI compiles' cache.
N, BLOCKS, THREADS = 1 << 16, 16, 256
GEMM = (64, 128, 32)  # m, n, k per PE

_CACHE = None


@pytest.fixture(autouse=True)
def _shared_cache(tmp_path_factory, monkeypatch):
    """One cubin cache for this module: NVSHMEM's headers make each NVRTC compile take seconds."""
    global _CACHE
    if _CACHE is None:
        _CACHE = tmp_path_factory.mktemp("nvshmem-dsl-cache")
    monkeypatch.setenv("TVM_CACHE_DIR", str(_CACHE))


def _kernels(npes: int = 1) -> dict[str, Any]:
    return {
        "allgather": X.allgather_kernel(N, npes, BLOCKS, THREADS),
        "allreduce": X.allreduce_kernel(N, npes, BLOCKS, THREADS),
        "allreduce_barrier": X.allreduce_barrier_kernel(4096, npes, 1024),
        "gather_gemm": X.gather_gemm_kernel(*GEMM, npes),
    }


# what each kernel's CUDA must call
CALLS = {
    "allgather": ["nvshmem_my_pe()", "nvshmemx_putmem_signal_nbi_block(", "NVSHMEM_SIGNAL_ADD",
                  "nvshmem_uint64_wait_until(", "NVSHMEM_CMP_GE", "nvshmem_quiet();"],
    "allreduce": ["nvshmemx_putmem_signal_nbi_block(", "nvshmem_uint64_wait_until(",
                  "nvshmemx_signal_op(", "nvshmem_quiet();"],
    "allreduce_barrier": ["nvshmemx_putmem_nbi_block(", "nvshmem_barrier_all();",
                          "nvshmem_fence();"],
    "gather_gemm": ["nvshmemx_getmem_nbi_warp(", "nvshmem_quiet();"],
}


def _elf_type(cubin: bytes) -> int:
    assert cubin[:4] == b"\x7fELF"
    return struct.unpack_from("<H", cubin, 16)[0]


# -- pure Python -----------------------------------------------------------------------------------


def test_kernels_are_written_with_the_nvshmem_namespace() -> None:
    for name, f in _kernels(2).items():
        text = f.script()
        assert "T.nvshmem." in text and "func_call" not in text, name
    assert "T.nvshmem.putmem_signal_nbi.block(" in _kernels(2)["allgather"].script()
    assert "T.nvshmem.getmem_nbi.warp(" in _kernels(2)["gather_gemm"].script()


def test_generated_source_calls_nvshmem() -> None:
    from tvm_backend_cuda.codegen import generate_cuda

    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    for name, f in _kernels(2).items():
        src, _ = generate_cuda(tvm.driver.lower(f, target), target)
        assert src.startswith("#include <nvshmem.h>\n#include <nvshmemx.h>\n"), name
        for call in CALLS[name]:
            assert call in src, (name, call)
    # the PE loop staggers the targets: (me + i) % npes, a floormod of non-negative ints
    src, _ = generate_cuda(tvm.driver.lower(_kernels(4)["allgather"], target), target)
    assert "for (int i = 0; i < 4; ++i) {" in src
    assert "tvm_floormod_i32((me + i), 4));" in src


def test_put_signal_shim_goes_after_the_nvshmem_includes() -> None:
    src = ("#include <nvshmem.h>\n#include <nvshmemx.h>\n\nextern \"C\" __global__ void k(float* d,"
           " unsigned long long* s) { nvshmemx_putmem_signal_nbi_block(d, d, 4, (uint64_t*)s, "
           "1, NVSHMEM_SIGNAL_ADD, 0); }\n")
    out = nvshmem._with_put_signal_shim(src)
    head, _, rest = out.partition(nvshmem._PUT_SIGNAL_SHIM)
    assert head == "#include <nvshmem.h>\n#include <nvshmemx.h>\n"
    assert rest.lstrip("\n").startswith("extern \"C\"")
    assert "#define nvshmemx_putmem_signal_nbi_block tvm_nvshmemx_putmem_signal_nbi_block" in out
    plain = "#include <nvshmem.h>\n__global__ void k() { nvshmem_quiet(); }\n"
    assert nvshmem._with_put_signal_shim(plain) == plain  # no put-with-signal: untouched
    bare = "__global__ void k(float* d) { nvshmem_putmem_signal_nbi(d, d, 4, 0, 1, 0, 0); }"
    assert nvshmem._with_put_signal_shim(bare).startswith("#include <nvshmem.h>\n")


def test_missing_wheel_names_it(monkeypatch) -> None:
    # (not by emptying sys.path: the compiler caches the CUDA header folders it finds there)
    monkeypatch.setattr(nvshmem_link, "_find",
                        lambda: f"NVSHMEM is not installed; {nvshmem.PIP_HINT}")
    with pytest.raises(BackendNotInstalledError, match="pip install nvidia-nvshmem-cu13"):
        tvm.compile(_kernels()["allreduce_barrier"], target={"kind": "cuda", "arch": "sm_90a"})


# -- compile and link (CI) -------------------------------------------------------------------------


@needs_nvshmem
@pytest.mark.parametrize("name", list(CALLS))
def test_dsl_kernel_compiles_and_links(name: str) -> None:
    ex = tvm.compile(_kernels()[name], target={"kind": "cuda", "arch": "sm_90a"})
    assert _elf_type(ex.cubin) == ET_EXEC  # relocatable code linked with libnvshmem_device.a
    assert b"nvshmemi_device_state_d" in ex.cubin
    assert "-rdc=true" in ex.nvrtc_options
    src = ex.inspect_source()
    for call in CALLS[name]:
        assert call in src, call
    assert "tvm_nvshmemx_putmem_signal_nbi_block" not in src  # the shim is the compiler's


@needs_nvshmem
def test_dsl_kernel_links_for_sm80() -> None:
    ex = tvm.compile(_kernels(2)["allreduce"], target={"kind": "cuda", "arch": "sm_80"})
    assert _elf_type(ex.cubin) == ET_EXEC and ex.arch == "sm_80"


def test_kernels_without_nvshmem_stay_on_the_plain_path() -> None:
    from tvm.script import tirx as T

    @T.prim_func
    def k(A: T.Buffer((32,), "float32")):
        T.device_entry()
        tx = T.thread_id([32])
        A[tx] = A[tx] + T.float32(1)

    ex = tvm.compile(k, target={"kind": "cuda", "arch": "sm_90a"})
    assert "-rdc=true" not in ex.nvrtc_options
    assert not any("nvshmem" in o and o.startswith("-I") for o in ex.nvrtc_options)


# -- one PE on one GPU -------------------------------------------------------------------------


@pytest.fixture
def ctx(nvshmem_one_pe):
    return nvshmem_one_pe  # conftest.py: one context per session (the GPU's, or the emulator's)


def _sync(ctx: Any) -> None:
    if ctx.torch_device != "cpu":  # the emulator's launches are synchronous
        import torch

        torch.cuda.synchronize()


def _arange(ctx: Any, n: int, offset: float = 0.0) -> Any:
    import torch

    t = ctx.zeros(n, "float32")
    t.copy_(torch.arange(n, dtype=torch.float32, device=t.device) % 1000 + offset)
    return t


@pytest.mark.gpu
def test_allgather_single_pe(ctx) -> None:
    import torch

    ag = X.AllGather(ctx, N, blocks=BLOCKS, threads=THREADS)
    src = _arange(ctx, N)
    dst = ctx.zeros(ctx.n_pes() * N, "float32")
    for r in range(3):  # rounds count up through the signals
        src.add_(1)
        ag(dst, src)
        _sync(ctx)
        assert torch.equal(dst, src.repeat(ctx.n_pes())), f"round {r}"
    assert ag.sig.tolist() == [3 * BLOCKS]  # one signal per block per round
    # the executable called directly (a plain launch of its NvshmemModule) works as well
    src.add_(1)
    ag.epoch += 1
    ag.ex(dst, src, ag.sig, ag.epoch)
    _sync(ctx)
    assert torch.equal(dst, src.repeat(ctx.n_pes()))
    ag.free()
    ctx.free(src)
    ctx.free(dst)


@pytest.mark.gpu
def test_allreduce_single_pe_matches_torch(ctx) -> None:
    import torch

    ar = X.AllReduce(ctx, N, blocks=BLOCKS, threads=THREADS)
    dev = ctx.torch_device
    g = torch.Generator(device=dev).manual_seed(0)
    x = ctx.zeros(N, "float32")
    x.copy_(torch.randint(-64, 64, (N,), device=dev, generator=g).float())
    out = torch.empty(N, device=dev)
    for _ in range(3):
        out.zero_()
        ar(out, x)
    _sync(ctx)
    # torch.distributed.all_reduce(SUM) over n_pes ranks holding x each
    assert torch.equal(out, x * ctx.n_pes())
    assert ar.sig[:BLOCKS].tolist() == [3] * BLOCKS  # arrivals: one per PE per round
    assert ar.sig[BLOCKS:].tolist() == [3] * BLOCKS  # reads done: one per PE per round
    ar.free()
    ctx.free(x)


@pytest.mark.gpu
def test_allreduce_barrier_single_pe_matches_torch(ctx) -> None:
    import torch

    arb = X.AllReduceBarrier(ctx, 4096, threads=1024)
    x = _arange(ctx, 4096, offset=-500.0)
    out = torch.empty(4096, device=ctx.torch_device)
    arb(out, x)
    arb(out, x)
    _sync(ctx)
    assert torch.equal(out, x * ctx.n_pes())
    arb.free()
    ctx.free(x)


@pytest.mark.gpu
def test_gather_gemm_single_pe_matches_torch(ctx) -> None:
    import torch

    m, n, kp = GEMM
    gg = X.GatherGemm(ctx, m, n, kp)
    dev = ctx.torch_device
    g = torch.Generator(device=dev).manual_seed(1)
    shard = ctx.zeros((kp, n), "float32")
    shard.copy_(torch.randint(-4, 5, (kp, n), device=dev, generator=g).float())
    a = torch.randint(-4, 5, (m, ctx.n_pes() * kp), device=dev, generator=g).float()
    c = torch.empty((m, n), device=dev)
    ctx.barrier_all()
    gg(c, a, shard)
    _sync(ctx)
    assert torch.equal(gg.gathered, shard.repeat(ctx.n_pes(), 1))
    assert torch.equal(c, a @ gg.gathered)
    ctx.free(shard)


# -- the example, one process per GPU, against torch.distributed (NCCL; gloo when emulated) -------


def _run_example(nprocs: int, *extra: str) -> str:
    env = dict(os.environ, **nvshmem.SAFETY_ENV)
    res = subprocess.run([sys.executable, str(EXAMPLE), "--nprocs", str(nprocs), "--check",
                          *extra], env=env, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr
    for what in ("allgather", "allreduce", "allreduce_barrier", "gather_gemm"):
        assert f"{what} OK" in res.stdout, res.stdout + res.stderr
    print(res.stdout)  # the bandwidth lines, for docs/gpu-results.md (pytest -s shows them)
    return res.stdout


@pytest.mark.gpu
def test_example_one_pe_against_nccl(device: str) -> None:
    """On the GPU against NCCL; under the emulator (the subprocess inherits TVM_CUDA_EMULATE=1)
    against gloo (NCCL runs on CUDA devices only), at a small size."""
    pytest.importorskip("torch")
    if device == "cuda":
        if not nvshmem.is_available():
            pytest.skip(f"NVSHMEM wheel not installed: {nvshmem.unavailable_reason()}")
        size, ref = 16, "NCCL"
        out = _run_example(1, "--bench", "--size", str(size), "--heap", "512")
    else:
        size, ref = 1, "gloo"
        out = _run_example(1, "--bench", "--size", str(size), "--heap", "16",
                           "--check-size", str(N))
    for what in ("allgather", "allreduce"):
        line = next(x for x in out.splitlines() if x.startswith(f"{what} {size} MiB/PE"))
        assert line.startswith(f"{what} {size} MiB/PE, 1 PEs: NVSHMEM DSL"), line
        assert f" bus), {ref} " in line, line


@pytest.mark.gpu
@pytest.mark.not_emulated("several PEs, one GPU each: the CUDA emulator runs NVSHMEM with one PE")
@needs_nvshmem
def test_example_multi_pe_against_nccl() -> None:
    torch = pytest.importorskip("torch")
    n = torch.cuda.device_count()
    if n < 2:
        pytest.skip(f"needs 2 or more GPUs for 2+ PEs; this machine has {n}")
    out = _run_example(n, "--bench", "--size", "64")
    assert f"allreduce 64 MiB/PE, {n} PEs: NVSHMEM DSL" in out


# -- NvshmemContext.run without a GPU: the launches it makes ----------------------------------------


class _FakeCudaArray:
    """Enough of a CUDA array for the argument checks (``__cuda_array_interface__``)."""

    def __init__(self, shape: tuple[int, ...], typestr: str, ptr: int) -> None:
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "version": 3, "strides": None}


@needs_nvshmem
def test_run_launches_what_the_executable_would(monkeypatch) -> None:
    from tvm_backend_cuda.nvshmem import NvshmemContext, NvshmemModule

    ex = tvm.compile(_kernels()["allgather"], target={"kind": "cuda", "arch": "sm_90a"})
    assert isinstance(ex.module(), NvshmemModule)  # bound to NVSHMEM when loaded
    monkeypatch.setattr(ex, "device_ready", lambda: True)
    ctx = NvshmemContext(rank=0, world_size=1, device=0, lib=None, version=(3, 8, 0))
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(ctx, "launch", lambda kernel, grid, block, args, **kw: calls.append(
        (kernel.name, grid, block, args, kw)))
    dst = _FakeCudaArray((N,), "<f4", 0x10000)
    src = _FakeCudaArray((N,), "<f4", 0x20000)
    sig = _FakeCudaArray((1,), "<i8", 0x30000)
    ctx.run(ex, dst, src, sig, 7, collective=True)
    assert calls == [("allgather_kernel", (BLOCKS, 1, 1), (THREADS, 1, 1), [dst, src, sig, 7],
                      {"collective": True, "shmem": 0, "stream": None})]
    with pytest.raises(ValueError, match="sig"):  # the executable's own argument checks
        ctx.run(ex, dst, src, _FakeCudaArray((2,), "<i8", 0x30000), 7)
