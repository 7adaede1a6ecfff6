"""Vector widths of the CUDA ``copy`` variants follow the alignment of both sides.

``gmem_smem`` (and ``ldgsts``, the ``smem`` element-wise variant) split rows into 16/8/4-byte
chunks; a chunk is one access only where every chunk of both regions starts a multiple of its
width from the buffer's data: a row stride or a region start that is not a multiple narrows the
chunks (a row stride of 20 float16 gives 8-byte chunks, a start at column 3 none). ``reg``
writes a thread's registers to laid-out shared memory in runs the layout keeps together (a
128-byte swizzle keeps 8 float16), each one 16-byte access.

The ``gpu`` tests take the ``device`` fixture: without a GPU they run under the CUDA emulator.
"""

from __future__ import annotations

import re
from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm import ir
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, SwizzleLayout, TileLayout, wg_local_layout
from tvm.tirx.operator.tile_primitive.dispatcher import lower_tile_primitives
from tvm_backend_cuda.dispatch.copy import _chunk_elems
from tvm_backend_cuda.vector_access import multiple_of

SM90 = {"kind": "cuda", "arch": "sm_90a"}


def _compile(func: Any) -> Any:
    return tvm.compile(tvm.IRModule({"main": func}), target=SM90, tir_pipeline="tirx")


def _variants(func: Any) -> list[str]:
    trace: list[tuple[str, str, str]] = []
    lower_tile_primitives(func, tvm.target.Target(SM90), trace=trace)
    return [v for _, _, v in trace]


def _vector_accesses(src: str, buf: str) -> set[str]:
    """The vector types through which ``buf`` is read or written."""
    return set(re.findall(r"\*\((?:const )?(\w+)\*\)\(&" + buf + r"\[", src))


# -- gmem_smem: a padded row stride ------------------------------------------------------------
ROWS, COLS, PITCH = 3, 24, 28  # float16 rows 56 bytes apart: 8-byte aligned, not 16


@no_type_check
def _padded_rows_kernel() -> Any:
    padded = TileLayout(S[(ROWS, COLS):(PITCH, 1)])

    @T.prim_func
    def k(A_ptr: T.handle, B_ptr: T.handle):
        A = T.match_buffer(A_ptr, (ROWS * PITCH,), "float16")
        B = T.match_buffer(B_ptr, (ROWS, COLS), "float16")
        T.device_entry()
        T.cta_id([1])
        T.thread_id([8])
        Ap = T.decl_buffer((ROWS, COLS), "float16", data=A.data, layout=padded)
        sm = T.alloc_buffer((ROWS, COLS), "float16", scope="shared")
        Tx.cta.copy(sm[:, :], Ap[:, :])
        Tx.cta.copy(B[:, :], sm[:, :])

    return k


def test_padded_rows_narrow_the_chunks_to_the_row_alignment() -> None:
    func = _padded_rows_kernel()
    assert _variants(func) == ["gmem_smem", "gmem_smem"]
    src = _compile(func).inspect_source()
    assert _vector_accesses(src, "A") == {"uint2"}  # 4 float16 per access, never 8
    assert _vector_accesses(src, "B") == {"uint4"}  # the packed side keeps 16-byte chunks


@pytest.mark.gpu
def test_padded_rows_round_trip(device: str) -> None:
    a = (np.arange(ROWS * PITCH) % 251).astype("float16")
    dev = tvm.cuda(0)
    A = tvm.runtime.tensor(a, device=dev)
    B = tvm.runtime.tensor(np.zeros((ROWS, COLS), "float16"), device=dev)
    _compile(_padded_rows_kernel())(A, B)
    np.testing.assert_array_equal(B.numpy(), a.reshape(ROWS, PITCH)[:, :COLS])


# -- gmem_smem: a region starting at an odd column ---------------------------------------------


@no_type_check
def _odd_start_kernel(start: int) -> Any:
    @T.prim_func
    def k(A_ptr: T.handle, B_ptr: T.handle):
        A = T.match_buffer(A_ptr, (6, 40), "float32")
        B = T.match_buffer(B_ptr, (6, 16), "float32")
        T.device_entry()
        T.cta_id([1])
        T.thread_id([16])
        sm = T.alloc_buffer((6, 16), "float32", scope="shared")
        Tx.cta.copy(sm[:, :], A[:, start:start + 16])
        Tx.cta.copy(B[:, :], sm[:, :])

    return k


@pytest.mark.parametrize(("start", "read_as"), [(5, set()), (2, {"float2"}), (8, {"float4"})])
def test_region_start_sets_the_chunk_width(start: int, read_as: set[str]) -> None:
    src = _compile(_odd_start_kernel(start)).inspect_source()
    assert _vector_accesses(src, "A") == read_as


@pytest.mark.gpu
@pytest.mark.parametrize("start", [5, 2])
def test_region_start_round_trip(start: int, device: str) -> None:
    a = np.random.default_rng(start).random((6, 40)).astype("float32")
    dev = tvm.cuda(0)
    A = tvm.runtime.tensor(a, device=dev)
    B = tvm.runtime.tensor(np.zeros((6, 16), "float32"), device=dev)
    _compile(_odd_start_kernel(start))(A, B)
    np.testing.assert_array_equal(B.numpy(), a[:, start:start + 16])


