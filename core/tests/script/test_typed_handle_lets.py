"""Typed handle lets (issue 28, item 6): ``m: T.handle("tensormap") = v``,
``m: T.let[T.handle("tensormap")] = v`` and ``p: T.handle("float16", "shared") = v`` keep the
pointer type on the variable, print in that form and read back; the host-call builders check
their first argument."""

from __future__ import annotations

import pytest

import tvm
from tvm.ir import LetStmt
from tvm.script import tirx as T

_TEXT = '''
@T.prim_func
def f(A: T.Buffer((8,), "float16")):
    m: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)
    p: T.handle("float16", "shared") = T.tvm_stack_alloca("float16", 8)
    T.evaluate(T.call_packed("my.fill", m, p, A.data))
'''


def _lets(func):
    out, s = [], func.body
    while isinstance(s, LetStmt):
        out.append(s.var)
        s = s.body
    return out


def test_typed_handle_lets_keep_their_pointer_type_and_read_back() -> None:
    func = tvm.script.from_source(_TEXT)
    m, p = _lets(func)
    assert (str(m.dtype), m.ptr_scope) == ("handle", "grid_constant")
    assert (str(p.ptr_dtype), p.ptr_scope) == ("float16", "shared")
    text = func.script()
    assert 'm: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)' in text
    assert 'p: T.handle("float16", "shared") = T.tvm_stack_alloca("float16", 8)' in text
    assert 'T.call_packed("my.fill", m, p, A.data)' in text
    assert tvm.ir.structural_equal(tvm.script.from_source(text), func)


def test_the_let_spelling_is_the_same_let() -> None:
    spelled = tvm.script.from_source(_TEXT.replace('m: T.handle("tensormap")',
                                                   'm: T.let[T.handle("tensormap")]'))
    assert tvm.ir.structural_equal(spelled, tvm.script.from_source(_TEXT))


def test_host_call_builders_name_a_bad_first_argument() -> None:
    with pytest.raises(TypeError, match="element type as a string, got 4"):
        T.tvm_stack_alloca(4, 1)
    with pytest.raises(TypeError, match="takes the function's name first"):
        T.call_packed(T.int32(1))
