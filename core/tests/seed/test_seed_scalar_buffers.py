"""0-d buffers end to end (issue 28): ``T.Buffer(())`` parameters, ``T.alloc_buffer(())`` in
every scope, ``T.decl_buffer(())`` views, indexed with ``()``; printed, parsed back, run on the
host and taken by tile primitives."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.error import DiagnosticError, DispatchError, TVMError
from tvm.ir.structural import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx


def _dot() -> tvm.tirx.PrimFunc:
    @T.prim_func
    def dot(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
            out: T.Buffer((), "float32")):
        acc = T.alloc_buffer((), "float32", scope="local")
        acc[()] = T.float32(0)
        for i in range(16):
            acc[()] = acc[()] + A[i] * B[i]
        out[()] = acc[()]

    return dot


def test_a_0d_accumulator_and_result_print_parse_and_run() -> None:
    f = _dot()
    text = f.script()
    assert 'out: T.Buffer((), "float32")' in text
    assert 'acc = T.alloc_local((), "float32")' in text
    assert "acc[()] = acc[()] + A[i] * B[i]" in text
    assert structural_equal(from_source(text), f)
    a = np.arange(16, dtype="float32")
    b = np.full(16, 0.5, "float32")
    out = np.zeros((), "float32")
    tvm.compile(f, target="c")(a, b, out)
    assert float(out) == pytest.approx(float(a @ b))


def test_a_0d_parameter_takes_only_a_0d_array() -> None:
    ex = tvm.compile(_dot(), target="c")
    a = np.zeros(16, "float32")
    with pytest.raises((TVMError, ValueError), match="0-d array of shape"):
        ex(a, a, np.zeros((1,), "float32"))


def test_tile_primitives_reduce_into_and_fill_a_0d_buffer() -> None:
    @T.prim_func
    def total(A: T.Buffer((4, 8), "float32"), S: T.Buffer((), "float32"),
              N: T.Buffer((), "int32")):
        Tx.sum(S, A, axes=[0, 1])
        Tx.fill(N, 32)

    a = np.random.default_rng(0).random((4, 8), dtype="float32")
    s, n = np.zeros((), "float32"), np.zeros((), "int32")
    tvm.compile(total, target="c")(a, s, n)
    assert float(s) == pytest.approx(float(a.sum()), rel=1e-5)
    assert int(n) == 32


def test_a_0d_dst_of_a_reduction_that_keeps_an_axis_is_refused() -> None:
    # it was overwritten once per kept row (the last row's sum came back)
    @T.prim_func
    def rows(A: T.Buffer((4, 8), "float32"), S: T.Buffer((), "float32")):
        Tx.sum(S, A)

    with pytest.raises(DispatchError, match=r"no dimension for axes \[0\].*axes=\[0, 1\]"):
        tvm.compile(rows, target="c")


def test_a_0d_view_of_a_parameter() -> None:
    @T.prim_func
    def put(a: T.handle):
        A = T.match_buffer(a, (), "int32")
        D = T.decl_buffer((), "int32", data=A.data)
        D[()] = D[()] + 5

    x = np.full((), 2, "int32")
    tvm.compile(put, target="c")(x)
    assert int(x) == 7


def test_an_index_on_a_0d_buffer_is_located() -> None:
    src = '''
@T.prim_func
def f(A: T.Buffer((), "int32")):
    A[0] = 1
'''
    with pytest.raises(DiagnosticError, match=r"0 dimension\(s\) but 1 index\(es\)") as info:
        from_source(src)
    assert info.value.lineno == 4
