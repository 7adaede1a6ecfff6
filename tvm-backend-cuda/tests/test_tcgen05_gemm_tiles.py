"""``Tx.gemm_async`` on tcgen05 (sm_100a) under the CUDA emulator, for the operand forms of the
seed's suite: staged ``[stages, rows, K]`` tiles loaded by TMA (a stage dim the shared layout
strides apart from the box goes one TMA copy per stage), a B stored ``[K, N]`` through the
seed's ``transB`` keyword, big ``shared`` tiles (past 48 KB they are placed in dynamic shared
memory), an M = 64 MMA into a datapath-F tile, the ``ex["main"]`` name of
``IRModule({"main": f})``, and the checks of the scale-factor operands.
"""

from __future__ import annotations

from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.error import DispatchError
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout, tid_in_wg
from tvm_backend_cuda.dispatch.tma_utils import mma_shared_layout
from tvm_backend_cuda.layout import tmem_datapath_layout
from tvm_backend_cuda.plugin import register_backend

register_backend()


@pytest.fixture(autouse=True)
def _b200(monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulated device is a B200 (sm_100a) for these kernels."""
    import tvm_backend_cuda.emulator as emulator

    monkeypatch.setattr(emulator, "DEVICE_ARCH", "sm_100a")


def _emulated(mod: Any) -> Any:
    return tvm.compile(mod, target="cuda", arch="sm_100a", emulate=True)


@no_type_check
def staged_kernel(a_shape: tuple[int, ...], b_shape: tuple[int, ...], a_stage: int,
                  b_stage: int, n: int, trans_b: bool) -> Any:
    """D[128, n] = A[a_stage] @ op(B[b_stage]) with A [stages, 128, K] and B [stages, n, K]
    (``trans_b``: [stages, K, n]), both bfloat16 in 128B-swizzled ``shared`` tiles filled by
    one TMA load each; D in tensor memory, read back by the warpgroup."""
    dt = "bfloat16"
    la = mma_shared_layout(dt, "128B", a_shape)
    lb = mma_shared_layout(dt, "128B", b_shape)
    nbytes = 2 * (int(np.prod(a_shape)) + int(np.prod(b_shape)))
    b_region = (slice(b_stage, b_stage + 1), slice(None), slice(None))

    @T.prim_func
    def staged(A: T.Buffer(a_shape, dt), B: T.Buffer(b_shape, dt), D: T.Buffer((128, n), "float32")):
        T.device_entry()
        warp_id = T.warp_id([4])
        wg_id = T.warpgroup_id([1])
        tid = T.thread_id_in_wg([128])
        As = T.alloc_buffer(a_shape, dt, scope="shared", layout=la, align=1024)
        Bs = T.alloc_buffer(b_shape, dt, scope="shared", layout=lb, align=1024)
        taddr = T.alloc_shared([1], "uint32")
        load_bar = T.alloc_shared([1], "uint64")
        mma_bar = T.alloc_shared([1], "uint64")
        if tid == 0:
            T.ptx.mbarrier.init(load_bar.ptr_to([0]), 1)
            T.ptx.mbarrier.init(mma_bar.ptr_to([0]), 1)
        T.ptx.fence.proxy_async("shared::cta")
        T.cuda.cta_sync()
        if warp_id == 0:
            T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=max(n, 32), cta_group=1)
        T.cuda.cta_sync()
        acc = T.decl_buffer((128, n), "float32", scope="tmem", allocated_addr=taddr[0],
                            layout=tmem_datapath_layout("D", 128, n))
        if tid == 0:
            Tx.copy_async(As[:, :, :], A[:, :, :], dispatch="tma", mbar=load_bar.ptr_to([0]))
            Tx.copy_async(Bs[:, :, :], B[:, :, :], dispatch="tma", mbar=load_bar.ptr_to([0]))
            T.ptx.mbarrier.arrive.expect_tx(load_bar.ptr_to([0]), nbytes)
        T.ptx.mbarrier.try_wait(load_bar.ptr_to([0]), 0)
        T.cuda.cta_sync()
        if tid == 0:
            Tx.gemm_async(acc[0:128, 0:n], As[a_stage:a_stage + 1, :, :], Bs[b_region],
                          transB=trans_b, dispatch="tcgen05")
            T.ptx.tcgen05.commit(mma_bar.ptr_to([0]), cta_group=1)
        T.ptx.mbarrier.try_wait(mma_bar.ptr_to([0]), 0)
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence.after_thread_sync()
        regs = T.alloc_local(n, dtype="float32")
        view = regs.view(128, n, layout=TileLayout(S[(128, n): (1 @ tid_in_wg, 1)]))
        if wg_id == 0:
            Tx.wg.copy_async(view[:, :], acc[0:128, 0:n])
            T.ptx.tcgen05.wait.ld()
        T.cuda.cta_sync()
        Tx.copy(D[tid, 0:n], regs[:])
        if warp_id == 0:
            T.ptx.tcgen05.relinquish_alloc_permit(cta_group=1)
            T.ptx.tcgen05.dealloc(taddr[0], n_cols=max(n, 32), cta_group=1)

    return staged


def _bf16(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    import ml_dtypes

    return rng.standard_normal(shape).astype(ml_dtypes.bfloat16)


def test_staged_tiles_past_48_kb_with_b_stored_k_major_by_n() -> None:
    """A [2, 128, 128] (stage 1; K spans two swizzle atoms) and B [3, 128, 64] = [stages, K, N]
    (stage 2, ``transB=True``): 160 KB of ``shared`` tiles; D = A[1] @ B[2]."""
    a_shape, b_shape = (2, 128, 128), (3, 128, 64)
    func = staged_kernel(a_shape, b_shape, 1, 2, 64, trans_b=True)
    ex = _emulated(tvm.IRModule({"main": func}))
    src = ex.inspect_source()
    assert "tvm_dyn_smem" in src and "__shared__ __nv_bfloat16 As[" not in src
    # A's stages are 2 atom columns apart, so one box per stage and 64-column block (2 x 2);
    # B's [3, 128, 64] lands densely in one box
    assert src.count("cp.async.bulk.tensor.3d") == 5
    rng = np.random.default_rng(7)
    a, b = _bf16(a_shape, rng), _bf16(b_shape, rng)
    d = np.zeros((128, 64), "float32")
    assert "main" in ex
    ex["main"](a, b, d)
    want = a[1].astype("float32") @ b[2].astype("float32")
    np.testing.assert_allclose(d, want, rtol=2e-3, atol=2e-3)


def test_staged_b_n_by_k() -> None:
    """B [2, 32, 64] = [stages, N, K] without transposition, A stage 0 of one: D = A @ B[1]^T."""
    a_shape, b_shape = (1, 128, 64), (2, 32, 64)
    ex = _emulated(staged_kernel(a_shape, b_shape, 0, 1, 32, trans_b=False))
    rng = np.random.default_rng(3)
    a, b = _bf16(a_shape, rng), _bf16(b_shape, rng)
    d = np.zeros((128, 32), "float32")
    ex(a, b, d)
    np.testing.assert_allclose(d, a[0].astype("float32") @ b[1].astype("float32").T,
                               rtol=2e-3, atol=2e-3)


@no_type_check
def m64_kernel(n: int) -> Any:
    """D[64, n] = A[64, 64] @ B[n, 64]^T (float16) by one M = 64 MMA into a datapath-F tile:
    row 16w + i sits in lane 32w + i, read back by lanes 0-15 of each warp."""
    la = mma_shared_layout("float16", "128B", (64, 64))
    lb = mma_shared_layout("float16", "128B", (n, 64))

    @T.prim_func
    def m64(A: T.Buffer((64, 64), "float16"), B: T.Buffer((n, 64), "float16"),
            D: T.Buffer((64, n), "float32")):
        T.device_entry()
        tx = T.thread_id([128])
        As = T.alloc_buffer((64, 64), "float16", scope="shared", layout=la, align=1024)
        Bs = T.alloc_buffer((n, 64), "float16", scope="shared", layout=lb, align=1024)
        taddr = T.alloc_shared([1], "uint32")
        bar = T.alloc_shared([1], "uint64")
        for i in T.serial(32):
            As[i * 2 + tx // 64, tx % 64] = A[i * 2 + tx // 64, tx % 64]
        for i in T.serial(n // 2):
            Bs[i * 2 + tx // 64, tx % 64] = B[i * 2 + tx // 64, tx % 64]
        if tx == 0:
            T.ptx.mbarrier.init(bar.ptr_to([0]), 1)
        T.ptx.fence.proxy_async("shared::cta")
        if tx // 32 == 0:
            T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=32, cta_group=1)
        T.cuda.cta_sync()
        acc = T.decl_buffer((64, n), "float32", scope="tmem", allocated_addr=taddr[0],
                            layout=tmem_datapath_layout("F", 64, n))
        if tx == 0:
            Tx.gemm_async(acc[0:64, 0:n], As[:, :], Bs[:, :], dispatch="tcgen05")
            T.ptx.tcgen05.commit(bar.ptr_to([0]), cta_group=1)
        T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0)
        T.ptx.tcgen05.fence.after_thread_sync()
        regs = T.alloc_local(n, dtype="float32")
        T.ptx.tcgen05.ld(taddr[0], tx // 32 * 32, 0, "32x32b", n, False,
                         *[regs[i] for i in range(n)])
        T.ptx.tcgen05.wait.ld()
        if tx % 32 < 16:
            for c in T.serial(n):
                D[tx // 32 * 16 + tx % 32, c] = regs[c]
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx.tcgen05.dealloc(taddr[0], n_cols=32, cta_group=1)

    return m64


def test_m64_mma_into_a_datapath_f_tile() -> None:
    ex = _emulated(m64_kernel(32))
    src = ex.inspect_source()
    assert src.count("tcgen05.mma.cta_group::1.kind::f16") == 4  # K 64 in steps of 16
    rng = np.random.default_rng(11)
    a = rng.standard_normal((64, 64)).astype("float16")
    b = rng.standard_normal((32, 64)).astype("float16")
    d = np.zeros((64, 32), "float32")
    ex(a, b, d)
    np.testing.assert_allclose(d, a.astype("float32") @ b.astype("float32").T, rtol=1e-3,
                               atol=1e-3)


# -- the call's checks ------------------------------------------------------------------------
def _shared(shape: tuple[int, ...], dtype: str = "float16") -> Any:
    return tvm.tirx.decl_buffer(shape, dtype, scope="shared")


def test_scale_factors_go_together() -> None:
    d, a, b = _shared((64, 64), "float32"), _shared((64, 32)), _shared((64, 32))
    sf = _shared((64, 1), "uint8")
    with pytest.raises(ValueError, match=r"Tx.gemm_async: SFA and SFB must both be provided or "
                                         r"both be None \(only SFB is given\)"):
        Tx.gemm_async(d[:, :], a[:, :], b[:, :], SFB=sf[:, :])
    call = Tx.gemm_async(d[:, :], a[:, :], b[:, :], SFA=sf[:, :], SFB=sf[:, :])
    assert [str(x.buffer.name) for x in call.args[6:8]] == [sf.name, sf.name]


def test_trans_keywords_are_the_transpose_parameters() -> None:
    d, a, b = _shared((64, 64), "float32"), _shared((32, 64)), _shared((64, 32))
    call = Tx.gemm_async(d[:, :], a[:, :], b[:, :], transA=True, transB=False)
    assert [bool(x) for x in call.args[3:5]] == [True, False] and call.config in (None, {})
    with pytest.raises(TypeError, match="got 'transpose_A' twice"):
        Tx.gemm_async(d[:, :], a[:, :], b[:, :], transA=True, transpose_A=True)


def test_seed_builder_module_is_the_tile_facade() -> None:
    from tvm.tirx.script.builder.tirx import gemm_async

    assert gemm_async is Tx.gemm_async


@no_type_check
def test_variants_without_block_scaling_decline_scale_factors() -> None:
    @T.prim_func
    def scaled(A: T.Buffer((64, 32), "float16"), B: T.Buffer((64, 32), "float16"),
               D: T.Buffer((64, 64), "float32"), SA: T.Buffer((64, 1), "uint8"),
               SB: T.Buffer((64, 1), "uint8")):
        T.device_entry()
        tx = T.thread_id([1])
        Tx.gemm_async(D[:, :], A[:, :], B[:, :], SFA=SA[:, :], SFB=SB[:, :])

    with pytest.raises(DispatchError, match=r"the call is block-scaled \(SFA/SFB\), which this "
                                            r"variant does not do"):
        tvm.compile(scaled, target="c")


# -- block-scaled fp8 -------------------------------------------------------------------------
@no_type_check
def block_scaled_kernel(sf_k: int) -> Any:
    """D[128, 32] = sum over the 4 K blocks of 32 of (A_kb * 2^(ea - 127)) @ (B_kb *
    2^(eb - 127))^T, float8_e4m3fn A [128, 128] and B [32, 128], ue8m0 exponents ``ea`` per
    (row of A, block) and ``eb`` per (row of B, block) in tensor memory as tcgen05.cp .warpx4
    leaves them (written here by tcgen05.st from every warp): SA[l, i] holds the four block
    bytes of row 32 i + l of A, SB[l] those of row l of B. ``sf_k`` 1: one factor column for
    every K step (byte 0)."""
    from tvm_backend_cuda.dispatch.sf_layout import sf_tmem_layout

    dt = "float8_e4m3fn"
    la = mma_shared_layout(dt, "128B", (128, 128))
    lb = mma_shared_layout(dt, "128B", (32, 128))

    @T.prim_func
    def scaled(A: T.Buffer((128, 128), dt), B: T.Buffer((32, 128), dt),
               SA: T.Buffer((32, 4), "uint32"), SB: T.Buffer((32,), "uint32"),
               D: T.Buffer((128, 32), "float32")):
        T.device_entry()
        tx = T.thread_id([128])
        As = T.alloc_buffer((128, 128), dt, scope="shared", layout=la, align=1024)
        Bs = T.alloc_buffer((32, 128), dt, scope="shared", layout=lb, align=1024)
        taddr = T.alloc_shared([1], "uint32")
        bar = T.alloc_shared([1], "uint64")
        for i in T.serial(128):
            As[i, tx] = A[i, tx]
        for i in T.serial(32):
            Bs[i, tx] = B[i, tx]
        if tx == 0:
            T.ptx.mbarrier.init(bar.ptr_to([0]), 1)
        T.ptx.fence.proxy_async("shared::cta")
        if tx // 32 == 0:
            T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=64, cta_group=1)
        T.cuda.cta_sync()
        words = T.alloc_local(4, dtype="uint32")
        for i in T.unroll(4):
            words[i] = SA[tx % 32, i]
        T.ptx.tcgen05.st(taddr[0], words[0], words[1], words[2], words[3], shape="32x32b",
                         num=4, row=tx // 32 * 32, col=32)
        words[0] = SB[tx % 32]
        T.ptx.tcgen05.st(taddr[0], words[0], shape="32x32b", num=1, row=tx // 32 * 32, col=36)
        T.ptx.tcgen05.wait.st()
        T.ptx.tcgen05.fence.before_thread_sync()
        T.cuda.cta_sync()
        acc = T.decl_buffer((128, 32), "float32", scope="tmem", allocated_addr=taddr[0],
                            layout=tmem_datapath_layout("D", 128, 32))
        sfa = T.decl_buffer((128, 4), "float8_e8m0fnu", scope="tmem",
                            allocated_addr=taddr[0] + 32, layout=sf_tmem_layout(128, 4))
        sfb = T.decl_buffer((32, 4), "float8_e8m0fnu", scope="tmem",
                            allocated_addr=taddr[0] + 36, layout=sf_tmem_layout(32, 4))
        if tx == 0:
            T.ptx.tcgen05.fence.after_thread_sync()
            Tx.gemm_async(acc[0:128, 0:32], As[:, :], Bs[:, :], SFA=sfa[0:128, 0:sf_k],
                          SFB=sfb[0:32, 0:sf_k], dispatch="tcgen05")
            T.ptx.tcgen05.commit(bar.ptr_to([0]), cta_group=1)
        T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0)
        T.ptx.tcgen05.fence.after_thread_sync()
        regs = T.alloc_local(32, dtype="float32")
        T.ptx.tcgen05.ld(taddr[0], tx // 32 * 32, 0, "32x32b", 32, False,
                         *[regs[i] for i in range(32)])
        T.ptx.tcgen05.wait.ld()
        for c in T.serial(32):
            D[tx, c] = regs[c]
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx.tcgen05.dealloc(taddr[0], n_cols=64, cta_group=1)

    return scaled


def _pack_bytes(exps: np.ndarray) -> np.ndarray:
    """[rows, 4] uint8 -> [rows] uint32, block k in byte k."""
    e = exps.astype("uint32")
    return e[:, 0] | (e[:, 1] << 8) | (e[:, 2] << 16) | (e[:, 3] << 24)


@pytest.mark.parametrize("sf_k", [4, 1])
def test_block_scaled_fp8_scales_each_k_block(sf_k: int) -> None:
    import ml_dtypes

    ex = _emulated(block_scaled_kernel(sf_k))
    src = ex.inspect_source()
    assert src.count("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale") == 4
    rng = np.random.default_rng(5)
    a = rng.standard_normal((128, 128)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((32, 128)).astype(ml_dtypes.float8_e4m3fn)
    ea = rng.integers(122, 132, (128, 4)).astype("uint8")
    eb = rng.integers(122, 132, (32, 4)).astype("uint8")
    words_a = _pack_bytes(ea).reshape(4, 32).T.copy()  # SA[l, i]: row 32 i + l
    d = np.zeros((128, 32), "float32")
    ex(a, b, words_a, _pack_bytes(eb), d)
    used = np.arange(4) if sf_k == 4 else np.zeros(4, int)  # sf_k 1: byte 0 for every block
    sa = np.exp2(ea[:, used].astype("float32") - 127)
    sb = np.exp2(eb[:, used].astype("float32") - 127)
    af, bf = a.astype("float32"), b.astype("float32")
    want = sum((af[:, 32 * k:32 * k + 32] * sa[:, k:k + 1])
               @ (bf[:, 32 * k:32 * k + 32] * sb[:, k:k + 1]).T for k in range(4))
    np.testing.assert_allclose(d, want, rtol=1e-4, atol=1e-3)


def test_block_scaled_factor_checks() -> None:
    from tvm_backend_cuda.dispatch.gemm_tcgen05 import block_scaled_descriptor

    # e4m3 (format 0) x e4m3, ue8m0 (bit 23), N 32 >> 3 at bit 17, M 128 >> 4 at bit 24
    assert block_scaled_descriptor("float8_e4m3fn", 128, 32, False, False) == \
        (1 << 23) | (4 << 17) | (8 << 24)


@no_type_check
def mn_major_kernel() -> Any:
    """D[128, 64] = A @ B^T with A [128, 128] stored column-major in global memory (M
    contiguous: the array passed is A^T row-major) and kept MN-major in shared memory (atoms of
    8 K rows x 64 M, 128B swizzle), B [64, 128] K-major; the TMA map views A's memory in its
    layout's order."""
    from tvm.ir import ComposeLayout

    dt = "float16"
    swizzle = mma_shared_layout(dt, "128B", (8, 64)).layout_A
    la = ComposeLayout(swizzle, TileLayout(S[(2, 64, 16, 8): (512, 1, 1024, 64)]))
    lb = mma_shared_layout(dt, "128B", (64, 128))
    col_major = TileLayout(S[(128, 128): (1, 128)])

    @T.prim_func
    def mn_major(a: T.handle, B: T.Buffer((64, 128), dt), D: T.Buffer((128, 64), "float32")):
        A = T.match_buffer(a, (128, 128), dt, layout=col_major)
        T.device_entry()
        warp_id = T.warp_id([4])
        wg_id = T.warpgroup_id([1])
        tid = T.thread_id_in_wg([128])
        As = T.alloc_buffer((128, 128), dt, scope="shared", layout=la, align=1024)
        Bs = T.alloc_buffer((64, 128), dt, scope="shared", layout=lb, align=1024)
        taddr = T.alloc_shared([1], "uint32")
        load_bar = T.alloc_shared([1], "uint64")
        mma_bar = T.alloc_shared([1], "uint64")
        if tid == 0:
            T.ptx.mbarrier.init(load_bar.ptr_to([0]), 1)
            T.ptx.mbarrier.init(mma_bar.ptr_to([0]), 1)
        T.ptx.fence.proxy_async("shared::cta")
        T.cuda.cta_sync()
        if warp_id == 0:
            T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=64, cta_group=1)
        T.cuda.cta_sync()
        acc = T.decl_buffer((128, 64), "float32", scope="tmem", allocated_addr=taddr[0],
                            layout=tmem_datapath_layout("D", 128, 64))
        if tid == 0:
            Tx.copy_async(As[:, :], A[:, :], dispatch="tma", mbar=load_bar.ptr_to([0]))
            Tx.copy_async(Bs[:, :], B[:, :], dispatch="tma", mbar=load_bar.ptr_to([0]))
            T.ptx.mbarrier.arrive.expect_tx(load_bar.ptr_to([0]), 2 * (128 * 128 + 64 * 128))
        T.ptx.mbarrier.try_wait(load_bar.ptr_to([0]), 0)
        T.cuda.cta_sync()
        if tid == 0:
            Tx.gemm_async(acc[:, :], As[:, :], Bs[:, :], dispatch="tcgen05")
            T.ptx.tcgen05.commit(mma_bar.ptr_to([0]), cta_group=1)
        T.ptx.mbarrier.try_wait(mma_bar.ptr_to([0]), 0)
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence.after_thread_sync()
        regs = T.alloc_local(64, dtype="float32")
        view = regs.view(128, 64, layout=TileLayout(S[(128, 64): (1 @ tid_in_wg, 1)]))
        if wg_id == 0:
            Tx.wg.copy_async(view[:, :], acc[:, :])
            T.ptx.tcgen05.wait.ld()
        T.cuda.cta_sync()
        Tx.copy(D[tid, 0:64], regs[:])
        if warp_id == 0:
            T.ptx.tcgen05.relinquish_alloc_permit(cta_group=1)
            T.ptx.tcgen05.dealloc(taddr[0], n_cols=64, cta_group=1)

    return mn_major


def test_column_major_global_operand_into_an_mn_major_tile() -> None:
    ex = _emulated(mn_major_kernel())
    # A: 16 chunks of 8 K rows x 2 blocks of 64 M (its atoms are not one dense box); B: 2
    assert ex.inspect_source().count("cp.async.bulk.tensor.2d") == 34
    rng = np.random.default_rng(13)
    a_t = rng.standard_normal((128, 128)).astype("float16")  # A^T, row-major
    b = rng.standard_normal((64, 128)).astype("float16")
    d = np.zeros((128, 64), "float32")
    ex(a_t, b, d)
    np.testing.assert_allclose(d, a_t.T.astype("float32") @ b.astype("float32").T, rtol=1e-3,
                               atol=1e-3)
