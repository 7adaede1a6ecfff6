"""``DispatchContext.inter`` / ``.intra``: the threads that run a tile primitive call, as the
kernel's ``if`` conditions on its thread ids narrow them, grouped by the call's scope."""

from __future__ import annotations

from typing import Any

import pytest

import tvm.tirx.exec_context as exec_context
from tvm import ir
from tvm.ir import IntImm, Op, PrimFunc
from tvm.ir.op import ELECTS_ONE_LANE
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.target import Target
from tvm.tirx.operator.tile_primitive import lower_tile_primitives, register_dispatch

PROBE = "exec_context_probe"


def _empty() -> PrimFunc:
    @T.prim_func(private=True)
    def impl():
        T.evaluate(0)

    return impl


@pytest.fixture
def seen() -> list[Any]:
    """What the probe variant saw: one ``(scope, inter, intra)`` per call, as plain ints."""
    got: list[Any] = []

    def probe(call: Any, sctx: Any) -> PrimFunc:
        got.append((sctx.scope_kind, _ints(sctx.inter), _ints(sctx.intra)))
        return _empty()

    register_dispatch("copy", "*", variant=PROBE, priority=10_000)(probe)
    return got


def _ints(side: dict[str, tuple[IntImm, ...]]) -> dict[str, tuple[int, ...]]:
    assert all(isinstance(v, IntImm) for values in side.values() for v in values)
    return {axis: tuple(int(v) for v in values) for axis, values in side.items()}


def test_whole_cta_without_conditions(fakegpu: Target, seen: list[Any]) -> None:
    @T.prim_func(private=True)
    def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.device_entry()
        T.cta_id([3])
        T.thread_id([256])
        Tx.copy(B[0:1], A[0:1], dispatch=PROBE)
        Tx.cta.copy(B[0:8], A[0:8], dispatch=PROBE)
        Tx.warp.copy(B[0:8], A[0:8], dispatch=PROBE)

    lower_tile_primitives(k, fakegpu)
    assert seen == [  # without clusters, the CTAs are the grid's
        ("thread", {"laneid": (32, 0), "warpid": (8, 0), "cta_id": (3, 0)}, {}),
        ("cta", {"cta_id": (3, 0)}, {"laneid": (32, 0), "warpid": (8, 0)}),
        ("warp", {"warpid": (8, 0), "cta_id": (3, 0)}, {"laneid": (32, 0)}),
    ]


def test_nested_conditions_on_warp_and_lane(fakegpu: Target, seen: list[Any]) -> None:
    @T.prim_func(private=True)
    def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.device_entry()
        T.cta_id([1])
        w = T.warp_id([6])
        lane = T.lane_id([32])
        if w == 3:
            if (lane < 16) & (lane >= 4):
                Tx.copy(B[0:1], A[0:1], dispatch=PROBE)
            Tx.warp.copy(B[0:8], A[0:8], dispatch=PROBE)

    lower_tile_primitives(k, fakegpu)
    assert seen[0][1] == {"laneid": (12, 4), "warpid": (1, 3), "cta_id": (1, 0)}
    assert seen[1][1:] == ({"warpid": (1, 3), "cta_id": (1, 0)}, {"laneid": (32, 0)})


def test_cta_thread_range_within_one_warp(fakegpu: Target, seen: list[Any]) -> None:
    @T.prim_func(private=True)
    def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([128])
        if (tid >= 72) & (tid < 80):
            Tx.copy(B[0:1], A[0:1], dispatch=PROBE)

    lower_tile_primitives(k, fakegpu)
    assert seen[0][1] == {"laneid": (8, 8), "warpid": (1, 2), "cta_id": (1, 0)}


