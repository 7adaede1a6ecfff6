"""CUDA's layouts: the scopes of its thread axes and how a layout's thread iterators fuse onto
``tx`` / ``tid_in_wg`` under a CUDA target (32 lanes a warp, 4 warps a warpgroup, 128 threads a
warpgroup); the swizzled shared-memory layouts of narrow element types."""

from __future__ import annotations

import pytest

import tvm
from tvm.ir import assert_structural_equal
from tvm.ir.layout import ComposeLayout, SwizzleLayout
from tvm.tirx.layout import Axis, S, TileLayout

pytest.importorskip("tvm_backend_cuda")


@pytest.fixture(autouse=True)
def _cuda_loaded() -> None:
    tvm.backend.load("cuda")


def _fused(layout: TileLayout) -> TileLayout:
    with tvm.target.Target("cuda"):
        return layout.canonicalize()


def test_cuda_axes_have_scopes():
    assert (Axis.tx.get_subscope().name, Axis.tx.get_scope().name) == ("thread", "cta")
    assert (Axis.tid_in_wg.get_subscope().name, Axis.tid_in_wg.get_scope().name) == \
        ("thread", "warpgroup")
    assert (Axis.cbx.get_subscope().name, Axis.cbx.get_scope().name) == ("cta", "cluster")


def test_warps_and_lanes_of_a_cta_fuse_onto_tx():
    warpid, laneid, tx = Axis.warpid, Axis.laneid, Axis.tx
    lay = TileLayout(S[(2, 2, 4, 8) : (1 @ warpid, 2 @ warpid, 8 @ laneid, 1 @ laneid)])
    # warp w is threads 32w..32w+31: (2:32, 2:64) on tx; the lanes 4:8, 8:1 are one run 32:1
    assert_structural_equal(_fused(lay), TileLayout(S[(2, 2, 32) : (32 @ tx, 64 @ tx, 1 @ tx)]))


def test_warps_and_lanes_of_a_warpgroup_fuse_onto_tid_in_wg():
    lay = TileLayout(S[(4, 32) : (1 @ Axis.wid_in_wg, 1 @ Axis.laneid)] + 2 @ Axis.laneid)
    tid = Axis.tid_in_wg
    assert_structural_equal(_fused(lay), TileLayout(S[128 : 1 @ tid] + 2 @ tid))


def test_warpgroups_of_warps_fuse_onto_warpid():
    lay = TileLayout(S[(2, 4) : (1 @ Axis.wgid, 1 @ Axis.wid_in_wg)])
    # warpgroup g is warps 4g..4g+3: (2:4, 4:1) on warpid, one run
    assert_structural_equal(_fused(lay), TileLayout(S[8 : 1 @ Axis.warpid]))


def test_without_a_target_nothing_moves():
    lay = TileLayout(S[(2, 32) : (1 @ Axis.warpid, 1 @ Axis.laneid)])
    assert_structural_equal(lay.canonicalize(), lay)


def test_float4_shared_layout_keeps_a_16_byte_chunk_together():
    from tvm_backend_cuda.dispatch.tma_utils import mma_shared_layout

    # 128-byte rows hold 256 four-bit elements; a 16-byte chunk is 32 of them (2 ** 5)
    got = mma_shared_layout("float4_e2m1fn", "128B", (64, 512))
    want = ComposeLayout(SwizzleLayout(5, 3, 3), TileLayout(S[(64, 2, 256) : (256, 16384, 1)]))
    assert_structural_equal(got, want)


def test_a_warp_layout_is_the_inner_tile_of_a_cta_layout_on_tx():
    tx, laneid, warpid = Axis.tx, Axis.laneid, Axis.warpid
    # 64 threads, each two adjacent elements of a 16x8 tile: warp w takes rows 8w..8w+7
    cta = TileLayout(S[(2, 8, 4, 2) : (32 @ tx, 4 @ tx, 1 @ tx, 1)])
    warp = TileLayout(S[(8, 4, 2) : (4 @ laneid, 1 @ laneid, 1)])
    with tvm.target.Target("cuda"):
        outer = warp.is_tile_inner(cta, [16, 8], [8, 8])
        assert_structural_equal(outer, TileLayout(S[2 : 1 @ warpid]))
        inner = TileLayout(S[(2, 1) : (1 @ warpid, 1)]).is_tile_outer(cta, [16, 8], [2, 1])
        assert_structural_equal(inner.canonicalize(), TileLayout(S[(32, 2) : (1 @ laneid, 1)]))


def test_tmem_datapath_layouts():
    from tvm.tirx.layout import tmem_datapath_layout

    full = tmem_datapath_layout("D", 128, 8)
    half = tmem_datapath_layout("F", 64, 8)
    for r in (0, 15, 16, 63):
        assert int(full.apply([r, 3], [128, 8])["TLane"]) == r
        got = half.apply([r, 3], [64, 8])
        assert (int(got["TLane"]), int(got["TCol"])) == (32 * (r // 16) + r % 16, 3)
    with pytest.raises(ValueError, match="datapath 'F' holds 64 rows"):
        tmem_datapath_layout("F", 128, 8)
    with pytest.raises(ValueError, match="datapath must be one of"):
        tmem_datapath_layout("A", 128, 8)
