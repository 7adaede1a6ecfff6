"""``if x:`` with an integer ``x`` is ``if x != 0:`` (the seed's ``if T.ptx.elect_sync():``);
a while loop still asks for a comparison (docs/decisions.md). Also: an ml_dtypes float8
array (whose typestr numpy cannot read) is taken as an argument."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.error import DiagnosticError
from tvm.ir import NE, IfThenElse
from tvm.script import tirx as T


def test_an_integer_condition_is_compared_with_zero() -> None:
    @T.prim_func
    def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "uint8")):
        for i in range(8):
            if A[i] % 3:
                A[i] = 1
            if B[i]:
                B[i] = B[i] + 1

    first = f.body.body.seq[0] if hasattr(f.body.body, "seq") else f.body.body
    assert isinstance(first, IfThenElse) and isinstance(first.condition, NE)
    a, b = np.arange(8, dtype="int32"), np.array([0, 1, 0, 2, 0, 0, 7, 0], "uint8")
    tvm.compile(f, target="c")(a, b)
    np.testing.assert_array_equal(a, [0, 1, 1, 3, 1, 1, 6, 1])
    np.testing.assert_array_equal(b, [0, 2, 0, 3, 0, 0, 8, 0])


def test_a_while_condition_still_needs_a_comparison() -> None:
    with pytest.raises(DiagnosticError, match="condition must be a bool"):
        tvm.script.from_source('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    while A[0]:
        A[0] = A[0] - 1
''')


def test_an_ml_dtypes_float8_array_is_read() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from tvm.runtime.arrays import _read_array

    x = np.zeros((4, 2), dtype=ml_dtypes.float8_e5m2)
    info = _read_array(x)
    assert info is not None and info.shape == (4, 2) and str(info.dtype) == "float8_e5m2"
