"""T.cuda / T.ptx / T.nvshmem: every op builds through its namespace, carries its category and
namespace, prints in the seed's form (seed-digest section 11) and round-trips."""

from __future__ import annotations

from typing import Any

import pytest

from tvm.ir import (
    Buffer,
    Call,
    Evaluate,
    Op,
    OpCategory,
    PrimFunc,
    SeqStmt,
    Var,
    assert_structural_equal,
)
from tvm.script import from_source
from tvm.script import tirx as T

V = {n: Var(n, "handle") for n in ("s", "r", "p", "d", "a", "tm", "bar", "sh", "gl")}
A = Buffer("A", (16,), "float32")
R = Buffer("R", (4,), "uint32")


def _params() -> tuple[list[Var], dict[Var, Buffer]]:
    a_h, r_h = Var("A_handle", "handle"), Var("R_handle", "handle")
    return [*V.values(), a_h, r_h], {a_h: A, r_h: R}


def _func(call: Any) -> PrimFunc:
    params, bmap = _params()
    return PrimFunc(params, Evaluate(call), bmap, name="f")


def _line(text: str) -> str:
    body = [
        ln.strip() for ln in text.splitlines() if ln.startswith("    ") and "T.Buffer" not in ln
    ]
    return body[-1]


s, r, p, d, a, tm, bar, sh, gl = (V[k] for k in ("s", "r", "p", "d", "a", "tm", "bar", "sh", "gl"))
F, Tr = False, True

