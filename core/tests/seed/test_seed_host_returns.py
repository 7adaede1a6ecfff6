"""Host functions that return a value with ``T.ret(x)`` (issue 28, item 7): the return type is
the ``-> T.<type>`` annotation (or the type of the first ``T.ret``), the printed form keeps it,
and the host backend hands the value back to the Python caller."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.error import CodegenError, DiagnosticError
from tvm.ir.structural import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T


def test_a_scalar_function_returns_its_value() -> None:
    @T.prim_func
    def mul_add(a: T.int64, b: T.int64, c: T.int64) -> T.int64:
        T.ret(a * b + c)

    assert mul_add.ret_type == "int64"
    ex = tvm.compile(mul_add, target="c")
    assert ex(6, 7, 3) == 45
    assert ex(2**40, 2, -1) == 2**41 - 1


def test_the_return_type_prints_and_parses_back() -> None:
    @T.prim_func
    def first_positive(A: T.Buffer((16,), "float32")) -> T.float32:
        for i in range(16):
            if A[i] > T.float32(0):
                T.ret(A[i])
        T.ret(T.float32(-1))

    text = first_positive.script()
    assert "def first_positive(A: T.Buffer((16,), \"float32\")) -> T.float32:" in text
    again = from_source(text)
    assert again.ret_type == "float32"
    assert structural_equal(again, first_positive)


def test_an_early_return_from_a_loop_over_a_buffer() -> None:
    @T.prim_func
    def find(A: T.Buffer((16,), "int32"), key: T.int32) -> T.int32:
        for i in range(16):
            if A[i] == key:
                T.ret(i)
        T.ret(-1)

    ex = tvm.compile(find, target="c")
    a = np.array([5, 3, 9, 3] + [0] * 12, dtype="int32")
    assert ex(a, 9) == 2
    assert ex(a, 3) == 1
    assert ex(a, 42) == -1


def test_without_annotation_the_first_ret_gives_the_type() -> None:
    @T.prim_func
    def is_even(n: T.int32):
        T.ret(n % 2 == 0)

    assert is_even.ret_type is None
    ex = tvm.compile(is_even, target="c")
    assert ex(4) is True and ex(7) is False


def test_a_function_without_ret_still_returns_none() -> None:
    @T.prim_func
    def fill(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(1)

    a = np.zeros(4, "float32")
    assert tvm.compile(fill, target="c")(a) is None
    np.testing.assert_array_equal(a, 1)


def test_a_ret_of_another_type_than_declared_is_an_error() -> None:
    @T.prim_func
    def bad(x: T.float32) -> T.int32:
        T.ret(x)

    with pytest.raises(CodegenError, match=r"returns int32 .* gets a float32 value.*T\.Cast") \
            as info:
        tvm.compile(bad, target="c")
    assert "test_seed_host_returns.py" in str(info.value) and "T.ret(x)" in str(info.value)


def test_a_return_annotation_that_is_not_a_scalar_type_is_located() -> None:
    src = '''
@T.prim_func
def f(A: T.Buffer((4,), "float32")) -> T.Buffer((4,), "float32"):
    T.ret(A[0])
'''
    with pytest.raises(DiagnosticError, match="return annotation must be a scalar type") as info:
        from_source(src)
    assert info.value.lineno == 3 and "T.Buffer" in info.value.text


def test_a_16_bit_float_return_is_refused_with_the_types_that_work() -> None:
    @T.prim_func
    def half(x: T.float32) -> T.float16:
        T.ret(T.Cast("float16", x))

    with pytest.raises(CodegenError, match="returns a float16 value.*float32, float64"):
        tvm.compile(half, target="c")


def test_an_exported_module_still_returns_values(tmp_path) -> None:
    @T.prim_func
    def add(a: T.int32, b: T.int32) -> T.int32:
        T.ret(a + b)

    path = tmp_path / "add.so"
    tvm.compile(add, target="c").export_library(str(path))
    loaded = tvm.runtime.load_module(str(path))
    assert loaded(2, 5) == 7
    assert loaded.get_function("add")(-4, 1) == -3
