"""The dispatcher: registration, ordering, forcing, predicates, the failure table, listing and
rollback."""

from __future__ import annotations

import pytest
from tile_helpers import call, func_of, nodes_of

from tvm._registry import transaction
from tvm.error import DispatchFail, RegistrationConflict
from tvm.ir import Buffer, BufferStore, Evaluate, For, Op, PrimFunc, Var, const
from tvm.target import Target
from tvm.tirx.operator.tile_primitive import (
    DISPATCH_REGISTRY,
    DispatchContext,
    dispatch,
    fail,
    get_variants,
    list_registered_schedules,
    lower_tile_primitives,
    predicate,
    register_dispatch,
)

A = Buffer("A", [8], "float32")
B = Buffer("B", [8], "float32")


def marker(tag: int) -> PrimFunc:
    """A variant body that says which variant produced it."""
    return PrimFunc([], BufferStore(A, const(float(tag), "float32"), [0]))


def chosen(target: Target, c=None) -> str:
    c = c if c is not None else call("copy", A, B)
    return dispatch(c, DispatchContext.for_call(target, c)).variant


def test_priority_order_then_fallback(fakegpu: Target) -> None:
    register_dispatch("copy", "fakegpu", variant="low", priority=1)(lambda c, s: marker(1))
    register_dispatch("copy", "fakegpu", variant="high", priority=20)(lambda c, s: marker(2))
    assert [c.variant for c in get_variants("copy", "fakegpu")] == ["high", "low", "fallback"]
    assert chosen(fakegpu) == "high"


def test_ties_are_broken_by_variant_name(fakegpu: Target) -> None:
    for name in ("zeta", "alpha", "mid"):
        register_dispatch("tirx.tile.copy", "fakegpu", variant=name, priority=5)(lambda c, s: marker(0))
    assert [c.variant for c in get_variants("copy", "fakegpu")] == ["alpha", "mid", "zeta", "fallback"]
    assert chosen(fakegpu) == "alpha"


def test_declining_variants_fall_through(fakegpu: Target) -> None:
    register_dispatch("copy", "fakegpu", variant="a", priority=9)(lambda c, s: fail("not today"))
    register_dispatch("copy", "fakegpu", variant="b", priority=8)(lambda c, s: None)
    register_dispatch("copy", "fakegpu", variant="c", priority=7)(lambda c, s: marker(3))
    assert chosen(fakegpu) == "c"


def test_forced_variant_skips_higher_priorities(fakegpu: Target) -> None:
    register_dispatch("copy", "fakegpu", variant="fast", priority=50)(lambda c, s: marker(1))
    assert chosen(fakegpu, call("copy", A, B, dispatch="fallback")) == "fallback"


def test_forced_variant_that_declines_reports_only_itself(fakegpu: Target) -> None:
    register_dispatch("copy", "fakegpu", variant="picky", priority=50)(lambda c, s: fail("too picky"))
    with pytest.raises(RuntimeError) as info:
        chosen(fakegpu, call("copy", A, B, dispatch="picky"))
    text = str(info.value)
    assert "picky" in text and "too picky" in text
    assert "fallback" not in text


def test_unknown_forced_variant(fakegpu: Target) -> None:
    with pytest.raises(RuntimeError) as info:
        chosen(fakegpu, call("copy", A, B, dispatch="tma"))
    assert str(info.value).splitlines()[0] == "TIRx schedule dispatch failed: op=tirx.tile.copy target=fakegpu"
    assert "no variant named 'tma' is registered (registered for this op/target: fallback)" in str(info.value)


