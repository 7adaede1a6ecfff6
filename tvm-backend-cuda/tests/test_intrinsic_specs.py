"""The intrinsic declarations (``intrinsics/<family>.py``) and what is derived from them: for every
declared intrinsic a builder, a script path, a printed form that round-trips, a codegen rule and
the seed's flat op name; the seed's own printer expectations for T.cuda / T.ptx / T.nvshmem
(its ``test_printer_tir_namespaces.py``, restated); a kernel using a sample of them, generated
by the CUDA codegen and compiled by NVRTC for sm_90a."""

from __future__ import annotations

import inspect
from typing import Any, no_type_check

import pytest
import test_intrinsic_codegen as tables

import tvm
from tvm.error import RequirementError
from tvm.ir import (
    Call,
    Evaluate,
    IntImm,
    Op,
    OpCategory,
    PrimFunc,
    SeqStmt,
    Var,
    assert_structural_equal,
)
from tvm.script import from_source
from tvm.script import tirx as T
from tvm.tirx.op import call_intrin
from tvm_backend_cuda import op as cuda_op
from tvm_backend_cuda.intrinsics import IntrinSpec, all_specs, all_sugar, builders
from tvm_backend_cuda.intrinsics._spec import spec_at
from tvm_backend_cuda.plugin import register_backend

register_backend()  # for the NVRTC kernel below; the cuda_ns fixture registers over it

H, A, R, ACC = tables.H, tables.A, tables.R, tables.ACC
x, y, u, u2, ul, i = tables.x, tables.y, tables.u, tables.u2, tables.ul, tables.i
render, _ns = tables.render, tables._ns
SPECS = all_specs()
# one example call (its raw operands) per path, from the NVRTC compile tables
EXAMPLES: dict[str, tuple[Any, ...]] = {}
for _path, _args in tables.COMPILE + tables.NVSHMEM:
    EXAMPLES.setdefault(_path, _args)
EXAMPLES["cuda.func_call"] = ("f", i, "__device__ int f(int v) { return v; }")


def _func(call: Call) -> PrimFunc:
    handles = {b: Var(f"{b.name}_handle", "handle") for b in (A, R, ACC)}
    params = [*H.values(), x, y, u, u2, ul, i, *handles.values()]
    return PrimFunc(params, Evaluate(call), {h: b for b, h in handles.items()}, name="f")


def _round_trip(func: PrimFunc) -> str:
    text = func.script()
    back = from_source(text)
    assert_structural_equal(func, back)
    assert back.script() == text
    return text


@pytest.mark.parametrize("spec", SPECS, ids=[s.path for s in SPECS])
def test_every_declared_intrinsic(cuda_ns: None, spec: IntrinSpec) -> None:
    op = Op.get(spec.name)
    assert op.category is OpCategory.DEVICE_INTRIN and op.namespace == spec.namespace
    # an alternative operand form (form_of=) prints as the op it is a form of
    assert op.printer_name == spec.printer_name == (spec.form_of or spec.path)
    # the builder of tvm_backend_cuda.op, with the declared signature
    builder = getattr(cuda_op, spec.builder_name)
    assert builder is spec.builder and builder.__name__ == spec.builder_name
    assert inspect.signature(builder) == spec.signature
    # the script path: T.<path> builds the op
    member = _ns(spec.path)
    assert member.__tir_op_name__ == (None if spec.form_of else spec.name)
    assert spec.path in EXAMPLES, f"no example for T.{spec.path}: add one to COMPILE"
    call = member(*EXAMPLES[spec.path])
    assert isinstance(call, Call) and call.op is op
    # the printed form, T.<printer path>(...), parses back to the same call and the same text
    text = _round_trip(_func(call))
    assert f"T.{spec.printer_name}(" in text and "T.call_intrin" not in text
    # the codegen rule, reached through the op's CUDA codegen attribute (the op's rule hands
    # an alternative form's calls to the form's rule)
    op_spec = spec_at(spec.form_of) if spec.form_of else spec
    assert op.get_codegen("cuda").__wrapped__ is op_spec.codegen_rule
    assert spec in op_spec.forms or spec.form_of is None
    arch = max(spec.min_arch, 80)
    code, _, _ = render(call, arch)
    assert code.strip()
    # the seed's flat name resolves to the same op (a form has none of its own)
    assert spec.alias is None or spec.form_of is None
    if spec.alias is not None:
        assert Op.get(spec.alias) is op
        assert call_intrin(call.dtype, spec.alias, *call.args).op is op


