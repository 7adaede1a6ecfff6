"""The seed's printed spellings: config entries as keywords of a tile call,
``T.alloc_local`` for register buffers, ``T.TensorMap()`` parameters; each parses back equal."""

from __future__ import annotations

from typing import no_type_check

import pytest

from tvm.ir import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx


def _roundtrip(f) -> str:  # type: ignore[no-untyped-def]
    text = f.script()
    back = from_source(text)
    assert structural_equal(back, f)
    assert back.script() == text
    return text


@no_type_check
def test_extra_keywords_of_a_tile_call_are_config_entries() -> None:
    @T.prim_func
    def f(X: T.Buffer((64,), "float32"), Y: T.Buffer((64,), "float32")):
        T.device_entry()
        Tx.cta.mul(Y[0:32], X[32:64], T.float32(0.5), stages=3, note="fast")
        Tx.exp(Y[32:64], X[0:32], dispatch="simt", config={"unroll": 4}, tag=1)

    calls = [s for s in f.body.seq if hasattr(s, "config")]
    assert calls[0].config == {"stages": 3, "note": "fast"}
    assert calls[1].config == {"unroll": 4, "tag": 1} and calls[1].dispatch == "simt"
    text = _roundtrip(f)
    assert 'T.cta.mul(Y[0:32], X[32:64], T.float32(0.5), stages=3, note="fast")' in text
    assert 'T.tile.exp(Y[32:64], X[0:32], dispatch="simt", unroll=4, tag=1)' in text


@no_type_check
def test_config_keys_that_cannot_be_keywords_stay_in_config() -> None:
    @T.prim_func
    def f(X: T.Buffer((8,), "float32")):
        T.device_entry()
        Tx.fill(X, T.float32(2), config={"cache-hint": 1, "lambda": 2, "Value": 3, "ok": 4,
                                         "workspaces": 5})

    text = _roundtrip(f)
    # not identifiers, Python keywords and (near) spellings of a parameter or of dispatch=,
    # workspace=, config= are kept in config=
    assert ('ok=4, config={"cache-hint": 1, "lambda": 2, "Value": 3, "workspaces": 5}'
            in text)


def test_a_misspelt_parameter_is_not_taken_for_a_config_entry() -> None:
    from tvm.ir import Buffer

    a = Buffer("A", (4,), "float32")
    with pytest.raises(TypeError, match=r"Tx.gemm got keyword argument 'transpose_a'; did you "
                                        r"mean 'transpose_A'\?"):
        Tx.gemm(a, a, a, transpose_a=True)
    with pytest.raises(TypeError, match="got keyword argument 'dispath'; did you mean 'dispatch'"):
        Tx.copy(a, a, dispath="simt")


@no_type_check
def test_register_buffers_print_as_alloc_local() -> None:
    @T.prim_func
    def f(X: T.Buffer((8,), "float32")):
        T.device_entry()
        acc = T.alloc_local((2, 4), "float32")
        flag = T.alloc_buffer((1,), "int32", scope="local")
        stage = T.alloc_shared((8,), "float32")
        flag[0] = 1
        acc[1, 3] = X[flag[0]]
        stage[0] = acc[1, 3]
        X[0] = stage[0]

    text = _roundtrip(f)
    assert 'acc = T.alloc_local((2, 4), "float32")' in text
    assert "flag: T.int32\n" in text  # one local value: the seed's scalar annotation
    assert 'stage = T.alloc_buffer((8,), "float32", scope="shared")' in text


@no_type_check
def test_tensor_map_parameters_print_as_the_seed_writes_them() -> None:
    @T.prim_func
    def f(tm_a: T.TensorMap, tm_b: T.TensorMap()):
        T.evaluate(T.address_of(tm_a))
        T.evaluate(T.address_of(tm_b))

    assert "def f(tm_a: T.TensorMap(), tm_b: T.TensorMap()):" in _roundtrip(f)


@no_type_check
def test_a_unary_op_without_src_works_in_place_and_prints_so() -> None:
    import numpy as np

    import tvm

    @T.prim_func
    def f(X: T.Buffer((8,), "float32")):
        Tx.sqrt(X[0:4])
        Tx.neg(X[4:8], X[4:8], scale=T.float32(2))

    first = f.body.seq[0]
    assert first.args[0] is first.args[1] or structural_equal(first.args[0], first.args[1])
    text = _roundtrip(f)
    assert "T.tile.sqrt(X[0:4])\n" in text
    assert "T.tile.neg(X[4:8], X[4:8], None, T.float32(2.0))" in text
    x = np.array([4, 9, 16, 25, 1, 2, 3, 4], "float32")
    tvm.compile(f, target="c")(x)
    np.testing.assert_allclose(x, [2, 3, 4, 5, -2, -4, -6, -8])


