"""TileLayout's algebra: canonical form, scopes, offsets, slicing, per-iterator digits; and the
swizzle and compose layouts' share of it. Expected layouts are worked out by hand; every
canonical form and slice is also checked element by element against the layout it came from."""

from __future__ import annotations

import itertools

import pytest

import tvm
import tvm.driver
from tvm.ir import Buffer, Evaluate, IntImm, PrimFunc, Var, assert_structural_equal, convert
from tvm.ir.layout import ComposeLayout, SwizzleLayout
from tvm.script import from_source
from tvm.tirx.layout import Axis, Iter, R, S, TileLayout

laneid, warpid, wgid, wid_in_wg, m = (Axis.get(n) for n in ("laneid", "warpid", "wgid",
                                                             "wid_in_wg", "m"))


def _coords(layout, p):
    return {k: int(v) for k, v in layout.apply(p).items() if int(v) != 0}


def _reference(layout, p):
    """Element ``p``'s coordinates worked out directly from the iterators as written."""
    coords: dict[str, int] = {}
    for it in reversed(layout.shard):
        p, digit = divmod(p, int(it.extent))
        coords[it.axis.name] = coords.get(it.axis.name, 0) + digit * int(it.stride)
    for ax, v in layout.offset.items():
        coords[ax.name] = coords.get(ax.name, 0) + int(v)
    return {k: v for k, v in coords.items() if v != 0}


def _same_map(a, b, size):
    """``b`` puts each of the first ``size`` elements where ``a``, read directly, does."""
    for p in range(size):
        assert _coords(b, p) == _reference(a, p), p


# -- canonicalize ----------------------------------------------------------------------------
CANONICAL = [
    # (layout, its canonical form)
    (S[(4, 2, 3) : (6, 3, 1)], S[24:1]),  # one contiguous run
    (S[(4, 1, 3, 1) : (3, 99, 1, 7)], S[12:1]),  # extent-1 iterators step nowhere
    (S[(4, 2, 3) : (6, 4, 1)], S[(4, 2, 3) : (6, 4, 1)]),  # 2:4 then 3:1 overlap: kept
    (S[(2, 4, 2, 3) : (5, 6, 3, 1)], S[(2, 24) : (5, 1)]),
    (S[(5, 2, 2) : (1, 2, 1)], S[(5, 4) : (1, 1)]),
    (S[(3, 3, 2) : (1, 4, 2)], S[(3, 6) : (1, 2)]),
    # thread and memory iterators fuse only with their own axis
    (S[(2, 16, 3) : (16 @ laneid, 1 @ laneid, 1)], S[(32, 3) : (1 @ laneid, 1)]),
    (S[(4, 2, 2) : (2 @ laneid, 1, 1 @ laneid)], S[(4, 2, 2) : (2 @ laneid, 1, 1 @ laneid)]),
    (S[(1, 1) : (1, 1)], S[1:1]),
]


@pytest.mark.parametrize(("spec", "expected"), CANONICAL)
def test_canonicalize_form_and_map(spec, expected):
    layout = TileLayout(spec)
    canon = layout.canonicalize()
    assert_structural_equal(canon, TileLayout(expected))
    size = int(layout.size())
    _same_map(layout, canon, size)
    assert_structural_equal(canon.canonicalize(), canon)  # a fixed point


def test_canonicalize_drops_zero_offsets_and_orders_replicas():
    a = TileLayout(S[4:1] + R[(2, 4) : (4 @ laneid, 1 @ laneid)] + 0 @ warpid + 3)
    b = TileLayout(S[4:1] + R[(4, 2) : (1 @ laneid, 4 @ laneid)] + 3)
    assert_structural_equal(a.canonicalize(), b.canonicalize())
    assert a.canonicalize().offset == {m: a.offset[m]}


def test_canonicalize_of_replicas_only_keeps_an_empty_shard():
    lay = TileLayout(R[8 : 1 @ laneid])
    assert lay.canonicalize().shard == []


