"""Reductions of register tiles spread over threads (``local`` buffers whose layouts have thread
axes), the CUDA ``local`` variant: which elements combine follows the src and dst layouts.

- a reduced axis that dst keeps part of (dst ``[8, 4]`` of src ``[8, 64]``, 4 lanes to a row):
  one partial per lane, or with ``thread_reduce=True`` the row's total in all four;
- a dst replicated over the lanes (``R[32 : 1 @ laneid]``) that keeps src's register digit;
- a warpgroup-wide reduction across warps (through shared memory), into private registers;
- a src region that cuts a register-only axis; ``accum``;
- a CTA of two warps declared as ``T.warp_id_in_wg([2])``;
- the errors for layouts that do not pair up, and the shuffles in the generated code.

The numeric tests take the ``device`` fixture (GPU, else the CUDA emulator)."""

from __future__ import annotations

from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import R
from tvm.tirx.operator.tile_primitive import lower_tile_primitives
from tvm_backend_cuda.plugin import register_backend

register_backend()

_NP: dict[str, Any] = {"sum": np.sum, "max": np.max, "min": np.min}
_COMBINE: dict[str, Any] = {"sum": np.add, "max": np.maximum, "min": np.minimum}
_TX = {"sum": Tx.warp.sum, "max": Tx.warp.max, "min": Tx.warp.min}


