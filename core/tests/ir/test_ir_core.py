"""Unit tests of the IR: data types, expressions, buffers, layouts, ops, equality, verifier."""

from __future__ import annotations

import pytest

from tvm import ir
from tvm.error import IRVerifyError, RegistrationConflict
from tvm.ir import (
    Buffer,
    BufferStore,
    DataType,
    Evaluate,
    For,
    ForKind,
    IntImm,
    Op,
    OpCategory,
    PrimFunc,
    Var,
)


# -- data types ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "code", "bits", "lanes"),
    [
        ("int8", "int", 8, 1), ("int64", "int", 64, 1), ("uint16", "uint", 16, 1),
        ("float16", "float", 16, 1), ("bfloat16", "bfloat", 16, 1), ("float64", "float", 64, 1),
        ("float8_e4m3fn", "float8_e4m3fn", 8, 1), ("float8_e5m2", "float8_e5m2", 8, 1),
        ("float4_e2m1fn", "float4_e2m1fn", 4, 1), ("bool", "bool", 1, 1), ("handle", "handle", 64, 1), ("float32x4", "float", 32, 4),
        ("int8x16", "int", 8, 16),
    ],
)
def test_dtype_parse(spec: str, code: str, bits: int, lanes: int) -> None:
    dt = DataType(spec)
    assert (dt.code, dt.bits, dt.lanes) == (code, bits, lanes)
    assert str(dt) == spec
    assert dt == spec and DataType(str(dt)) is dt


def test_dtype_errors_say_what_is_expected() -> None:
    with pytest.raises(ValueError, match="unknown data type 'float32y'"):
        DataType("float32y")
    with pytest.raises(ValueError, match="float supports widths"):
        DataType("float31")
    with pytest.raises(ValueError, match="float supports widths"):
        DataType("float8")
    with pytest.raises(ValueError, match="bool takes no bit width"):
        DataType("bool8")


def test_dtype_queries() -> None:
    assert DataType("float32x4").bytes == 16
    assert DataType("float32x4").element_of() == "float32"
    assert DataType("bfloat16").is_float and not DataType("int32").is_float
    assert DataType("uint8").is_integer and not DataType("bool").is_integer


