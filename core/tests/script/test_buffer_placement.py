"""Views and placements of buffers in scripts: ``T.decl_buffer``'s positional ``data`` and the
scope it takes from it, ``Buffer.elem_offset_of``, and ``T.alloc_buffer(allocated_addr=...)``."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.ir import AllocBuffer, DeclBuffer, post_order_visit
from tvm.script import tirx as T


def _nodes(func, cls):
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, cls) else None)
    return found


def test_decl_buffer_takes_data_third_and_its_scope():
    @T.prim_func
    def f(X: T.Buffer((12,), "float32")):
        s = T.alloc_buffer((24,), "float32", scope="shared")
        v = T.decl_buffer((4,), "float32", s.data, elem_offset=8)  # the seed's positional data
        w = T.decl_buffer((4,), "float32", data=X.data, elem_offset=4)
        T.evaluate(v[1] + w[0])

    views = {d.buffer.name: d.buffer for d in _nodes(f, DeclBuffer)}
    assert views["v"].scope == "shared"  # the memory s.data points to
    assert views["w"].scope == "global"
    text = f.script()
    assert 'v = T.decl_buffer((4,), "float32", scope="shared", elem_offset=8, data=s.data)' in text
    tvm.ir.assert_structural_equal(tvm.script.from_source(text), f)


def test_decl_buffer_of_a_buffer_names_its_data():
    with pytest.raises(Exception, match=r"expects a handle variable such as `B.data`; for a view "
                                        r"of buffer 's' pass s.data"):
        @T.prim_func
        def f():
            s = T.alloc_buffer((8,), "float32", scope="shared")
            v = T.decl_buffer((4,), "float32", s)
            T.evaluate(v[0])


def test_elem_offset_of():
    A = tvm.tirx.decl_buffer((6, 10), "float16", name="A")
    assert int(A.elem_offset_of([2, 3])) == 23
    strided = tvm.tirx.decl_buffer((6, 10), "float16", name="S", strides=[16, 1], elem_offset=5)
    assert int(strided.elem_offset_of((2, 3))) == 35  # its own elem_offset is not counted
    laid = tvm.tirx.decl_buffer((6, 10), "float16", name="L",
                                layout=T.TileLayout(T.S[(6, 10):(1, 6)]))  # column-major
    assert int(tvm.arith.Analyzer().simplify(laid.elem_offset_of([2, 3]))) == 20
    with pytest.raises(IndexError, match=r"A.elem_offset_of: 1 index\(es\) for a buffer of 2 "
                                         r"dimension\(s\)"):
        A.elem_offset_of([4])


def test_sub_view_at_elem_offset_of_runs():
    @T.prim_func
    def f(X: T.Buffer((8, 8), "float32"), Y: T.Buffer((8,), "float32")):
        tile = T.alloc_buffer((8, 8), "float32", scope="local")
        for i, j in T.grid(8, 8):
            tile[i, j] = X[i, j]
        row = T.decl_buffer((8,), "float32", tile.data, elem_offset=tile.elem_offset_of([5, 0]))
        for j in range(8):
            Y[j] = row[j] * 2.0

    x = np.arange(64, dtype="float32").reshape(8, 8)
    y = np.zeros(8, "float32")
    tvm.compile(f, target="c")(x, y)
    np.testing.assert_array_equal(y, x[5] * 2)


def test_allocated_addr_is_an_annotation_that_round_trips():
    @T.prim_func
    def f():
        a = T.alloc_buffer((16,), "float32", scope="shared", allocated_addr=[256])
        b = T.alloc_buffer((16,), "float32", scope="shared", allocated_addr=T.int32(512))
        T.evaluate(a[0] + b[0])

    allocs = {n.buffer.name: n for n in _nodes(f, AllocBuffer)}
    assert allocs["a"].allocated_addr == [256] and allocs["b"].allocated_addr == [512]
    assert allocs["a"].annotations == {"allocated_addr": [256]}
    text = f.script()
    assert 'a = T.alloc_buffer((16,), "float32", scope="shared", allocated_addr=[256])' in text
    tvm.ir.assert_structural_equal(tvm.script.from_source(text), f)
    with pytest.raises(Exception, match=r"allocated_addr=\[\]\) gives no address"):
        @T.prim_func
        def g():
            a = T.alloc_buffer((16,), "float32", scope="shared", allocated_addr=[])
            T.evaluate(a[0])