# (build through T.<ns>..., expected printed line, op name)
CASES: list[tuple[Any, str, str]] = [
    # -- the seed's printed forms (test_printer_tir_namespaces.py) --
    (lambda: T.cuda.printf("x=%d", 1), 'T.cuda.printf("x=%d", 1)', "tirx.cuda.printf"),
    (
        lambda: T.ptx.wgmma.commit_group(),
        "T.ptx.wgmma.commit_group()",
        "tirx.ptx.wgmma_commit_group",
    ),
    (lambda: T.cuda.cluster_sync(), "T.cuda.cluster_sync()", "tirx.cuda.cluster_sync"),
    (
        lambda: T.ptx.cp_async.wait_group(0),
        "T.ptx.cp_async.wait_group(0)",
        "tirx.ptx.cp_async_wait_group",
    ),
    (lambda: T.nvshmem.fence(), "T.nvshmem.fence()", "tirx.nvshmem.fence"),
    (
        lambda: T.ptx.ldmatrix(True, 1, ".b16", s, r),
        'T.ptx.ldmatrix(T.bool(True), 1, ".b16", s, r)',
        "tirx.ptx.ldmatrix",
    ),
    (
        lambda: T.ptx.stmatrix(False, 1, ".b16", s, r),
        'T.ptx.stmatrix(T.bool(False), 1, ".b16", "m8n8", "shared", s, r)',
        "tirx.ptx.stmatrix",
    ),
    (
        lambda: T.ptx.setmaxnreg(True, 64),
        "T.ptx.setmaxnreg(T.bool(True), 64)",
        "tirx.ptx.setmaxnreg",
    ),
    (
        lambda: T.ptx.fetch_register(32, "laneid"),
        'T.ptx.fetch_register(32, "laneid")',
        "tirx.ptx.fetch_register",
    ),
    (
        lambda: T.ptx.cp_async.bulk.wait_group(0, True),
        "T.ptx.cp_async.bulk.wait_group(0, T.bool(True))",
        "tirx.ptx.cp_async_bulk_wait_group",
    ),
    (
        lambda: T.ptx.cp_async.mbarrier.arrive(0),
        "T.ptx.cp_async.mbarrier.arrive(0)",
        "tirx.ptx.cp_async_mbarrier_arrive",
    ),
    (lambda: T.ptx.fence("acq_rel", "gpu"), 'T.ptx.fence("acq_rel", "gpu")', "tirx.ptx.fence"),
    (
        lambda: T.ptx.fence.proxy_async("shared::cta"),
        'T.ptx.fence.proxy_async("shared::cta")',
        "tirx.ptx.fence_proxy_async",
    ),
    (
        lambda: T.ptx.fence.mbarrier_init(),
        "T.ptx.fence.mbarrier_init()",
        "tirx.ptx.fence_mbarrier_init",
    ),
    (lambda: T.ptx.elect_sync(), "T.ptx.elect_sync()", "tirx.ptx.elect_sync"),
    (
        lambda: T.ptx.ld_global_acquire(r, s),
        "T.ptx.ld_global_acquire(r, s)",
        "tirx.ptx.ld_global_acquire",
    ),
    (lambda: T.ptx.map_shared_rank(r, 2), 'T.ptx.mapa(r, 2, "", "u64", "uint64")', "tirx.ptx.mapa"),
    (lambda: T.ptx.bar.arrive(0, 128), "T.ptx.bar.arrive(0, 128)", "tirx.ptx.bar_arrive"),
    (lambda: T.ptx.bar.sync(0, 128), "T.ptx.bar.sync(0, 128)", "tirx.ptx.bar_sync"),
    (
        lambda: T.ptx.tcgen05.alloc(s, 64, 1),
        "T.ptx.tcgen05.alloc(s, 64, 1)",
        "tirx.ptx.tcgen05_alloc",
    ),
    (
        lambda: T.ptx.tcgen05.dealloc(a, 64, 1),
        "T.ptx.tcgen05.dealloc(a, 64, 1)",
        "tirx.ptx.tcgen05_dealloc",
    ),
    (
        lambda: T.ptx.tcgen05.encode_matrix_descriptor(d, a, 1, 2, 0),
        "T.ptx.tcgen05.encode_matrix_descriptor(d, a, 1, 2, 0)",
        "tirx.ptx.tcgen05_encode_matrix_descriptor",
    ),
    (
        lambda: T.ptx.tcgen05.encode_instr_descriptor(
            d,
            d_dtype="f16",
            a_dtype="f16",
            b_dtype="f16",
            M=16,
            N=16,
            K=16,
            trans_a=True,
            trans_b=False,
        ),
        'T.ptx.tcgen05.encode_instr_descriptor(d, "f16", "f16", "f16", 16, 16, 16, T.bool(True), '
        "T.bool(False), 1, T.bool(False), T.bool(False), T.bool(False), T.bool(False))",
        "tirx.ptx.tcgen05_encode_instr_descriptor",
    ),
    (
        lambda: T.ptx.tcgen05.encode_instr_descriptor_block_scaled(
            d,
            d_dtype="f32",
            a_dtype="e4m3",
            b_dtype="e4m3",
            sfa_dtype="ue8m0",
            sfb_dtype="ue8m0",
            sfa_tmem_addr=a,
            sfb_tmem_addr=a,
            M=128,
            N=128,
            K=32,
            trans_a=False,
            trans_b=False,
        ),
        'T.ptx.tcgen05.encode_instr_descriptor_block_scaled(d, "f32", "e4m3", "e4m3", "ue8m0", '
        '"ue8m0", a, a, 128, 128, 32, T.bool(False), T.bool(False), 1, T.bool(False), T.bool(False), '
        "T.bool(False))",
        "tirx.ptx.tcgen05_encode_instr_descriptor_block_scaled",
    ),
    (
        lambda: T.ptx.tcgen05.cp(a, d, shape="64x128b", multicast="warpx2::02_13"),
        'T.ptx.tcgen05.cp(a, d, "64x128b", 1, "warpx2::02_13", "", 0, 0)',
        "tirx.ptx.tcgen05_cp",
    ),
    (lambda: T.ptx.tcgen05.shift(a, 1), "T.ptx.tcgen05.shift(a, 1)", "tirx.ptx.tcgen05_shift"),
    (
        lambda: T.ptx.tcgen05.ld(a, 0, shape="16x64b", num=1),
        'T.ptx.tcgen05.ld(a, 0, 0, "16x64b", 1, T.bool(False), 0)',
        "tirx.ptx.tcgen05_ld",
    ),
    (
        lambda: T.ptx.tcgen05.st(a, 0, shape="16x64b", num=1),
        'T.ptx.tcgen05.st(a, 0, 0, "16x64b", 1, T.bool(False), 0)',
        "tirx.ptx.tcgen05_st",
    ),
    (lambda: T.ptx.tcgen05.wait.ld(), "T.ptx.tcgen05.wait.ld()", "tirx.ptx.tcgen05_wait_ld"),
    (lambda: T.ptx.tcgen05.wait.st(), "T.ptx.tcgen05.wait.st()", "tirx.ptx.tcgen05_wait_st"),
    (
        lambda: T.ptx.tcgen05.commit(a, 1, 0),
        "T.ptx.tcgen05.commit(a, 1, 0)",
        "tirx.ptx.tcgen05_commit",
    ),
    (
        lambda: T.ptx.tcgen05.relinquish_alloc_permit(1),
        "T.ptx.tcgen05.relinquish_alloc_permit(1)",
        "tirx.ptx.tcgen05_relinquish_alloc_permit",
    ),
    (
        lambda: T.ptx.mbarrier.init(bar, 32),
        "T.ptx.mbarrier.init(bar, 32)",
        "tirx.ptx.mbarrier_init",
    ),
    (lambda: T.ptx.mbarrier.arrive(bar), "T.ptx.mbarrier.arrive(bar)", "tirx.ptx.mbarrier_arrive"),
    (
        lambda: T.ptx.mbarrier.arrive.expect_tx(bar, 128),
        "T.ptx.mbarrier.arrive.expect_tx(bar, 128)",
        "tirx.ptx.mbarrier_arrive_expect_tx",
    ),
    (
        lambda: T.ptx.mbarrier.try_wait(bar, 1),
        "T.ptx.mbarrier.try_wait(bar, 1)",
        "tirx.ptx.mbarrier_try_wait",
    ),
    (lambda: T.cuda.thread_fence(), "T.cuda.thread_fence()", "tirx.cuda.thread_fence"),
    (lambda: T.cuda.warp_sync(), "T.cuda.warp_sync()", "tirx.cuda.warp_sync"),
    (lambda: T.cuda.cta_sync(), "T.cuda.cta_sync()", "tirx.cuda.cta_sync"),
    (lambda: T.cuda.grid_sync(), "T.cuda.grid_sync()", "tirx.cuda.grid_sync"),
    (lambda: T.cuda.syncthreads_and(1), "T.cuda.syncthreads_and(1)", "tirx.cuda.syncthreads_and"),
    (lambda: T.cuda.nano_sleep(100), "T.cuda.nano_sleep(100)", "tirx.cuda.nano_sleep"),
    (lambda: T.cuda.atomic_add(p, 1), "T.cuda.atomic_add(p, 1)", "tirx.cuda.atomic_add"),
    (lambda: T.cuda.atomic_cas(p, 1, 2), "T.cuda.atomic_cas(p, 1, 2)", "tirx.cuda.atomic_cas"),
    (lambda: T.cuda.ldg(p, "float32"), 'T.cuda.ldg(p, "float32")', "tirx.cuda.ldg"),
    (
        lambda: T.cuda.func_call("f", 1, source_code=""),
        'T.cuda.func_call("f", 1, source_code="")',
        "tirx.cuda.func_call",
    ),
    (lambda: T.nvshmem.my_pe(), "T.nvshmem.my_pe()", "tirx.nvshmem.my_pe"),
    (lambda: T.nvshmem.n_pes(), "T.nvshmem.n_pes()", "tirx.nvshmem.n_pes"),
    (lambda: T.nvshmem.quiet(), "T.nvshmem.quiet()", "tirx.nvshmem.quiet"),
    (lambda: T.nvshmem.barrier_all(), "T.nvshmem.barrier_all()", "tirx.nvshmem.barrier_all"),
    (
        lambda: T.nvshmem.signal_op(p, 1, "set", 0),
        'T.nvshmem.signal_op(p, 1, "set", 0)',
        "tirx.nvshmem.signal_op",
    ),
    (
        lambda: T.nvshmem.wait_until(p, "eq", 0),
        'T.nvshmem.wait_until(p, "eq", 0, "uint64_t")',
        "tirx.nvshmem.wait_until",
    ),
    (
        lambda: T.nvshmem.getmem_nbi(p, p, 16, 0),
        "T.nvshmem.getmem_nbi(p, p, 16, 0)",
        "tirx.nvshmem.getmem_nbi",
    ),
    (
        lambda: T.nvshmem.getmem_nbi.warp(p, p, 16, 0),
        "T.nvshmem.getmem_nbi.warp(p, p, 16, 0)",
        "tirx.nvshmem.getmem_nbi_warp",
    ),
    (
        lambda: T.nvshmem.getmem_nbi.block(p, p, 16, 0),
        "T.nvshmem.getmem_nbi.block(p, p, 16, 0)",
        "tirx.nvshmem.getmem_nbi_block",
    ),
    (
        lambda: T.nvshmem.putmem_nbi(p, p, 16, 0),
        "T.nvshmem.putmem_nbi(p, p, 16, 0)",
        "tirx.nvshmem.putmem_nbi",
    ),
    (
        lambda: T.nvshmem.putmem_nbi.warp(p, p, 16, 0),
        "T.nvshmem.putmem_nbi.warp(p, p, 16, 0)",
        "tirx.nvshmem.putmem_nbi_warp",
    ),
    (
        lambda: T.nvshmem.putmem_nbi.block(p, p, 16, 0),
        "T.nvshmem.putmem_nbi.block(p, p, 16, 0)",
        "tirx.nvshmem.putmem_nbi_block",
    ),
    (
        lambda: T.nvshmem.putmem_signal_nbi(p, p, 16, p, 1, "set", 0),
        'T.nvshmem.putmem_signal_nbi(p, p, 16, p, 1, "set", 0)',
        "tirx.nvshmem.putmem_signal_nbi",
    ),
    (
        lambda: T.nvshmem.putmem_signal_nbi.warp(p, p, 16, p, 1, "set", 0),
        'T.nvshmem.putmem_signal_nbi.warp(p, p, 16, p, 1, "set", 0)',
        "tirx.nvshmem.putmem_signal_nbi_warp",
    ),
    (
        lambda: T.nvshmem.putmem_signal_nbi.block(p, p, 16, p, 1, "add", 0),
        'T.nvshmem.putmem_signal_nbi.block(p, p, 16, p, 1, "add", 0)',
        "tirx.nvshmem.putmem_signal_nbi_block",
    ),
    (
        lambda: T.ptx.mma("m8n8k4", "row", "row", "fp16", "fp16", "fp16", "fp16", [r], [r], [r]),
        'T.ptx.mma("m8n8k4", "row", "row", "fp16", "fp16", "fp16", "fp16", 1, 1, 1, 0, T.bool(True), '
        "r, r, r, T.bool(False))",
        "tirx.ptx.mma",
    ),
    (
        lambda: T.ptx.wgmma.encode_matrix_descriptor(d, a, 1, 2, 0),
        "T.ptx.wgmma.encode_matrix_descriptor(d, a, 1, 2, 0)",
        "tirx.ptx.wgmma_encode_matrix_descriptor",
    ),
    (
        lambda: T.ptx.wgmma.noop_barrier(0),
        "T.ptx.wgmma.noop_barrier(0)",
        "tirx.ptx.wgmma_noop_barrier",
    ),
    (
        lambda: T.ptx.wgmma.mma_async.ss(
            d,
            d,
            0,
            0,
            M=16,
            N=16,
            K=16,
            in_dtype="f16",
            out_dtype="f16",
            transA=True,
            transB=False,
            scaleA=1.0,
            scaleB=1.0,
            scaleD=True,
        ),
        'T.ptx.wgmma.mma_async.ss(16, 16, 16, "f16", "f16", T.bool(True), T.bool(False), T.float32(1.0), '
        "T.float32(1.0), T.bool(True), d, d, 0, 0)",
        "tirx.ptx.wgmma_mma_async_ss",
    ),
    (
        lambda: T.ptx.cp_async.bulk.tensor.g2c(2, tm, 0, tm, 0, 1, "", 0, 1, ""),
        'T.ptx.cp_async.bulk.tensor.g2c(2, tm, 0, tm, 0, 1, T.uint64(0), 0, 0, 1, "")',
        "tirx.ptx.cp_async_bulk_tensor_global_to_cluster",
    ),
    (
        lambda: T.ptx.cp_async.bulk.tensor.g2c_tile_gather4(
            2, tm, 0, tm, 0, 1, "", 0, 1, 2, 3, 4, ""
        ),
        'T.ptx.cp_async.bulk.tensor.g2c_tile_gather4(2, tm, 0, tm, 0, 1, T.uint64(0), 0, 0, 1, 2, 3, 4, "")',
        "tirx.ptx.cp_async_bulk_tensor_tile_gather4_global_to_cluster",
    ),
    (
        lambda: T.ptx.cp_async.bulk.tensor.g2c_prefetch(2, tm, "", 0, 0, ""),
        'T.ptx.cp_async.bulk.tensor.g2c_prefetch(2, tm, T.uint64(0), 0, 0, 0, "")',
        "tirx.ptx.cp_async_bulk_tensor_global_to_cluster_prefetch",
    ),
    (
        lambda: T.ptx.cp_async.bulk.tensor.s2g(2, 0, tm, "", 0, 0, ""),
        'T.ptx.cp_async.bulk.tensor.s2g(2, 0, tm, T.uint64(0), 0, 0, 0, "")',
        "tirx.ptx.cp_async_bulk_tensor_shared_to_global",
    ),
    (
        lambda: T.ptx.cp_async.bulk.tensor.s2g_reduce(2, 0, tm, "", "add", 0, 0, ""),
        'T.ptx.cp_async.bulk.tensor.s2g_reduce(2, 0, tm, T.uint64(0), 0, "add", 0, 0, "")',
        "tirx.ptx.cp_async_bulk_tensor_shared_to_global_reduce",
    ),
    (
        lambda: T.ptx.cp_async(sh, gl, 16),
        'T.ptx.cp_async(sh, gl, 16, T.uint64(0), 0, -1, -1, "")',
        "tirx.ptx.cp_async",
    ),
]

