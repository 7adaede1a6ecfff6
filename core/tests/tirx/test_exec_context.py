"""The execution-context model: active thread sets, filters on thread ids, scope groupings.

Most tests compare against a brute-force model: the active set as a Python set of
``(cta, warp, lane)`` triples, filtered by the index a binding stands for.
"""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from tvm.error import ExecContextError, TVMError
from tvm.ir.stmt import ExecScope
from tvm.tirx import exec_context as ec
from tvm.tirx.exec_context import (
    CLUSTER,
    CTA,
    KERNEL,
    LANE_CTA_THREAD,
    LANE_FLAT,
    LANE_W_INNER,
    LANE_WG_OUTER,
    LANE_WG_THREAD,
    THREAD,
    WARP,
    WARPGROUP,
    ActiveSet,
    AxisRange,
    ExecContext,
    LaneBinding,
    filter_modulo,
    filter_narrow,
    initial_A,
    scope_switch,
)

# what each binding kind indexes, as a function of one thread
INDEX = {
    LANE_WG_OUTER: lambda c, w, ln: w // 4,
    LANE_W_INNER: lambda c, w, ln: w % 4,
    LANE_CTA_THREAD: lambda c, w, ln: w * 32 + ln,
    LANE_WG_THREAD: lambda c, w, ln: (w % 4) * 32 + ln,
}


def bind(kind: str, axis: str = "warpid") -> LaneBinding:
    return LaneBinding(axis=axis if kind != LANE_CTA_THREAD else "thread", kind=kind,
                       declared_extent=1024)


def threads(A: ActiveSet) -> set[tuple[int, int, int]]:
    return set(itertools.product(A.cta_id.as_range(), A.warpid.as_range(), A.laneid.as_range()))


def index_of(binding: LaneBinding):
    if binding.kind == LANE_FLAT:
        pos = {"cta_id": 0, "warpid": 1, "laneid": 2}[binding.axis]
        return lambda c, w, ln: (c, w, ln)[pos]
    return INDEX[binding.kind]


# -- AxisRange -----------------------------------------------------------------------------------

RANGES = [AxisRange(e, o, s) for e in (1, 2, 5) for o in (0, 3) for s in (1, 2, 3)]


@pytest.mark.parametrize("r", RANGES, ids=str)
def test_intersect_keeps_exactly_the_values_in_the_window(r):
    for lo, hi in itertools.combinations(range(-2, 20), 2):
        want = [v for v in r.as_range() if lo <= v < hi]
        if not want:
            with pytest.raises(ExecContextError, match=rf"\[{lo}, {hi}\).*empty range"):
                r.intersect(lo, hi)
            assert r.clip(lo, hi) is None
            continue
        assert list(r.intersect(lo, hi).as_range()) == want


@pytest.mark.parametrize("r", RANGES, ids=str)
def test_modulo_keeps_exactly_one_residue_class(r):
    for modulus, residue in itertools.product((1, 2, 3, 4, 6), range(-3, 8)):
        want = [v for v in r.as_range() if v % modulus == residue % modulus]
        if not want:
            with pytest.raises(ExecContextError, match=f"{residue} modulo {modulus}"):
                r.modulo(modulus, residue)
            continue
        assert list(r.modulo(modulus, residue).as_range()) == want


def test_axis_range_text_and_membership():
    assert str(AxisRange(4, 8)) == "[8, 12)"
    assert str(AxisRange(1, 5, 7)) == "{5}"
    assert str(AxisRange(4, 1, 3)) == "{1, 4, ..., 10}"
    assert 10 in AxisRange(4, 1, 3) and 9 not in AxisRange(4, 1, 3)
    assert AxisRange(4, 1, 3).last == 10


@pytest.mark.parametrize("kwargs,what", [
    ({"extent": 0}, "extent must be at least 1, got 0"),
    ({"extent": 2, "stride": 0}, "stride must be at least 1"),
    ({"extent": 2, "offset": -1}, "offset must be at least 0"),
    ({"extent": 2.0}, "extent must be an int, got 2.0"),
    ({"extent": True}, "extent must be an int"),
])
def test_axis_range_rejects_bad_fields(kwargs, what):
    with pytest.raises(ExecContextError, match=what):
        AxisRange(**kwargs)


