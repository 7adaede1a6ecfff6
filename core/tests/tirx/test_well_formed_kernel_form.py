"""``verify_tirx_well_formed`` checks that a kernel's ids agree, as the seed's well-formed
check does, and tolerates a deferred id nothing resolves (its lowering names it)."""

from __future__ import annotations

from typing import no_type_check

import pytest

from tvm.error import KernelFormError
from tvm.script import tirx as T
from tvm.tirx.analysis import verify_tirx_well_formed


@no_type_check
def test_agreeing_ids_are_well_formed() -> None:
    @T.prim_func
    def k(A: T.Buffer((256,), "float32")):
        T.device_entry()
        bx = T.cta_id([2])
        w = T.warp_id([4])
        lane = T.lane_id([32])
        T.thread_id([128])
        A[bx * 128 + w * 32 + lane] = T.float32(1)

    assert verify_tirx_well_formed(k) is True


@no_type_check
def test_disagreeing_thread_counts_are_not() -> None:
    @T.prim_func
    def k(A: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([2])
        T.warp_id([2])
        T.lane_id([32])
        T.thread_id([96])
        A[0] = T.float32(1)

    with pytest.raises(KernelFormError, match=r"Inconsistent extents for scope thread: "
                                              r"T.thread_id\(\[96\]\) gives 96 threads but "
                                              r"T.warp_id\(\[2\]\) \* 32 gives 64"):
        verify_tirx_well_formed(k)


@no_type_check
def test_a_grid_the_clusters_do_not_make_is_not() -> None:
    @T.prim_func
    def k(A: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([6])
        T.cta_id_in_cluster([2])
        T.cluster_id([2])
        A[0] = T.float32(1)

    with pytest.raises(KernelFormError, match="Inconsistent extents for scope cta along x: "
                                              "T.cta_id gives 6 but"):
        verify_tirx_well_formed(k)


@no_type_check
def test_an_unresolved_deferred_id_is_tolerated() -> None:
    @T.prim_func
    def k(A: T.Buffer((256,), "float32")):
        T.device_entry()
        bx = T.cta_id()
        tx = T.thread_id([64])
        A[bx * 64 + tx] = T.float32(1)

    assert verify_tirx_well_formed(k) is True


def test_the_seeds_scope_pair_constructor_names_the_same_ids() -> None:
    from tvm.ir import Var
    from tvm.tirx.exec_scope import ScopeIdDef

    d = ScopeIdDef([Var("lane", "int32")], [32], "warp", "thread")
    assert d.kind == "lane_id" and [int(e) for e in d.extents] == [32]
    assert ScopeIdDef([Var("b", "int32")], None, "kernel", "cta").deferred
    with pytest.raises(ValueError, match="Deferred ScopeIdDef must define exactly one Var"):
        ScopeIdDef([Var("a", "int32"), Var("b", "int32")], None, "kernel", "cta")
    with pytest.raises(ValueError, match="no id kind is the scope 'cta' inside 'warp'"):
        ScopeIdDef([Var("a", "int32")], [1], "warp", "cta")
