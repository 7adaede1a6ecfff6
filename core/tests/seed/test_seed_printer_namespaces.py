"""The seed's ``tests/python/tirx/test_printer_tir_namespaces.py``, restated: every printed form
it expects, from the builders of ``tvm.tirx.cuda.op`` and ``tvm.tirx.trn.op``, printed with
``verbose_expr=True`` (free variables and buffers declared first)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import tvm
from tvm import tirx as tir
from tvm.script import from_source
from tvm.script import tirx as T

CUDA_FORMS_XFAIL = "CUDA printed forms: branch 11-cuda-intrinsics"

r, s, d, a, b = (tir.Var(n, "handle") for n in "rsdab")
p, bar, tm = tir.Var("p", "handle"), tir.Var("bar", "handle"), tir.Var("tm", "handle")
sh, gl = tir.Var("sh", "handle"), tir.Var("gl", "handle")
lane = tir.Var("lane", "int32")


def _decl(*names: str) -> str:
    return "".join(f"{n} = T.handle()\n" for n in names)


# (test id, builder(cuda_op) -> node, expected text); the seed's order
CUDA_FORMS: list[tuple[str, Callable[[Any], Any], str]] = [
    ("printf", lambda c: tir.Evaluate(c.cuda_printf("x=%d", tir.IntImm("int32", 1))),
     'T.cuda.printf("x=%d", 1)'),
    ("wgmma_commit_group", lambda c: tir.Evaluate(c.ptx_wgmma_commit_group()),
     "T.ptx.wgmma.commit_group()"),
    ("cluster_sync_stmt", lambda c: tir.Evaluate(c.cuda_cluster_sync()), "T.cuda.cluster_sync()"),
    ("cp_async_wait_group", lambda c: tir.Evaluate(c.ptx_cp_async_wait_group(tir.IntImm("int32", 0))),
     "T.ptx.cp_async.wait_group(0)"),
    ("nvshmem_fence_stmt", lambda c: tir.Evaluate(c.nvshmem_fence()), "T.nvshmem.fence()"),
    # test_printer_ptx_more
    ("ldmatrix", lambda c: c.ptx_ldmatrix(True, 1, ".b16", s, r),
     _decl("s", "r") + 'T.ptx.ldmatrix(T.bool(True), 1, ".b16", s, r)'),
    ("stmatrix", lambda c: c.ptx_stmatrix(False, 1, ".b16", s, r),
     _decl("s", "r") + 'T.ptx.stmatrix(T.bool(False), 1, ".b16", "m8n8", "shared", s, r)'),
    ("setmaxnreg", lambda c: c.ptx_setmaxnreg(True, 64), "T.ptx.setmaxnreg(T.bool(True), 64)"),
    ("fetch_register", lambda c: c.ptx_fetch_register(32, "laneid"),
     'T.ptx.fetch_register(32, "laneid")'),
    ("wgmma_fence", lambda c: c.ptx_wgmma_fence(), "T.ptx.wgmma.fence()"),
    ("wgmma_wait_group", lambda c: c.ptx_wgmma_wait_group(0), "T.ptx.wgmma.wait_group(0)"),
    ("cp_async_commit_group", lambda c: c.ptx_cp_async_commit_group(),
     "T.ptx.cp_async.commit_group()"),
    ("bulk_commit_group", lambda c: c.ptx_cp_async_bulk_commit_group(),
     "T.ptx.cp_async.bulk.commit_group()"),
    ("bulk_wait_group", lambda c: c.ptx_cp_async_bulk_wait_group(0, True),
     "T.ptx.cp_async.bulk.wait_group(0, T.bool(True))"),
    ("cp_async_mbarrier_arrive", lambda c: c.ptx_cp_async_mbarrier_arrive(0),
     "T.ptx.cp_async.mbarrier.arrive(0)"),
    ("fence_acq_rel", lambda c: c.ptx_fence("acq_rel", "gpu"), 'T.ptx.fence("acq_rel", "gpu")'),
    ("fence_sc", lambda c: c.ptx_fence("sc", "cta"), 'T.ptx.fence("sc", "cta")'),
    ("fence_proxy_async_shared", lambda c: c.ptx_fence_proxy_async("shared::cta"),
     'T.ptx.fence.proxy_async("shared::cta")'),
    ("fence_proxy_async_global", lambda c: c.ptx_fence_proxy_async("global"),
     'T.ptx.fence.proxy_async("global")'),
    ("fence_mbarrier_init", lambda c: c.ptx_fence_mbarrier_init(), "T.ptx.fence.mbarrier_init()"),
    ("elect_sync", lambda c: c.ptx_elect_sync(), "T.ptx.elect_sync()"),
    ("selector", lambda c: tir.op.selector(lane, c.ptx_elect_sync()),
     "lane = T.int32()\nT.selector(lane, T.ptx.elect_sync())"),
    ("ld_global_acquire", lambda c: c.ptx_ld_global_acquire(r, s),
     _decl("r", "s") + "T.ptx.ld_global_acquire(r, s)"),
    ("mapa", lambda c: c.ptx_map_shared_rank(r, 2),
     _decl("r") + 'T.ptx.mapa(r, 2, "", "u64", "uint64")'),
    ("bar_arrive", lambda c: c.ptx_bar_arrive(0, 128), "T.ptx.bar.arrive(0, 128)"),
    ("bar_sync", lambda c: c.ptx_bar_sync(0, 128), "T.ptx.bar.sync(0, 128)"),
    ("tcgen05_alloc", lambda c: c.ptx_tcgen05_alloc(s, 64, 1),
     _decl("s") + "T.ptx.tcgen05.alloc(s, 64, 1)"),
    ("tcgen05_dealloc", lambda c: c.ptx_tcgen05_dealloc(s, 64, 1),
     _decl("s") + "T.ptx.tcgen05.dealloc(s, 64, 1)"),
    ("tcgen05_encode_matrix_descriptor",
     lambda c: c.ptx_tcgen05_encode_matrix_descriptor(d, a, 1, 2, 0),
     _decl("d", "a") + "T.ptx.tcgen05.encode_matrix_descriptor(d, a, 1, 2, 0)"),
    ("tcgen05_encode_instr_descriptor",
     lambda c: c.ptx_tcgen05_encode_instr_descriptor(
         d, d_dtype="f16", a_dtype="f16", b_dtype="f16", M=16, N=16, K=16, trans_a=True,
         trans_b=False, n_cta_groups=1, neg_a=False, neg_b=False, sat_d=False, is_sparse=False),
     _decl("d") + 'T.ptx.tcgen05.encode_instr_descriptor(d, "f16", "f16", "f16", 16, 16, 16, '
     "T.bool(True), T.bool(False), 1, T.bool(False), T.bool(False), T.bool(False), "
     "T.bool(False))"),
    ("tcgen05_encode_instr_descriptor_block_scaled",
     lambda c: c.ptx_tcgen05_encode_instr_descriptor_block_scaled(
         d, d_dtype="f16", a_dtype="f16", b_dtype="f16", sfa_dtype="f16", sfb_dtype="f16",
         sfa_tmem_addr=a, sfb_tmem_addr=b, M=16, N=16, K=16, trans_a=True, trans_b=False,
         is_sparse=True, n_cta_groups=1, neg_a=False, neg_b=False),
     _decl("d", "a", "b") + 'T.ptx.tcgen05.encode_instr_descriptor_block_scaled(d, "f16", '
     '"f16", "f16", "f16", "f16", a, b, 16, 16, 16, T.bool(True), T.bool(False), 1, '
     "T.bool(False), T.bool(False), T.bool(True))"),
    ("tcgen05_cp",
     lambda c: c.ptx_tcgen05_cp(a, d, shape="64x128b", cta_group=1, multicast="warpx2::02_13"),
     _decl("a", "d") + 'T.ptx.tcgen05.cp(a, d, "64x128b", 1, "warpx2::02_13", "", 0, 0)'),
    ("tcgen05_shift", lambda c: c.ptx_tcgen05_shift(a, 1), _decl("a") + "T.ptx.tcgen05.shift(a, 1)"),
    ("tcgen05_ld",
     lambda c: c.ptx_tcgen05_ld(a, 0, shape="16x64b", num=1, row=0, col=0, pack=False),
     _decl("a") + 'T.ptx.tcgen05.ld(a, 0, 0, "16x64b", 1, T.bool(False), 0)'),
    ("tcgen05_st",
     lambda c: c.ptx_tcgen05_st(a, 0, shape="16x64b", num=1, row=0, col=0, unpack=False),
     _decl("a") + 'T.ptx.tcgen05.st(a, 0, 0, "16x64b", 1, T.bool(False), 0)'),
    ("tcgen05_wait_ld", lambda c: c.ptx_tcgen05_wait_ld(), "T.ptx.tcgen05.wait.ld()"),
    ("tcgen05_wait_st", lambda c: c.ptx_tcgen05_wait_st(), "T.ptx.tcgen05.wait.st()"),
    ("tcgen05_commit", lambda c: c.ptx_tcgen05_commit(a, 1, 0),
     _decl("a") + "T.ptx.tcgen05.commit(a, 1, 0)"),
    ("tcgen05_relinquish_alloc_permit", lambda c: c.ptx_tcgen05_relinquish_alloc_permit(1),
     "T.ptx.tcgen05.relinquish_alloc_permit(1)"),
    # test_printer_ptx_mbarrier
    ("mbarrier_init", lambda c: c.ptx_mbarrier_init(bar, 32),
     _decl("bar") + "T.ptx.mbarrier.init(bar, 32)"),
    ("mbarrier_arrive", lambda c: c.ptx_mbarrier_arrive(bar),
     _decl("bar") + "T.ptx.mbarrier.arrive(bar)"),
    ("mbarrier_arrive_expect_tx", lambda c: c.ptx_mbarrier_arrive_expect_tx(bar, 128),
     _decl("bar") + "T.ptx.mbarrier.arrive.expect_tx(bar, 128)"),
    ("mbarrier_try_wait", lambda c: c.ptx_mbarrier_try_wait(bar, 1),
     _decl("bar") + "T.ptx.mbarrier.try_wait(bar, 1)"),
    ("cluster_sync_expr", lambda c: c.cuda_cluster_sync(), "T.cuda.cluster_sync()"),
    # test_printer_cuda_more
    ("thread_fence", lambda c: c.cuda_thread_fence(), "T.cuda.thread_fence()"),
    ("warp_sync", lambda c: c.cuda_warp_sync(), "T.cuda.warp_sync()"),
    ("cta_sync", lambda c: c.cuda_cta_sync(), "T.cuda.cta_sync()"),
    ("grid_sync", lambda c: c.cuda_grid_sync(), "T.cuda.grid_sync()"),
    ("cluster_sync_more", lambda c: c.cuda_cluster_sync(), "T.cuda.cluster_sync()"),
    ("syncthreads_and", lambda c: c.cuda_syncthreads_and(1), "T.cuda.syncthreads_and(1)"),
    ("syncthreads_or", lambda c: c.cuda_syncthreads_or(1), "T.cuda.syncthreads_or(1)"),
    ("nano_sleep", lambda c: c.cuda_nano_sleep(100), "T.cuda.nano_sleep(100)"),
    ("atomic_add", lambda c: c.cuda_atomic_add(p, tir.IntImm("int32", 1)),
     _decl("p") + "T.cuda.atomic_add(p, 1)"),
    ("atomic_cas", lambda c: c.cuda_atomic_cas(p, 1, 2), _decl("p") + "T.cuda.atomic_cas(p, 1, 2)"),
    ("ldg", lambda c: c.cuda_ldg(p, "float32"), _decl("p") + 'T.cuda.ldg(p, "float32")'),
    ("func_call", lambda c: c.cuda_func_call("f", 1, source_code=""),
     'T.cuda.func_call("f", 1, source_code="")'),
    # test_printer_nvshmem_more
    ("nvshmem_my_pe", lambda c: c.nvshmem_my_pe(), "T.nvshmem.my_pe()"),
    ("nvshmem_n_pes", lambda c: c.nvshmem_n_pes(), "T.nvshmem.n_pes()"),
    ("nvshmem_signal_op", lambda c: c.nvshmem_signal_op(p, 1, "set", 0),
     _decl("p") + 'T.nvshmem.signal_op(p, 1, "set", 0)'),
    ("nvshmem_wait_until", lambda c: c.nvshmem_wait_until(p, "eq", 0),
     _decl("p") + 'T.nvshmem.wait_until(p, "eq", 0, "uint64_t")'),
    ("nvshmem_quiet", lambda c: c.nvshmem_quiet(), "T.nvshmem.quiet()"),
    ("nvshmem_barrier_all", lambda c: c.nvshmem_barrier_all(), "T.nvshmem.barrier_all()"),
    ("nvshmem_getmem_nbi", lambda c: c.nvshmem_getmem_nbi(p, p, 16, 0),
     _decl("p") + "T.nvshmem.getmem_nbi(p, p, 16, 0)"),
    ("nvshmem_getmem_nbi_warp", lambda c: c.nvshmem_getmem_nbi_warp(p, p, 16, 0),
     _decl("p") + "T.nvshmem.getmem_nbi.warp(p, p, 16, 0)"),
    ("nvshmem_putmem_nbi_block", lambda c: c.nvshmem_putmem_nbi_block(p, p, 16, 0),
     _decl("p") + "T.nvshmem.putmem_nbi.block(p, p, 16, 0)"),
    ("nvshmem_putmem_nbi", lambda c: c.nvshmem_putmem_nbi(p, p, 16, 0),
     _decl("p") + "T.nvshmem.putmem_nbi(p, p, 16, 0)"),
    ("nvshmem_putmem_nbi_warp", lambda c: c.nvshmem_putmem_nbi_warp(p, p, 16, 0),
     _decl("p") + "T.nvshmem.putmem_nbi.warp(p, p, 16, 0)"),
    ("nvshmem_putmem_signal_nbi", lambda c: c.nvshmem_putmem_signal_nbi(p, p, 16, p, 1, "set", 0),
     _decl("p") + 'T.nvshmem.putmem_signal_nbi(p, p, 16, p, 1, "set", 0)'),
    ("nvshmem_putmem_signal_nbi_warp",
     lambda c: c.nvshmem_putmem_signal_nbi_warp(p, p, 16, p, 1, "set", 0),
     _decl("p") + 'T.nvshmem.putmem_signal_nbi.warp(p, p, 16, p, 1, "set", 0)'),
    ("nvshmem_putmem_signal_nbi_block",
     lambda c: c.nvshmem_putmem_signal_nbi_block(p, p, 16, p, 1, "set", 0),
     _decl("p") + 'T.nvshmem.putmem_signal_nbi.block(p, p, 16, p, 1, "set", 0)'),
    # test_printer_ptx_mma_and_wgmma
    ("mma", lambda c: c.ptx_mma("m8n8k4", "row", "row", "fp16", "fp16", "fp16", "fp16",
                                [r], [r], [r]),
     _decl("r") + 'T.ptx.mma("m8n8k4", "row", "row", "fp16", "fp16", "fp16", "fp16", 1, 1, 1, '
     "0, T.bool(True), r, r, r, T.bool(False))"),
    ("wgmma_encode_matrix_descriptor",
     lambda c: c.ptx_wgmma_encode_matrix_descriptor(d, a, 1, 1, 0),
     _decl("d", "a") + "T.ptx.wgmma.encode_matrix_descriptor(d, a, 1, 1, 0)"),
    ("wgmma_noop_barrier", lambda c: c.ptx_wgmma_noop_barrier(0), "T.ptx.wgmma.noop_barrier(0)"),
    ("wgmma_mma_async_ss",
     lambda c: c.ptx_wgmma_mma_async_ss(d, d, 0, 0, M=16, N=16, K=16, in_dtype="f16",
                                        out_dtype="f16", transA=True, transB=False, scaleA=1.0,
                                        scaleB=1.0, scaleD=True),
     _decl("d") + 'T.ptx.wgmma.mma_async.ss(16, 16, 16, "f16", "f16", T.bool(True), '
     "T.bool(False), T.float32(1.0), T.float32(1.0), T.bool(True), d, d, 0, 0)"),
    ("wgmma_mma_async_rs",
     lambda c: c.ptx_wgmma_mma_async_rs(d, 0, 0, M=16, N=16, K=16, in_dtype="f16",
                                        out_dtype="f16", transA=True, transB=False, scaleA=1.0,
                                        scaleB=1.0, scaleD=True),
     _decl("d") + 'T.ptx.wgmma.mma_async.rs(16, 16, 16, "f16", "f16", T.bool(True), '
     "T.bool(False), T.float32(1.0), T.float32(1.0), T.bool(True), d, 0, 0)"),
    # test_printer_ptx_cp_async_tensor
    ("tma_g2c",
     lambda c: c.ptx_cp_async_bulk_tensor_global_to_cluster(2, tm, 0, tm, 0, 1, "", 0, 1, ""),
     _decl("tm") + 'T.ptx.cp_async.bulk.tensor.g2c(2, tm, 0, tm, 0, 1, T.uint64(0), 0, 0, 1, "")'),
    ("tma_g2c_tile_gather4",
     lambda c: c.ptx_cp_async_bulk_tensor_tile_gather4_global_to_cluster(
         2, tm, 0, tm, 0, 1, "", 0, 1, ""),
     _decl("tm") + "T.ptx.cp_async.bulk.tensor.g2c_tile_gather4"
     '(2, tm, 0, tm, 0, 1, T.uint64(0), 0, 0, 1, "")'),
    ("tma_g2c_prefetch",
     lambda c: c.ptx_cp_async_bulk_tensor_global_to_cluster_prefetch(2, tm, "", 0, 0, ""),
     _decl("tm") + 'T.ptx.cp_async.bulk.tensor.g2c_prefetch(2, tm, T.uint64(0), 0, 0, 0, "")'),
    ("tma_s2g",
     lambda c: c.ptx_cp_async_bulk_tensor_shared_to_global(2, 0, tm, "", 0, 0, ""),
     _decl("tm") + 'T.ptx.cp_async.bulk.tensor.s2g(2, 0, tm, T.uint64(0), 0, 0, 0, "")'),
    ("tma_s2g_reduce",
     lambda c: c.ptx_cp_async_bulk_tensor_shared_to_global_reduce(2, 0, tm, "", "add", 0, 0, ""),
     _decl("tm") + "T.ptx.cp_async.bulk.tensor.s2g_reduce"
     '(2, 0, tm, T.uint64(0), 0, "add", 0, 0, "")'),
    # test_printer_ptx_cp_async_call
    ("cp_async",
     lambda c: c.ptx_cp_async(sh, gl, 16, cache_hint="", prefetch_size=-1, predicate=-1,
                              fill_mode=""),
     _decl("sh", "gl") + 'T.ptx.cp_async(sh, gl, 16, T.uint64(0), 0, -1, -1, "")'),
]

NKI_A = tir.decl_buffer([1], dtype="float16", name="A")
NKI_B = tir.decl_buffer([1], dtype="float16", name="B")
_A = 'A = T.Buffer((1,), "float16")\n'
_AB = _A + 'B = T.Buffer((1,), "float16")\n'
a0, b0 = NKI_A[0], NKI_B[0]

NKI_FORMS: list[tuple[str, Callable[[Any], Any], str]] = [
    ("load", lambda n: n.nki_load(a0, b0), _AB + "T.nki.load(A, B)"),
    ("store", lambda n: n.nki_store(a0, b0), _AB + "T.nki.store(A, B)"),
    ("tensor_copy", lambda n: n.nki_tensor_copy(a0, b0), _AB + "T.nki.tensor_copy(A, B)"),
    ("matmul", lambda n: n.nki_matmul(a0, a0, b0), _AB + "T.nki.matmul(A, A, B, T.bool(True))"),
    ("activation", lambda n: n.nki_activation(a0, b0, "relu", 0.0, 1.0),
     _AB + 'T.nki.activation(A, B, "relu", T.float32(0.0), T.float32(1.0))'),
    ("memset", lambda n: n.nki_memset(a0, 0), _A + "T.nki.memset(A, 0)"),
    ("identity", lambda n: n.nki_identity(a0, 1), _A + "T.nki.identity(A, 1)"),
    ("reciprocal", lambda n: n.nki_reciprocal(a0, b0), _AB + "T.nki.reciprocal(A, B)"),
    ("tensorreduce", lambda n: n.nki_tensorreduce(a0, b0, "sum", False, 0),
     _AB + 'T.nki.tensorreduce(A, B, "sum", T.bool(False), 0)'),
    ("tensortensor", lambda n: n.nki_tensortensor(a0, a0, b0, "add"),
     _AB + 'T.nki.tensortensor(A, A, B, "add")'),
    ("tensorscalar", lambda n: n.nki_tensorscalar(a0, a0, 1.0, "mul", False),
     _A + 'T.nki.tensorscalar(A, A, T.float32(1.0), "mul", T.bool(False))'),
    ("tensorscalar_reduce", lambda n: n.nki_tensorscalar_reduce(a0, a0, 1.0, "mul", "sum", False),
     _A + 'T.nki.tensorscalar_reduce(A, A, T.float32(1.0), "mul", "sum", T.bool(False), '
     "T.bool(False))"),
    ("scalar_tensor_tensor", lambda n: n.nki_scalar_tensor_tensor(a0, a0, 1.0, a0, "add", "add"),
     _A + 'T.nki.scalar_tensor_tensor(A, A, T.float32(1.0), A, "add", "add", T.bool(False), '
     "T.bool(False))"),
    ("scalar_tensor_scalar",
     lambda n: n.nki_scalar_tensor_scalar(a0, a0, 1.0, 1.0, "add", "add"),
     _A + 'T.nki.scalar_tensor_scalar(A, A, T.float32(1.0), T.float32(1.0), "add", "add", '
     "T.bool(False), T.bool(False))"),
    ("activation_reduce", lambda n: n.nki_activation_reduce(a0, a0, b0, "relu", "sum", 0.0, 1.0),
     _AB + 'T.nki.activation_reduce(A, A, B, "relu", "sum", T.float32(0.0), T.float32(1.0))'),
    ("affine_select", lambda n: n.nki_affine_select(a0, a0, a0, 1.0),
     _A + "T.nki.affine_select(A, A, A, T.float32(1.0))"),
]


def _assert_print(obj: Any, expected: str) -> None:
    out = obj.script(verbose_expr=True, extra_config={"tirx.prefix": "T"}).strip()
    assert out == expected.strip()
    _assert_roundtrip(obj)


def _assert_roundtrip(obj: Any) -> None:
    """The form, as the body of a function taking what it uses, parses back to the same IR."""
    from tvm.ir import Buffer, PrimFunc, assert_structural_equal, post_order_visit

    stmt = obj if isinstance(obj, tir.Stmt) else tir.Evaluate(obj)
    params: list[Any] = []
    buffer_map: dict[Any, Any] = {}

    def visit(n: Any) -> None:
        if isinstance(n, Buffer) and n not in buffer_map.values():
            handle = tir.Var(n.name, "handle")
            params.append(handle)
            buffer_map[handle] = n
        elif isinstance(n, tir.Var) and not any(n is q for q in params):
            params.append(n)

    post_order_visit(stmt, visit)
    data = [b.data for b in buffer_map.values()]
    params = [q for q in params if not any(q is v for v in data)]
    func = PrimFunc(params, stmt, buffer_map, name="f")
    text = func.script()
    assert_structural_equal(from_source(text), func)


def _cuda_params() -> list[Any]:
    return [pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=CUDA_FORMS_XFAIL))
            if name in CUDA_PENDING else name for name, _, _ in CUDA_FORMS]


# The seed's CUDA forms this branch's CUDA backend does not print yet (branch
# 11-cuda-intrinsics re-declares the CUDA intrinsics): flip them to plain tests after merging it.
CUDA_PENDING: set[str] = set()


@pytest.mark.parametrize("name", _cuda_params())
def test_cuda_printed_form(cuda, name):
    from tvm.tirx.cuda import op as cuda_op

    build, expected = next((b, e) for n, b, e in CUDA_FORMS if n == name)
    _assert_print(build(cuda_op), expected)


@pytest.mark.parametrize("name", [n for n, _, _ in NKI_FORMS])
def test_nki_printed_form(trn, name):
    from tvm.tirx.trn import op as trn_op

    build, expected = next((b, e) for n, b, e in NKI_FORMS if n == name)
    _assert_print(build(trn_op), expected)


def test_cuda_low_level_warp_intrinsics_roundtrip(cuda):
    @T.prim_func(check_well_formed=False)
    def kernel():
        x = T.int32()
        mask = T.cuda.__activemask()
        T.evaluate(T.cuda.__shfl_sync(mask, x, 0, 32))
        T.evaluate(T.cuda.__shfl_up_sync(mask, x, 1, 32))
        T.evaluate(T.cuda.__shfl_down_sync(mask, x, 1, 32))
        T.evaluate(T.cuda.__shfl_xor_sync(mask, x, 1, 32))

    code = kernel.script()
    for form in ("T.cuda.__activemask()", "T.cuda.__shfl_sync(", "T.cuda.__shfl_up_sync(",
                 "T.cuda.__shfl_down_sync(", "T.cuda.__shfl_xor_sync("):
        assert form in code
    assert "T.tirx." not in code
    assert from_source(code).script() == code


def test_webgpu_namespace_roundtrip():
    @T.prim_func(check_well_formed=False)
    def kernel():
        x = T.int32()
        T.evaluate(T.webgpu.subgroup_shuffle(x, 0))
        T.evaluate(T.webgpu.subgroup_shuffle_up(x, 1))
        T.evaluate(T.webgpu.subgroup_shuffle_down(x, 1))

    code = kernel.script()
    for form in ("T.webgpu.subgroup_shuffle(", "T.webgpu.subgroup_shuffle_up(",
                 "T.webgpu.subgroup_shuffle_down("):
        assert form in code
    assert "T.tirx." not in code
    assert tvm.script.from_source(code).script() == code


def test_every_printed_form_of_the_seed_is_restated():
    """The seed's file has 97 ``_assert_print`` forms (98 lines naming ``_assert_print``, its
    definition included) and the T.cuda and T.webgpu round trips: all are here."""
    assert len(CUDA_FORMS) + len(NKI_FORMS) == 97
    assert len({n for n, _, _ in CUDA_FORMS}) == len(CUDA_FORMS)
