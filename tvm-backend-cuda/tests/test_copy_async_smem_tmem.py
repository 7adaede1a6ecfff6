"""``Tx.copy_async`` from shared to tensor memory (the ``smem->tmem`` variant, ``tcgen05.cp``).

The copy is planned from the two layouts (``dispatch/tcgen05_cp.py``): a TMEM layout with the
replica ``R[4 : 32@TLane]`` takes ``.32x128b.warpx4`` (32 lanes, broadcast to all four lane
quarters), one without takes ``.128x256b`` or ``.128x128b``; each 16- or 32-byte column chunk
is one instruction whose descriptor is read off the shared layout (core matrices, swizzles, a
variable pipeline-stage start). Kernels run under the CUDA emulator as a B200 (sm_100a); every
warp reads its own lane quarter back, so the broadcast is checked too; numerics against numpy,
the expected placement read off ``TileLayout.apply``. NVRTC compiles the source for sm_100a."""

from __future__ import annotations

from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.ir import BufferRegion, Range
from tvm.tirx.layout import R, S, TCol, TileLayout, TLane
from tvm_backend_cuda.dispatch.tcgen05_cp import plan_cp
from tvm_backend_cuda.dispatch.tma_utils import SwizzleMode, mma_shared_layout
from tvm_backend_cuda.plugin import register_backend

register_backend()


