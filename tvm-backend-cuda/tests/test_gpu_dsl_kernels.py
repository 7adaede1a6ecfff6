"""The issue's GPU kernels written in our DSL (T.ptx / T.cuda intrinsics, no hand-written CUDA).

``cuda_kernels.py`` already has, in the DSL, a vector add, warp-shuffle reductions
(``warp_allreduce_shfl``, ``Tx.cta.sum``), an atomic total and a cp.async copy; its ldmatrix +
mma, bulk copy and wgmma kernels are hand-written CUDA through ``T.cuda.func_call``. This file
writes those three in the DSL, plus a row sum that uses ``__shfl_down_sync`` and
``T.cuda.atomic_add`` together across CTAs:

- ``shfl_down_atomic_row_sum``: per-thread partial sums, a ``__shfl_down_sync`` tree per warp,
  one ``atomic_add`` per warp into the row's output (4 warps x 4 CTAs per row).
- ``ldmatrix_mma_m16n8k16``: one warp; ``ldmatrix.x4`` / ``.x2`` from shared memory, then
  ``mma.sync.m16n8k16.row.col.f32.f16.f16.f32``.
- ``tma_tensor_copy_mbarrier``: ``cp.async.bulk.tensor.2d`` (a 32x32 f32 box per CTA)
  completing on an mbarrier (init, fence.mbarrier_init, arrive.expect_tx, try_wait). The tensor
  map (``cuTensorMapEncodeTiled``) lives in **global memory**: it is 128 bytes copied into a
  ``int64[16]`` buffer parameter, since the executable has no by-value ``__grid_constant__
  CUtensorMap`` parameter. PTX accepts a tensor map in global memory.
- ``bulk_copy_mbarrier``: the non-tensor ``cp.async.bulk`` global -> shared on an mbarrier.
- ``wgmma_m64n8k16``: one warpgroup, A (64x32) and B (8x32, K-major) in shared memory in the
  no-swizzle core-matrix layout, descriptors from ``T.ptx.wgmma.encode_matrix_descriptor``, two
  ``wgmma.mma_async`` (k16 each; the first with scale-d = 0 over garbage accumulators), fence /
  commit_group / wait_group.

Each kernel compiles with NVRTC for sm_80 / sm_90a / sm_100a where its instructions exist (CI,
no GPU), and runs on the GPU against numpy (marker ``gpu``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm_backend_cuda.plugin import register_backend

register_backend()

ARCHS = ("sm_80", "sm_90a", "sm_100a")


# -- kernels ---------------------------------------------------------------------------------------


@no_type_check
def shfl_down_atomic_row_sum(m: int = 64, n: int = 2048, split: int = 4,
                             threads: int = 128) -> Any:
    """S[r] = sum(A[r, :]): CTA (r, c) sums columns [c * n/split, (c+1) * n/split)."""
    from tvm.script import tirx as T

    chunk = n // split
    per = chunk // threads

    @T.prim_func
    def row_sum(A: T.Buffer((m, n), "float32"), S: T.Buffer((m,), "float32")):
        T.device_entry()
        bx, by = T.cta_id([split, m])
        tx = T.thread_id([threads])
        v = T.alloc_buffer((1,), "float32", scope="local")
        v[0] = T.float32(0)
        for i in T.serial(per):
            v[0] = v[0] + A[by, bx * chunk + i * threads + tx]
        v[0] = v[0] + T.cuda.__shfl_down_sync(T.uint32(0xFFFFFFFF), v[0], 16, 32)
        v[0] = v[0] + T.cuda.__shfl_down_sync(T.uint32(0xFFFFFFFF), v[0], 8, 32)
        v[0] = v[0] + T.cuda.__shfl_down_sync(T.uint32(0xFFFFFFFF), v[0], 4, 32)
        v[0] = v[0] + T.cuda.__shfl_down_sync(T.uint32(0xFFFFFFFF), v[0], 2, 32)
        v[0] = v[0] + T.cuda.__shfl_down_sync(T.uint32(0xFFFFFFFF), v[0], 1, 32)
        if tx % 32 == 0:
            T.cuda.atomic_add(S[by], v[0])

    return row_sum


@no_type_check
def ldmatrix_mma() -> Any:
    """C (16x8, f32) = A (16x16, f16) @ Bt (8x16, f16)^T with one mma.sync.m16n8k16."""
    from tvm.script import tirx as T

    @T.prim_func
    def mma_tile(A: T.Buffer((16, 16), "float16"), Bt: T.Buffer((8, 16), "float16"),
                 C: T.Buffer((16, 8), "float32")):
        T.device_entry()
        tx = T.thread_id([32])
        As = T.alloc_buffer((16, 16), "float16", scope="shared")
        Bs = T.alloc_buffer((8, 16), "float16", scope="shared")
        ra = T.alloc_buffer((4,), "uint32", scope="local")
        rb = T.alloc_buffer((2,), "uint32", scope="local")
        acc = T.alloc_buffer((4,), "float32", scope="local")
        for i in T.serial(8):
            As[(i * 32 + tx) // 16, (i * 32 + tx) % 16] = A[(i * 32 + tx) // 16, (i * 32 + tx) % 16]
        for i in T.serial(4):
            Bs[(i * 32 + tx) // 16, (i * 32 + tx) % 16] = Bt[(i * 32 + tx) // 16,
                                                             (i * 32 + tx) % 16]
        for i in T.unroll(4):
            acc[i] = T.float32(0)
        T.cuda.cta_sync()
        # x4: lanes 0-15 address rows 0-15 at k 0, lanes 16-31 rows 0-15 at k 8 -> a0..a3
        T.ptx.ldmatrix(False, 4, ".b16", As[tx % 16, (tx // 16) * 8], ra[0], ra[1], ra[2], ra[3])
        # x2: lanes 0-7 address n rows at k 0, lanes 8-15 at k 8 -> b0, b1 (B is "col")
        T.ptx.ldmatrix(False, 2, ".b16", Bs[tx % 8, ((tx // 8) % 2) * 8], rb[0], rb[1])
        T.ptx.mma("m16n8k16", "row", "col", "fp32", "fp16", "fp16", "fp32",
                  [acc[0], acc[1], acc[2], acc[3]], [ra[0], ra[1], ra[2], ra[3]],
                  [rb[0], rb[1]], [acc[0], acc[1], acc[2], acc[3]])
        C[tx // 4, (tx % 4) * 2] = acc[0]
        C[tx // 4, (tx % 4) * 2 + 1] = acc[1]
        C[tx // 4 + 8, (tx % 4) * 2] = acc[2]
        C[tx // 4 + 8, (tx % 4) * 2 + 1] = acc[3]

    return mma_tile


TMA_ROWS, TMA_COLS, TMA_BOX = 128, 256, 32


@no_type_check
def tma_tensor_copy(rows: int = TMA_ROWS, cols: int = TMA_COLS, box: int = TMA_BOX) -> Any:
    """B = A + 1; each CTA fetches its box x box tile of A with one 2-d TMA load."""
    from tvm.script import tirx as T

    nbytes = box * box * 4

    @T.prim_func
    def tma_copy(A: T.Buffer((rows, cols), "float32"), TM: T.Buffer((16,), "int64"),
                 B: T.Buffer((rows, cols), "float32")):
        T.device_entry()
        bx, by = T.cta_id([cols // box, rows // box])
        tx = T.thread_id([128])
        # shared.dyn: the tile at offset 0 of dynamic shared memory (TMA wants 128-byte alignment)
        tile = T.alloc_buffer((box, box), "float32", scope="shared.dyn", align=128)
        bar = T.alloc_buffer((1,), "uint64", scope="shared.dyn", align=8)
        if tx == 0:
            T.ptx.mbarrier.init(bar[0], 1)
            T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()
        if tx == 0:
            T.ptx.mbarrier.arrive.expect_tx(bar[0], nbytes)
            # coordinates innermost first: (column, row)
            T.ptx.cp_async.bulk.tensor.g2c(2, tile[0, 0], bar[0], TM.data, 0, 1, "",
                                           bx * box, by * box)
        T.ptx.mbarrier.try_wait(bar[0], 0)
        for i in T.serial(box * box // 128):
            B[by * box + (i * 128 + tx) // box, bx * box + (i * 128 + tx) % box] = \
                tile[(i * 128 + tx) // box, (i * 128 + tx) % box] + T.float32(1)

    return tma_copy


@no_type_check
def bulk_copy(blocks: int = 64, elems: int = 1024) -> Any:
    """B = 2 * A; each CTA fetches 4 KB of A with one non-tensor cp.async.bulk."""
    from tvm.script import tirx as T

    n = blocks * elems

    @T.prim_func
    def bulk(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([blocks])
        tx = T.thread_id([128])
        buf = T.alloc_buffer((elems,), "float32", scope="shared.dyn", align=128)
        bar = T.alloc_buffer((1,), "uint64", scope="shared.dyn", align=8)
        if tx == 0:
            T.ptx.mbarrier.init(bar[0], 1)
            T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()
        if tx == 0:
            T.ptx.mbarrier.arrive.expect_tx(bar[0], elems * 4)
            T.ptx.cp_async.bulk("float32", buf.data, 0, A.data, bx * elems, elems * 4, bar[0])
        T.ptx.mbarrier.try_wait(bar[0], 0)
        for i in T.serial(elems // 128):
            B[bx * elems + i * 128 + tx] = buf[i * 128 + tx] * T.float32(2)

    return bulk


@no_type_check
def wgmma_tile(k: int = 32) -> Any:
    """D (64x8, f32) = A (64xk, f16) @ Bt (8xk, f16)^T: k/16 wgmma.m64n8k16, operands in shared.

    No-swizzle K-major layout: core matrices of 8 rows x 8 halves (128 contiguous bytes);
    A's core matrix (m/8, k/8) at ((m/8) * (k/8 count) + k/8) * 64 halves, so the leading byte
    offset (next core matrix along K) is 128 and the stride byte offset (next 8 rows) is
    (k/8) * 128. The k-th 16-wide slice starts 2 core matrices (256 bytes) further.
    """
    from tvm.script import tirx as T

    kc = k // 8  # core matrices along K

    @T.prim_func
    def wgmma_m64n8(A: T.Buffer((64, k), "float16"), Bt: T.Buffer((8, k), "float16"),
                    D: T.Buffer((64, 8), "float32")):
        T.device_entry()
        tx = T.thread_id([128])
        As = T.alloc_buffer((64 * k,), "float16", scope="shared.dyn", align=128)
        Bs = T.alloc_buffer((8 * k,), "float16", scope="shared.dyn", align=128)
        desc = T.alloc_buffer((2,), "uint64", scope="local")
        acc = T.alloc_buffer((4,), "float32", scope="local")
        for i in T.serial(64 * k // 128):
            As[(((i * 128 + tx) // k) // 8 * kc + ((i * 128 + tx) % k) // 8) * 64
               + ((i * 128 + tx) // k) % 8 * 8 + (i * 128 + tx) % 8] = \
                A[(i * 128 + tx) // k, (i * 128 + tx) % k]
        for i in T.serial(8 * k // 128):
            Bs[((i * 128 + tx) % k) // 8 * 64 + ((i * 128 + tx) // k) * 8 + (i * 128 + tx) % 8] = \
                Bt[(i * 128 + tx) // k, (i * 128 + tx) % k]
        for i in T.unroll(4):
            acc[i] = T.float32(12345)  # garbage: the first wgmma has scale-d = 0
        # generic-proxy stores read by the async proxy: fence, then the barrier
        T.ptx.fence.proxy_async("shared::cta")
        T.cuda.cta_sync()
        T.ptx.wgmma.fence()
        for kk in T.unroll(k // 16):
            T.ptx.wgmma.encode_matrix_descriptor(desc[0], As[kk * 128], 8, kc * 8, 0)
            T.ptx.wgmma.encode_matrix_descriptor(desc[1], Bs[kk * 128], 8, kc * 8, 0)
            T.ptx.wgmma.mma_async.ss(desc[0], desc[1], acc[0], acc[1], acc[2], acc[3],
                                     M=64, N=8, K=16, in_dtype="f16", out_dtype="f32",
                                     transA=False, transB=False, scaleA=1.0, scaleB=1.0,
                                     scaleD=kk)
        T.ptx.wgmma.commit_group()
        T.ptx.wgmma.wait_group(0)
        for i in T.unroll(4):
            # keeps the compiler from reading the accumulators before the wait
            T.ptx.wgmma.noop_barrier(acc[i])
        D[tx // 32 * 16 + tx % 32 // 4, tx % 4 * 2] = acc[0]
        D[tx // 32 * 16 + tx % 32 // 4, tx % 4 * 2 + 1] = acc[1]
        D[tx // 32 * 16 + tx % 32 // 4 + 8, tx % 4 * 2] = acc[2]
        D[tx // 32 * 16 + tx % 32 // 4 + 8, tx % 4 * 2 + 1] = acc[3]

    return wgmma_m64n8


# -- host-side helpers for the GPU runs ------------------------------------------------------------


def tensor_map_2d(t: Any, box: int) -> Any:
    """A 2-d tiled TMA descriptor (no swizzle) of the contiguous float32 tensor ``t``, as 16
    int64 words beside it (a global-memory tensor map; the allocator aligns it to 64 bytes):
    ``cuTensorMapEncodeTiled``'s on the GPU, the CUDA emulator's record for a CPU tensor."""
    import torch

    from tvm_backend_cuda.runtime import encode_tiled_tensor_map

    tmap = encode_tiled_tensor_map(t.data_ptr(), tuple(t.shape), tuple(t.stride()), "float32",
                                   (box, box), 0, 0, emulated=t.device.type == "cpu")
    data = bytes(tmap) if isinstance(tmap, bytes) else \
        np.array([int(w) for w in tmap.opaque], dtype=np.uint64).tobytes()
    words = np.frombuffer(data, dtype=np.int64).copy()
    out = torch.from_numpy(words).to(t.device)
    assert out.data_ptr() % 64 == 0 or t.device.type == "cpu"  # the emulator stages it aligned
    return out


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


_DEVICE = {"device": "cuda"}  # where the run_* helpers put arrays: "cpu" under the CUDA emulator


def _cuda(a: np.ndarray) -> Any:
    import torch

    return torch.from_numpy(np.ascontiguousarray(a)).to(_DEVICE["device"])


def _host(t: Any) -> np.ndarray:
    import torch

    if _DEVICE["device"] == "cuda":
        torch.cuda.synchronize()
    return t.float().cpu().numpy()


def run_row_sum(ex: Any) -> None:
    a = _rng().standard_normal((64, 2048)).astype("float32")
    s = _cuda(np.zeros(64, "float32"))
    ex(_cuda(a), s)
    np.testing.assert_allclose(_host(s), a.astype("float64").sum(1), rtol=1e-4, atol=1e-3)


def run_mma(ex: Any) -> None:
    a = _rng().standard_normal((16, 16)).astype("float16")
    bt = _rng().standard_normal((8, 16)).astype("float16")
    c = _cuda(np.zeros((16, 8), "float32"))
    ex(_cuda(a), _cuda(bt), c)
    want = a.astype("float32") @ bt.astype("float32").T
    np.testing.assert_allclose(_host(c), want, rtol=1e-3, atol=1e-2)


def run_tma(ex: Any) -> None:
    a_host = _rng().standard_normal((TMA_ROWS, TMA_COLS)).astype("float32")
    a = _cuda(a_host)
    b = _cuda(np.zeros_like(a_host))
    ex(a, tensor_map_2d(a, TMA_BOX), b)
    np.testing.assert_array_equal(_host(b), a_host + np.float32(1))


def run_bulk(ex: Any) -> None:
    a = _rng().standard_normal(64 * 1024).astype("float32")
    b = _cuda(np.zeros_like(a))
    ex(_cuda(a), b)
    np.testing.assert_array_equal(_host(b), a * np.float32(2))


def run_wgmma(ex: Any) -> None:
    a = _rng().standard_normal((64, 32)).astype("float16")
    bt = _rng().standard_normal((8, 32)).astype("float16")
    d = _cuda(np.zeros((64, 8), "float32"))
    ex(_cuda(a), _cuda(bt), d)
    want = a.astype("float32") @ bt.astype("float32").T
    np.testing.assert_allclose(_host(d), want, rtol=1e-3, atol=1e-2)


# -- the cases -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DslKernel:
    name: str
    build: Callable[[], Any]
    run: Callable[[Any], None]
    archs: tuple[str, ...]  # the NVRTC archs it is built for
    why: str  # why the other archs are skipped
    ptx: tuple[str, ...]  # instructions the generated source must contain


ALL = ARCHS
SM90 = ("sm_90a", "sm_100a")

CASES = [
    DslKernel("shfl_down_atomic_row_sum", shfl_down_atomic_row_sum, run_row_sum, ALL, "",
              ("__shfl_down_sync(4294967295U, v[0], 16, 32)", "atomicAdd(")),
    DslKernel("ldmatrix_mma_m16n8k16", ldmatrix_mma, run_mma, ALL, "",
              ("ldmatrix.sync.aligned.m8n8.x4.shared.b16",
               "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
               "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")),
    DslKernel("tma_tensor_copy_mbarrier", tma_tensor_copy, run_tma, SM90,
              "cp.async.bulk.tensor, mbarrier expect_tx and fence.mbarrier_init need sm_90",
              ("mbarrier.init.shared::cta.b64", "fence.mbarrier_init.release.cluster",
               "mbarrier.arrive.expect_tx.shared::cta.b64",
               "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
               "mbarrier.try_wait.parity.shared::cta.b64")),
    DslKernel("bulk_copy_mbarrier", bulk_copy, run_bulk, SM90,
              "cp.async.bulk and mbarrier expect_tx need sm_90",
              ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
               "mbarrier.arrive.expect_tx.shared::cta.b64")),
    DslKernel("wgmma_m64n8k16", wgmma_tile, run_wgmma, ("sm_90a",),
              "wgmma exists on sm_90a only (sm_100a dropped it)",
              ("wgmma.fence.sync.aligned", "fence.proxy.async.shared::cta",
               "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16",
               "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 0",
               "tvm_wgmma_desc(")),
]
IDS = [c.name for c in CASES]


# -- CI: generate and compile with NVRTC -----------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_dsl_kernel_compiles_with_nvrtc(case: DslKernel, arch: str) -> None:
    if arch not in case.archs:
        pytest.skip(f"{case.name} is not built for {arch}: {case.why}")
    func = case.build()
    assert "func_call" not in func.script()  # written with the intrinsics, not inline CUDA
    ex = tvm.compile(func, target={"kind": "cuda", "arch": arch})
    assert ex.arch == arch and ex.cubin[:4] == b"\x7fELF"
    src = ex.inspect_source()
    for text in case.ptx:
        assert text in src, (text, src)


@pytest.mark.parametrize("name, arch, needs", [
    ("wgmma_m64n8k16", "sm_100a", "T.ptx.wgmma.fence needs sm_90a (no other architecture has it)"),
    ("wgmma_m64n8k16", "sm_80", "T.ptx.fence.proxy_async needs sm_90 or newer"),
    ("tma_tensor_copy_mbarrier", "sm_80", "T.ptx.fence.mbarrier_init needs sm_90 or newer"),
])
def test_kernel_for_an_arch_without_the_instruction_fails_naming_it(
        name: str, arch: str, needs: str) -> None:
    # the first intrinsic the arch lacks (its min_arch / max_arch, a requirement checked before
    # its rule), at its script line, before NVRTC runs
    from tvm.error import RequirementError

    case = next(c for c in CASES if c.name == name)
    with pytest.raises(RequirementError) as info:
        tvm.compile(case.build(), target={"kind": "cuda", "arch": arch})
    first = str(info.value).splitlines()[0]
    assert f"error: {needs}: the target's arch is {arch};" in first
    assert first.startswith(f"{__file__}:")


def test_wgmma_descriptor_fields() -> None:
    """The no-swizzle descriptors: LBO 128 B (next core matrix along K), SBO (K/8) * 128 B, in
    the 16-byte units the encode takes (8 and 32)."""
    src = tvm.compile(wgmma_tile(), target={"kind": "cuda", "arch": "sm_90a"}).inspect_source()
    assert src.count("(unsigned)(8), (unsigned)(32), (int)(0))") == 4  # A and B, 2 k-steps


# -- GPU: run and compare with numpy ---------------------------------------------------------------


def _device_arch() -> str:
    import torch

    major, minor = torch.cuda.get_device_capability()
    num = major * 10 + minor
    return f"sm_{num}a" if num >= 90 else f"sm_{num}"


#: DSL kernels the CUDA emulator does not run yet, and why
NOT_EMULATED: dict[str, str] = {}
#: DSL kernels that build for the emulator but cannot run there, and why
NOT_RUN_EMULATED: dict[str, str] = {}


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_dsl_kernel_on_gpu(case: DslKernel, device: str,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    monkeypatch.setitem(_DEVICE, "device", device)
    if device == "cuda":
        arch = _device_arch()
        if arch not in case.archs:
            pytest.skip(f"{case.name} needs another GPU than {arch}: {case.why}")
        ex = tvm.compile(case.build(), target="cuda")
        assert ex.arch == arch
    else:
        if case.name in NOT_EMULATED:
            pytest.skip(f"not emulated yet: {NOT_EMULATED[case.name]}")
        if case.name in NOT_RUN_EMULATED:
            pytest.skip(f"not emulated: {NOT_RUN_EMULATED[case.name]}")
        ex = tvm.compile(case.build(), target="cuda")
    case.run(ex)


def test_not_emulated_dsl_kernels_fail_naming_what_is_missing(monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """The kernels listed in NOT_EMULATED fail to build for the emulator with a clear error
    (not a C++ compile error), so the list stays honest."""
    from tvm.error import NotModelledError

    monkeypatch.setenv("TVM_CUDA_EMULATE", "1")
    for case in CASES:
        if case.name in NOT_EMULATED:
            with pytest.raises(NotModelledError, match="not model|no emulation body"):
                tvm.compile(case.build(), target="cuda", arch=case.archs[-1])
