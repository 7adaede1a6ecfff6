"""Script meta-programming of the seed's tests (issue 28, item 5): ``while`` loops (a ``While``
statement through printer, parser and the C-style codegens) and ``def`` helpers inside a
script (plain or ``@T.inline``), expanded where they are called."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.error import DiagnosticError
from tvm.ir import While
from tvm.ir.structural import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T


def _collatz() -> tvm.tirx.PrimFunc:
    @T.prim_func
    def collatz(N: T.Buffer((16,), "int32"), steps: T.Buffer((16,), "int32")):
        for k in range(16):
            n = T.alloc_buffer((1,), "int32", scope="local")
            n[0] = N[k]
            steps[k] = 0
            while n[0] != 1:
                if n[0] % 2 == 0:
                    n[0] = n[0] // 2
                else:
                    n[0] = 3 * n[0] + 1
                steps[k] = steps[k] + 1
                if steps[k] >= 20:
                    break

    return collatz


def _collatz_steps(n: int, limit: int) -> int:
    steps = 0
    while n != 1 and steps < limit:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_a_while_loop_prints_parses_back_and_runs() -> None:
    f = _collatz()
    text = f.script()
    assert "        while n[0] != 1:\n" in text and "                T.break_loop()\n" in text
    assert structural_equal(from_source(text), f)
    n = np.arange(1, 17, dtype="int32")
    steps = np.zeros(16, "int32")
    tvm.compile(f, target="c")(n, steps)
    assert steps.tolist() == [_collatz_steps(int(k), 20) for k in n]


def test_a_while_condition_is_checked_at_every_iteration_in_checked_mode() -> None:
    @T.prim_func
    def scan(A: T.Buffer((8,), "int32"), out: T.Buffer((1,), "int32")):
        i = T.alloc_buffer((1,), "int32", scope="local")
        i[0] = 0
        while A[i[0]] != 0:
            i[0] = i[0] + 1
        out[0] = i[0]

    ex = tvm.compile(scan, target="c", bounds_check=True)
    src = ex.inspect_source()
    assert "while (1) {" in src and "if (!(A[i[0]] != 0)) break;" in src
    out = np.zeros(1, "int32")
    ex(np.array([3, 2, 1, 0, 5, 5, 5, 5], "int32"), out)
    assert out[0] == 3
    with pytest.raises(tvm.error.BoundsCheckError, match="index"):
        ex(np.ones(8, "int32"), out)  # no zero: the scan runs off the end


def test_a_while_condition_must_be_a_bool() -> None:
    src = '''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    while A[0]:
        A[0] = A[0] - 1
'''
    with pytest.raises(DiagnosticError, match="condition must be a bool.*while n\\[0\\] != 0") \
            as info:
        from_source(src)
    assert info.value.lineno == 4
    with pytest.raises(TypeError, match="must be a bool"):
        While(tvm.ir.const(1, "int32"), tvm.ir.SeqStmt([]))


def test_nested_helpers_expand_where_they_are_called() -> None:
    scale = 3.0

    @T.prim_func
    def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        def axpy(i, j, alpha=scale):
            B[i, j] = B[i, j] + alpha * A[i, j]

        @T.inline
        def square(x):
            return x * x

        for i in range(4):
            for j in range(8):
                axpy(i, j)
                B[i, j] = B[i, j] + square(A[i, j])
                axpy(i, j, alpha=T.float32(1))

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        for i in range(4):
            for j in range(8):
                B[i, j] = B[i, j] + T.float32(3) * A[i, j]
                B[i, j] = B[i, j] + A[i, j] * A[i, j]
                B[i, j] = B[i, j] + T.float32(1) * A[i, j]

    assert structural_equal(f, expected.with_attr("global_symbol", "f"))
    a = np.random.default_rng(0).random((4, 8), dtype="float32")
    b = np.zeros((4, 8), "float32")
    tvm.compile(f, target="c")(a, b)
    np.testing.assert_allclose(b, 4 * a + a * a, rtol=1e-6)


def test_a_helper_sees_names_bound_after_its_definition_and_can_nest() -> None:
    @T.prim_func
    def f(A: T.Buffer((8,), "int32")):
        def put(i, *, offset=0):
            A[i] = base + i + offset  # `base` is bound below, before the call (a closure)

        def put_pair(i):
            put(i)
            put(i + 1, offset=0)

        base = 100
        for k in range(4):
            put_pair(2 * k)

    a = np.zeros(8, "int32")
    tvm.compile(f, target="c")(a)
    assert a.tolist() == list(range(100, 108))


def test_helper_errors_are_located() -> None:
    recursive = '''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    def again(i):
        again(i)
    again(0)
'''
    with pytest.raises(DiagnosticError, match="expands more than 32 levels"):
        from_source(recursive)
    wrong_args = '''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    def put(i, v):
        A[i] = v
    put(0)
'''
    with pytest.raises(DiagnosticError, match="put\\(\\): missing a required argument") as info:
        from_source(wrong_args)
    assert info.value.lineno == 6
    decorated = '''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    @T.prim_func
    def inner(i):
        A[i] = 0
'''
    with pytest.raises(DiagnosticError, match="without a decorator, or with @T.inline"):
        from_source(decorated)
