"""Codegen rules of the CUDA intrinsics: golden text for representative calls, and every op's
emitted code compiled by NVRTC inside a small hand-written kernel, for sm_80, sm_90a and
sm_100a (an op is compiled for every arch at least its ``min_arch``)."""

from __future__ import annotations

from typing import Any

import pytest

from tvm.error import TVMError
from tvm.ir import Buffer, Call, Op, Var
from tvm.script import tirx as T


def render(call: Call, arch: int = 90) -> tuple[str, dict[str, str], list[str]]:
    from tvm_backend_cuda.intrinsics import render as _render

    return _render(call, arch)


H = {n: Var(n, "handle") for n in ("s", "r", "p", "d", "a", "tm", "bar", "sh", "gl", "ip", "hp")}
s, r, p, d, a, tm, bar, sh, gl, ip, hp = H.values()
x, y = Var("x", "float32"), Var("y", "float32")
u, u2 = Var("u", "uint32"), Var("u2", "uint32")
ul = Var("ul", "uint64")
i = Var("i", "int32")
A = Buffer("A", (16,), "float32")
R = Buffer("R", (16,), "uint32")
ACC = Buffer("ACC", (64,), "float32")


def _ns(path: str) -> Any:
    obj: Any = T
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


# -- golden text -------------------------------------------------------------------------------------
def test_golden_simple_statements(cuda_ns: None) -> None:
    assert render(T.cuda.thread_fence())[0] == "tvm_builtin_cuda_thread_fence()"  # the seed's
    assert render(T.cuda.cta_sync())[0] == "__syncthreads()"
    assert (
        render(T.ptx.wgmma.commit_group())[0]
        == 'asm volatile("wgmma.commit_group.sync.aligned;" : : : "memory")'
    )
    assert (
        render(T.ptx.cp_async.wait_group(1))[0]
        == 'asm volatile("cp.async.wait_group 1;" : : : "memory")'
    )
    assert (
        render(T.ptx.fence.proxy_async("shared::cta"))[0]
        == 'asm volatile("fence.proxy.async.shared::cta;" : : : "memory")'
    )
    # named barriers call a helper of the seed's name (issue 28), which holds the asm
    text, helpers, _ = render(T.ptx.bar.sync(1, 128))
    assert text == "tvm_builtin_ptx_bar_sync(1, 128)"
    assert 'asm volatile("bar.sync %0, %1;" : : "r"(name_bar_id), "r"(thread_count) : "memory")' \
        in helpers["tvm_builtin_ptx_bar_sync"]
    assert render(T.cuda.__shfl_xor_sync(u, x, 16, 32))[0] == "__shfl_xor_sync(u, x, 16, 32)"
    assert render(T.cuda.func_call("f", i, source_code="__device__ int f(int v){return v;}")) == (
        "f(i)",
        {"f": "__device__ int f(int v){return v;}"},
        [],
    )


