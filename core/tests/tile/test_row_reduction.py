"""tvm.tirx.operator.tile_primitive.common.row_reduction: the reading of a row reduction that
the OpenCL and Metal row-parallel variants share."""

from __future__ import annotations

import pytest

from tvm.error import DispatchFail
from tvm.ir import Buffer, Var
from tvm.script.tirx import tile as Tx
from tvm.tirx.operator.tile_primitive.common import ReduceOpType, row_reduction


def test_rows_of_a_2d_region():
    a, b = Buffer("A", [16, 100], "float32"), Buffer("B", [16, 4], "float32")
    red = row_reduction(Tx.max(b[0:16, 2:3], a[0:16, 0:100], axes=-1, accum=True))
    assert (red.kind, red.rows, red.cols, red.dst_axis, red.rank, red.accum) == (
        ReduceOpType.MAX, 16, 100, 0, 2, True)
    assert red.src.buffer is a and red.dst.buffer is b


def test_a_single_row():
    a, b = Buffer("A", [100], "float32"), Buffer("B", [1, 1], "float32")
    red = row_reduction(Tx.sum(b, a))
    assert (red.kind, red.rows, red.cols, red.dst_axis, red.rank) == (
        ReduceOpType.SUM, 1, 100, None, 1)


@pytest.mark.parametrize("make, reason", [
    (lambda a, b, n: Tx.sum(b[0:4], Buffer("C", [4, 2, 8], "float32"), axes=-1),
     "src has rank 3; this variant reduces 1-D or 2-D regions"),
    (lambda a, b, n: Tx.sum(b[0:8], a[0:4, 0:8], axes=0),
     "this variant reduces the last axis only"),
    (lambda a, b, n: Tx.sum(b[0:4], a[0:4, 0:n], axes=-1),
     "the extents of src and dst must be constants"),
    (lambda a, b, n: Tx.sum(b[0:3], a[0:4, 0:8], axes=-1),
     r"dst extents \[3\] do not hold one value per row of src \(4 rows\)"),
])
def test_what_rules_a_call_out_is_named(make, reason):
    a, b = Buffer("A", [4, 8], "float32"), Buffer("B", [8], "float32")
    with pytest.raises(DispatchFail, match=reason):
        row_reduction(make(a, b, Var("n", "int32")))
