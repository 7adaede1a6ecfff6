"""The seed's dialect flags on the script decorators (issue 28, item 9): ``s_tir=`` and
``check_well_formed=`` on ``@T.prim_func`` and ``@I.ir_module``."""

from __future__ import annotations

import pytest

import tvm
from tvm.script import ir as I
from tvm.script import tirx as T


def test_s_tir_function_parses_as_the_one_dialect() -> None:
    @T.prim_func(s_tir=True)
    def flagged(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = A[i] * 2.0

    @T.prim_func
    def plain(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = A[i] * 2.0

    assert flagged.script().replace("def flagged", "def plain") == plain.script()
    assert "s_tir" not in flagged.script()


def test_ir_module_takes_the_flag_in_python_and_in_text() -> None:
    @I.ir_module(s_tir=True)
    class Mod:
        @T.prim_func(s_tir=True, check_well_formed=False)
        def main(A: T.Buffer((4,), "int32")):
            for i in range(4):
                A[i] = i

    assert isinstance(Mod, tvm.ir.IRModule) and list(Mod.functions) == ["main"]
    text = Mod.script().replace("@I.ir_module", "@I.ir_module(s_tir=True)")
    assert tvm.ir.structural_equal(tvm.script.from_source(text), Mod)


def test_a_flag_that_is_not_a_bool_is_named() -> None:
    with pytest.raises(TypeError, match=r"s_tir= takes True or False, got 'yes'"):
        T.prim_func(s_tir="yes")
    with pytest.raises(TypeError, match=r"check_well_formed= takes True or False, got 1"):
        I.ir_module(check_well_formed=1)