def test_golden_ldmatrix_mma_cp_async(cuda_ns: None) -> None:
    text, _, _ = render(T.ptx.ldmatrix(True, 4, ".b16", s, R[0], R[1], R[2], R[3]))
    assert text == (
        'asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" : '
        '"=r"((*(unsigned*)(&(R[0])))), "=r"((*(unsigned*)(&(R[1])))), '
        '"=r"((*(unsigned*)(&(R[2])))), "=r"((*(unsigned*)(&(R[3])))) : '
        '"r"((unsigned)__cvta_generic_to_shared((void*)(s))) : "memory")'
    )
    mma = T.ptx.mma(
        "m16n8k16", "row", "col", "fp32", "fp16", "fp16", "fp32", [d] * 4, [r] * 4, [r] * 2, [d] * 4
    )
    # one __device__ helper per instruction form holds the PTX; D's registers by reference
    text, helpers, _ = render(mma)
    name = "ptx_mma_m16n8k16_row_col_f32_f16_f16_f32"
    assert text.startswith(f"{name}((*(float*)(d)), ")
    assert helpers[name].startswith(
        f"__device__ __forceinline__ void {name}(float &d0, float &d1, float &d2, float &d3, "
        "unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1, float c0, "
        "float c1, float c2, float c3) {\n"
        '  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, '
        '{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};" : "=f"(d0)'
    )
    assert render(T.ptx.cp_async(sh, gl, 16))[0] == (
        'asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" : : '
        '"r"((unsigned)__cvta_generic_to_shared((void*)(sh))), "l"((unsigned long long)(gl)) : '
        '"memory")'
    )
    # the legacy five-operand form: pointers plus offsets in elements of the call's type
    text, _, headers = render(T.ptx.cp_async("float16", sh, i, gl, 8, 16), 80)
    assert text == (
        'asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" : : '
        '"r"((unsigned)__cvta_generic_to_shared((((half*)(sh)) + (i)))), '
        '"l"((unsigned long long)((((half*)(gl)) + (8)))) : "memory")'
    )
    assert headers == ["cuda_fp16.h"]
    assert render(T.ptx.cp_async.legacy("int32", sh, 4, gl, 0, 4), 80)[0] == (
        'asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" : : '
        '"r"((unsigned)__cvta_generic_to_shared((((int*)(sh)) + (4)))), '
        '"l"((unsigned long long)((((int*)(gl)) + (0)))) : "memory")'
    )


def test_golden_tma_mbarrier_tcgen05(cuda_ns: None) -> None:
    text = render(T.ptx.cp_async.bulk.tensor.g2c(2, sh, bar, tm, 0, 1, "", i, i))[0]
    assert (
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
        "[%0], [%1, {%3, %4}], [%2];"
    ) in text
    assert render(T.ptx.mbarrier.arrive.expect_tx(bar, 1024))[0] == (
        'asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" : : '
        '"r"((unsigned)__cvta_generic_to_shared((void*)(bar))), "r"((unsigned)(1024)) : "memory")'
    )
    text, helpers, _ = render(T.ptx.mbarrier.try_wait(bar, 0))
    assert text.startswith("tvm_mbarrier_wait(") and "tvm_mbarrier_wait" in helpers
    assert render(T.ptx.tcgen05.commit(bar, 1, 0))[0] == (
        'asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 '
        '[%0];" : : "r"((unsigned)__cvta_generic_to_shared((void*)(bar))) : "memory")'
    )
    # kind::f16, D f32, A/B f16, K-major, N=256, M=128
    desc = render(
        T.ptx.tcgen05.encode_instr_descriptor(
            d,
            d_dtype="f32",
            a_dtype="f16",
            b_dtype="f16",
            M=128,
            N=256,
            K=16,
            trans_a=False,
            trans_b=False,
        )
    )[0]
    assert desc == f"*((unsigned*)(d)) = {(1 << 4) | (32 << 17) | (8 << 24):#010x}u"


def test_nvshmem_requests_its_header_only_when_used(cuda_ns: None) -> None:
    text, _, headers = render(T.nvshmem.putmem_signal_nbi(p, p, 16, p, 1, "set", i))
    assert text == (
        "nvshmem_putmem_signal_nbi((void*)(p), (const void*)(p), (size_t)(16), "
        "((uint64_t*)(p)), (uint64_t)(1), NVSHMEM_SIGNAL_SET, i)"
    )
    assert headers == ["nvshmem.h", "nvshmemx.h"]
    assert render(T.cuda.thread_fence())[2] == []
    assert (
        render(T.nvshmem.wait_until(p, "ge", 3))[0]
        == "nvshmem_uint64_wait_until(((uint64_t*)(p)), NVSHMEM_CMP_GE, (uint64_t)(3))"
    )


def test_unsupported_variants_fail_clearly(cuda_ns: None) -> None:
    with pytest.raises(TVMError, match="ptx.wgmma_mma_async_ss.*m64nNk"):
        render(
            T.ptx.wgmma.mma_async.ss(
                d,
                d,
                M=16,
                N=16,
                K=16,
                in_dtype="f16",
                out_dtype="f32",
                transA=False,
                transB=False,
                scaleA=1,
                scaleB=1,
                scaleD=True,
            )
        )
    with pytest.raises(TVMError, match="register count"):
        render(T.ptx.setmaxnreg(True, 20))


