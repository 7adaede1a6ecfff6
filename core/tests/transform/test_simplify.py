"""StmtSimplify: folding inside statements, dead branches, trivial loops, sequences."""

from __future__ import annotations

from tvm import ir
from tvm.ir import (
    AssertStmt,
    Buffer,
    BufferLoad,
    BufferStore,
    Evaluate,
    FloatImm,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    PrimFunc,
    SeqStmt,
    Var,
    assert_structural_equal,
)
from tvm.tirx.transform import Simplify, StmtSimplify


def _run(body, *bufs, params=()):
    func = PrimFunc([*(b.data for b in bufs), *params], body, {b.data: b for b in bufs}, name="f")
    return StmtSimplify()(func)["f"]


def test_index_simplified_with_loop_bounds():
    A = Buffer("A", [32], "float32")
    i, j = Var("i"), Var("j")
    store = BufferStore(A, FloatImm("float32", 0.0), [((i * 4 + j) // 4) * 4 + (i * 4 + j) % 4])
    body = For(i, 0, 8, ForKind.SERIAL, For(j, 0, 4, ForKind.SERIAL, store))
    out = _run(body, A)
    inner = out.body.body.body
    assert_structural_equal(inner.indices[0], i * 4 + j)


def test_dead_if_branches():
    A = Buffer("A", [8], "int32")
    i = Var("i")
    keep = BufferStore(A, 1, [i])
    drop = BufferStore(A, 2, [i])
    body = For(i, 0, 8, ForKind.SERIAL, IfThenElse(i < 8, keep, drop))
    out = _run(body, A)
    assert out.body.body is keep
    body2 = For(i, 0, 8, ForKind.SERIAL, IfThenElse(i >= 8, keep, drop))
    assert _run(body2, A).body.body is drop
    body3 = For(i, 0, 8, ForKind.SERIAL, IfThenElse(i >= 8, keep))
    assert isinstance(_run(body3, A).body, Evaluate)  # the whole loop is gone


def test_if_condition_narrows_the_branch():
    A = Buffer("A", [8], "int32")
    i = Var("i")
    inner = IfThenElse(i < 20, BufferStore(A, 1, [i // 16]))
    body = For(i, 0, 100, ForKind.SERIAL, IfThenElse(i < 10, inner))
    out = _run(body, A)
    then = out.body.body.then_case
    assert isinstance(then, BufferStore)
    assert then.indices[0].value == 0


def test_loops_of_extent_zero_and_one():
    A = Buffer("A", [8], "int32")
    i, k = Var("i"), Var("k")
    one = For(k, 3, 1, ForKind.SERIAL, BufferStore(A, k, [k]))
    out = _run(one, A)
    assert isinstance(out, PrimFunc) and isinstance(out.body, BufferStore)
    assert out.body.indices[0].value == 3 and out.body.value.value == 3
    zero = SeqStmt([For(i, 0, 0, ForKind.SERIAL, BufferStore(A, 0, [i])), BufferStore(A, 5, [0])])
    out = _run(zero, A)
    assert isinstance(out.body, BufferStore) and out.body.value.value == 5


def test_thread_loop_of_extent_one_stays():
    A = Buffer("A", [8], "int32")
    tx = Var("tx")
    body = For(tx, 0, 1, ForKind.THREAD_BINDING, BufferStore(A, 0, [tx]), thread_tag="threadIdx.x")
    out = _run(body, A)
    assert isinstance(out.body, For) and out.body.thread_tag == "threadIdx.x"


def test_nested_seq_flattened_and_noops_dropped():
    A = Buffer("A", [8], "int32")
    s = [BufferStore(A, k, [k]) for k in range(3)]
    body = SeqStmt([s[0], SeqStmt([Evaluate(0), s[1], SeqStmt([s[2]])]), Evaluate(IntImm("int32", 7))])
    out = _run(body, A)
    assert isinstance(out.body, SeqStmt) and out.body.seq == s


def test_seq_with_declarations_keeps_its_scope():
    A = Buffer("A", [8], "int32")
    B = Buffer("B", [4], "int32", scope="local")
    inner = SeqStmt([ir.AllocBuffer(B), BufferStore(B, 1, [0])])
    tail = BufferStore(A, 2, [0])
    out = _run(SeqStmt([inner, tail]), A)
    assert len(out.body.seq) == 2 and out.body.seq[0] is inner


def test_let_of_constant_is_inlined_and_assert_removed():
    A = Buffer("A", [8], "int32")
    x = Var("x")
    body = LetStmt(x, 4, SeqStmt([AssertStmt(x < 5, "x too big"), BufferStore(A, x + 1, [x - 4])]))
    out = _run(body, A)
    assert isinstance(out.body, BufferStore)
    assert out.body.value.value == 5 and out.body.indices[0].value == 0


def test_symbolic_shapes_are_non_negative():
    n = Var("n")
    A = Buffer("A", [n], "float32")
    i = Var("i")
    body = For(i, 0, n, ForKind.SERIAL, IfThenElse(n >= 0, BufferStore(A, FloatImm("float32", 1.0), [i])))
    out = _run(body, A)
    assert isinstance(out.body.body, BufferStore)


def test_unchanged_function_is_returned_as_is():
    A = Buffer("A", [8], "float32")
    i = Var("i")
    body = For(i, 0, 8, ForKind.SERIAL, BufferStore(A, BufferLoad(A, [i]) * 2.0, [i]))
    func = PrimFunc([A.data], body, {A.data: A}, name="f")
    assert StmtSimplify()(func)["f"] is func


def test_simplify_alias():
    assert Simplify is StmtSimplify
    assert str(Simplify()) == "StmtSimplify()"
