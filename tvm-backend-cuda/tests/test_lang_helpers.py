"""``tvm_backend_cuda.lang`` (``tvm.backend.cuda.lang``): what the helpers emit, that it prints
and parses back, that it compiles for sm_90a, and that bad uses say what is wrong."""

from __future__ import annotations

from typing import Any, no_type_check

import pytest

import tvm
from tvm.ir import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T
from tvm_backend_cuda.plugin import register_backend

register_backend()

from tvm.backend.cuda.lang import (  # noqa: E402 - the alias exists once the backend is loaded
    ClusterPersistentScheduler2D,
    PersistentTileScheduler2D,
    Pipeline,
    PipelineState,
    SmemDescriptor,
    SMEMPool,
    TMABar,
    TMEMPool,
    WarpgroupRole,
    WarpRole,
)


def test_lang_is_reachable_by_every_path() -> None:
    import tvm_backend_cuda.lang as direct

    assert tvm.backend.cuda.lang is direct
    assert tvm.tirx.cuda.lang.Pipeline is direct.Pipeline
    from tvm.tirx.cuda.lang import alloc_pool, pipeline, smem_desc, tile_scheduler, warp_role

    assert pipeline.Pipeline is Pipeline and alloc_pool.SMEMPool is SMEMPool
    assert smem_desc.SmemDescriptor is SmemDescriptor
    assert warp_role.WarpgroupRole is WarpgroupRole
    assert tile_scheduler.ClusterPersistentScheduler2D is ClusterPersistentScheduler2D
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = direct.Nope


@no_type_check
def _producer_consumer(stages: int = 4) -> Any:
    @T.prim_func
    def k(TA: T.TensorMap, out: T.Buffer((256,), "float32")):
        T.device_entry()
        bx = T.cta_id([2])
        wg = T.warpgroup_id([3])
        tx = T.thread_id_in_wg([128])
        T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})
        pool = SMEMPool()
        A = pool.alloc_mma((stages, 128, 64), "bfloat16")
        pipe = Pipeline(pool, stages, producer="tma", init_thread=tx == 0)
        role = WarpgroupRole(wg, producer=0, consumer=[1, 2],
                             regs={"producer": 40, "consumer": 232})
        if role.producer:
            role.setmaxnreg("producer")
            prod = PipelineState(stages)
            for kk in T.serial(8):
                if tx == 0:
                    pipe.producer_acquire(prod)
                    pipe.producer_commit(prod, 128 * 64 * 2)
                    T.ptx.cp_async.bulk.tensor.g2c(2, A[prod.index, 0, 0], pipe.full[prod.index],
                                                   TA, 0, 1, "", kk * 64, bx * 128)
                prod.advance()
        else:
            role.setmaxnreg("consumer")
            cons = PipelineState(stages)
            for kk in T.serial(8):
                pipe.consumer_wait(cons)
                if tx == 0:
                    out[bx * 128 + (wg - 1) * 8 + kk] = T.Cast("float32", A[cons.index, 0, kk])
                pipe.consumer_release(cons)
                cons.advance()

    return k


def test_pipeline_program_prints_parses_back_and_compiles() -> None:
    k = _producer_consumer()
    text = k.script()
    # the helpers left plain TVMScript behind
    assert 'pool = T.alloc_buffer((65600,), "uint8", scope="shared.dyn", align=1024)' in text
    assert "T.SwizzleLayout(per_element=3, swizzle_len=3, atom_len=3)" in text
    assert "T.ptx.mbarrier.init(pipe_full[3], 1)" in text
    assert "T.ptx.mbarrier.try_wait(pipe_empty[prod[0]], T.bitwise_xor(prod[1], 1))" in text
    assert "T.ptx.mbarrier.arrive.expect_tx(pipe_full[prod[0]], 16384)" in text
    assert "T.ptx.mbarrier.try_wait(pipe_full[cons[0]], cons[1])" in text
    assert "T.ptx.mbarrier.arrive(pipe_empty[cons[0]])" in text
    assert "T.ptx.setmaxnreg(T.bool(False), 40)" in text
    assert "T.ptx.setmaxnreg(T.bool(True), 232)" in text
    # the phase flips when the index wraps; it is updated before the index
    assert text.index("prod[1] = T.Select(prod[0] + 1 == 4") < text.index(
        "prod[0] = T.Select(prod[0] + 1 == 4")
    assert structural_equal(from_source(text), k)
    ex = tvm.compile(k, target={"kind": "cuda", "arch": "sm_90a"})
    src = ex.inspect_source()
    assert "__launch_bounds__(384, 1)" in src
    assert "setmaxnreg.inc.sync.aligned.u32 232;" in src
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in src


