"""tvm.ir.intrin: one declaration of an intrinsic gives its op, builder, script member, printed
form, codegen rule and requirements (a toy backend's table, for the host target ``c``)."""

from __future__ import annotations

import inspect

import pytest

import tvm
from tvm import _registry
from tvm.error import CodegenError, RequirementError
from tvm.ir import Op, OpCategory
from tvm.ir.intrin import (
    PURE,
    IntrinNamespace,
    IntrinTable,
    Requirement,
    Typed,
    element,
    target_flag,
)
from tvm.script import tirx as T
from tvm.script.namespace import register_script_namespace


def _declare() -> IntrinTable:
    toy = IntrinTable("c")

    @toy.intrin("toy.fma", "a, b, c", dtype="arg0", effect=PURE, alias=True)
    def _fma(cg, call, args):
        """``a * b + c`` in one call."""
        return f"(({args[0]}) * ({args[1]}) + ({args[2]}))"

    toy.declare("toy.half", "x", rule="(({0}) * 0.5f)", dtype="arg0", effect=PURE,
                doc="Half of ``x``.")
    # a builder that computes operands: a Buffer stands for its first element, the result type
    # comes from the builder
    toy.declare("toy.group.scaled", lambda x, scale=2: Typed("float32", (element(x), scale)),
                nargs=2, rule="(({0}) * {1})", effect=PURE)
    toy.declare("toy.needs_wish", "x", rule="wish({0})", dtype="arg0",
                requires=[Requirement("a wish granted", lambda target: False,
                                      "ask the genie")])
    toy.declare("toy.needs_flag", "x", rule="flag({0})", dtype="arg0",
                requires=[target_flag("toy_flag", "a target with the toy flag")])

    @toy.sugar("toy.group.twice")
    def toy_twice(x):
        """``x * 2`` through ``T.toy.group.scaled``."""
        return toy.build("toy.group.scaled", x, 2)

    return toy


@pytest.fixture
def toy():
    restore = _registry.snapshot_all()
    table = _declare()
    try:
        table.register_ops()
        register_script_namespace("toy", IntrinNamespace("toy", table.members("toy")))
        yield table
    finally:
        restore()


def test_one_declaration_gives_the_op(toy):
    op = Op.get("tirx.toy.fma")
    assert op.category is OpCategory.DEVICE_INTRIN and op.namespace == "toy"
    assert op.printer_name == "toy.fma" and op.signature == ("a", "b", "c")
    assert Op.get("tirx.toy_fma") is op  # alias=True: the flat name tirx.<builder>
    assert not Op.exists("tirx.toy_half")  # no alias unless asked for
    assert Op.get("tirx.toy.group_scaled").printer_name == "toy.group.scaled"
    assert toy.spec("toy.fma").name == "tirx.toy.fma"


def test_one_declaration_gives_the_builder(toy):
    builders = toy.builders()
    assert sorted(builders) == ["toy_fma", "toy_group_scaled", "toy_half", "toy_needs_flag",
                                "toy_needs_wish", "toy_twice"]
    fma = builders["toy_fma"]
    assert fma.__name__ == "toy_fma"
    assert str(inspect.signature(fma)).startswith("(a, b, c)")
    assert "``a * b + c`` in one call." in fma.__doc__  # the rule's docstring
    assert "Half of ``x``." in builders["toy_half"].__doc__
    x = T.float32(1.5)
    call = fma(x, x, x)
    assert call.op is Op.get("tirx.toy.fma") and str(call.dtype) == "float32"
    A = tvm.ir.decl_buffer((4,), "float16", "A")
    scaled = builders["toy_group_scaled"](A)
    assert str(scaled.dtype) == "float32" and scaled.args[0].buffer is A
    with pytest.raises(TypeError):
        fma(x, x)


def test_one_declaration_gives_the_script_member_and_printed_form(toy):
    assert T.toy.fma.__tir_op_name__ == "tirx.toy.fma"
    assert repr(T.toy) == "T.toy" and repr(T.toy.group) == "<T.toy.group>"

    @T.prim_func
    def k(A: T.Buffer((4,), "float32")):
        A[0] = T.toy.fma(A[1], A[2], A[3])
        A[1] = T.toy.group.scaled(A[2], 3)
        A[2] = T.toy.group.twice(A[3])

    text = k.script()
    assert "T.toy.fma(A[1], A[2], A[3])" in text
    assert "T.toy.group.scaled(A[2], 3)" in text and "T.toy.group.scaled(A[3], 2)" in text
    assert tvm.ir.structural_equal(tvm.script.from_source(text), k)


def test_one_declaration_gives_the_codegen_rule(toy):
    @T.prim_func
    def k(A: T.Buffer((4,), "float32")):
        A[0] = T.toy.fma(A[1], A[2], A[3])
        A[1] = T.toy.half(A[2])

    assert callable(Op.get("tirx.toy.fma").get_codegen("c"))
    assert Op.get("tirx.toy.half").get_codegen("c") == "(({0}) * 0.5f)"
    text = tvm.compile(k, target="c").inspect_source()
    assert "((A[1]) * (A[2]) + (A[3]))" in text
    assert "((A[2]) * 0.5f)" in text


def _uses(member):
    @T.prim_func
    def k(A: T.Buffer((4,), "float32")):
        A[0] = member(A[1])

    return k


def test_a_missing_requirement_is_a_clear_error(toy):
    with pytest.raises(RequirementError) as info:
        tvm.compile(_uses(T.toy.needs_wish), target="c")
    assert isinstance(info.value, CodegenError)
    assert "T.toy.needs_wish needs a wish granted: ask the genie" in str(info.value)
    with pytest.raises(RequirementError, match="T.toy.needs_flag needs a target with the toy "
                                               "flag: add 'toy_flag': True to the target"):
        tvm.compile(_uses(T.toy.needs_flag), target="c")


def test_another_table_adds_a_rule(toy):
    # a second backend gives one of toy's intrinsics its rule for another kind
    other = IntrinTable("other")
    other.add_rule(toy.spec("toy.fma"), "other_fma({0}, {1}, {2})",
                   requires=[target_flag("fast", "a fast target")])
    op = Op.get("tirx.toy.fma")
    with pytest.raises(RuntimeError), _registry.transaction("other"):  # a failed load: undone
        other.register_ops()
        assert op.get_codegen("other") is not None
        raise RuntimeError("the backend's next hook failed")
    assert op.get_codegen("other") is None and op.get_attr("requires.other") is None
    other.register_ops()
    assert op.get_codegen("other") == "other_fma({0}, {1}, {2})"
    assert op.get_attr("requires.other")[0].what == "a fast target"
    with pytest.raises(ValueError, match="declared in this table"):
        toy.add_rule(toy.spec("toy.fma"), "x")


def test_declaration_errors():
    table = IntrinTable("c")
    table.declare("toy2.a", "x")
    with pytest.raises(ValueError, match="declared twice"):
        table.declare("toy2.a", "x")
    with pytest.raises(TypeError, match="give nargs= with an operand function"):
        table.declare("toy2.b", lambda x: (x,))
    with pytest.raises(ValueError, match="is no op declared before it"):
        table.declare("toy2.c", lambda x: Typed("int32", (x,)), nargs=1, form_of="toy2.zz")
    with pytest.raises(KeyError, match="no intrinsic T.toy2.zz"):
        table.spec("toy2.zz")