# -- NVRTC compiles of every op -------------------------------------------------------------------------
ACC32 = [ACC[k] for k in range(32)]
# (path under T, operands) for one call of every op, on the kernel's variables below
COMPILE: list[tuple[str, tuple[Any, ...]]] = [
    ("cuda.thread_fence", ()),
    ("cuda.warp_sync", ()),
    ("cuda.cta_sync", ()),
    ("cuda.grid_sync", ()),
    ("cuda.cluster_sync", ()),
    ("cuda.warpgroup_sync", (1,)),
    ("cuda.thread_rank", ()),
    ("cuda.syncthreads_and", (i,)),
    ("cuda.syncthreads_or", (i,)),
    ("cuda.syncthreads_count", (i,)),
    ("cuda.nano_sleep", (100,)),
    ("cuda.trap_when_assert_failed", (i,)),
    ("cuda.atomic_add", (p, x)),
    ("cuda.atomic_cas", (ip, i, 2)),
    ("cuda.ldg", (p, "float32")),
    ("cuda.printf", ("x=%d %f\\n", i, x)),
    ("cuda.half2float", (hp,)),
    ("cuda.bfloat162float", (hp,)),
    ("cuda.float22half2", (d, p)),
    ("cuda.cast_vec2", (hp, p, "float32", "float16")),
    ("cuda.half8tofloat8", (hp, d)),
    ("cuda.float8tohalf8", (d, hp)),
    ("cuda.runtime_instr_desc", (d, 1)),
    ("cuda.get_tmem_addr", (u, 0, 32)),
    ("cuda.cvta_generic_to_shared", (s,)),
    ("cuda.smem_addr_from_uint64", (ul,)),
    ("cuda.uint_as_float", (u,)),
    ("cuda.float_as_uint", (x,)),
    ("cuda.ballot_sync", (u, i)),
    ("cuda.ffs_u32", (u,)),
    ("cuda.reduce_add_sync_u32", (u, u2)),
    ("cuda.reduce_min_sync_u32", (u, u2)),
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
    ("cuda.hmin2", (u, u2)),
    ("cuda.hmax2", (u, u2)),
    ("cuda.fp8x4_e4m3_from_float4", (x, y, x, y)),
    ("cuda.warp_reduce", (x, "max", 16)),
    ("cuda.cta_reduce", (x, "sum", 4, s)),
    ("cuda.copy_bytes", (d, p, 16)),
    ("cuda.timer_init", (gl, ip, ip, 4, i)),
    ("cuda.timer_start", (3, gl, ip, ip, 4, i)),
    ("cuda.timer_end", (3, gl, ip, ip, 4, i)),
    ("cuda.timer_finalize", (gl, ip, ip, 4, i)),
    ("cuda.mma_store", ("float32", 16, 16, p, d, 0, 16)),
    ("cuda.mma_store_legacy", ("float32", 16, 8, p, d, 0, 8)),
    ("cuda.mma_fill", ("float32", 8, d, 0)),
    ("cuda.mma_fill_legacy", ("float32", 4, d, 4)),
    ("cuda.__shfl_sync", (u, x, 0, 32)),
    ("cuda.__shfl_up_sync", (u, i, 1, 32)),
    ("cuda.__shfl_down_sync", (u, x, 1, 16)),
    ("cuda.__shfl_xor_sync", (u, x, 16, 32)),
    ("cuda.__activemask", ()),
    ("ptx.ldg32", (R[0], i, A[0], 0)),
    ("ptx.elect_sync", ()),
    ("ptx.setmaxnreg", (True, 232)),
    ("ptx.fetch_register", (32, "laneid")),
    ("ptx.fetch_register", (64, "globaltimer")),
    ("ptx.ld", (p, 0, "uint32", 0, "global", "", "u32", 0)),
    ("ptx.ld", (p, ul, "uint64", 1, "global", "", "u64", 1)),
    ("ptx.ld_acquire", (p, "uint32", "b32", "gpu", "global")),
    ("ptx.ld_volatile", (p, "int32", "s32", "global")),
    ("ptx.ld_global_acquire", (d, p)),
    ("ptx.red_scalar", (p, u, 0, "", "gpu", "global", "add", "u32", 0)),
    ("ptx.red_add_f32_vec", (p, x, y, x, y)),
    ("ptx.red_add_f32_vec", (p, x, y)),
    ("ptx.atom_scalar", (p, u, 0, "relaxed", "gpu", "global", "add", "u32", 0)),
    ("ptx.prefetch_tensormap", (tm, "")),
    ("ptx.mbarrier_test_wait_parity", (bar, 0, "", "", "shared::cta")),
    ("ptx.cp_async_bulk_g2s_cta", (sh, gl, 1024, 0, 0, bar, 0, 0, 0)),
    ("ptx.cp_async_bulk_g2s_cluster", (sh, gl, 1024, bar, 3, ul, 1, 1)),
    ("ptx.cp_async_bulk_s2s_cluster", (u, sh, 128, u2)),
    ("ptx.cp_async_bulk_s2g", (gl, sh, 1024, 0, 0, 0, 0)),
    ("ptx.st", (sh, u, u2, 0, 0, "shared", "", "v2", "u32", 0)),
    ("ptx.st", (gl, x, ul, 0, "global", "", "", "f32", 1)),
    ("ptx.st_bulk", (sh, 256, 0, "shared::cta")),
    ("ptx.fns_b32", (u, 0, 1)),
    ("ptx.add_rn_f32_bf16", (x, u)),
    ("ptx.mapa", (s, 1, "", "u64", "uint64")),
    ("ptx.mapa", (u, 1, "shared::cluster", "u32", "uint32")),
    ("ptx.any_sync", (u, i)),
    ("ptx.exp2", (x,)),
    ("ptx.rcp", (x,)),
    ("ptx.tanh", (x,)),
    ("ptx.reduce3_min_f32", (x, y, x)),
    ("ptx.reduce3_max_f32", (x, y, x)),
    ("ptx.max_f32", (x, y, 1, 1)),
    *[
        (f"ptx.{op}_{t}", (d, ul if t == "f32x2" else x, ul if t == "f32x2" else y, "rn", 0, 0))
        for op in ("add", "sub", "mul")
        for t in ("f32", "f32x2", "f64")
    ],
    *[
        (
            f"ptx.fma_{t}",
            (
                d,
                ul if t == "f32x2" else x,
                ul if t == "f32x2" else y,
                ul if t == "f32x2" else x,
                "rz",
                0,
                0,
            ),
        )
        for t in ("f32", "f32x2", "f64")
    ],
    *[(f"ptx.{op}_packed_f32x2", (d, p, p)) for op in ("add", "sub", "mul")],
    ("ptx.fma_packed_f32x2", (d, p, p, p)),
    ("ptx.ldmatrix", (False, 4, ".b16", s, R[0], R[1], R[2], R[3])),
    ("ptx.ldmatrix", (True, 2, ".b16", s, R[4], R[5])),
    ("ptx.ldmatrix_legacy", ("float16", True, 4, ".b16", d, 0, s, 8)),
    ("ptx.stmatrix", (False, 4, ".b16", "m8n8", "shared", s, R[0], R[1], R[2], R[3])),
    (
        "ptx.mma",
        (
            "m16n8k16",
            "row",
            "col",
            "fp32",
            "fp16",
            "fp16",
            "fp32",
            4,
            4,
            2,
            4,
            False,
            *[ACC.data] * 4,
            *[r] * 6,
            *[ACC.data] * 4,
            False,
        ),
    ),
    (
        "ptx.mma",
        (
            "m16n8k16",
            "row",
            "col",
            "fp32",
            "bf16",
            "bf16",
            "fp32",
            4,
            4,
            2,
            0,
            True,
            *[ACC.data] * 4,
            *[r] * 6,
            False,
        ),
    ),
    (
        "ptx.mma",
        (
            "m16n8k8",
            "row",
            "col",
            "fp32",
            "fp16",
            "fp16",
            "fp32",
            4,
            2,
            1,
            4,
            False,
            *[ACC.data] * 4,
            *[r] * 3,
            *[ACC.data] * 4,
            False,
        ),
    ),
    (
        "ptx.mma",
        (
            "m16n8k8",
            "row",
            "col",
            "fp32",
            "bf16",
            "bf16",
            "fp32",
            4,
            2,
            1,
            4,
            False,
            *[ACC.data] * 4,
            *[r] * 3,
            *[ACC.data] * 4,
            False,
        ),
    ),
    (
        "ptx.mma.legacy",
        ("float32", "m16n8k16", "row", "col", "fp16", "fp16", "fp32", hp, 0, hp, 8, d, 0, False),
    ),
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
            hp,
            0,
            hp,
            0,
            d,
            0,
            r,
            0,
            0,
            False,
        ),
    ),
    ("ptx.cp_async", (sh, gl, 16, 0, 0, -1, -1, "")),
    ("ptx.cp_async", (sh, gl, 8, ul, 1, 128, i, "zero")),
    ("ptx.cp_async", (sh, gl, 4, 0, 0, -1, i, "")),
    ("ptx.cp_async.legacy", ("float16", sh, 0, gl, 8, 16)),
    ("ptx.cp_async.commit_group", ()),
    ("ptx.cp_async.wait_group", (0,)),
    ("ptx.cp_async.mbarrier.arrive", (bar,)),
    ("ptx.cp_async.bulk", ("float16", sh, 0, gl, 0, 1024, bar)),
    ("ptx.cp_async.bulk.commit_group", ()),
    ("ptx.cp_async.bulk.wait_group", (0, True)),
    ("ptx.cp_async.bulk.s2c", (u, sh, 128, u2)),
    ("ptx.cp_async.bulk.tensor.g2c", (2, sh, bar, tm, 0, 1, 0, 0, i, i)),
    ("ptx.cp_async.bulk.tensor.g2c", (3, sh, bar, tm, 3, 1, ul, 1, i, i, i)),
    ("ptx.cp_async.bulk.tensor.g2c_tile_gather4", (2, sh, bar, tm, 0, 1, 0, 0, i, i, i, i, i)),
    ("ptx.cp_async.bulk.tensor.g2c_prefetch", (2, tm, 0, 0, i, i)),
    ("ptx.cp_async.bulk.tensor.s2g", (2, sh, tm, 0, 0, i, i)),
    ("ptx.cp_async.bulk.tensor.s2g_reduce", (2, sh, tm, ul, 1, "add", i, i)),
    ("ptx.mbarrier.init", (bar, 128)),
    ("ptx.mbarrier.arrive", (bar,)),
    ("ptx.mbarrier.arrive.expect_tx", (bar, 1024)),
    ("ptx.mbarrier.arrive.expect_tx", (bar, 1024, 1, i)),
    ("ptx.mbarrier.try_wait", (bar, 0)),
    ("ptx.mbarrier.try_wait_once", (bar, 1, 1000)),
    ("ptx.bar.sync", (1, 128)),
    ("ptx.bar.arrive", (1, 128)),
    ("ptx.barrier.cluster.arrive", ("release", True)),
    ("ptx.barrier.cluster.wait", (True, True)),
    ("ptx.fence", ("acq_rel", "gpu")),
    ("ptx.fence.proxy_async", ("shared::cta",)),
    ("ptx.fence.mbarrier_init", ()),
    ("ptx.griddepcontrol.wait", ()),
    ("ptx.griddepcontrol.launch_dependents", ()),
    ("ptx.wgmma.fence", ()),
    ("ptx.wgmma.commit_group", ()),
    ("ptx.wgmma.wait_group", (1,)),
    ("ptx.wgmma.noop_barrier", (ACC[0],)),
    ("ptx.wgmma.encode_matrix_descriptor", (d, s, 16, 1024, 3)),
    (
        "ptx.wgmma.mma_async.ss",
        (64, 64, 16, "f16", "f32", False, True, 1.0, 1.0, i, ul, ul, *ACC32),
    ),
    (
        "ptx.wgmma.mma_async.ss",
        (64, 32, 32, "e4m3", "f32", False, False, 1.0, -1.0, 1, ul, ul, *ACC32[:16]),
    ),
    (
        "ptx.wgmma.mma_async.rs",
        (
            64,
            16,
            16,
            "bf16",
            "f32",
            False,
            False,
            1.0,
            1.0,
            1,
            ul,
            R[0],
            R[1],
            R[2],
            R[3],
            *ACC32[:8],
        ),
    ),
    ("ptx.tcgen05.alloc", (s, 128, 1)),
    ("ptx.tcgen05.dealloc", (u, 128, 1)),
    ("ptx.tcgen05.encode_matrix_descriptor", (d, s, 16, 1024, 3)),
    (
        "ptx.tcgen05.encode_instr_descriptor",
        (d, "f32", "bf16", "bf16", 128, 128, 16, False, True, 1, False, False, False, False),
    ),
    (
        "ptx.tcgen05.encode_instr_descriptor_block_scaled",
        (
            d,
            "f32",
            "e4m3",
            "e4m3",
            "ue8m0",
            "ue8m0",
            u,
            u2,
            128,
            128,
            32,
            False,
            False,
            1,
            False,
            False,
            False,
        ),
    ),
    ("ptx.tcgen05.ld", (u, 0, 0, "32x32b", 4, False, R[0], R[1], R[2], R[3])),
    ("ptx.tcgen05.ld", (u, 32, 8, "16x128b", 1, True, R[0], R[1])),
    ("ptx.tcgen05.st", (u, 0, 0, "16x256b", 1, False, R[0], R[1], R[2], R[3])),
    ("ptx.tcgen05.wait.ld", ()),
    ("ptx.tcgen05.wait.st", ()),
    ("ptx.tcgen05.relinquish_alloc_permit", (1,)),
    ("ptx.tcgen05.commit", (bar, 1, 0)),
    ("ptx.tcgen05.cp", (u, ul, "128x256b", 1, "", "", 0, 0)),
    ("ptx.tcgen05.shift", (u, 1)),
    ("ptx.tcgen05.fence.before_thread_sync", ()),
    ("ptx.tcgen05.fence.after_thread_sync", ()),
    ("ptx.tcgen05.mma", ("f32", "f16", "f16", u, ul, ul, u2, False, 1, i, 0, 0, 0, 0, 0)),
    ("ptx.tcgen05.mma", ("f32", "e4m3", "e4m3", u, ul, ul, u2, False, 1, 1, 0, 0, 0, 0, 0)),
    ("ptx.tcgen05.mma.sp", ("f32", "f16", "f16", u, ul, ul, u2, u2, False, 1, 1, 0, 0, 0, 0, 0)),
    (
        "ptx.tcgen05.mma.block_scale",
        ("f32", "e4m3", "e4m3", "ue8m0", "ue8m0", u, ul, ul, u, u2, u2, False, 1, 1),
    ),
    (
        "ptx.tcgen05.mma.sp.block_scale",
        ("f32", "e4m3", "e4m3", "ue8m0", "ue8m0", u, ul, ul, u, u2, u2, u2, False, 1, 1),
    ),
]
# forms of sm_80 ops that need sm_90 (cluster scope)
COMPILE_SM90: list[tuple[str, tuple[Any, ...]]] = [
    ("ptx.mbarrier.arrive", (bar, 1, i)),
    ("ptx.fence", ("sc", "cluster")),
]
# cta_group::2 forms: a kernel uses one CTA granularity, so these compile in a kernel of their own
COMPILE_CTA_PAIR: list[tuple[str, tuple[Any, ...]]] = [
    ("ptx.cp_async.bulk.tensor.g2c", (2, sh, u, tm, 0, 2, 0, 0, i, i)),
    ("ptx.tcgen05.alloc", (s, 128, 2)),
    ("ptx.tcgen05.relinquish_alloc_permit", (2,)),
    ("ptx.tcgen05.commit", (bar, 2, 3, i)),
    ("ptx.tcgen05.cp", (u, ul, "64x128b", 2, "warpx2::02_13", "", 32, 0)),
    ("ptx.tcgen05.mma", ("f32", "bf16", "bf16", u, u, ul, u2, True, 2, 1, 0, *[u] * 8, i)),
    ("ptx.tcgen05.dealloc", (u, 128, 2)),
]
NVSHMEM: list[tuple[str, tuple[Any, ...]]] = [
    ("nvshmem.my_pe", ()),
    ("nvshmem.n_pes", ()),
    ("nvshmem.quiet", ()),
    ("nvshmem.fence", ()),
    ("nvshmem.barrier_all", ()),
    ("nvshmem.signal_op", (p, ul, "add", i)),
    ("nvshmem.wait_until", (p, "eq", ul, "uint64_t")),
    ("nvshmem.wait_until", (ip, "lt", i, "int")),
    *[
        (f"nvshmem.{w}{g}", (p, gl, 64, i))
        for w in ("getmem_nbi", "putmem_nbi")
        for g in ("", ".warp", ".block")
    ],
    *[
        (f"nvshmem.putmem_signal_nbi{g}", (p, gl, 64, p, 1, "set", i))
        for g in ("", ".warp", ".block")
    ],
]