def test_canonicalize_fuses_thread_axes_by_the_target_rules():
    # a made-up hierarchy on the host target: 'tpu_lane' (threads of a 'warp'), 'tpu_warp'
    # (warps of a 'cta') fuse onto 'tpu_t' (threads of a 'cta'), 16 lanes a warp
    rules = {"c": {("thread", "cta"): ("tpu_t", 1)}}
    lane = Axis.register("tpu_lane", "thread", scope="warp", subscope="thread", fusions=rules)
    warp = Axis.register("tpu_warp", "thread", scope="cta", subscope="warp",
                         fusions={"c": {("thread", "cta"): ("tpu_t", 16)}})
    t = Axis.register("tpu_t", "thread", scope="cta", subscope="thread")
    lay = TileLayout(S[(2, 2, 4, 4) : (1 @ warp, 2 @ warp, 4 @ lane, 1 @ lane)] + 1 @ warp)
    # without a target the hierarchy's sizes are unknown: only contiguity fuses
    assert_structural_equal(lay.canonicalize(), TileLayout(
        S[(2, 2, 16) : (1 @ warp, 2 @ warp, 1 @ lane)] + 1 @ warp))
    tvm.driver.ensure_builtin_backends()
    with tvm.target.Target("c"):
        got = lay.canonicalize()
    # warps step 16 threads: (2:16, 2:32, 16:1) on tpu_t, the offset of one warp 16
    assert_structural_equal(got, TileLayout(S[(2, 2, 16) : (16 @ t, 32 @ t, 1 @ t)] + 16 @ t))
    _same_map(TileLayout(S[(2, 2, 4, 4) : (16 @ t, 32 @ t, 4 @ t, 1 @ t)] + 16 @ t), got, 64)


# -- scopes ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("spec", "sub", "scope"), [
    (S[(8, 4) : (4 @ laneid, 1)], "thread", "warp"),
    (S[(2, 32) : (1 @ warpid, 1 @ laneid)], "thread", "cta"),
    (S[(2, 4) : (1 @ wgid, 1 @ wid_in_wg)], "warp", "cta"),
    (S[4 : 1 @ wid_in_wg], "warp", "warpgroup"),
])
def test_get_scope(spec, sub, scope):
    got = TileLayout(spec).get_scope()
    assert (got[0].name, got[1].name) == (sub, scope)
    assert TileLayout(spec).verify_well_formed()


def test_get_scope_of_memory_only_layout_is_none():
    assert TileLayout(S[(4, 4) : (4, 1)]).get_scope() is None


def test_disconnected_scopes_are_an_error():
    lay = TileLayout(S[(2, 32) : (1 @ wgid, 1 @ laneid)])
    with pytest.raises(ValueError, match="do not form one chain of scopes from thread"):
        lay.verify_well_formed()


def test_axis_class_attributes_and_scopes():
    assert Axis.laneid is Axis.get("laneid")
    assert Axis.laneid.is_thread() and Axis.laneid.is_thread
    assert not Axis.m.is_thread() and Axis.m.is_memory
    assert (Axis.warpid.get_subscope().name, Axis.warpid.get_scope().name) == ("warp", "cta")
    assert Axis.m.get_scope() is None
    with pytest.raises(AttributeError, match="no layout axis of that name"):
        _ = Axis.no_such_axis


def test_register_merges_scopes_and_rejects_a_conflict():
    ax = Axis.register("test_algebra_ax", "thread", scope="cta")
    assert Axis.register("test_algebra_ax", "thread", subscope="warp") is ax
    assert (ax.scope, ax.subscope) == ("cta", "warp")
    with pytest.raises(ValueError, match="has scope 'cta'"):
        Axis.register("test_algebra_ax", "thread", scope="cluster")


# -- offsets ---------------------------------------------------------------------------------
def test_offset_spec_terms_merge():
    lay = TileLayout(S[8 : 4 @ laneid] + 1 @ laneid + 2 @ warpid + 64 + 1 @ laneid)
    assert {k.name: int(v) for k, v in lay.offset.items()} == {"laneid": 2, "warpid": 2,
                                                              "m": 64}
    grouped = TileLayout(S[8 : 4 @ laneid] + (1 @ laneid + 2 @ warpid + 64))
    assert {k.name: int(v) for k, v in grouped.offset.items()} == {"laneid": 1, "warpid": 2,
                                                                  "m": 64}
    front = TileLayout(64 + S[8:1])
    assert {k.name: int(v) for k, v in front.offset.items()} == {"m": 64}


def test_offset_spec_rejects_other_terms():
    with pytest.raises(TypeError, match="sum of `value @ axis` terms"):
        S[8:1] + "x"


