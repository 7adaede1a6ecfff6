"""The seed's entries of the TMA and dsmem ``copy_async`` variants (``copy_tma_impl``,
``copy_dsmem_impl``), the ``oob`` option of a TMA copy, dsmem copies between strided shared
layouts, and the emulator's ordering of mbarrier phases and multicast copies; kernels run on the
CUDA emulator (CPU) and are checked against numpy."""

from __future__ import annotations

from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.error import DispatchFail
from tvm.ir import BufferRegion, Range, Var, decl_buffer
from tvm.tirx.exec_scope import ExecScope
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.operator.tile_primitive.dispatch_context import DispatchContext
from tvm.tirx.operator.tile_primitive.ops import CopyAsync
from tvm_backend_cuda.plugin import register_backend

register_backend()

SM90 = {"kind": "cuda", "arch": "sm_90a"}


def _emulated(f: Any, target: Any = SM90) -> Any:
    return tvm.compile(f, target=target, emulate=True)


def _sctx() -> DispatchContext:
    # the seed's positional form: target, scope, launch params, index ranges
    return DispatchContext(tvm.target.Target(SM90), ExecScope("thread"), {}, {})


def _whole(buf: Any) -> BufferRegion:
    return BufferRegion(buf, [Range.from_min_extent(0, s) for s in buf.static_shape()])


def _ops(func: Any, name: str) -> int:
    """How many times ``name`` runs in ``func`` (calls times the extents of their loops)."""
    total = 0

    def walk(node: Any, times: int) -> None:
        nonlocal total
        if isinstance(node, tvm.ir.For):
            walk(node.body, times * node.extent.value)
        elif isinstance(node, tvm.ir.SeqStmt):
            for s in node.seq:
                walk(s, times)
        elif isinstance(node, tvm.ir.Evaluate):
            if isinstance(node.value, tvm.ir.Call) and node.value.op.name == name:
                total += times
        elif hasattr(node, "body"):
            walk(node.body, times)
        elif isinstance(node, tvm.ir.IfThenElse):
            walk(node.then_case, times)

    walk(func.body, 1)
    return total


S2C = "tirx.ptx.cp_async_bulk_shared_to_cluster"


# -- copy_dsmem_impl --------------------------------------------------------------------------


def _dsmem_call(shape: tuple[int, ...], dtype: str, src: Any, dst: Any, **config: Any) -> Any:
    from tvm.tirx.cuda.operator.tile_primitive.copy_async.dsmem import copy_dsmem_impl

    s = decl_buffer(shape, dtype, "src", scope="shared.dyn", layout=TileLayout(src))
    d = decl_buffer(shape, dtype, "dst", scope="shared.dyn", layout=TileLayout(dst))
    return copy_dsmem_impl(CopyAsync(_whole(d), _whole(s), config=config), _sctx())


def test_dsmem_entry_issues_one_copy_per_run_contiguous_in_both() -> None:
    cfg = {"mbar": Var("bar", "handle"), "remote_cta_id": 1}
    assert _ops(_dsmem_call((512,), "float32", S[512], S[512], **cfg), S2C) == 1
    # rows of 64 floats 128 apart: one copy a row
    assert _ops(_dsmem_call((4, 64), "float32", S[(4, 64):(128, 1)], S[4, 64], **cfg), S2C) == 4
    # runs of 32 elements on the dst side (inner dim split in two 64 apart)
    dst = S[(2, 2, 32):(128, 64, 1)]
    assert _ops(_dsmem_call((2, 64), "float16", S[2, 64], dst, **cfg), S2C) == 4


def test_dsmem_entry_declines_runs_under_16_bytes_and_names_missing_config() -> None:
    cfg = {"mbar": Var("bar", "handle"), "remote_cta_id": 1}
    with pytest.raises(DispatchFail, match=r"longest run .* is 1 elements \(4 bytes\)"):
        _dsmem_call((8, 32), "float32", S[8, 32], S[(8, 32):(1, 8)], **cfg)
    with pytest.raises(DispatchFail, match=r"config\['remote_cta_id'\]"):
        _dsmem_call((64,), "float32", S[64], S[64], mbar=Var("bar", "handle"))
    with pytest.raises(DispatchFail, match=r"config\['mbar'\]"):
        _dsmem_call((64,), "float32", S[64], S[64], remote_cta_id=1)


