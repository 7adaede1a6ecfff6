"""The tile facade ``Tx`` (seed section 1.1): op names, scopes, tile-only checks."""

from __future__ import annotations

import pytest

from tvm.ir import Cast, Evaluate, Op, TilePrimitiveCall
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx


def test_tile_is_tx_and_scope_objects_are_shared() -> None:
    assert T.tile is Tx
    for name in ("cta", "warp", "wg", "warpgroup", "cluster", "thread"):
        assert getattr(T, name) is getattr(Tx, name)
    assert T.cta.copy is Tx.cta.copy
    assert Tx.wg.copy.scope == "warpgroup" and Tx.warpgroup.copy.scope == "warpgroup"


def test_tile_shorthand_and_scoped_aliases_use_tile_ops() -> None:
    @T.prim_func
    def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float16")):
        T.tile.copy(A, A)
        Tx.cast(B, A)
        T.cta.cast(B, A)
        Tx.cta.sqrt(A, A)

    calls = list(f.body.seq)
    assert all(isinstance(c, TilePrimitiveCall) for c in calls)
    assert [c.op.name for c in calls] == ["tirx.tile.copy", "tirx.tile.cast", "tirx.tile.cast",
                                         "tirx.tile.sqrt"]
    assert [c.scope for c in calls] == ["thread", "thread", "cta", "cta"]


def test_each_scope_prefix_sets_the_scope_of_one_call() -> None:
    A = T.Buffer  # noqa: F841 - the annotation builder, not a buffer
    from tvm.ir import Buffer

    buf = Buffer("A", (8,), "float32")
    got = {label: getattr(Tx, label).zero(buf).scope
           for label in ("thread", "warp", "wg", "warpgroup", "cta", "cluster")}
    assert got == {"thread": "thread", "warp": "warp", "wg": "warpgroup",
                   "warpgroup": "warpgroup", "cta": "cta", "cluster": "cluster"}
    assert Tx.zero(buf).scope == "thread"
    call = Tx.cta.copy(buf, buf, dispatch="tma", workspace={"w": buf}, config={"k": 1})
    assert call.dispatch == "tma" and call.workspace == {"w": buf} and call.config == {"k": 1}


def test_tx_is_tile_shorthand_only() -> None:
    assert not hasattr(T, "copy")
    assert not hasattr(Tx, "SMEMPool")
    assert not hasattr(Tx, "ScopedOp")
    assert not hasattr(Tx, "meta_class")
    assert T.cast is not Tx.cast


def test_builtin_expression_ops_are_not_tile_primitives() -> None:
    x = T.float32(2.0)
    assert isinstance(T.cast(x, "float16"), Cast)
    assert T.sqrt(x).op.name == "tirx.sqrt"
    assert T.fma(x, x, x).op.name == "tirx.fma"
    assert Op.get("tirx.sqrt").category.value == "builtin"


def test_tx_rejects_expression_overloads() -> None:
    with pytest.raises(TypeError) as info:
        Tx.exp(T.float32(1.0))
    assert str(info.value) == ("Tx.exp is tile-only and expects `dst` to be a Buffer or "
                               "BufferRegion; use T.exp for expression/builtin calls")
    from tvm.ir import Buffer

    buf = Buffer("A", (4,), "float32")
    with pytest.raises(TypeError, match="Tx.cast is tile-only and expects `src`"):
        Tx.cast(buf, T.float32(1.0))


def test_scope_prefix_applies_only_to_tile_primitives() -> None:
    with pytest.raises(AttributeError) as info:
        Tx.cta.exp10  # noqa: B018 - the attribute access is what raises
    assert str(info.value) == ("'Tx.cta.exp10' is not a tile primitive; the 'Tx.cta.' scope "
                               "prefix applies only to tile primitives; did you mean 'exp' or "
                               "'exp2'?")
    with pytest.raises(AttributeError, match="'Tx.wg.device_entry' is not a tile primitive"):
        T.wg.device_entry  # noqa: B018


def test_tile_op_argument_errors() -> None:
    from tvm.ir import Buffer

    buf = Buffer("A", (4,), "float32")
    with pytest.raises(TypeError, match="missing argument 'src'"):
        Tx.copy(buf)
    # a keyword that is not a parameter is a config entry (the seed's rule) ...
    assert Tx.copy(buf, buf, nonsense=1).config == {"nonsense": 1}
    # ... unless it is a parameter's name in another case or spelling: a misspelling
    with pytest.raises(TypeError, match="got keyword argument 'DST'; did you mean 'dst'"):
        Tx.copy(buf, DST=buf)
    with pytest.raises(TypeError, match="at most 2 arguments"):
        Tx.copy(buf, buf, buf)


def test_tile_call_is_a_statement_not_an_expression() -> None:
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        Tx.fill(A, T.float32(0))
        T.evaluate(0)

    assert isinstance(f.body.seq[0], TilePrimitiveCall)
    assert isinstance(f.body.seq[1], Evaluate)