def test_setmaxnreg_entry_registers() -> None:
    three = WarpgroupRole(T.int32(0), producer=0, consumer=[1, 2],
                          regs={"producer": 40, "consumer": 232})
    assert three.entry_regs == 168 and three.size("consumer") == 2
    two = WarpgroupRole(T.int32(0), producer=0, consumer=1, regs={"consumer": 232})
    assert two.entry_regs == 248  # 256 threads: 65536 / 256 capped at 255, rounded down


@no_type_check
def test_descriptor_scheduler_and_tmem_helpers_compile() -> None:
    @T.prim_func
    def k(out: T.Buffer((64,), "int32")):
        T.device_entry()
        bx = T.cta_id([4])
        tx = T.thread_id([128])
        pool = SMEMPool()
        A = pool.alloc_mma((128, 64), "float16")
        desc = SmemDescriptor("wgmma")
        sched = PersistentTileScheduler2D(5, 3, num_ctas=4, cta_id=bx, group_m=2)
        desc.init(A[0, 0], 16, 1024, "128B")
        for _ in T.serial(sched.max_iters):
            if sched.valid:
                if tx == 0:
                    out[sched.tile] = sched.m_idx * 3 + sched.n_idx
            sched.advance()

    assert structural_equal(from_source(k.script()), k)
    src = tvm.compile(k, target={"kind": "cuda", "arch": "sm_90a"}).inspect_source()
    assert "tvm_wgmma_desc(" in src


def test_grouped_rasterisation_visits_every_tile_once() -> None:
    from tvm.arith.analyzer import Analyzer
    from tvm.ir import IntImm, Var
    from tvm.ir.visitor import substitute

    simplify = Analyzer().simplify

    for m_tiles, n_tiles, group in ((5, 3, 2), (8, 8, 8), (7, 4, 3), (4, 6, 1)):
        sched = PersistentTileScheduler2D(m_tiles, n_tiles, num_ctas=1, cta_id=0, group_m=group)
        t = Var("t", "int32")
        mi, ni = sched.coords(t)
        seen = []
        for v in range(m_tiles * n_tiles):
            a = simplify(substitute(mi, {t: IntImm("int32", v)}))
            b = simplify(substitute(ni, {t: IntImm("int32", v)}))
            seen.append((a.value, b.value))
        assert sorted(seen) == [(i, j) for i in range(m_tiles) for j in range(n_tiles)]
        if 1 < group < m_tiles:
            # within the first group the tile row changes fastest
            assert [s[0] for s in seen[:group]] == list(range(group))


# -- errors ----------------------------------------------------------------------------------------


def test_too_many_stages_for_shared_memory() -> None:
    pool = SMEMPool()
    with pytest.raises(ValueError, match=r"SMEMPool: smem \(8, 128, 128\) bfloat16 needs 262144 "
                                         r"bytes at offset 0, 262144 bytes in all, more than the "
                                         r"232448 bytes of a CTA's shared memory .*Use fewer "
                                         r"pipeline stages or smaller tiles"):
        pool.alloc_mma((8, 128, 128), "bfloat16")


def test_alloc_mma_shape_errors() -> None:
    pool = SMEMPool()
    with pytest.raises(ValueError, match=r"alloc_mma shape=\(64,\) has fewer than 2 dimensions"):
        pool.alloc_mma((64,), "float16")
    with pytest.raises(ValueError, match=r"64B rows \(32 elements\) are not a multiple of the "
                                         r"128B swizzle atom \(SWIZZLE_128B_ATOM, rows of 64 "
                                         r"elements\)\. Use swizzle_mode='SWIZZLE_64B_ATOM', or "
                                         r"make the last dim a multiple of 64 elements"):
        pool.alloc_mma((128, 32), "bfloat16")
    with pytest.raises(ValueError, match=r"shape\[-2\]=12 rows is not a multiple of 8.*Pad the "
                                         r"rows to 16"):
        pool.alloc_mma((12, 64), "bfloat16")
    with pytest.raises(ValueError, match="every dim must be at least 1"):
        pool.alloc((0, 4), "float32")
    pool.alloc_mma((16, 24), "bfloat16", swizzle_mode="none")  # 8 x 16-byte core matrices