def test_offset_moves_apply_span_and_storage():
    lay = TileLayout(S[(4, 2) : (1 @ laneid, 1)] + 3 @ laneid + 10)
    assert _coords(lay, 5) == {"laneid": 2 + 3, "m": 1 + 10}
    assert int(lay.span()) == 2 + 10
    assert_structural_equal(lay.storage(), TileLayout(S[2:1] + 10))


def test_offset_layout_prints_and_parses_back():
    lay = TileLayout(S[(4, 2) : (1 @ laneid, 1)] + 3 @ laneid)
    A = Buffer("A", (8,), "float32", layout=lay)
    a = Var("A", "handle")
    f = PrimFunc([a], Evaluate(0), {a: A}, name="f")
    text = f.script()
    assert "T.TileLayout(T.S[(4, 2):(1 @ T.laneid, 1)], offset={T.laneid: 3})" in text
    assert_structural_equal(from_source(text), f)


# -- apply -----------------------------------------------------------------------------------
def test_apply_of_one_index_is_the_flat_position():
    lay = TileLayout(S[(3, 4) : (10, 1)])
    for i, j in itertools.product(range(3), range(4)):
        assert int(lay.apply(i * 4 + j)["m"]) == 10 * i + j
    v = Var("v", "int32")
    assert TileLayout(S[(8, 8) : (8, 1)]).apply(v)["m"] is v  # contiguous: no digits split


def test_constant_comparison_has_a_truth_value():
    assert TileLayout(S[(8, 8) : (8, 1)]).size() == 64
    assert (convert(3) == 4) is not None and not bool(convert(3) == 4)
    assert convert(3) != 4
    assert IntImm("bool", 1)


def test_apply_to_shape_splits_each_dimension_over_its_iterators():
    lay = TileLayout.from_iters([Iter(4, 64), Iter(4, 16), Iter(4, 4), Iter(4, 1)])
    assert [int(x) for x in lay.apply_to_shape([13, 9], [16, 16])] == [3, 1, 2, 1]
    # a shape the iterators do not group by: the flat position's digits
    odd = TileLayout(S[(6, 4) : (4, 1)])
    assert [int(x) for x in odd.apply_to_shape([2, 1], [4, 6])] == [3, 1]  # flat 13
    with pytest.raises(ValueError, match="2 indices for a shape of 1 dimensions"):
        odd.apply_to_shape([1, 2], [24])


# -- slice -----------------------------------------------------------------------------------
def _check_slice(layout, shape, region, sliced):
    sub = [e - b for b, e in region]
    for idx in itertools.product(*(range(n) for n in sub)):
        full = [b + i for (b, _), i in zip(region, idx)]
        assert int(sliced.apply(list(idx), sub)["m"]) == int(layout.apply(full, shape)["m"])


@pytest.mark.parametrize(("spec", "shape", "region", "expected"), [
    # a run inside one iterator: cut to its length, the start in the offset
    (S[(8, 8) : (8, 1)], [64], [(5, 8)], S[3:1] + 5),
    # whole inner iterators kept, the outer one cut
    (S[(4, 4) : (1, 4)], [16], [(8, 16)], S[(2, 4) : (1, 4)] + 2),
    # rows 2..3, columns 8..15 of a column-blocked 16x16
    (S[(16, 2, 8) : (8, 128, 1)], [16, 16], [(2, 4), (8, 16)], S[16:1] + 144),
    # a run straddling an iterator's end by half: two halves
    (S[(4, 4) : (16, 1)], [16], [(2, 6)], S[(2, 2) : (14, 1)] + 2),
])
def test_slice(spec, shape, region, expected):
    layout = TileLayout(spec)
    sliced = layout.slice(shape, region)
    assert_structural_equal(sliced.canonicalize(), TileLayout(expected))
    _check_slice(layout, shape, region, sliced)


def test_slice_that_is_no_strided_pattern_is_none():
    assert TileLayout(S[(4, 4) : (16, 1)]).slice([16], [(3, 8)]) is None


def test_slice_with_a_symbolic_start_in_one_iterator_keeps_it_unwrapped():
    stage = Var("stage", "int32")
    lay = TileLayout(S[(3, 8) : (8, 1)])
    sliced = lay.slice([3, 8], [(stage, stage + 1), (0, 8)])
    assert "%" not in str(sliced.offset[m]) and "stage" in str(sliced.offset[m])


