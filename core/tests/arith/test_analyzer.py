"""tvm.arith.Analyzer: bounds, simplification, proofs."""

from __future__ import annotations

import math

import pytest

from tvm.arith import Analyzer, ConstIntBound
from tvm.ir import (
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Range,
    Select,
    Var,
    assert_structural_equal,
    structural_equal,
)
from tvm.ir import expr as E
from tvm.tirx import op


@pytest.fixture
def ana():
    a = Analyzer()
    return a


def _ij(ana, ni=8, nj=4):
    i, j = Var("i"), Var("j")
    ana.bind(i, Range(0, ni))
    ana.bind(j, Range(0, nj))
    return i, j


def test_const_int_bound_of_linear_expressions(ana):
    i, j = _ij(ana)
    assert ana.const_int_bound(i * 4 + j) == ConstIntBound(0, 31)
    assert ana.const_int_bound(i - j) == ConstIntBound(-3, 7)
    assert ana.const_int_bound(i - i) == ConstIntBound(0, 0)  # like terms merge
    assert ana.const_int_bound((i * 4 + j) // 4) == ConstIntBound(0, 7)
    assert ana.const_int_bound(FloorMod(i * 7, 4)) == ConstIntBound(0, 3)
    assert ana.const_int_bound(Min(i, j)) == ConstIntBound(0, 3)
    assert ana.const_int_bound(Max(i, j + 10)) == ConstIntBound(10, 13)
    assert ana.const_int_bound(Select(i < 2, j, i)) == ConstIntBound(0, 7)


def test_unbound_var_has_dtype_range(ana):
    n = Var("n")
    b = ana.const_int_bound(n)
    assert (b.min_value, b.max_value) == (-(2**31), 2**31 - 1)
    u = Var("u", "uint8")
    assert ana.const_int_bound(u) == ConstIntBound(0, 255)
    assert math.isinf(ana.const_int_bound(FloatImm("float32", 1.0)).max_value)


def test_bind_range_with_symbolic_min(ana):
    k, i = Var("k"), Var("i")
    ana.bind(k, Range(0, 4))
    ana.bind(i, Range(k * 8, 8))
    assert ana.const_int_bound(i) == ConstIntBound(0, 31)


def test_bind_to_expression_substitutes(ana):
    i, x = Var("i"), Var("x")
    ana.bind(i, Range(0, 4))
    ana.bind(x, i * 2)
    assert_structural_equal(ana.simplify(x + 1), i * 2 + 1)
    assert ana.const_int_bound(x) == ConstIntBound(0, 6)


def test_simplify_identities(ana):
    x = Var("x")
    assert ana.simplify(x + 0) is x
    assert ana.simplify(0 + x) is x
    assert ana.simplify(x - 0) is x
    assert ana.simplify(x * 1) is x
    assert_structural_equal(ana.simplify(x * 0), IntImm("int32", 0))
    assert_structural_equal(ana.simplify(x - x), IntImm("int32", 0))
    assert_structural_equal(ana.simplify(FloorDiv(x, 1)), x)
    assert_structural_equal(ana.simplify(FloorMod(x, 1)), IntImm("int32", 0))


def test_constant_folding(ana):
    c = IntImm("int32", 7)
    assert ana.simplify(c * 3 + 1).value == 22
    assert ana.simplify(FloorDiv(IntImm("int32", -7), 2)).value == -4
    assert ana.simplify(FloorMod(IntImm("int32", -7), 2)).value == 1
    assert ana.simplify(IntImm("int32", -7) / IntImm("int32", 2)).value == -3  # truncating
    f = ana.simplify(FloatImm("float32", 1.5) * 2.0)
    assert isinstance(f, FloatImm) and f.value == 3.0 and f.dtype == "float32"
    assert ana.simplify(Min(IntImm("int32", 3), 5)).value == 3
    assert ana.simplify(IntImm("int32", 3) < 5).value == 1


def test_folding_does_not_overflow(ana):
    big = IntImm("int32", 2**31 - 1)
    out = ana.simplify(big + 1)
    assert not isinstance(out, IntImm)  # left alone rather than wrapped silently


def test_like_terms_merge(ana):
    i, j = Var("i"), Var("j")
    assert_structural_equal(ana.simplify(i * 4 + j - i * 4), j)
    assert_structural_equal(ana.simplify((i + 1) * 4 - 4), i * 4)
    assert_structural_equal(ana.simplify(i + i), i * 2)


def test_floordiv_floormod_with_known_bounds(ana):
    i, j = _ij(ana)
    assert ana.simplify((i * 4 + j) // 4) is i
    assert ana.simplify((i * 4 + j) % 4) is j
    assert_structural_equal(ana.simplify((i * 4 + j + 4) // 4), i + 1)
    assert ana.simplify(j // 4).value == 0
    assert ana.simplify(j % 4) is j
    assert_structural_equal(ana.simplify(FloorDiv(FloorDiv(i, 2), 2)), FloorDiv(i, 4))


def test_floordiv_without_bounds_splits_divisible_part(ana):
    i, x = Var("i"), Var("x")
    assert_structural_equal(ana.simplify((i * 8 + x) // 4), i * 2 + FloorDiv(x, 4))
    assert_structural_equal(ana.simplify((i * 8 + x) % 4), FloorMod(x, 4))


def test_can_prove(ana):
    i, j = _ij(ana)
    assert ana.can_prove(j < 4)
    assert ana.can_prove(i * 4 + j < 32)
    assert not ana.can_prove(i * 4 + j < 31)
    assert ana.can_prove(i >= 0)
    assert ana.can_prove((i < 8) & (j <= 3))
    assert not ana.can_prove(i < Var("n"))
    assert ana.can_prove(i - i == 0)


def test_can_prove_equal(ana):
    i, _ = _ij(ana)
    assert ana.can_prove_equal(i * 2 + i, i * 3)
    assert not ana.can_prove_equal(i * 2, i * 3)


def test_comparison_decided_false(ana):
    i, _ = _ij(ana)
    assert ana.simplify(i >= 8).value == 0
    assert ana.simplify(i == 9).value == 0
    assert ana.simplify(i != 9).value == 1


def test_min_max_by_bounds(ana):
    i, j = _ij(ana)
    assert ana.simplify(Min(i, 100)) is i
    assert ana.simplify(Max(j, 3)).value == 3
    assert ana.simplify(Min(i, i)) is i


def test_select_and_logic(ana):
    x, y = Var("x"), Var("y")
    t = IntImm("bool", 1)
    assert ana.simplify(Select(t, x, y)) is x
    assert ana.simplify(Select(x < y, x, x)) is x
    assert ana.simplify((x < y) & t).__class__.__name__ == "LT"
    assert ana.simplify((x < y) | t).value == 1


def test_constraint_scope(ana):
    i = Var("i")
    ana.bind(i, Range(0, 100))
    with ana.constraint_scope(i < 10):
        assert ana.can_prove(i < 10)
        assert ana.simplify(i // 16).value == 0
    assert not ana.can_prove(i < 10)


def test_cast_folding(ana):
    from tvm.ir import Cast

    assert_structural_equal(ana.simplify(Cast("float32", IntImm("int32", 3))), FloatImm("float32", 3.0))
    assert ana.simplify(Cast("int32", FloatImm("float32", 3.7))).value == 3
    x = Var("x")
    assert ana.simplify(Cast("int32", x)) is x


def test_untouched_expression_keeps_identity(ana):
    x, y = Var("x"), Var("y")
    e = x * y
    assert ana.simplify(e) is e
    assert structural_equal(ana.simplify(x + y), x + y)


def test_let_keeps_its_variable_and_uses_its_bound(ana):
    from tvm.ir import Let

    i, x = Var("i"), Var("x")
    ana.bind(i, Range(0, 4))
    e = ana.simplify(Let(x, i * 2, x // 8))
    assert isinstance(e, Let) and e.var is x
    assert e.body.value == 0  # x lies in [0, 6]
    assert ana.simplify(Let(x, 3, x + 1)).value == 4  # a constant let is inlined


# -- the bit spellings of floordiv and floormod (an XOR swizzle's index arithmetic) -------------


def _row_word(ana):
    """``x`` unbounded, ``row`` in [0, 128), ``y`` (a word in a 32-word row) in [0, 32)."""
    x, row, y = Var("x"), Var("row"), Var("y")
    ana.bind(row, Range(0, 128))
    ana.bind(y, Range(0, 32))
    return x, row, y


def test_shift_right_by_k_is_floordiv_by_2_to_the_k_when_exact(ana):
    x, row, y = _row_word(ana)
    assert ana.simplify((x * 32 + y) >> 5) is x
    assert_structural_equal(ana.simplify((x * 32 + y + 32) >> 5), x + 1)
    assert_structural_equal(ana.simplify((x * 4096 + row * 32 + y) >> 5), x * 128 + row)
    assert ana.simplify(y >> 5).value == 0
    # a remainder the bounds do not settle: the shift stays (no floordiv in its place)
    z = Var("z")
    kept = ana.simplify((x * 32 + z) >> 5)
    assert kept.op.name == "tirx.shift_right"


def test_low_bit_mask_is_floormod_when_exact(ana):
    x, row, y = _row_word(ana)
    assert ana.simplify((x * 32 + y) & 31) is y
    # the 128-byte swizzle's XOR operand, bits 5-7 of a word offset: the row's low three bits
    r = Var("r")
    ana.bind(r, Range(0, 8))
    assert ana.simplify((((x * 8 + r) * 32 + y) >> 5) & 7) is r
    # a floormod inside by a multiple of the mask's modulus drops out
    assert ana.simplify(FloorMod(x * 8 + r, 128) & 7) is r
    assert ana.simplify((FloorMod(x * 64, 128) + row * 128) & 7).value == 0
    kept = ana.simplify(row & 7)  # row in [0, 128): not settled
    assert kept.op.name == "tirx.bitwise_and"
    assert ana.simplify(op.bitwise_and(x * 32 + y, IntImm("int32", 6))).op.name == \
        "tirx.bitwise_and"  # not a mask of the low bits


def test_bit_operations_fold_immediates_and_zeros(ana):
    x = Var("x")
    zero = IntImm("int32", 0)
    assert ana.simplify(op.shift_left(zero, IntImm("int32", 3))).value == 0
    assert ana.simplify(op.shift_left(IntImm("int32", 3), 2)).value == 12
    assert ana.simplify(op.bitwise_xor(x, zero)) is x
    assert ana.simplify(op.bitwise_xor(zero, x)) is x
    assert ana.simplify(op.bitwise_or(zero, x)) is x
    assert ana.simplify(op.shift_left(x, zero)) is x
    assert ana.simplify(op.shift_right(x, zero)) is x
    # a shift past the width is left alone
    assert ana.simplify(op.shift_right(x, IntImm("int32", 40))).op.name == "tirx.shift_right"


def test_bit_rules_agree_with_python_on_every_value(ana):
    """The rewritten forms equal the bitwise ones (Python's >> and & are floor ops on ints)."""
    i, j = Var("i"), Var("j")
    ana.bind(i, Range(-3, 6))
    ana.bind(j, Range(0, 32))
    for expr, want in (((i * 32 + j) >> 5, lambda a, b: (a * 32 + b) >> 5),
                       ((i * 32 + j) & 31, lambda a, b: (a * 32 + b) & 31),
                       (((i * 256 + j * 8) >> 5) & 7, lambda a, b: ((a * 256 + b * 8) >> 5) & 7)):
        got = ana.simplify(expr)
        for a in range(-3, 6):
            for b in range(32):
                value = Analyzer().simplify(
                    E.Let(i, IntImm("int32", a), E.Let(j, IntImm("int32", b), got)))
                assert value.value == want(a, b), (expr, got, a, b)
