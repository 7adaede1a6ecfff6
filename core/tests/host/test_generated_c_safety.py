"""Generated C that used to corrupt memory (issue 16): allocation sizes are computed with
overflow checks, and offsets into buffers past 2**31 - 1 elements use 64-bit arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.error import CodegenError, TVMError
from tvm.script import tirx as T


def test_constant_allocation_beyond_the_address_space_is_a_compile_error() -> None:
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        B = T.alloc_buffer((2**62,), "float32")
        for i in range(4):
            B[i] = A[i]
            A[i] = B[i] + 1.0

    with pytest.raises(CodegenError, match=r"buffer `B` needs 18446744073709551616 bytes "
                                           r"\(shape \[4611686018427387904\]\), more than any "
                                           r"address space holds"):
        tvm.compile(f, target="c")


@T.prim_func
def _symbolic(a: T.handle, n: T.int32, m: T.int32):
    A = T.match_buffer(a, (4,), "float32")
    B = T.alloc_buffer((n, m), "float32")
    for i in range(4):
        B[0, i] = A[i]
        A[i] = B[0, i] + 1.0


def test_symbolic_allocation_size_is_multiplied_with_overflow_checks() -> None:
    ex = tvm.compile(_symbolic, target="c")
    src = ex.inspect_source()
    assert ("if (tvm_size_mul(&B_nbytes, (int64_t)(n)) || tvm_size_mul(&B_nbytes, "
            "(int64_t)(m))) {") in src
    assert "float* B = (float*)__builtin_assume_aligned(tvm_alloc(B_nbytes), 64);" in src
    a = np.ones(4, "float32")
    ex(a, 1, 4)
    np.testing.assert_array_equal(a, np.full(4, 2, "float32"))


@pytest.mark.parametrize(("n", "m"), [(-1, 4), (2**31 - 1, 2**31 - 1)])
def test_symbolic_allocation_that_cannot_be_made_fails_cleanly(n: int, m: int) -> None:
    ex = tvm.compile(_symbolic, target="c")
    a = np.ones(4, "float32")
    with pytest.raises(TVMError, match="buffer B: the allocation size overflows or is negative"
                       "|out of memory allocating buffer B"):
        ex(a, n, m)
    np.testing.assert_array_equal(a, np.ones(4, "float32"))  # nothing ran


def test_negative_symbolic_size_names_the_overflow_check() -> None:
    ex = tvm.compile(_symbolic, target="c")
    with pytest.raises(TVMError, match="buffer B: the allocation size overflows or is negative"):
        ex(np.ones(4, "float32"), 4, -4)


def test_offsets_past_two_to_the_31_use_64_bit_arithmetic() -> None:
    @T.prim_func
    def f(A: T.Buffer((65536, 32769), "int8"), i: T.int32, j: T.int32):
        A[i, j] = T.int8(7)

    ex = tvm.compile(f, target="c")
    src = ex.inspect_source()
    assert "A[(((int64_t)(i)) * INT64_C(32769)) + ((int64_t)(j))] = ((int8_t)7);" in src
    # 2**31 + 32767 bytes of zero pages: only the page written is ever touched
    a = np.zeros((65536, 32769), "int8")
    ex(a, 65535, 32768)
    assert a[65535, 32768] == 7
    assert a[0, 0] == 0 and int(a[65535].sum()) == 7


def test_constant_offset_past_two_to_the_31_is_a_64_bit_literal() -> None:
    @T.prim_func
    def f(A: T.Buffer((65536, 65536), "int8")):
        A[65535, 65535] = T.int8(1)

    src = tvm.compile(f, target="c").inspect_source()
    assert "A[INT64_C(4294967295)] = ((int8_t)1);" in src


def test_small_buffers_keep_32_bit_offsets() -> None:
    @T.prim_func
    def f(A: T.Buffer((64, 64), "float32")):
        for i, j in T.grid(64, 64):
            A[i, j] = 1.0

    src = tvm.compile(f, target="c").inspect_source()
    assert "A[(i * 64) + j] = 1.0f;" in src and "int64_t" not in src.split("TVM_EXPORT")[-1]


def test_integer_overflow_wraps_as_numpy_does() -> None:
    # Signed overflow is undefined in C: -O2 assumed it away (and in a larger kernel found by
    # the fuzzer turned the loop into an endless one). The host compiles with -fwrapv.
    @T.prim_func
    def f(A: T.Buffer((4,), "int32"), m: T.int32):
        for i in range(4):
            for j in range(3):
                A[i] = T.min(T.min(i, m), T.Cast("int32", T.float32("inf")) + j)

    a = np.zeros(4, "int32")
    tvm.compile(f, target="c")(a, 5)
    big = np.array([2**31 - 1], "int32")
    with np.errstate(over="ignore"):
        wrapped = int((big + np.int32(2))[0])
    np.testing.assert_array_equal(a, [wrapped] * 4)


def test_constant_float_to_int_conversion_is_defined() -> None:
    @T.prim_func
    def f(A: T.Buffer((3,), "int32")):
        A[0] = T.Cast("int32", T.float32("inf"))
        A[1] = T.Cast("int32", T.float32("-inf"))
        A[2] = T.Cast("int32", T.float32("nan"))

    a = np.ones(3, "int32")
    ex = tvm.compile(f, target="c")
    assert "INFINITY" not in ex.inspect_source().split("TVM_EXPORT")[-1]
    ex(a)
    np.testing.assert_array_equal(a, [2**31 - 1, -(2**31), 0])