def test_the_spec_table_is_consistent() -> None:
    paths = [s.path for s in SPECS] + [s.path for s in all_sugar()]
    assert len(paths) == len(set(paths))
    own = [s for s in SPECS if s.form_of is None]  # the specs that declare an op
    assert len({s.name for s in own}) == len(own)
    assert {s.name for s in SPECS} == {s.name for s in own}
    assert [s.path for s in SPECS if s.form_of] == ["ptx.cp_async.legacy"]
    assert {s.namespace for s in SPECS} == {"cuda", "ptx", "nvshmem"}
    assert sorted(s.path for s in own if s.alias is None) == [
        "cuda.__activemask", "cuda.__shfl_down_sync", "cuda.__shfl_sync",
        "cuda.__shfl_up_sync", "cuda.__shfl_xor_sync",
    ]
    # op.py is the builder table: every spec's builder and the exported convenience builders
    assert set(cuda_op.__all__) == {"register_ops", *builders()}
    assert len(builders()) == len(SPECS) + sum(s.export for s in all_sugar())


def test_convenience_builders_have_paths_and_build_other_ops(cuda_ns: None) -> None:
    p, d, s, bar, tm = (H[k] for k in ("p", "d", "s", "bar", "tm"))
    assert T.cuda.warp_max(x, 16).op.name == "tirx.cuda.warp_reduce"
    assert T.cuda.cta_min(x, 4, s).args[1].value == "min"
    assert cuda_op.cuda_copy_64b(d, s).args[2].value == 8
    mapa = T.ptx.map_shared_rank(p, 2)
    assert mapa.op.name == "tirx.ptx.mapa" and len(mapa.args) == 5
    assert T.cuda.sm100_tma_2sm_mbarrier_addr(bar).op.name == "tirx.bitwise_and"
    g2c = T.ptx.cp_async.bulk.tensor.g2c_bar_addr(2, s, u, tm, 0, 1, "", i, i)
    assert g2c.op.name == "tirx.ptx.cp_async_bulk_tensor_global_to_cluster"
    assert not hasattr(cuda_op, "g2c_bar_addr")  # the seed has it on the namespace only


def test_builder_errors_name_the_builder_and_the_argument(cuda_ns: None) -> None:
    s, p = H["s"], H["p"]
    with pytest.raises(ValueError, match=r"ptx_tcgen05_alloc: invalid cta_group=3; expected one"):
        cuda_op.ptx_tcgen05_alloc(s, 64, 3)
    with pytest.raises(TypeError, match="cuda_ldg: dtype must be a str, got int"):
        cuda_op.cuda_ldg(p, 3)
    with pytest.raises(ValueError, match="unknown cache_hint 'evict_sometimes'"):
        cuda_op.ptx_cp_async(s, p, 16, cache_hint="evict_sometimes")
    with pytest.raises(TypeError, match="missing a required argument: 'num'"):
        cuda_op.ptx_tcgen05_ld(s, shape="32x32b")


