"""Issue 28, item 5: ``@T.jit`` functions specialised on ``T.constexpr`` parameters, with
``T.Optional`` parameters that a specialisation may leave out."""

from __future__ import annotations

import textwrap
from types import SimpleNamespace

import numpy as np
import pytest

import tvm
from tvm.ir import assert_structural_equal
from tvm.script import ir as I
from tvm.script import tirx as T
from tvm.script.diagnostics import DiagnosticError

WIDTH = 4


@T.jit(private=True)
def fill(output: T.Buffer((WIDTH,), "int32"), *, value: T.constexpr):
    for index in range(WIDTH):
        output[index] = value


@T.jit
def scale(A: T.Buffer((n,), "float32"), B: T.Optional(T.Buffer((n,), "float32")), *,  # noqa: F821 - n: the constexpr parameter
          n: T.constexpr, k: T.constexpr = 2.0):
    for i in range(n):
        if T.constexpr(B is not None):
            A[i] = B[i] * T.float32(k)
        else:
            A[i] = T.float32(k)


def test_a_constexpr_is_a_constant_not_a_parameter():
    @T.prim_func(private=True)
    def expected(output: T.Buffer((4,), "int32")):
        for index in range(4):
            output[index] = 3

    result = fill.specialize(value=3)
    assert len(result.params) == 1
    assert_structural_equal(result, expected, map_free_vars=True)
    assert "global_symbol" not in result.attrs


def test_specialisations_are_cached_per_value():
    first = fill.specialize(value=1)
    assert first is fill.specialize(value=1)
    assert first is not fill.specialize(value=2)

    @T.jit
    def pick(output: T.Buffer((1,), "int32"), *, values: T.constexpr):
        output[0] = values[0]

    assert pick.specialize(values=[5]) is not pick.specialize(values=[5])  # unhashable


def test_constexprs_shape_annotations_and_choose_branches():
    absent = scale.specialize(n=8, B=None)
    present = scale.specialize(n=8, k=3.0)
    assert [p.name for p in absent.params] == ["A"] and len(present.params) == 2
    assert absent.attrs["global_symbol"] == "scale"
    a, b = np.zeros(8, "float32"), np.arange(8, dtype="float32")
    tvm.compile(present, target="c")(a, b)
    assert np.array_equal(a, b * 3)
    tvm.compile(absent, target="c")(a)
    assert np.array_equal(a, np.full(8, 2, "float32"))


def test_the_markers_are_recognised_through_the_script_namespaces():
    assert scale.constexpr_names == {"n", "k"} and scale.optional_names == {"B"}
    Ordinary = SimpleNamespace(constexpr=T.constexpr)  # noqa: N806 - a namespace stand-in

    @T.jit
    def other(x: Ordinary.constexpr, y: I.constexpr):
        T.evaluate(y)

    assert other.constexpr_names == {"y"}


def test_specialize_argument_errors():
    with pytest.raises(TypeError, match="missing the value of constexpr parameter 'n'"):
        scale.specialize()
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) 'm': no parameter has "
                                        r"that name \(parameters: "):
        scale.specialize(n=4, m=1)
    with pytest.raises(TypeError, match="'A' is a runtime parameter"):
        scale.specialize(n=4, A=1)
    with pytest.raises(TypeError, match="takes None"):
        scale.specialize(n=4, B=3)


def test_constexpr_of_a_runtime_value_is_an_error():
    @T.jit
    def bad(x: T.int32):
        if T.constexpr(x > 0):
            T.evaluate(0)

    with pytest.raises(DiagnosticError, match="not known while the function is specialised"):
        bad.specialize()


def test_prim_func_points_constexpr_at_jit(tmp_path):
    source = textwrap.dedent('''
        from tvm.script import tirx as T

        @T.prim_func
        def k(n: T.constexpr):
            T.evaluate(n)
        ''')
    with pytest.raises(DiagnosticError, match="belong to @T.jit functions"):
        tvm.script.from_source(source)


def test_quoted_constexpr_annotation_is_refused(tmp_path):
    path = tmp_path / "quoted.py"
    path.write_text("from tvm.script import tirx as T\n\n"
                    "@T.jit\n"
                    "def k(x: 'T.constexpr'):\n"
                    "    T.evaluate(x)\n")
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102 - a test module
    with pytest.raises(DiagnosticError, match="Quoted annotations are not supported"):
        namespace["k"].specialize(x=1)


def test_the_closure_is_captured_at_the_def():
    def outer(extent):
        def middle(width):
            @T.jit(private=True)
            def function(output: T.Buffer((extent, width), "int32")):
                T.evaluate(extent)

            return function

        pending = middle(3)
        extent = 99  # noqa: F841 - rebinding after the def does not reach the jit function
        return pending

    function = outer(8).specialize()
    assert [s.value for s in function.buffer_map[function.params[0]].shape] == [8, 3]
    assert function.body.value.value == 8


def test_a_jit_function_keeps_alive_only_what_it_names():
    import gc
    import weakref

    class Payload:
        pass

    def make():
        payload = Payload()
        reference = weakref.ref(payload)
        width = 7

        @T.jit(private=True)
        def kernel(x: T.Buffer((width,), "int32"), *, value: T.constexpr):
            T.evaluate(value)

        return kernel, reference

    kernel, reference = make()
    gc.collect()
    assert reference() is None
    func = kernel.specialize(value=1)
    assert [s.value for s in func.buffer_map[func.params[0]].shape] == [7]
