"""tvm.tirx.stmt_functor: the seed's visitor/mutator names over our IR, and the seed's module
paths tvm.tirx.stmt / expr / function / buffer and tvm.ir.base."""

from __future__ import annotations

import pytest

import tvm
from tvm.ir.base import assert_structural_equal
from tvm.script import tirx as T
from tvm.tirx import stmt_functor as F
from tvm.tirx.expr import Add, IntImm, Mul, Var
from tvm.tirx.function import PrimFunc
from tvm.tirx.stmt import AttrStmt, BufferRegion, BufferStore, For


@T.prim_func
def _kernel(A: T.Buffer((16,), "float32")):
    for i in range(4):
        for j in range(4):
            A[i * 4 + j] = A[i * 4 + j] + T.float32(1)


def test_seed_module_paths_are_the_ir_classes():
    assert isinstance(_kernel, PrimFunc)
    assert BufferRegion is tvm.ir.BufferRegion and For is tvm.ir.For
    assert tvm.tirx.Add is Add and tvm.tirx.Mul is Mul and tvm.tirx.stmt_functor is F
    from tvm.tirx.buffer import decl_buffer

    assert int(decl_buffer((4,), "int32").shape[0]) == 4


def test_visitor_dispatches_seed_names_and_super_goes_on():
    class Count(F.StmtExprVisitor):
        def __init__(self):
            super().__init__()
            self.extents, self.stores, self.adds = [], 0, 0

        def visit_for_(self, op):
            self.extents.append(int(op.extent))
            super().visit_for_(op)

        def visit_buffer_store_(self, op):
            self.stores += 1
            super().visit_buffer_store_(op)

        def visit_add_(self, op):
            self.adds += 1
            super().visit_add_(op)

    v = Count()
    v.visit_stmt(_kernel.body)
    # i * 4 + j twice, plus the load + 1
    assert v.extents == [4, 4] and v.stores == 1 and v.adds == 3

    class StmtsOnly(F.StmtVisitor):
        def __init__(self):
            super().__init__()
            self.adds = 0

        def visit_add_(self, op):
            self.adds += 1

    s = StmtsOnly()
    s.visit_stmt(_kernel.body)
    assert s.adds == 0  # a StmtVisitor does not enter expressions


def test_mutator_rebuilds_from_the_overridden_nodes():
    class TimesTwo(F.StmtExprMutator):
        def visit_int_imm_(self, op):
            return IntImm(op.dtype, int(op.value) * 2) if int(op.value) == 4 else op

    body = TimesTwo().visit_stmt(_kernel.body)
    text = tvm.ir.PrimFunc(_kernel.params, body, buffer_map=_kernel.buffer_map).script()
    assert "A[i * 8 + j] = A[i * 8 + j]" in text and "T.grid(8, 8)" in text
    assert "i * 4" in _kernel.script()  # the input is unchanged


def test_ir_transform_preorder_postorder_and_only_enable():
    stores: list[str] = []

    def post(node):
        if isinstance(node, For):
            return node.body  # unwrap every loop
        stores.append(type(node).__name__)
        return None

    out = F.ir_transform(_kernel.body, None, post, only_enable=["tirx.For", "tir.BufferStore"])
    assert isinstance(out, BufferStore) and stores == ["BufferStore"]
    seen = []
    kept = F.ir_transform(_kernel.body, lambda n: seen.append(type(n).__name__) or n, None)
    assert kept is _kernel.body and seen == ["For"]  # preorder replaced the root: no descent
    assert_structural_equal(F.substitute(Var("x", "int32") + 1, {}), Var("y", "int32") + 1,
                            map_free_vars=True)
    found: list[str] = []
    F.post_order_visit(_kernel.body, lambda n: found.append(type(n).__name__))
    assert found[-1] == "For" and "BufferStore" in found
    with pytest.raises(AssertionError):
        assert isinstance(out, AttrStmt)


def test_verify_tirx_well_formed_raises_on_a_broken_rule():
    from tvm.error import IRVerifyError
    from tvm.tirx.analysis import verify_tirx_well_formed

    assert verify_tirx_well_formed(_kernel) is True
    i = Var("i", "int32")
    bad = tvm.ir.PrimFunc([], tvm.ir.Evaluate(i + 1))  # i is never defined
    with pytest.raises(IRVerifyError, match="IR verification failed"):
        verify_tirx_well_formed(bad, device_func=True)


def test_seed_op_classes_build_tile_primitive_calls():
    from tvm.tirx.operator.tile_primitive import ops

    A = tvm.ir.decl_buffer((8, 8), "float32", "A")
    S = tvm.ir.decl_buffer((8, 8), "float32", "S", scope="shared")
    call = ops.CopyAsync(S[0:8, 0:8], A[0:8, 0:8], config={"cta_group": 1})
    assert call.op.name == "tirx.tile.copy_async" and call.config == {"cta_group": 1}
    assert ops.CopyAsync.__name__ == "CopyAsync"
    assert ops.Fill(S[0:8, 0:8], 1.0).op.name == "tirx.tile.fill"
    with pytest.raises(AttributeError, match="has no attribute 'CopyAsinc'"):
        ops.CopyAsinc  # noqa: B018


def test_shape_tuple():
    from tvm.runtime import ShapeTuple

    assert ShapeTuple([2, 3]) == (2, 3) and ShapeTuple(4) == (4,)
    with pytest.raises(TypeError, match="a dimension must be an int, got 2.5"):
        ShapeTuple([2.5])


def test_show_prints_the_script(capsys):
    _kernel.show()
    tvm.IRModule({"main": _kernel}).show()
    out = capsys.readouterr().out
    assert out.startswith(_kernel.script()) and "@I.ir_module" in out


def test_tile_primitive_call_takes_the_seed_constructor_form():
    from tvm.ir import Op, TilePrimitiveCall

    A = tvm.ir.decl_buffer((4,), "float32", "A")
    seed_form = TilePrimitiveCall(A[0:4], 1.0, op=Op.get("tirx.tile.fill"), workspace={},
                                  config={})
    ours = TilePrimitiveCall("tirx.tile.fill", [A[0:4], 1.0])
    assert_structural_equal(seed_form, ours)
    assert TilePrimitiveCall(op="tirx.tile.fill", args=[A[0:4], 1.0], scope="cta").scope == "cta"
    with pytest.raises(TypeError, match=r"TilePrimitiveCall\(op, args, ...\) or "
                                        r"TilePrimitiveCall\(\*args, op=op, ...\)"):
        TilePrimitiveCall("tirx.tile.fill")
    with pytest.raises(TypeError, match="positionally or as args=, not both"):
        TilePrimitiveCall(A[0:4], op="tirx.tile.fill", args=[A[0:4], 1.0])


def test_seed_op_attributes_and_scope_names():
    from tvm.ir import Op, TilePrimitiveCall
    from tvm.tirx.exec_scope import ExecScope

    assert Op.get("tirx.tile.copy").get_attr("TIRxOpCategory") == "tile_primitive"
    assert Op.get("tirx.tile.copy").get_attr("TDeviceIntrinsicNamespace") is None
    assert Op.get("tirx.sqrt").get_attr("TIRxOpCategory") == "builtin"
    assert "tirx.tile.copy" in Op.list_op_names()
    A = tvm.ir.decl_buffer((4,), "float32", "A")
    call = TilePrimitiveCall("tirx.tile.fill", [A[0:4], 1.0], scope="warpgroup")
    assert isinstance(call.scope, ExecScope) and call.scope.name == "warpgroup"
    assert call.scope == "warpgroup" and call.scope.kind == 4
