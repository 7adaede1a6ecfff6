"""The CUDA emulator (``tvm.compile(f, "cuda", emulate=True)``): the generated CUDA run on the
CPU with the GPU executable's call contract, and the bugs it reports (planted here): an
out-of-bounds store, a ``__syncthreads`` reached by part of a CTA, an mbarrier wait that can
never complete, an intrinsic without an emulation body."""

from __future__ import annotations

from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.error import (
    BarrierDivergenceError,
    BoundsCheckError,
    DeadlockError,
    NotModelledError,
    RaceError,
)
from tvm_backend_cuda.plugin import register_backend

register_backend()


@no_type_check
def _vadd(n: int = 1024, threads: int = 128) -> Any:
    from tvm.script import tirx as T

    @T.prim_func
    def vadd(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
             C: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([n // threads])
        tx = T.thread_id([threads])
        C[bx * threads + tx] = A[bx * threads + tx] + B[bx * threads + tx]

    return vadd


@no_type_check
def _scatter(n: int = 1024, threads: int = 128) -> Any:
    """C[Idx[i]] = A[i]: an index out of range is a bug no static check sees."""
    from tvm.script import tirx as T

    @T.prim_func
    def scatter(A: T.Buffer((n,), "float32"), Idx: T.Buffer((n,), "int32"),
                C: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([n // threads])
        tx = T.thread_id([threads])
        C[Idx[bx * threads + tx]] = A[bx * threads + tx]

    return scatter


@no_type_check
def _divergent_barrier(threads: int = 64) -> Any:
    from tvm.script import tirx as T

    @T.prim_func
    def half_sync(A: T.Buffer((threads,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([threads])
        S = T.alloc_buffer((threads,), "float32", scope="shared")
        S[tx] = A[tx]
        if tx < threads // 2:
            T.cuda.cta_sync()
        A[tx] = S[threads - 1 - tx]

    return half_sync


@no_type_check
def _reverse(threads: int = 64, sync: bool = True, blocks: int = 4) -> Any:
    from tvm.script import tirx as T

    @T.prim_func
    def reverse(A: T.Buffer((blocks * threads,), "float32")):
        T.device_entry()
        bx = T.cta_id([blocks])
        tx = T.thread_id([threads])
        S = T.alloc_buffer((threads,), "float32", scope="shared")
        S[tx] = A[bx * threads + tx]
        if sync:
            T.cuda.cta_sync()
        A[bx * threads + tx] = S[threads - 1 - tx]

    return reverse


@no_type_check
def _mbarrier_kernel(count: int) -> Any:
    """Thread 0 initialises an mbarrier expecting ``count`` arrivals; every one of the 32
    threads arrives once, then waits for phase 0."""
    from tvm.script import tirx as T

    @T.prim_func
    def mbar(A: T.Buffer((32,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([32])
        bar = T.alloc_buffer((1,), "uint64", scope="shared")
        if tx == 0:
            T.ptx.mbarrier.init(bar.data, count)
        T.cuda.cta_sync()
        T.ptx.mbarrier.arrive(bar.data)
        T.ptx.mbarrier.try_wait(bar.data, 0)
        A[tx] = A[tx] + T.float32(1)

    return mbar


def _emulated(func: Any) -> Any:
    ex = tvm.compile(func, target="cuda", emulate=True)
    assert type(ex).__name__ == "EmulatedCudaExecutable"
    return ex


def test_vector_add_matches_numpy() -> None:
    ex = _emulated(_vadd())
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(1024).astype("float32"), rng.standard_normal(1024).astype("float32")
    c = np.zeros(1024, "float32")
    ex(a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_env_variable_makes_emulation_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TVM_CUDA_EMULATE", "1")
    ex = tvm.compile(_vadd(), target="cuda")
    assert type(ex).__name__ == "EmulatedCudaExecutable"
    a = np.arange(1024, dtype="float32")
    c = np.zeros(1024, "float32")
    ex(a, a, c)
    np.testing.assert_array_equal(c, 2 * a)
    monkeypatch.setenv("TVM_CUDA_EMULATE", "0")
    assert type(tvm.compile(_vadd(), target="cuda")).__name__ == "CudaExecutable"


def test_same_argument_checks_as_the_gpu_executable() -> None:
    ex = _emulated(_vadd())
    a = np.zeros(1024, "float32")
    with pytest.raises(ValueError, match="shape"):
        ex(a, a, np.zeros(1000, "float32"))
    with pytest.raises(TypeError):
        ex(a, a)
    with pytest.raises(ValueError, match="float32"):
        ex(a, a, np.zeros(1024, "float64"))


def test_torch_cpu_tensors_and_dlpack() -> None:
    torch = pytest.importorskip("torch")
    ex = _emulated(_vadd())
    a, b = torch.randn(1024), torch.randn(1024)
    c = torch.zeros(1024)
    ex(a, b, c)
    torch.testing.assert_close(c, a + b)

    class OnlyDLPack:  # any CPU DLPack producer
        def __init__(self, arr: np.ndarray) -> None:
            self.arr = arr

        def __dlpack__(self, **kw: Any) -> Any:
            return self.arr.__dlpack__(**kw)

        def __dlpack_device__(self) -> Any:
            return self.arr.__dlpack_device__()

    out = np.zeros(1024, "float32")
    ex(OnlyDLPack(a.numpy()), OnlyDLPack(b.numpy()), OnlyDLPack(out))
    np.testing.assert_allclose(out, (a + b).numpy())


def test_out_of_bounds_store_is_reported_naming_buffer_index_and_thread() -> None:
    ex = _emulated(_scatter())
    a = np.ones(1024, "float32")
    c = np.zeros(1024, "float32")
    index = np.arange(1024, dtype="int32")[::-1].copy()
    ex(a, index, c)
    np.testing.assert_array_equal(c, a)
    c[...] = 0
    index[1000] = 1024  # block 7, thread 104
    with pytest.raises(BoundsCheckError) as info:
        ex(a, index, c)
    msg = str(info.value)
    assert "kernel 'scatter_kernel'" in msg
    assert "out-of-bounds access of global buffer 'C': index 1024 is outside [0, 1024)" in msg
    assert "block (7, 0, 0), thread (104, 0, 0)" in msg
    np.testing.assert_array_equal(c, np.zeros(1024, "float32"))  # isolated: unchanged


def test_out_of_bounds_shared_access_is_reported() -> None:
    from tvm.script import tirx as T

    @T.prim_func
    def shared_oob(A: T.Buffer((64,), "float32"), Idx: T.Buffer((64,), "int32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([64])
        S = T.alloc_buffer((64,), "float32", scope="shared")
        S[Idx[tx]] = A[tx]
        T.cuda.cta_sync()
        A[tx] = S[tx]

    ex = _emulated(shared_oob)
    index = np.arange(64, dtype="int32")
    index[5] = 70
    with pytest.raises(BoundsCheckError, match=r"out-of-bounds access of shared buffer 'S': "
                                               r"index 70 is outside \[0, 64\).*thread \(5, 0, 0\)"):
        ex(np.zeros(64, "float32"), index)


def test_divergent_barrier_is_reported_not_hung() -> None:
    ex = _emulated(_divergent_barrier())
    with pytest.raises(BarrierDivergenceError) as info:
        ex(np.zeros(64, "float32"))
    msg = str(info.value)
    assert "kernel 'half_sync_kernel', block (0, 0, 0): barrier divergence" in msg
    assert "__syncthreads() reached by 32 of the block's 64 threads" in msg
    assert "thread (0, 0, 0) at a block barrier" in msg
    assert "thread (32, 0, 0) exited" in msg


def test_barrier_orders_shared_memory() -> None:
    ex = _emulated(_reverse())
    a = np.arange(256, dtype="float32")
    ex(a)
    want = np.arange(256, dtype="float32").reshape(4, 64)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(a, want)


def test_mbarrier_phase_completes_with_all_arrivals() -> None:
    ex = _emulated(_mbarrier_kernel(32))
    a = np.zeros(32, "float32")
    ex(a)
    np.testing.assert_array_equal(a, np.ones(32, "float32"))


def test_mbarrier_expecting_more_arrivals_is_a_deadlock_report() -> None:
    ex = _emulated(_mbarrier_kernel(33))
    with pytest.raises(DeadlockError) as info:
        ex(np.zeros(32, "float32"))
    msg = str(info.value)
    assert "kernel 'mbar_kernel', block (0, 0, 0): deadlock" in msg
    assert "waiting on the mbarrier at shared address" in msg
    assert "for phase parity 0 (phase 0: 1 of 33 arrivals pending" in msg


def test_intrinsic_without_emulation_body_is_named_at_compile_time() -> None:
    from tvm.script import tirx as T

    @T.prim_func
    def tcgen05_shift(A: T.Buffer((128,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        A[tx] = A[tx] + T.float32(1)
        T.ptx.tcgen05.shift(0)

    with pytest.raises(NotModelledError, match=r"intrinsic ptx\.tcgen05_shift "
                                               r"has no emulation body"):
        tvm.compile(tcgen05_shift, target="cuda", arch="sm_100a", emulate=True)
    tvm.compile(tcgen05_shift, target="cuda", arch="sm_100a")  # the NVRTC build is unaffected


@no_type_check
def _warpgroups(count: int) -> Any:
    """Two warpgroups, each reversing its half through shared memory between named-barrier
    syncs (barrier 1 + its index, ``count`` threads)."""
    from tvm.script import tirx as T

    @T.prim_func
    def warpgroups(A: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([256])
        S = T.alloc_buffer((256,), "float32", scope="shared")
        S[tx] = A[tx]
        T.ptx.bar.sync(1 + tx // 128, count)
        A[tx] = S[(tx // 128) * 128 + 127 - tx % 128]

    return warpgroups


def test_named_barriers_sync_their_warpgroups_and_report_a_short_count() -> None:
    a = np.arange(256, dtype="float32")
    _emulated(_warpgroups(128))(a)
    want = np.arange(256, dtype="float32").reshape(2, 128)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(a, want)
    with pytest.raises(DeadlockError, match=r"waiting at named barrier 1 \(bar\.sync: 128 of "
                                            r"256 threads arrived\)"):
        _emulated(_warpgroups(256))(np.zeros(256, "float32"))


def test_scalar_and_warp_ptx_intrinsics_have_emulation_bodies() -> None:
    from tvm.script import tirx as T

    @T.prim_func
    def scalars(X: T.Buffer((64,), "float32"), Y: T.Buffer((4, 64), "float32"),
                E: T.Buffer((64,), "uint32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([64])
        Y[0, tx] = T.ptx.exp2(X[tx])
        Y[1, tx] = T.ptx.rcp(X[tx])
        Y[2, tx] = T.ptx.tanh(X[tx])
        T.ptx.add_f32(T.address_of(Y[3, tx]), X[tx], T.float32(0.5))
        E[tx] = T.ptx.elect_sync()

    ex = tvm.compile(scalars, target="cuda", arch="sm_90a", emulate=True)
    x = np.linspace(0.5, 3.0, 64, dtype="float32")
    y = np.zeros((4, 64), "float32")
    e = np.zeros(64, "uint32")
    ex(x, y, e)
    np.testing.assert_allclose(y[0], np.exp2(x), rtol=1e-6)
    np.testing.assert_allclose(y[1], 1 / x, rtol=1e-6)
    np.testing.assert_allclose(y[2], np.tanh(x), rtol=1e-6)
    np.testing.assert_array_equal(y[3], x + np.float32(0.5))
    np.testing.assert_array_equal(np.nonzero(e)[0], [0, 32])  # one leader per warp


def test_emulator_source_keeps_the_generated_lines() -> None:
    ex = _emulated(_reverse())
    cuda = ex.inspect_source()
    emu = ex.inspect_source("emulator")
    assert "__shared__ float S[64]" in cuda
    cuda_lines, emu_lines = cuda.split("\n"), emu.split("\n")
    k = next(i for i, line in enumerate(cuda_lines) if "__shared__ float S[64]" in line)
    assert emu_lines[k].strip() == "TVM_EMU_SHARED(float, S, 64, 16);"
    assert "::tvm_cuda_emu::GPtr<float> A" in emu


def test_missing_syncthreads_is_reported_as_a_race() -> None:
    ex = _emulated(_reverse(sync=False, blocks=1))  # one CTA: the report names block 0
    a = np.arange(64, dtype="float32")
    with pytest.raises(RaceError) as info:
        ex(a)
    msg = str(info.value)
    # the fibers run in thread order: thread 32 (warp 1) reads S[31], which thread 31 (warp 0)
    # wrote in the same barrier interval
    assert ("kernel 'reverse_kernel': shared-memory race on shared buffer 'S' at byte 124: "
            "thread (31, 0, 0) wrote it and thread (32, 0, 0) accessed it with no "
            "__syncthreads() between them (block (0, 0, 0), thread (32, 0, 0))") in msg
    np.testing.assert_array_equal(a, np.arange(64, dtype="float32"))


def test_race_detector_accepts_atomics_and_can_be_turned_off(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    from tvm.script import tirx as T

    @T.prim_func
    def shared_count(A: T.Buffer((1,), "int32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        S = T.alloc_buffer((1,), "int32", scope="shared")
        if tx == 0:
            S[0] = 0
        T.cuda.cta_sync()
        T.cuda.atomic_add(S[0], 1)
        T.cuda.cta_sync()
        if tx == 0:
            A[0] = S[0]

    ex = _emulated(shared_count)
    a = np.zeros(1, "int32")
    ex(a)
    assert a[0] == 128
    monkeypatch.setenv("TVM_CUDA_EMULATE_RACECHECK", "0")
    b = np.arange(256, dtype="float32")
    _emulated(_reverse(sync=False))(b)  # no check: runs (the fibers' order hides the race)


@no_type_check
def _cp_async_then_overwrite(threads: int = 32) -> Any:
    """Every lane copies the same 4 halves of A into shared memory with cp.async (no barrier),
    waits, then writes A = copy * 3. Lanes of a warp run in lockstep on the GPU: each copy is
    issued before any lane writes A, so every lane copied the first A."""
    from tvm.script import tirx as T

    @T.prim_func
    def copy_then_write(A: T.Buffer((4,), "float16")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([threads])
        S = T.alloc_shared([4], "float16")
        T.ptx.cp_async(S.ptr_to([0]), A.ptr_to([0]), 8)
        T.ptx.cp_async.commit_group()
        T.ptx.cp_async.wait_group(0)
        for i in T.serial(4):
            A[i] = S[i] * T.float16(3)

    return copy_then_write


def test_cp_async_lanes_issue_before_any_lane_goes_on() -> None:
    ex = _emulated(_cp_async_then_overwrite())
    a = tvm.runtime.tensor(np.array([1, 2, 3, 4], dtype="float16"))
    ex(a)
    np.testing.assert_array_equal(a.numpy(), np.array([3, 6, 9, 12], dtype="float16"))