@no_type_check
def _dsmem_strided(rows: int, cols: int, gap: int) -> Any:
    """CTA 0 of a cluster of 2 sends a [rows, cols] tile whose rows are ``gap`` floats apart
    in its shared memory to CTA 1, where the tile is dense; CTA 1 writes it to B."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm_backend_cuda.lang import MBarrier, SMEMPool

    src_layout = T.TileLayout(T.S[(rows, cols):(gap, 1)])

    @T.prim_func
    def k(A: T.Buffer((rows, cols), "float32"), B: T.Buffer((rows, cols), "float32")):
        T.device_entry()
        cid = T.cta_id_in_cluster([2])
        T.cta_id([2])
        tid = T.thread_id([1])
        pool = T.SMEMPool()
        raw = pool.alloc([rows * gap], "float32", align=128)
        src = T.decl_buffer((rows, cols), "float32", raw.data, layout=src_layout)
        dst = pool.alloc((rows, cols), "float32", align=128)
        bar = MBarrier(pool, 1)
        pool.commit()
        bar.init(1)
        T.ptx.fence.mbarrier_init()
        T.cuda.cluster_sync()
        if cid == 0:
            Tx.copy(src[:, :], A[:, :])
            T.ptx.fence.proxy_async("shared::cta")
            Tx.copy_async(dst[:, :], src[:, :], dispatch="dsmem", mbar=bar.ptr_to([0]),
                          remote_cta_id=1)
        else:
            T.ptx.mbarrier.arrive.expect_tx(bar.ptr_to([0]), rows * cols * 4)
            bar.wait(0, 0)
            Tx.copy(B[:, :], dst[:, :])
        T.cuda.cluster_sync()

    del SMEMPool
    return k


def test_dsmem_strided_rows_reach_the_peer_cta() -> None:
    ex = _emulated(_dsmem_strided(6, 32, 48))
    src = ex.inspect_source()
    assert src.count("tvm_builtin_ptx_cp_async_bulk_s2s_cluster(") >= 2  # helper + the loop
    assert "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes" in src
    a = np.random.default_rng(1).standard_normal((6, 32)).astype("float32")
    b = np.zeros_like(a)
    ex(a, b)
    np.testing.assert_array_equal(b, a)


# -- copy_tma_impl and config["oob"] ------------------------------------------------------------


def _tma_call(dtype: str = "float16", **config: Any) -> Any:
    from tvm.tirx.cuda.operator.tile_primitive.copy_async.tma import copy_tma_impl

    g = decl_buffer((64, 128), dtype, "G")
    s = decl_buffer((32, 64), dtype, "Sm", scope="shared.dyn")
    region = BufferRegion(g, [Range.from_min_extent(32, 32), Range.from_min_extent(64, 64)])
    config.setdefault("mbar", Var("bar", "handle"))
    return copy_tma_impl(CopyAsync(_whole(s), region, config=config), _sctx())


def test_tma_entry_lowers_to_one_bulk_tensor_copy() -> None:
    func = _tma_call()
    assert isinstance(func, tvm.ir.PrimFunc)
    assert _ops(func, "tirx.ptx.cp_async_bulk_tensor_global_to_cluster") == 1
    text = func.script()
    assert "64, 32" in text  # the coordinates, innermost first
    assert _ops(_tma_call(oob="zero"), "tirx.ptx.cp_async_bulk_tensor_global_to_cluster") == 1


def test_tma_entry_checks_the_oob_mode() -> None:
    with pytest.raises(DispatchFail, match="Unsupported TMA oob mode 'fill'"):
        _tma_call(oob="fill")
    with pytest.raises(DispatchFail, match="'nan' requires a floating-point dtype, the copy "
                                           "moves int8"):
        _tma_call("int8", oob="nan")
    with pytest.raises(DispatchFail, match="NaN fill .* is not supported"):
        _tma_call("float16", oob="nan")


def test_tma_entry_declines_with_the_predicate_that_failed() -> None:
    from tvm.tirx.cuda.operator.tile_primitive.copy_async.tma import copy_tma_impl

    a = decl_buffer((64,), "float32", "a", scope="shared")
    b = decl_buffer((64,), "float32", "b", scope="shared")
    with pytest.raises(DispatchFail, match="predicate 'direction': copies shared -> shared"):
        copy_tma_impl(CopyAsync(_whole(a), _whole(b), config={}), _sctx())


# -- the emulator's ordering ----------------------------------------------------------------------


@no_type_check
def _two_phases() -> Any:
    """Thread 0 completes two phases of a one-arrival barrier back to back; the others wait
    for the first (parity 0), then the second (parity 1)."""
    from tvm.script import tirx as T

    @T.prim_func
    def k(B: T.Buffer((64,), "int32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([64])
        bar = T.shared_scalar("uint64")
        if tx == 0:
            T.ptx.mbarrier.init(T.address_of(bar), 1)
        T.cuda.cta_sync()
        phase: T.int32
        phase = 0
        for _ in range(2):
            if tx == 0:
                T.ptx.mbarrier.arrive(T.address_of(bar))
            T.ptx.mbarrier.try_wait(T.address_of(bar), phase)
            phase = phase ^ 1
        B[tx] = phase + 10

    return k


def test_waiters_see_each_completed_phase_before_the_producer_runs_on() -> None:
    b = np.zeros(64, "int32")
    _emulated(_two_phases())(b)
    np.testing.assert_array_equal(b, np.full(64, 10, "int32"))


# -- st.bulk --------------------------------------------------------------------------------------


@no_type_check
def _st_bulk() -> Any:
    from tvm.script import tirx as T

    @T.prim_func
    def k(A: T.Buffer((64,), "uint32"), B: T.Buffer((64,), "uint32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([64])
        sm = T.alloc_buffer((64,), "uint32", scope="shared", align=16)
        sm[tx] = A[tx]
        T.cuda.cta_sync()
        if tx == 0:
            T.ptx.st_bulk(sm.ptr_to([16]), T.uint32(64), weak=True, space="shared::cta")
        T.cuda.cta_sync()
        B[tx] = sm[tx]

    return k


def test_st_bulk_zeroes_the_bytes_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from tvm_backend_cuda import emulator

    monkeypatch.setattr(emulator, "DEVICE_ARCH", "sm_100a")  # st.bulk is an sm_100 instruction
    ex = _emulated(_st_bulk(), {"kind": "cuda", "arch": "sm_100a"})
    assert "st.bulk.weak.shared::cta [%0], %1, 0;" in ex.inspect_source()
    a = np.arange(1, 65, dtype="uint32")
    b = np.zeros(64, "uint32")
    ex(a, b)
    want = a.copy()
    want[16:32] = 0
    np.testing.assert_array_equal(b, want)


def test_tma_entry_takes_a_canonicalized_swizzled_shared_layout() -> None:
    """``canonicalize()`` turns a swizzle over row-major atoms into a bare ``SwizzleLayout``; a
    buffer takes it as the swizzle of its row-major offsets, and TMA still sees the swizzle."""
    from tvm.tirx.cuda.operator.tile_primitive.copy_async.tma import copy_tma_impl
    from tvm.tirx.cuda.operator.tile_primitive.tma_utils import (
        SwizzleMode,
        get_swizzle_mode_from_layout,
        mma_shared_layout,
    )

    canon = mma_shared_layout("float16", 3, (4, 64, 64)).canonicalize()
    assert isinstance(canon, tvm.ir.SwizzleLayout)
    s = decl_buffer((4, 64, 64), "float16", "Sm", scope="shared.dyn", layout=canon)
    assert isinstance(s.layout, tvm.ir.ComposeLayout)
    assert get_swizzle_mode_from_layout(s.layout) is SwizzleMode.SWIZZLE_128B_ATOM
    g = decl_buffer((64, 64), "float16", "G")
    dst = BufferRegion(s, [Range.from_min_extent(2, 1), Range.from_min_extent(0, 64),
                           Range.from_min_extent(0, 64)])
    func = copy_tma_impl(CopyAsync(dst, _whole(g), config={"mbar": Var("bar", "handle")}),
                         _sctx())
    assert _ops(func, "tirx.ptx.cp_async_bulk_tensor_global_to_cluster") == 1


@no_type_check
def _multicast_before_peer_init(n: int = 64) -> Any:
    """Each CTA of a cluster of 2 multicasts its half of A to both CTAs right after its own
    barrier setup, with no cluster barrier first; each CTA then writes what landed to its copy
    of B."""
    from tvm.script import tirx as T

    half = n // 2

    @T.prim_func
    def k(A: T.Buffer((n,), "float32"), B: T.Buffer((2 * n,), "float32")):
        A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, "float32", 1, A.data,
                      n, half, 1, 0, 0, 0, 0)
        T.device_entry()
        for cid in T.thread_binding(2, thread="clusterCtaIdx.x"):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for tx in T.thread_binding(n, thread="threadIdx.x"):
                    bar = T.shared_scalar("uint64")
                    S = T.alloc_buffer((n,), "float32", scope="shared", align=128)
                    if tx == 0:
                        T.ptx.mbarrier.init(T.address_of(bar), 1)
                        T.ptx.mbarrier.arrive.expect_tx(T.address_of(bar), n * 4)
                        T.ptx.cp_async.bulk.tensor.g2c(
                            1, S.access_ptr("w", offset=cid * half), T.address_of(bar),
                            T.address_of(A_map), 3, 1, "", cid * half)
                    T.ptx.mbarrier.try_wait(T.address_of(bar), 0)
                    B[bx * n + tx] = S[tx]

    return k


def test_a_multicast_lands_after_its_receivers_set_up_their_barriers() -> None:
    ex = _emulated(_multicast_before_peer_init())
    assert ".multicast::cluster" in ex.inspect_source()
    a = np.random.default_rng(2).standard_normal(64).astype("float32")
    b = np.zeros(128, "float32")
    ex(a, b)
    np.testing.assert_array_equal(b, np.concatenate([a, a]))
