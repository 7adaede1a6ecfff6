"""DispatchContext: scope, thread extents and indices from the kernel form, barriers, callbacks."""

from __future__ import annotations

import pytest
from tile_helpers import call, func_of, kernel_of

from tvm.error import DispatchFail
from tvm.ir import (
    AllocBuffer,
    Buffer,
    BufferStore,
    Evaluate,
    PrimFunc,
    ScopeIdDef,
    SeqStmt,
    Var,
    structural_equal,
)
from tvm.target import Target
from tvm.tirx.operator.tile_primitive import (
    SERIAL,
    DispatchContext,
    ThreadInfo,
    lower_tile_primitives,
    register_dispatch,
    register_scope_barrier,
)

A = Buffer("A", [8], "float32")


def ints(sctx: DispatchContext) -> dict[str, int]:
    return {s: sctx.thread_extent(s).value for s in ("thread", "warp", "warpgroup", "cta", "cluster")}


def test_host_form_has_one_thread_everywhere(host_target: Target) -> None:
    sctx = DispatchContext(host_target, "cta")
    assert ints(sctx) == {"thread": 1, "warp": 1, "warpgroup": 1, "cta": 1, "cluster": 1}
    assert sctx.is_cta and not sctx.is_thread and sctx.exec_scope == "cta"
    assert sctx.barrier() is None


def test_unknown_scope_is_rejected(host_target: Target) -> None:
    with pytest.raises(ValueError, match="unknown execution scope 'grid'"):
        DispatchContext(host_target, "grid")


def test_extents_and_indices_from_thread_id() -> None:
    tx, ty = Var("tx"), Var("ty")
    info = ThreadInfo.from_defs([ScopeIdDef("thread_id", [tx, ty], [64, 4])])
    sctx = DispatchContext(None, "warp", threads=info)
    assert ints(sctx) == {"thread": 1, "warp": 32, "warpgroup": 128, "cta": 256, "cluster": 256}
    assert structural_equal(sctx.thread_index("cta"), tx + ty * 64)
    assert structural_equal(sctx.thread_index("warp"), (tx + ty * 64) % 32)
    assert structural_equal(sctx.thread_index("warpgroup"), (tx + ty * 64) % 128)
    assert sctx.thread_index("thread").value == 0


def test_small_cta_caps_warp_extent() -> None:
    info = ThreadInfo.from_defs([ScopeIdDef("thread_id", [Var("tx")], [8])])
    sctx = DispatchContext(None, "warp", threads=info)
    assert sctx.thread_extent().value == 8
    assert sctx.thread_index() is info.tid


def test_derived_ids_are_used_when_defined() -> None:
    w, lane = Var("w"), Var("l")
    info = ThreadInfo.from_defs([ScopeIdDef("warp_id", [w], [4]), ScopeIdDef("lane_id", [lane], [32])])
    sctx = DispatchContext(None, "warp", threads=info)
    assert sctx.thread_extent("cta").value == 128
    assert sctx.thread_index("warp") is lane
    assert structural_equal(sctx.thread_index("cta"), w * 32 + lane)
    assert sctx.var_range_map[w].extent.value == 4


def test_cluster_extent_and_index() -> None:
    tx, c = Var("tx"), Var("c")
    info = ThreadInfo.from_defs([ScopeIdDef("cta_id_in_cluster", [c], [2]),
                                 ScopeIdDef("thread_id", [tx], [128])])
    sctx = DispatchContext(None, "cluster", threads=info)
    assert sctx.thread_extent().value == 256
    assert structural_equal(sctx.thread_index(), c * 128 + tx)


def test_lowering_computes_threads_from_enclosing_defs(fakegpu: Target) -> None:
    seen = []

    def spy(c, s):
        seen.append((s.scope_kind, s.thread_extent().value, s.threads.in_kernel))
        return PrimFunc([], Evaluate(0))

    register_dispatch("zero", "fakegpu", variant="spy", priority=1)(spy)
    f, _ = kernel_of([A], 96, call("zero", A, scope="cta"), call("zero", A, scope="warp"))
    lower_tile_primitives(f, fakegpu)
    lower_tile_primitives(func_of([A], call("zero", A, scope="cta")), fakegpu)
    assert seen == [("cta", 96, True), ("warp", 32, True), ("cta", 1, False)]


def test_barriers_come_from_the_target_table(fakegpu: Target, host_target: Target) -> None:
    info = ThreadInfo.from_defs([ScopeIdDef("thread_id", [Var("tx")], [64])])
    gpu = DispatchContext(fakegpu, "cta", threads=info)
    assert gpu.barrier().value.op.name == "tirx.test_scope_barrier"
    assert gpu.barrier("thread") is None
    assert not gpu.is_serial()
    host = DispatchContext(host_target, "cta", threads=info)
    assert host.is_serial() and host.barrier() is None
    register_target_kind_plain("nobarrier")
    with pytest.raises(DispatchFail, match="no barrier for scope 'cta' on target 'nobarrier'"):
        DispatchContext(Target("nobarrier"), "cta", threads=info).barrier()


def test_register_scope_barrier_validates() -> None:
    with pytest.raises(ValueError, match="unknown execution scope"):
        register_scope_barrier("x", "block", SERIAL)
    with pytest.raises(TypeError, match="barrier must be a callable"):
        register_scope_barrier("x", "cta", 3)


def register_target_kind_plain(name: str) -> None:
    from tvm.target import TargetKind, register_target_kind

    register_target_kind(TargetKind(name))


def test_allocations_and_init_statements_are_placed(fakegpu: Target) -> None:
    scratch = Buffer("scratch", [32], "float32", scope="shared")
    flag = Buffer("flag", [1], "int32")

    def impl(c, s):
        buf = s.cache_get("scratch")
        if buf is None:
            buf = scratch
            s.cache_set("scratch", buf)
            s.add_init_stmt(BufferStore(flag, 1, [0]))
            s.add_init_stmt(BufferStore(flag, 2, [0]), host=True)
        s.add_alloc_buffer(buf)
        return PrimFunc([], BufferStore(buf, 0.0, [0]))

    register_dispatch("zero", "fakegpu", variant="ws", priority=1)(impl)
    f, _ = kernel_of([A, flag], 32, call("zero", A, scope="cta"), call("zero", A, scope="cta"))
    body = lower_tile_primitives(f, fakegpu).body
    assert isinstance(body, SeqStmt)
    kinds = [type(s).__name__ for s in body.seq]
    assert kinds == ["BufferStore", "Evaluate", "ScopeIdDef", "ScopeIdDef", "AllocBuffer",
                     "BufferStore", "BufferStore", "BufferStore"]
    assert body.seq[0].value.value == 2           # host init before the kernel starts
    assert body.seq[4].buffer is scratch          # one allocation, after the index defs
    assert body.seq[5].value.value == 1           # device init after the allocation


def test_host_form_prologue_goes_first(host_target: Target) -> None:
    tmp = Buffer("tmp", [4], "float32", scope="local")

    def impl(c, s):
        s.add_alloc_buffer(tmp)
        return PrimFunc([], BufferStore(tmp, 0.0, [0]))

    register_dispatch("zero", "c", variant="tmp", priority=20)(impl)  # above the host's own
    body = lower_tile_primitives(func_of([A], call("zero", A)), host_target).body
    assert isinstance(body.seq[0], AllocBuffer) and body.seq[0].buffer is tmp
    assert isinstance(body.seq[1], BufferStore) and body.seq[1].buffer is tmp