# -- the seed's printer expectations (test_printer_tir_namespaces.py), restated ----------------
s_, r_, d_, a_, b_, p_ = (Var(n, "handle") for n in "srdabp")
bar_, tm_, sh_, gl_ = (Var(n, "handle") for n in ("bar", "tm", "sh", "gl"))
lane = Var("lane", "int32")
o = cuda_op
SEED: list[tuple[Any, str]] = [
    (lambda: o.cuda_printf("x=%d", IntImm("int32", 1)), 'T.cuda.printf("x=%d", 1)'),
    (lambda: o.ptx_wgmma_commit_group(), "T.ptx.wgmma.commit_group()"),
    (lambda: o.cuda_cluster_sync(), "T.cuda.cluster_sync()"),
    (lambda: o.ptx_cp_async_wait_group(IntImm("int32", 0)), "T.ptx.cp_async.wait_group(0)"),
    (lambda: o.nvshmem_fence(), "T.nvshmem.fence()"),
    (lambda: o.ptx_ldmatrix(True, 1, ".b16", s_, r_), 'T.ptx.ldmatrix(T.bool(True), 1, ".b16", s, r)'),
    (
        lambda: o.ptx_stmatrix(False, 1, ".b16", s_, r_),
        'T.ptx.stmatrix(T.bool(False), 1, ".b16", "m8n8", "shared", s, r)',
    ),
    (lambda: o.ptx_setmaxnreg(True, 64), "T.ptx.setmaxnreg(T.bool(True), 64)"),
    (lambda: o.ptx_fetch_register(32, "laneid"), 'T.ptx.fetch_register(32, "laneid")'),
    (lambda: o.ptx_wgmma_fence(), "T.ptx.wgmma.fence()"),
    (lambda: o.ptx_wgmma_wait_group(0), "T.ptx.wgmma.wait_group(0)"),
    (lambda: o.ptx_cp_async_commit_group(), "T.ptx.cp_async.commit_group()"),
    (lambda: o.ptx_cp_async_bulk_commit_group(), "T.ptx.cp_async.bulk.commit_group()"),
    (lambda: o.ptx_cp_async_bulk_wait_group(0, True), "T.ptx.cp_async.bulk.wait_group(0, T.bool(True))"),
    (lambda: o.ptx_cp_async_mbarrier_arrive(0), "T.ptx.cp_async.mbarrier.arrive(0)"),
    (lambda: o.ptx_fence("acq_rel", "gpu"), 'T.ptx.fence("acq_rel", "gpu")'),
    (lambda: o.ptx_fence("sc", "cta"), 'T.ptx.fence("sc", "cta")'),
    (lambda: o.ptx_fence_proxy_async("shared::cta"), 'T.ptx.fence.proxy_async("shared::cta")'),
    (lambda: o.ptx_fence_proxy_async("global"), 'T.ptx.fence.proxy_async("global")'),
    (lambda: o.ptx_fence_mbarrier_init(), "T.ptx.fence.mbarrier_init()"),
    (lambda: o.ptx_elect_sync(), "T.ptx.elect_sync()"),
    (lambda: o.ptx_ld_global_acquire(r_, s_), "T.ptx.ld_global_acquire(r, s)"),
    (lambda: o.ptx_map_shared_rank(r_, 2), 'T.ptx.mapa(r, 2, "", "u64", "uint64")'),
    (lambda: o.ptx_bar_arrive(0, 128), "T.ptx.bar.arrive(0, 128)"),
    (lambda: o.ptx_bar_sync(0, 128), "T.ptx.bar.sync(0, 128)"),
    (lambda: o.ptx_tcgen05_alloc(s_, 64, 1), "T.ptx.tcgen05.alloc(s, 64, 1)"),
    (lambda: o.ptx_tcgen05_dealloc(s_, 64, 1), "T.ptx.tcgen05.dealloc(s, 64, 1)"),
    (
        lambda: o.ptx_tcgen05_encode_matrix_descriptor(d_, a_, 1, 2, 0),
        "T.ptx.tcgen05.encode_matrix_descriptor(d, a, 1, 2, 0)",
    ),
    (
        lambda: o.ptx_tcgen05_encode_instr_descriptor(
            d_, d_dtype="f16", a_dtype="f16", b_dtype="f16", M=16, N=16, K=16, trans_a=True,
            trans_b=False, n_cta_groups=1, neg_a=False, neg_b=False, sat_d=False,
            is_sparse=False,
        ),
        'T.ptx.tcgen05.encode_instr_descriptor(d, "f16", "f16", "f16", 16, 16, 16, T.bool(True), '
        "T.bool(False), 1, T.bool(False), T.bool(False), T.bool(False), T.bool(False))",
    ),
    (
        lambda: o.ptx_tcgen05_encode_instr_descriptor_block_scaled(
            d_, d_dtype="f16", a_dtype="f16", b_dtype="f16", sfa_dtype="f16", sfb_dtype="f16",
            sfa_tmem_addr=a_, sfb_tmem_addr=b_, M=16, N=16, K=16, trans_a=True, trans_b=False,
            is_sparse=True, n_cta_groups=1, neg_a=False, neg_b=False,
        ),
        'T.ptx.tcgen05.encode_instr_descriptor_block_scaled(d, "f16", "f16", "f16", "f16", '
        '"f16", a, b, 16, 16, 16, T.bool(True), T.bool(False), 1, T.bool(False), T.bool(False), '
        "T.bool(True))",
    ),
    (
        lambda: o.ptx_tcgen05_cp(a_, d_, shape="64x128b", cta_group=1, multicast="warpx2::02_13"),
        'T.ptx.tcgen05.cp(a, d, "64x128b", 1, "warpx2::02_13", "", 0, 0)',
    ),
    (lambda: o.ptx_tcgen05_shift(a_, 1), "T.ptx.tcgen05.shift(a, 1)"),
    (
        lambda: o.ptx_tcgen05_ld(a_, 0, shape="16x64b", num=1, row=0, col=0, pack=False),
        'T.ptx.tcgen05.ld(a, 0, 0, "16x64b", 1, T.bool(False), 0)',
    ),
    (
        lambda: o.ptx_tcgen05_st(a_, 0, shape="16x64b", num=1, row=0, col=0, unpack=False),
        'T.ptx.tcgen05.st(a, 0, 0, "16x64b", 1, T.bool(False), 0)',
    ),
    (lambda: o.ptx_tcgen05_wait_ld(), "T.ptx.tcgen05.wait.ld()"),
    (lambda: o.ptx_tcgen05_wait_st(), "T.ptx.tcgen05.wait.st()"),
    (lambda: o.ptx_tcgen05_commit(a_, 1, 0), "T.ptx.tcgen05.commit(a, 1, 0)"),
    (lambda: o.ptx_tcgen05_relinquish_alloc_permit(1), "T.ptx.tcgen05.relinquish_alloc_permit(1)"),
    (lambda: o.ptx_mbarrier_init(bar_, 32), "T.ptx.mbarrier.init(bar, 32)"),
    (lambda: o.ptx_mbarrier_arrive(bar_), "T.ptx.mbarrier.arrive(bar)"),
    (lambda: o.ptx_mbarrier_arrive_expect_tx(bar_, 128), "T.ptx.mbarrier.arrive.expect_tx(bar, 128)"),
    (lambda: o.ptx_mbarrier_try_wait(bar_, 1), "T.ptx.mbarrier.try_wait(bar, 1)"),
    (lambda: o.cuda_thread_fence(), "T.cuda.thread_fence()"),
    (lambda: o.cuda_warp_sync(), "T.cuda.warp_sync()"),
    (lambda: o.cuda_cta_sync(), "T.cuda.cta_sync()"),
    (lambda: o.cuda_grid_sync(), "T.cuda.grid_sync()"),
    (lambda: o.cuda_syncthreads_and(1), "T.cuda.syncthreads_and(1)"),
    (lambda: o.cuda_syncthreads_or(1), "T.cuda.syncthreads_or(1)"),
    (lambda: o.cuda_nano_sleep(100), "T.cuda.nano_sleep(100)"),
    (lambda: o.cuda_atomic_add(p_, IntImm("int32", 1)), "T.cuda.atomic_add(p, 1)"),
    (lambda: o.cuda_atomic_cas(p_, 1, 2), "T.cuda.atomic_cas(p, 1, 2)"),
    (lambda: o.cuda_ldg(p_, "float32"), 'T.cuda.ldg(p, "float32")'),
    (lambda: o.cuda_func_call("f", 1, source_code=""), 'T.cuda.func_call("f", 1, source_code="")'),
    (lambda: o.nvshmem_my_pe(), "T.nvshmem.my_pe()"),
    (lambda: o.nvshmem_n_pes(), "T.nvshmem.n_pes()"),
    (lambda: o.nvshmem_signal_op(p_, 1, "set", 0), 'T.nvshmem.signal_op(p, 1, "set", 0)'),
    (lambda: o.nvshmem_wait_until(p_, "eq", 0), 'T.nvshmem.wait_until(p, "eq", 0, "uint64_t")'),
    (lambda: o.nvshmem_quiet(), "T.nvshmem.quiet()"),
    (lambda: o.nvshmem_barrier_all(), "T.nvshmem.barrier_all()"),
    (lambda: o.nvshmem_getmem_nbi(p_, p_, 16, 0), "T.nvshmem.getmem_nbi(p, p, 16, 0)"),
    (lambda: o.nvshmem_getmem_nbi_warp(p_, p_, 16, 0), "T.nvshmem.getmem_nbi.warp(p, p, 16, 0)"),
    (lambda: o.nvshmem_putmem_nbi_block(p_, p_, 16, 0), "T.nvshmem.putmem_nbi.block(p, p, 16, 0)"),
    (lambda: o.nvshmem_putmem_nbi(p_, p_, 16, 0), "T.nvshmem.putmem_nbi(p, p, 16, 0)"),
    (lambda: o.nvshmem_putmem_nbi_warp(p_, p_, 16, 0), "T.nvshmem.putmem_nbi.warp(p, p, 16, 0)"),
    (
        lambda: o.nvshmem_putmem_signal_nbi(p_, p_, 16, p_, 1, "set", 0),
        'T.nvshmem.putmem_signal_nbi(p, p, 16, p, 1, "set", 0)',
    ),
    (
        lambda: o.nvshmem_putmem_signal_nbi_warp(p_, p_, 16, p_, 1, "set", 0),
        'T.nvshmem.putmem_signal_nbi.warp(p, p, 16, p, 1, "set", 0)',
    ),
    (
        lambda: o.nvshmem_putmem_signal_nbi_block(p_, p_, 16, p_, 1, "set", 0),
        'T.nvshmem.putmem_signal_nbi.block(p, p, 16, p, 1, "set", 0)',
    ),
    (
        lambda: o.ptx_mma("m8n8k4", "row", "row", "fp16", "fp16", "fp16", "fp16", [r_], [r_], [r_]),
        'T.ptx.mma("m8n8k4", "row", "row", "fp16", "fp16", "fp16", "fp16", 1, 1, 1, 0, '
        "T.bool(True), r, r, r, T.bool(False))",
    ),
    (
        lambda: o.ptx_wgmma_encode_matrix_descriptor(d_, a_, 1, 1, 0),
        "T.ptx.wgmma.encode_matrix_descriptor(d, a, 1, 1, 0)",
    ),
    (lambda: o.ptx_wgmma_noop_barrier(0), "T.ptx.wgmma.noop_barrier(0)"),
    (
        lambda: o.ptx_wgmma_mma_async_ss(
            d_, d_, 0, 0, M=16, N=16, K=16, in_dtype="f16", out_dtype="f16", transA=True,
            transB=False, scaleA=1.0, scaleB=1.0, scaleD=True,
        ),
        'T.ptx.wgmma.mma_async.ss(16, 16, 16, "f16", "f16", T.bool(True), T.bool(False), '
        "T.float32(1.0), T.float32(1.0), T.bool(True), d, d, 0, 0)",
    ),
    (
        lambda: o.ptx_wgmma_mma_async_rs(
            d_, 0, 0, M=16, N=16, K=16, in_dtype="f16", out_dtype="f16", transA=True,
            transB=False, scaleA=1.0, scaleB=1.0, scaleD=True,
        ),
        'T.ptx.wgmma.mma_async.rs(16, 16, 16, "f16", "f16", T.bool(True), T.bool(False), '
        "T.float32(1.0), T.float32(1.0), T.bool(True), d, 0, 0)",
    ),
    (
        lambda: o.ptx_cp_async_bulk_tensor_global_to_cluster(2, tm_, 0, tm_, 0, 1, "", 0, 1, ""),
        'T.ptx.cp_async.bulk.tensor.g2c(2, tm, 0, tm, 0, 1, T.uint64(0), 0, 0, 1, "")',
    ),
    (
        lambda: o.ptx_cp_async_bulk_tensor_tile_gather4_global_to_cluster(
            2, tm_, 0, tm_, 0, 1, "", 0, 1, ""
        ),
        'T.ptx.cp_async.bulk.tensor.g2c_tile_gather4(2, tm, 0, tm, 0, 1, T.uint64(0), 0, 0, 1, "")',
    ),
    (
        lambda: o.ptx_cp_async_bulk_tensor_global_to_cluster_prefetch(2, tm_, "", 0, 0, ""),
        'T.ptx.cp_async.bulk.tensor.g2c_prefetch(2, tm, T.uint64(0), 0, 0, 0, "")',
    ),
    (
        lambda: o.ptx_cp_async_bulk_tensor_shared_to_global(2, 0, tm_, "", 0, 0, ""),
        'T.ptx.cp_async.bulk.tensor.s2g(2, 0, tm, T.uint64(0), 0, 0, 0, "")',
    ),
    (
        lambda: o.ptx_cp_async_bulk_tensor_shared_to_global_reduce(2, 0, tm_, "", "add", 0, 0, ""),
        'T.ptx.cp_async.bulk.tensor.s2g_reduce(2, 0, tm, T.uint64(0), 0, "add", 0, 0, "")',
    ),
    (
        lambda: o.ptx_cp_async(sh_, gl_, 16, cache_hint="", prefetch_size=-1, predicate=-1, fill_mode=""),
        'T.ptx.cp_async(sh, gl, 16, T.uint64(0), 0, -1, -1, "")',
    ),
]