def _run(func: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    ex = tvm.compile(func, target="cuda")
    dev = tvm.cuda(0)
    tensors = [tvm.runtime.tensor(a, dev) for a in arrays]
    ex(*tensors)
    return [t.numpy() for t in tensors]


# src [8, 64]: row r on lanes 4r..4r+3 (4 @ laneid), column 4j + c in register j of lane 4r + c
_ROWS_SRC = T.TileLayout(T.S[(8, 16, 4):(4 @ T.laneid, 1, 1 @ T.laneid)])
# dst [8, 4]: element (r, c) in the one register of lane 4r + c
_ROWS_DST = T.TileLayout(T.S[(8, 4):(4 @ T.laneid, 1 @ T.laneid)])


@no_type_check
def _rows_kernel(op: str, thread_reduce: bool, accum: bool) -> Any:
    reduce = _TX[op]

    @T.prim_func
    def k(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8, 4), "float32")):
        T.device_entry()
        lane = T.lane_id([32])
        regs = T.alloc_buffer((16,), "float32", scope="local")
        out = T.alloc_buffer((1,), "float32", scope="local")
        for j in T.serial(16):
            regs[j] = A[lane // 4, j * 4 + lane % 4]
        out[0] = B[lane // 4, lane % 4]
        src = regs.view(8, 64, layout=_ROWS_SRC)
        dst = out.view(8, 4, layout=_ROWS_DST)
        reduce(dst, src, axes=-1, accum=accum, thread_reduce=thread_reduce)
        B[lane // 4, lane % 4] = out[0]

    return k


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("thread_reduce", [False, True])
@pytest.mark.parametrize("accum", [False, True])
def test_rows_kept_per_lane_or_combined(op: str, thread_reduce: bool, accum: bool,
                                        device: str) -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((8, 64)).astype(np.float32)
    b0 = rng.standard_normal((8, 4)).astype(np.float32)
    _, b = _run(_rows_kernel(op, thread_reduce, accum), a, b0.copy())
    if thread_reduce:
        want = np.repeat(_NP[op](a, axis=1, keepdims=True), 4, axis=1)
    else:  # lane c of a row holds the columns 4j + c
        want = _NP[op](a.reshape(8, 16, 4), axis=1)
    if accum:
        want = _COMBINE[op](want, b0)
    np.testing.assert_allclose(b, want, rtol=1e-5, atol=1e-5)


def test_thread_reduce_adds_the_shuffles_of_the_kept_lanes() -> None:
    def shuffles(thread_reduce: bool) -> list[str]:
        src = tvm.compile(_rows_kernel("sum", thread_reduce, False), target="cuda")
        return [line.strip() for line in src.inspect_source().splitlines()
                if "__shfl_xor_sync" in line]

    assert shuffles(False) == []
    found = shuffles(True)
    assert len(found) == 2 and ", 2, 32)" in found[0] and ", 1, 32)" in found[1], found


@no_type_check
def _replica_kernel(dtype: str) -> Any:
    src_lay = T.TileLayout(T.S[(32, 2):(1 @ T.laneid, 1)])
    dst_lay = T.TileLayout(T.S[2:1] + R[32:1 @ T.laneid])

    @T.prim_func
    def k(A: T.Buffer((64,), dtype), B: T.Buffer((32, 2), dtype)):
        T.device_entry()
        lane = T.lane_id([32])
        regs = T.alloc_buffer((2,), dtype, scope="local")
        out = T.alloc_buffer((2,), dtype, scope="local")
        for j in T.serial(2):
            regs[j] = A[lane * 2 + j]
        dst = out.view(2, layout=dst_lay)
        src = regs.view(64, layout=src_lay)
        Tx.warp.max(dst, src)
        for j in T.serial(2):
            B[lane, j] = out[j]

    return k


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_dst_replicated_over_the_lanes_keeps_the_register_digit(dtype: str, device: str) -> None:
    a = np.random.default_rng(1).standard_normal(64).astype(dtype)
    _, b = _run(_replica_kernel(dtype), a, np.zeros((32, 2), dtype))
    want = a.reshape(32, 2).max(axis=0)
    np.testing.assert_array_equal(b, np.broadcast_to(want, (32, 2)))


@no_type_check
def _warpgroup_rows_kernel(op: str) -> Any:
    # src [4, 128]: row r in register r; column c on thread c of the warpgroup (4 warps)
    lay = T.TileLayout(T.S[(4, 4, 32):(1, 32 @ T.tid, 1 @ T.tid)])
    reduce = {"sum": Tx.wg.sum, "max": Tx.wg.max, "min": Tx.wg.min}[op]

    @T.prim_func
    def k(A: T.Buffer((4, 128), "float32"), B: T.Buffer((128, 4), "float32")):
        T.device_entry()
        tx = T.thread_id([128])
        regs = T.alloc_buffer((4,), "float32", scope="local")
        out = T.alloc_buffer((4, 1), "float32", scope="local")
        for r in T.serial(4):
            regs[r] = A[r, tx]
        src = regs.view(4, 128, layout=lay)
        reduce(out, src, axes=-1)
        for r in T.serial(4):
            B[tx, r] = out[r, 0]

    return k


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_rows_across_the_warps_of_a_warpgroup(op: str, device: str) -> None:
    a = np.random.default_rng(2).standard_normal((4, 128)).astype(np.float32)
    _, b = _run(_warpgroup_rows_kernel(op), a, np.zeros((128, 4), np.float32))
    # every thread holds all four row results
    np.testing.assert_allclose(b, np.broadcast_to(_NP[op](a, axis=1), (128, 4)), rtol=1e-5,
                               atol=1e-5)


@no_type_check
def _cut_region_kernel(accum: bool) -> Any:
    src_lay = T.TileLayout(T.S[(32, 8):(1 @ T.laneid, 1)])
    dst_lay = T.TileLayout(T.S[(32, 1):(1 @ T.laneid, 1)])

    @T.prim_func
    def k(A: T.Buffer((32, 8), "float32"), B: T.Buffer((32,), "float32")):
        T.device_entry()
        lane = T.lane_id([32])
        regs = T.alloc_buffer((8,), "float32", scope="local")
        out = T.alloc_buffer((1,), "float32", scope="local")
        for j in T.serial(8):
            regs[j] = A[lane, j]
        out[0] = B[lane]
        src = regs.view(32, 8, layout=src_lay)
        dst = out.view(32, 1, layout=dst_lay)
        Tx.warp.sum(dst, src[:, 3:7], axes=-1, accum=accum)
        B[lane] = out[0]

    return k


@pytest.mark.gpu
@pytest.mark.parametrize("accum", [False, True])
def test_a_region_that_cuts_the_register_axis(accum: bool, device: str) -> None:
    a = np.random.default_rng(3).standard_normal((32, 8)).astype(np.float32)
    b0 = np.arange(32, dtype=np.float32)
    _, b = _run(_cut_region_kernel(accum), a, b0.copy())
    want = a[:, 3:7].sum(axis=1) + (b0 if accum else 0)
    np.testing.assert_allclose(b, want, rtol=1e-5, atol=1e-5)
    text = tvm.compile(_cut_region_kernel(accum), target="cuda").inspect_source()
    assert "__shfl_xor_sync" not in text  # the rows stay in their lanes


@no_type_check
def _two_warp_kernel() -> Any:
    lay = T.TileLayout(T.S[(2, 64):(1, 1 @ T.tid)])

    @T.prim_func
    def k(A: T.Buffer((128,), "float32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        _g = T.warpgroup_id([1])
        w = T.warp_id_in_wg([2])
        lane = T.lane_id([32])
        regs = T.alloc_buffer((2,), "float32", scope="local")
        out = T.alloc_buffer((1,), "float32", scope="local")
        for j in T.serial(2):
            regs[j] = A[j * 64 + w * 32 + lane]
        src = regs.view(128, layout=lay)
        Tx.cta.sum(out, src)
        B[w * 32 + lane] = out[0]

    return k


@pytest.mark.gpu
def test_a_cta_of_two_warps_declared_as_a_partial_warpgroup(device: str) -> None:
    a = np.random.default_rng(4).standard_normal(128).astype(np.float32)
    _, b = _run(_two_warp_kernel(), a, np.zeros(64, np.float32))
    np.testing.assert_allclose(b, np.full(64, a.astype(np.float64).sum()), rtol=1e-5)
    text = tvm.compile(_two_warp_kernel(), target="cuda").inspect_source()
    assert "__launch_bounds__(64)" in text  # the two warps, not a warpgroup of four


def _dispatch_error(func: Any) -> str:
    with pytest.raises(tvm.error.DispatchError) as info:
        lower_tile_primitives(func, tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}))
    return str(info.value)


@no_type_check
def test_a_replicated_dst_needs_the_threads_reduced() -> None:
    # src keeps its lane axis (nothing crosses lanes), yet dst claims one value on all lanes
    src_lay = T.TileLayout(T.S[(32, 4):(1 @ T.laneid, 1)])
    dst_lay = T.TileLayout(T.S[(32, 1):(1, 1)] + R[32:1 @ T.laneid])

    @T.prim_func
    def k(A: T.Buffer((32,), "float32")):
        T.device_entry()
        lane = T.lane_id([32])
        regs = T.alloc_buffer((4,), "float32", scope="local")
        out = T.alloc_buffer((32,), "float32", scope="local")
        dst = out.view(32, 1, layout=dst_lay)
        src = regs.view(32, 4, layout=src_lay)
        Tx.warp.sum(dst, src, dispatch="local")
        A[lane] = out[0]

    assert "kept dimension 0 is spread over other threads in dst (none) than in src " \
        "(32:1@laneid)" in _dispatch_error(k)


@no_type_check
def test_dst_may_keep_only_digits_src_has() -> None:
    src_lay = T.TileLayout(T.S[(8, 16, 4):(4 @ T.laneid, 1, 1 @ T.laneid)])
    dst_lay = T.TileLayout(T.S[(8, 2):(4 @ T.laneid, 2 @ T.laneid)])

    @T.prim_func
    def k(A: T.Buffer((32,), "float32")):
        T.device_entry()
        lane = T.lane_id([32])
        regs = T.alloc_buffer((16,), "float32", scope="local")
        out = T.alloc_buffer((1,), "float32", scope="local")
        dst = out.view(8, 2, layout=dst_lay)
        src = regs.view(8, 64, layout=src_lay)
        Tx.warp.sum(dst, src, dispatch="local")
        A[lane] = out[0]

    assert "dst keeps 2:2@laneid of reduced dimension 1, which src does not have " \
        "(16:1@m, 4:1@laneid)" in _dispatch_error(k)


@no_type_check
def test_replica_over_lanes_src_does_not_reduce() -> None:
    src_lay = T.TileLayout(T.S[(4, 8):(1 @ T.laneid, 1)])
    dst_lay = T.TileLayout(T.S[(4, 1):(1 @ T.laneid, 1)] + R[8:4 @ T.laneid])

    @T.prim_func
    def k(A: T.Buffer((32,), "float32")):
        T.device_entry()
        lane = T.lane_id([32])
        regs = T.alloc_buffer((8,), "float32", scope="local")
        out = T.alloc_buffer((1,), "float32", scope="local")
        dst = out.view(4, 1, layout=dst_lay)
        src = regs.view(4, 8, layout=src_lay)
        Tx.warp.sum(dst, src, dispatch="local")
        A[lane] = out[0]

    assert "dst is replicated over 8:4@laneid, but src is not reduced over those threads " \
        "(it is over none)" in _dispatch_error(k)


@no_type_check
def _looped_two_level_kernel() -> Any:
    # per iteration: each warp's max by shuffles, the warp maxima through a T.SMEMPool buffer,
    # then warp 0 reduces those (lanes past the warp count contribute -inf)
    lane_src = T.TileLayout(T.S[32:1 @ T.laneid])
    lane_dst = T.TileLayout(T.S[1:1] + R[32:1 @ T.laneid])

    @T.prim_func
    def k(A: T.Buffer((3, 64), "float32"), B: T.Buffer((3,), "float32")):
        T.device_entry()
        w = T.warp_id([2])
        lane = T.lane_id([32])
        pool = T.SMEMPool()
        partial = pool.alloc([2], "float32")
        pool.commit()
        x = T.alloc_buffer((1,), "float32", scope="local")
        y = T.alloc_buffer((1,), "float32", scope="local")
        for it in T.serial(3):
            x[0] = A[it, w * 32 + lane]
            src = x.view(32, layout=lane_src)
            dst = y.view(1, layout=lane_dst)
            Tx.warp.max(dst, src)
            partial[w] = y[0]
            T.cuda.cta_sync()
            if w == 0:
                x[0] = T.if_then_else(lane < 2, partial[lane % 2], T.float32("-inf"))
                Tx.warp.max(dst, src)
                if lane == 0:
                    B[it] = y[0]
            T.cuda.cta_sync()

    return k


@pytest.mark.gpu
def test_a_looped_two_level_reduction_in_a_shared_memory_pool(device: str) -> None:
    func = _looped_two_level_kernel()
    text = func.script()
    assert 'pool = T.alloc_buffer((8,), "uint8", scope="shared.dyn", align=1024)' in text
    a = np.random.default_rng(5).standard_normal((3, 64)).astype(np.float32)
    _, b = _run(func, a, np.zeros(3, np.float32))
    np.testing.assert_array_equal(b, a.max(axis=1))


@no_type_check
def _row_prefix_kernel(n: int) -> Any:
    # a row of 256 on a warp (4-element vectors, lanes in between), the first n reduced
    lay = T.TileLayout(T.S[(2, 32, 4):(4, 1 @ T.laneid, 1)])

    @T.prim_func
    def k(A: T.Buffer((256,), "float32"), B: T.Buffer((32, 2), "float32")):
        T.device_entry()
        lane = T.lane_id([32])
        regs = T.alloc_buffer((8,), "float32", scope="local")
        out = T.alloc_buffer((2,), "float32", scope="local")
        for c in T.serial(2):
            for e in T.serial(4):
                regs[c * 4 + e] = A[c * 128 + lane * 4 + e]
        x = regs.view(256, layout=lay)
        Tx.warp.sum(out[0:1], x[0:n])
        Tx.warp.min(out[1:2], x[0:n])
        B[lane, 0] = out[0]
        B[lane, 1] = out[1]

    return k


@pytest.mark.gpu
@pytest.mark.parametrize("n", [256, 200, 3])
def test_a_prefix_of_a_row_spread_over_lanes(n: int, device: str) -> None:
    a = np.random.default_rng(6).standard_normal(256).astype(np.float32)
    _, b = _run(_row_prefix_kernel(n), a, np.zeros((32, 2), np.float32))
    np.testing.assert_allclose(b[:, 0], np.full(32, a[:n].sum()), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(b[:, 1], np.full(32, a[:n].min()))


def test_a_thread_keeps_independent_partials() -> None:
    text = tvm.compile(_row_prefix_kernel(200), target="cuda").inspect_source()
    # one partial per element of the 4-vector, combined by a tree before the shuffles
    assert "red_part[3] = (red_part[3] + regs[3]);" in text
    # the second chunk is guarded element by element: lane * 4 + 128 + e < 200
    assert "if (((lane * 4) + 131) < 200) {" in text
    assert text.index("red_part[0] = (red_part[0] + red_part[1]);") < text.index("__shfl_xor_sync")