_PRELUDE = """\
struct alignas(64) TensorMapStandIn { unsigned char bytes[128]; };
"""
_KERNEL = """\
extern "C" __global__ void __launch_bounds__(128) k(float* A, unsigned* R_out, void* p, void* gl,
    int* ip, void* hp, const __grid_constant__ TensorMapStandIn tmap, float x, float y,
    unsigned u, unsigned u2, unsigned long long ul, int i) {
  __shared__ alignas(1024) unsigned char smem[8192];
  __shared__ unsigned long long barm[4];
  void* s = smem;
  void* sh = smem + 4096;
  void* bar = barm;
  void* tm = (void*)&tmap;
  unsigned R[16];
  float ACC[64];
  unsigned long long dbuf[16];
  unsigned regs[8];
  void* d = dbuf;
  void* r = regs;
  for (int k = 0; k < 16; ++k) { R[k] = R_out[k]; dbuf[k] = R_out[k]; }
  for (int k = 0; k < 64; ++k) ACC[k] = A[k & 15];
  for (int k = 0; k < 8; ++k) regs[k] = R_out[k];
  unsigned long long sink = 0;
BODY
  for (int k = 0; k < 16; ++k) R_out[k] = R[k] + (unsigned)dbuf[k] + regs[k & 7];
  for (int k = 0; k < 64; ++k) A[k & 15] += ACC[k];
  R_out[0] += (unsigned)sink;
}
"""


