"""Kernel ids checked by the well-formed check (``verify_tirx_well_formed``) as the lowering
checks them, and the seed's ``ScopeIdDef(vars, extents, parent, child)`` form."""

from __future__ import annotations

import pytest

import tvm
from tvm.error import KernelFormError, ScopeIdExtentError
from tvm.ir import ScopeIdDef, Var
from tvm.script import tirx as T
from tvm.tirx.analysis import verify_tirx_well_formed
from tvm.tirx.transform import LowerKernelForm


def test_disagreeing_extents_fail_the_well_formed_check():
    @T.prim_func
    def warps(A: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([2])
        w = T.warp_id([6])  # 192 threads
        tx = T.thread_id([256])
        A[tx] = T.Cast("float32", w)

    with pytest.raises(ScopeIdExtentError, match=r"^Inconsistent extents for scope ids: function "
                                                 r"warps: inconsistent thread counts: T.thread_id"
                                                 r"\(\[256\]\) gives 256 threads but "
                                                 r"T.warp_id\(\[6\]\) \* 32 gives 192"):
        verify_tirx_well_formed(warps)
    # the lowering says the same (without the check's prefix)
    with pytest.raises(ScopeIdExtentError, match=r"^function warps: inconsistent thread counts"):
        LowerKernelForm()(tvm.IRModule({"main": warps}))


def test_grid_not_whole_clusters_fails_the_check_in_a_module():
    @T.prim_func
    def clusters(A: T.Buffer((6,), "float32")):
        T.device_entry()
        bx = T.cta_id([6])
        T.cta_id_in_cluster([4])
        T.thread_id([1])
        A[bx] = 1.0

    with pytest.raises(ScopeIdExtentError, match="the grid extent 6 along x is not a multiple "
                                                 "of the cluster extent 4"):
        verify_tirx_well_formed(tvm.IRModule({"main": clusters}))


def test_consistent_and_deferred_ids_pass_the_check():
    @T.prim_func
    def ok(A: T.Buffer((128,), "float32")):
        T.device_entry()
        bx = T.cta_id()  # nothing implies it: left to the lowering, as the seed's check does
        wg = T.warpgroup_id([1])
        tx = T.thread_id()  # 128, from the warpgroup
        A[tx] = T.Cast("float32", bx + wg)

    assert verify_tirx_well_formed(ok) is True
    with pytest.raises(KernelFormError, match=r"T.cta_id\(\) has no extents"):
        LowerKernelForm()(tvm.IRModule({"main": ok}))


def test_seed_scope_pair_constructor():
    v = Var("v", "int32")
    d = ScopeIdDef([v], [32], "warp", "thread")
    assert (d.kind, d.vars, [int(e) for e in d.extents]) == ("lane_id", [v], [32])
    assert ScopeIdDef([v], None, "kernel", "cta").deferred
    assert ScopeIdDef([Var("a"), Var("b")], [2, 2], "cluster", "cta").kind == "cta_id_in_cluster"
    with pytest.raises(ValueError, match=r"Deferred ScopeIdDef T.cta_id\(\) \(no extents\) must "
                                         r"define exactly one Var, got 2"):
        ScopeIdDef([Var("a"), Var("b")], None, "kernel", "cta")
    with pytest.raises(ValueError, match=r"no kernel id indexes 'cta' within 'warp'; the pairs "
                                         r"are \('kernel', 'cta'\)"):
        ScopeIdDef([v], [2], "warp", "cta")
    with pytest.raises(TypeError, match="takes no fourth argument"):
        ScopeIdDef("lane_id", [v], [32], "thread")