@pytest.fixture(autouse=True)
def _b200(monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulated device is a B200 (sm_100a) for these kernels."""
    import tvm_backend_cuda.emulator as emulator

    monkeypatch.setattr(emulator, "DEVICE_ARCH", "sm_100a")


def _warpx4(rows: int, cols: int) -> TileLayout:
    """32 TMEM lanes x ``cols`` elements, broadcast to the four lane quarters."""
    return TileLayout(S[(rows, cols):(1 @ TLane, 1 @ TCol)] + R[4:32 @ TLane])


@no_type_check
def _kernel(dtype: str, s_shape: tuple[int, int], s_layout: Any, t_shape: tuple[int, int],
            t_layout: Any, copies: list[tuple[tuple[int, int, int, int], tuple[int, int, int, int]]],
            words: int, *, align: int = 1024, scope: str = "thread", stages: int = 0):
    """A warpgroup stages A in shared memory (laid out by ``s_layout``), copies the regions
    ``copies`` = [((s_r0, s_r1, s_c0, s_c1), (t_r0, t_r1, t_c0, t_c1))] into a TMEM buffer
    of ``t_shape`` (``t_layout``), commits, and every thread t reads ``words`` 32-bit columns of
    TMEM lane t into B[t, :]. ``stages``: instead, one copy in a loop over that many stages of
    ``s_shape[0] // stages`` rows each, into TMEM columns ``stage * t_shape[1] // stages``."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    rows, cols = s_shape
    n_cols = max(32, words)
    assert stages or 1 <= len(copies) <= 2
    two = len(copies) == 2
    (a0, a1, a2, a3), (b0, b1, b2, b3) = copies[0]
    (c0, c1, c2, c3), (d0, d1, d2, d3) = copies[-1]
    wg = scope == "warpgroup"
    per_stage, t_per_stage = (rows // stages, t_shape[1] // stages) if stages else (0, 0)

    @T.prim_func
    def smem_to_tmem(A: T.Buffer(s_shape, dtype), B: T.Buffer((128, words), "uint32")):
        T.device_entry()
        T.cta_id([1])
        warp = T.warp_id([4])
        tx = T.thread_id([128])
        smem = T.alloc_buffer(s_shape, dtype, scope="shared", layout=s_layout, align=align)
        taddr = T.alloc_shared([1], "uint32")
        bar = T.alloc_shared([1], "uint64")
        reg = T.alloc_local((words,), "uint32")
        if warp == 0:
            T.ptx.tcgen05.alloc(T.address_of(taddr), n_cols=n_cols)
        if tx == 0:
            T.ptx.mbarrier.init(bar.ptr_to([0]), 1)
        for k in range((rows * cols + 127) // 128):
            if k * 128 + tx < rows * cols:
                smem[(k * 128 + tx) // cols, (k * 128 + tx) % cols] = \
                    A[(k * 128 + tx) // cols, (k * 128 + tx) % cols]
        T.ptx.fence.proxy_async("shared::cta")
        T.cuda.cta_sync()
        tmem = T.decl_buffer(t_shape, dtype, scope="tmem", allocated_addr=taddr[0],
                             layout=t_layout)
        if wg:
            Tx.wg.copy_async(tmem[b0:b1, b2:b3], smem[a0:a1, a2:a3])
            if two:
                Tx.wg.copy_async(tmem[d0:d1, d2:d3], smem[c0:c1, c2:c3])
        elif tx == 0:
            if stages:
                for st in range(stages):
                    Tx.copy_async(tmem[:, st * t_per_stage:st * t_per_stage + t_per_stage],
                                  smem[st * per_stage:st * per_stage + per_stage, :])
            else:
                Tx.copy_async(tmem[b0:b1, b2:b3], smem[a0:a1, a2:a3], cta_group=1)
                if two:
                    Tx.copy_async(tmem[d0:d1, d2:d3], smem[c0:c1, c2:c3], cta_group=1)
        if tx == 0:
            T.ptx.tcgen05.commit(bar.ptr_to([0]))
        T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0)
        T.ptx.tcgen05.fence.after_thread_sync()
        for i in range(words):
            T.ptx.tcgen05.ld(tmem.allocated_addr[0] + ((warp * 32) << 16), reg[i],
                             shape="32x32b", num=1, col=i)
        T.ptx.tcgen05.wait.ld()
        for i in range(words):
            B[tx, i] = reg[i]
        T.cuda.cta_sync()
        if warp == 0:
            T.ptx.tcgen05.relinquish_alloc_permit()
            T.ptx.tcgen05.dealloc(taddr[0], n_cols=n_cols)

    return smem_to_tmem


def _expected(a: np.ndarray, t_shape: tuple[int, int], t_layout: TileLayout, words: int,
              copies: list[tuple[tuple[int, ...], tuple[int, ...]]], lanes: int) -> np.ndarray:
    """The 128 x ``words`` 32-bit TMEM cells after the copies, read off the TMEM layout
    (``TileLayout.apply``): element (i, j) of a copied TMEM region holds the source region's
    element at the same position; a ``lanes`` = 32 layout is broadcast to all four quarters."""
    eb = a.dtype.itemsize
    cells = np.zeros((128, words * 4), np.uint8)
    for (s0, s1, s2, s3), (t0, t1, t2, t3) in copies:
        src = a[s0:s1, s2:s3].reshape(-1)
        pos = 0
        for i in range(t0, t1):
            for j in range(t2, t3):
                at = {k: int(v) for k, v in t_layout.apply([i, j], list(t_shape)).items()}
                value = src[pos:pos + 1].view(np.uint8)
                for q in range(128 // lanes):
                    lane = q * lanes + at["TLane"]
                    cells[lane, at["TCol"] * eb:(at["TCol"] + 1) * eb] = value
                pos += 1
    return cells.view(np.uint32)


def _run(dtype: str, s_shape: tuple[int, int], s_layout: Any, t_shape: tuple[int, int],
         t_layout: TileLayout, copies: list[Any], words: int, lanes: int = 32,
         **kw: Any) -> tuple[np.ndarray, np.ndarray, str]:
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    a = (rng.integers(info.min, info.max, s_shape, endpoint=True).astype(dtype) if info
         else rng.standard_normal(s_shape).astype(dtype))
    b = np.zeros((128, words), "uint32")
    ex = tvm.compile(_kernel(dtype, s_shape, s_layout, t_shape, t_layout, copies, words, **kw),
                     target="cuda", arch="sm_100a", emulate=True)
    ex(a, b)
    return b, _expected(a, t_shape, t_layout, words, copies, lanes), ex.inspect_source()


# -- numerics under the emulator ------------------------------------------------------------


def test_a_32_byte_wide_float16_tile_from_a_32B_swizzle_is_two_warpx4_copies() -> None:
    copies = [((0, 32, 0, 16), (0, 32, 0, 16))]
    lay = mma_shared_layout("float16", SwizzleMode.SWIZZLE_32B_ATOM, [32, 16])
    got, want, src = _run("float16", (32, 16), lay, (32, 16), _warpx4(32, 16), copies, 8)
    np.testing.assert_array_equal(got, want)
    assert src.count("tcgen05.cp.cta_group::1.32x128b.warpx4") == 2


def test_int32_rows_from_the_second_core_matrix_row_group() -> None:
    """K-major core matrices (8 rows x 16 bytes, 128 bytes each; the 8-row groups 256 bytes
    apart, the second 16-byte column 128 bytes on): rows 8..40, both columns of 4 int32."""
    lay = TileLayout(S[(8, 8, 2, 4):(64, 4, 32, 1)])
    copies = [((8, 40, 0, 8), (0, 32, 0, 8))]
    got, want, _ = _run("int32", (64, 8), lay, (32, 8), _warpx4(32, 8), copies, 8)
    np.testing.assert_array_equal(got, want)


def test_two_copies_side_by_side_from_a_128B_swizzle_at_warpgroup_scope() -> None:
    """Atom column 1 of a [16, 256] uint8 128B-swizzled tile (two 8-row atoms) into TMEM
    columns 16..31 and atom column 0 into 0..15, each copy issued by thread 0 of the
    warpgroup."""
    lay = mma_shared_layout("uint8", SwizzleMode.SWIZZLE_128B_ATOM, [32, 256])
    copies = [((0, 32, 128, 144), (0, 32, 16, 32)), ((0, 32, 0, 16), (0, 32, 0, 16))]
    got, want, _ = _run("uint8", (32, 256), lay, (32, 32), _warpx4(32, 32), copies, 8,
                        scope="warpgroup")
    np.testing.assert_array_equal(got, want)


def test_pipeline_stages_copy_at_variable_starts() -> None:
    """Three stages of [32, 16] uint8 tiles (stage-major) copied in a loop: the stage is a
    variable start in the shared rows and in the TMEM columns."""
    lay = TileLayout(S[(3, 32, 16):(512, 16, 1)])
    copies = [((32 * s, 32 * s + 32, 0, 16), (0, 32, 16 * s, 16 * s + 16)) for s in range(3)]
    got, want, src = _run("uint8", (96, 16), lay, (32, 48), _warpx4(32, 48), copies, 12,
                          stages=3)
    np.testing.assert_array_equal(got, want)
    assert "tcgen05.cp" in src


def test_a_tmem_layout_that_interleaves_the_chunks_of_two_tiles() -> None:
    """Two [32, 32] uint8 tiles in K-major core matrices (tile-major in shared memory) land
    with their 16-byte column chunks interleaved in TMEM (tile t, chunk h at chunk 2h + t):
    four copies, each with its own descriptor start."""
    t_lay = TileLayout(S[(2, 32, 2, 16):(16 @ TCol, 1 @ TLane, 32 @ TCol, 1 @ TCol)]
                       + R[4:32 @ TLane])
    s_lay = TileLayout(S[(2, 4, 8, 2, 16):(1024, 128, 16, 512, 1)])
    copies = [((0, 64, 0, 32), (0, 64, 0, 32))]
    got, want, src = _run("uint8", (64, 32), s_lay, (64, 32), t_lay, copies, 16)
    np.testing.assert_array_equal(got, want)
    assert src.count("32x128b.warpx4") == 4


@pytest.mark.parametrize(("cols", "shape"), [(8, "128x256b"), (4, "128x128b")])
def test_128_lanes_without_a_replica(cols: int, shape: str) -> None:
    lay = mma_shared_layout("float32", SwizzleMode.SWIZZLE_NONE, [128, cols])
    t_lay = TileLayout(S[(128, cols):(1 @ TLane, 1 @ TCol)])
    copies = [((0, 128, 0, cols), (0, 128, 0, cols))]
    got, want, src = _run("float32", (128, cols), lay, (128, cols), t_lay, copies, cols,
                          lanes=128)
    np.testing.assert_array_equal(got, want)
    assert f"tcgen05.cp.cta_group::1.{shape} " in src


# -- the plan, without compiling ------------------------------------------------------------


def _region(buf: Any, *ranges: tuple[int, int]) -> BufferRegion:
    return BufferRegion(buf, [Range(a, b - a) for a, b in ranges])


def _buffers(s_layout: Any, s_shape: list[int], t_layout: Any, t_shape: list[int],
             dtype: str = "uint8", align: int = 1024) -> tuple[Any, Any]:
    smem = tvm.ir.Buffer("sm", s_shape, dtype, scope="shared", layout=s_layout, align=align)
    tmem = tvm.ir.Buffer("tm", t_shape, dtype, scope="tmem", layout=t_layout)
    return smem, tmem


def test_the_plan_reads_descriptor_offsets_off_the_layouts() -> None:
    lay = mma_shared_layout("uint8", SwizzleMode.SWIZZLE_64B_ATOM, [64, 128])
    smem, tmem = _buffers(lay, [64, 128], _warpx4(32, 32), [32, 32])
    plan = plan_cp(_region(tmem, (0, 32), (0, 32)), _region(smem, (32, 64), (64, 96)))
    assert (plan.shape.name, plan.shape.multicast, plan.swizzle) == \
        ("32x128b", "warpx4", SwizzleMode.SWIZZLE_64B_ATOM)
    # atom column 1 starts 64 rows x 64 bytes in; rows 32.. are 4 atoms (4 x 512 bytes) on
    assert [(i.column, i.start, i.sbo) for i in plan.issues] == [(0, 4096 + 2048, 512),
                                                                (4, 4096 + 2048 + 16, 512)]


# -- what it refuses, and why ---------------------------------------------------------------


def _refusal(s_layout: Any, s_shape: list[int], s_region: Any, t_layout: Any,
             t_shape: list[int], t_region: Any, **kw: Any) -> str:
    smem, tmem = _buffers(s_layout, s_shape, t_layout, t_shape, **kw)
    with pytest.raises(tvm.error.DispatchFail) as info:
        plan_cp(_region(tmem, *t_region), _region(smem, *s_region))
    return str(info.value)


def test_a_partial_column_chunk_is_refused() -> None:
    why = _refusal(TileLayout(S[(32, 8):(8, 1)]), [32, 8], [(0, 32), (0, 8)],
                   _warpx4(32, 8), [32, 8], [(0, 32), (0, 8)])
    assert "only in part" in why and "16 bytes" in why


def test_a_replica_other_than_the_four_quarters_is_refused() -> None:
    t_lay = TileLayout(S[(64, 16):(1 @ TLane, 1 @ TCol)] + R[2:64 @ TLane])
    why = _refusal(TileLayout(S[(64, 16):(16, 1)]), [64, 16], [(0, 64), (0, 16)],
                   t_lay, [64, 16], [(0, 64), (0, 16)])
    assert "R[4 : 32@TLane]" in why


def test_a_swizzled_buffer_must_be_aligned_to_its_pattern() -> None:
    lay = mma_shared_layout("uint8", SwizzleMode.SWIZZLE_128B_ATOM, [32, 128])
    why = _refusal(lay, [32, 128], [(0, 32), (0, 16)], _warpx4(32, 16), [32, 16],
                   [(0, 32), (0, 16)], align=128)
    assert "1024-byte aligned" in why


def test_a_swizzled_copy_starting_inside_an_atom_is_refused() -> None:
    lay = mma_shared_layout("uint8", SwizzleMode.SWIZZLE_32B_ATOM, [64, 32])
    why = _refusal(lay, [64, 32], [(4, 36), (0, 16)], _warpx4(32, 16), [32, 16],
                   [(0, 32), (0, 16)])
    assert "starts at row 4, byte 0 of a 32-byte swizzle atom" in why


def test_rows_further_apart_than_a_core_matrix_are_refused() -> None:
    why = _refusal(TileLayout(S[(32, 32):(32, 1)]), [32, 32], [(0, 32), (0, 16)],
                   _warpx4(32, 16), [32, 16], [(0, 32), (0, 16)])
    assert "not a matrix tcgen05.cp reads" in why


def test_the_dispatch_error_names_the_reason_and_the_fallback_declines_tmem() -> None:
    lay = TileLayout(S[(32, 32):(32, 1)])
    f = _kernel("uint8", (32, 32), lay, (32, 16), _warpx4(32, 16),
                [((0, 32, 0, 16), (0, 32, 0, 16))], 4)
    with pytest.raises(tvm.error.DispatchError) as info:
        tvm.compile(f, target={"kind": "cuda", "arch": "sm_100a"})
    text = str(info.value)
    assert "not a matrix tcgen05.cp reads" in text
    assert "tensor memory, which only the backend's tcgen05 instructions reach" in text


# -- NVRTC --------------------------------------------------------------------------------


def test_the_warpx4_copy_compiles_with_nvrtc_for_sm_100a() -> None:
    lay = mma_shared_layout("float16", SwizzleMode.SWIZZLE_32B_ATOM, [32, 16])
    f = _kernel("float16", (32, 16), lay, (32, 16), _warpx4(32, 16),
                [((0, 32, 0, 16), (0, 32, 0, 16))], 8)
    ex = tvm.compile(f, target={"kind": "cuda", "arch": "sm_100a"})
    assert ex.cubin[:4] == b"\x7fELF"
    assert "tcgen05.cp.cta_group::1.32x128b.warpx4" in ex.inspect_source()