def test_slice_region_is_checked():
    lay = TileLayout(S[(4, 4) : (4, 1)])
    with pytest.raises(ValueError, match="the region has 1 dimensions"):
        lay.slice([4, 4], [(0, 2)])
    with pytest.raises(TypeError, match=r"a \(begin, end\) pair or a Range"):
        lay.slice([16], [3])


# -- swizzle and compose ---------------------------------------------------------------------
def test_swizzle_inner_and_outer():
    inner = SwizzleLayout(0, 3, 3)
    outer = SwizzleLayout(0, 3, 3, swizzle_inner=False)
    for i, j in itertools.product(range(8), range(8)):
        assert int(inner.apply(8 * i + j)["m"]) == 8 * i + (i ^ j)
        assert int(outer.apply(8 * i + j)["m"]) == 8 * (i ^ j) + j
    assert int(SwizzleLayout(3, 3, 3).size()) == 512 == int(SwizzleLayout(3, 3, 3).span())
    assert "swizzle_inner=False" in repr(outer)
    with pytest.raises(ValueError, match="only the memory axis m"):
        inner.size("laneid")


def test_swizzle_views():
    sw = SwizzleLayout(3, 3, 3)
    assert sw.canonicalize() is sw and sw.storage() is sw
    assert_structural_equal(sw.unpack(2), SwizzleLayout(4, 3, 3))
    assert_structural_equal(SwizzleLayout(4, 3, 3, swizzle_inner=False).pack(2),
                            SwizzleLayout(3, 3, 3, swizzle_inner=False))


def test_compose_canonicalize():
    sw = SwizzleLayout(3, 3, 3)
    assert ComposeLayout(sw, TileLayout(S[(8, 64) : (64, 1)])).canonicalize() is sw
    kept = ComposeLayout(sw, TileLayout(S[(64, 4, 1, 64) : (64, 4096, 5, 1)]))
    assert_structural_equal(kept.canonicalize(),
                            ComposeLayout(sw, TileLayout(S[(64, 4, 64) : (64, 4096, 1)])))


def test_swizzle_and_compose_slice():
    sw = SwizzleLayout(3, 3, 3)
    sliced = sw.slice([512], [(64, 128)])
    for i in range(64):
        assert int(sliced.apply(i)["m"]) == int(sw.apply(64 + i)["m"])
    comp = ComposeLayout(sw, TileLayout(S[(8, 64) : (64, 1)]))
    rows = comp.slice([8, 64], [(2, 4), (0, 64)])
    for i, j in itertools.product(range(2), range(64)):
        assert int(rows.apply([i, j], [2, 64])["m"]) == int(comp.apply([2 + i, j], [8, 64])["m"])


# -- errors and replicas ---------------------------------------------------------------------
def test_a_bad_permutation_is_a_layout_error():
    from tvm.error import LayoutError

    lay = TileLayout(S[(4, 4, 2) : (8, 2, 1)])
    with pytest.raises(LayoutError, match=r"\[0, 0\] is not a permutation of the 2 groups"):
        lay.permute_by_groups([0, 1, 3], [0, 0])
    # the seed checks with assertions: its callers catch either
    assert issubclass(LayoutError, ValueError) and issubclass(LayoutError, AssertionError)


def test_replicas_on_a_memory_axis_broadcast():
    tlane = Axis.register("test_algebra_lane", "memory")
    lay = TileLayout(S[(4, 2) : (1 @ tlane, 1)] + R[4 : 32 @ tlane])
    assert _coords(lay, 5) == {"test_algebra_lane": 2, "m": 1}
    assert int(lay.span("test_algebra_lane")) == 4 + 3 * 32


