"""The classic thread intrinsics in core (issue 28): the builders of ``T.tvm_storage_sync``,
``T.tvm_warp_shuffle(_up/_down)`` and ``T.tvm_access_ptr`` check their arguments, print and parse
back; ``Buffer.access_ptr`` is an element's address, usable on the host."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.error import CodegenError
from tvm.ir.structural import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T


def test_shuffle_takes_its_type_from_the_value() -> None:
    v = tvm.ir.Var("v", "float16")
    call = T.tvm_warp_shuffle_down(T.uint32(0xFFFFFFFF), v, 2, 16, 32)
    assert str(call.dtype) == "float16"
    with pytest.raises(TypeError, match="delta must be an integer"):
        T.tvm_warp_shuffle_up(T.uint32(0xFFFFFFFF), v, T.float32(1), 32, 32)


def test_storage_sync_scopes() -> None:
    assert T.tvm_storage_sync("shared.dyn").args[0].value == "shared.dyn"
    with pytest.raises(ValueError, match="'shared', 'shared.dyn', 'warp', 'global'"):
        T.tvm_storage_sync("cta")


def test_access_ptr_needs_a_type_annotation_and_a_data_pointer() -> None:
    A = tvm.ir.Buffer("A", (4, 4), "int32", elem_offset=8)
    call = A.access_ptr("w", offset=4)
    assert call.args[2].value == 12  # the buffer's own offset first
    assert call.args[3].value == 12 and call.args[4].value == 2
    vec = tvm.ir.Buffer("V", (8, 16), "float32").access_ptr("r", content_lanes=4, offset=16)
    assert str(vec.args[0].dtype) == "float32x4"  # a pointer to vectors: counts in vectors
    assert (vec.args[2].value, vec.args[3].value) == (4, 28)
    with pytest.raises(ValueError, match="content_lanes must be >= 1"):
        A.access_ptr("r", content_lanes=0)
    with pytest.raises(TypeError, match="T.type_annotation"):
        T.tvm_access_ptr("int32", A.data, 0, 4, 1)
    with pytest.raises(TypeError, match="data pointer"):
        T.tvm_access_ptr(T.type_annotation("int32"), 0, 0, 4, 1)


def _clear_rows() -> tvm.tirx.PrimFunc:
    @T.prim_func
    def clear(A: T.Buffer((4, 8), "float32"), row: T.int32):
        T.evaluate(T.call_extern("handle", "memset", A.access_ptr("w", offset=row * 8), 0, 32))

    return clear


def test_access_ptr_prints_and_runs_on_the_host() -> None:
    f = _clear_rows()
    text = f.script()
    assert 'T.tvm_access_ptr(T.type_annotation("float32"), A.data, row * 8, 32 - row * 8, 2)' \
        in text
    assert structural_equal(from_source(text), f)
    a = np.ones((4, 8), "float32")
    tvm.compile(f, target="c")(a, 2)
    want = np.ones((4, 8), "float32")
    want[2] = 0
    np.testing.assert_array_equal(a, want)


def test_a_barrier_on_the_host_names_the_op_and_the_target() -> None:
    @T.prim_func
    def sync(A: T.Buffer((4,), "int32")):
        A[0] = 1
        T.tvm_storage_sync("shared")

    with pytest.raises(CodegenError, match="tirx.tvm_storage_sync.*target 'c'"):
        tvm.compile(sync, target="c")


def test_elem_offset_of_follows_the_layout_or_the_strides() -> None:
    from tvm.ir.layout import S, TileLayout

    plain = tvm.ir.Buffer("P", (4, 6), "float16", elem_offset=40)
    assert plain.elem_offset_of([2, 3]).value == 15  # row-major; the buffer's own offset apart
    strided = tvm.ir.Buffer("Q", (4, 6), "float16", strides=[8, 1])
    assert strided.elem_offset_of([2, 3]).value == 19
    # columns outer: element (i, j) at 4 j + i
    tiled = tvm.ir.Buffer("L", (4, 6), "float16", layout=TileLayout(S[(4, 6):(1, 4)]))
    assert tvm.arith.Analyzer().simplify(tiled.elem_offset_of([2, 3])).value == 14
    call = plain.access_ptr("r", offset=plain.elem_offset_of([1, 0]))
    assert call.args[2].value == 46
    with pytest.raises(IndexError, match=r"P\.elem_offset_of: 1 index\(es\) for a buffer of 2"):
        plain.elem_offset_of([1])


def test_decl_buffer_takes_its_data_as_third_argument() -> None:
    @T.prim_func
    def f(A: T.Buffer((64,), "uint8")):
        B = T.decl_buffer((16,), "float32", A.data, elem_offset=4)
        B[0] = T.float32(1)

    decl = f.body if not hasattr(f.body, "seq") else f.body.seq[0]
    assert decl.buffer.data is f.buffer_map[f.params[0]].data
