"""A script's ``buf[i] = v`` stores ``v`` converted to the buffer's element type, as the
seed's assignment does; IR built by hand is still checked by the verifier."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.ir import Cast
from tvm.ir import stmt as S
from tvm.script import tirx as T


def _stores(func):
    out = []

    def visit(node):
        if isinstance(node, S.BufferStore):
            out.append(node)
        for child in getattr(node, "seq", None) or [getattr(node, "body", None)]:
            if child is not None:
                visit(child)

    visit(func.body)
    return out


def test_an_integer_expression_stored_into_a_float_buffer_is_cast() -> None:
    @T.prim_func
    def f(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "int8")):
        for i in range(6):
            A[i] = i * 3 - 5      # int32 into float32
            B[i] = i * 40         # int32 into int8: wraps as a C cast does
            A[i] += i             # the update's int32 operand is promoted, then stored

    stores = _stores(f)
    assert [str(s.value.dtype) for s in stores] == ["float32", "int8", "float32"]
    assert isinstance(stores[0].value, Cast) and isinstance(stores[1].value, Cast)
    a, b = np.zeros(6, "float32"), np.zeros(6, "int8")
    tvm.compile(f, target="c")(a, b)
    np.testing.assert_array_equal(a, [i * 3 - 5 + i for i in range(6)])
    np.testing.assert_array_equal(b, (np.arange(6) * 40).astype(np.int8))
    assert tvm.ir.structural_equal(tvm.script.from_source(f.script()), f)


def test_a_scalar_cell_store_is_cast_too() -> None:
    @T.prim_func
    def f(A: T.Buffer((1,), "float16")):
        acc = T.local_scalar("float16")
        acc = 0
        for i in range(4):
            acc = acc + T.float16(i)
        A[0] = acc
        A[0] = 7 * 2 + A[0].astype("int32")

    a = np.zeros(1, "float16")
    tvm.compile(f, target="c")(a)
    assert a[0] == 20


def test_a_hand_built_mismatched_store_is_still_an_error() -> None:
    buf = tvm.ir.buffer.decl_buffer((4,), "float32", "A")
    store = S.BufferStore(buf, tvm.ir.IntImm("int32", 1) + tvm.ir.Var("n", "int32"), [0])
    assert str(store.value.dtype) == "int32"
    n = store.value.b
    func = tvm.ir.PrimFunc([buf.data, n], store, buffer_map={buf.data: buf})
    with pytest.raises(tvm.error.IRVerifyError, match="stores a int32 value into a float32 buffer"):
        tvm.ir.verify(func)
