"""Blackwell tensor memory under the CUDA emulator (``arch="sm_100a"``): tcgen05.alloc /
dealloc, tcgen05.st and tcgen05.ld of every shape (checked against numpy and against
``tcgen05_atom_layout``, which the tile copies use), .unpack::16b / .pack::16b, tcgen05.cp from
shared memory completed by tcgen05.commit on an mbarrier, and the misuse the emulator reports:
a warp outside its 32-lane quarter, a column not allocated, a dealloc of the wrong size, and
the forms it does not model."""

from __future__ import annotations

from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.error import BoundsCheckError, EmulatorError, NotModelledError
from tvm_backend_cuda.layout import tcgen05_atom_layout
from tvm_backend_cuda.plugin import register_backend

register_backend()

#: (shape, .num) of the loads below: each fills 4 registers from 8 columns
LOADS = [("32x32b", 4), ("16x64b", 4), ("16x128b", 2), ("16x256b", 1)]


@pytest.fixture(autouse=True)
def _b200(monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulated device is a B200 (sm_100a) for these kernels."""
    import tvm_backend_cuda.emulator as emulator

    monkeypatch.setattr(emulator, "DEVICE_ARCH", "sm_100a")


def _emulated(func: Any) -> Any:
    return tvm.compile(func, target="cuda", arch="sm_100a", emulate=True)


@no_type_check
def _store_then_load(shape: str, num: int, lane_of_warp: Any = None) -> Any:
    """A warpgroup stores A[t, 0:8] with .32x32b.x8 (thread t: TMEM lane t), then loads 4
    registers with .<shape>.x<num> into B[t, 0:4]. ``lane_of_warp(warp)``: the lane the warps'
    stores address (default: their own quarter)."""
    from tvm.script import tirx as T

    lane_of = lane_of_warp or (lambda w: w * 32)

    @T.prim_func
    def tmem_roundtrip(A: T.Buffer((128, 8), "uint32"), B: T.Buffer((128, 4), "uint32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        taddr = T.alloc_shared([1], "uint32")
        r = T.alloc_local((8,), "uint32")
        o = T.alloc_local((4,), "uint32")
        if tx // 32 == 0:
            T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=64)
        T.cuda.cta_sync()
        for j in range(8):
            r[j] = A[tx, j]
        T.ptx.tcgen05.st(taddr[0] + (lane_of(tx // 32) << 16), r[0], r[1], r[2], r[3], r[4],
                         r[5], r[6], r[7], shape="32x32b", num=8)
        T.ptx.tcgen05.wait.st()
        T.ptx.tcgen05.fence.before_thread_sync()
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence.after_thread_sync()
        T.ptx.tcgen05.ld(taddr[0] + ((tx // 32 * 32) << 16), o[0], o[1], o[2], o[3],
                         shape=shape, num=num)
        T.ptx.tcgen05.wait.ld()
        for j in range(4):
            B[tx, j] = o[j]
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx.tcgen05.relinquish_alloc_permit()
            T.ptx.tcgen05.dealloc(taddr[0], n_cols=64)

    return tmem_roundtrip


def _expected_from_atom_layout(a: np.ndarray, shape: str) -> np.ndarray:
    """What each thread's 4 registers hold, read off ``tcgen05_atom_layout``: element (row, col)
    of the warpgroup's tile sits in register m of lane l of warp w; the .16x* tile's row
    16w + i is TMEM lane 32w + i, the .32x32b tile's row t is lane t."""
    rows, cols = (128, 4) if shape == "32x32b" else (64, 8)
    lay = tcgen05_atom_layout(shape, (rows, cols), "uint32")
    want = np.full((128, 4), 0xFFFFFFFF, "uint32")
    for row in range(rows):
        for col in range(cols):
            at = {ax: int(v) for ax, v in lay.apply(row, col, shape=[rows, cols]).items()}
            if shape == "32x32b":
                thread, lane = at["tid_in_wg"], row
            else:
                thread = 32 * at["wid_in_wg"] + at["laneid"]
                lane = 32 * (row // 16) + row % 16
            want[thread, at["m"]] = a[lane, col]
    return want


@pytest.mark.parametrize(("shape", "num"), LOADS)
def test_load_shapes_follow_the_atom_layouts(shape: str, num: int) -> None:
    ex = _emulated(_store_then_load(shape, num))
    a = np.arange(128 * 8, dtype="uint32").reshape(128, 8) * 7 + 3
    b = np.zeros((128, 4), "uint32")
    ex(a, b)
    np.testing.assert_array_equal(b, _expected_from_atom_layout(a, shape))


def test_load_fragments_match_the_ptx_figures() -> None:
    """A few cells read off the PTX ISA's fragment figures (independent of the layouts)."""
    a = np.arange(128 * 8, dtype="uint32").reshape(128, 8)
    got = {}
    for shape, num in LOADS:
        b = np.zeros((128, 4), "uint32")
        _emulated(_store_then_load(shape, num))(a, b)
        got[shape] = b
    np.testing.assert_array_equal(got["32x32b"][37], a[37, :4])
    # .16x256b: lane 0 holds row 0 columns 0, 1 then row 8 columns 0, 1; lane 1 columns 2, 3;
    # lane 4 row 1; warp 2 rows 64..79
    np.testing.assert_array_equal(got["16x256b"][0], [a[0, 0], a[0, 1], a[8, 0], a[8, 1]])
    np.testing.assert_array_equal(got["16x256b"][1], [a[0, 2], a[0, 3], a[8, 2], a[8, 3]])
    np.testing.assert_array_equal(got["16x256b"][4], a[[1, 1, 9, 9], [0, 1, 0, 1]])
    np.testing.assert_array_equal(got["16x256b"][64 + 5], a[[65, 65, 73, 73], [2, 3, 2, 3]])
    # .16x128b: lane l holds row l / 4, column l % 4, then row + 8, then column + 4
    np.testing.assert_array_equal(got["16x128b"][6], a[[1, 9, 1, 9], [2, 2, 6, 6]])
    # .16x64b: lanes 0 and 2 hold row 0 (columns 0, 1), lanes 1 and 3 row 8
    np.testing.assert_array_equal(got["16x64b"][0], a[0, [0, 2, 4, 6]])
    np.testing.assert_array_equal(got["16x64b"][2], a[0, [1, 3, 5, 7]])
    np.testing.assert_array_equal(got["16x64b"][1], a[8, [0, 2, 4, 6]])


def test_a_warp_outside_its_lane_quarter_is_reported() -> None:
    ex = _emulated(_store_then_load("32x32b", 4, lane_of_warp=lambda w: 0))
    with pytest.raises(EmulatorError, match=r"tcgen05\.st\.32x32b at tensor-memory address "
                                            r"0x\w+: thread 32 \(warp 1\) reaches TMEM lane 0, "
                                            r"but warp 1 may access only lanes 32-63"):
        ex(np.zeros((128, 8), "uint32"), np.zeros((128, 4), "uint32"))


@no_type_check
def _one_warp(body: str) -> Any:
    """One warp: allocates 32 columns, then ``body`` (``col``: a column past them; ``size``: a
    wrong dealloc size)."""
    from tvm.script import tirx as T

    col = 40 if body == "column" else 0
    size = 64 if body == "dealloc" else 32

    @T.prim_func
    def one_warp(A: T.Buffer((32,), "uint32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([32])
        taddr = T.alloc_shared([1], "uint32")
        r = T.alloc_local((1,), "uint32")
        T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=32)
        T.cuda.cta_sync()
        r[0] = A[tx]
        T.ptx.tcgen05.st(taddr[0], r[0], shape="32x32b", num=1, col=col)
        T.ptx.tcgen05.wait.st()
        T.ptx.tcgen05.dealloc(taddr[0], n_cols=size)

    return one_warp


def test_a_column_not_allocated_is_reported() -> None:
    with pytest.raises(BoundsCheckError, match=r"reaches column 40, which the CTA has not "
                                               r"allocated"):
        _emulated(_one_warp("column"))(np.zeros(32, "uint32"))


def test_a_dealloc_of_another_size_is_reported() -> None:
    with pytest.raises(EmulatorError, match=r"tcgen05\.dealloc of 64 columns at tensor-memory "
                                            r"address 0x0, which is not the address of an "
                                            r"allocation of 64 columns"):
        _emulated(_one_warp("dealloc"))(np.zeros(32, "uint32"))


def test_unpack_and_pack_move_16_bit_halves_through_two_columns() -> None:
    from tvm.script import tirx as T

    @T.prim_func
    def halves(A: T.Buffer((32,), "uint32"), B: T.Buffer((32, 3), "uint32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([32])
        taddr = T.alloc_shared([1], "uint32")
        r = T.alloc_local((3,), "uint32")
        T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=32)
        T.cuda.cta_sync()
        r[0] = A[tx]
        T.ptx.tcgen05.st(taddr[0], r[0], shape="32x32b", num=1, unpack=True)
        T.ptx.tcgen05.wait.st()
        T.ptx.tcgen05.ld(taddr[0], r[1], r[2], shape="32x32b", num=2)  # the two columns
        T.ptx.tcgen05.ld(taddr[0], r[0], shape="32x32b", num=1, pack=True)
        T.ptx.tcgen05.wait.ld()
        for j in range(3):
            B[tx, j] = r[j]
        T.ptx.tcgen05.dealloc(taddr[0], n_cols=32)

    a = (np.arange(32, dtype="uint32") << 16) | (np.arange(32, dtype="uint32") + 0x100)
    b = np.zeros((32, 3), "uint32")
    _emulated(halves)(a, b)
    np.testing.assert_array_equal(b[:, 0], a)
    np.testing.assert_array_equal(b[:, 1], a & 0xFFFF)
    np.testing.assert_array_equal(b[:, 2], a >> 16)


def test_cp_copies_a_shared_tile_and_commit_arrives() -> None:
    """tcgen05.cp.128x256b of a [128, 8] uint32 tile in 8x16-byte core matrices (K-major,
    no swizzle: leading offset 128 x 16 bytes to the next 4 columns, stride 8 x 16 bytes to the
    next 8 rows), committed to an mbarrier, read back with .32x32b."""
    from tvm.script import tirx as T

    @T.prim_func
    def cp_tile(A: T.Buffer((128, 8), "uint32"), B: T.Buffer((128, 8), "uint32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        taddr = T.alloc_shared([1], "uint32")
        bar = T.alloc_shared([1], "uint64")
        S = T.alloc_shared([1024], "uint32", align=128)
        desc = T.alloc_local((1,), "uint64")
        r = T.alloc_local((8,), "uint32")
        if tx // 32 == 0:
            T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=32)
        if tx == 0:
            T.ptx.mbarrier.init(bar.ptr_to([0]), 1)
        for j in range(8):  # core matrix (row // 8, j // 4): 128 bytes; K halves 2048 apart
            S[(j // 4) * 512 + (tx // 8) * 32 + (tx % 8) * 4 + j % 4] = A[tx, j]
        T.cuda.cta_sync()
        if tx == 0:
            T.ptx.tcgen05.encode_matrix_descriptor(T.address_of(desc[0]), S.ptr_to([0]), 128, 8,
                                                   0)
            T.ptx.tcgen05.cp(taddr[0], desc[0], shape="128x256b")
            T.ptx.tcgen05.commit(bar.ptr_to([0]))
        T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0)
        T.ptx.tcgen05.ld(taddr[0] + ((tx // 32 * 32) << 16), r[0], r[1], r[2], r[3], r[4],
                         r[5], r[6], r[7], shape="32x32b", num=8)
        T.ptx.tcgen05.wait.ld()
        for j in range(8):
            B[tx, j] = r[j]
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx.tcgen05.dealloc(taddr[0], n_cols=32)

    a = np.arange(1024, dtype="uint32").reshape(128, 8) * 5 + 1
    b = np.zeros((128, 8), "uint32")
    _emulated(cp_tile)(a, b)
    np.testing.assert_array_equal(b, a)


def test_cta_pairs_and_tmem_shift_are_not_modelled() -> None:
    from tvm.script import tirx as T

    @T.prim_func
    def pair(A: T.Buffer((32,), "uint32")):
        T.device_entry()
        T.cta_id([2])
        T.thread_id([32])
        taddr = T.alloc_shared([1], "uint32")
        T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=32, cta_group=2)

    with pytest.raises(NotModelledError, match=r"cta_group=2: the CUDA emulator models the "
                                               r"tensor memory of one CTA"):
        _emulated(pair)

    @T.prim_func
    def shift(A: T.Buffer((32,), "uint32")):
        T.device_entry()
        T.cta_id([1])
        T.thread_id([32])
        T.ptx.tcgen05.shift(0)

    with pytest.raises(NotModelledError, match=r"ptx\.tcgen05_shift has no emulation body"):
        _emulated(shift)


@no_type_check
def _tile_copies(dtype: str, width: int, frag_shape: str) -> Any:
    """Tile copies through a ``tmem`` buffer: registers ``[8 : 8 + width]`` of each thread (row
    t) to TMEM and back into fresh registers (.32x32b), then the first 64 rows again into
    registers laid out by ``tcgen05_atom_layout(frag_shape, ...)`` (the .16x* atom)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TCol, TileLayout, TLane, tid_in_wg

    rows_of = TileLayout(S[(128, width + 8):(1 @ tid_in_wg, 1)])
    out_of = TileLayout(S[(128, width):(1 @ tid_in_wg, 1)])
    atom = tcgen05_atom_layout(frag_shape, (64, width), dtype)
    per_thread = 64 * width // 128
    ncols = max(32, width * tvm.DataType(dtype).bits // 32)

    @T.prim_func
    def tile_copies(A: T.Buffer((128, width), dtype), B: T.Buffer((128, width), dtype),
                    F: T.Buffer((128, per_thread), dtype)):
        T.device_entry()
        warp = T.warp_id([4])
        wg = T.warpgroup_id([1])
        tx = T.thread_id([128])
        taddr = T.alloc_shared([1], "uint32")
        if wg == 0:
            if warp == 0:
                T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=ncols)
            T.cuda.cta_sync()
            tmem = T.decl_buffer((128, width), dtype, scope="tmem", allocated_addr=taddr[0],
                                 layout=TileLayout(S[(128, width):(1 @ TLane, 1 @ TCol)]))
            regs = T.alloc_local((width + 8,), dtype)
            back = T.alloc_local((width,), dtype)
            frag = T.alloc_local((per_thread,), dtype)
            for j in range(width):
                regs[8 + j] = A[tx, j]
            rows = regs.view(128, width + 8, layout=rows_of)
            back_rows = back.view(128, width, layout=out_of)
            frag_tile = frag.view(64, width, layout=atom)
            Tx.wg.copy_async(tmem[:, :], rows[:, 8:])
            T.ptx.tcgen05.wait.st()
            T.cuda.cta_sync()
            Tx.wg.copy_async(back_rows[:, :], tmem[:, :])
            Tx.wg.copy_async(frag_tile[:, :], tmem[0:64, :])
            T.ptx.tcgen05.wait.ld()
            for j in range(width):
                B[tx, j] = back[j]
            for j in range(per_thread):
                F[tx, j] = frag[j]
            T.cuda.cta_sync()
            if warp == 0:
                T.ptx.tcgen05.dealloc(taddr[0], n_cols=ncols)

    return tile_copies


@pytest.mark.parametrize(("dtype", "width", "frag_shape"), [
    ("float32", 8, "16x128b"), ("float16", 16, "16x256b"), ("float32", 16, "16x64b")])
def test_tile_copies_through_a_tmem_buffer(dtype: str, width: int, frag_shape: str) -> None:
    f = _tile_copies(dtype, width, frag_shape)
    ex = _emulated(f)
    assert f".{frag_shape}.x" in ex.inspect_source()  # the .16x* atom, not .32x32b rows
    a = (np.arange(128 * width) % 251).astype(dtype).reshape(128, width)
    b = np.zeros_like(a)
    frag = np.zeros((128, 64 * width // 128), dtype)
    ex(a, b, frag)
    np.testing.assert_array_equal(b, a)
    # the fragment: element (r, c) of the 64 rows is in register m of lane l of warp w, where
    # tcgen05_atom_layout puts it; row 16w + i is TMEM lane 32w + i
    lay = tcgen05_atom_layout(frag_shape, (64, width), dtype)
    for r in range(64):
        for c in range(width):
            at = {ax: int(v) for ax, v in lay.apply(r, c, shape=[64, width]).items()}
            t = 32 * at["wid_in_wg"] + at["laneid"]
            assert frag[t, at["m"]] == a[32 * (r // 16) + r % 16, c], (r, c)


def test_alloc_tcgen05_ldst_frag_allocates_the_atoms_registers() -> None:
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TCol, TileLayout, TLane

    @T.prim_func
    def frag_load(A: T.Buffer((128, 16), "float32")):
        T.device_entry()
        warp = T.warp_id([4])
        wg = T.warpgroup_id([1])
        T.thread_id([128])
        taddr = T.alloc_shared([1], "uint32")
        if wg == 0:
            if warp == 0:
                T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=32)
            T.cuda.cta_sync()
            tmem = T.decl_buffer((128, 16), "float32", scope="tmem", allocated_addr=taddr[0],
                                 layout=TileLayout(S[(128, 16):(1 @ TLane, 1 @ TCol)]))
            frag = T.alloc_tcgen05_ldst_frag("16x256b", (128, 16), "float32")
            Tx.wg.copy_async(frag[:, :], tmem[:, :])
            T.ptx.tcgen05.wait.ld()

    from tvm.ir import AllocBuffer
    from tvm.ir.visitor import post_order_visit

    allocs: list[Any] = []
    post_order_visit(frag_load.body, lambda n: allocs.append(n) if isinstance(n, AllocBuffer)
                     and n.buffer.scope == "local" else None)
    alloc = allocs[0]
    assert repr(alloc.buffer.layout) == repr(tcgen05_atom_layout("16x256b", (128, 16),
                                                                 "float32"))
    src = _emulated(frag_load).inspect_source()
    # 128 rows: two .16x256b.x2 issues a warp, the second 16 lanes further
    assert src.count("tcgen05.ld.sync.aligned.16x256b.x2.b32") == 2
    with pytest.raises(ValueError, match=r"tcgen05_atom_layout: \.16x256b covers 16 rows a warp"):
        T.alloc_tcgen05_ldst_frag("16x256b", (32, 16), "float32")


def test_mma_of_shared_tiles_accumulates_in_tmem() -> None:
    """tcgen05.mma kind::f16 (M = 128, N = 16, K = 16 in two k = 8 halves of the K-major,
    unswizzled core-matrix layout), then a second MMA accumulating the same product: D = 2 A B^T,
    read back with .32x32b."""
    from tvm.script import tirx as T

    M, N, K = 128, 16, 16

    @T.prim_func
    def mma(A: T.Buffer((M, K), "float16"), B: T.Buffer((N, K), "float16"),
            C: T.Buffer((M, N), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        taddr = T.alloc_shared([1], "uint32")
        bar = T.alloc_shared([1], "uint64")
        SA = T.alloc_shared([M * K], "float16", align=128)
        SB = T.alloc_shared([N * K], "float16", align=128)
        da = T.alloc_local((1,), "uint64")
        db = T.alloc_local((1,), "uint64")
        di = T.alloc_local((1,), "uint32")
        r = T.alloc_local((N,), "float32")
        if tx // 32 == 0:
            T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=32)
        if tx == 0:
            T.ptx.mbarrier.init(bar.ptr_to([0]), 1)
        for k in range(K):  # (k // 8) * 16 M-rows-of-8 bytes + core matrix (m // 8) + row m % 8
            SA[(k // 8) * M * 8 + (tx // 8) * 64 + (tx % 8) * 8 + k % 8] = A[tx, k]
            if tx < N:
                SB[(k // 8) * N * 8 + (tx // 8) * 64 + (tx % 8) * 8 + k % 8] = B[tx, k]
        T.cuda.cta_sync()
        if tx == 0:
            T.ptx.tcgen05.encode_instr_descriptor(
                T.address_of(di[0]), d_dtype="float32", a_dtype="float16", b_dtype="float16",
                M=M, N=N, K=K, trans_a=False, trans_b=False)
            T.ptx.tcgen05.encode_matrix_descriptor(T.address_of(da[0]), SA.ptr_to([0]),
                                                   M * 16 // 16, 8, 0)
            T.ptx.tcgen05.encode_matrix_descriptor(T.address_of(db[0]), SB.ptr_to([0]),
                                                   N * 16 // 16, 8, 0)
            T.ptx.tcgen05.mma(taddr[0], da[0], db[0], di[0], d_dtype="float32",
                              a_dtype="float16", b_dtype="float16", use_a_tmem=False,
                              cta_group=1, enable_input_d=0)
            T.ptx.tcgen05.mma(taddr[0], da[0], db[0], di[0], d_dtype="float32",
                              a_dtype="float16", b_dtype="float16", use_a_tmem=False,
                              cta_group=1, enable_input_d=1)
            T.ptx.tcgen05.commit(bar.ptr_to([0]))
        T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0)
        T.ptx.tcgen05.fence.after_thread_sync()
        T.ptx.tcgen05.ld(taddr[0] + ((tx // 32 * 32) << 16), *[r[j] for j in range(N)],
                         shape="32x32b", num=N)
        T.ptx.tcgen05.wait.ld()
        for j in range(N):
            C[tx, j] = r[j]
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx.tcgen05.dealloc(taddr[0], n_cols=32)

    rng = np.random.default_rng(5)
    a = rng.integers(-4, 5, (M, K)).astype("float16")
    b = rng.integers(-4, 5, (N, K)).astype("float16")
    c = np.zeros((M, N), "float32")
    _emulated(mma)(a, b, c)
    np.testing.assert_array_equal(c, 2 * a.astype("float32") @ b.astype("float32").T)


def test_a_slice_of_an_atom_register_tile_is_refused() -> None:
    from tvm.error import DispatchError
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TCol, TileLayout, TLane

    @T.prim_func
    def half_tile(A: T.Buffer((128, 16), "float32")):
        T.device_entry()
        warp = T.warp_id([4])
        wg = T.warpgroup_id([1])
        T.thread_id([128])
        taddr = T.alloc_shared([1], "uint32")
        if wg == 0:
            if warp == 0:
                T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=32)
            T.cuda.cta_sync()
            tmem = T.decl_buffer((128, 16), "float32", scope="tmem", allocated_addr=taddr[0],
                                 layout=TileLayout(S[(128, 16):(1 @ TLane, 1 @ TCol)]))
            frag = T.alloc_tcgen05_ldst_frag("16x128b", (64, 16), "float32")
            Tx.wg.copy_async(frag[:, 0:8], tmem[0:64, 0:8])
            T.ptx.tcgen05.wait.ld()

    with pytest.raises(DispatchError, match="copy the whole register tile"):
        _emulated(half_tile)
