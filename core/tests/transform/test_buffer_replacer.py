"""``tvm.tirx.transform.common.BufferReplacer``: buffers replaced wherever they appear."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.ir import AllocBuffer, post_order_visit
from tvm.script import tirx as T
from tvm.tirx.transform.common import BufferReplacer


def test_replaced_reads_run():
    @T.prim_func
    def f(X: T.Buffer((8,), "float32"), Z: T.Buffer((8,), "float32"),
          Y: T.Buffer((8,), "float32")):
        for i in range(8):
            Y[i] = X[i] + 1.0

    X, Z = f.buffer_map[f.params[0]], f.buffer_map[f.params[1]]
    g = f.with_body(BufferReplacer({X: Z}).visit(f.body))
    assert "Y[i] = Z[i] + T.float32(1.0)" in g.script()
    z = np.arange(8, dtype="float32")
    y = np.zeros(8, "float32")
    tvm.compile(g, target="c")(np.full(8, 100, "float32"), z, y)
    np.testing.assert_array_equal(y, z + 1)


def test_allocations_and_regions_are_replaced_and_maps_are_not_shared():
    @T.prim_func
    def f(X: T.Buffer((4, 4), "float32")):
        S = T.alloc_buffer((4, 4), "float32", scope="shared")
        T.evaluate(S[1, 2] + X[0, 0])

    (alloc,) = _allocs(f)
    S2 = tvm.tirx.decl_buffer((4, 4), "float32", name="S2", scope="local")
    r1, r2 = BufferReplacer(), BufferReplacer()
    r1.buffer_map[alloc.buffer] = S2
    assert r2.buffer_map == {}
    out = r1.visit(f.body)
    (new_alloc,) = _allocs(f.with_body(out))
    assert new_alloc.buffer is S2
    assert "S2[1, 2]" in f.with_body(out).script()
    assert r2.visit(f.body) is f.body  # nothing to replace: the same statement back


def test_non_buffers_are_refused():
    with pytest.raises(TypeError, match="BufferReplacer maps buffers to buffers, got Buffer -> int"):
        BufferReplacer({tvm.tirx.decl_buffer((4,), "float32"): 3})


def _allocs(func):
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, AllocBuffer) else None)
    return found
