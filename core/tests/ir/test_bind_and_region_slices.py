"""``Bind`` (the seed's flat let) and sub-regions of a ``BufferRegion``."""

from __future__ import annotations

import pytest

import tvm
from tvm import tirx
from tvm.ir import BufferRegion, Evaluate, LetStmt, PrimFunc, SeqStmt, Var, decl_buffer
from tvm.tirx.stmt_functor import StmtExprVisitor


def test_bind_in_a_sequence_is_visited_as_bind() -> None:
    n = Var("n", "int32")
    stmt = tirx.SeqStmt([tirx.Bind(n, 7), Evaluate(n * 3)])
    seen: list[str] = []

    class Log(StmtExprVisitor):
        def visit_bind_(self, op):  # type: ignore[no-untyped-def]
            seen.append(f"bind {op.var.name}={op.value.value}")

        def visit_evaluate_(self, op):  # type: ignore[no-untyped-def]
            seen.append("evaluate")
            super().visit_evaluate_(op)

    Log().visit_stmt(stmt)
    assert seen == ["bind n=7", "evaluate"]


def test_prim_func_folds_binds_into_lets_over_the_rest() -> None:
    A = decl_buffer((4,), "int32", name="A")
    a = Var("A", "handle")
    n, m = Var("n", "int32"), Var("m", "int32")
    store = tvm.ir.BufferStore(A, n + m, [0])
    body = SeqStmt([tirx.Bind(n, 5), tirx.Bind(m, n * 2), store])
    f = PrimFunc([a], body, {a: A}, name="f")
    assert isinstance(f.body, LetStmt) and f.body.var is n
    inner = f.body.body
    assert isinstance(inner, LetStmt) and inner.var is m and inner.body is store
    # the folded function runs on the host: A[0] = 5 + 10
    import numpy as np

    out = np.zeros(4, "int32")
    tvm.compile(f, target="c")(out)
    assert out[0] == 15


def test_bind_needs_a_var() -> None:
    with pytest.raises(TypeError, match="expected a Var to bind, got IntImm"):
        tirx.Bind(tvm.ir.IntImm("int32", 1), 2)


def test_region_slices_are_relative_to_the_region() -> None:
    buf = decl_buffer((96, 48), "float32", name="W")
    region = buf[16:80, 8:40]
    sub = region[4:20, 0:8]
    assert isinstance(sub, BufferRegion) and sub.buffer is buf
    assert [(int(r.min), int(r.extent)) for r in sub.region] == [(20, 16), (8, 8)]
    row = region[3]  # an integer keeps one element; the other dimension stays whole
    assert [(int(r.min), int(r.extent)) for r in row.region] == [(19, 1), (8, 32)]
    tail = region[60:, :]
    assert [(int(r.min), int(r.extent)) for r in tail.region] == [(76, 4), (8, 32)]


def test_region_slice_outside_the_region_is_an_error() -> None:
    region = decl_buffer((96, 48), "float32", name="W")[16:80, 8:40]
    with pytest.raises(IndexError, match=r"region of W: \[0:40\] in dimension 1 is outside the "
                                         r"region's extent 32"):
        region[:, 0:40]
    with pytest.raises(IndexError, match="has 2 dimension"):
        region[0:1, 0:1, 0:1]