x, y = Var("x", "float32"), Var("y", "float32")
u = Var("u", "uint32")
ul = Var("ul", "uint64")
# every other op: (path under T, raw operands as printed); the printed line is
# T.<path>(<operands>) with strings quoted and Python ints/vars as written.
EXTRA: list[tuple[str, tuple[Any, ...]]] = [
    ("cuda.warpgroup_sync", (1,)),
    ("cuda.thread_rank", ()),
    ("cuda.syncthreads_or", (1,)),
    ("cuda.syncthreads_count", (1,)),
    ("cuda.trap_when_assert_failed", (1,)),
    ("cuda.runtime_instr_desc", (d, 1)),
    ("cuda.half2float", (p,)),
    ("cuda.bfloat162float", (p,)),
    ("cuda.float22half2", (d, s)),
    ("cuda.cast_vec2", (d, s, "bfloat16", "float32")),
    ("cuda.half8tofloat8", (s, d)),
    ("cuda.float8tohalf8", (s, d)),
    ("cuda.get_tmem_addr", (u, 0, 32)),
    ("cuda.cvta_generic_to_shared", (s,)),
    ("cuda.smem_addr_from_uint64", (ul,)),
    ("cuda.uint_as_float", (u,)),
    ("cuda.float_as_uint", (x,)),
    ("cuda.ballot_sync", (u, 1)),
    ("cuda.ffs_u32", (u,)),
    ("cuda.reduce_add_sync_u32", (u, u)),
    ("cuda.reduce_min_sync_u32", (u, u)),
    ("cuda.clock64", ()),
    ("cuda.make_float2", (x, y)),
    ("cuda.float2_x", (ul,)),
    ("cuda.float2_y", (ul,)),
    ("cuda.fmul2_rn", (ul, ul)),
    ("cuda.fadd2_rn", (ul, ul)),
    ("cuda.float22bfloat162_rn", (x, y)),
    ("cuda.float22bfloat162_rn_from_float2", (ul,)),
    ("cuda.bfloat1622float2", (u,)),
    ("cuda.float22half2_rn", (x, y)),
    ("cuda.half22float2", (u,)),
    ("cuda.hmin2", (u, u)),
    ("cuda.hmax2", (u, u)),
    ("cuda.fp8x4_e4m3_from_float4", (x, y, x, y)),
    ("cuda.warp_reduce", (x, "sum", 32)),
    ("cuda.cta_reduce", (x, "max", 4, s)),
    ("cuda.copy_bytes", (d, s, 16)),
    ("cuda.timer_init", (p, s, r, 4, 0)),
    ("cuda.timer_start", (3, p, s, r, 4, 1)),
    ("cuda.timer_end", (3, p, s, r, 4, 1)),
    ("cuda.timer_finalize", (p, s, r, 4, 1)),
    ("cuda.mma_store", ("float32", 16, 16, d, s, 0, 16)),
    ("cuda.mma_store_legacy", ("float32", 16, 8, d, s, 4, 8)),
    ("cuda.mma_fill", ("float32", 8, d, 0)),
    ("cuda.mma_fill_legacy", ("float16", 4, d, 0)),
    ("ptx.ldg32", (R[0], 1, A[0], 0)),
    ("ptx.ldmatrix_legacy", ("float16", True, 4, ".b16", d, 0, s, 8)),
    ("ptx.ld", (p, 0, "uint32", 0, "global", "", "u32", 0)),
    ("ptx.ld_acquire", (p, "uint32", "b32", "gpu", "global")),
    ("ptx.ld_volatile", (p, "int32", "s32", "shared")),
    ("ptx.red_scalar", (p, 1, 0, "", "", "global", "add", "u32", 0)),
    ("ptx.red_add_f32_vec", (p, x, y, x, y)),
    ("ptx.atom_scalar", (p, 1, 0, "relaxed", "gpu", "global", "add", "u32", 0)),
    ("ptx.prefetch_tensormap", (tm, "")),
    ("ptx.mbarrier_test_wait_parity", (bar, 0, "", "", "shared::cta")),
    ("ptx.cp_async_bulk_g2s_cta", (sh, gl, 1024, 0, 0, bar, 0, 0, 0)),
    ("ptx.cp_async_bulk_g2s_cluster", (sh, gl, 1024, bar, 3, 0, 0, 1)),
    ("ptx.cp_async_bulk_s2s_cluster", (u, sh, 128, u)),
    ("ptx.cp_async_bulk_s2g", (gl, sh, 1024, 0, 0, 0, 0)),
    ("ptx.st", (p, 1, 2, 0, 0, "shared", "", "v2", "u32", 0)),
    ("ptx.st_bulk", (sh, 256, 0, "shared::cta")),
    ("ptx.fns_b32", (u, 0, 1)),
    ("ptx.add_rn_f32_bf16", (x, y)),
    ("ptx.mapa", (u, 1, "shared::cluster", "u32", "uint32")),
    ("ptx.any_sync", (u, 1)),
    ("ptx.exp2", (x,)),
    ("ptx.rcp", (x,)),
    ("ptx.tanh", (x,)),
    ("ptx.reduce3_min_f32", (x, y, x)),
    ("ptx.reduce3_max_f32", (x, y, x)),
    ("ptx.max_f32", (x, y, 1, 0)),
    *[
        (f"ptx.{op}_{t}", (d, x, y, "rn", 0, 0))
        for op in ("add", "sub", "mul")
        for t in ("f32", "f32x2", "f64")
    ],
    *[(f"ptx.fma_{t}", (d, x, y, x, "rn", 0, 0)) for t in ("f32", "f32x2", "f64")],
    *[(f"ptx.{op}_packed_f32x2", (d, s, s)) for op in ("add", "sub", "mul")],
    ("ptx.fma_packed_f32x2", (d, s, s, s)),
    (
        "ptx.mma.sp",
        (
            "float32",
            "m16n8k16",
            "row",
            "col",
            "fp16",
            "fp16",
            "fp32",
            s,
            0,
            s,
            0,
            d,
            0,
            r,
            0,
            0,
            False,
        ),
    ),
    (
        "ptx.mma.legacy",
        ("float32", "m16n8k16", "row", "col", "fp16", "fp16", "fp32", s, 0, s, 0, d, 0, False),
    ),
    ("ptx.cp_async.commit_group", ()),
    # the legacy form (T.ptx.cp_async.legacy builds it): five operands, the dtype printed first
    ("ptx.cp_async", ("float16", sh, 0, gl, 8, 16)),
    ("ptx.cp_async.bulk", ("float16", sh, 0, gl, 0, 1024, bar)),
    ("ptx.cp_async.bulk.commit_group", ()),
    ("ptx.cp_async.bulk.s2c", (u, sh, 128, u)),
    ("ptx.wgmma.fence", ()),
    ("ptx.wgmma.wait_group", (0,)),
    (
        "ptx.wgmma.mma_async.rs",
        (
            64,
            8,
            16,
            "bf16",
            "f32",
            False,
            False,
            1.0,
            1.0,
            True,
            d,
            R[0],
            R[1],
            R[2],
            R[3],
            A[0],
            A[1],
            A[2],
            A[3],
        ),
    ),
    ("ptx.mbarrier.try_wait_once", (bar, 0, 1000)),
    ("ptx.tcgen05.mma", ("f32", "f16", "f16", u, ul, ul, u, False, 1, 1, 0, 0, 0, 0, 0)),
    ("ptx.tcgen05.mma.sp", ("f32", "f16", "f16", u, ul, ul, u, u, False, 1, 1, 0, 0, 0, 0, 0)),
    (
        "ptx.tcgen05.mma.block_scale",
        ("f32", "e4m3", "e4m3", "ue8m0", "ue8m0", u, ul, ul, u, u, u, False, 1, 1),
    ),
    (
        "ptx.tcgen05.mma.sp.block_scale",
        ("f32", "e4m3", "e4m3", "ue8m0", "ue8m0", u, ul, ul, u, u, u, u, False, 1, 1),
    ),
    ("ptx.tcgen05.fence.before_thread_sync", ()),
    ("ptx.tcgen05.fence.after_thread_sync", ()),
    ("ptx.barrier.cluster.arrive", ("release", True)),
    ("ptx.barrier.cluster.wait", (True, True)),
    ("ptx.griddepcontrol.wait", ()),
    ("ptx.griddepcontrol.launch_dependents", ()),
    ("cuda.__shfl_sync", (u, x, 0, 32)),
    ("cuda.__shfl_up_sync", (u, x, 1, 32)),
    ("cuda.__shfl_down_sync", (u, x, 1, 32)),
    ("cuda.__shfl_xor_sync", (u, x, 16, 32)),
    ("cuda.__activemask", ()),
]


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return f"T.bool({v})"
    if isinstance(v, float):
        return f"T.float32({v!r})"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, Var):
        return v.name
    if isinstance(v, int):
        return str(v)
    return f"{v.buffer.name}[{v.indices[0].value}]"


