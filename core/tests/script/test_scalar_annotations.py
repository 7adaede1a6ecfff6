"""``x: T.int32`` / ``x: T.int32 = v`` as the seed's mutable scalar: a local one-element
buffer when later statements assign or index it, printed back as the annotation."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.error import DiagnosticError
from tvm.ir import stmt as S
from tvm.ir.structural import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T


def _running_max() -> tvm.tirx.PrimFunc:
    @T.prim_func
    def running_max(A: T.Buffer((6,), "int32"), out: T.Buffer((2,), "int32")):
        best: T.int32 = -100
        count: T.int32
        count = 0
        for i in range(6):
            if A[i] > best:
                best = A[i]
                count += 1
        out[0] = best
        out[1] = count

    return running_max


def test_an_annotated_value_assigned_in_a_loop_accumulates() -> None:
    out = np.zeros(2, "int32")
    tvm.compile(_running_max(), target="c")(np.array([3, 1, 7, 7, 2, 9], "int32"), out)
    assert out.tolist() == [9, 3]


def test_it_prints_as_the_annotation_and_reads_back_equal() -> None:
    f = _running_max()
    text = f.script()
    assert "best: T.int32 = -100\n    count: T.int32 = 0\n" in text
    assert "best[0] = A[i]" in text and "count[0] = count[0] + 1" in text
    assert "T.alloc_local" not in text
    again = from_source(text)
    assert structural_equal(again, f)
    assert again.script() == text


def test_an_annotated_value_never_assigned_stays_a_let() -> None:
    @T.prim_func
    def f(out: T.Buffer((1,), "int32")):
        k: T.int32 = 5
        out[0] = k * 2

    assert isinstance(f.body, S.LetStmt)
    assert "k: T.int32 = 5\n" in f.script()


def test_an_unused_or_pointer_taken_cell_prints_as_its_allocation() -> None:
    @T.prim_func
    def f(out: T.Buffer((1,), "int32")):
        x = T.alloc_local((1,), "int32")
        x[0] = 4
        y = T.decl_buffer((1,), "int32", data=x.data, scope="local")
        out[0] = y[0]
        z: T.int32
        z = 3

    text = f.script()
    assert 'x = T.alloc_local((1,), "int32")\n    x[0] = 4\n' in text
    assert "z: T.int32\n    z[0] = 3\n" in text  # unused after the store: not merged
    assert structural_equal(from_source(text), f)
    res = np.zeros(1, "int32")
    tvm.compile(f, target="c")(res)
    assert res.tolist() == [4]


def test_a_handle_annotation_needs_a_handle_value() -> None:
    src = '''
@T.prim_func
def f():
    p: T.handle = T.int64(0)
'''
    with pytest.raises(DiagnosticError, match=r"`p: T.handle = \.\.\.` binds a pointer, but the "
                                              r"value has type int64.*T.reinterpret"):
        from_source(src)


class _Tally:
    """A helper object of the kind the seed's kernels pass around (a tile scheduler)."""

    def __init__(self, total, step):
        self.total = total
        self.step = step

    @T.inline
    def add(self, v):
        self.total = self.total + v * self.step
        self.step += 1  # a Python attribute: updated at parse time


def test_an_inline_method_stores_into_a_scalar_held_by_its_object() -> None:
    @T.prim_func
    def f(A: T.Buffer((3,), "int32"), out: T.Buffer((1,), "int32")):
        total: T.int32
        total = 0
        tally = T.meta_var(_Tally(total, 1))
        for i in range(3):
            tally.add(A[i])
        tally.add(A[0])
        out[0] = tally.total

    text = f.script()
    assert "total[0] = total[0] + A[i]\n" in text  # step 1 inside the loop, 2 after it
    assert "total[0] = total[0] + A[0] * 2\n" in text
    res = np.zeros(1, "int32")
    tvm.compile(f, target="c")(np.array([5, 6, 7], "int32"), res)
    assert res.tolist() == [5 + 6 + 7 + 2 * 5]
    assert structural_equal(from_source(text), f)


def test_a_handle_literal_prints_and_parses_back() -> None:
    src = '''
@T.prim_func
def f(P: T.Buffer((2,), "handle")):
    P[1] = 7
'''
    f = from_source(src)
    text = f.script()
    assert "P[1] = T.handle(7)" in text
    assert structural_equal(from_source(text), f)


def test_a_buffer_alias_in_a_body_views_existing_memory() -> None:
    @T.prim_func
    def f(out: T.Buffer((2,), "int32")):
        pair = T.alloc_buffer((2,), "int32")
        flat = T.Buffer((2,), "int32", data=pair.data)  # the seed's spelling of a view
        pair[0] = 3
        flat[1] = flat[0] * 5
        out[0] = pair[1]
        out[1] = flat[0]

    assert [type(s).__name__ for s in f.body.seq[:2]] == ["AllocBuffer", "DeclBuffer"]
    text = f.script()
    assert 'flat = T.decl_buffer((2,), "int32", data=pair.data)\n' in text
    assert structural_equal(from_source(text), f)
    res = np.zeros(2, "int32")
    tvm.compile(f, target="c")(res)
    assert res.tolist() == [15, 3]
    with pytest.raises(DiagnosticError, match=r"T.Buffer\(data=...\) expects a handle"):
        from_source('''
@T.prim_func
def g():
    a = T.alloc_buffer((2,), "int32")
    b = T.Buffer((2,), "int32", data=a)
''')
