"""IR details the script front end relies on: buffer shape variables as definitions, and
TileLayout replicas written with ``S[...]``."""

from __future__ import annotations

from tvm.ir import Buffer, PrimFunc, S, SeqStmt, TileLayout, Var, structural_equal, structural_hash
from tvm.ir.layout import AXES


def _func_with_shape_var() -> PrimFunc:
    n = Var("n")
    a = Var("a", "handle")
    return PrimFunc([a], SeqStmt([]), {a: Buffer("A", (n, 4), "float32")}, name="f")


def test_match_buffer_shape_variables_are_definitions() -> None:
    f1, f2 = _func_with_shape_var(), _func_with_shape_var()
    assert structural_equal(f1, f2)
    assert structural_hash(f1) == structural_hash(f2)


def test_shape_variable_must_map_consistently() -> None:
    n, m = Var("n"), Var("m")
    a, b = Var("a", "handle"), Var("b", "handle")
    same = PrimFunc([a, b], SeqStmt([]), {a: Buffer("A", (n,)), b: Buffer("B", (n,))})
    n2 = Var("n")
    a2, b2 = Var("a", "handle"), Var("b", "handle")
    diff = PrimFunc([a2, b2], SeqStmt([]), {a2: Buffer("A", (n2,)), b2: Buffer("B", (m,))})
    assert not structural_equal(same, diff)


def test_tile_layout_replica_accepts_shard_spec() -> None:
    lay = TileLayout(S[(2, 4):(4, 1)], replica=S[(4,):(1 @ AXES["warpid"],)])
    assert [it.axis.name for it in lay.replica] == ["warpid"]
    assert lay.replica[0].extent.value == 4