def _extra_call(path: str, args: tuple[Any, ...]) -> Any:
    obj: Any = T
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj(*args)


def _check(func: PrimFunc, expected: str) -> None:
    text = func.script()
    assert _line(text) == expected, text
    back = from_source(text)
    assert_structural_equal(func, back)
    assert back.script() == text


def _params_with(extra: list[Var]) -> tuple[list[Var], dict[Var, Buffer]]:
    params, bmap = _params()
    return params + extra, bmap


@pytest.mark.parametrize("build, expected, op_name", CASES, ids=[c[1][:60] for c in CASES])
def test_seed_printed_form(cuda_ns: None, build: Any, expected: str, op_name: str) -> None:
    call = build()
    assert isinstance(call, Call) and call.op.name == op_name
    op = Op.get(op_name)
    assert op.category is OpCategory.DEVICE_INTRIN
    assert op.namespace == op_name.split(".")[1]
    assert expected.startswith(f"T.{op.printer_name}(")
    _check(_func(call), expected)


@pytest.mark.parametrize("path, args", EXTRA, ids=[e[0] for e in EXTRA])
def test_every_other_op_prints_and_round_trips(cuda_ns: None, path: str, args: tuple) -> None:
    call = _extra_call(path, args)
    op = call.op
    assert op.printer_name == path and op.category is OpCategory.DEVICE_INTRIN
    assert op.namespace == path.split(".")[0]
    params, bmap = _params_with([x, y, u, ul])
    func = PrimFunc(params, Evaluate(call), bmap, name="f")
    _check(func, f"T.{path}({', '.join(_fmt(v) for v in args)})")