@pytest.mark.parametrize("build, expected", SEED, ids=[e for _, e in SEED])
def test_seed_printed_forms(cuda_ns: None, build: Any, expected: str) -> None:
    call = build()
    params = [s_, r_, d_, a_, b_, p_, bar_, tm_, sh_, gl_, lane]
    text = _round_trip(PrimFunc(params, Evaluate(call), {}, name="f"))
    assert text.rstrip().splitlines()[-1].strip() == expected


def test_seed_warp_intrinsics_print_their_cuda_names(cuda_ns: None) -> None:
    @T.prim_func
    def kernel(x: T.int32, out: T.Buffer((4,), "int32")):
        mask = T.cuda.__activemask()
        out[0] = T.cuda.__shfl_sync(mask, x, 0, 32)
        out[1] = T.cuda.__shfl_up_sync(mask, x, 1, 32)
        out[2] = T.cuda.__shfl_down_sync(mask, x, 1, 32)
        out[3] = T.cuda.__shfl_xor_sync(mask, x, 1, 32)

    code = _round_trip(kernel)
    for name in ("__activemask()", "__shfl_sync(", "__shfl_up_sync(", "__shfl_down_sync(",
                 "__shfl_xor_sync("):
        assert f"T.cuda.{name}" in code
    assert "T.tirx." not in code and "T.call_intrin" not in code


