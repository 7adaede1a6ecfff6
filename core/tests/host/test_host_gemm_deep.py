"""The host GEMM over several K slices and column strips (issue 27's rework): whole register
tiles added to D in place, edge tiles through the tile buffer, a first slice with C, D as a
region of a larger buffer, f64, and a fixed or adaptive thread count."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx


def _kernel(m: int, n: int, k: int, dtype: str, rows: int, cols: int):
    # D is a region of E (row stride cols, offset 1, 2); C is a bias row, read in the first slice
    @T.prim_func
    def f(E: T.Buffer((rows, cols), dtype), A: T.Buffer((k, m), dtype),
          B: T.Buffer((k, n), dtype), C: T.Buffer((1, n), dtype)):
        Tx.gemm(E[1:1 + m, 2:2 + n], A, B, C, transpose_A=True, alpha=0.5, beta=2.0)

    return f


@pytest.mark.parametrize(("m", "n", "k", "dtype"), [
    (133, 1001, 1100, "float32"),   # 3 slices (512, 512, 76), 12-row panels + 1, 32-wide tiles + 9
    (60, 256, 1030, "float64"),     # whole tiles only, 3 slices
    (25, 70, 513, "float32"),       # a slice of 1 after 512
])
@pytest.mark.parametrize("threads", [None, 1, 2])
def test_deep_gemm_matches_numpy(m, n, k, dtype, threads):
    rows, cols = m + 3, n + 5
    target = "c" if threads is None else f"c -num_threads={threads}"
    ex = tvm.compile(_kernel(m, n, k, dtype, rows, cols), target=target)
    rng = np.random.default_rng(m + n + k)
    e = rng.standard_normal((rows, cols)).astype(dtype)
    a = rng.standard_normal((k, m)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = rng.standard_normal((1, n)).astype(dtype)
    want = e.astype(np.float64).copy()
    want[1:1 + m, 2:2 + n] = 0.5 * (a.T.astype(np.float64) @ b) + 2.0 * c
    ex(e, a, b, c)
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(e, want, rtol=tol, atol=tol * np.sqrt(k))
