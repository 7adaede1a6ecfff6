"""TileLayout.apply: the (indices, shape) form and the seed's (*indices, shape=None) form."""

from __future__ import annotations

import pytest

from tvm.ir.expr import Var
from tvm.tirx.layout import ComposeLayout, S, SwizzleLayout, TileLayout


def _value(e):
    return int(e) if not isinstance(e, int) else e


def test_apply_both_spellings_agree():
    lay = TileLayout(S[(128, 4, 8) : (32, 8, 1)])
    assert _value(lay.apply(3, 1, 2)["m"]) == 3 * 32 + 8 + 2
    assert _value(lay.apply([3, 1, 2], [128, 4, 8])["m"]) == 106
    assert _value(lay.apply((3, 1, 2))["m"]) == 106
    # another shape over the same layout: element (0, 10, 0) of (1, 128, 4) is flat 40
    assert _value(lay.apply(0, 10, 0, shape=[1, 128, 4])["m"]) == 40
    tid = Var("tid", "int32")
    assert "tid" in str(lay.apply(tid, 0, 0)["m"])


def test_apply_index_count_is_checked():
    lay = TileLayout(S[(128, 4, 8) : (32, 8, 1)])
    with pytest.raises(ValueError, match=r"apply: 2 indices for a shape of 3 dimensions "
                                         r"\(\[128, 4, 8\]\); give one index per dimension"):
        lay.apply(1, 2)


def test_compose_layout_apply_swizzles_the_seed_form_too():
    inner = TileLayout(S[(8, 64) : (64, 1)])
    sw = ComposeLayout(SwizzleLayout(3, 3, 3), inner)
    assert sw.tile_layout is inner and sw.layout_B is inner  # the seed's two names of it
    assert _value(sw.apply(1, 0)["m"]) == _value(sw.apply([1, 0], [8, 64])["m"]) == 72


def test_compose_of_an_identity_swizzle_atom_is_its_swizzle() -> None:
    """A swizzle atom written as ComposeLayout(swizzle, identity tile) composes like the swizzle;
    a non-identity inner tile is still refused."""
    from tvm.ir import ComposeLayout, S, SwizzleLayout, TileLayout

    sw = SwizzleLayout(2, 2, 3)
    atom = ComposeLayout(sw, TileLayout(S[(4, 32)]))
    col = TileLayout(S[(32, 4):(1, 32)])
    c = ComposeLayout(atom, col)
    assert c.layout_A is sw and c.layout_B is col
    with pytest.raises(TypeError, match="identity tile"):
        ComposeLayout(ComposeLayout(sw, TileLayout(S[(4, 32):(1, 4)])), col)