def test_the_tables_cover_every_op(cuda_ns: None) -> None:
    covered = {c[2] for c in CASES} | {_extra_call(p, a).op.name for p, a in EXTRA}
    ours = {o.name for o in Op.list("tirx.") if o.namespace in ("cuda", "ptx", "nvshmem")}
    assert ours - covered == set()
    assert len(ours) == 183  # issue 22: cuda.float22half2_rn, cuda.half22float2, ptx.tanh;
    # issue 23: ptx.red_add_f32_vec; issue 28: cuda.cast_vec2, ptx.{add,sub,mul,fma}_packed_f32x2


def test_builders_and_seed_op_names(cuda_ns: None) -> None:
    assert T.ptx.elect_sync().op.name == "tirx.ptx.elect_sync"
    assert T.cuda.thread_fence().op.name == "tirx.cuda.thread_fence"
    assert T.nvshmem.fence().op.name == "tirx.nvshmem.fence"
    assert T.cuda.copy_bytes(d, s, 16).op.name == "tirx.cuda.copy_bytes"
    assert T.cuda.warp_sum(x).args[1].value == "sum"
    assert T.cuda.copy_128b(d, s).args[2].value == 16
    assert T.ptx.fetch_register(64, "globaltimer").dtype == "int64"
    assert T.cuda.ldg(p, "float16").dtype == "float16"
    assert T.cuda.atomic_add(p, x).dtype == "float32"
    assert str(T.cuda.__shfl_xor_sync(u, x, 1, 32).dtype) == "float32"
    assert Op.get("tirx.cuda.__shfl_xor_sync").printer_name == "cuda.__shfl_xor_sync"
    # user-facing keyword forms build the same call as the printed raw form
    kw = T.ptx.tcgen05.ld(a, R[0], R[1], shape="32x32b", num=2)
    raw = T.ptx.tcgen05.ld(a, 0, 0, "32x32b", 2, False, R[0], R[1])
    assert_structural_equal(kw, raw)
    with pytest.raises(ValueError, match="cta_group"):
        T.ptx.tcgen05.alloc(s, 64, 3)
    with pytest.raises(ValueError, match="sig_op"):
        T.nvshmem.signal_op(p, 1, "mul", 0)