# -- initial set and bindings -------------------------------------------------------------------

def test_initial_set_is_every_thread():
    A = initial_A(warp_ext=6, cta_ext=2)
    assert A.size == 2 * 6 * 32 == len(threads(A))
    assert (A.laneid, A.warpid, A.cta_id) == (AxisRange(32), AxisRange(6), AxisRange(2))
    assert A.axis_names == ["laneid", "warpid", "cta_id"]


@pytest.mark.parametrize("kwargs,what", [
    ({"warp_ext": 0}, "warp_ext must be at least 1"),
    ({"warp_ext": 4, "lane_ext": 33}, "lane_ext must be at most the warp size 32"),
    ({"warp_ext": 4, "cta_ext": 0}, "cta_ext must be at least 1"),
])
def test_initial_set_rejects_bad_extents(kwargs, what):
    with pytest.raises(ExecContextError, match=what):
        initial_A(**kwargs)


@pytest.mark.parametrize("kwargs,what", [
    ({"axis": "warpid", "kind": "diagonal"}, "unknown lane binding kind 'diagonal'"),
    ({"axis": "tid", "kind": LANE_FLAT}, "unknown active-set axis 'tid'"),
    ({"axis": "laneid", "kind": LANE_WG_OUTER}, "axis must be 'warpid', got 'laneid'"),
    ({"axis": "warpid", "kind": LANE_FLAT, "declared_extent": 0}, "declared_extent"),
])
def test_binding_rejects_bad_fields(kwargs, what):
    kwargs.setdefault("declared_extent", 4)
    with pytest.raises(ExecContextError, match=what):
        LaneBinding(**kwargs)


def test_unknown_axis_names_the_axes():
    with pytest.raises(ExecContextError, match=r"'blockid'.*laneid.*warpid.*cta_id"):
        filter_modulo(initial_A(warp_ext=4), "blockid", 2, 0)


# -- filters against the brute-force model ------------------------------------------------------

STARTS = [
    initial_A(warp_ext=8),
    initial_A(warp_ext=12, cta_ext=2),
    initial_A(warp_ext=8).replace_axis("warpid", AxisRange(3, 5)),
    initial_A(warp_ext=8).replace_axis("warpid", AxisRange(2, 4, 2)),
    initial_A(warp_ext=8).replace_axis("laneid", AxisRange(8, 4)),
    initial_A(warp_ext=8).replace_axis("laneid", AxisRange(8, 1, 4)),
]
BINDINGS = [bind(LANE_FLAT, a) for a in ("laneid", "warpid", "cta_id")] + [
    bind(k) for k in INDEX]
WINDOWS = [(0, 1), (0, 2), (1, 3), (2, 6), (4, 8), (0, 32), (16, 48), (32, 64), (34, 40),
           (20, 50), (0, 128), (64, 160), (100, 300)]


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda b: f"{b.kind}-{b.axis}")
def test_a_filter_keeps_exactly_the_threads_whose_index_is_in_range(binding):
    index = index_of(binding)
    for A, (lo, hi) in itertools.product(STARTS, WINDOWS):
        want = {t for t in threads(A) if lo <= index(*t) < hi}
        try:
            got = filter_narrow(A, binding, lo, hi)
        except ExecContextError:
            continue  # not representable or empty: the contract checked below is soundness
        assert threads(got) == want, (A, lo, hi)


def is_box(ts: set[tuple[int, int, int]]) -> bool:
    axes = [sorted({t[i] for t in ts}) for i in range(3)]
    progressions = all(len({b - a for a, b in zip(ax, ax[1:])}) <= 1 for ax in axes)
    return progressions and len(ts) == len(axes[0]) * len(axes[1]) * len(axes[2])


def test_a_cta_thread_filter_fails_only_when_the_result_is_not_a_box():
    binding = bind(LANE_CTA_THREAD)
    for A, (lo, hi) in itertools.product(STARTS, WINDOWS):
        want = {t for t in threads(A) if lo <= t[1] * 32 + t[2] < hi}
        try:
            filter_narrow(A, binding, lo, hi)
        except ExecContextError as err:
            assert not want or not is_box(want), (A, lo, hi)
            assert ("selects no active thread" in str(err)) == (not want)


