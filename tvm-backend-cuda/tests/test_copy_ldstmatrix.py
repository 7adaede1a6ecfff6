"""``copy`` between shared memory and registers: the ``ldstmatrix`` variant (any register
layout that forms 8x8 fragments, ``.trans``, swizzled shared memory, warp/warpgroup/cta scope),
the ``reg`` variant's ``tx``/``tid_in_wg`` thread axes, and what an emulated build shows as its
source.

The ``gpu`` tests take the ``device`` fixture: without a GPU they run under the CUDA emulator.
"""

from __future__ import annotations

from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import ComposeLayout, S, SwizzleLayout, TileLayout, laneid, tid_in_wg, tx
from tvm.tirx.operator.tile_primitive.dispatcher import lower_tile_primitives

SM90 = {"kind": "cuda", "arch": "sm_90a"}


def _variants(func: Any, arch: str = "sm_90a") -> list[str]:
    trace: list[tuple[str, str, str]] = []
    lower_tile_primitives(func, tvm.target.Target({"kind": "cuda", "arch": arch}), trace=trace)
    return [v for op, _, v in trace if op == "tirx.tile.copy"]


def _compile(func: Any) -> Any:
    target = tvm.target.Target(SM90)
    with target:
        return tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")


def _run(ex: Any, a: np.ndarray) -> np.ndarray:
    dev = tvm.cuda(0)
    A = tvm.runtime.tensor(a, device=dev)
    B = tvm.runtime.tensor(np.zeros_like(a), device=dev)
    ex(A, B)
    return B.numpy()


# -- a warpgroup's 64x32 tile: ldmatrix .x4 from row-major, stmatrix .x4 .trans to col-major ----


@no_type_check
def _warpgroup_kernel() -> Any:
    # element (16 w + 8 rb + r, 8 cb + 2 c + e) in thread 32 w + 4 r + c, register 8 rb + 2 cb + e
    shape = (4, 2, 8, 4, 4, 2)
    r_layout = TileLayout(S[shape:(32 @ tid_in_wg, 8, 4 @ tid_in_wg, 2, 1 @ tid_in_wg, 1)])
    col_major = TileLayout(S[(64, 32):(1, 64)])

    @T.prim_func
    def k(A_ptr: T.handle, B_ptr: T.handle):
        A = T.match_buffer(A_ptr, (64, 32), "float16")
        B = T.match_buffer(B_ptr, (64, 32), "float16")
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        T.thread_id([128])
        As = T.alloc_buffer((64, 32), "float16", scope="shared")
        Bs = T.alloc_buffer((64, 32), "float16", scope="shared", layout=col_major)
        R = T.alloc_buffer(shape, "float16", scope="local", layout=r_layout)
        Tx.wg.copy(As, A)
        Tx.wg.copy(R[:, :, :, :, :, :], As[0:64, 0:32])
        Tx.wg.copy(Bs[0:64, 0:32], R[:, :, :, :, :, :])
        T.cuda.cta_sync()
        Tx.wg.copy(B, Bs)

    return k


def test_warpgroup_tile_picks_ldmatrix_and_stmatrix_trans() -> None:
    assert _variants(_warpgroup_kernel()) == ["gmem_smem", "ldstmatrix", "ldstmatrix",
                                              "gmem_smem"]
    # stmatrix is sm_90's: on sm_80 the store goes through registers one by one
    assert _variants(_warpgroup_kernel(), "sm_80") == ["gmem_smem", "ldstmatrix", "reg",
                                                       "gmem_smem"]