def _kernel(calls: list[Call], arch: int, extra_prelude: str = "") -> str:
    from tvm_backend_cuda.intrinsics import SnippetEmit

    emit = SnippetEmit(arch)
    lines = []
    for call in calls:
        text = emit(call)
        if call.op.infer_dtype(call.args).is_void:  # a statement (the legacy cp.async is typed)
            lines.append(f"  {text};")
        else:
            lines.append(f"  sink += (unsigned long long)({text});")
    from tvm_backend_cuda.codegen import FIXED_WIDTH_INT_TYPEDEFS, uses_undeclared_int_types

    includes = "".join(f"#include <{h}>\n" for h in emit.ctx.headers)
    helpers = "\n".join(emit.ctx.helpers.values())
    body = _KERNEL.replace("BODY", "\n".join(lines))
    if uses_undeclared_int_types(helpers, list(emit.ctx.headers)):  # as the code generator
        includes += FIXED_WIDTH_INT_TYPEDEFS + "\n"
    return f"{includes}{extra_prelude}{_PRELUDE}{helpers}\n{body}"


_ARCHS = [("sm_80", 80), ("sm_90a", 90), ("sm_100a", 100)]


@pytest.mark.parametrize("arch, sm", _ARCHS)
def test_every_intrinsic_compiles_with_nvrtc(cuda_ns: None, arch: str, sm: int) -> None:
    from tvm_backend_cuda.compiler import compile_cuda

    table = COMPILE + (COMPILE_SM90 if sm >= 90 else [])
    calls = [_ns(path)(*args) for path, args in table]
    calls.append(
        T.cuda.func_call(
            "tvm_user_f", i, source_code="__device__ int tvm_user_f(int v) { return v + 1; }"
        )
    )
    usable = [
        c
        for c in calls
        if c.op.get_attr("min_arch", 0) <= sm and (c.op.get_attr("max_arch") or sm) >= sm
    ]
    skipped = {c.op.name for c in calls} - {c.op.name for c in usable}
    if sm == 80:
        assert "tirx.ptx.tcgen05_mma" in skipped and "tirx.ptx.wgmma_fence" in skipped
    if sm == 100:
        assert {n for n in skipped} == {o.name for o in Op.list("tirx.ptx.wgmma")}
    src = _kernel(usable, sm)
    result = compile_cuda(src, arch, cache=False)
    assert result.cubin, result.log