@pytest.mark.parametrize("wg_first", [True, False])
def test_warpgroup_then_its_threads_in_either_order(fakegpu: Target, seen: list[Any],
                                                    wg_first: bool) -> None:
    if wg_first:
        @T.prim_func(private=True)
        def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            T.device_entry()
            T.cta_id([1])
            wg = T.warpgroup_id([3])
            t = T.thread_id_in_wg([128])
            if (wg == 2) & (t >= 64):
                Tx.wg.copy(B[0:8], A[0:8], dispatch=PROBE)
    else:
        @T.prim_func(private=True)
        def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            T.device_entry()
            T.cta_id([1])
            wg = T.warpgroup_id([3])
            t = T.thread_id_in_wg([128])
            if (t >= 64) & (wg == 2):
                Tx.wg.copy(B[0:8], A[0:8], dispatch=PROBE)

    lower_tile_primitives(k, fakegpu)
    assert seen == [("warpgroup", {"wgid": (1, 2), "cta_id": (1, 0)},
                     {"laneid": (32, 0), "wid_in_wg": (2, 2)})]


def test_cluster_ctas_modulo_and_pair(fakegpu: Target, seen: list[Any]) -> None:
    @T.prim_func(private=True)
    def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.device_entry()
        bx = T.cta_id([16])
        c = T.cta_id_in_cluster([4])
        pair = T.cta_id_in_pair()
        T.thread_id([32])
        if c % 2 == 1:
            Tx.copy(B[0:1], A[0:1], dispatch=PROBE)
        if pair == 0:
            Tx.copy(B[0:1], A[0:1], dispatch=PROBE)
        if bx == 5:  # the CTA in the grid: the active set counts the CTAs of one cluster
            Tx.copy(B[0:1], A[0:1], dispatch=PROBE)

    lower_tile_primitives(k, fakegpu)
    assert [s[1]["cta_id"] for s in seen] == [(2, 1, 2), (2, 0, 2), (4, 0)]


def test_cta_ids_of_several_dimensions_keep_an_axis_each(fakegpu: Target,
                                                         seen: list[Any]) -> None:
    @T.prim_func(private=True)
    def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.device_entry()
        bx, by = T.cta_id([6, 5])
        T.thread_id([64])
        if (bx == 4) & (by % 2 == 1):
            Tx.cta.copy(B[0:8], A[0:8], dispatch=PROBE)

    lower_tile_primitives(k, fakegpu)
    assert seen == [("cta", {"bx": (1, 4), "by": (2, 1, 2)}, {"laneid": (32, 0), "warpid": (2, 0)})]


def test_cta_pair_follows_the_axis_that_moves_the_rank_parity(fakegpu: Target,
                                                              seen: list[Any]) -> None:
    @T.prim_func(private=True)
    def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.device_entry()
        cx, cy = T.cta_id_in_cluster([3, 4])
        pair = T.cta_id_in_pair()
        T.thread_id([32])
        if cx == 1:  # rank 1 + 3 * cy: odd where cy is even
            if pair == 1:
                Tx.copy(B[0:1], A[0:1], dispatch=PROBE)
        if pair == 0:  # cx and cy both move the parity: not modelled
            Tx.copy(B[0:1], A[0:1], dispatch=PROBE)
        if (cx == 2) & (cy < 1):  # rank 2 only: pair 1 keeps no CTA, left unfiltered
            if pair == 1:
                Tx.copy(B[0:1], A[0:1], dispatch=PROBE)

    lower_tile_primitives(k, fakegpu)
    assert [(s[1]["cbx"], s[1]["cby"]) for s in seen] == [
        ((1, 1), (2, 0, 2)), ((3, 0), (4, 0)), ((1, 2), (1, 0))]


