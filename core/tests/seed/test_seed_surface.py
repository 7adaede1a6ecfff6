"""The TIRx user surface the seed's programs use (issue 18, item 6), with Apache TVM's names and
meaning: layout vocabulary, buffer and loop builders, kernel macros and hints, types, scopes,
builtins, immediates."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.ir import Buffer, FloatImm, IntImm, assert_structural_equal, structural_equal
from tvm.script import from_source
from tvm.script import tirx as T


def _roundtrip(func):
    text = func.script()
    back = from_source(text)
    assert_structural_equal(func, back)
    assert back.script() == text
    return text


# -- layouts -------------------------------------------------------------------------------------
def test_layout_vocabulary_of_core():
    from tvm.tirx.layout import R, S, TileLayout, laneid, warpid

    assert_structural_equal(TileLayout(S[8, 4, 2]), TileLayout(S[(8, 4, 2):(8, 2, 1)]))
    assert_structural_equal(TileLayout(S[8]), TileLayout(S[(8,):(1,)]))
    one = TileLayout(S[8:4 @ laneid])
    assert [(it.extent.value, it.stride.value, it.axis.name) for it in one.shard] == [
        (8, 4, "laneid")]
    named = TileLayout(S[(2, 16):("warpid", 1)])
    assert [(it.stride.value, it.axis.name) for it in named.shard] == [(1, "warpid"), (1, "m")]
    pair = TileLayout(S[(4, 8):((2, laneid), 1)])
    assert (pair.shard[0].stride.value, pair.shard[0].axis.name) == (2, "laneid")
    rep = TileLayout(S[(32, 4):(1 @ laneid, 1)] + R[4:1 @ warpid])
    assert [(it.extent.value, it.axis.name) for it in rep.replica] == [(4, "warpid")]
    shifted = TileLayout(S[(8,):(1,)] + 5 + 1 @ laneid)  # offsets, as the seed writes them
    assert {ax.name: v.value for ax, v in shifted.offset.items()} == {"m": 5, "laneid": 1}


def test_layout_roundtrip_of_the_new_forms():
    from tvm.tirx.layout import R, S, TileLayout, laneid, warpid

    layout = TileLayout(S[(32, 4):(1 @ laneid, 1)] + R[4:1 @ warpid])

    @T.prim_func
    def f(A: T.Buffer((32, 4), "float32", layout=layout)):
        A[0, 0] = T.float32(0)

    _roundtrip(f)


def test_trainium_axes(trn):
    from tvm.tirx.layout import F, P, S, TileLayout

    layout = TileLayout(S[(128, 64):(1 @ P, 1 @ F)])
    assert [it.axis.name for it in layout.shard] == ["P", "F"]


def test_cuda_layout_names_come_from_the_cuda_backend(cuda):
    from tvm.tirx.layout import TCol, TLane, tid_in_wg, tx, wg_local_layout

    assert (TCol.kind, TLane.kind, tid_in_wg.kind, tx.kind) == (
        "memory", "memory", "thread", "thread")
    layout = wg_local_layout(64)
    assert [(it.extent.value, it.stride.value, it.axis.name) for it in layout.shard] == [
        (128, 1, "tid_in_wg"), (64, 1, "m")]
    assert wg_local_layout(8, rows=64).shard[0].extent.value == 64


def test_missing_layout_name_names_its_backend():
    import tvm.tirx.layout as L

    with pytest.raises(AttributeError, match="no attribute 'NoSuchAxis'"):
        L.NoSuchAxis  # noqa: B018




def test_compose_and_swizzle_layouts_from_tvm_tirx_layout():
    from tvm.tirx.layout import ComposeLayout, S, SwizzleLayout, TileLayout

    layout = ComposeLayout(SwizzleLayout(3, 3, 3), TileLayout(S[(64, 64):(64, 1)]))
    assert layout.layout_A.swizzle_len == 3


# -- buffers and loops -----------------------------------------------------------------------------
def test_alloc_shared_and_local_and_ptr_to():
    @T.prim_func
    def f(A: T.Buffer((16,), "float16")):
        S_ = T.alloc_shared((16,), "float16")
        L = T.alloc_local((4,), "float32")
        p: T.handle = S_.ptr_to([2])
        L[0] = T.float32(0)
        A[0] = S_[0]

    text = _roundtrip(f)
    assert 'T.alloc_buffer((16,), "float16", scope="shared")' in text
    assert 'T.alloc_local((4,), "float32")' in text
    assert "T.address_of(S_[2])" in text
    with pytest.raises(IndexError, match="A.ptr_to: 1 index"):
        Buffer("A", [4, 4]).ptr_to([0])


def test_serial_unroll_annotations():
    loop_on = T.serial(4, unroll=True)
    loop_off = T.serial(4, unroll=False)
    assert loop_on.annotations == {"pragma_unroll": True}
    assert loop_off.annotations == {"disable_unroll": True}

    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in T.serial(4, unroll=True):
            A[i] = T.float32(1)
        for i in T.serial(4, 8, unroll=False, annotations={"note": 1}):
            A[i] = T.float32(2)

    text = _roundtrip(f)  # printed back as the seed writes it
    assert "for i in T.serial(4, unroll=True):" in text
    assert 'for i in T.serial(4, 8, unroll=False, annotations={"note": 1}):' in text


def test_break_and_continue_in_loops():
    @T.prim_func
    def f(A: T.Buffer((8,), "int32")):
        for i in range(8):
            if i == 5:
                break
            if i == 1:
                continue
            A[i] = 1

    a = np.zeros(8, "int32")
    tvm.compile(f, target="c")(a)
    np.testing.assert_array_equal(a, [1, 0, 1, 1, 1, 0, 0, 0])
    from tvm.error import DiagnosticError

    with pytest.raises(DiagnosticError, match="`break` outside a loop"):
        from_source("@T.prim_func\ndef g():\n    break\n")


def test_buffer_axis_separators_and_offset_factor():
    @T.prim_func
    def f(A: T.Buffer((4, 8), "float32", offset_factor=4),
          B: T.Buffer((4, 8), "float32", axis_separators=[1])):
        A[0, 0] = B[0, 0]

    text = _roundtrip(f)
    assert "offset_factor=4" in text and "axis_separators=[1]" in text
    buf = f.buffer_map[f.params[1]]
    assert buf.axis_separators == [1] and f.buffer_map[f.params[0]].offset_factor == 4
    with pytest.raises(ValueError, match="axis_separators must be increasing dimension indices"):
        Buffer("X", [4, 8], axis_separators=[2])
    with pytest.raises(ValueError, match="error: buffer B has axis_separators"):  # located
        tvm.compile(f, target="c")


def test_tensormap_annotation_forms():
    @T.prim_func
    def f(tm: T.TensorMap(), tm2: T.TensorMap):
        T.evaluate(0)

    assert [p.ptr_scope for p in f.params] == ["grid_constant", "grid_constant"]
    assert "tm: T.TensorMap(), tm2: T.TensorMap()" in _roundtrip(f)


# -- macros and hints ------------------------------------------------------------------------------
@T.inline
def _axpy(Y, X, i, a):
    Y[i] = Y[i] + X[i] * a


@T.inline
def _square(x):
    return x * x


def test_inline_macros():
    @T.prim_func
    def f(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
        for i in range(8):
            _axpy(Y, X, i, T.float32(2))
            Y[i] = _square(Y[i])

    x, y = np.arange(8, dtype="float32"), np.ones(8, "float32")
    tvm.compile(f, target="c")(x, y)
    np.testing.assert_allclose(y, (1 + 2 * np.arange(8)) ** 2)
    with pytest.raises(TypeError, match="call it inside a @T.prim_func body"):
        _square(3)


def test_hint_is_an_attribute_statement():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        with T.hint("vectorize this", width=4):
            A[0] = T.float32(1)
        T.hint("rest")
        A[1] = T.float32(2)

    text = _roundtrip(f)
    assert 'with T.hint("vectorize this", width=4):\n        A[0] = T.float32(1.0)\n' in text
    assert '    T.hint("rest")\n    A[1] = T.float32(2.0)' in text
    hints: list[tuple[str, object]] = []
    tvm.tirx.stmt_functor.post_order_visit(
        f.body, lambda n: hints.append((n.attr_key, n.node)) if isinstance(n, tvm.tirx.AttrStmt)
        else None)
    assert hints == [("tirx_hint", {"message": "vectorize this", "width": 4}),
                     ("tirx_hint", {"message": "rest"})]
    assert isinstance(hints[0][1], tvm.ir.Map)
    a = np.zeros(4, "float32")
    tvm.compile(f, target="c")(a)  # codegen ignores hints
    np.testing.assert_array_equal(a, [1, 2, 0, 0])
    with pytest.raises(TypeError, match=r"attribute mode=\[1\] must be a str, int, float, bool, "
                                        r"an expression or a buffer region, not list"):
        T.hint("x", mode=[1])
    with pytest.raises(TypeError, match="T.hint needs a message or at least one keyword"):
        T.hint()


def test_hint_without_message_holds_a_region():
    @T.prim_func
    def f(A: T.Buffer((128,), "float32")):
        T.hint(access=A[0:64])
        A[1] = T.float32(2)

    text = f.script()
    assert "    T.hint(access=A[0:64])\n" in text
    tvm.ir.assert_structural_equal(from_source(text), f)
    node = f.body.node
    assert "message" not in node and isinstance(node["access"], tvm.ir.BufferRegion)


# -- names of the IR ---------------------------------------------------------------------------------
def test_size_var_is_non_negative():
    from tvm.arith import Analyzer

    n = tvm.tirx.SizeVar("n")
    assert Analyzer().can_prove(n >= 0)
    assert not Analyzer().can_prove(tvm.tirx.Var("m") >= 0)


def test_ir_types():
    from tvm.ir.type import PointerType, PrimType, TensorMapType

    v = tvm.tirx.Var("p", PointerType(PrimType("float16"), "shared"))
    assert (v.dtype, v.ptr_dtype, v.ptr_scope) == ("handle", "float16", "shared")
    assert tvm.tirx.Var("x", PrimType("int8")).dtype == "int8"
    assert tvm.tirx.Var("tm", TensorMapType()).ptr_scope == "grid_constant"
    # the seed's type of a host-encoded map: a pointer to one, the variable T.handle("tensormap")
    # declares
    m = tvm.tirx.Var("m", PointerType(TensorMapType(), "global"))
    assert (m.dtype, m.ptr_scope) == ("handle", "grid_constant")
    assert PointerType(TensorMapType()) == PointerType(TensorMapType())
    assert PointerType(TensorMapType()) != PointerType(PrimType("uint8"))


def test_dispatch_callbacks_are_read_by_the_seed_names():
    from tvm.tirx.operator.tile_primitive.dispatch_context import (
        DispatchCallbacks,
        kDeviceInitStmt,
        kHostInitStmt,
        kPrivateAlloc,
    )

    cb = DispatchCallbacks()
    stmt = tvm.tirx.Evaluate(IntImm("int32", 0))
    cb.host_init.append(stmt)
    assert cb.get(kHostInitStmt, []) == [stmt]
    assert cb.get(kDeviceInitStmt, []) == [] and cb.get(kPrivateAlloc) is None
    with pytest.raises(KeyError, match="no dispatch callback 'host_init'; the callbacks are "
                                       "'host_init_stmt'"):
        cb.get("host_init")


def test_pass_context_at_the_seed_path():
    import tvm.transform
    from tvm.ir.transform import PassContext, Sequential

    assert PassContext is tvm.transform.PassContext and Sequential is tvm.transform.Sequential
    with PassContext(config={"tir.disable_vectorize": True}) as ctx:
        assert PassContext.current() is ctx


def test_exec_scope():
    from tvm.tirx.exec_scope import ExecScope, ScopeIdDef

    for name, kind in (("thread", 6), ("warp", 5), ("warpgroup", 4), ("cta", 3), ("cluster", 2)):
        scope = ExecScope(name)
        assert isinstance(scope, ExecScope) and scope.name == name and scope.kind == kind
    with pytest.raises(Exception, match="Unknown scope kind name"):
        ExecScope("aaa")
    assert ScopeIdDef is tvm.ir.ScopeIdDef
    from tvm.tirx.operator.tile_primitive import DispatchContext

    assert DispatchContext(tvm.target.Target("c"), ExecScope("cta")).is_cta


# -- builtins -------------------------------------------------------------------------------------
def test_builtins_roundtrip():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), n: T.int32, p: T.handle, v: T.int8x4):
        T.evaluate(T.assume(n > 0))
        T.evaluate(T.type_annotation("float32"))
        T.evaluate(T.tvm_tuple(1, 2))
        T.evaluate(T.isnullptr(p))
        T.evaluate(T.dp4a(v, v, 0))
        T.evaluate(T.undef())
        T.evaluate(T.tvm_fill_fragment(p, 16, 16, 16, 0, T.float32(0)))
        T.evaluate(T.cooperative_tensor_fill(p, 0, T.float32(0), 8, 8))

    text = _roundtrip(f)
    for form in ("T.assume(n > 0)", 'T.type_annotation("float32")', "T.tvm_tuple(1, 2)",
                 "T.isnullptr(p)", "T.dp4a(v, v, 0)", "T.undef()",
                 "T.tvm_fill_fragment(p, 16, 16, 16, 0, T.float32(0.0))",
                 "T.cooperative_tensor_fill(p, 0, T.float32(0.0), 8, 8)"):
        assert form in text
    assert T.dp4a(tvm.tirx.Var("a", "int8x4"), tvm.tirx.Var("b", "int8x4")).dtype == "int32"


@pytest.mark.parametrize("name, nargs", [
    ("cooperative_tensor_fill", 5), ("cooperative_tensor_load", 11),
    ("cooperative_tensor_store", 11), ("cooperative_tensor_multiply_accumulate", 13),
    ("tvm_load_matrix_sync", 8), ("tvm_mma_sync", 8), ("tvm_bmma_sync", 8),
    ("tvm_fill_fragment", 6), ("tvm_store_matrix_sync", 8),
])
def test_core_builders_kept_as_in_the_seed(name, nargs):
    """The Metal 4 cooperative tensors and the wmma fragments stay in core (tvm.tirx.op)."""
    import inspect

    builder = getattr(tvm.tirx.op, name)
    assert len(inspect.signature(builder).parameters) == nargs
    call = builder(*[tvm.tirx.Var(f"a{i}", "handle") for i in range(nargs)])
    assert call.op.name == f"tirx.{name}" and call.dtype == "handle"


# -- immediates ----------------------------------------------------------------------------------
def test_float_literals_beyond_float32_are_float64():
    assert tvm.ir.const(1.5).dtype == "float32"
    assert tvm.ir.const(1e300).dtype == "float64"
    assert tvm.ir.const(-3.5e38).dtype == "float64"
    assert tvm.ir.const(float("inf")).dtype == "float32"


def test_int4():
    assert str(tvm.ir.DataType("int4")) == "int4" and tvm.ir.DataType("uint4").bits == 4
    assert T.int4(3).dtype == "int4"


def test_constant_folding_of_immediates():
    seven = T.int32(3) + 4
    assert isinstance(seven, IntImm) and seven.value == 7 and seven.dtype == "int32"
    assert (T.int64(7) // 2).value == 3 and (T.int32(-7) % 3).value == 2
    assert structural_equal(T.float32(1.5) * 2, FloatImm("float32", 3.0))
    assert not isinstance(T.int8(100) + 100, IntImm)  # would overflow int8: left as is
    assert not isinstance(T.int32(1) // 0, IntImm)
    x = tvm.tirx.Var("x")
    assert not isinstance(x + 4, IntImm)


def test_persistent_decorator_round_trips_as_a_recorded_flag():
    @T.prim_func(persistent=True)
    def f(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)

    @T.prim_func(private=True, persistent=True)
    def g(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)

    text = _roundtrip(f)
    assert text.splitlines()[2] == "@T.prim_func(persistent=True)"
    assert "tirx.persistent_kernel" not in text and f.attrs["tirx.persistent_kernel"] is True
    assert _roundtrip(g).splitlines()[2] == "@T.prim_func(private=True, persistent=True)"
    # a record only: the launch bounds still come from tirx.launch_bounds_min_blocks_per_sm
    assert "persistent" not in tvm.compile(f, target="c").inspect_source()
