"""A broadcast error says how to fix the call (issue 27), and the fix it names works."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.error import DispatchError
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.operator.tile_primitive.common import broadcast_fix


def test_missing_unit_dimension_names_the_shape_and_the_view():
    @T.prim_func
    def f(A: T.Buffer((513, 100), "float32"), B: T.Buffer((513,), "float32"),
          C: T.Buffer((513, 100), "float32")):
        Tx.add(C, A, B)

    with pytest.raises(DispatchError) as info:
        tvm.compile(f, target="c")
    text = str(info.value)
    assert "src2: shape [513] does not broadcast to [513, 100]" in text
    fix = ('fix: give src2 the shape [513, 1] (its extents on dst\'s axis 0, 1 elsewhere); '
           'T.decl_buffer((513, 1), "float32", data=B.data) is that view of B')
    assert text.endswith(fix)
    assert text.count("fix:") == 1  # both variants declined alike: the fix is printed once


def test_the_named_fix_compiles_and_broadcasts_along_rows():
    @T.prim_func
    def f(A: T.Buffer((513, 100), "float32"), B: T.Buffer((513,), "float32"),
          C: T.Buffer((513, 100), "float32")):
        B2 = T.decl_buffer((513, 1), "float32", data=B.data)
        Tx.add(C, A, B2)

    ex = tvm.compile(f, target="c")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((513, 100), dtype=np.float32)
    b = rng.standard_normal(513, dtype=np.float32)
    c = np.zeros_like(a)
    ex(a, b, c)
    np.testing.assert_array_equal(c, a + b[:, None])


def test_mismatched_extent_names_the_dimension():
    @T.prim_func
    def f(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 16), "float32"),
          C: T.Buffer((64, 32), "float32")):
        Tx.mul(C, A, B[0:64, 0:16])

    with pytest.raises(DispatchError, match=r"fix: src2's extents \[64, 16\] must line up with "
                                            r"dst's \[64, 32\] as in NumPy: .* \(dimension 1 of "
                                            r"src2 is 16 where dst has 32\); check the slice or "
                                            r"the declared shape of src2$"):
        tvm.compile(f, target="c")


def test_fix_for_a_slice_names_no_view():
    # A region of a bigger buffer is not a whole buffer: no decl_buffer view is offered.
    assert broadcast_fix([8], [8, 4]) == (
        "give the source the shape [8, 1] (its extents on dst's axis 0, 1 elsewhere)")
    assert broadcast_fix([4, 8], [4, 3, 8]) == (
        "give the source the shape [4, 1, 8] (its extents on dst's axes 0, 2, 1 elsewhere)")