def test_pipeline_and_state_errors() -> None:
    with pytest.raises(ValueError, match=r"Pipeline: producer must be one of \['mbarrier', "
                                         r"'tma'\], got 'cpasync'"):
        Pipeline(None, 2, producer="cpasync")
    with pytest.raises(ValueError, match="Pipeline: stages must be at least 1, got 0"):
        Pipeline(None, 0)
    pipe = Pipeline(None, 3)
    with pytest.raises(ValueError, match="the state rings over 4 stages, the pipeline has 3"):
        pipe.consumer_wait(PipelineState(4))
    with pytest.raises(ValueError, match="PipelineState: index 4 is not below stages 4"):
        PipelineState(4, index=4)


def test_role_errors() -> None:
    wg = T.int32(0)
    with pytest.raises(ValueError, match=r"the roles ask for 96256 registers .*an SM has 65536"):
        WarpgroupRole(wg, producer=0, consumer=[1, 2], regs={"producer": 240, "consumer": 256})
    with pytest.raises(ValueError, match=r"regs\['producer'\] = 44: setmaxnreg takes a multiple "
                                         r"of 8 in \[24, 256\]"):
        WarpgroupRole(wg, producer=0, consumer=1, regs={"producer": 44})
    with pytest.raises(ValueError, match="warp 1 is in roles 'tma' and 'mma'"):
        WarpRole(wg, tma=[0, 1], mma=1)
    with pytest.raises(ValueError, match="setmaxnreg applies to whole warpgroups"):
        WarpRole(wg, tma=0, mma=1).setmaxnreg("tma")
    with pytest.raises(AttributeError, match=r"WarpRole has no role 'epilogue'; roles: \['mma', "
                                             r"'tma'\]"):
        WarpRole(wg, tma=0, mma=1).is_("epilogue")
    with pytest.raises(TypeError, match="the first argument is the warpgroup index"):
        WarpgroupRole(3, producer=0)


def test_tmem_and_scheduler_errors() -> None:
    pool = SMEMPool()
    with pytest.raises(ValueError, match="TMEMPool: cols must be a power of two from 32 to 512, "
                                         "got 96"):
        TMEMPool(pool, 96)
    tm = TMEMPool(pool, 64)
    tm.alloc((128, 48), "float32")
    with pytest.raises(ValueError, match="TMEMPool: 32 more columns at column 48 exceed the "
                                         "pool's 64 columns"):
        tm.alloc((128, 32), "float32")
    with pytest.raises(ValueError, match=r"5 x 4 tiles are not whole 2 x 1 cluster blocks"):
        ClusterPersistentScheduler2D(5, 4, num_clusters=2, cluster_id=0, cta_in_cluster=0)
    with pytest.raises(ValueError, match="TMABar: depth must be at least 1, got 0"):
        TMABar(pool, 0)


# -- the seed's scoped role form: `with WarpgroupRole(wg, i, regs=n, increase=...):` -----------


def test_scoped_roles_guard_the_block_and_set_registers() -> None:
    from tvm.tirx.lang.warp_role import WarpgroupRole, WarpRole

    @T.prim_func
    def roles(A: T.Buffer((256,), "float32")):
        T.device_entry()
        wg = T.warpgroup_id([3])
        w = T.warp_id_in_wg([4])
        tx = T.thread_id_in_wg([128])  # noqa: F841 - shapes the launch
        with WarpgroupRole(wg, 0, regs=40):
            A[0] = T.float32(1)
        with WarpgroupRole(wg, [1, 2], regs=232, increase=True):  # noqa: SIM117 - a script `with` takes one item
            with WarpRole(w, 3):
                A[1] = T.float32(2)

    text = roles.script()
    assert "if wg == 0:\n        T.ptx.setmaxnreg(T.bool(False), 40)\n        A[0] = T.float32(1.0)" in text
    assert "if wg >= 1 and wg <= 2:\n        T.ptx.setmaxnreg(T.bool(True), 232)" in text
    assert "if w == 3:\n            A[1] = T.float32(2.0)" in text
    assert from_source(text).script() == text
    src = tvm.compile(roles, target={"kind": "cuda", "arch": "sm_90a"}).inspect_source()
    assert "setmaxnreg.dec.sync.aligned.u32" in src and "setmaxnreg.inc.sync.aligned.u32" in src


