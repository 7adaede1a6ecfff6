"""The builtin math builders of ``tvm.tirx.op`` (``T.exp`` and friends)."""

from __future__ import annotations

import pytest

from tvm.ir import expr as E
from tvm.script import tirx as T
from tvm.tirx import op


@pytest.mark.parametrize("name", op.UNARY_MATH)
def test_every_unary_builder_exists_and_builds_its_op(name: str) -> None:
    x = E.Var("x", "float16")
    call = getattr(op, name)(x)
    assert isinstance(call, E.Call)
    assert call.op.name == f"tirx.{name}"
    assert str(call.dtype) == "float16"
    assert getattr(op, name).__name__ == name
    assert name in op.__all__


@pytest.mark.parametrize("name", op.BINARY_MATH)
def test_every_binary_builder_promotes_a_python_scalar(name: str) -> None:
    x = E.Var("x", "float32")
    call = getattr(op, name)(x, 2.0)
    assert call.op.name == f"tirx.{name}"
    assert [str(a.dtype) for a in call.args] == ["float32", "float32"]
    assert name in op.__all__


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_predicates_return_bool(name: str) -> None:
    call = getattr(op, name)(E.Var("x", "float32x4"))
    assert call.op.name == f"tirx.{name}"
    assert str(call.dtype) == "boolx4"


def test_unary_math_rejects_an_int_and_says_how_to_fix_it() -> None:
    with pytest.raises(TypeError, match=r"expected a floating-point expression, got int32; "
                                        r"cast it with T\.cast"):
        op.exp(E.Var("i", "int32"))


def test_script_facade_reaches_the_same_builders() -> None:
    assert T.exp is op.exp
    assert T.sqrt is op.sqrt