@pytest.mark.parametrize("flat, dotted", [
    ("tirx.ptx_mma", "tirx.ptx.mma"),
    ("tirx.ptx_elect_sync", "tirx.ptx.elect_sync"),
    ("tirx.ptx_wgmma_commit_group", "tirx.ptx.wgmma_commit_group"),
    ("tirx.ptx_cp_async_bulk_tensor_global_to_cluster",
     "tirx.ptx.cp_async_bulk_tensor_global_to_cluster"),
    ("tirx.ptx_tcgen05_mma_sp_block_scale", "tirx.ptx.tcgen05_mma_sp_block_scale"),
    ("tirx.cuda_thread_fence", "tirx.cuda.thread_fence"),
    ("tirx.cuda_func_call", "tirx.cuda.func_call"),
    ("tirx.nvshmem_fence", "tirx.nvshmem.fence"),
    ("tirx.nvshmem_putmem_signal_nbi_block", "tirx.nvshmem.putmem_signal_nbi_block"),
    ("tirx.mma_store", "tirx.cuda.mma_store"),
    ("tirx.mma_fill_legacy", "tirx.cuda.mma_fill_legacy"),
    ("tirx.timer_init_cuda", "tirx.cuda.timer_init"),
    ("tirx.timer_finalize_cuda", "tirx.cuda.timer_finalize"),
])
def test_seed_flat_op_names_are_the_dotted_ops(cuda_ns: None, flat: str, dotted: str) -> None:
    assert Op.get(flat) is Op.get(dotted)
    assert flat not in {o.name for o in Op.list("tirx.")}  # an alias, not a second op