@pytest.mark.gpu
def test_warpgroup_tile_round_trips(device: str) -> None:
    ex = _compile(_warpgroup_kernel())
    src = ex.inspect_source()
    # 16 registers a thread: two .x4 each way; the column-major side needs .trans
    assert src.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 2
    # stmatrix goes through the seed's helper: one definition, a call per .x4
    assert src.count("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 1
    assert src.count("tvm_builtin_ptx_stmatrix_m8n8_x4_trans_shared_b16(") == 3
    a = (np.arange(64 * 32) % 2039).astype("float16").reshape(64, 32)
    np.testing.assert_array_equal(_run(ex, a), a)


# -- a warp's 8x24 bf16 tile: .x2 + .x1, .trans from a swizzled column-major tile -----------------


@no_type_check
def _warp_kernel() -> Any:
    r_layout = TileLayout(S[(8, 3, 4, 2):(4 @ laneid, 2, 1 @ laneid, 1)])
    swizzled_cols = ComposeLayout(SwizzleLayout(3, 1, 3), TileLayout(S[(8, 24):(1, 8)]))

    @T.prim_func
    def k(A_ptr: T.handle, B_ptr: T.handle):
        A = T.match_buffer(A_ptr, (8, 24), "bfloat16")
        B = T.match_buffer(B_ptr, (8, 24), "bfloat16")
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        T.thread_id([32])
        As = T.alloc_buffer((8, 24), "bfloat16", scope="shared", layout=swizzled_cols)
        Bs = T.alloc_buffer((8, 24), "bfloat16", scope="shared")
        R = T.alloc_buffer((8, 3, 4, 2), "bfloat16", scope="local", layout=r_layout)
        Tx.warp.copy(As, A)
        Tx.warp.copy(R[:, :, :, :], As[:, :])
        Tx.warp.copy(Bs[:, :], R[:, :, :, :])
        T.cuda.cta_sync()
        Tx.warp.copy(B, Bs)

    return k


@pytest.mark.gpu
def test_warp_tile_with_three_matrices_and_a_swizzle(device: str) -> None:
    ex = _compile(_warp_kernel())
    src = ex.inspect_source()
    for instr in ("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
                  "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
                  "stmatrix.sync.aligned.m8n8.x2.shared.b16",
                  "stmatrix.sync.aligned.m8n8.x1.shared.b16"):
        assert src.count(instr) == 1, instr
    import ml_dtypes

    a = (np.arange(8 * 24, dtype="float32") - 50).astype(ml_dtypes.bfloat16).reshape(8, 24)
    np.testing.assert_array_equal(_run(ex, a), a)


# -- declines: misaligned rows, and the reg variant takes the copy ---------------------------------


@no_type_check
def _misaligned_kernel() -> Any:
    r_layout = TileLayout(S[(8, 4, 2):(4 @ laneid, 1 @ laneid, 1)])

    @T.prim_func
    def k(A_ptr: T.handle, B_ptr: T.handle):
        A = T.match_buffer(A_ptr, (8, 16), "float16")
        B = T.match_buffer(B_ptr, (8, 16), "float16")
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        T.thread_id([32])
        As = T.alloc_buffer((8, 16), "float16", scope="shared")
        R = T.alloc_buffer((8, 4, 2), "float16", scope="local", layout=r_layout)
        Tx.warp.copy(As, A)
        Tx.warp.copy(R[:, :, :], As[0:8, 3:11])  # rows start 6 bytes into a 16-byte unit
        T.cuda.cta_sync()
        for i in range(8):
            for j in range(16):
                As[i, j] = T.float16(0)
        T.cuda.cta_sync()
        Tx.warp.copy(As[0:8, 5:13], R[:, :, :])
        T.cuda.cta_sync()
        Tx.warp.copy(B, As)

    return k


def _plan_of(func: Any, scope: str, threads: int) -> Any:
    """ldstmatrix's plan (or reason) for the first copy into registers of ``func``."""
    from tvm.tirx.operator.tile_primitive.common import region_of, simplify_regions
    from tvm.tirx.operator.tile_primitive.dispatch_context import DispatchContext, ThreadInfo
    from tvm_backend_cuda.dispatch.ldstmatrix import ldst_plan

    call = next(simplify_regions(c) for c in _calls(func)
                if region_of(c.args[0]).buffer.scope == "local")
    info = ThreadInfo(cta_threads=tvm.ir.const(threads, "int32"))
    return ldst_plan(call, DispatchContext(tvm.target.Target(SM90), scope, op_call=call,
                                           threads=info))


def test_misaligned_rows_decline_with_the_offset() -> None:
    func = _misaligned_kernel()
    assert _variants(func) == ["gmem_smem", "reg", "reg", "gmem_smem"]
    why = _plan_of(func, "warp", 32)
    assert isinstance(why, str)
    assert "starts at shared offset 3, not 16-byte aligned" in why


@no_type_check
def test_lane_only_registers_in_a_warpgroup_copy_decline() -> None:
    # every warp would hold the same registers: not a tile of the warpgroup
    lay = TileLayout(S[(8, 4, 2):(4 @ laneid, 1 @ laneid, 1)])

    @T.prim_func
    def k(A: T.Buffer((8, 8), "float16")):
        T.device_entry()
        T.thread_id([128])
        As = T.alloc_buffer((8, 8), "float16", scope="shared")
        R = T.alloc_buffer((8, 4, 2), "float16", scope="local", layout=lay)
        Tx.wg.copy(R[:, :, :], As[:, :])
        A[0, 0] = As[0, 0]

    why = _plan_of(k, "warpgroup", 128)
    assert isinstance(why, str)
    assert "threads 0 and 32 hold the same registers of R" in why


def test_plan_of_the_warpgroup_tile() -> None:
    from tvm_backend_cuda.dispatch.ldstmatrix import LdStPlan

    plan = _plan_of(_warpgroup_kernel(), "warpgroup", 128)
    assert plan == LdStPlan(trans=False, pairs=list(range(8)), load=True)


@pytest.mark.gpu
def test_misaligned_rows_round_trip_through_reg(device: str) -> None:
    ex = _compile(_misaligned_kernel())
    assert "ldmatrix" not in ex.inspect_source()
    a = np.arange(8 * 16, dtype="float16").reshape(8, 16)
    want = np.zeros_like(a)
    want[:, 5:13] = a[:, 3:11]
    np.testing.assert_array_equal(_run(ex, a), want)


def _calls(func: Any) -> list[Any]:
    found: list[Any] = []

    class V(tvm.ir.Visitor):
        def visit_TilePrimitiveCall(self, node: Any) -> None:  # noqa: N802
            found.append(node)

    V().visit(func.body)
    return found


# -- reg: registers spread by tx (cta) and tid_in_wg (warpgroup) ----------------------------------


@no_type_check
def _reg_kernel(axis: str) -> Any:
    thread = tx if axis == "tx" else tid_in_wg
    lay = TileLayout(S[(128, 3):(1 @ thread, 1)])

    @T.prim_func
    def k(A_ptr: T.handle, B_ptr: T.handle):
        A = T.match_buffer(A_ptr, (128, 3), "float32")
        B = T.match_buffer(B_ptr, (128, 3), "float32")
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        T.thread_id([128])
        R = T.alloc_buffer((128, 3), "float32", scope="local", layout=lay)
        if axis == "tx":
            Tx.cta.copy(R, A)
            Tx.cta.copy(B, R)
        else:
            Tx.wg.copy(R, A)
            Tx.wg.copy(B, R)

    return k


@pytest.mark.gpu
@pytest.mark.parametrize("axis", ["tx", "tid_in_wg"])
def test_reg_registers_on_tx_and_tid_in_wg(axis: str, device: str) -> None:
    func = _reg_kernel(axis)
    assert _variants(func) == ["reg", "reg"]
    a = np.arange(128 * 3, dtype="float32").reshape(128, 3) * 0.5
    np.testing.assert_array_equal(_run(_compile(func), a), a)


# -- an emulated build's sources ----------------------------------------------------------------


@pytest.mark.gpu
def test_emulated_build_shows_the_gpu_source(device: str) -> None:
    if device != "cpu":
        pytest.skip("an emulated build only")
    ex = _compile(_warp_kernel())
    assert "asm volatile(\"ldmatrix.sync.aligned" in ex.inspect_source()
    assert ex.inspect_source("cuda") == ex.inspect_source()
    emulated = ex.inspect_source("emulated")
    assert "tvm_cuda_emu::ldmatrix_b16(true, 2" in emulated
    assert "asm volatile" not in emulated


@no_type_check
def test_bare_swizzle_layout_swizzles_row_major_offsets() -> None:
    @T.prim_func
    def k(A: T.Buffer((8, 64), "float16")):
        T.device_entry()
        T.thread_id([32])
        S_ = T.alloc_buffer((8, 64), "float16", scope="shared", layout=SwizzleLayout(3, 3, 3))
        A[0, 0] = S_[0, 0]

    lay = _alloc_layouts(k)[0]
    assert isinstance(lay, ComposeLayout)
    assert lay.layout_B.is_memory_only()
    # row 1, column 0: offset 64; its bits 6.. XOR chunk 1 -> 64 + 8
    assert int(lay.apply([1, 0], [8, 64])["m"]) == 72


def _alloc_layouts(func: Any) -> list[Any]:
    found: list[Any] = []

    class V(tvm.ir.Visitor):
        def visit_AllocBuffer(self, node: Any) -> None:  # noqa: N802
            found.append(node.buffer.layout)

    V().visit(func.body)
    return found


# -- a shared region starting at a variable: every start it can have is checked -----------------


@no_type_check
def _staged_kernel() -> Any:
    from tvm_backend_cuda.dispatch.copy import ldmatrix_layout

    lay = ldmatrix_layout(16, 16)

    @T.prim_func
    def k(A_ptr: T.handle, B_ptr: T.handle):
        A = T.match_buffer(A_ptr, (3, 16, 16), "float16")
        B = T.match_buffer(B_ptr, (3, 16, 16), "float16")
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        T.thread_id([32])
        As = T.alloc_buffer((3, 16, 16), "float16", scope="shared")
        Bs = T.alloc_buffer((3, 16, 16), "float16", scope="shared")
        R = T.alloc_buffer((16, 16), "float16", scope="local", layout=lay)
        Tx.warp.copy(As, A)
        for s in range(3):
            Tx.warp.copy(R[:, :], As[s, 0:16, 0:16])
            Tx.warp.copy(Bs[2 - s, 0:16, 0:16], R[:, :])
        T.cuda.cta_sync()
        Tx.warp.copy(B, Bs)

    return k


@pytest.mark.gpu
def test_stage_index_start_uses_ldmatrix(device: str) -> None:
    func = _staged_kernel()
    assert _variants(func) == ["gmem_smem", "ldstmatrix", "ldstmatrix", "gmem_smem"]
    ex = _compile(func)
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ex.inspect_source()
    a = np.arange(3 * 16 * 16, dtype="float16").reshape(3, 16, 16)
    np.testing.assert_array_equal(_run(ex, a), a[::-1])


@no_type_check
def test_column_start_at_a_variable_declines_when_one_start_is_misaligned() -> None:
    lay = TileLayout(S[(8, 4, 2):(4 @ laneid, 1 @ laneid, 1)])

    @T.prim_func
    def k(A: T.Buffer((8, 24), "float16")):
        T.device_entry()
        T.thread_id([32])
        As = T.alloc_buffer((8, 24), "float16", scope="shared")
        R = T.alloc_buffer((8, 4, 2), "float16", scope="local", layout=lay)
        for c in range(3):
            Tx.warp.copy(R[:, :, :], As[0:8, c * 8:c * 8 + 8])
        A[0, 0] = As[0, 0]

    why = _plan_of(k, "warp", 32)
    assert isinstance(why, str)
    # c * 8 is always aligned, but the check knows only that the start lies in [0, 16]
    assert "not 16-byte aligned (the shared region starting at [0, 1])" in why


@no_type_check
def _sliced_cast_kernel(lo: int, hi: int) -> Any:
    """Each of 64 threads holds a row of 8 float32 registers; a CTA cast converts the columns
    lo:hi of that (64, 8) view to float16 (a region cut in its last, register, dimension)."""
    view = TileLayout(S[(64, 8):(1 @ tx, 1)])

    @T.prim_func
    def k(A: T.Buffer((64, 8), "float32"), B: T.Buffer((64, 8), "float16")):
        T.device_entry()
        T.cta_id([1])
        t = T.thread_id([64])
        src = T.alloc_buffer((8,), "float32", scope="local")
        dst = T.alloc_buffer((8,), "float16", scope="local")
        for i in T.serial(8):
            src[i] = A[t, i]
            dst[i] = T.float16(-1)
        sv = src.view(64, 8, layout=view)
        dv = dst.view(64, 8, layout=view)
        Tx.cta.cast(dv[0:64, lo:hi], sv[0:64, lo:hi])
        for i in T.serial(8):
            B[t, i] = dst[i]

    return k


@pytest.mark.gpu
@pytest.mark.parametrize("lo, hi", [(0, 4), (2, 6), (3, 8)])
def test_a_register_region_cut_in_its_register_dimension(lo: int, hi: int, device: str) -> None:
    a = np.random.default_rng(lo).standard_normal((64, 8)).astype("float32")
    dev = tvm.cuda(0)
    A = tvm.runtime.tensor(a, device=dev)
    B = tvm.runtime.tensor(np.zeros((64, 8), "float16"), device=dev)
    _compile(_sliced_cast_kernel(lo, hi))(A, B)
    want = np.full((64, 8), -1, "float16")
    want[:, lo:hi] = a[:, lo:hi].astype("float16")
    np.testing.assert_array_equal(B.numpy(), want)
