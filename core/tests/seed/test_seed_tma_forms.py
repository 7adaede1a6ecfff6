"""Script forms of the seed's TMA and dsmem tests (issue 28): ``T.decl_buffer`` with the data
positional (the view in the data's memory), ``x: T.int32`` assigned later (a mutable scalar),
``Tx.copy_async`` options as keywords, ``Buffer.elem_offset_of`` and the seed's positional
``DispatchContext``. Programs of our own, run on the host backend where they run."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.ir import Var, decl_buffer
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.exec_scope import ExecScope
from tvm.tirx.operator.tile_primitive.dispatch_context import DispatchContext
from tvm.tirx.operator.tile_primitive.ops import make_call


def _decls(func: tvm.tirx.PrimFunc) -> dict[str, tvm.ir.Buffer]:
    out: dict[str, tvm.ir.Buffer] = {}

    def visit(node: object) -> None:
        if isinstance(node, tvm.ir.DeclBuffer):
            out[node.buffer.name] = node.buffer

    tvm.ir.visitor.post_order_visit(func.body, visit)
    return out


def test_decl_buffer_takes_data_positionally_and_lives_in_its_memory() -> None:
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        pool = T.alloc_buffer((256,), "uint8", scope="shared.dyn")
        V = T.decl_buffer((4, 4), "float32", pool.data, elem_offset=8)
        G = T.decl_buffer((16,), "float32", A.data)
        L = T.decl_buffer((2, 2), "float32", pool.data, None, 0, "shared")
        V[0, 0] = G[0]
        L[0, 0] = G[1]

    views = _decls(f)
    assert views["V"].scope == "shared.dyn" and views["V"].data is not None
    assert int(views["V"].elem_offset) == 8
    assert views["G"].scope == "global"
    assert views["L"].scope == "shared"  # an explicit scope is kept


def test_an_annotated_name_assigned_later_is_a_mutable_scalar() -> None:
    @T.prim_func
    def f(B: T.Buffer((6,), "int32")):
        parity: T.int32
        parity = 1
        for i in range(6):
            B[i] = parity
            parity = parity ^ 1

    b = np.zeros(6, "int32")
    tvm.compile(f, target="c")(b)
    np.testing.assert_array_equal(b, [1, 0, 1, 0, 1, 0])


def test_copy_async_keywords_are_config_entries() -> None:
    a = decl_buffer((64,), "float32", "a")
    s = decl_buffer((64,), "float32", "s", scope="shared")
    bar = Var("bar", "handle")
    call = make_call("copy_async", s, a, dispatch="tma", mbar=bar, cta_group=1)
    assert call.config == {"mbar": bar, "cta_group": 1} and call.dispatch == "tma"
    merged = make_call("copy_async", s, a, config={"wait": False}, mbar=bar)
    assert merged.config == {"wait": False, "mbar": bar}
    with pytest.raises(TypeError, match=r"\['mbar'\] given both as keywords and in config="):
        make_call("copy_async", s, a, config={"mbar": bar}, mbar=bar)
    # as in the seed, every tile op takes its options this way (test_seed_printed_forms.py)
    assert make_call("copy", s, a, hint="fast").config == {"hint": "fast"}

    @T.prim_func
    def f(A: T.Buffer((64,), "float32")):
        S = T.alloc_buffer((64,), "float32", scope="shared")
        Tx.copy_async(S, A, wait=True)

    assert 'T.tile.copy_async(S, A, wait=True)' in f.script()  # printed as keywords


def test_elem_offset_of_follows_layout_strides_or_row_major() -> None:
    plain = decl_buffer((4, 8), "float32", "p")
    assert int(plain.elem_offset_of([2, 3])) == 19
    strided = decl_buffer((4, 8), "float32", "s", strides=[16, 1])
    assert int(strided.elem_offset_of([2, 3])) == 35
    col = decl_buffer((4, 8), "float32", "c", layout=T.TileLayout(T.S[(4, 8):(1, 4)]))
    assert int(col.elem_offset_of([2, 3])) == 14
    with pytest.raises(IndexError, match="1 index"):
        plain.elem_offset_of([1])


def test_dispatch_context_takes_the_seed_positional_form() -> None:
    i = Var("i", "int32")
    rng = tvm.ir.Range.from_min_extent(0, 8)
    ctx = DispatchContext("c", ExecScope("warp"), {"grid": 1}, {i: rng})
    assert ctx.scope_kind == "warp" and type(ctx.scope_kind) is str
    assert ctx.launch_params == {"grid": 1} and ctx.var_range_map == {i: rng}
    with pytest.raises(ValueError, match="unknown execution scope"):
        DispatchContext("c", "block")