def test_cta_thread_filter_examples():
    A = initial_A(warp_ext=8)
    one_warp = filter_narrow(A, bind(LANE_CTA_THREAD), 70, 90)
    assert (one_warp.warpid, one_warp.laneid) == (AxisRange(1, 2), AxisRange(20, 6))
    whole = filter_narrow(A, bind(LANE_CTA_THREAD), 64, 160)
    assert (whole.warpid, whole.laneid) == (AxisRange(3, 2), AxisRange(32))
    with pytest.raises(ExecContextError, match=r"\[40, 100\).*non-rectangular.*split it"):
        filter_narrow(A, bind(LANE_CTA_THREAD), 40, 100)
    with pytest.raises(ExecContextError, match="selects no active thread"):
        filter_narrow(A, bind(LANE_CTA_THREAD), 256, 300)


def test_warpgroup_filters():
    A = initial_A(warp_ext=12)
    second = filter_narrow(A, bind(LANE_WG_OUTER), 1, 2)
    assert second.warpid == AxisRange(4, 4)
    assert filter_narrow(second, bind(LANE_W_INNER), 2, 4).warpid == AxisRange(2, 6)
    half = filter_narrow(second, bind(LANE_WG_THREAD), 64, 128)
    assert (half.warpid, half.laneid) == (AxisRange(2, 6), AxisRange(32))
    # the same window in every warpgroup keeps the set when it covers them whole
    assert filter_narrow(A, bind(LANE_WG_THREAD), 0, 128) == A


@pytest.mark.parametrize("start,binding,lo,hi,what", [
    (AxisRange(12), LANE_WG_THREAD, 0, 64,
     r"keeps warps \[0, 2\) of each of multiple warpgroups \[0, 3\).*wg_outer"),
    (AxisRange(4, 2), LANE_WG_THREAD, 0, 64, r"warps \[2, 6\) to be the same warps of each warpgroup"),
    (AxisRange(4, 2), LANE_WG_OUTER, 0, 1, r"aligned to WG_SIZE=4.*\[2, 6\)"),
    (AxisRange(12), LANE_W_INNER, 0, 2, r"\[0, 12\) spans multiple warpgroups"),
    (AxisRange(4), LANE_W_INNER, 4, 8, r"\[4, 8\).*empty range"),
])
def test_warpgroup_filters_that_cannot_be_represented(start, binding, lo, hi, what):
    A = initial_A(warp_ext=12).replace_axis("warpid", start)
    with pytest.raises(ExecContextError, match=what):
        filter_narrow(A, bind(binding), lo, hi)


def test_filter_window_must_be_ordered_ints():
    A = initial_A(warp_ext=4)
    with pytest.raises(ExecContextError, match=r"\[3, 3\) is empty or inverted; give lo < hi"):
        filter_narrow(A, bind(LANE_FLAT), 3, 3)
    with pytest.raises(ExecContextError, match="hi must be an int, got '4'"):
        filter_narrow(A, bind(LANE_FLAT), 0, "4")
    assert filter_narrow(A, bind(LANE_FLAT), -5, 2).warpid == AxisRange(2)
    with pytest.raises(ExecContextError, match="modulus must be at least 1, got 0"):
        filter_modulo(A, "warpid", 0, 0)


def test_modulo_filter_on_ctas():
    A = initial_A(warp_ext=4, cta_ext=6)
    odd = filter_modulo(A, "cta_id", 2, 1)
    assert list(odd.cta_id.as_range()) == [1, 3, 5]
    assert filter_narrow(odd, bind(LANE_FLAT, "cta_id"), 2, 6).cta_id == AxisRange(2, 3, 2)
    assert filter_modulo(odd, "cta_id", 3, 0).cta_id == AxisRange(1, 3, 6)


# -- scopes --------------------------------------------------------------------------------------

def test_scope_kinds_are_the_ir_scopes_and_kernel():
    assert ec.SCOPE_KINDS == (KERNEL, CLUSTER, CTA, WARPGROUP, WARP, THREAD)
    assert isinstance(WARP, ExecScope) and WARP == "warp"
    assert ec.WG_SIZE == 4