def test_cta_pair_forms_compile_for_sm100a(cuda_ns: None) -> None:
    from tvm_backend_cuda.compiler import compile_cuda

    calls = [_ns(path)(*args) for path, args in COMPILE_CTA_PAIR]
    src = _kernel(calls, 100)
    assert ".cta_group::2" in src and "cta_group::1" not in src
    assert compile_cuda(src, "sm_100a", cache=False).cubin


_NVSHMEM_STUB = """\
// stand-in declarations with NVSHMEM's device API signatures (the header is not a wheel here)
typedef unsigned long long uint64_t;
#define NVSHMEM_SIGNAL_SET 0
#define NVSHMEM_SIGNAL_ADD 5
#define NVSHMEM_CMP_EQ 0
#define NVSHMEM_CMP_NE 1
#define NVSHMEM_CMP_GT 2
#define NVSHMEM_CMP_LE 3
#define NVSHMEM_CMP_LT 4
#define NVSHMEM_CMP_GE 5
__device__ int nvshmem_my_pe();
__device__ int nvshmem_n_pes();
__device__ void nvshmem_quiet();
__device__ void nvshmem_fence();
__device__ void nvshmem_barrier_all();
__device__ void nvshmemx_signal_op(uint64_t*, uint64_t, int, int);
__device__ void nvshmem_uint64_wait_until(uint64_t*, int, uint64_t);
__device__ void nvshmem_int_wait_until(int*, int, int);
#define MEM(n) __device__ void n(void*, const void*, size_t, int);
MEM(nvshmem_getmem_nbi) MEM(nvshmemx_getmem_nbi_warp) MEM(nvshmemx_getmem_nbi_block)
MEM(nvshmem_putmem_nbi) MEM(nvshmemx_putmem_nbi_warp) MEM(nvshmemx_putmem_nbi_block)
#define SIG(n) __device__ void n(void*, const void*, size_t, uint64_t*, uint64_t, int, int);
SIG(nvshmem_putmem_signal_nbi) SIG(nvshmemx_putmem_signal_nbi_warp)
SIG(nvshmemx_putmem_signal_nbi_block)
"""


def test_nvshmem_calls_compile_against_the_api_signatures(cuda_ns: None) -> None:
    from tvm_backend_cuda.compiler import compile_ptx

    calls = [_ns(path)(*args) for path, args in NVSHMEM]
    src = _kernel(calls, 80, _NVSHMEM_STUB)
    assert "#include <nvshmem.h>" in src
    src = src.replace("#include <nvshmem.h>\n", "").replace("#include <nvshmemx.h>\n", "")
    ptx = compile_ptx(src, "sm_80", options=["-rdc=true"])
    assert "nvshmem_putmem_signal_nbi" in ptx


def test_compile_table_covers_every_op(cuda_ns: None) -> None:
    covered = {_ns(p)(*a).op.name for p, a in COMPILE + NVSHMEM} | {"tirx.cuda.func_call"}
    ours = {o.name for o in Op.list("tirx.") if o.namespace in ("cuda", "ptx", "nvshmem")}
    assert ours - covered == set()
