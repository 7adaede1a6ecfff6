"""``T.local_scalar`` / ``T.shared_scalar`` / ``T.alloc_scalar`` / ``T.decl_scalar`` (issue 28):
sugar over one-element buffers, as in the seed. The name reads the value, assignment stores
into it; the IR and the host code are those of the ``(1,)`` buffer, which prints as the seed's
``x: T.int32`` in local memory."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.error import DiagnosticError
from tvm.ir import stmt as S
from tvm.ir.structural import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T


def _dot() -> tvm.tirx.PrimFunc:
    @T.prim_func
    def dot(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
            out: T.Buffer((2,), "float32")):
        acc = T.local_scalar("float32", init=0.0)
        n = T.local_scalar("int32")
        n = 0
        for i in range(16):
            acc = acc + A[i] * B[i]
            if A[i] > 3.0:
                n += 1
        out[0] = acc
        out[1] = T.Cast("float32", n)

    return dot


def test_a_local_scalar_is_a_one_element_local_buffer_printed_as_an_annotation() -> None:
    text = _dot().script()
    assert "acc: T.float32 = T.float32(0.0)\n    n: T.int32 = 0\n" in text
    assert "acc[0] = acc[0] + A[i] * B[i]" in text
    assert "n[0] = n[0] + 1" in text
    assert "out[0] = acc[0]" in text
    assert "T.alloc_local" not in text


def test_the_sugar_and_the_one_element_buffer_are_one_ir() -> None:
    @T.prim_func
    def dot(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
            out: T.Buffer((2,), "float32")):
        acc = T.alloc_buffer((1,), "float32", scope="local")
        acc[0] = T.float32(0.0)
        n = T.alloc_buffer((1,), "int32", scope="local")
        n[0] = 0
        for i in range(16):
            acc[0] = acc[0] + A[i] * B[i]
            if A[i] > T.float32(3.0):
                n[0] = n[0] + 1
        out[0] = acc[0]
        out[1] = T.Cast("float32", n[0])

    f = _dot()
    assert structural_equal(f, dot)
    assert structural_equal(from_source(f.script()), f)


def test_a_local_scalar_accumulates_on_the_host() -> None:
    a = np.arange(16, dtype="float32")
    b = np.full(16, 0.5, "float32")
    out = np.zeros(2, "float32")
    tvm.compile(_dot(), target="c")(a, b, out)
    assert out[0] == pytest.approx(float(a @ b))
    assert out[1] == float((a > 3).sum())


def test_shared_alloc_and_decl_scalars() -> None:
    @T.prim_func
    def f(out: T.Buffer((3,), "int32")):
        s = T.shared_scalar("int32")
        g = T.alloc_scalar("int32", "global")
        pool = T.alloc_buffer((4,), "int32")
        third = T.decl_scalar("int32", pool.data, "global", 2)
        s = 7
        g = s * 2
        third = g + 1
        third += 1
        out[0] = s
        out[1] = g
        out[2] = pool[2]

    text = f.script()
    assert 's = T.alloc_buffer((1,), "int32", scope="shared")' in text
    assert 'g = T.alloc_buffer((1,), "int32")' in text
    assert 'third = T.decl_buffer((1,), "int32", elem_offset=2, data=pool.data)' in text
    assert "third[0] = third[0] + 1" in text
    assert structural_equal(from_source(text), f)
    decls = [s for s in f.body.seq if isinstance(s, S.DeclBuffer)]
    assert [tuple(d.buffer.shape) for d in decls] == [(1,)]
    out = np.zeros(3, "int32")
    tvm.compile(f, target="c")(out)
    assert out.tolist() == [7, 14, 16]


def test_a_cell_is_stored_from_nested_blocks_and_read_in_comprehensions() -> None:
    @T.prim_func
    def f(A: T.Buffer((4,), "int32"), out: T.Buffer((2,), "int32")):
        m = T.local_scalar("int32", init=-1)
        for i in range(4):
            if A[i] > m:
                m = A[i]
        out[0] = m
        out[1] = T.max(*[m + k for k in range(3)])

    out = np.zeros(2, "int32")
    tvm.compile(f, target="c")(np.array([3, 9, 2, 5], "int32"), out)
    assert out.tolist() == [9, 11]


def test_source_buffer_and_data_name_the_buffer() -> None:
    @T.prim_func
    def f(out: T.Buffer((1,), "int32")):
        x = T.local_scalar("int32", init=5)
        y = T.decl_buffer((), "int32", data=x.data, scope="local")
        x.source[0] = x + 1
        T.evaluate(T.address_of(x))
        out[0] = y[()] + x.buffer[0]

    text = f.script()
    assert 'x = T.alloc_local((1,), "int32")' in text  # its pointer is used: not `x: T.int32`
    assert "x[0] = x[0] + 1" in text
    assert "T.address_of(x[0])" in text
    assert 'y = T.decl_buffer((), "int32", scope="local", data=x.data)' in text
    out = np.zeros(1, "int32")
    tvm.compile(f, target="c")(out)
    assert out.tolist() == [12]


def test_a_new_scalar_under_a_used_name_is_a_new_buffer() -> None:
    @T.prim_func
    def f(out: T.Buffer((2,), "int32")):
        x = T.local_scalar("int32", init=1)
        out[0] = x
        x = T.local_scalar("int32", init=2)
        out[1] = x

    out = np.zeros(2, "int32")
    tvm.compile(f, target="c")(out)
    assert out.tolist() == [1, 2]


def test_decl_scalar_needs_data() -> None:
    src = '''
@T.prim_func
def f():
    x = T.decl_scalar("int32")
'''
    with pytest.raises(DiagnosticError, match=r"T.decl_scalar views existing memory") as info:
        from_source(src)
    assert info.value.lineno == 4


@pytest.mark.parametrize("line, message", [
    ('T.local_scalar("int32", name="i")', r"unexpected keyword argument 'name'"),
    ('T.local_scalar("int32")', r"assign this to a name"),
    ('a, b = T.local_scalar("int32")', r"assign a buffer to one name"),
    ('x = T.shared_scalar("int32", init=0)', r"unexpected keyword argument 'init'"),
])
def test_misused_scalar_builders_are_located(line: str, message: str) -> None:
    src = f'''
@T.prim_func
def f():
    {line}
'''
    with pytest.raises(DiagnosticError, match=message) as info:
        from_source(src)
    assert info.value.lineno == 4


def test_a_region_is_not_a_scalar_value() -> None:
    src = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "int32")):
    x = T.local_scalar("int32")
    x = A[1]
'''
    with pytest.raises(DiagnosticError) as info:
        from_source(src)
    assert info.value.lineno == 5