def test_script_kernel_with_several_intrinsics(cuda_ns: None) -> None:
    @T.prim_func
    def k(A: T.Buffer((16,), "float32"), bar: T.handle, s: T.handle, r: T.handle):
        T.ptx.mbarrier.init(bar, 1)
        T.ptx.fence.mbarrier_init()
        T.ptx.ldmatrix(T.bool(False), 1, ".b16", s, r)
        A[0] = T.cuda.atomic_add(A.data, T.float32(1.0))
        T.cuda.func_call("g", 2, source_code="__device__ void g(int){}")

    text = k.script()
    back = from_source(text)
    assert_structural_equal(k, back)
    assert back.script() == text
    assert "T.cuda.atomic_add(A.data, T.float32(1.0))" in text
    assert isinstance(k.body, SeqStmt)


def test_device_intrinsics_carry_the_seed_op_attributes():
    from tvm.ir import Op

    assert Op.get("tirx.ptx.elect_sync").get_attr("TIRxOpCategory") == "device_intrin"
    assert Op.get("tirx.ptx.elect_sync").get_attr("TDeviceIntrinsicNamespace") == "ptx"


def test_script_namespaces_on_the_seed_builder_and_parser_paths():
    from tvm.script import tirx as T
    from tvm.tirx.script import builder, parser
    from tvm.tirx.script.builder import ir

    assert parser.cuda is builder.cuda is ir.cuda is T.cuda
    with pytest.raises(AttributeError, match="module 'tvm.tirx.script.parser' has no attribute"):
        parser.no_such_namespace  # noqa: B018
