"""``T.TensorMap`` parameters: a handle variable marked ``ptr_scope="grid_constant"`` that
prints back as ``T.TensorMap()`` (the seed's spelling) and round-trips."""

from __future__ import annotations

from typing import no_type_check

from tvm.ir import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T


@no_type_check
def _func():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), TM: T.TensorMap, n: T.int32, h: T.handle):
        A[0] = T.Cast("float32", n)

    return f


def test_tensor_map_parameter_is_a_grid_constant_handle() -> None:
    f = _func()
    tm, n, h = f.params[1], f.params[2], f.params[3]
    assert str(tm.dtype) == "handle" and tm.ptr_scope == "grid_constant"
    assert tm.ptr_dtype is None
    assert h.ptr_scope is None and str(n.dtype) == "int32"
    assert repr(T.TensorMap) == "T.TensorMap" and T.TensorMap == "handle"


def test_tensor_map_parameter_prints_and_round_trips() -> None:
    f = _func()
    text = f.script()
    assert "TM: T.TensorMap(), n: T.int32, h: T.handle" in text
    back = from_source(text)
    assert structural_equal(back, f)
    assert back.params[1].ptr_scope == "grid_constant"
