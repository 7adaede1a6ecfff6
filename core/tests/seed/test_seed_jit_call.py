"""Calling a ``@T.jit`` function (issue 28): ``f(n=64)`` is ``f.specialize(n=64)``; ``f(a,
n=64)`` compiles that PrimFunc for the current target (the host without one) and runs it."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.error import DiagnosticError
from tvm.script import from_source
from tvm.script import tirx as T


@T.jit
def axpy(X: T.Buffer((n,), "float32"), Y: T.Buffer((n,), "float32"),  # noqa: F821 - n: constexpr
         B: T.Optional(T.Buffer((n,), "float32")), *, n: T.constexpr,  # noqa: F821
         a: T.constexpr = 2.0):
    for i in range(n):
        if T.constexpr(B is not None):
            Y[i] = T.float32(a) * X[i] + B[i]
        else:
            Y[i] = T.float32(a) * X[i]


@T.jit
def total(X: T.Buffer((n,), "int32"), *, n: T.constexpr) -> T.int32:  # noqa: F821
    acc = T.local_scalar("int32", init=0)
    for i in range(n):
        acc += X[i]
    T.ret(acc)


def test_calling_with_constexpr_values_gives_the_specialised_primfunc() -> None:
    f = axpy(n=8, B=None)
    assert isinstance(f, tvm.tirx.PrimFunc)
    assert f is axpy.specialize(n=8, B=None)  # one cache
    assert [p.name for p in f.params] == ["X", "Y"]
    assert 'X: T.Buffer((8,), "float32")' in f.script()


def test_calling_with_arrays_compiles_and_runs_on_the_host() -> None:
    x = np.arange(8, dtype="float32")
    y = np.zeros(8, "float32")
    axpy(x, y, n=8, a=3.0, B=None)
    np.testing.assert_allclose(y, 3.0 * x)
    b = np.full(8, 0.5, "float32")
    axpy(x, y, b, n=8)
    np.testing.assert_allclose(y, 2.0 * x + b)
    axpy(X=x, Y=y, B=b, n=8, a=1.0)
    np.testing.assert_allclose(y, x + b)


def test_a_call_returns_what_the_function_returns_and_compiles_once() -> None:
    x = np.arange(10, dtype="int32")
    assert total(x, n=10) == 45
    assert total(x[:4].copy(), n=4) == 6
    assert len(total._compiled) == 2
    assert total(x, n=10) == 45
    assert len(total._compiled) == 2


def test_the_current_target_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    real = tvm.driver.compile

    def spy(func, target=None, **kw):
        seen.append(str(target.kind.name))
        return real(func, target=target, **kw)

    monkeypatch.setattr(tvm.driver, "compile", spy)

    @T.jit
    def inc(X: T.Buffer((n,), "int32"), *, n: T.constexpr):  # noqa: F821
        for i in range(n):
            X[i] = X[i] + 1

    x = np.zeros(3, "int32")
    with tvm.target.Target("c"):
        inc(x, n=3)
    inc(x, n=3)  # the same target: compiled once
    assert seen == ["c"] and x.tolist() == [2, 2, 2]


@pytest.mark.parametrize("call, message", [
    (lambda: axpy(1, 2, 3, 4, n=8), r"axpy\(\) takes 3 runtime argument\(s\) \(X, Y, B\) but 4 "
                                    r"were given; constexpr values are given by name"),
    (lambda: axpy(np.zeros(8, "float32"), n=8, B=None),
     r"axpy\(\) is missing runtime argument\(s\) 'Y'; call axpy\(\*\*constexpr values\) alone"),
    (lambda: axpy(np.zeros(8, "float32"), X=1, n=8, B=None),
     r"axpy\(\) got multiple values for argument 'X'"),
    (lambda: axpy(n=8, m=3), r"axpy\(\) got an unexpected keyword argument 'm'; its "
                             r"parameters are X, Y, B, n, a"),
    (lambda: axpy(a=1.0), r"missing the value of constexpr parameter 'n'"),
    (lambda: axpy(n=8, B=np.zeros(8, "float32")),
     r"axpy\(\) is missing runtime argument\(s\) 'X', 'Y'"),
])
def test_wrong_calls_say_what_is_wrong(call, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        call()


def test_a_jit_function_is_not_called_inside_a_script() -> None:
    src = '''
@T.prim_func
def f(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
    axpy(X, Y, n=8, B=None)
'''
    with pytest.raises(DiagnosticError, match=r"the @T.jit function axpy cannot be called "
                                              r"inside a script.*T.inline helper") as info:
        from_source(src, extra_vars={"axpy": axpy})
    assert info.value.lineno == 4