def test_scoped_role_form_errors() -> None:
    from tvm.tirx.lang.warp_role import WarpgroupRole

    wg = tvm.ir.Var("wg", "int32")
    with pytest.raises(TypeError, match="named roles \\['consumer'\\] do not go with the one-role"):
        WarpgroupRole(wg, 0, consumer=1)
    with pytest.raises(TypeError, match="regs is a dict role -> registers here"):
        WarpgroupRole(wg, producer=0, regs=40)
    named = WarpgroupRole(wg, producer=0, consumer=1)
    with pytest.raises(ValueError, match="takes the one-role form"):
        named.__tvm_scope__(tvm.ir.Evaluate(0))


def test_a_pool_over_a_byte_pointer_outside_a_parse() -> None:
    """The seed's form: ``T.SMEMPool(<uint8 pointer var>)`` in an ``IRBuilder`` block, its
    allocations read as buffers (their layouts) without a parse."""
    from tvm.ir.type import PointerType, PrimType
    from tvm.script.ir_builder import IRBuilder
    from tvm.script.ir_builder import tirx as Tb
    from tvm.tirx import Var
    from tvm_backend_cuda.dispatch.tma_utils import SwizzleMode, mma_shared_layout

    ptr = Var("smem_ptr", PointerType(PrimType("uint8")))
    with IRBuilder(), Tb.prim_func():
        pool = SMEMPool(ptr)
        a = pool.alloc_mma((3, 64, 256), "float16")
        b = pool.alloc_mma((64, 64), "float32", swizzle_mode=SwizzleMode.SWIZZLE_64B_ATOM)
    assert structural_equal(a.layout, mma_shared_layout("float16", SwizzleMode.SWIZZLE_128B_ATOM,
                                                        (3, 64, 256)))
    assert structural_equal(b.layout, mma_shared_layout("float32", SwizzleMode.SWIZZLE_64B_ATOM,
                                                        (64, 64)))
    assert pool.buffer.data is ptr and pool.offset >= 3 * 64 * 256 * 2 + 64 * 64 * 4
    with pytest.raises(TypeError, match="expected a shared-memory T.alloc_buffer, got q"):
        SMEMPool(Var("q", PointerType(PrimType("float32"))))  # not a byte pointer


def test_the_thread_register_partition_of_a_register_layout() -> None:
    """The seed's ``layout_utils``: which dimensions of a register layout are spread over which
    threads, and which each thread keeps (a register ``cast`` converts those in place)."""
    from tvm.ir import Iter
    from tvm.tirx.cuda.operator.tile_primitive.layout_utils import (
        cast_layout_supported_for_local,
        get_layout_thread_local_partition,
    )
    from tvm.tirx.layout import S, TileLayout, laneid, tx, warpid

    groups, local, extents = get_layout_thread_local_partition(
        TileLayout(S[(2, 8, 4, 6): (2 @ warpid, 4 @ laneid, 1 @ laneid, 1)]))
    assert groups == {warpid: ([0], [2]), laneid: ([1, 2], [8, 4])}
    assert list(groups) == [warpid, laneid] and (local, extents) == ([3], [6])
    groups, local, extents = get_layout_thread_local_partition(TileLayout.from_iters(
        [Iter(4, 16, "m"), Iter(8, 2, tx), Iter(2, 1, "m")]))
    assert groups == {tx: ([1], [8])} and (local, extents) == ([0, 2], [4, 2])
    for layout in (TileLayout(S[(64, 8): (1, 1)]),  # no thread
                   TileLayout(S[(8, 8): (1 @ tx, 1 @ laneid)]),  # nothing kept per thread
                   TileLayout.from_iters([Iter(128, 1, tx), Iter(8, 1, "m")],
                                         [Iter(2, 1, laneid)]),  # held by two lanes at once
                   None):
        assert get_layout_thread_local_partition(layout) is None
        assert cast_layout_supported_for_local(layout) is False
    assert cast_layout_supported_for_local(TileLayout(S[(128, 8): (1 @ tx, 1)])) is True