def test_chunk_width_of_regions() -> None:
    f16 = ir.DataType("float16")
    plain = ir.Buffer("P", [8, 64], "float16", scope="shared")
    strided = ir.Buffer("Q", [8, 64], "float16", strides=[66, 1])
    offset = ir.Buffer("R", [8, 64], "float16", elem_offset=12)
    swz = ir.Buffer("W", [8, 64], "float16", scope="shared",
                    layout=SwizzleLayout(per_element=2, swizzle_len=3, atom_len=3))
    assert _chunk_elems(f16, 64, [plain.full_region()]) == 8
    assert _chunk_elems(f16, 64, [plain.full_region(), strided.full_region()]) == 2
    assert _chunk_elems(f16, 64, [offset.full_region()]) == 4
    assert _chunk_elems(f16, 64, [swz.full_region()]) == 4  # the swizzle keeps 4 together
    n = ir.Var("n", "int32")
    at_var = ir.BufferRegion(plain, [ir.Range(0, 8), ir.Range(n * 16, 16)])
    assert _chunk_elems(f16, 16, [at_var]) == 8  # a multiple of 16 columns, whatever n is
    at_odd = ir.BufferRegion(plain, [ir.Range(0, 8), ir.Range(n * 16 + 2, 16)])
    assert _chunk_elems(f16, 16, [at_odd]) == 2


def test_multiple_of_sees_through_floor_mod() -> None:
    tid = ir.Var("tid", "int32")
    col = ir.FloorMod(tid * 8, ir.const(64, "int32"))
    assert multiple_of(col, 8)
    assert not multiple_of(ir.FloorMod(tid * 8, ir.const(12, "int32")), 8)
    assert not multiple_of(ir.FloorMod(tid * 4, ir.const(64, "int32")), 8)


# -- reg: registers to swizzled shared memory --------------------------------------------------
THREADS, PER_THREAD = 128, 32


@no_type_check
def _reg_to_swizzled_kernel() -> Any:
    shape = (THREADS, PER_THREAD)
    swizzled = SwizzleLayout(per_element=3, swizzle_len=2, atom_len=3)

    @T.prim_func
    def k(A_ptr: T.handle, B_ptr: T.handle):
        A = T.match_buffer(A_ptr, shape, "float16")
        B = T.match_buffer(B_ptr, shape, "float16")
        T.device_entry()
        T.cta_id([1])
        T.thread_id([THREADS])
        tid = T.thread_id_in_wg([THREADS])
        regs = T.alloc_buffer(shape, "float16", scope="local",
                              layout=wg_local_layout(PER_THREAD))
        sm = T.alloc_buffer(shape, "float16", scope="shared", layout=swizzled)
        mine = regs.local(PER_THREAD)
        for i in T.serial(PER_THREAD):
            mine[i] = A[tid, i] * T.float16(2)
        Tx.wg.copy(sm, regs)
        T.cuda.cta_sync()
        for i in T.serial(PER_THREAD):
            B[(tid + 1) % THREADS, i] = sm[tid, i]

    return k


def test_registers_to_swizzled_shared_in_16_byte_runs() -> None:
    func = _reg_to_swizzled_kernel()
    assert _variants(func) == ["reg"]
    src = _compile(func).inspect_source()
    stores = re.findall(r"\*\(uint4\*\)\(&sm\[([^\]]*)\]\)", src)
    assert len(stores) == PER_THREAD // 8
    assert all("^" in s for s in stores)  # the swizzle's XOR, once per 16-byte run


@pytest.mark.gpu
def test_registers_to_swizzled_shared_round_trip(device: str) -> None:
    a = np.random.default_rng(1).random((THREADS, PER_THREAD)).astype("float16")
    dev = tvm.cuda(0)
    A = tvm.runtime.tensor(a, device=dev)
    B = tvm.runtime.tensor(np.zeros_like(a), device=dev)
    _compile(_reg_to_swizzled_kernel())(A, B)
    np.testing.assert_array_equal(B.numpy(), np.roll(a * np.float16(2), 1, axis=0))


# -- gmem_smem: a K-tiled shared layout keeps its own strides ----------------------------------
M, K = 32, 48  # shared element (i, j) at i * 8 + (j // 8) * (M * 8) + j % 8


@no_type_check
def _k_tiled_kernel() -> Any:
    k_tiled = TileLayout(S[(M, K // 8, 8):(8, M * 8, 1)])

    @T.prim_func
    def k(A_ptr: T.handle, B_ptr: T.handle):
        A = T.match_buffer(A_ptr, (M, K), "float16")
        B = T.match_buffer(B_ptr, (M * K,), "float16")
        T.device_entry()
        T.cta_id([1])
        T.thread_id([64])
        sm = T.alloc_buffer((M, K), "float16", scope="shared", layout=k_tiled)
        raw = T.decl_buffer((M * K,), "float16", data=sm.data, scope="shared")
        Tx.cta.copy(sm[:, :], A[:, :])
        Tx.cta.copy(B[:], raw[:])

    return k


def test_k_tiled_shared_layout_in_16_byte_chunks() -> None:
    src = _compile(_k_tiled_kernel()).inspect_source()
    assert _vector_accesses(src, "A") == {"uint4"}
    assert _vector_accesses(src, "sm") == {"uint4"}


@pytest.mark.gpu
def test_k_tiled_shared_layout_round_trip(device: str) -> None:
    a = np.random.default_rng(2).random((M, K)).astype("float16")
    dev = tvm.cuda(0)
    A = tvm.runtime.tensor(a, device=dev)
    B = tvm.runtime.tensor(np.zeros(M * K, "float16"), device=dev)
    _compile(_k_tiled_kernel())(A, B)
    # memory holds K // 8 column tiles, each M rows of 8
    expect = a.reshape(M, K // 8, 8).transpose(1, 0, 2).reshape(-1)
    np.testing.assert_array_equal(B.numpy(), expect)
