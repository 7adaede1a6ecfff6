"""function_signature / check_arguments / evaluate: argument checks before a launch."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tvm.codegen.signature import (
    ParamSpec,
    check_arguments,
    evaluate,
    function_signature,
    signature_from_func,
)
from tvm.ir import Buffer, Evaluate, PrimFunc, Var
from tvm.runtime.arguments import ArgumentChecker, Signature


def _func():
    n = Var("n")
    A = Buffer("A", [n, 4], "float32")
    B = Buffer("B", [n], "int32")
    alpha = Var("alpha", "float32")
    k = Var("k", "int32")
    func = PrimFunc([A.data, B.data, alpha, k], Evaluate(0), {A.data: A, B.data: B}, name="f")
    return func, n


def test_signature_describes_parameters():
    func, n = _func()
    specs = function_signature(func)
    assert [(s.name, s.kind, s.dtype) for s in specs] == [
        ("A", "buffer", "float32"), ("B", "buffer", "int32"),
        ("alpha", "scalar", "float32"), ("k", "scalar", "int32")]
    assert specs[0].shape[0] is n and specs[0].shape[1].value == 4 and specs[0].ndim == 2
    assert specs[0].strides == () and specs[0].scope == "global"
    assert specs[0].data is func.buffer_map[func.params[0]].data


def _args(rows=3):
    return [np.zeros((rows, 4), "float32"), np.zeros(rows, "int32"), 1.5, 7]


def test_good_arguments_bind_symbolic_values():
    func, n = _func()
    values = check_arguments(function_signature(func), _args(5))
    assert values[n] == 5
    assert values[func.params[2]] == 1.5 and values[func.params[3]] == 7
    assert evaluate((n + 1) // 2, values) == 3


@pytest.mark.parametrize("index, value, error, message", [
    (0, np.zeros((3, 4), "float64"), ValueError, "f: argument 'A': expected dtype float32, got float64"),
    (1, np.zeros(3, "int64"), ValueError, "f: argument 'B': expected dtype int32, got int64"),
    (0, np.zeros((3, 4, 1), "float32"), ValueError,
     r"f: argument 'A': expected a 2-d array of shape \(n, 4\), got a 3-d array of shape \(3, 4, 1\)"),
    (0, np.zeros((3, 5), "float32"), ValueError,
     r"f: argument 'A': expected shape \(n, 4\), got \(3, 5\) \(dimension 1 is 5, expected 4\)"),
    (1, np.zeros(4, "int32"), ValueError,
     r"f: argument 'B': expected shape \(n,\) with n = 3 \(from argument 'A' shape\[0\]\), got \(4,\)"),
    (0, np.zeros((4, 6), "float32")[:3, :4], ValueError,
     r"f: argument 'A': expected a contiguous \(row-major\) array, got strides \(6, 1\) \(in "
     r"elements\) for shape \(3, 4\); pass a contiguous copy: numpy.ascontiguousarray\(x\)"),
    (0, np.zeros((4, 3), "float32").T[:3], ValueError,
     r"f: argument 'A': expected a contiguous \(row-major\) array"),
    (0, [[0.0] * 4] * 3, TypeError, r"f: argument 'A': expected an array \(float32, shape \(n, 4\)\)"),
    (2, "x", TypeError, r"f: argument 'alpha': expected a number \(float32\), got str 'x'"),
    (3, 1.5, TypeError, r"f: argument 'k': expected an int \(int32\), got float 1.5"),
    (3, True, TypeError, "f: argument 'k': expected an int"),
])
def test_bad_arguments_name_the_function_and_parameter(index, value, error, message):
    func, _ = _func()
    args = _args()
    args[index] = value
    with pytest.raises(error, match=message):
        check_arguments(function_signature(func), args, func_name="f")


def test_the_wrapper_and_the_serialised_signature_agree():
    """check_arguments (IR specs) and ArgumentChecker over the JSON signature are one checker."""
    func, _ = _func()
    sig = Signature.from_dict(json.loads(json.dumps(signature_from_func(func).to_dict())))
    args = _args()
    args[1] = np.zeros(4, "int32")
    with pytest.raises(ValueError) as direct:
        ArgumentChecker(sig)(args)
    with pytest.raises(ValueError) as wrapped:
        check_arguments(function_signature(func), args, func_name="f")
    assert str(direct.value) == str(wrapped.value)


def test_wrong_device():
    func, _ = _func()
    with pytest.raises(ValueError, match="^f: argument 'A': expected an array on cuda, got one on cpu$"):
        check_arguments(function_signature(func), _args(), device_type="cuda", func_name="f")


def test_wrong_argument_count():
    func, _ = _func()
    with pytest.raises(TypeError, match=r"^f\(\) takes 4 arguments \(A, B, alpha, k\), got 2$"):
        check_arguments(function_signature(func), _args()[:2], func_name="f")


def test_extent_one_dimension_ignores_stride():
    spec = ParamSpec("X", "buffer", "float32", (Var("a"), Var("b")))
    base = np.zeros((8, 8), "float32")
    check_arguments([spec], [base[:1, :]])  # a row view: strides (8, 1), shape (1, 8)


def test_explicit_strides_are_checked():
    from tvm.ir import IntImm

    spec = ParamSpec("X", "buffer", "float32", (IntImm("int32", 3), IntImm("int32", 4)),
                     (IntImm("int32", 6), IntImm("int32", 1)))
    check_arguments([spec], [np.zeros((4, 6), "float32")[:3, :4]])
    with pytest.raises(ValueError, match=r"argument 'X': expected strides \(6, 1\) \(in elements\), got \(4, 1\)"):
        check_arguments([spec], [np.zeros((3, 4), "float32")])


class _CudaLike:
    """Only __cuda_array_interface__, like a cupy array or a CUDA torch tensor."""

    def __init__(self, shape, typestr):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "strides": None,
                                         "data": (0, False), "version": 3}


def test_cuda_array_interface():
    spec = ParamSpec("X", "buffer", "float16", (Var("m"),))
    check_arguments([spec], [_CudaLike((10,), "<f2")], device_type="cuda")
    with pytest.raises(ValueError, match="argument 'X': expected dtype float16, got float32"):
        check_arguments([spec], [_CudaLike((10,), "<f4")], device_type="cuda")
    with pytest.raises(ValueError, match="argument 'X': expected an array on cpu, got one on cuda"):
        check_arguments([spec], [_CudaLike((10,), "<f2")], device_type="cpu")


class _DLPackOnly:
    """Only the DLPack protocol (wraps a numpy array)."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, **kw):
        return self._arr.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


def test_dlpack_producer():
    spec = ParamSpec("X", "buffer", "int32", (Var("m"),))
    values = check_arguments([spec], [_DLPackOnly(np.arange(6, dtype="int32"))])
    assert list(values.values()) == [6]
    with pytest.raises(ValueError, match="argument 'X': expected dtype int32, got int8"):
        check_arguments([spec], [_DLPackOnly(np.arange(6, dtype="int8"))])


def test_evaluate_errors():
    with pytest.raises(ValueError, match="cannot evaluate `q`: its value is not known"):
        evaluate(Var("q") + 1, {})