def test_an_electing_op_picks_one_lane_by_selector(fakegpu: Target) -> None:
    elect = Op.register("tirx.test_elect_one", dtype="uint32", **{ELECTS_ONE_LANE: True})
    got = []

    def probe(call: Any, sctx: Any) -> PrimFunc:
        got.append(sctx.inter)
        return _empty()

    register_dispatch("copy", "*", variant="raw_probe", priority=10_000)(probe)

    @T.prim_func(private=True)
    def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.device_entry()
        T.cta_id([1])
        w = T.warp_id([4])
        lane = T.lane_id([32])
        if (w == 2) & (lane == 31):  # lane == 31 stands for the election, put in below
            Tx.copy(B[0:1], A[0:1], dispatch="raw_probe")
            if lane < 8:  # which lane was elected is not known here: not a filter
                Tx.copy(B[0:1], A[0:1], dispatch="raw_probe")

    class Elect(ir.Mutator):
        def visit_EQ(self, node: ir.EQ) -> Any:
            return ir.NE(elect(), ir.const(0, "uint32")) if int(node.b) == 31 else node

    lower_tile_primitives(k.with_body(Elect().visit(k.body)), fakegpu)
    for inter in got:
        assert [int(v) for v in inter["warpid"]] == [1, 2]
        extent, offset = inter["laneid"]
        assert int(extent) == 1
        assert str(offset) == \
            'T.selector(lane, T.call_intrin("uint32", "tirx.test_elect_one") != T.uint32(0))'


def test_else_branch_and_unmodelled_conditions_leave_the_set_whole(fakegpu: Target,
                                                                   seen: list[Any]) -> None:
    @T.prim_func(private=True)
    def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), n: T.int32):
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([128])
        w = T.warp_id([4])
        lane = T.lane_id([32])
        if w == 1:
            T.evaluate(0)
        else:
            Tx.copy(B[0:1], A[0:1], dispatch=PROBE)
        if tid != 3:
            Tx.copy(B[0:1], A[0:1], dispatch=PROBE)
        if (w == 0) | (lane == 0):
            Tx.copy(B[0:1], A[0:1], dispatch=PROBE)
        if tid < n:
            Tx.copy(B[0:1], A[0:1], dispatch=PROBE)
        if tid < 40:  # all of warp 0 and part of warp 1: not a box
            Tx.copy(B[0:1], A[0:1], dispatch=PROBE)
        if tid < 0:  # no thread
            Tx.copy(B[0:1], A[0:1], dispatch=PROBE)
        if (lane == 0) & (n > 2):  # the thread-id part still counts
            Tx.copy(B[0:1], A[0:1], dispatch=PROBE)

    lower_tile_primitives(k, fakegpu)
    whole = {"laneid": (32, 0), "warpid": (4, 0), "cta_id": (1, 0)}
    assert [s[1] for s in seen] == [whole] * 6 + [{**whole, "laneid": (1, 0)}]


def test_scope_that_cannot_group_the_threads_gives_empty_sides(fakegpu: Target,
                                                                seen: list[Any]) -> None:
    @T.prim_func(private=True)
    def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.device_entry()
        T.cta_id([1])
        w = T.warp_id([8])
        if (w >= 2) & (w < 6):  # warps of two warpgroups, neither whole
            Tx.wg.copy(B[0:8], A[0:8], dispatch=PROBE)

    lower_tile_primitives(k, fakegpu)
    assert seen == [("warpgroup", {}, {})]


def test_host_form_has_no_exec_context(host_target: Target, seen: list[Any]) -> None:
    @T.prim_func(private=True)
    def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        Tx.copy(B[0:8], A[0:8], dispatch=PROBE)

    lower_tile_primitives(k, host_target)
    assert seen == [("thread", {}, {})]


def test_computed_only_when_read(fakegpu: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any) -> None:
        raise AssertionError("the exec context was computed without being asked for")

    monkeypatch.setattr(exec_context, "split_at_call", refuse)
    register_dispatch("copy", "*", variant="quiet", priority=10_000)(lambda c, s: _empty())

    @T.prim_func(private=True)
    def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.device_entry()
        T.cta_id([1])
        w = T.warp_id([4])
        if w == 0:
            Tx.copy(B[0:1], A[0:1], dispatch="quiet")

    lower_tile_primitives(k, fakegpu)  # no AssertionError
