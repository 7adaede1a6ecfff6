"""SBlock / SBlockRealize as plain nodes, the seed's nested DeclBuffer, ``SeqStmt.body`` and
``T.buffer``: what the seed's functor tests build by hand."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm import tirx
from tvm.ir import Range
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.stmt_functor import StmtExprMutator, StmtExprVisitor, StmtMutator, StmtVisitor


def _realize(name: str = "k") -> tirx.SBlockRealize:
    k = tirx.Var(name, "int32")
    W = T.buffer((6,), "float32")
    body = tirx.BufferStore(W, tirx.FloatImm("float32", 2.5), [k])
    block = tirx.SBlock([tirx.IterVar(Range(1, 5), k, 0)], [], [W[1:6]], "fill", body)
    return tirx.SBlockRealize([tirx.IntImm("int32", 4)], k < 100, block)


def test_sblock_prints_the_seed_form() -> None:
    text = _realize().script()
    assert text.splitlines() == [
        'with T.sblock("fill"):',
        "    k = T.axis.spatial(1, 6, 4)",
        "    T.where(k < 100)",
        "    T.reads()",
        "    T.writes(buffer[1:6])",
        "    buffer[k] = T.float32(2.5)",
    ]


def test_sblock_equality_matches_axes_by_definition() -> None:
    a, b = _realize("k"), _realize("m")
    tvm.ir.assert_structural_equal(a, b, map_free_vars=True)
    assert tvm.ir.structural_hash(a, map_free_vars=True) == \
        tvm.ir.structural_hash(b, map_free_vars=True)
    c = _realize("k")
    c = tirx.SBlockRealize([tirx.IntImm("int32", 3)], c.predicate, c.block)
    with pytest.raises(ValueError, match="iter_values"):
        tvm.ir.assert_structural_equal(a, c, map_free_vars=True)


def test_sblock_checks_its_arguments() -> None:
    k = tirx.Var("k", "int32")
    ev = tirx.Evaluate(k)
    with pytest.raises(TypeError, match="every entry of iter_vars must be a IterVar, got Var"):
        tirx.SBlock([k], [], [], "b", ev)
    with pytest.raises(ValueError, match=r"iteration axes \['k'\] have no domain"):
        tirx.SBlock([tirx.IterVar(None, k)], [], [], "b", ev)
    with pytest.raises(TypeError, match="match_buffers are not supported"):
        tirx.SBlock([], [], [], "b", ev, match_buffers=[object()])
    block = tirx.SBlock([tirx.IterVar(Range(0, 4), k)], [], [], "b", ev)
    with pytest.raises(ValueError, match=r"0 values for the 1 iteration axes of block 'b'"):
        tirx.SBlockRealize([], True, block)
    with pytest.raises(TypeError, match="the predicate must be a bool, got a int32 value"):
        tirx.SBlockRealize([1], k, block)


def test_functors_walk_children_in_the_seed_order() -> None:
    class Log(StmtVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []

        def visit_expr(self, expr):  # type: ignore[no-untyped-def]
            self.seen.append(type(expr).__name__)

        def visit_block_(self, op):  # type: ignore[no-untyped-def]
            self.seen.append(f"block {op.name_hint}")
            super().visit_block_(op)

    log = Log()
    log.visit_stmt(_realize())
    # values, predicate, then the block: the axis domain, the write region, the store
    # (its value, then its index); the axis variable and the store's buffer are not visited
    assert log.seen == ["IntImm", "LT", "block fill", "IntImm", "IntImm", "IntImm", "IntImm",
                        "FloatImm", "Var"]

    class Doubler(StmtExprMutator):
        def visit_int_imm_(self, op):  # type: ignore[no-untyped-def]
            return tirx.IntImm(op.dtype, op.value * 2)

    out = Doubler().visit_stmt(_realize())
    assert [int(v) for v in out.iter_values] == [8]
    assert int(out.block.iter_vars[0].dom.extent) == 10
    assert out.block.iter_vars[0].var is _realize_var(out)
    same = StmtMutator().visit_stmt(r := _realize())
    assert same is r  # nothing changed: the very node comes back


def _realize_var(r: tirx.SBlockRealize) -> tirx.Var:
    return r.block.body.indices[0]


def test_nested_decl_buffer_is_flattened_by_the_function_and_runs() -> None:
    src = tirx.Var("src", "handle")
    dst = tirx.Var("dst", "handle")
    S = tvm.ir.decl_buffer((8,), "int32", "S")
    D = tvm.ir.decl_buffer((8,), "int32", "D")
    view = T.buffer((4, 2), "int32", data=S.data)
    i = tirx.Var("i", "int32")
    loop = tirx.For(i, 0, 8, tirx.ForKind.SERIAL,
                    tirx.BufferStore(D, view[i // 2, i % 2] * 3, [i]))
    nested = tirx.DeclBuffer(view, loop)
    f = tirx.PrimFunc([src, dst], nested, {src: S, dst: D}, name="triple")
    assert isinstance(f.body, tirx.SeqStmt) and f.body.seq[0].body is None
    assert f.body.seq[1] is loop
    a = np.arange(8, dtype="int32")
    out = np.zeros(8, "int32")
    tvm.compile(f, target="c")(a, out)
    np.testing.assert_array_equal(out, a * 3)
    with pytest.raises(TypeError, match="DeclBuffer: expected a Buffer to declare, got BufferSpec"):
        tirx.DeclBuffer(T.Buffer((4,), "int32"))


@T.prim_func
def _entry(A: T.Buffer((8,), "float32")):
    T.device_entry()
    Tx.fill(A, T.float32(0.5))


def test_seq_body_is_the_rest_after_a_scope_statement() -> None:
    rest = _entry.body.body
    assert isinstance(rest, tirx.TilePrimitiveCall) and rest.op_name == "fill"
    plain = tirx.SeqStmt([tirx.Evaluate(1), tirx.Evaluate(2)])
    with pytest.raises(AttributeError, match="starts with Evaluate, not with T.device_entry"):
        _ = plain.body
    assert not hasattr(plain, "body")

    class Vars(StmtExprVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.names: list[str] = []

        def visit_var_(self, op):  # type: ignore[no-untyped-def]
            self.names.append(op.name)

    n = tirx.Var("n", "int32")
    call = rest.replace(config={"cta_mask": n * 2})
    v = Vars()
    v.visit_stmt(call)
    assert v.names == ["n"]


def test_printed_sblock_does_not_parse_back_and_says_why() -> None:
    text = "@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n" + "".join(
        "    " + line + "\n" for line in _realize().script().splitlines())
    with pytest.raises(Exception, match="T.sblock is schedulable TIR, which scripts here do "
                                        "not write"):
        tvm.script.from_source(text)
