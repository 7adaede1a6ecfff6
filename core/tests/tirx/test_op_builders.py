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


def test_all_of_and_any_of_fold_what_is_known_at_build_time() -> None:
    a, b = E.Var("a", "bool"), E.Var("b", "bool")
    assert op.all_of([]) is True and op.any_of([]) is False
    assert op.all_of([a]) is a and op.any_of(iter([b])) is b
    both = op.all_of([a, True, b])  # a constant true drops out of a conjunction
    assert isinstance(both, E.And) and both.a is a and both.b is b
    assert op.all_of([a, E.const(False, "bool"), b]) is False
    assert op.any_of([a, False, b]).a is a  # and a constant false out of a disjunction
    assert op.any_of([a, E.const(True, "bool")]) is True
    nested = op.any_of([a, b, a])
    assert isinstance(nested, E.Or) and isinstance(nested.a, E.Or)  # from the left
    assert "all_of" in op.__all__ and T.any_of is op.any_of


def test_all_of_says_which_argument_is_not_a_condition() -> None:
    with pytest.raises(TypeError, match=r"all_of\(\): condition 1 is a int32 value, not a "
                                        r"condition \(bool\); compare it"):
        op.all_of([E.Var("a", "bool"), E.Var("n", "int32")])
    with pytest.raises(TypeError, match=r"any_of\(\): condition 0 is a int value"):
        op.any_of([1])
