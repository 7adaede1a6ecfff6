"""``T.metal``: calls build ``tirx.metal.*`` ops; printed forms and print-parse round trips."""

from __future__ import annotations

import metal_helpers  # noqa: F401 - loads the backend
import pytest

from tvm import script
from tvm.ir import Buffer, CallEffect, Var, structural_equal
from tvm.script import tirx as T

HEADER = (
    "@T.prim_func\n"
    'def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):\n'
    '    A_sg = T.alloc_buffer((192,), "float32", scope="metal.simdgroup")\n'
)

# (statement as written, statement as printed)
CASES = [
    ("T.metal.make_filled_simdgroup_matrix(A_sg.data, 0, T.float32(0), 8, 8)",
     "T.metal.make_filled_simdgroup_matrix(A_sg.data, 0, T.float32(0.0), 8, 8)"),
    ("T.metal.make_filled_simdgroup_matrix(A_sg.data, 1, T.float32(2))",
     "T.metal.make_filled_simdgroup_matrix(A_sg.data, 1, T.float32(2.0), 8, 8)"),
    ("T.metal.simdgroup_load(A_sg.data, 1, T.address_of(A[0]), 8)",
     "T.metal.simdgroup_load(A_sg.data, 1, T.address_of(A[0]), 8, 8, 8, T.bool(False))"),
    ("T.metal.simdgroup_load(A_sg.data, 2, T.address_of(A[8]), 16, 8, 8, True)",
     "T.metal.simdgroup_load(A_sg.data, 2, T.address_of(A[8]), 16, 8, 8, T.bool(True))"),
    ("T.metal.simdgroup_store(A_sg.data, 0, T.address_of(B[0]), 8)",
     "T.metal.simdgroup_store(A_sg.data, 0, T.address_of(B[0]), 8, 8, 8, T.bool(False))"),
    ("T.metal.simdgroup_multiply_accumulate(A_sg.data, 0, A_sg.data, 1, A_sg.data, 2, "
     "A_sg.data, 0)",
     "T.metal.simdgroup_multiply_accumulate(A_sg.data, 0, A_sg.data, 1, A_sg.data, 2, "
     "A_sg.data, 0)"),
    ("B[0] = T.metal.simd_shuffle(A[0], 0)", "B[0] = T.metal.simd_shuffle(A[0], 0)"),
    ("B[1] = T.metal.simd_shuffle_up(A[1], 1)", "B[1] = T.metal.simd_shuffle_up(A[1], 1)"),
    ("B[2] = T.metal.simd_shuffle_down(A[2], 4)", "B[2] = T.metal.simd_shuffle_down(A[2], 4)"),
    ("B[3] = T.metal.simd_shuffle_xor(A[3], 16)", "B[3] = T.metal.simd_shuffle_xor(A[3], 16)"),
    ("B[4] = T.metal.simd_sum(A[4]) + T.metal.simd_max(A[5]) - T.metal.simd_min(A[6])",
     "B[4] = T.metal.simd_sum(A[4]) + T.metal.simd_max(A[5]) - T.metal.simd_min(A[6])"),
    ("T.metal.threadgroup_barrier()", 'T.metal.threadgroup_barrier("threadgroup")'),
    ('T.metal.simdgroup_barrier("device")', 'T.metal.simdgroup_barrier("device")'),
]


@pytest.mark.parametrize(("written", "printed"), CASES, ids=[c[0][:40] for c in CASES])
def test_printed_form_and_round_trip(written, printed):
    func = script.from_source(HEADER + "    " + written + "\n")
    text = script.to_script(func)
    assert "    " + printed + "\n" in text
    assert "T.tirx." not in text and "T.call_intrin" not in text
    again = script.from_source(text)
    assert structural_equal(func, again)
    assert script.to_script(again) == text


@pytest.mark.parametrize(("name", "args"), [
    ("simd_shuffle", (0,)), ("simd_shuffle_up", (1,)), ("simd_shuffle_down", (2,)),
])
def test_shuffles_build_canonical_ops(name, args):
    a = Buffer("A", [4], "float16")
    call = getattr(T.metal, name)(a, *args)  # a Buffer stands for its first element
    assert call.op.name == f"tirx.metal.{name}"
    assert str(call.dtype) == "float16"
    assert structural_equal(call.args[0], a[0])
    assert int(call.op.effect) in (1, 3)
    assert call.op.get_attr("global_symbol") == name


def test_matrix_ops_take_the_seed_arguments():
    d = Var("d", "handle")
    call = T.metal.simdgroup_load(d, 0, Var("p", "handle"), 8)
    assert call.op.name == "tirx.metal.simdgroup_load"
    assert [getattr(a, "value", None) for a in call.args[4:]] == [8, 8, 0]
    assert call.op.signature == ("d", "index", "ptr", "stride", "col", "row", "transpose_matrix")
    mma = T.metal.simdgroup_multiply_accumulate(d, 0, d, 1, d, 2, d, 0)
    assert mma.op.signature == ("d", "index_d", "a", "index_a", "b", "index_b", "c", "index_c")
    assert str(mma.dtype) == "handle"
    buf = Buffer("M", [64], "float32", scope="metal.simdgroup")
    fill = T.metal.make_filled_simdgroup_matrix(buf, 0, 1.0)
    assert fill.args[0] is buf.data  # a Buffer stands for its data, as the seed's A.data


def test_bad_memory_scope_is_rejected():
    with pytest.raises(ValueError, match="unknown Metal memory scope 'shared'"):
        T.metal.threadgroup_barrier("shared")


def test_effect_kinds():
    from tvm.ir import Op

    assert Op.get("tirx.metal.simd_shuffle").effect is CallEffect.UPDATE_STATE
