"""Trainium layouts: the seed's rules and messages."""

from __future__ import annotations

import pytest

from tvm.ir import S, TileLayout
from tvm_backend_trn.layout import is_trainium_layout, to_psum_layout, trainium_layout


def _iters(layout):
    return [(int(it.extent.value), int(it.stride.value), it.axis.name) for it in layout.shard]


def test_pf_layout():
    assert _iters(trainium_layout("PF", (128, 512))) == [(128, 1, "P"), (512, 1, "F")]


def test_large_partition_dim_splits_and_moves_before_p():
    assert _iters(trainium_layout("FP", (64, 2048))) == [(64, 1, "F"), (16, 64, "F"),
                                                         (128, 1, "P")]
    assert _iters(trainium_layout("PF", (256, 32))) == [(2, 32, "F"), (128, 1, "P"),
                                                        (32, 1, "F")]


def test_several_p_dims():
    assert _iters(trainium_layout("PPF", (4, 32, 8))) == [(4, 32, "P"), (32, 1, "P"),
                                                          (8, 1, "F")]


def test_psum_layout_banks():
    assert _iters(trainium_layout("PF", (128, 2048), is_psum=True)) == [
        (128, 1, "P"), (4, 1, "Bank"), (512, 1, "F")]
    assert _iters(trainium_layout("PF", (128, 256), is_psum=True)) == [(128, 1, "P"),
                                                                        (256, 1, "F")]
    # a free dim of exactly one bank still becomes (1 bank, 512 elements), as in the seed
    assert _iters(trainium_layout("PFF", (128, 4, 512), is_psum=True)) == [
        (128, 1, "P"), (4, 1, "Bank"), (1, 1, "Bank"), (512, 1, "F")]


@pytest.mark.parametrize("annotation, shape, message", [
    ("PX", (128, 4), "annotation PX must be a string of 'P' and 'F'"),
    ("PF", (128,), "annotation PF and shape (128,) must have the same length"),
    ("PF", (200, 4), "There is only 1 P in the annotation. Partition size 200 must be less "
                     "than or equal to 128 or a multiple of 128"),
    ("PPF", (16, 16, 4), "There are 2 Ps in the annotation. Partition size 256 must be less "
                         "than or equal to 128"),
])
def test_rule_messages(annotation, shape, message):
    with pytest.raises(ValueError) as err:
        trainium_layout(annotation, shape)
    assert str(err.value) == message


def test_psum_conversion_failure():
    bad = TileLayout(S[(128, 3):(1 @ _axis("P"), 200 @ _axis("F"))])
    with pytest.raises(ValueError, match="can not be converted to psum layout"):
        to_psum_layout(bad)
    odd = TileLayout(S[(128, 96):(1 @ _axis("P"), 8 @ _axis("F"))])
    with pytest.raises(ValueError, match="can not be converted to psum layout"):
        to_psum_layout(odd)


def _axis(name):
    from tvm.ir import Axis

    return Axis.get(name)


def test_is_trainium_layout():
    assert is_trainium_layout(trainium_layout("PF", (128, 4)))
    assert not is_trainium_layout(TileLayout(S[(4, 4):(4, 1)]))  # memory axis m
    assert not is_trainium_layout(None)
