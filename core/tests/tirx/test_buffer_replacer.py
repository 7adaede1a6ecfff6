"""``tvm.tirx.transform.common.BufferReplacer`` puts one buffer in place of another."""

from __future__ import annotations

from typing import no_type_check

import numpy as np

import tvm
from tvm.ir import PrimFunc
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.transform.common import BufferReplacer


@no_type_check
def test_loads_stores_and_tile_regions_are_redirected() -> None:
    @T.prim_func
    def f(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
        for i in range(4):
            X[i] = X[i + 4] * T.float32(2)
        Tx.fill(X[4:8], T.float32(7))

    x_buf, y_buf = f.buffer_map[f.params[0]], f.buffer_map[f.params[1]]
    body = BufferReplacer({x_buf: y_buf}).visit_stmt(f.body)
    g = PrimFunc(f.params, body, f.buffer_map, name="g")
    text = g.script()
    assert "X[" not in text.split("):", 1)[1] and "Y[i + 4]" in text
    x = np.arange(8, dtype="float32")
    y = np.arange(8, dtype="float32") + 10
    tvm.compile(g, target="c")(x, y)
    np.testing.assert_array_equal(x, np.arange(8))  # X untouched
    np.testing.assert_array_equal(y, [28, 30, 32, 34, 7, 7, 7, 7])


def test_each_replacer_has_its_own_map() -> None:
    a = tvm.tirx.decl_buffer((4,), "float32", name="a")
    b = tvm.tirx.decl_buffer((4,), "float32", name="b")
    first, second = BufferReplacer(), BufferReplacer()
    first.buffer_map[a] = b
    assert second.buffer_map == {}
