"""TVMScript forms the seed's tests write (issue 28): short index lists and tuple indices, bare
and repeated kernel ids. Programs of our own, run on the host backend."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tvm
from tvm.error import DiagnosticError, KernelFormError
from tvm.ir import BufferLoad, BufferRegion
from tvm.script import from_source
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx


def _regions(func: tvm.tirx.PrimFunc) -> list[list[tuple[object, object]]]:
    """The (min, extent) of every region argument of the tile calls in ``func``."""
    out: list[list[tuple[object, object]]] = []

    def visit(node: object) -> None:
        if isinstance(node, tvm.tirx.TilePrimitiveCall):
            for a in node.args:
                if isinstance(a, BufferRegion):
                    out.append([(str(r.min), str(r.extent)) for r in a.region])

    tvm.ir.visitor.post_order_visit(func.body, visit)
    return out


# -- item 1: short index lists and tuple indices ---------------------------------------------


def test_an_index_list_shorter_than_the_rank_is_a_region() -> None:
    @T.prim_func
    def rows(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        for i in range(4):
            Tx.copy(B[i], A[i])

    assert _regions(rows) == [[("i", "1"), ("0", "8")]] * 2
    a = np.arange(32, dtype="float32").reshape(4, 8)
    b = np.zeros_like(a)
    tvm.compile(rows, target="c")(a, b)
    np.testing.assert_array_equal(b, a)


def test_a_short_index_of_a_rank_3_buffer_covers_the_trailing_dimensions() -> None:
    @T.prim_func
    def plane(A: T.Buffer((2, 3, 5), "float32"), B: T.Buffer((3, 5), "float32")):
        Tx.copy(B[0:3, 0:5], A[1])

    assert _regions(plane)[1] == [("1", "1"), ("0", "3"), ("0", "5")]
    a = np.random.default_rng(0).random((2, 3, 5), dtype="float32")
    b = np.zeros((3, 5), "float32")
    tvm.compile(plane, target="c")(a, b)
    np.testing.assert_array_equal(b, a[1])


def test_python_tuples_and_starred_tuples_are_index_lists() -> None:
    idx = (1, 2)
    whole = tuple(slice(None) for _ in range(2))
    part = (slice(1, 3), slice(0, 4))

    @T.prim_func
    def spread(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        A[idx] = T.float32(1)
        A[(*idx,)] = A[idx] + T.float32(2)
        A[(0, *idx[1:])] = T.float32(4)
        Tx.copy(B[whole], A[whole])
        Tx.copy(B[part], A[part])

    @T.prim_func
    def written_out(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        A[1, 2] = T.float32(1)
        A[1, 2] = A[1, 2] + T.float32(2)
        A[0, 2] = T.float32(4)
        Tx.copy(B[0:4, 0:8], A[0:4, 0:8])
        Tx.copy(B[1:3, 0:4], A[1:3, 0:4])

    assert spread.script().replace("def spread", "def written_out") == written_out.script()
    assert from_source(spread.script()).script() == spread.script()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="A[*idx] is Python 3.11 syntax")
def test_a_starred_index_list_spreads_a_tuple() -> None:
    text = ('@T.prim_func\ndef f(A: T.Buffer((4, 8), "float32")):\n'
            "    A[*idx] = T.float32(1)\n    A[0, *idx[1:]] = T.float32(2)\n")
    func = from_source(text, extra_vars={"idx": (3, 5)})
    assert "A[3, 5] = T.float32(1.0)\n    A[0, 5] = T.float32(2.0)" in func.script()


def test_too_many_indices_and_a_short_store_are_errors() -> None:
    text = ('@T.prim_func\ndef f(A: T.Buffer((4, 8), "float32")):\n'
            "    A[0, 1] = A[0, 1, 2]\n")
    with pytest.raises(DiagnosticError, match=r"buffer A has 2 dimension\(s\) but 3 index"):
        from_source(text)
    text = '@T.prim_func\ndef f(A: T.Buffer((4, 8), "float32")):\n    A[0] = T.float32(1)\n'
    with pytest.raises(DiagnosticError, match="fewer indices name a region, which cannot be "
                                              "assigned") as info:
        from_source(text)
    assert info.value.lineno == 3


@pytest.mark.skipif(sys.version_info < (3, 11), reason="A[*idx] is Python 3.11 syntax")
def test_a_starred_non_tuple_index_is_a_diagnostic() -> None:
    text = ('@T.prim_func\ndef f(A: T.Buffer((4, 8), "float32")):\n'
            "    A[*3] = T.float32(1)\n")
    with pytest.raises(DiagnosticError, match="spreads a tuple or list of indices, not a int"):
        from_source(text)


_TWO_D = ('@T.prim_func\ndef f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):\n'
          "    ")


@pytest.mark.parametrize(("body", "column", "written"), [
    ("B[0, 0] = A[1]", 15, "A[1]"),  # a stored value
    ("B[0, 0] = A[1] + T.float32(1)", 15, "A[1]"),  # an operand
    ("B[0, 0] = -A[1]", 16, "A[1]"),
    ("B[0, 0] = T.exp(A[1])", 21, "A[1]"),  # an argument of a builder that needs a value
    ("if A[1] > T.float32(0):\n        B[0, 0] = T.float32(1)", 8, "A[1]"),  # a condition
    ("x: T.float32 = A[2]\n    B[0, 0] = x", 20, "A[2]"),  # a typed let
    ("B[0] += T.float32(1)", 5, "B[0]"),  # an in-place update
])
def test_a_short_index_list_where_a_value_is_required_is_a_located_error(
        body: str, column: int, written: str) -> None:
    with pytest.raises(DiagnosticError) as info:
        from_source(_TWO_D + body + "\n")
    err = info.value
    row = written[2]
    assert err.message == (
        f"{written} (the region {written[0]}[{row}, 0:8]) is a region, not a value: buffer "
        f"{written[0]} has 2 dimension(s) and 1 index(es) were given, and a shorter index list "
        "names the region over the dimensions it leaves out (an argument of a tile primitive "
        "such as Tx.copy). Give one index per dimension for an element")
    assert (err.lineno, err.offset) == (3, column)  # offset: 1-based


def test_a_region_bound_to_a_name_is_named_where_it_is_used_as_a_value() -> None:
    with pytest.raises(DiagnosticError, match=r"error: x \(the region A\[1, 0:8\]\) is a region, "
                                              r"not a value") as info:
        from_source(_TWO_D + "x = A[1]\n    Tx.copy(B[0], x)\n    B[0, 0] = x\n",
                    extra_vars={"Tx": Tx})
    assert info.value.lineno == 5


def test_a_sliced_region_where_a_value_is_required_is_a_located_error() -> None:
    with pytest.raises(DiagnosticError, match=r"error: A\[0:2, 1\] is a region, not a value: a region "
                                              r"is an argument of a tile primitive") as info:
        from_source(_TWO_D + "B[0, 0] = A[0:2, 1] * T.float32(2)\n")
    assert (info.value.lineno, info.value.offset) == (3, 15)


def test_a_zero_dimensional_buffer_is_indexed_by_the_empty_tuple() -> None:
    @T.prim_func
    def acc(A: T.Buffer((8,), "int32"), B: T.Buffer((), "int32")):
        for i in range(8):
            B[()] = B[()] + A[i]

    text = acc.script()
    assert "B[()] = B[()] + A[i]" in text
    assert from_source(text).script() == text
    a = np.arange(8, dtype="int32")
    b = np.array(5, dtype="int32")
    tvm.compile(acc, target="c")(a, b)
    assert int(b) == 5 + 28


def test_a_slice_with_a_step_is_a_vector_access() -> None:
    @T.prim_func
    def strided(A: T.Buffer((8,), "float32"), B: T.Buffer((2, 4), "float32")):
        B[1, 0:4:1] = A[0:8:2]
        B[0, ::2] = A[1:5:2] + A[4:8:2]
        B[0, 1:2:5] = A[7]  # one lane: the start

    @T.prim_func
    def written_out(A: T.Buffer((8,), "float32"), B: T.Buffer((2, 4), "float32")):
        B[1, T.Ramp(0, 1, 4)] = A[T.Ramp(0, 2, 4)]
        B[0, T.Ramp(0, 2, 2)] = A[T.Ramp(1, 2, 2)] + A[T.Ramp(4, 2, 2)]
        B[0, 1] = A[7]

    text = strided.script()
    assert text.replace("strided", "written_out") == written_out.script()
    assert from_source(text).script() == text
    a = np.arange(8, dtype="float32")
    b = np.zeros((2, 4), "float32")
    tvm.compile(strided, target="c")(a, b)
    np.testing.assert_array_equal(b, [[5, 7, 9, 0], [0, 2, 4, 6]])


@pytest.mark.parametrize(("body", "column", "message"), [
    ("B[0, 0:4:0] = A[0]", 5, "the step of a slice of buffer B must be a positive integer "
                              "constant, got 0"),
    ("B[0, 0:n:2] = A[0]", 5, "a slice of buffer B with a step needs constant bounds (its lanes "
                              "are the vector's), got 0:n"),
    ("B[0, 3:1:2] = A[0]", 5, "the slice 3:1:2 of buffer B is empty"),
    ("B[0, 0:4:2] = A[0:8:2]", 19, "B[0, 0:4:2] stores 2 lanes but the value has 4"),
    ("B[0, 0:4:2] = A[0]", 19, "B[0, 0:4:2] stores 2 lanes but the value has 1; write "
                               "T.Broadcast(v, 2) to store one value in every lane"),
    ("Tx.copy(B[0:2:2], A[0:2])", 15, "buffer regions take no step"),
])
def test_strided_access_errors(body: str, column: int, message: str) -> None:
    text = ('@T.prim_func\ndef f(A: T.Buffer((8,), "float32"), B: T.Buffer((2, 4), "float32"), '
            f"n: T.int32):\n    {body}\n")
    with pytest.raises(DiagnosticError) as info:
        from_source(text, extra_vars={"Tx": Tx})
    assert info.value.message == message
    assert (info.value.lineno, info.value.offset) == (3, column)


@pytest.mark.parametrize(("body", "message"), [
    ("B[0, 0] = A[[1, 2]]", "a list ([1, 2]) is not an index list: write A[1, 2] or "
                            "A[tuple([1, 2])] (a list index would be numpy's fancy indexing, one "
                            "element per entry)"),
    ("idx = [1, 2]\n    B[0, 0] = A[idx]", "a list (idx) is not an index list: write A[*idx] or "
                                           "A[tuple(idx)] (a list index would be numpy's fancy "
                                           "indexing, one element per entry)"),
])
def test_a_list_is_not_an_index_list(body: str, message: str) -> None:
    with pytest.raises(DiagnosticError) as info:
        from_source(_TWO_D + body + "\n")
    assert info.value.message == message and info.value.offset == 17


def test_buffer_getitem_pads_short_index_lists() -> None:
    A = tvm.tirx.decl_buffer((4, 8), "float16", name="A")
    assert isinstance(A[1, 2], BufferLoad)
    row = A[2]
    assert isinstance(row, BufferRegion)
    assert [(r.min.value, r.extent.value) for r in row.region] == [(2, 1), (0, 8)]
    vec = A[1, 0:8:2]  # a stepped slice with every index given: a vector load
    assert isinstance(vec, BufferLoad) and str(vec.dtype) == "float16x4"
    assert str(vec.indices[1]) == "T.Ramp(0, 2, 4)"
    with pytest.raises(ValueError, match="the step of a slice of buffer A must be a positive"):
        A[1, 8:0:-1]


# -- item 2: bare kernel ids, ids defined again ----------------------------------------------


def test_a_bare_kernel_id_statement_shapes_the_launch() -> None:
    @T.prim_func
    def fill(A: T.Buffer((3, 8), "float32")):
        T.device_entry()
        T.cta_id([3])
        tx = T.thread_id([8])
        for r in range(3):
            A[r, tx] = T.float32(r * 10) + T.float32(tx)

    text = fill.script()
    assert "cta_id = T.cta_id([3])" in text
    assert from_source(text).script() == text
    a = np.zeros((3, 8), "float32")
    tvm.compile(fill, target="c")(a)
    np.testing.assert_array_equal(a, np.arange(8) + 10 * np.arange(3)[:, None])


def test_a_kernel_id_defined_again_with_the_same_extent_names_the_same_index() -> None:
    @T.prim_func
    def twice(A: T.Buffer((2, 64), "int32")):
        T.device_entry()
        bx = T.cta_id([2])
        tid = T.thread_id([64])
        tid_again = T.thread_id([64])
        if bx == 0:
            A[bx, tid_again] = tid
        else:
            lane = T.lane_id([32])  # first defined in a branch: for the whole kernel
            inner = T.thread_id([64])
            A[bx, inner] = lane

    a = np.full((2, 64), -1, "int32")
    tvm.compile(twice, target="c")(a)
    np.testing.assert_array_equal(a[0], np.arange(64))
    np.testing.assert_array_equal(a[1], np.arange(64) % 32)


def test_a_kernel_id_defined_again_with_another_extent_is_an_error() -> None:
    @T.prim_func
    def clash(A: T.Buffer((256,), "int32")):
        T.device_entry()
        tid = T.thread_id([256])
        if tid < 128:
            t2 = T.thread_id([128])
            A[t2] = 1

    with pytest.raises(KernelFormError, match=r"T.thread_id is defined twice with different "
                                              r"extents \(\[256\] and \[128\]\).*"
                                              r"T.thread_id_in_wg\(\[128\]\)"):
        tvm.compile(clash, target="c")


def test_an_id_in_a_loop_may_not_use_the_loop_variable() -> None:
    @T.prim_func
    def bad(A: T.Buffer((8,), "int32")):
        T.device_entry()
        T.cta_id([1])
        for i in range(1, 3):
            t = T.thread_id([i * 4])
            A[t] = 1

    with pytest.raises(KernelFormError, match="the extent of T.thread_id uses 'i', which the "
                                              "kernel binds"):
        tvm.compile(bad, target="c")


def test_a_deferred_kernel_id_prints_and_reads_back() -> None:
    @T.prim_func(private=True)
    def ids(A: T.Buffer((64,), "float32")):
        T.device_entry()
        bx = T.cta_id()
        cbx = T.cta_id_in_cluster([2])
        clx = T.cluster_id([4])
        tx = T.thread_id()
        T.warp_id([4])
        T.lane_id([32])
        T.evaluate(bx + cbx + clx + tx)

    text = ids.script()
    assert "    bx = T.cta_id()\n" in text and "    tx = T.thread_id()\n" in text
    assert "    warp_id = T.warp_id([4])\n" in text
    again = from_source(text)
    assert again.script() == text
    assert tvm.ir.structural_equal(again, ids)
    assert [d.deferred for d in _scope_id_defs(again)] == [True, False, False, True, False,
                                                           False]


def _scope_id_defs(func: tvm.tirx.PrimFunc) -> list[tvm.ir.ScopeIdDef]:
    out: list[tvm.ir.ScopeIdDef] = []
    tvm.ir.visitor.post_order_visit(
        func.body, lambda n: out.append(n) if isinstance(n, tvm.ir.ScopeIdDef) else None)
    return out


def test_a_deferred_kernel_id_takes_the_extent_the_others_imply() -> None:
    @T.prim_func
    def from_warps(A: T.Buffer((2, 128), "int32"), W: T.Buffer((128,), "int32")):
        T.device_entry()
        bx = T.cta_id([2])
        T.warp_id([4])
        T.lane_id([32])
        tx = T.thread_id()  # 4 warps of 32: 128 threads
        wg_warp = T.warp_id_in_wg()  # fixed: 4
        A[bx, tx] = tx + bx * 1000
        W[tx] = wg_warp

    a = np.zeros((2, 128), "int32")
    w = np.zeros((128,), "int32")
    tvm.compile(from_warps, target="c")(a, w)
    np.testing.assert_array_equal(a, np.arange(128) + 1000 * np.arange(2)[:, None])
    np.testing.assert_array_equal(w, np.arange(128) // 32 % 4)

    @T.prim_func
    def from_threads(A: T.Buffer((256,), "int32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([256])
        warp = T.warp_id()  # 256 threads: 8 warps
        group = T.warpgroup_id()  # 2 warpgroups
        A[tx] = warp * 10 + group

    a = np.zeros((256,), "int32")
    tvm.compile(from_threads, target="c")(a)
    np.testing.assert_array_equal(a, np.arange(256) // 32 * 10 + np.arange(256) // 128)


def test_a_deferred_cta_id_is_the_clusters_times_their_size() -> None:
    from tvm.tirx.transform.lower_kernel_form import LowerKernelForm

    @T.prim_func
    def k(A: T.Buffer((64,), "float32")):
        T.device_entry()
        bx = T.cta_id()
        cbx = T.cta_id_in_cluster([2])
        clx = T.cluster_id([4])
        tx = T.thread_id()
        T.warp_id([4])
        A[tx % 64] = T.float32(bx + cbx + clx)

    text = LowerKernelForm()(tvm.ir.IRModule({"k": k}))["k"].script()
    assert 'for bx in T.thread_binding(8, thread="blockIdx.x", annotations=' in text
    assert 'for tx in T.thread_binding(128, thread="threadIdx.x"):' in text
    assert "cbx: T.int32 = bx % 2" in text and "clx: T.int32 = bx // 2" in text


def test_a_deferred_id_defined_again_with_extents_takes_them() -> None:
    @T.prim_func
    def twice(A: T.Buffer((64,), "int32")):
        T.device_entry()
        T.cta_id([1])
        t0 = T.thread_id()
        t1 = T.thread_id([64])
        A[t1] = t0

    a = np.full((64,), -1, "int32")
    tvm.compile(twice, target="c")(a)
    np.testing.assert_array_equal(a, np.arange(64))


def test_deferred_ids_still_meet_the_others() -> None:
    @T.prim_func
    def clash(A: T.Buffer((128,), "int32")):
        T.device_entry()
        T.cta_id([32])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id()
        tx = T.thread_id([64])
        A[tx] = 1

    with pytest.raises(KernelFormError, match=r"inconsistent thread counts: T.thread_id\(\[64\]\) "
                                              r"gives 64 threads but T.warp_id\(\[4\]\) \* 32 "
                                              r"gives 128"):
        tvm.compile(clash, target="c")


def test_a_deferred_id_nothing_determines_is_an_error() -> None:
    @T.prim_func
    def alone(A: T.Buffer((128,), "int32")):
        T.device_entry()
        bx = T.cta_id()
        tx = T.thread_id([128])
        A[tx] = bx

    with pytest.raises(KernelFormError, match=r"function alone: T.cta_id\(\) has no extents and "
                                              r"the kernel's other ids do not imply them; give "
                                              r"them, e.g. T.cta_id\(\[n\]\)"):
        tvm.compile(alone, target="c")


def test_a_deferred_id_defines_one_index() -> None:
    text = ('@T.prim_func\ndef f(A: T.Buffer((4,), "int32")):\n    T.device_entry()\n'
            "    bx, by = T.cta_id()\n    T.thread_id([4])\n")
    with pytest.raises(DiagnosticError, match=r"T.cta_id\(\) without extents defines one index, "
                                              r"but 2 names are assigned") as info:
        from_source(text)
    assert info.value.lineno == 4
    text = '@T.prim_func\ndef f(A: T.Buffer((4,), "int32")):\n    tx = T.thread_id([])\n'
    with pytest.raises(DiagnosticError, match=r"T.thread_id\(\[\]\) has no extents"):
        from_source(text)


def test_dispatch_sees_the_extent_of_a_deferred_thread_id() -> None:
    from tvm.tirx.operator.tile_primitive import ThreadInfo

    tx, w, lane = tvm.ir.Var("tx"), tvm.ir.Var("w"), tvm.ir.Var("l")
    info = ThreadInfo.from_defs([tvm.ir.ScopeIdDef("warp_id", [w], [4]),
                                 tvm.ir.ScopeIdDef("lane_id", [lane], [32]),
                                 tvm.ir.ScopeIdDef("thread_id", [tx], None)])
    assert info.tid is tx and info.cta_threads.value == 128
    assert info.var_ranges[tx].extent.value == 128


# -- item 4: top-level names -----------------------------------------------------------------


def test_seed_top_level_names() -> None:
    assert tvm.DataType is tvm.runtime.DataType is tvm.ir.DataType
    assert tvm.DataType("float16").bits == 16
    assert issubclass(tvm.error.DiagnosticError, tvm.error.InternalError)
    assert issubclass(tvm.error.IRVerifyError, tvm.error.InternalError)
    assert tvm.ir.PrimType("float32") == tvm.ir.PrimType("float32")
    assert tvm.DataType("float32") == tvm.ir.PrimType("float32") != tvm.ir.PrimType("int32")
    assert tvm.ir.PointerType("float16", "shared") == \
        tvm.ir.PointerType(tvm.ir.PrimType("float16"), "shared")
    assert isinstance(tvm.ir.TensorMapType(), tvm.ir.Type)


def test_script_parse_errors_are_internal_errors_as_the_seed_catches_them() -> None:
    with pytest.raises(tvm.error.InternalError, match="annotate a script variable"):
        from_source('@T.prim_func\ndef f():\n    x: "nope" = 1\n')


@pytest.mark.parametrize(("alias", "dtype"), [
    ("f16", "float16"), ("bf16", "bfloat16"), ("f32", "float32"), ("f64", "float64"),
    ("i8", "int8"), ("i16", "int16"), ("i32", "int32"), ("i64", "int64"), ("u8", "uint8"),
    ("u16", "uint16"), ("u32", "uint32"), ("u64", "uint64"), ("f8e4m3", "float8_e4m3fn"),
    ("f8e5m2", "float8_e5m2"),
])
def test_short_dtype_aliases(alias: str, dtype: str) -> None:
    t = getattr(T, alias)
    assert t == dtype and t is not getattr(T, dtype)
    lit = t(1)
    assert str(lit.dtype) == dtype


def test_handle_variables_carry_pointer_types() -> None:
    p = T.handle("int32", "global")
    assert isinstance(p, tvm.ir.Var)
    assert p.ty == tvm.ir.PointerType(tvm.ir.PrimType("int32"))
    s = T.handle("float32", "shared")
    assert s.ty.element_type == tvm.ir.PrimType("float32") and s.ty.storage_scope == "shared"
    assert T.handle("tensormap").ty == tvm.ir.TensorMapType()
    assert tvm.ir.Var("n", "int64").ty == tvm.ir.PrimType("int64")


def test_vector_and_let_annotations() -> None:
    @T.prim_func
    def annotated(A: T.Buffer((8,), "float32")):
        v: T.f32[8]
        x: T.let = A[0] + T.float32(1)
        n: T.let[T.int64] = 3
        for i in range(8):
            v[i] = x * T.f32(i)  # noqa: F821 - v is declared by the annotation above
        for i in range(8):
            A[i] = v[i] + T.f32(n)  # noqa: F821 - likewise

    @T.prim_func
    def written_out(A: T.Buffer((8,), "float32")):
        v = T.alloc_local((8,), "float32")
        x: T.float32 = A[0] + T.float32(1)
        n: T.int64 = T.int64(3)
        for i in range(8):
            v[i] = x * T.float32(i)
        for i in range(8):
            A[i] = v[i] + T.float32(n)

    assert annotated.script().replace("annotated", "written_out") == written_out.script()
    a = np.arange(8, dtype="float32")
    tvm.compile(annotated, target="c")(a)
    np.testing.assert_allclose(a, np.arange(8) * 1.0 + 3.0)


# -- item 7: folding as the seed builds expressions ------------------------------------------


def test_operators_fold_bitwise_ops_of_immediates() -> None:
    six, three = T.int32(6), T.int32(3)
    assert (six & three).value == 2 and (six | three).value == 7 and (six ^ three).value == 5
    assert (three << 4).value == 48 and (T.int32(-16) >> 2).value == -4
    assert (~three).value == -4 and (~T.uint8(3)).value == 252
    assert str(T.int8(64) << 1) == "T.shift_left(T.int8(64), T.int8(1))"  # 128: out of range
    assert "shift_left" in str(three << 40)  # past the width: not folded
    assert str(T.bitwise_and(6, 3)) == "T.bitwise_and(6, 3)"  # the named builder builds the call


def test_operators_fold_integer_identities() -> None:
    x = tvm.ir.Var("x", "int32")
    assert (x + 0) is x and (0 + x) is x and (x - 0) is x and (x * 1) is x and (1 * x) is x
    f = tvm.ir.Var("f", "float32")
    assert isinstance(f + 0.0, tvm.ir.Add)  # -0.0 + 0.0 is not -0.0: floats are not folded


def test_an_identity_node_prints_so_it_reads_back() -> None:
    A = tvm.tirx.decl_buffer((4,), "int32", name="A")
    i = tvm.ir.Var("i", "int32")
    body = tvm.ir.BufferStore(A, tvm.ir.Add(i, tvm.ir.IntImm("int32", 0)), [i])
    handle = tvm.ir.Var("A", "handle")
    func = tvm.tirx.PrimFunc([handle], tvm.ir.For(i, 0, 4, tvm.ir.ForKind.SERIAL, body),
                             {handle: A}, name="f")
    text = func.script()
    assert "A[i] = T.Add(i, 0)" in text
    assert from_source(text).script() == text


def test_nary_max_and_min_nest_from_the_left() -> None:
    x = tvm.ir.Var("x", "int32")
    assert str(T.max(x, 1, 2)) == "T.max(T.max(x, 1), 2)"
    assert str(T.min(x, 1, 2, 3)) == "T.min(T.min(T.min(x, 1), 2), 3)"

    @T.prim_func
    def clamp(A: T.Buffer((6,), "int32")):
        for i in range(6):
            A[i] = T.min(T.max(A[i], 0, 1), 4, 9)

    a = np.array([-3, 0, 1, 2, 5, 9], "int32")
    tvm.compile(clamp, target="c")(a)
    np.testing.assert_array_equal(a, [1, 1, 1, 2, 4, 4])


def test_literals_out_of_range_are_errors() -> None:
    with pytest.raises(tvm.error.IRVerifyError, match=r"300 does not fit in int8 \(-128 to 127\)"):
        T.int8(300)
    with pytest.raises(tvm.error.IRVerifyError, match=r"-1 does not fit in uint8"):
        T.uint8(-1)


@pytest.mark.parametrize(("make", "message"), [
    (lambda: T.float16(70000.0), 'float literal 70000.0 does not fit in float16 (-65504.0 to '
                                 '65504.0); use a wider type or a smaller value, or '
                                 'T.float16("inf") for infinity'),
    (lambda: T.float32(-1e39), "float literal -1e+39 does not fit in float32"),
    (lambda: T.bfloat16(1e39), "float literal 1e+39 does not fit in bfloat16"),
    (lambda: T.float8_e5m2(60000.0), "float literal 60000.0 does not fit in float8_e5m2"),
    (lambda: T.float8_e4m3fn(500.0), "float literal 500.0 does not fit in float8_e4m3fn (-448.0 "
                                     "to 448.0); use a wider type or a smaller value"),
    (lambda: tvm.ir.Var("h", "float16") + 1e6, "float literal 1000000.0 does not fit in "
                                               "float16"),
])
def test_float_literals_out_of_range_are_errors(make: object, message: str) -> None:
    with pytest.raises(tvm.error.IRVerifyError) as info:
        make()  # type: ignore[operator]
    assert str(info.value).startswith(message)
    assert "inf" not in str(info.value) or "e4m3fn" not in message


def test_float_literals_at_the_limits_and_infinities_are_values() -> None:
    assert T.float16(65504.0).value == 65504.0 and T.float16(-65504.0).value == -65504.0
    assert T.float8_e4m3fn(448.0).value == 448.0
    assert T.float16("inf").value == float("inf") and T.float16("-inf").value == -float("inf")
    assert T.float64(1e300).value == 1e300

    @T.prim_func
    def lit(A: T.Buffer((2,), "float16")):
        A[0] = T.float16(65504.0)
        A[1] = T.float16("-inf")

    text = lit.script()
    assert 'A[1] = T.float16("-inf")' in text and from_source(text).script() == text
    text = ('@T.prim_func\ndef f(A: T.Buffer((1,), "float16")):\n'
            "    A[0] = T.float16(65536.0)\n")
    with pytest.raises(DiagnosticError, match="float literal 65536.0 does not fit in float16") \
            as info:
        from_source(text)
    assert info.value.lineno == 3


def test_all_and_any_build_conjunctions_and_disjunctions() -> None:
    a, b, c = (tvm.ir.Var(n, "bool") for n in "abc")
    assert str(tvm.tirx.all(a, b, c)) == "a and b and c"
    assert isinstance(tvm.tirx.all(a, b, c).a, tvm.ir.And)  # nested from the left
    assert str(T.any(a, b)) == "a or b" and tvm.tirx.any(a) is a

    @T.prim_func(private=True)
    def flags(A: T.Buffer((6,), "bool"), B: T.Buffer((2,), "bool")):
        regs = T.meta_var([A[k] for k in range(4)])
        B[0] = tvm.tirx.all(*regs)
        B[1] = tvm.tirx.any(*[A[k] for k in range(2, 4)], A[5])

    text = flags.script()
    assert "B[0] = A[0] and A[1] and A[2] and A[3]" in text
    assert "B[1] = A[2] or A[3] or A[5]" in text
    assert from_source(text).script() == text
    a_np = np.array([1, 1, 1, 0, 0, 1], "bool")
    b_np = np.zeros(2, "bool")
    tvm.compile(flags, target="c")(a_np, b_np)
    np.testing.assert_array_equal(b_np, [False, True])


def test_all_and_any_need_conditions() -> None:
    with pytest.raises(TypeError, match=r"tvm.tirx.all\(\) needs at least one condition"):
        tvm.tirx.all()
    with pytest.raises(TypeError, match=r"tvm.tirx.any\(\): argument 1 is a int32 value, not a "
                                        r"condition \(bool\); compare it, e.g. x != 0"):
        tvm.tirx.any(tvm.ir.Var("p", "bool"), tvm.ir.Var("n", "int32"))


def test_the_classic_attr_builder_names_node_key_and_value() -> None:
    @T.prim_func
    def classic(A: T.Buffer((4,), "float32")):
        with T.attr(0, "pragma_region", 1):
            A[0] = T.float32(1)
        T.attr(0, "pragma_rest", 2)
        A[1] = T.float32(2)

    @T.prim_func
    def written_out(A: T.Buffer((4,), "float32")):
        with T.attr({"pragma_region": 1}, node=0):
            A[0] = T.float32(1)
        T.attr({"pragma_rest": 2}, node=0)
        A[1] = T.float32(2)

    text = classic.script()
    assert text.replace("classic", "written_out") == written_out.script()
    assert 'with T.attr({"pragma_region": 1}, node=0):' in text
    assert tvm.ir.structural_equal(from_source(text), classic)
    a = np.zeros(4, "float32")
    tvm.compile(classic, target="c")(a)
    np.testing.assert_array_equal(a, [1, 2, 0, 0])


@pytest.mark.parametrize(("call", "message"), [
    ('T.attr(0, 1, 2)', "T.attr(node, key, value): the key must be a string, got 1"),
    ('T.attr(0, "k")', 'T.attr takes a dict (T.attr({"key": 1})) or a node, a key and a value '
                       '(T.attr(0, "key", 1)); got 2 positional arguments'),
    ('T.attr(0, "k", 1, node=1)', "T.attr(node, key, value) names its node first; node= is for "
                                  'the dict form T.attr({"key": value}, node=...)'),
])
def test_classic_attr_errors(call: str, message: str) -> None:
    with pytest.raises(DiagnosticError) as info:
        from_source(f"@T.prim_func\ndef f():\n    {call}\n    T.evaluate(0)\n")
    assert info.value.message == message and info.value.lineno == 3


def test_the_classic_immediate_constructors() -> None:
    assert tvm.ir.structural_equal(T.IntImm("int8", 10), tvm.ir.IntImm("int8", 10))
    assert str(T.FloatImm("float16", 0.88)) == "T.float16(0.88)"
    assert isinstance(T.StringImm("hi"), tvm.ir.StringImm)

    @T.prim_func
    def consts(A: T.Buffer((2,), "float16")):
        ten: T.let = T.IntImm("int32", 10)
        A[0] = T.FloatImm("float16", 1.5) * T.float16(ten)

    text = consts.script()
    assert "ten: T.int32 = 10" in text
    assert 'A[0] = T.float16(1.5) * T.Cast("float16", ten)' in text
    assert from_source(text).script() == text


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: T.IntImm("int8", 300), tvm.error.IRVerifyError, "integer literal 300 does not fit "
                                                             "in int8"),
    (lambda: T.FloatImm("float16", 1e6), tvm.error.IRVerifyError, "float literal 1000000.0 does "
                                                                  "not fit in float16"),
    (lambda: T.IntImm("float32", 1), TypeError, "T.IntImm makes an integer or bool immediate, "
                                                "not a float32 one; use T.FloatImm for floats"),
    (lambda: T.FloatImm("int32", 1), TypeError, "T.FloatImm makes a float immediate, not a int32 "
                                                "one; use T.IntImm for integers"),
])
def test_classic_immediate_errors(make: object, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        make()  # type: ignore[operator]
    assert str(info.value).startswith(message)


def test_launch_thread_is_a_thread_bound_loop() -> None:
    @T.prim_func
    def classic(A: T.Buffer((2, 4), "int32")):
        bx = T.launch_thread("blockIdx.x", 2)
        with T.launch_thread("threadIdx.x", 4) as tx:
            A[bx, tx] = bx * 10 + tx

    @T.prim_func
    def written_out(A: T.Buffer((2, 4), "int32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(4, thread="threadIdx.x"):
                A[bx, tx] = bx * 10 + tx

    text = classic.script()
    assert text.replace("classic", "written_out") == written_out.script()
    assert from_source(text).script() == text


@pytest.mark.parametrize(("stmt", "message"), [
    ('x = T.launch_thread("warp.x", 4)', "T.launch_thread: unknown thread axis 'warp.x'; expected "
                                         "one of blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, "
                                         "threadIdx.y, threadIdx.z"),
    ('x, y = T.launch_thread("blockIdx.x", 4)', "T.launch_thread defines one thread index"),
    ('x = T.launch_thread("blockIdx.x", 2.5)', "loop extent must be an integer, got a float "
                                               "value"),
])
def test_launch_thread_errors(stmt: str, message: str) -> None:
    with pytest.raises(DiagnosticError) as info:
        from_source(f"@T.prim_func\ndef f():\n    {stmt}\n    T.evaluate(0)\n")
    assert info.value.message == message and info.value.lineno == 3


def test_unnamed_launch_thread_forms_bind_the_axis_over_the_block() -> None:
    """The seed's bare `T.launch_thread(axis, n)` and `with T.launch_thread(axis, n):` (no
    `as`): the thread loop over the rest of the block / the with-block, named after the axis."""
    text = ('@T.prim_func\ndef f(A: T.Buffer((64,), "float32")):\n'
            '    with T.launch_thread("blockIdx.x", 2):\n'
            '        T.launch_thread("threadIdx.x", 32)\n'
            '        A[3] = T.float32(1.0)\n'
            '    A[0] = T.float32(2.0)\n')
    func = from_source(text)
    printed = func.script()
    assert ('    for blockIdx_x in T.thread_binding(2, thread="blockIdx.x"):\n'
            '        for threadIdx_x in T.thread_binding(32, thread="threadIdx.x"):\n'
            '            A[3] = T.float32(1.0)\n'
            '    A[0] = T.float32(2.0)\n') in printed
    assert from_source(printed).script() == printed


def test_with_accepts_only_scope_builders() -> None:
    class NotAScope:
        pass

    text = "@T.prim_func\ndef f():\n    with NotAScope():\n        T.evaluate(0)\n"
    with pytest.raises(DiagnosticError, match="scope builders \\(classes with __tvm_scope__"):
        from_source(text, extra_vars={"NotAScope": NotAScope})


# -- item 5: comprehensions and lambda are evaluated in Python -------------------------------


def test_comprehensions_and_lambda_are_python_values() -> None:
    @T.prim_func
    def meta(A: T.Buffer((8,), "float32")):
        evens = T.meta_var([i * 2 for i in range(4)])
        square = lambda v: v * v  # noqa: E731 - the seed's meta-programming form
        table = T.meta_var({k: k + 1 for k in range(3)})
        for i in range(4):
            A[i] = square(A[i]) + T.float32(sum(k for k in range(3)))
        A[evens[3]] = T.float32(table[2])

    a = np.arange(8, dtype="float32")
    want = a.copy()
    want[:4] = want[:4] ** 2 + 3
    want[6] = 3
    tvm.compile(meta, target="c")(a)
    np.testing.assert_array_equal(a, want)
    text = meta.script()
    assert "A[6] = T.float32(3.0)" in text and "lambda" not in text


def test_a_comprehension_over_script_variables_builds_ir() -> None:
    @T.prim_func
    def rows(A: T.Buffer((3, 4), "float32")):
        for r in range(3):
            vals = T.meta_var([A[r, j] for j in range(4)])
            A[r, 0] = vals[1] + vals[2] + vals[3]

    a = np.arange(12, dtype="float32").reshape(3, 4)
    want = a.copy()
    want[:, 0] = a[:, 1:].sum(axis=1)
    tvm.compile(rows, target="c")(a)
    np.testing.assert_array_equal(a, want)
