"""Opt-in run-time bounds checks on the host (issue 16): with ``tir.bounds_check`` (or
TVM_BOUNDS_CHECK=1) an out-of-bounds access is a BoundsCheckError naming the buffer and the index
instead of silent corruption or a crash; without it the generated code is unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.error import BoundsCheckError, TVMError
from tvm.script import tirx as T

CHECKED = {"tir.bounds_check": True}


@T.prim_func
def scatter_add(A: T.Buffer((16,), "float32"), idx: T.Buffer((4,), "int32")):
    for i in range(4):
        A[idx[i]] = A[idx[i]] + 1.0


@T.prim_func
def gather_guarded(A: T.Buffer((16,), "float32"), B: T.Buffer((8,), "float32"), n: T.int32):
    for i in range(8):
        B[i] = T.if_then_else(i + n < 16, A[i + n], T.float32(-1))


@T.prim_func
def parallel_scatter(A: T.Buffer((64,), "float32"), idx: T.Buffer((64,), "int32")):
    for i in T.parallel(64):
        A[idx[i]] = 1.0


def test_out_of_bounds_index_is_a_bounds_check_error() -> None:
    ex = tvm.compile(scatter_add, target="c", pass_config=CHECKED)
    a = np.zeros(16, "float32")
    ex(a, np.array([0, 3, 15, 3], "int32"))
    np.testing.assert_array_equal(a[[0, 3, 15]], [1, 2, 1])
    with pytest.raises(BoundsCheckError, match=r"^scatter_add: bounds check failed: buffer A index "
                                               r"`idx\[i\]` is outside \[0, 16\)$") as info:
        ex(a, np.array([1, 16, 2, 2], "int32"))
    assert isinstance(info.value, TVMError) and isinstance(info.value, IndexError)
    assert a[1] == 1 and a[2] == 0  # stopped at the bad access: nothing after it ran


def test_negative_index_is_caught_too() -> None:
    ex = tvm.compile(scatter_add, target="c", pass_config=CHECKED)
    with pytest.raises(BoundsCheckError, match="buffer A index `idx\\[i\\]`"):
        ex(np.zeros(16, "float32"), np.array([0, -1, 0, 0], "int32"))


def test_unchecked_by_default_and_the_environment_turns_it_on(monkeypatch) -> None:
    monkeypatch.delenv("TVM_BOUNDS_CHECK", raising=False)
    plain = tvm.compile(scatter_add, target="c").inspect_source()
    assert "bounds check" not in plain
    monkeypatch.setenv("TVM_BOUNDS_CHECK", "1")
    checked = tvm.compile(scatter_add, target="c").inspect_source()
    assert ('return tvm_fail("bounds check failed: buffer A index `idx[i]` is outside [0, 16)");'
            in checked)


def test_accesses_proven_in_range_are_not_checked() -> None:
    src = tvm.compile(scatter_add, target="c", pass_config=CHECKED).inspect_source()
    assert "buffer idx index" not in src  # idx[i] with i in [0, 4): proven at compile time
    assert src.count("if (((idx[i]) < 0 || (idx[i]) >= (16))) {") == 1  # one check, not two


def test_a_guarded_access_is_checked_only_when_it_runs() -> None:
    ex = tvm.compile(gather_guarded, target="c", pass_config=CHECKED)
    a = np.arange(16, dtype="float32")
    b = np.zeros(8, "float32")
    ex(a, b, 12)  # i + 12 >= 16 for i >= 4: those loads never run
    np.testing.assert_array_equal(b, [12, 13, 14, 15, -1, -1, -1, -1])
    with pytest.raises(BoundsCheckError, match=r"buffer A index `i \+ n` is outside \[0, 16\)"):
        ex(a, b, -1)


def test_a_failure_inside_an_openmp_loop_is_reported() -> None:
    ex = tvm.compile(parallel_scatter, target="c", pass_config=CHECKED)
    idx = np.arange(64, dtype="int32")
    idx[37] = 640
    with pytest.raises(BoundsCheckError, match="buffer A index `idx\\[i\\]` is outside \\[0, 64\\)"):
        ex(np.zeros(64, "float32"), idx)


def test_symbolic_extents_are_checked_against_the_arguments() -> None:
    @T.prim_func
    def shift(a: T.handle, k: T.int32):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        for i in range(n):
            A[i] = A[i + k]

    ex = tvm.compile(shift, target="c", pass_config=CHECKED)
    a = np.arange(8, dtype="float32")
    ex(a, 0)
    with pytest.raises(BoundsCheckError, match=r"buffer A index `i \+ k` is outside \[0, n\)"):
        ex(a, 1)


def test_a_two_dimensional_buffer_is_checked_on_its_flat_offset() -> None:
    @T.prim_func
    def rows(A: T.Buffer((4, 8), "float32"), r: T.Buffer((1,), "int32")):
        for j in range(8):
            A[r[0], j] = 1.0

    ex = tvm.compile(rows, target="c", pass_config=CHECKED)
    with pytest.raises(BoundsCheckError, match=r"buffer A index `r\[0\] \* 8 \+ j` is outside "
                                               r"\[0, 32\)"):
        ex(np.zeros((4, 8), "float32"), np.array([4], "int32"))


@T.prim_func
def divide(A: T.Buffer((4,), "int32"), d: T.int32):
    for i in range(4):
        A[i] = A[i] // d


@pytest.mark.parametrize(("first", "d"), [(1, 0), (-(2**31), -1)])
def test_checked_mode_refuses_division_by_zero_and_overflow(first: int, d: int) -> None:
    ex = tvm.compile(divide, target="c", pass_config=CHECKED)
    a = np.array([first, 2, 3, 4], "int32")
    with pytest.raises(BoundsCheckError, match=r"division by zero \(or of the smallest int32 by "
                                               r"-1\) in `A\[i\] // d`"):
        ex(a, d)
    ex(a, 2)
    np.testing.assert_array_equal(a, [first // 2, 1, 1, 2])


def test_checked_mode_converts_floats_to_ints_by_saturating() -> None:
    @T.prim_func
    def conv(A: T.Buffer((3,), "float32"), B: T.Buffer((3,), "int32")):
        for i in range(3):
            B[i] = T.Cast("int32", A[i])

    ex = tvm.compile(conv, target="c", pass_config=CHECKED)
    b = np.zeros(3, "int32")
    ex(np.array([np.inf, -1e30, np.nan], "float32"), b)
    np.testing.assert_array_equal(b, [2**31 - 1, -(2**31), 0])


def test_the_build_option_turns_it_on_and_off(monkeypatch) -> None:
    monkeypatch.setenv("TVM_BOUNDS_CHECK", "1")
    off = tvm.compile(scatter_add, target="c", bounds_check=False)
    assert "bounds check" not in off.inspect_source()  # the option wins over the environment
    monkeypatch.delenv("TVM_BOUNDS_CHECK")
    on = tvm.compile(scatter_add, target="c", bounds_check=True)
    with pytest.raises(BoundsCheckError, match="buffer A index `idx\\[i\\]`"):
        on(np.zeros(16, "float32"), np.array([0, 99, 0, 0], "int32"))