def test_calls_through_seed_flat_names_print_the_namespace_path(cuda_ns: None) -> None:
    fence = call_intrin("void", "tirx.cuda_thread_fence")
    bar = call_intrin("void", "tirx.ptx_bar_sync", 1, 128)
    text = _round_trip(PrimFunc([], SeqStmt([Evaluate(fence), Evaluate(bar)]), {}, name="f"))
    assert "T.cuda.thread_fence()" in text and "T.ptx.bar.sync(1, 128)" in text
    parsed = from_source(
        "from tvm.script import tirx as T\n\n@T.prim_func\ndef f():\n"
        '    T.evaluate(T.call_intrin("void", "tirx.nvshmem_fence"))\n'
    )
    assert "T.nvshmem.fence()" in parsed.script()


# -- a kernel using a sample of them, through the CUDA codegen and NVRTC (sm_90a) ---------------
@no_type_check
def _sample_kernel() -> Any:
    @T.prim_func
    def sample(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"),
               C: T.Buffer((128,), "uint32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([128])
        sm = T.alloc_buffer((128,), "float32", scope="shared", align=16)
        bar = T.alloc_buffer((1,), "uint64", scope="shared", align=8)
        if tx == 0:
            T.ptx.mbarrier.init(bar[0], 1)
            T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()
        T.ptx.cp_async(sm[tx], A[tx], 4)
        T.ptx.cp_async.commit_group()
        T.ptx.cp_async.wait_group(0)
        T.ptx.fence.proxy_async("shared::cta")
        if T.ptx.elect_sync() == T.uint32(1):
            T.ptx.mbarrier.arrive(bar[0])
        T.ptx.mbarrier.try_wait(bar[0], 0)
        T.ptx.wgmma.fence()
        T.ptx.wgmma.commit_group()
        T.ptx.wgmma.wait_group(0)
        B[tx] = T.cuda.warp_sum(sm[tx]) + T.ptx.exp2(sm[tx])
        C[tx] = T.cuda.__shfl_xor_sync(T.cuda.__activemask(), T.ptx.fetch_register(32, "laneid"),
                                       1, 32) + T.cuda.float_as_uint(T.ptx.rcp(sm[tx]))
        T.ptx.barrier.cluster.arrive("release", True)
        T.ptx.barrier.cluster.wait(True, True)
        T.ptx.griddepcontrol.launch_dependents()

    return sample


def test_sample_kernel_compiles_with_nvrtc_for_sm90a() -> None:
    ex = tvm.compile(_sample_kernel(), target={"kind": "cuda", "arch": "sm_90a"})
    assert ex.arch == "sm_90a" and ex.cubin[:4] == b"\x7fELF"
    src = ex.inspect_source()
    for text in ("mbarrier.init.shared::cta.b64", "fence.mbarrier_init.release.cluster",
                 "cp.async.ca.shared.global", "cp.async.wait_group 0", "tvm_elect_sync()",
                 "tvm_mbarrier_wait(", "wgmma.commit_group.sync.aligned",
                 "tvm_warp_reduce(", "ex2.approx.ftz.f32", "__shfl_xor_sync(__activemask()",
                 "barrier.cluster.arrive.release.aligned", "griddepcontrol.launch_dependents"):
        assert text in src, text


def test_an_intrinsic_outside_the_target_arch_is_a_requirement_error() -> None:
    # min_arch / max_arch are requirements on the target's arch, checked before the rule runs
    with pytest.raises(RequirementError) as info:
        tvm.compile(_sample_kernel(), target={"kind": "cuda", "arch": "sm_100a"})
    assert ("T.ptx.wgmma.fence needs sm_90a (no other architecture has it): the target's arch is "
            "sm_100a; compile for one that has it, e.g. target={'kind': 'cuda', 'arch': "
            "'sm_90a'}") in str(info.value)
    assert Op.get("tirx.ptx.wgmma_fence").get_attr("requires.cuda")[0].what.startswith("sm_90a")


# -- the seed's legacy cp.async: a five-operand form of tirx.ptx.cp_async ------------------------
def test_legacy_cp_async_builds_the_cp_async_op_typed_by_its_dtype(cuda_ns: None) -> None:
    sh, gl = H["sh"], H["gl"]
    call = cuda_op.ptx_cp_async_legacy("float16", sh, 0, gl, 8, 16)
    assert call.op is Op.get("tirx.ptx.cp_async") is Op.get("tirx.ptx_cp_async")
    assert str(call.dtype) == "float16" and len(call.args) == 5
    assert not Op.exists("tirx.ptx.cp_async_legacy")
    assert inspect.signature(cuda_op.ptx_cp_async_legacy).parameters.keys() == {
        "dtype", "shared_ptr", "shared_offset", "global_ptr", "global_offset", "bytes"
    }
    # T.ptx.cp_async.legacy is its dtype-forward member; six positional arguments with a str
    # first build the same call through T.ptx.cp_async
    assert_structural_equal(T.ptx.cp_async.legacy(sh, 0, gl, 8, 16, dtype="float16"), call)
    assert_structural_equal(T.ptx.cp_async("float16", sh, 0, gl, 8, 16), call)
    # the modern form keeps its eight operands (a dtype= keyword is dropped)
    modern = T.ptx.cp_async(sh, gl, 16, dtype="float16")
    assert modern.op is call.op and len(modern.args) == 8 and modern.dtype.is_void
    assert_structural_equal(modern, cuda_op.ptx_cp_async(sh, gl, 16))
    with pytest.raises(TypeError, match="dtype must be a str"):
        cuda_op.ptx_cp_async_legacy(3, sh, 0, gl, 8, 16)


def test_legacy_cp_async_parses_and_round_trips(cuda_ns: None) -> None:
    sh, gl = H["sh"], H["gl"]
    raw = Op.get("tirx.ptx.cp_async")(sh, i, gl, i * 8, 16, dtype="int32")
    text = _round_trip(_func(raw))
    assert 'T.ptx.cp_async("int32", sh, i, gl, i * 8, 16)' in text
    assert "T.call_intrin" not in text
    parsed = from_source(
        "from tvm.script import tirx as T\n\n@T.prim_func\ndef f(sh: T.handle, gl: T.handle):\n"
        '    T.ptx.cp_async("float16", sh, 0, gl, 8, 16)\n'
    )
    call = parsed.body.value
    assert call.op is Op.get("tirx.ptx.cp_async") and str(call.dtype) == "float16"
    assert [a.value for a in call.args[1::2]] == [0, 8]
    assert call.args[4].value == 16 and len(call.args) == 5
    # both forms in one function print each its way and read back
    modern = cuda_op.ptx_cp_async(sh, gl, 16, cache_hint="evict_last")
    func = PrimFunc([sh, gl, i], SeqStmt([Evaluate(raw), Evaluate(modern)]), {}, name="f")
    text = _round_trip(func)
    assert f'T.ptx.cp_async(sh, gl, 16, T.uint64({0x14F0000000000000}), 1, -1, -1, "")' in text


@no_type_check
def _legacy_cp_async_kernel() -> Any:
    @T.prim_func
    def legacy_copy(A: T.Buffer((1024,), "float16"), B: T.Buffer((1024,), "float16")):
        T.device_entry()
        bx = T.cta_id([8])
        tx = T.thread_id([16])
        sm = T.alloc_buffer((128,), "float16", scope="shared", align=16)
        T.ptx.cp_async("float16", sm.data, tx * 8, A.data, bx * 128 + tx * 8, 16)
        T.ptx.cp_async.legacy(sm.data, tx * 8 + 4, A.data, bx * 128 + tx * 8 + 4, 8,
                              dtype="float16")
        T.ptx.cp_async.commit_group()
        T.ptx.cp_async.wait_group(0)
        T.cuda.cta_sync()
        for k in range(8):
            B[bx * 128 + tx * 8 + k] = sm[tx * 8 + k]

    return legacy_copy


def test_legacy_cp_async_kernel_compiles_with_nvrtc() -> None:
    kernel = _legacy_cp_async_kernel()
    assert _round_trip(kernel).count('T.ptx.cp_async("float16", sm.data, ') == 2
    ex = tvm.compile(kernel, target={"kind": "cuda", "arch": "sm_80"})
    assert ex.cubin[:4] == b"\x7fELF"
    src = ex.inspect_source()
    assert "cp.async.cg.shared.global [%0], [%1], 16;" in src
    assert "cp.async.ca.shared.global [%0], [%1], 8;" in src
    assert "__cvta_generic_to_shared((((half*)(" in src