def test_error_table_lists_every_variant_with_its_reason(fakegpu: Target) -> None:
    DISPATCH_REGISTRY.unregister(("tirx.tile.copy", "*", "fallback"))
    register_dispatch("copy", "fakegpu", variant="pred_bool", priority=4,
                      when=[predicate("is_shared", lambda c, s: False)])(lambda c, s: marker(0))
    register_dispatch("copy", "fakegpu", variant="pred_reason", priority=3,
                      when=[predicate("ok", lambda c, s: True),
                            predicate("dtype", lambda c, s, want: (False, f"needs {want}"),
                                      want="float16")])(lambda c, s: marker(0))
    register_dispatch("copy", "fakegpu", variant="pred_raises", priority=2,
                      when=[predicate("scope", lambda c, s: fail(f"unsupported scope {s.scope_kind}"))])(
        lambda c, s: marker(0))
    register_dispatch("copy", "fakegpu", variant="declines", priority=1)(lambda c, s: fail("no TMA here"))
    register_dispatch("copy", "fakegpu", variant="nothing", priority=0)(lambda c, s: None)

    def boom(c, s):
        raise ValueError("bad layout\nsecond line")

    register_dispatch("copy", "fakegpu", variant="crashes", priority=-1)(boom)
    register_dispatch("copy", "fakegpu", variant="wrong_type", priority=-2)(lambda c, s: 42)
    with pytest.raises(RuntimeError) as info:
        chosen(fakegpu, call("copy", A, B, scope="cta"))
    table, trace = str(info.value).split("\ntraceback of variant 'crashes' (fakegpu):\n")
    assert table == "\n".join([
        "TIRx schedule dispatch failed: op=tirx.tile.copy target=fakegpu",
        "scope: cta",
        "opcall: T.cta.copy(A, B)",
        "+-------------+----------+---------+----------+-------------------------------------------------------------------+",
        "| Variant     | Priority | Target  | Status   | Reason                                                            |",
        "+-------------+----------+---------+----------+-------------------------------------------------------------------+",
        "| pred_bool   | 4        | fakegpu | rejected | predicate 'is_shared'                                             |",
        "| pred_reason | 3        | fakegpu | rejected | predicate 'dtype': needs float16                                  |",
        "| pred_raises | 2        | fakegpu | rejected | predicate 'scope': unsupported scope cta                          |",
        "| declines    | 1        | fakegpu | declined | no TMA here                                                       |",
        "| nothing     | 0        | fakegpu | declined | impl returned None; schedule must return PrimFunc or raise fail() |",
        "| crashes     | -1       | fakegpu | error    | ValueError: bad layout / second line                              |",
        "| wrong_type  | -2       | fakegpu | error    | impl returned int; schedule must return PrimFunc or raise fail()  |",
        "+-------------+----------+---------+----------+-------------------------------------------------------------------+",
    ])
    # a variant that crashes (rather than declining) is a bug: its traceback follows the table
    lines = trace.splitlines()
    assert lines[0] == "  Traceback (most recent call last):"
    assert "in boom" in trace and 'raise ValueError("bad layout\\nsecond line")' in trace
    assert lines[-2:] == ["  ValueError: bad layout", "  second line"]
    assert "_try" not in trace  # the dispatcher's own frame is left out


