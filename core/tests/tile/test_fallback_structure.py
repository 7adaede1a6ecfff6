"""The generic fallback: what it lowers each call to, at each scope, and what it rejects."""

from __future__ import annotations

import pytest
from tile_helpers import call, func_of, kernel_of, nodes_of

from tvm.ir import (
    AllocBuffer,
    Buffer,
    BufferStore,
    Cast,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    PrimFunc,
    TilePrimitiveCall,
    structural_equal,
    verify,
)
from tvm.target import Target
from tvm.tirx.operator.tile_primitive import get_variants, lower_tile_primitives
from tvm.tirx.operator.tile_primitive.fallback import FALLBACK_PRIORITY, fallback_impl
from tvm.tirx.operator.tile_primitive.ops import TILE_OPS

X = Buffer("X", [4, 8], "float32")
Y = Buffer("Y", [4, 8], "float32")
H = Buffer("H", [4, 8], "float16")
R = Buffer("R", [4], "float32")
W = Buffer("W", [8, 8], "float32")
M = Buffer("M", [4, 8], "bool")


def sample_calls(scope: str = "thread") -> dict[str, TilePrimitiveCall]:
    """One call of every tile primitive."""
    kw = {"scope": scope}
    calls = {
        "copy": call("copy", X, Y, **kw), "copy_async": call("copy_async", X, Y, **kw),
        "permute_layout": call("permute_layout", X, Y, **kw), "cast": call("cast", H, X, **kw),
        "fill": call("fill", X, 1.5, **kw), "memset": call("memset", X, 0.0, **kw),
        "zero": call("zero", X, **kw), "fma": call("fma", X, Y, 2.0, Y, **kw),
        "select": call("select", X, Y, 0.0, M, **kw),
        "gemm": call("gemm", X, X, W, X, beta=1.0, **kw),
        "gemm_async": call("gemm_async", X, X, W, accum=True, **kw),
        "binary_chain": call("binary_chain", X, X, Y, Y, "mul", "add", **kw),
        "binary_reduce": call("binary_reduce", X, R, X, Y, "sub", "max", **kw),
        "unary_reduce": call("unary_reduce", X, R, Y, "exp", "sum", **kw),
        "reduce_negate": call("reduce_negate", R, X, "min", **kw),
    }
    from tvm.tirx.operator.tile_primitive.ops import BINARY_OPS, REDUCE_OPS, UNARY_OPS

    for u in UNARY_OPS:
        calls[u] = call(u, X, Y, **kw)
    for b in BINARY_OPS:
        calls[b] = call(b, X, Y, 3.0, **kw)
    for r in REDUCE_OPS:
        calls[r] = call(r, R, X, **kw)
    from tvm.tirx.operator.tile_primitive.ops import make_compose_op

    calls["compose_op"] = make_compose_op([call("add", X, X, Y, **kw), call("exp", Y, X, **kw)],
                                          scope=scope)
    return calls


def test_every_tile_primitive_has_a_sample() -> None:
    assert set(sample_calls()) == set(TILE_OPS)


def test_every_op_has_a_wildcard_fallback_at_lowest_priority(fakegpu: Target) -> None:
    for name in TILE_OPS:
        (case,) = get_variants(name, "fakegpu")
        assert (case.variant, case.target_kind, case.priority) == ("fallback", "*", FALLBACK_PRIORITY)
        assert case.impl is fallback_impl(name)


@pytest.mark.parametrize("scope", ["thread", "warp", "warpgroup", "cta", "cluster"])
def test_every_op_lowers_to_verified_loops_on_both_targets(scope: str, fakegpu: Target,
                                                           host_target: Target) -> None:
    for name, c in sample_calls(scope).items():
        f, _ = kernel_of([X, Y, H, R, W, M], 256, c)
        for target in (fakegpu, host_target):
            out = lower_tile_primitives(f, target)
            assert not nodes_of(out, TilePrimitiveCall), name
            verify(out)


def test_thread_scope_is_plain_nested_loops(host_target: Target) -> None:
    out = lower_tile_primitives(func_of([X, Y], call("copy", X, Y)), host_target)
    outer = out.body
    assert isinstance(outer, For) and outer.extent.value == 4
    inner = outer.body
    assert isinstance(inner, For) and inner.extent.value == 8
    store = inner.body
    assert isinstance(store, BufferStore) and store.buffer is X
    assert [i is v for i, v in zip(store.indices, (outer.loop_var, inner.loop_var))] == [True, True]


def test_regions_offset_the_indices(host_target: Target) -> None:
    out = lower_tile_primitives(func_of([X, W], call("copy", X[1:3, 0:8], W[2:4, 0:8])), host_target)
    (store,) = nodes_of(out, BufferStore)
    assert str(store.indices[0]) == str(1 + out.body.loop_var)
    assert str(store.value.indices[0]) == str(2 + out.body.loop_var)


def test_serial_target_lets_thread_zero_do_a_cta_op(host_target: Target) -> None:
    f, tx = kernel_of([X, Y], 128, call("copy", X, Y, scope="cta"))
    out = lower_tile_primitives(f, host_target)
    (guard,) = nodes_of(out, IfThenElse)
    assert guard.condition.a is tx and guard.condition.b.value == 0
    assert isinstance(guard.then_case, For)
    assert not nodes_of(out, Evaluate)[1:]  # only device_entry: no barrier


def test_gpu_target_distributes_elements_and_syncs(fakegpu: Target) -> None:
    f, tx = kernel_of([X, Y], 8, call("copy", X, Y, scope="cta"))
    out = lower_tile_primitives(f, fakegpu)
    (loop,) = nodes_of(out, For)
    assert loop.extent.value == 4                      # 32 elements over 8 threads
    assert isinstance(loop.body, LetStmt)              # elem = k * 8 + tx
    assert not nodes_of(out, IfThenElse)               # 32 % 8 == 0: no bound check
    barrier = out.body.seq[-1]
    assert barrier.value.op.name == "tirx.test_scope_barrier"
    assert barrier.value.args[0].value == "cta"