# -- expressions -----------------------------------------------------------------------------
def test_operators_build_ir_with_promotion() -> None:
    x = Var("x")
    y = Var("y", "float32")
    n = Var("n", "int64")
    assert isinstance(x + 1, ir.Add) and (x + 1).dtype == "int32"
    assert isinstance(x // 2, ir.FloorDiv) and isinstance(x % 2, ir.FloorMod)
    assert isinstance(x / 2, ir.Div)
    assert (y * 2).dtype == "float32" and isinstance((y * 2).b, ir.FloatImm)
    assert (x + n).dtype == "int64"
    assert (x < 3).dtype == "bool"
    both = (x < 3) & (x > 0)
    assert isinstance(both, ir.And)
    assert isinstance(~(x < 3), ir.Not)
    assert (x << 2).op.name == "tirx.shift_left"


def test_expr_has_no_python_truth_value() -> None:
    x = Var("x")
    with pytest.raises(TypeError, match="no Python truth value"):
        bool(x < 3)
    # == keeps identity semantics for containers
    assert x in [x]
    assert {x: 1}[x] == 1


def test_vector_exprs() -> None:
    r = ir.Ramp(0, 1, 4)
    assert r.dtype == "int32x4"
    b = ir.Broadcast(ir.const(1.0), 4)
    assert b.dtype == "float32x4"
    A = Buffer("A", (16,), "float32")
    assert A.vload([r]).dtype == "float32x4"


# -- buffers and layouts ---------------------------------------------------------------------
def test_buffer_indexing_and_regions() -> None:
    A = Buffer("A", (64, 128), "float16")
    k = Var("k")
    load = A[1, k]
    assert isinstance(load, ir.BufferLoad) and load.dtype == "float16"
    region = A[0:64, k * 32:k * 32 + 32]
    assert isinstance(region, ir.BufferRegion)
    assert isinstance(region.region[1].extent, IntImm) and region.region[1].extent.value == 32
    row = A[1]  # fewer indices than dimensions: a region (the seed's form)
    assert isinstance(row, ir.BufferRegion)
    assert [(r.min.value, r.extent.value) for r in row.region] == [(1, 1), (0, 128)]
    with pytest.raises(IndexError, match="has 2 dimension"):
        A[1, 2, 3]


def test_tile_layout_apply_and_sizes() -> None:
    lay = ir.TileLayout(ir.S[(8, 16):(16, 1)])
    coords = lay.apply([2, 3], [8, 16])
    assert int(coords["m"]) == 2 * 16 + 3
    assert int(lay.size()) == 128 and int(lay.span("m")) == 128
    lanes = ir.TileLayout(ir.S[(4, 32):(1 @ ir.Axis.get("warpid"), 1 @ ir.Axis.get("laneid"))])
    c = lanes.apply([1, 5], [4, 32])
    assert int(c["warpid"]) == 1 and int(c["laneid"]) == 5
    assert not lanes.is_memory_only()


def test_axes_are_open_to_backends() -> None:
    with pytest.raises(KeyError, match="unknown layout axis 'Qx'"):
        ir.Axis.get("Qx")
    ax = ir.Axis.register("Qx_test", "memory")
    assert ir.Axis.get("Qx_test") is ax
    ir.AXES.unregister("Qx_test")


# -- op registry -----------------------------------------------------------------------------
def test_op_categories_and_printer_names() -> None:
    exp = Op.get("tirx.exp")
    assert exp.category is OpCategory.BUILTIN and exp.printer_name == "exp"
    copy = Op.get("tirx.tile.copy")
    assert copy.category is OpCategory.TILE_PRIMITIVE
    op = Op.register("tirx.unitns.thing", category="device_intrin", namespace="unitns",
                     printer_name="unitns.group.thing", dtype="int32")
    try:
        assert op.namespace == "unitns" and op.printer_name == "unitns.group.thing"
        call = op(1, "x")
        assert call.dtype == "int32" and isinstance(call.args[1], ir.StringImm)
    finally:
        ir.OP_REGISTRY.unregister("tirx.unitns.thing")


def test_op_registration_rules() -> None:
    with pytest.raises(ValueError, match="must be named 'tirx.tile.<op>'"):
        Op.register("tirx.bad_tile", category="tile_primitive")
    with pytest.raises(ValueError, match="needs its script namespace"):
        Op.register("tirx.bad_intrin", category="device_intrin")
    with pytest.raises(RegistrationConflict, match="registered twice"):
        Op.register("tirx.exp")
    with pytest.raises(KeyError, match="no op named 'tirx.nope'"):
        Op.get("tirx.nope")


def test_every_core_op_has_exactly_one_category() -> None:
    for op in Op.list("tirx."):
        assert isinstance(op.category, OpCategory)
        if op.category is OpCategory.TILE_PRIMITIVE:
            assert op.name.startswith("tirx.tile.") and op.namespace is None


# -- structural equality ---------------------------------------------------------------------
def _loop(var_name: str, value: float) -> tuple[For, Buffer]:
    A = Buffer("A", (10,), "float32")
    i = Var(var_name)
    return For(i, 0, 10, ForKind.SERIAL, BufferStore(A, A[i] + value, [i])), A


def _func(var_name: str, buf_name: str, value: float) -> PrimFunc:
    a = Var(buf_name, "handle")
    A = Buffer(buf_name, (10,), "float32")
    i = Var(var_name)
    body = For(i, 0, 10, ForKind.SERIAL, BufferStore(A, A[i] + value, [i]))
    return PrimFunc([a], body, {a: A})


def test_structural_equal_up_to_renaming() -> None:
    f1, f2 = _func("i", "A", 1.0), _func("j", "B", 1.0)
    assert ir.structural_equal(f1, f2)
    assert ir.structural_hash(f1) == ir.structural_hash(f2)
    assert not ir.structural_equal(f1, _func("i", "A", 2.0))


def test_free_variables_must_match_unless_mapped() -> None:
    x, y = Var("x"), Var("y")
    assert not ir.structural_equal(x + 1, y + 1)
    assert ir.structural_equal(x + 1, y + 1, map_free_vars=True)
    assert ir.structural_equal(x + 1, x + 1)


def test_assert_structural_equal_says_where() -> None:
    with pytest.raises(ValueError) as info:
        ir.assert_structural_equal(_func("i", "A", 1.0), _func("i", "A", 2.0))
    msg = str(info.value)
    assert "PrimFunc.body.body.value.b.value" in msg and "1.0 against 2.0" in msg


# -- visitor / mutator -----------------------------------------------------------------------
def test_visitor_and_mutator() -> None:
    f = _func("i", "A", 1.0)
    seen: list[str] = []
    ir.post_order_visit(f.body, lambda n: seen.append(type(n).__name__))
    assert seen[-1] == "For" and "BufferStore" in seen

    class Double(ir.Mutator):
        def visit_FloatImm(self, n: ir.FloatImm) -> ir.FloatImm:
            return ir.FloatImm(n.dtype, n.value * 2)

    g = Double().visit(f)
    assert ir.structural_equal(g, _func("i", "A", 2.0))
    assert g is not f and f.body.body.value.b.value == 1.0  # the input is untouched


def test_substitute() -> None:
    x, y = Var("x"), Var("y")
    e = ir.substitute(x * 2 + 1, {x: y + 3})
    assert ir.structural_equal(e, (y + 3) * 2 + 1)


# -- verifier --------------------------------------------------------------------------------
def test_verifier_names_node_and_rule() -> None:
    A = Buffer("A", (4, 4), "float32")
    a = Var("a", "handle")
    i = Var("i")
    bad_extent = For(i, 0, ir.FloatImm("float32", 4.0), ForKind.SERIAL, Evaluate(0))
    errors = ir.verify_errors(PrimFunc([a], bad_extent, {a: A}))
    assert any("loop `i` has a float32 extent" in e for e in errors)
    bad_index = BufferStore(A, ir.const(1.0), [i])
    errors = ir.verify_errors(PrimFunc([a], For(i, 0, 4, ForKind.SERIAL, bad_index), {a: A}))
    assert errors == ["BufferStore to `A` has 1 index but the buffer has 2 dimensions"]
    undefined = PrimFunc([a], BufferStore(A, ir.const(1.0), [Var("q"), 0]), {a: A})
    with pytest.raises(IRVerifyError, match="variable `q` is used before it is defined"):
        ir.verify(undefined)
    wrong_type = PrimFunc([a], BufferStore(A, ir.const(1), [0, 0]), {a: A})
    assert any("stores a int32 value into a float32 buffer" in e for e in ir.verify_errors(wrong_type))


def test_tile_primitive_call_replace() -> None:
    A = Buffer("A", (8,), "float32")
    B = Buffer("B", (8,), "float32")
    call = ir.TilePrimitiveCall("tirx.tile.copy", [A[0:8], B[0:8]], scope="cta")
    assert call.scope == "cta" and call.op_name == "copy"
    warp = call.replace(scope="warp")
    assert warp.scope == "warp" and call.scope == "cta"
    with pytest.raises(TypeError, match=r"Unknown field\(s\) for TilePrimitiveCall.replace: \['bogus'\]"):
        call.replace(bogus=1)
    with pytest.raises(ValueError, match="unknown execution scope"):
        ir.TilePrimitiveCall("tirx.tile.copy", [], scope="grid")