@no_type_check
def test_grid_takes_start_stop_pairs_and_one_name_for_all_loops() -> None:
    import numpy as np

    import tvm

    @T.prim_func
    def f(X: T.Buffer((4, 6), "int32")):
        for ij in T.grid(4, (1, 5)):
            X[ij[0], ij[1]] = ij[0] * 10 + ij[1]

    outer = f.body
    assert outer.loop_var.name == "ij_0" and int(outer.extent) == 4
    assert outer.body.loop_var.name == "ij_1" and (int(outer.body.min), int(outer.body.extent)) == (1, 4)
    _roundtrip(f)
    x = np.zeros((4, 6), "int32")
    tvm.compile(f, target="c")(x)
    want = np.zeros((4, 6), "int32")
    for i in range(4):
        for j in range(1, 5):
            want[i, j] = i * 10 + j
    np.testing.assert_array_equal(x, want)


def test_a_grid_range_is_a_pair() -> None:
    from tvm.error import DiagnosticError

    text = ("from tvm.script import tirx as T\n\n@T.prim_func\ndef f(X: T.Buffer((4,), \"int32\")):\n"
            "    for i in T.grid((0, 2, 4)):\n        X[i] = 0\n")
    with pytest.raises(DiagnosticError, match=r"a T.grid range is \(start, stop\), got 3 values"):
        from_source(text)


@no_type_check
def test_an_index_function_predicate_is_ir_that_prints_and_runs() -> None:
    import numpy as np

    import tvm
    from tvm.ir.expr import IndexLambda

    @T.prim_func
    def f(X: T.Buffer((3, 4), "float32"), Y: T.Buffer((3, 4), "float32")):
        Tx.select(Y, X, T.float32(-1), lambda r, c: r + 1 < c)

    call = f.body
    pred = call.args[3]
    assert isinstance(pred, IndexLambda) and [p.name for p in pred.params] == ["r", "c"]
    text = _roundtrip(f)
    assert "T.tile.select(Y, X, T.float32(-1.0), lambda r, c: r + 1 < c)" in text
    x = np.arange(12, dtype="float32").reshape(3, 4)
    y = np.zeros((3, 4), "float32")
    tvm.compile(from_source(text), target="c")(x, y)
    r, c = np.indices((3, 4))
    np.testing.assert_array_equal(y, np.where(r + 1 < c, x, -1))


def test_an_index_function_of_the_wrong_arity_is_an_error() -> None:
    from tvm.ir import Buffer

    a = Buffer("A", (3, 4), "float32")
    with pytest.raises(TypeError, match="an index function must take 2 indices"):
        Tx.select(a, a, a, lambda i: i < 2)


@no_type_check
def test_replicas_can_be_written_with_t_r() -> None:
    from tvm.tirx.layout import R

    assert T.R is R

    @T.prim_func
    def f():
        T.device_entry()
        A = T.alloc_buffer((16,), "float32", scope="shared",
                           layout=T.TileLayout(T.S[16 : 2 @ T.laneid] + T.R[2 : 1 @ T.laneid]))
        A[0] = T.float32(0)

    text = _roundtrip(f)  # printed in the project's own replica= form
    assert "replica=T.S[(2,):(1 @ T.laneid,)]" in text


@no_type_check
def test_a_let_typed_by_a_var_takes_its_pointer_type() -> None:
    from tvm.ir import PointerType, PrimType

    @T.prim_func
    def f():
        T.device_entry()
        smem = T.alloc_shared([64], "float16")
        p: T.let[T.Var(name="p", dtype=PointerType(PrimType("uint64")))] = T.reinterpret(
            "handle", smem.access_ptr("rw"))
        n: T.let[T.Var(name="n", dtype="int64")] = T.int64(3)
        T.evaluate(p)
        T.evaluate(n)

    let_p = f.body.seq[2]
    assert let_p.var.name == "p" and str(let_p.var.dtype) == "handle"
    assert str(let_p.var.ptr_dtype) == "uint64"
    assert str(let_p.body.var.dtype) == "int64"
    _roundtrip(f)