# -- tile and its inverses -------------------------------------------------------------------
def test_tile_result_is_canonical_and_carries_offsets():
    inner = TileLayout(S[(2, 4) : (4, 1)] + 1)
    outer = TileLayout(S[(3, 2) : (2, 1)] + 2 @ laneid)
    got = inner.tile(outer, [3, 2], [2, 4])
    # outer strides count whole inner spans, 9 (the inner layout reaches 7, its offset 1
    # further): rows 3:18, inner rows 2:4, columns 2:9, 4:1
    assert_structural_equal(got, TileLayout(S[(3, 2, 2, 4) : (18, 4, 9, 1)] + 1 + 2 @ laneid))
    for i, j in itertools.product(range(6), range(8)):  # tile (i // 2, j // 4)
        assert int(got.apply([i, j], [6, 8])["m"]) == \
            9 * (2 * (i // 2) + j // 4) + 4 * (i % 2) + j % 4 + 1


@pytest.mark.parametrize(("inner", "outer", "outer_shape", "inner_shape"), [
    (S[(2, 4) : (1, 2)], S[(8, 8) : (8, 1)], [8, 8], [2, 4]),
    (S[(1, 2) : (2, 1)], S[(8, 4) : (4 @ laneid, 1 @ laneid)], [8, 4], [1, 2]),
    (S[(4, 2) : (2, 1)], S[(2, 3) : (1, 2)], [2, 3], [4, 2]),
])
def test_is_tile_inner_and_outer_invert_tile(inner, outer, outer_shape, inner_shape):
    inner, outer = TileLayout(inner), TileLayout(outer)
    tiled = inner.tile(outer, outer_shape, inner_shape)
    shape = [o * i for o, i in zip(outer_shape, inner_shape)]
    found_outer = inner.is_tile_inner(tiled, shape, inner_shape)
    assert_structural_equal(found_outer.canonicalize(), outer.canonicalize())
    found_inner = outer.is_tile_outer(tiled, shape, outer_shape)
    assert_structural_equal(found_inner.canonicalize(), inner.canonicalize())


def test_is_tile_inner_and_outer_say_none_when_it_is_not_a_tiling():
    inner, outer = TileLayout(S[(2, 4) : (1, 2)]), TileLayout(S[(8, 8) : (8, 1)])
    tiled = inner.tile(outer, [8, 8], [2, 4])
    assert outer.is_tile_inner(tiled, [16, 32], [8, 8]) is None  # the roles swapped
    assert inner.is_tile_outer(tiled, [16, 32], [2, 4]) is None
    assert inner.is_tile_inner(tiled, [16, 32], [3, 4]) is None  # 3 does not divide 16
    assert inner.is_tile_inner(SwizzleLayout(3, 3, 3), [16, 32], [2, 4]) is None
    with pytest.raises(ValueError, match="different ranks"):
        inner.is_tile_inner(tiled, [16, 32], [2])


def test_swizzled_tiles():
    sw = SwizzleLayout(3, 3, 3)
    outer = TileLayout(S[(2, 3) : (3, 1)])
    tiled = sw.tile(outer, [2, 3], [8, 64])
    assert_structural_equal(tiled, ComposeLayout(sw, TileLayout.row_major([8, 64]).tile(
        outer, [2, 3], [8, 64])))
    assert_structural_equal(sw.is_tile_inner(tiled, [16, 192], [8, 64]).canonicalize(),
                            outer.canonicalize())
    inner = outer.is_tile_outer(tiled, [16, 192], [2, 3])
    assert_structural_equal(inner.canonicalize(), sw)  # the swizzle over one 512-element run
    comp = ComposeLayout(sw, TileLayout.row_major([8, 64]))
    assert_structural_equal(comp.is_tile_inner(tiled, [16, 192], [8, 64]).canonicalize(),
                            outer.canonicalize())
    assert sw.is_tile_outer(tiled, [16, 192], [2, 3]) is None
    assert comp.is_tile_inner(TileLayout(S[4:1]), [4], [4]) is None


def test_is_tile_inner_splits_thread_axes_by_the_target_rules():
    rules = {"c": {"warp": ("tpu_warp", "tpu_lane", 16)}}
    t = Axis.register("tpu_t", "thread", scope="cta", subscope="thread", splits=rules)
    lane = Axis.get("tpu_lane")
    # 32 threads of a CTA holding a 4x16 tile, two elements each: threads run down the rows
    tiled = TileLayout(S[(4, 8, 2) : (8 @ t, 1 @ t, 1)])
    lanes = TileLayout(S[(2, 8, 2) : (8 @ lane, 1 @ lane, 1)])  # a warp's 2x16 part
    assert lanes.is_tile_inner(tiled, [4, 16], [2, 16]) is None  # tpu_t is not split
    tvm.driver.ensure_builtin_backends()
    with tvm.target.Target("c"):
        got = lanes.is_tile_inner(tiled, [4, 16], [2, 16])
    assert_structural_equal(got, TileLayout(S[2 : 1 @ Axis.get("tpu_warp")]))


# -- direct sum ------------------------------------------------------------------------------
def test_direct_sum_adds_without_scaling():
    left = TileLayout(S[(3, 2) : (20, 2)])
    right = TileLayout(S[(2, 2) : (5, 1)] + 100)
    total = right.direct_sum(left, [3, 2], [2, 2])
    for a0, b0, a1, b1 in itertools.product(range(3), range(2), range(2), range(2)):
        want = 20 * a0 + 2 * a1 + 5 * b0 + b1 + 100
        assert int(total.apply([a0, b0, a1, b1], [3, 2, 2, 2])["m"]) == want
    got_left = right.is_direct_sum_right(total, [3, 2, 2, 2], [2, 2])
    assert_structural_equal(got_left.canonicalize(), left.canonicalize())
    got_right = left.is_direct_sum_left(total, [3, 2, 2, 2], [3, 2])
    assert_structural_equal(got_right.canonicalize(), right.canonicalize())
    assert left.is_direct_sum_right(total, [3, 2, 2, 2], [3, 2]) is None
    with pytest.raises(ValueError, match="twice the dimensions"):
        left.is_direct_sum_left(total, [3, 2], [3, 2])


# -- views -----------------------------------------------------------------------------------
def test_unpack_and_pack_scale_memory_offsets_only():
    lay = TileLayout(S[(4, 2) : (1 @ laneid, 1)] + 3 + 1 @ laneid)
    wide = lay.unpack(2)
    assert_structural_equal(wide, TileLayout(S[(4, 2, 2) : (1 @ laneid, 2, 1)] + 6 + 1 @ laneid))
    assert_structural_equal(wide.pack(2).canonicalize(), lay.canonicalize())
    with pytest.raises(ValueError, match="does not start at a multiple of 2"):
        TileLayout(S[4:1] + 3).pack(2)


def test_broadcast_inserts_a_stride_0_iterator():
    lay = TileLayout(S[(4, 8) : (8, 1)])
    assert_structural_equal(lay.broadcast(2), TileLayout(S[(4, 8, 2) : (8, 1, 0)]))
    assert_structural_equal(lay.broadcast(2, 0), TileLayout(S[(2, 4, 8) : (0, 8, 1)]))
    assert_structural_equal(lay.broadcast(2, -2), TileLayout(S[(4, 2, 8) : (8, 0, 1)]))
    with pytest.raises(ValueError, match="position 5 is outside the 2 iterators"):
        lay.broadcast(2, 5)
    sw = SwizzleLayout(3, 3, 3)
    assert_structural_equal(ComposeLayout(sw, lay).broadcast(2),
                            ComposeLayout(sw, lay.broadcast(2)))


def test_trivial_and_swizzle_queries():
    assert TileLayout(S[(4, 8) : (8, 1)]).is_trivial()
    assert not TileLayout(S[(4, 8) : (16, 1)]).is_trivial()
    assert not TileLayout(S[8:1] + 2).is_trivial()
    assert SwizzleLayout(3, 3, 3).is_swizzle() and not SwizzleLayout(3, 3, 3).is_trivial()
    assert SwizzleLayout(3, 0, 3).is_trivial()
    comp = ComposeLayout(SwizzleLayout(3, 3, 3), TileLayout(S[(8, 64) : (64, 1)]))
    assert not comp.is_swizzle() and comp.verify_well_formed()


def test_outer_swizzle_prints_and_parses_back():
    lay = ComposeLayout(SwizzleLayout(3, 3, 3, swizzle_inner=False),
                        TileLayout(S[(8, 64) : (64, 1)]))
    A = Buffer("A", (8, 64), "float16", layout=lay)
    a = Var("A", "handle")
    f = PrimFunc([a], Evaluate(0), {a: A}, name="f")
    text = f.script()
    assert "swizzle_inner=False" in text
    assert_structural_equal(from_source(text), f)
    inner = ComposeLayout(SwizzleLayout(3, 3, 3), TileLayout(S[(8, 64) : (64, 1)]))
    assert "swizzle_inner" not in PrimFunc([a], Evaluate(0), {a: Buffer(
        "A", (8, 64), "float16", layout=inner)}, name="f").script()
