"""A vectorised loop far wider than the target's vectors is compiled in vector-wide chunks, with
a warning that says so and how to write it (issue 27: T.vectorized(1024) took 2.65 s to compile
as 1024 statements per row)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tvm
from tvm.error import PerformanceWarning
from tvm.script import tirx as T


def _kernel(n: int, dtype: str = "float32"):
    @T.prim_func
    def k(A: T.Buffer((8, n), dtype), B: T.Buffer((8, n), dtype)):
        for i in T.serial(8):
            for j in T.vectorized(n):
                B[i, j] = A[i, j] * T.cast(2, dtype) + T.cast(1, dtype)

    return k


def _compile(func, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ex = tvm.compile(func, target="c", **kw)
    return ex, [w for w in caught if issubclass(w.category, PerformanceWarning)]


@pytest.mark.parametrize("n", [1024, 1030, 1025])
def test_wide_vector_loop_is_chunked_and_correct(n):
    ex, caught = _compile(_kernel(n))
    a = np.random.default_rng(0).standard_normal((8, n)).astype("float32")
    b = np.zeros_like(a)
    ex(a, b)
    np.testing.assert_array_equal(b, a * np.float32(2) + np.float32(1))
    assert len(caught) == 1
    w = caught[0]
    assert str(w.message) == (
        f"T.vectorized({n}) over 4-byte elements is {n // 16}x the vector width of target c "
        f"(16 lanes in 64 bytes); it is compiled as a serial loop over 16-lane vectors. Write "
        f"that loop (T.serial({n // 16}) around T.vectorized(16)), or T.serial({n}) to leave "
        "vectorising to the compiler, to silence this")
    assert w.filename == __file__  # the kernel's line, not tvm's


def test_source_stays_small():
    ex, _ = _compile(_kernel(1024))
    src = ex.inspect_source()
    # 16 lanes per chunk, each lane one statement at most, not 1024
    assert src.count("B[") <= 64, src.count("B[")


def test_loops_within_the_width_are_left_alone():
    # 64 float32 lanes = 4 AVX-512 registers: not far past, vectorised as written, no warning
    ex, caught = _compile(_kernel(64))
    assert caught == []
    a = np.arange(8 * 64, dtype="float32").reshape(8, 64)
    b = np.zeros_like(a)
    ex(a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)


def test_width_follows_the_element_size():
    # 8-byte elements: 8 lanes per vector, so 64 lanes of float64 are past 4 vectors
    _, caught = _compile(_kernel(64, "float64"))
    assert len(caught) == 1
    assert "(8 lanes in 64 bytes)" in str(caught[0].message)
    _, caught = _compile(_kernel(32, "float64"))
    assert caught == []


def test_disabled_vectorize_is_serial_without_warning():
    _, caught = _compile(_kernel(1024), pass_config={"tir.disable_vectorize": True})
    assert caught == []