def test_gpu_target_guards_a_ragged_tail(fakegpu: Target) -> None:
    f, _ = kernel_of([X, Y], 96, call("copy", X, Y, scope="cta"))
    out = lower_tile_primitives(f, fakegpu)
    (guard,) = nodes_of(out, IfThenElse)               # 32 elements, 96 threads
    assert not nodes_of(out, For)
    assert guard.condition.b.value == 32


def test_warp_scope_uses_lane_index(fakegpu: Target) -> None:
    f, tx = kernel_of([X, Y], 128, call("zero", X, scope="warp"))
    out = lower_tile_primitives(f, fakegpu)
    (let,) = nodes_of(out, LetStmt)
    assert structural_equal(let.value, tx % 32)


def test_half_precision_is_computed_in_float32(host_target: Target) -> None:
    out = lower_tile_primitives(func_of([H], call("exp", H, H)), host_target)
    (store,) = nodes_of(out, BufferStore)
    assert isinstance(store.value, Cast) and str(store.value.dtype) == "float16"
    assert str(store.value.value.dtype) == "float32"


def test_reduction_uses_a_local_accumulator(host_target: Target) -> None:
    out = lower_tile_primitives(func_of([R, H], call("sum", R, H)), host_target)
    (alloc,) = nodes_of(out, AllocBuffer)
    assert alloc.buffer.scope == "local" and str(alloc.buffer.dtype) == "float32"


def test_compose_ops_lower_through_their_parts(host_target: Target) -> None:
    trace: list = []
    lower_tile_primitives(func_of([X, R, Y], call("unary_reduce", X, R, Y, "exp", "sum", scope="cta")),
                          host_target, trace=trace)
    # the parts are dispatched in turn, so the host's own variants of exp and sum are used
    assert trace == [("tirx.tile.unary_reduce", "cta", "fallback"), ("tirx.tile.exp", "cta", "vector"),
                     ("tirx.tile.sum", "cta", "vector")]


@pytest.mark.parametrize(("c", "reason"), [
    (lambda: call("add", X, Y, W), "src2: shape [8, 8] does not broadcast to [4, 8]"),
    (lambda: call("sum", Y, X), "dst shape [4, 8] does not match the kept axes [4] of src [4, 8]"),
    (lambda: call("sum", R, X, axes=2), "axis 2 is out of range for a source of rank 2"),
    (lambda: call("gemm", X, X, X), "gemm shapes do not match: op(A) columns vs op(B) rows (K) (8 vs 4)"),
    (lambda: call("gemm", Buffer("B3", [2, 4, 8]), X, W),
     "D: batched gemm is not supported"),
])
def test_fallback_declines_with_a_reason(c, reason: str, host_target: Target) -> None:
    with pytest.raises(RuntimeError) as info:
        lower_tile_primitives(func_of([X, Y, W, R], c()), host_target)
    text = str(info.value)
    assert "| fallback | -100     | *      | declined |" in text
    assert reason in text


def test_gpu_target_without_barrier_declines(host_target: Target) -> None:
    from tvm.target import TargetKind, register_target_kind

    register_target_kind(TargetKind("bare"))
    f, _ = kernel_of([X, Y], 64, call("copy", X, Y, scope="cta"))
    with pytest.raises(RuntimeError, match="no barrier for scope 'cta' on target 'bare'"):
        lower_tile_primitives(f, Target("bare"))
    # thread scope needs no barrier
    g, _ = kernel_of([X, Y], 64, call("copy", X, Y))
    lower_tile_primitives(g, Target("bare"))


def test_select_takes_a_callable_predicate(host_target: Target) -> None:
    c = TilePrimitiveCall("tirx.tile.select", [X, Y, 0.0, lambda i, j: i < j])
    out = lower_tile_primitives(func_of([X, Y], c), host_target)
    (store,) = nodes_of(out, BufferStore)
    assert type(store.value).__name__ == "Select"


def test_fallback_impl_returns_a_paramless_primfunc(host_target: Target) -> None:
    from tvm.tirx.operator.tile_primitive import DispatchContext

    c = call("add", X, X, Y)
    f = fallback_impl("add")(c, DispatchContext.for_call(host_target, c))
    assert isinstance(f, PrimFunc) and f.params == []


def test_fallback_copy_declines_registers_spread_over_threads(fakegpu: Target) -> None:
    from tvm.ir import Iter, TileLayout
    from tvm.ir.layout import Axis

    lay = TileLayout([Iter(32, 1, Axis.get("laneid")), Iter(2, 1, "m")])
    regs = Buffer("Rg", [32, 2], "float32", scope="local", layout=lay)
    src = Buffer("G", [32, 2], "float32")
    f, _ = kernel_of([src], 32, call("copy", regs, src, scope="warp"))
    with pytest.raises(RuntimeError) as info:
        lower_tile_primitives(f, fakegpu)
    assert "Rg's registers are spread over the threads by its layout" in str(info.value)
    # one thread holding all of them: the plain loops are right
    g, _ = kernel_of([src], 32, call("copy", regs, src))
    lower_tile_primitives(g, fakegpu)


def test_permute_layout_does_not_convert(host_target: Target) -> None:
    from tvm.error import DispatchError

    f = func_of([H, X], call("permute_layout", H, X))
    with pytest.raises(DispatchError, match="dtype mismatch: dst is float16, src float32"):
        lower_tile_primitives(f, host_target)
