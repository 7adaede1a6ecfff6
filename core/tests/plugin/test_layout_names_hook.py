"""The ``tvm_layout_names`` hook: axes and layout functions for ``tvm.tirx.layout``, registered
transactionally like everything else a backend adds."""

from __future__ import annotations

import pytest

import tvm
import tvm.tirx.layout as L
from tvm.error import BackendError
from tvm.ir.layout import AXES

LAYOUT_HOOK = """
from tvm.ir.layout import Axis, Iter, TileLayout


def stripe(n):
    return TileLayout([Iter(n, 1, Axis.get("lanex"))])


@hookimpl
def tvm_layout_names():
    return {"lanex": Axis("lanex", "thread"), "SRAMX": Axis("SRAMX", "memory"), "stripe": stripe}
"""


def test_layout_names_become_tvm_tirx_layout_names(backends):
    backends.add("lay", LAYOUT_HOOK)
    tvm.backend.load("lay")
    assert L.lanex is AXES["lanex"] and L.lanex.kind == "thread"
    assert L.SRAMX.kind == "memory"
    assert [(it.extent.value, it.axis.name) for it in L.stripe(8).shard] == [(8, "lanex")]
    assert "stripe" in dir(L)


def test_layout_names_roll_back_with_a_failed_load(backends):
    backends.add("lay", LAYOUT_HOOK + """

@hookimpl
def tvm_register_ops():
    raise RuntimeError("boom")
""")
    with pytest.raises(BackendError, match="boom"):
        tvm.backend.load("lay")
    assert "lanex" not in AXES
    with pytest.raises(AttributeError):
        L.stripe  # noqa: B018


def test_axis_listed_under_another_name_is_an_error(backends):
    backends.add("lay", """
from tvm.ir.layout import Axis


@hookimpl
def tvm_layout_names():
    return {"wrong": Axis("lanex", "thread")}
""")
    with pytest.raises(BackendError, match="tvm_layout_names: axis 'lanex' is listed as 'wrong'"):
        tvm.backend.load("lay")
