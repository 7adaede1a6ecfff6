"""What the seed's codegen tests read (test_codegen_hopper.py / test_codegen_cuda.py), on our
kernels: the GPU source of an emulated build, the seed's helper names, the emulation bodies of
red/atom and ld_global_acquire, stmatrix from scattered registers, an integer ``if``
condition, ``clusterCtaIdx`` thread bindings and ``Buffer.WRITE``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm.tirx import Buffer
from tvm_backend_cuda.plugin import register_backend

register_backend()

H100 = "nvidia/nvidia-h100"


def _emulated(func: Any, target: Any = H100) -> Any:
    return tvm.compile(func, target=target, emulate=True)


def test_an_emulated_build_shows_the_gpu_source() -> None:
    @T.prim_func
    def k(A: T.Buffer((64,), "int32")):
        T.device_entry()
        tx = T.thread_id([64])
        T.ptx.setmaxnreg(False, 40)
        T.ptx.fence("acq_rel", "cluster")
        A[tx] = tx * 3

    ex = _emulated(k)
    gpu = ex.inspect_source()
    assert gpu == tvm.compile(k, target=H100).inspect_source()  # what the GPU build compiles
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in gpu and "fence.acq_rel.cluster;" in gpu
    emulated = ex.inspect_source("emulated")  # what the emulator compiled
    assert "setmaxnreg" not in emulated and "__threadfence()" in emulated
    assert "GPtr" in ex.inspect_source("emulator")  # as the emulator rewrote it
    a = np.zeros(64, "int32")
    ex(a)
    np.testing.assert_array_equal(a, np.arange(64) * 3)


def test_helpers_have_the_seed_names_compile_and_run() -> None:
    @T.prim_func
    def k(A: T.Buffer((4,), "int32"), F: T.Buffer((2,), "float32"), U: T.Buffer((2,), "uint64")):
        T.device_entry()
        cbx = T.cta_id_in_cluster([2])
        bx = T.cta_id([4])
        tx = T.thread_id([64])
        S = T.alloc_buffer([4], "uint32", scope="shared")
        T.cuda.atomic_add(A.data, T.int32(2))
        T.cuda.atomic_add(F.data, T.float32(0.5))
        if tx == 0:
            T.cuda.atomic_cas(T.address_of(A[1]), T.int32(0), bx + 10)  # the first CTA wins
            T.cuda.thread_fence()
            T.cuda.nano_sleep(5)
            U[0] = T.ptx.map_shared_rank(S.data, cbx)
        T.ptx.bar.sync(1, 64)
        if bx == 3 and tx == 0:
            T.ptx.ld_global_acquire(A[2], T.address_of(A[3]))

    gpu = tvm.compile(k, target=H100)
    src = gpu.inspect_source()
    for call in ("tvm_builtin_cuda_atomic_add<int>(", "tvm_builtin_cuda_atomic_add<float>(",
                 "tvm_builtin_cuda_atomic_cas<int>(", "tvm_builtin_cuda_thread_fence()",
                 "tvm_builtin_cuda_nano_sleep((unsigned)(5))", "tvm_builtin_ptx_mapa_u64(S, ",
                 "tvm_builtin_ptx_bar_sync(1, 64);", "tvm_builtin_ptx_ld_global_acquire_int32("):
        assert call in src, call
    assert src.count("__device__ __forceinline__ T tvm_builtin_cuda_atomic_add(") == 1
    assert gpu.cubin[:4] == b"\x7fELF"  # NVRTC takes the helpers
    a, f, u = np.array([0, 0, 0, 7], "int32"), np.zeros(2, "float32"), np.zeros(2, "uint64")
    _emulated(k)(a, f, u)
    assert a[0] == 4 * 64 * 2 and f[0] == 4 * 64 * 0.5
    assert a[1] in (10, 11, 12, 13) and a[2] == 7


@pytest.mark.parametrize(("op", "ptx_type", "start", "want"), [
    ("add", "u32", 5, 5 + sum(range(96))),
    ("max", "s32", -1000, 95 * 7 - 300),
    ("min", "s32", 1000, -300),
    ("or", "b32", 0, int(np.bitwise_or.reduce(np.arange(96) * 7 - 300))),
])
def test_red_and_atom_run_atomically_on_the_emulator(op: str, ptx_type: str, start: int,
                                                      want: int) -> None:
    dtype = "uint32" if ptx_type == "u32" else "int32"

    @T.prim_func
    def k(R: T.Buffer((1,), dtype), Old: T.Buffer((96,), dtype)):
        T.device_entry()
        bx = T.cta_id([3])
        tx = T.thread_id([32])
        g = bx * 32 + tx
        v = T.Cast(dtype, g) if op == "add" else T.Cast(dtype, g * 7 - 300)
        if tx % 2 == 0:
            T.ptx.red_scalar(R.data, v, sem="release", scope="gpu", space="global", op=op,
                             ptx_type=ptx_type)
        else:
            Old[g] = T.ptx.atom_scalar(R.data, v, scope="gpu", space="global", op=op,
                                     ptx_type=ptx_type)

    src = tvm.compile(k, target=H100).inspect_source()
    assert f"red.release.gpu.global.{op}.{ptx_type}" in src
    assert f"atom.gpu.global.{op}.{ptx_type}" in src
    r, o = np.array([start], dtype), np.zeros(96, dtype)
    _emulated(k)(r, o)
    assert int(r[0]) == want


def test_stmatrix_takes_scattered_registers() -> None:
    """Each source register of an .x4 stmatrix lives 4 halves after the last (not 2): the
    helper reads each through its own pointer, ``*(uint32_t*)src<k>``."""

    @T.prim_func
    def k(A: T.Buffer((16, 16), "float16")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([32])
        S = T.alloc_shared([16, 16], "float16")
        R = T.alloc_local([16], "float16")
        for i in range(16):
            R[i] = tx * 16 + i
        T.ptx.stmatrix(False, 4, ".b16", S.ptr_to([tx % 16, tx // 16 * 8]),
                       R.ptr_to([0]), R.ptr_to([4]), R.ptr_to([8]), R.ptr_to([12]))
        T.cuda.cta_sync()
        if tx == 0:
            for i, j in T.grid(16, 16):
                A[i, j] = S[i, j]

    src = tvm.compile(k, target=H100).inspect_source()
    assert "stmatrix.sync.aligned.m8n8.x4.shared.b16" in src
    assert all(f"*(uint32_t*)src{i}" in src for i in range(4))
    a = np.zeros((16, 16), "float16")
    _emulated(k)(a)
    want = np.zeros((16, 16))
    for lane in range(32):  # register j of lane l holds row l // 4, columns 2 (l % 4) + 0, 1
        row, col = lane // 4, lane % 4 * 2
        for j, (r0, c0) in enumerate([(0, 0), (8, 0), (0, 8), (8, 8)]):
            for h in range(2):
                want[r0 + row, c0 + col + h] = lane * 16 + 4 * j + h
    np.testing.assert_array_equal(a, want)


def test_an_integer_if_condition_is_true_when_non_zero() -> None:
    @T.prim_func
    def k(A: T.Buffer((64,), "int32")):
        T.device_entry()
        tx = T.thread_id([64])
        if T.ptx.elect_sync():
            A[tx] = 1
        if tx % 3:
            A[tx] = A[tx] + 10

    src = tvm.compile(k, target=H100).inspect_source()
    assert "elect.sync %%rx|%%px, %2;" in src
    a = np.zeros(64, "int32")
    _emulated(k)(a)
    want = np.array([(1 if t % 32 == 0 else 0) + (10 if t % 3 else 0) for t in range(64)])
    np.testing.assert_array_equal(a, want)


def test_a_cluster_cta_index_binding_sets_the_cluster() -> None:
    @T.prim_func
    def k(A: T.Buffer((8, 32), "int32")):
        T.device_entry()
        for c in T.thread_binding(2, thread="clusterCtaIdx.x"):
            for bx in T.thread_binding(8, thread="blockIdx.x"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    A[bx, tx] = c * 100 + bx

    ex = _emulated(k)
    src = ex.inspect_source()
    assert "__cluster_dims__(2, 1, 1)" in src
    assert "const int c = (int)(blockIdx.x % 2);" in src
    a = np.zeros((8, 32), "int32")
    ex(a)
    np.testing.assert_array_equal(a[:, 0], [(b % 2) * 100 + b for b in range(8)])


def test_access_ptr_takes_the_buffer_masks() -> None:
    A = tvm.ir.buffer.decl_buffer((4, 4), "float32", "A")
    assert (Buffer.READ, Buffer.WRITE) == (1, 2)
    assert tvm.ir.structural_equal(A.access_ptr(Buffer.WRITE, offset=4), A.access_ptr("w", offset=4))
    assert tvm.ir.structural_equal(A.access_ptr(Buffer.READ | Buffer.WRITE), A.access_ptr("rw"))


def test_the_address_of_a_tensor_map_parameter() -> None:
    @T.prim_func
    def k(M: T.TensorMap(), A: T.Buffer((1,), "uint64")):
        T.device_entry()
        tx = T.thread_id([32])
        if tx == 0:
            A[0] = T.address_of(M)

    src = tvm.compile(k, target=H100).inspect_source()
    assert "const __grid_constant__ CUtensorMap M" in src
    assert "A[0] = ((unsigned long long)(&(M)));" in src


def test_pointer_and_integer_reinterpret_as_cpp_casts() -> None:
    @T.prim_func
    def k(A: T.Buffer((3,), "uint64"), B: T.Buffer((1,), "int64")):
        T.device_entry()
        tx = T.thread_id([32])
        if tx == 0:
            p = T.reinterpret("handle", A[0])
            A[1] = T.reinterpret("uint64", p) + T.uint64(16)
            B[0] = T.reinterpret("int64", T.reinterpret("handle", B[0])) - T.int64(1)
            A[2] = T.reinterpret("uint64", T.float64(1.0))  # not a pointer: the bits copied

    ex = _emulated(k)
    src = ex.inspect_source()
    assert "reinterpret_cast<void*>(A[0])" in src and "reinterpret_cast<uint64_t>(p)" in src
    assert "reinterpret_cast<int64_t>(" in src
    assert tvm.compile(k, target=H100).cubin[:4] == b"\x7fELF"
    a, b = np.array([4096, 0, 0], "uint64"), np.array([-5], "int64")
    ex(a, b)
    assert a[1] == 4112 and b[0] == -6
    assert a[2] == np.float64(1.0).view("uint64")


def test_warp_shuffle_xor_is_a_butterfly() -> None:
    @T.prim_func
    def k(A: T.Buffer((64,), "int32")):
        T.device_entry()
        tx = T.thread_id([64])
        v = T.alloc_local([1], "int32")
        v[0] = tx * tx
        for s in range(5):
            v[0] = v[0] + T.tvm_warp_shuffle_xor(T.uint32(0xFFFFFFFF), v[0], 16 >> s, 32, 32)
        A[tx] = v[0]

    ex = _emulated(k)
    assert "__shfl_xor_sync(" in ex.inspect_source()
    a = np.zeros(64, "int32")
    ex(a)
    sums = [sum(t * t for t in range(w * 32, w * 32 + 32)) for w in range(2)]
    np.testing.assert_array_equal(a, np.repeat(sums, 32))


def test_a_declared_scalar_whose_address_is_taken_lives_in_memory() -> None:
    """``d: T.uint64`` without a value, then ``T.address_of(d)`` (an intrinsic fills it through
    the pointer): a local scalar, read after it is filled."""

    @T.prim_func
    def k(A: T.Buffer((1,), "uint64")):
        T.device_entry()
        tx = T.thread_id([128])
        S = T.alloc_buffer((8, 64), "float16", scope="shared", align=1024)
        d: T.uint64
        T.ptx.wgmma.encode_matrix_descriptor(T.address_of(d), S.data, 1, 64, 3)  # noqa: F821
        if tx == 0:
            A[0] = d  # noqa: F821

    a = np.zeros(1, "uint64")
    _emulated(k)(a)
    # leading 16 and stride 1024 bytes (in 16-byte units: the seed's ldo=1, sdo=64) at bits 16
    # and 32, the 128B swizzle at bit 62
    assert int(a[0]) >> 16 == (1 | 64 << 16 | 1 << 46)


def test_non_tensor_bulk_copies_are_helpers_with_a_cache_policy() -> None:
    @T.prim_func
    def k(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"),
          P: T.Buffer((1,), "uint64")):
        T.device_entry()
        tx = T.thread_id([32])
        if tx == 0:
            S = T.alloc_shared([128], "float32")
            bar = T.alloc_shared([1], "uint64")
            T.ptx.cp_async_bulk_g2s_cta(S.ptr_to([0]), A.data, T.uint32(512), bar.ptr_to([0]),
                                        cache_policy=P[0])
            T.ptx.cp_async_bulk_g2s_cluster(S.ptr_to([0]), A.data, T.uint32(512),
                                            bar.ptr_to([0]), multicast=True, cta_mask=1)
            T.ptx.cp_async_bulk_s2g(B.data, S.ptr_to([0]), T.uint32(512), cache_policy=P[0])

    ex = tvm.compile(k, target=H100)
    src = ex.inspect_source()
    for text in (
        "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint",
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster ",
        "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint",
        "unsigned long long cache_policy",
        "tvm_builtin_ptx_cp_async_bulk_g2s_cta_cache_hint(",
        "tvm_builtin_ptx_cp_async_bulk_g2s_cluster_multicast(",
        "tvm_builtin_ptx_cp_async_bulk_s2g_cache_hint(",
    ):
        assert text in src, text
    assert ex.cubin[:4] == b"\x7fELF"