@pytest.mark.parametrize("scope,intra", [
    (KERNEL, set()), (THREAD, set()), (WARP, {"laneid"}), (CTA, {"laneid", "warpid"}),
    (CLUSTER, {"laneid", "warpid", "cta_id"}),
])
def test_a_scope_splits_the_axes_without_changing_them(scope, intra):
    A = filter_narrow(initial_A(warp_ext=8, cta_ext=2), bind(LANE_FLAT), 1, 3)
    split = scope_switch(A, scope)
    assert set(split.intra) == intra
    assert {**split.inter, **split.intra} == {a: A.axis(a) for a in A.axis_names}
    assert scope_switch(A, str(scope)) == split


@pytest.mark.parametrize("warps,wgid,wid_in_wg", [
    (AxisRange(8), AxisRange(2), AxisRange(4)),
    (AxisRange(4, 8), AxisRange(1, 2), AxisRange(4)),
    (AxisRange(3, 5), AxisRange(1, 1), AxisRange(3, 1)),
    (AxisRange(2, 4, 2), AxisRange(1, 1), AxisRange(2, 0, 2)),  # strided, in one warpgroup
    (AxisRange(1, 6, 4), AxisRange(1, 1), AxisRange(1, 2, 4)),  # one warp left by a modulo
    (AxisRange(3, 1, 4), AxisRange(3), AxisRange(1, 1)),  # warp 1 of each warpgroup
    (AxisRange(4, 1, 2), AxisRange(2), AxisRange(2, 1, 2)),  # warps 1 and 3 of two
])
def test_warpgroup_scope_factors_the_warps(warps, wgid, wid_in_wg):
    A = initial_A(warp_ext=12, cta_ext=3).replace_axis("warpid", warps)
    split = scope_switch(A, WARPGROUP)
    assert split.inter == {"wgid": wgid, "cta_id": AxisRange(3)}
    assert split.intra == {"laneid": AxisRange(32), "wid_in_wg": wid_in_wg}
    rebuilt = {g * 4 + w for g in wgid.as_range() for w in wid_in_wg.as_range()}
    assert rebuilt == set(warps.as_range())


@pytest.mark.parametrize("warps,boundary", [(AxisRange(4, 2), 4), (AxisRange(6, 4), 8),
                                            (AxisRange(3, 3, 2), 4)])
def test_warpgroup_scope_over_a_broken_warpgroup_fails(warps, boundary):
    A = initial_A(warp_ext=12).replace_axis("warpid", warps)
    with pytest.raises(ExecContextError, match=rf"{warps.offset}.*crosses warpgroup boundary "
                                               rf"{boundary}.*filter the warps"):
        scope_switch(A, WARPGROUP)


