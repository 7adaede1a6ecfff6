"""The seed's ``reduce_axes=`` keyword of the compose ops is their ``axes``."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx


def test_reduce_axes_is_axes() -> None:
    @T.prim_func
    def f(X: T.Buffer((3, 5), "float32"), D: T.Buffer((3, 5), "float32"),
          R: T.Buffer((5,), "float32"), N: T.Buffer((5,), "float32")):
        Tx.unary_reduce(D, R, X, "abs", "max", reduce_axes=0)
        Tx.reduce_negate(N, X, "sum", reduce_axes=0)

    assert "reduce_axes" not in f.script()  # printed as the parameter it is
    x = np.arange(-7, 8, dtype="float32").reshape(3, 5)
    d, r, n = np.zeros((3, 5), "float32"), np.zeros(5, "float32"), np.zeros(5, "float32")
    tvm.compile(f, target="c")(x, d, r, n)
    np.testing.assert_allclose(d, np.abs(x))
    np.testing.assert_allclose(r, np.abs(x).max(0))
    np.testing.assert_allclose(n, -x.sum(0))


def test_both_names_at_once_is_an_error() -> None:
    X = tvm.tirx.decl_buffer((4, 4), "float32", name="X")
    R = tvm.tirx.decl_buffer((4,), "float32", name="R")
    with pytest.raises(TypeError, match=r"got 'axes' twice \(as 'reduce_axes' too\)"):
        Tx.reduce_negate(R, X, "sum", axes=0, reduce_axes=0)