def test_predicate_that_crashes_is_reported(fakegpu: Target) -> None:
    register_dispatch("copy", "fakegpu", variant="x", priority=1,
                      when=[predicate("crash", lambda c, s: 1 // 0)])(lambda c, s: marker(0))
    DISPATCH_REGISTRY.unregister(("tirx.tile.copy", "*", "fallback"))
    with pytest.raises(RuntimeError, match=r"predicate 'crash' raised ZeroDivisionError") as info:
        chosen(fakegpu)
    assert "traceback of variant 'x' (fakegpu):" in str(info.value)
    assert "1 // 0" in str(info.value)


def test_no_variants_at_all(fakegpu: Target) -> None:
    DISPATCH_REGISTRY.unregister(("tirx.tile.copy", "*", "fallback"))
    with pytest.raises(RuntimeError) as info:
        chosen(fakegpu)
    assert "op=tirx.tile.copy target=fakegpu" in str(info.value)
    assert "no registered variants for this op/target" in str(info.value)


def test_kind_variant_hides_wildcard_variant_of_same_name(fakegpu: Target, host_target: Target) -> None:
    register_dispatch("copy", "fakegpu", variant="fallback", priority=-100)(lambda c, s: marker(7))
    (case,) = get_variants("copy", "fakegpu")
    assert case.target_kind == "fakegpu"
    (host_fallback,) = [c for c in get_variants("copy", "c") if c.variant == "fallback"]
    assert host_fallback.target_kind == "*"


def test_wildcard_variants_apply_to_every_kind(fakegpu: Target, host_target: Target) -> None:
    # above the host's own variants (priority 10)
    register_dispatch("copy", "*", variant="generic_fast", priority=20)(lambda c, s: marker(1))
    assert chosen(fakegpu) == "generic_fast"
    assert chosen(host_target) == "generic_fast"


def test_fail_raises_dispatch_fail() -> None:
    with pytest.raises(DispatchFail, match="because"):
        fail("because")


def test_register_dispatch_validates_its_arguments() -> None:
    with pytest.raises(ValueError, match="'nonsense' is not a registered tile primitive"):
        register_dispatch("nonsense", "c", variant="v")
    with pytest.raises(ValueError, match="tirx.exp.*builtin op, not a tile primitive"):
        register_dispatch(Op.get("tirx.exp"), "c", variant="v")
    with pytest.raises(ValueError, match="variant must be a non-empty name"):
        register_dispatch("copy", "c", variant="")
    with pytest.raises(TypeError, match="predicate 'p': fn must be callable"):
        predicate("p", 3)


def test_duplicate_registration_conflicts_unless_override() -> None:
    register_dispatch("copy", "c", variant="v")(lambda c, s: marker(0))
    with pytest.raises(RegistrationConflict, match="dispatch variant"):
        register_dispatch("copy", "c", variant="v")(lambda c, s: marker(1))
    register_dispatch("copy", "c", variant="v", override=True)(lambda c, s: marker(1))


def test_register_dispatch_returns_the_function() -> None:
    def impl(c, s):
        return marker(0)

    assert register_dispatch("copy", "c", variant="v")(impl) is impl


def test_list_registered_schedules() -> None:
    register_dispatch("copy", "fakegpu", variant="b", priority=1)(lambda c, s: marker(0))
    register_dispatch("copy", "fakegpu", variant="a", priority=1)(lambda c, s: marker(0))
    register_dispatch("copy", "fakegpu", variant="tma", priority=10)(lambda c, s: marker(0))
    table = list_registered_schedules()
    copy_table = table["tirx.tile.copy"]
    assert copy_table["*"] == ["fallback"] and copy_table["fakegpu"] == ["tma", "a", "b"]
    from tvm.tirx.operator.tile_primitive.ops import TILE_OPS

    assert {f"tirx.tile.{n}" for n in TILE_OPS} <= set(table)
    assert all(table[f"tirx.tile.{n}"]["*"] == ["fallback"] for n in TILE_OPS)


def test_transaction_rolls_back_a_backends_variants() -> None:
    before = list_registered_schedules()
    with pytest.raises(RuntimeError, match="hook failed"), transaction("mybackend"):
        register_dispatch("copy", "mykind", variant="fast", priority=10)(lambda c, s: marker(0))
        register_dispatch("sum", "mykind", variant="fast", priority=10)(lambda c, s: marker(0))
        assert DISPATCH_REGISTRY.keys_owned_by("mybackend") == [
            ("tirx.tile.copy", "mykind", "fast"), ("tirx.tile.sum", "mykind", "fast")]
        raise RuntimeError("hook failed")
    assert list_registered_schedules() == before
    assert DISPATCH_REGISTRY.keys_owned_by("mybackend") == []


def test_core_fallbacks_are_owned_by_core() -> None:
    assert DISPATCH_REGISTRY.owner_of(("tirx.tile.gemm", "*", "fallback")) == "core"


def test_variant_sees_the_call_and_its_context(fakegpu: Target) -> None:
    seen = {}

    def impl(c, s):
        seen.update(op=c.op.name, scope=s.scope_kind, gpu=s.is_target("gpu"), cuda=s.is_target("cuda"),
                    cta=s.is_cta, config=c.config)
        return marker(0)

    register_dispatch("copy", "fakegpu", variant="spy", priority=1)(impl)
    chosen(fakegpu, call("copy", A, B, scope="cta", config={"k": 1}))
    assert seen == {"op": "tirx.tile.copy", "scope": "cta", "gpu": True, "cuda": False, "cta": True,
                    "config": {"k": 1}}


# -- lowering: the variant's PrimFunc replaces the call ----------------------------------------
def test_paramless_variant_body_replaces_the_call(fakegpu: Target) -> None:
    register_dispatch("copy", "fakegpu", variant="mark", priority=1)(lambda c, s: marker(5))
    trace: list = []
    out = lower_tile_primitives(func_of([A, B], call("copy", A, B)), fakegpu, trace=trace)
    assert isinstance(out.body, BufferStore) and out.body.value.value == 5.0
    assert trace == [("tirx.tile.copy", "thread", "mark")]


def test_variant_with_parameters_is_bound_to_the_call_arguments(fakegpu: Target) -> None:
    P = Buffer("P", [4], "float32")
    Q = Buffer("Q", [4], "float32")
    i = Var("i")
    pf, qf = Var("p", "handle"), Var("q", "handle")
    body = For(i, 0, 4, __import__("tvm").ir.ForKind.SERIAL, BufferStore(P, Q[i] * 2.0, [i]))
    impl_func = PrimFunc([pf, qf], body, {pf: P, qf: Q})
    register_dispatch("copy", "fakegpu", variant="param", priority=1)(lambda c, s: impl_func)
    out = lower_tile_primitives(func_of([A, B], call("copy", A[2:6], B)), fakegpu)
    (store,) = nodes_of(out.body, BufferStore)
    assert store.buffer is A and store.value.a.buffer is B
    assert str(store.indices[0]) == str(2 + i)  # region [2:6] of A: element i is A[2 + i]


def test_nested_tile_calls_are_dispatched_in_turn(fakegpu: Target) -> None:
    register_dispatch("fill", "fakegpu", variant="via_copy", priority=1)(
        lambda c, s: PrimFunc([], call("copy", A, B, scope=c.scope)))
    register_dispatch("copy", "fakegpu", variant="mark", priority=1)(lambda c, s: marker(9))
    trace: list = []
    out = lower_tile_primitives(func_of([A, B], call("fill", A, 1.0)), fakegpu, trace=trace)
    assert out.body.value.value == 9.0
    assert trace == [("tirx.tile.fill", "thread", "via_copy"), ("tirx.tile.copy", "thread", "mark")]


def test_self_recursive_variant_is_stopped(fakegpu: Target) -> None:
    register_dispatch("copy", "fakegpu", variant="loop", priority=1)(lambda c, s: PrimFunc([], c))
    with pytest.raises(RuntimeError, match="keeps lowering to tile primitives"):
        lower_tile_primitives(func_of([A, B], call("copy", A, B)), fakegpu)


def test_target_from_function_attribute_or_context(fakegpu: Target) -> None:
    register_dispatch("copy", "fakegpu", variant="mark", priority=1)(lambda c, s: marker(1))
    f = func_of([A, B], call("copy", A, B)).with_attr("target", fakegpu)
    assert isinstance(lower_tile_primitives(f).body, BufferStore)
    with fakegpu:
        assert isinstance(lower_tile_primitives(func_of([A, B], call("copy", A, B))).body, BufferStore)
    with pytest.raises(ValueError, match="needs a target"):
        lower_tile_primitives(func_of([A, B], call("copy", A, B)))


def test_lowering_a_module_lowers_every_function(fakegpu: Target) -> None:
    from tvm.ir import IRModule, TilePrimitiveCall

    mod = IRModule({"f": func_of([A, B], call("copy", A, B)), "g": func_of([A], call("zero", A))})
    out = lower_tile_primitives(mod, fakegpu)
    assert set(out.functions) == {"f", "g"}
    assert not nodes_of(out, TilePrimitiveCall)
    assert not nodes_of(out, Evaluate) or True
