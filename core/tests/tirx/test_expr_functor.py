"""tvm.tirx.expr_functor: the seed's expression visitor and mutator (per-node ``visit_<name>_``
methods) over the one dispatch of tvm.tirx.stmt_functor, and the expression nodes the seed's
module has that ours gained with it (Shuffle, ProducerLoad, Reduce, CommReducer, IterVar)."""

from __future__ import annotations

import pytest

import tvm
from tvm import tirx
from tvm.ir import Range, structural_equal
from tvm.script import tirx as T
from tvm.tirx import expr_functor, stmt_functor
from tvm.tirx.expr import (
    Broadcast,
    Cast,
    CommReducer,
    FloatImm,
    IntImm,
    IterVar,
    Let,
    ProducerLoad,
    Ramp,
    Reduce,
    Select,
    Shuffle,
    SizeVar,
    Var,
)
from tvm.tirx.expr_functor import ExprMutator, ExprVisitor


class _Tensor:
    """The least a producer needs: a name, a dtype and a shape."""

    def __init__(self, name: str, dtype: str, shape: tuple[int, ...]) -> None:
        self.name, self.dtype, self.shape = name, dtype, shape


class _Leaves(ExprVisitor):
    """Records every variable (by name) and integer immediate (by value), in visiting order."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[object] = []

    def visit_var_(self, op):
        self.seen.append(op.name)

    def visit_int_imm_(self, op):
        self.seen.append(op.value)


def _sum_reducer(dtype: str = "float32", names: str = "ab") -> CommReducer:
    a, b = Var(names[0], dtype), Var(names[1], dtype)
    return CommReducer([a], [b], [a + b], [FloatImm(dtype, 0.0)])


def test_the_seed_module_path_holds_the_stmt_functor_classes():
    assert expr_functor.ExprVisitor is stmt_functor.ExprVisitor
    assert expr_functor.ExprMutator is stmt_functor.ExprMutator
    assert tvm.tirx.expr_functor is expr_functor
    assert tirx.Shuffle is Shuffle and tirx.Reduce is Reduce and tirx.ProducerLoad is ProducerLoad


def test_visitor_walks_children_in_field_order():
    n, m = Var("n"), Var("m")
    e = Select(n < m, Let(Var("t"), n * 7, Var("t") + 3), Cast("int32", m) // 5)
    v = _Leaves()
    v.visit_expr(e)
    # condition, then the let (its variable, value, body), then the false branch
    assert v.seen == ["n", "m", "t", "n", 7, "t", 3, "m", 5]


def test_visitor_enters_shuffle_producer_load_and_reduce():
    n = Var("n")
    x = Var("x", "float32x4")
    tensor = _Tensor("P", "float32", (16, 16))
    v = _Leaves()
    v.visit_expr(Shuffle([x, x], [n, 6]))
    v.visit_expr(ProducerLoad(tensor, [n + 1, 2]))
    assert v.seen == ["x", "x", "n", 6, "n", 1, 2]

    k = IterVar(Range(0, 16), "k", 2)
    red = Reduce(_sum_reducer(), [ProducerLoad(tensor, [n, k.var])], [k], n < 9, 0)
    v = _Leaves()
    v.visit_expr(red)
    # the axes (their domain, then their variable) before the source, then the condition
    assert [s for s in v.seen if s in ("n", "k", 0, 16, 9)] == [0, 16, "k", "n", "k", "n", 9]


def test_lane_counts_are_visited_as_int32_immediates():
    seen: list[IntImm] = []

    class Imms(ExprVisitor):
        def visit_int_imm_(self, op):
            seen.append(op)

    Imms().visit_expr(Ramp(Var("i"), 2, 8))
    Imms().visit_expr(Broadcast(FloatImm("float32", 1.0), 4))
    assert [(str(i.dtype), i.value) for i in seen] == [("int32", 2), ("int32", 8), ("int32", 4)]

    # a Python number given to visit_expr is the immediate it stands for
    seen.clear()
    Imms().visit_expr(5)
    assert [(str(i.dtype), i.value) for i in seen] == [("int32", 5)]


def test_size_var_goes_to_visit_var_unless_overridden():
    v = _Leaves()
    v.visit_expr(SizeVar("len") + Var("i"))
    assert v.seen == ["len", "i"]

    class Sizes(_Leaves):
        def visit_size_var_(self, op):
            self.seen.append("size:" + op.name)

    s = Sizes()
    s(SizeVar("len") + Var("i"))  # calling the functor visits
    assert s.seen == ["size:len", "i"]


def test_an_unchanging_mutator_returns_every_node_itself():
    n = Var("n")
    tensor = _Tensor("P", "float32", (8,))
    k = IterVar(Range(0, 8), "k", 2)
    exprs = [
        Select(n < 4, n + 1, tirx.max(n, 3)),
        Let(Var("t"), n * 2, Var("t") - 1),
        Ramp(n, 1, 4),
        Broadcast(n, 8),
        Shuffle([Ramp(n, 1, 4)], [3, 2, 1, 0]),
        ProducerLoad(tensor, [n]),
        Reduce(_sum_reducer(), [ProducerLoad(tensor, [k.var])], [k], True, 0),
        tirx.Call("float32", "tirx.exp", [FloatImm("float32", 1.0)]),
        tirx.StringImm("s"),
    ]
    for e in exprs:
        assert ExprMutator().visit_expr(e) is e, type(e).__name__


def test_a_mutator_rebuilds_only_the_path_to_a_change():
    n, m = Var("n"), Var("m")
    left, right = n * 3, m + 1
    e = tirx.Add(left, tirx.Mul(right, n))

    class RenameN(ExprMutator):
        def visit_var_(self, op):
            return Var("n2") if op is n else op

    new = RenameN().visit_expr(e)
    assert new is not e and new.a is not left and new.b is not e.b
    assert new.b.a is right  # untouched subtree shared
    assert [x for x in _collect(new)] == ["n2", 3, "m", 1, "n2"]


def _collect(e):
    v = _Leaves()
    v.visit_expr(e)
    return v.seen


def test_a_rebuilt_node_takes_its_new_children_dtype():
    i = Var("i")

    class ToFloat(ExprMutator):
        def visit_var_(self, op):
            return Var("f", "float32") if op is i else op

    added = ToFloat().visit_expr(i + i)
    assert str(added.dtype) == "float32"
    compared = ToFloat().visit_expr(i < i)
    assert str(compared.dtype) == "bool"


def test_mutating_a_lane_count_rebuilds_the_vector_node():
    class Double(ExprMutator):
        def visit_int_imm_(self, op):
            return IntImm(op.dtype, op.value * 2)

    ramp = Double().visit_expr(Ramp(Var("i"), 1, 4))
    assert (ramp.stride.value, ramp.lanes, str(ramp.dtype)) == (2, 8, "int32x8")
    bcast = Double().visit_expr(Broadcast(FloatImm("float32", 1.0), 2))
    assert (bcast.lanes, str(bcast.dtype)) == (4, "float32x4")


def test_a_lane_count_that_stops_being_a_constant_is_an_error():
    class Symbolic(ExprMutator):
        def visit_int_imm_(self, op):
            return Var("vl")

    with pytest.raises(TypeError, match=r"Broadcast: the mutator turned the lane count 4 into vl"
                                        r".*must stay an integer constant"):
        Symbolic().visit_expr(Broadcast(Var("x", "float32"), 4))


def test_super_calls_chain_through_subclasses():
    log: list[str] = []

    class Base(ExprMutator):
        def visit_mul_(self, op):
            log.append("base-mul")
            return super().visit_mul_(op)

        def visit_var_(self, op):
            log.append("var")
            return super().visit_var_(op)

    class Leaf(Base):
        def visit_mul_(self, op):
            log.append("leaf-mul")
            return super().visit_mul_(op)

    e = Var("a") * Var("b")
    assert Leaf().visit_expr(e) is e
    assert log == ["leaf-mul", "base-mul", "var", "var"]


def test_shuffle_takes_its_lanes_from_its_indices():
    x = Var("x", "float16x4")
    assert str(Shuffle([x, x], [0, 5, 7]).dtype) == "float16x3"
    with pytest.raises(ValueError, match="at least one vector and one index"):
        Shuffle([], [0])
    with pytest.raises(TypeError, match=r"element types differ \(\['float16', 'float32'\]\)"):
        Shuffle([x, Var("y", "float32x4")], [0])


def test_shuffle_prints_and_parses_back():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):
        B[T.Ramp(0, 1, 4)] = T.Shuffle([A[T.Ramp(0, 1, 4)], A[T.Ramp(4, 1, 4)]], [0, 2, 5, 7])

    text = f.script()
    line = "B[T.Ramp(0, 1, 4)] = T.Shuffle([A[T.Ramp(0, 1, 4)], A[T.Ramp(4, 1, 4)]], [0, 2, 5, 7])"
    assert line in text
    assert structural_equal(tvm.script.from_source(text), f)


def test_producer_load_reads_the_producer_dtype():
    load = ProducerLoad(_Tensor("P", "float16", (4,)), [1])
    assert str(load.dtype) == "float16" and load.indices[0].value == 1
    with pytest.raises(TypeError, match="the producer 'P' has no dtype; pass a tensor"):
        ProducerLoad("P", [0])


def test_reduce_and_its_reducer_check_their_sizes():
    a, b = Var("a", "float32"), Var("b", "float32")
    with pytest.raises(ValueError, match=r"one entry per value; got 1, 1, 2 and 1"):
        CommReducer([a], [b], [a + b, a], [FloatImm("float32", 0.0)])
    k = IterVar(Range(0, 4), "k", 2)
    src = [FloatImm("float32", 1.0)]
    with pytest.raises(IndexError, match="value_index 1 is out of range for 1 source value"):
        Reduce(_sum_reducer(), src, [k], True, 1)
    with pytest.raises(ValueError, match="init has 2 value.* but source has 1"):
        Reduce(_sum_reducer(), src, [k], True, 0, init=[0.0, 1.0])
    red = Reduce(_sum_reducer("float16"), [Var("h", "float16")], [k], True, 0)
    assert str(red.dtype) == "float16" and red.init == []


def test_reduces_built_alike_are_structurally_equal():
    def build(name: str, extent: int = 16) -> Reduce:
        k = IterVar(Range(0, extent), name, 2)
        return Reduce(_sum_reducer(names=name * 2), [ProducerLoad(_TENSOR, [k.var])], [k], True, 0)

    # the axis and the reducer's variables are matched by where they are defined
    assert structural_equal(build("k"), build("r"))
    assert not structural_equal(build("k"), build("k", 8))
    assert str(IterVar(Range(0, 4), "j").var.dtype) == "int32"


_TENSOR = _Tensor("P", "float32", (16,))
