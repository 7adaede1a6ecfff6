"""Kernels that used to crash the compiler or reach the C compiler (issue 16): the analyzer
bounds products without recursing forever, and ``tvm.compile`` runs the verifier first, which
reports float indices, bad extents and provably out-of-bounds accesses at the script's line."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.arith import Analyzer
from tvm.error import IRVerifyError
from tvm.ir import Buffer, BufferStore, For, ForKind, IntImm, PrimFunc, Range, Var
from tvm.script import from_source
from tvm.script import tirx as T

HEADER = "from tvm.script import tirx as T\n\n@T.prim_func\n"


def _kernel(body: str, params: str = 'A: T.Buffer((16,), "float32")') -> str:
    lines = "".join(f"    {line}\n" for line in body.splitlines())
    return f"{HEADER}def f({params}):\n{lines}"


def _verify_error(body: str, params: str = 'A: T.Buffer((16,), "float32")') -> str:
    func = from_source(_kernel(body, params), filename="k.py")
    with pytest.raises(IRVerifyError) as info:
        tvm.compile(func, target="c")
    return str(info.value)


def test_product_of_loop_variables_in_an_index_compiles_and_runs() -> None:
    @T.prim_func
    def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(32):
            for j in range(32):
                B[(i * j) // 16] = A[(i * j) // 16] + 1.0

    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    tvm.compile(f, target="c")(a, b)
    expected = np.zeros(64, "float32")
    for i in range(32):
        for j in range(32):
            expected[(i * j) // 16] = a[(i * j) // 16] + 1
    np.testing.assert_array_equal(b, expected)


def test_analyzer_bounds_a_product_of_variables() -> None:
    i, j = Var("i"), Var("j")
    ana = Analyzer()
    ana.bind(i, Range(0, 32))
    ana.bind(j, Range(0, 32))
    bound = ana.const_int_bound(i * j)
    assert (bound.min_value, bound.max_value) == (0, 961)
    assert ana.can_prove((i * j) // 16 < 61)


def test_float_index_is_rejected_by_the_verifier_at_its_line() -> None:
    message = _verify_error("A[T.float32(1.5)] = 1.0")
    assert "k.py:5:5: error: BufferStore to `A` uses a float32 index; indices must be integers" in message
    assert "A[T.float32(1.5)] = 1.0\n" in message  # the source line, then a caret


def test_float_load_index_is_rejected_too() -> None:
    message = _verify_error("x = T.float32(2.0)\nA[0] = A[x]")
    assert "k.py:6:5: error: BufferLoad from `A` uses a float32 index" in message


@pytest.mark.parametrize(("body", "line", "index", "value"), [
    ("for i in range(17):\n    A[i] = 1.0", 6, "i", 16),
    ("for i in range(16):\n    A[i + 1] = 2.0", 6, "i + 1", 16),
    ("for i in range(16):\n    A[15 - i - 1] = 2.0", 6, "15 - i - 1", -1),
    ("A[16] = 1.0", 5, "16", 16),
    ("for i, j in T.grid(4, 5):\n    A[i * 4 + j] = 1.0", 6, "i * 4 + j", 16),
    ("T.device_entry()\ntx = T.thread_id([32])\nA[tx] = 1.0", 7, "tx", 31),
    ("B = T.alloc_buffer((8,), \"float32\")\nfor i in range(8):\n    A[i] = B[i * 2]", 7,
     "i * 2", 14),
])
def test_provably_out_of_bounds_accesses_are_located(body: str, line: int, index: str,
                                                     value: int) -> None:
    message = _verify_error(body)
    assert f"k.py:{line}:" in message
    assert f"is out of bounds: index `{index}` reaches {value}" in message


def test_out_of_bounds_names_dimension_and_shape() -> None:
    message = _verify_error("for i in range(8):\n    A[i, 4] = 1.0", 'A: T.Buffer((8, 4), "float32")')
    assert ("BufferStore to `A` is out of bounds: index `4` reaches 4 but dimension 1 of shape "
            "(8, 4) has extent 4") in message


@pytest.mark.parametrize("body", [
    # guarded by a condition
    "for i in range(20):\n    if i < 16:\n        A[i] = 1.0",
    "for i in range(20):\n    A[T.min(i, 15)] = 1.0",
    "for i in range(20):\n    A[0] = T.if_then_else(i < 16, A[i], 0.0)",
    "for i in range(20):\n    A[0] = T.Select(i < 16, A[i], 0.0)",
    # the loop can leave early
    "for i in range(20):\n    if i >= 16:\n        T.break_loop()\n    A[i] = 1.0",
    "T.device_entry()\ntx = T.thread_id([32])\nif tx >= 16:\n    T.thread_return()\nA[tx] = 1.0",
    # never runs, or not affine: nothing is proven
    "for i in range(0):\n    A[100] = 1.0",
    "for i in range(4):\n    for j in range(4):\n        A[i * j] = 1.0",
])
def test_accesses_that_may_be_in_bounds_are_accepted(body: str) -> None:
    assert tvm.ir.verify_errors(from_source(_kernel(body))) == []


def test_symbolic_extents_prove_nothing() -> None:
    tvm.compile(from_source(_kernel("for i in range(n):\n    A[i] = 1.0",
                                    'A: T.Buffer((16,), "float32"), n: T.int32')), target="c")


def test_bad_extents_of_ir_built_in_python_are_reported() -> None:
    a = Var("a", "handle")
    i = Var("i")
    A = Buffer("A", (4,), "float32")
    object.__setattr__(A, "shape", [IntImm("int32", 0)])
    errors = tvm.ir.verify_errors(PrimFunc([a], For(i, 0, 1, ForKind.SERIAL,
                                                    BufferStore(A, 1.0, [0])), {a: A}))
    assert "buffer `A`: extent 0 is 0; buffer extents must be at least 1" in errors


def test_out_of_range_immediate_smuggled_into_ir_is_reported() -> None:
    a = Var("a", "handle")
    A = Buffer("A", (4,), "int32")
    value = IntImm("int32", 1)
    object.__setattr__(value, "value", 2**40)
    errors = tvm.ir.verify_errors(PrimFunc([a], BufferStore(A, value, [0]), {a: A}))
    assert "integer literal 1099511627776 does not fit in int32" in errors


def test_verifier_errors_without_a_location_keep_their_text() -> None:
    a = Var("a", "handle")
    A = Buffer("A", (4,), "float32")
    errors = tvm.ir.verify_errors(PrimFunc([a], BufferStore(A, 1.0, [Var("q")]), {a: A}))
    assert errors == ["variable `q` is used before it is defined"]


def test_a_tile_call_no_variant_can_lower_is_a_tvm_error() -> None:
    text = ('from tvm.script import tirx as T\n@T.prim_func\n'
            'def f(A: T.Buffer((1, 64), "float32"), S: T.Buffer((16,), "float32")):\n'
            '    T.device_entry()\n    bx = T.cta_id([1])\n    tx = T.thread_id([64])\n'
            '    T.cta.sum(S, A)\n')
    with pytest.raises(tvm.error.DispatchError, match="TIRx schedule dispatch failed") as info:
        tvm.compile(from_source(text), target="c")
    assert isinstance(info.value, tvm.error.TVMError) and isinstance(info.value, RuntimeError)


def test_constant_integer_division_by_zero_is_located() -> None:
    message = _verify_error("A[0] = T.Cast(\"float32\", n // 0)", 'A: T.Buffer((16,), "float32"), '
                                                                  "n: T.int32")
    assert "k.py:5:5: error: integer division by zero: `n // 0`" in message


def test_a_parameter_layout_reaching_past_its_shape_is_rejected() -> None:
    # found by the fuzzer: the argument check passes a (4, 8) array, the kernel wrote at 2**31
    text = ('from tvm.script import tirx as T\n@T.prim_func\n'
            'def f(d: T.handle, s: T.handle):\n'
            '    D = T.match_buffer(d, (4, 8), "float32", '
            'layout=T.TileLayout(T.S[(4, 8):(1, 2147483647)]))\n'
            '    S = T.match_buffer(s, (4, 8), "float32")\n'
            '    T.tile.copy(D, S)\n')
    with pytest.raises(IRVerifyError, match=r"parameter buffer `D`: its layout reaches element "
                                            r"15032385532 but an argument of shape \(4, 8\) "
                                            r"holds 32"):
        tvm.compile(from_source(text), target="c")


def test_a_parameter_with_an_element_offset_is_rejected() -> None:
    message = _verify_error("for i in range(4):\n    A[i] = 1.0",
                            'A: T.Buffer((4,), "float32", elem_offset=100000000)')
    assert ("k.py:4:7: error: parameter buffer `A` has elem_offset 100000000; an argument array "
            "starts at its first element") in message