def test_warpgroup_scope_fails_only_when_the_warps_are_no_product():
    for extent, offset, stride in itertools.product(range(1, 9), range(8), range(1, 9)):
        warps = AxisRange(extent, offset, stride)
        values = set(warps.as_range())
        in_group, groups = {w % 4 for w in values}, {w // 4 for w in values}
        product = {g * 4 + w for g in groups for w in in_group} == values
        A = initial_A(warp_ext=72).replace_axis("warpid", warps)
        try:
            split = scope_switch(A, WARPGROUP)
        except ExecContextError:
            assert not product, warps
            continue
        assert set(split.intra["wid_in_wg"].as_range()) == in_group
        assert set(split.inter["wgid"].as_range()) == groups


def test_unknown_scope_lists_the_known_ones():
    with pytest.raises(ExecContextError, match=r"'grid'.*kernel.*cluster.*thread"):
        scope_switch(initial_A(warp_ext=4), "grid")


# -- contexts ------------------------------------------------------------------------------------

def test_a_context_follows_a_warp_specialised_kernel():
    entry = ExecContext.at_kernel_entry(warp_ext=12, cta_ext=2)
    assert entry.scope_kind == KERNEL and entry.intra == {}
    cta = entry.with_scope_switch(CTA)
    producer = cta.with_filter(bind(LANE_FLAT), 8, 9).with_scope_switch(WARP)
    assert producer.inter == {"warpid": AxisRange(1, 8), "cta_id": AxisRange(2)}
    consumers = cta.with_filter(bind(LANE_WG_OUTER), 0, 2).with_scope_switch(WARPGROUP)
    assert consumers.inter == {"wgid": AxisRange(2), "cta_id": AxisRange(2)}
    # thread 0 of each warpgroup: warps {0, 4}, lane 0, in both CTAs
    leader = consumers.with_filter(bind(LANE_WG_THREAD), 0, 1)
    assert leader.scope_kind == WARPGROUP
    assert (leader.A.warpid, leader.A.laneid, leader.A.size) == (AxisRange(2, 0, 4), AxisRange(1), 4)
    assert leader.inter == {"wgid": AxisRange(2), "cta_id": AxisRange(2)}
    # the contexts it came from are untouched
    assert cta.scope_kind == CTA
    assert cta.A == entry.A == initial_A(warp_ext=12, cta_ext=2)
    even = cta.with_cta_axis_modulo("cta_id", 2, 0)
    assert even.inter == {"cta_id": AxisRange(1, 0, 2)}


def test_errors_are_tvm_value_errors():
    with pytest.raises(ExecContextError) as info:
        initial_A(warp_ext=0)
    assert isinstance(info.value, TVMError) and isinstance(info.value, ValueError)
    assert ec.ExecContextError is ExecContextError


def test_import_tvm_does_not_load_the_model():
    code = "import sys, tvm; print('tvm.tirx.exec_context' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cta_ids_of_several_dimensions_have_an_axis_each() -> None:
    A = initial_A(warp_ext=4, cta_ext=6, cta_axes=[("cbx", 2), ("cby", 3)])
    assert A.axis_names == ["laneid", "warpid", "cbx", "cby"] and A.size == 6 * 128
    B = filter_modulo(filter_narrow(A, LaneBinding("cbx", LANE_FLAT, 2), 1, 2), "cby", 2, 0)
    assert (B.axis("cbx"), B.axis("cby"), B.size) == (AxisRange(1, 1), AxisRange(2, 0, 2), 256)
    assert scope_switch(B, CTA).inter == {"cbx": AxisRange(1, 1), "cby": AxisRange(2, 0, 2)}
    assert set(scope_switch(B, CLUSTER).intra) == {"laneid", "warpid", "cbx", "cby"}
    assert scope_switch(B, WARPGROUP).inter == {"wgid": AxisRange(1), "cbx": AxisRange(1, 1),
                                                "cby": AxisRange(2, 0, 2)}
    with pytest.raises(ExecContextError, match=r"no axis 'cta_id'.*'cbx', 'cby'"):
        B.axis("cta_id")
    with pytest.raises(ExecContextError, match=r"no axis 'cbx'"):
        initial_A(warp_ext=1).axis("cbx")


@pytest.mark.parametrize("kwargs, message", [
    ({"cta_ext": 5, "cta_axes": [("bx", 2), ("by", 3)]}, r"make 6 CTAs, not cta_ext=5"),
    ({"cta_ext": 2, "cta_axes": [("cta_id", 2)]}, r"names the CTA dimensions"),
    ({"cta_ext": 2, "cta_axes": [("blk", 2)]}, r"unknown active-set axis 'blk'"),
])
def test_bad_cta_axes_say_what_is_wrong(kwargs: dict, message: str) -> None:
    with pytest.raises(ExecContextError, match=message):
        initial_A(warp_ext=1, **kwargs)


def test_a_selected_lane_is_one_lane_that_takes_no_filter() -> None:
    lane = AxisRange(1, selector="sel")
    A = initial_A(warp_ext=2).replace_axis("laneid", lane)
    assert A.size == 2 and str(lane) == "{sel}"
    assert scope_switch(A, WARP).intra == {"laneid": lane}
    with pytest.raises(ExecContextError, match=r"chosen at run time \(sel\)"):
        filter_narrow(A, LaneBinding("laneid", LANE_FLAT, 32), 0, 4)
    with pytest.raises(ExecContextError, match=r"has one value \(extent 1\), got extent 4"):
        AxisRange(4, selector="sel")
