"""Argument checks that used to let wrong calls through (issue 16): read-only arrays written
through, foreign byte order, float scalars that overflow, empty arrays with symbolic shapes."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.codegen.signature import signature_from_func
from tvm.runtime.arguments import ArgumentChecker, ParamSig, Signature
from tvm.script import tirx as T


@T.prim_func
def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = A[i] + 1.0


@T.prim_func
def fill(A: T.Buffer((4,), "float32"), x: T.float32):
    for i in range(4):
        A[i] = x


@T.prim_func
def copy2d(a: T.handle, b: T.handle):
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(a, (n, m), "float32")
    B = T.match_buffer(b, (n, m), "float32")
    for i, j in T.grid(n, m):
        B[i, j] = A[i, j]


READ_ONLY = "add_one: argument 'B': the function writes to this array, but it is read-only"


def _read_only_frozen() -> np.ndarray:
    b = np.zeros(4, "float32")
    b.setflags(write=False)
    return b


def _read_only_bytes() -> np.ndarray:
    return np.frombuffer(bytes(16), "float32")


def _read_only_memmap(tmp_path) -> np.ndarray:
    path = tmp_path / "b.bin"
    np.zeros(4, "float32").tofile(path)
    return np.memmap(path, dtype="float32", mode="r", shape=(4,))


@pytest.mark.parametrize("make", [_read_only_frozen, _read_only_bytes, "memmap"])
def test_read_only_output_is_refused(make, tmp_path) -> None:
    ex = tvm.compile(add_one, target="c")
    out = _read_only_memmap(tmp_path) if make == "memmap" else make()
    before = bytes(np.asarray(out).tobytes())
    with pytest.raises(ValueError, match=READ_ONLY):
        ex(np.ones(4, "float32"), out)
    assert bytes(np.asarray(out).tobytes()) == before


def test_read_only_output_through_the_array_interface_is_refused() -> None:
    class View:
        def __init__(self, arr: np.ndarray) -> None:
            self.__array_interface__ = arr.__array_interface__
            self.keep = arr

    ex = tvm.compile(add_one, target="c")
    with pytest.raises(ValueError, match=READ_ONLY):
        ex(np.ones(4, "float32"), View(_read_only_bytes()))


def test_read_only_input_is_accepted() -> None:
    ex = tvm.compile(add_one, target="c")
    b = np.zeros(4, "float32")
    ex(_read_only_frozen(), b)
    np.testing.assert_array_equal(b, np.ones(4, "float32"))


def test_signature_records_which_buffers_are_written() -> None:
    got = signature_from_func(add_one)
    assert [(p.name, p.written) for p in got.params] == [("A", False), ("B", True)]
    assert got.to_dict()["params"][0]["written"] is False


def test_signature_without_the_field_assumes_written() -> None:
    old = {"name": "f", "params": [{"name": "B", "kind": "buffer", "dtype": "float32",
                                    "shape": [4]}]}
    check = ArgumentChecker(Signature.from_dict(old))
    with pytest.raises(ValueError, match="read-only"):
        check([_read_only_frozen()])


def test_big_endian_array_is_refused() -> None:
    ex = tvm.compile(add_one, target="c")
    b = np.zeros(4, "float32")
    with pytest.raises(ValueError, match=r"add_one: argument 'A': expected float32 in the "
                                         r"machine's byte order, got a big-endian array"):
        ex(np.ones(4, ">f4"), b)
    assert not b.any()


@pytest.mark.parametrize(("value", "message"), [
    (1e300, r"fill: argument 'x': 1e\+300 does not fit in float32 \(it would become inf\)"),
    (-4e38, r"-4e\+38 does not fit in float32"),
    (10**400, r"fill: argument 'x': an int of 401 digits is too large for float32"),
], ids=["1e300", "-4e38", "10**400"])
def test_float_scalar_overflow_is_a_value_error(value, message) -> None:
    ex = tvm.compile(fill, target="c")
    a = np.zeros(4, "float32")
    with pytest.raises(ValueError, match=message):
        ex(a, value)
    assert not a.any()


@pytest.mark.parametrize("value", [3.4e38, float("inf"), float("-inf")])
def test_representable_and_explicit_infinite_floats_pass(value) -> None:
    ex = tvm.compile(fill, target="c")
    a = np.zeros(4, "float32")
    ex(a, value)
    np.testing.assert_array_equal(a, np.full(4, value, "float32"))


def test_half_precision_scalar_limits() -> None:
    check = ArgumentChecker(Signature("h", (ParamSig("x", "scalar", "float16", var="x"),)))
    assert check([65504.0]) == {"x": 65504.0}
    with pytest.raises(ValueError, match="70000.0 does not fit in float16"):
        check([70000.0])


@pytest.mark.parametrize("shape", [(0, 4), (4, 0), (0, 0), (0, 1)])
def test_empty_arrays_with_symbolic_shapes_are_accepted(shape) -> None:
    ex = tvm.compile(copy2d, target="c")
    ex(np.zeros(shape, "float32"), np.zeros(shape, "float32"))


def test_empty_arrays_still_check_their_shape_against_each_other() -> None:
    ex = tvm.compile(copy2d, target="c")
    with pytest.raises(ValueError, match="copy2d: argument 'B': expected shape"):
        ex(np.zeros((0, 4), "float32"), np.zeros((0, 5), "float32"))


def test_the_c_fast_path_refuses_what_the_full_checker_refuses() -> None:
    from tvm.host.caller import caller_module

    if caller_module() is None:
        pytest.skip("no C caller in this environment")
    ex = tvm.compile(add_one, target="c")
    with pytest.raises(ValueError, match=READ_ONLY):
        ex(np.ones(4, "float32"), _read_only_frozen())
    with pytest.raises(ValueError, match="does not fit in float32"):
        tvm.compile(fill, target="c")(np.zeros(4, "float32"), 1e300)


@pytest.mark.parametrize("name", ["float8_e5m2", "float8_e4m3fn", "bfloat16"])
def test_ml_dtypes_arrays_are_read_by_their_own_dtype(name: str) -> None:
    # ml_dtypes' float8_e5m2 writes the typestr "<f1", which np.dtype() cannot parse back
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from tvm.runtime.arrays import _read_array

    info = _read_array(np.zeros((2, 3), getattr(ml_dtypes, name)))
    assert info is not None
    assert info.shape == (2, 3)
    assert info.dtype == {"float8_e4m3fn": "float8_e4m3"}.get(name, name)


@pytest.mark.parametrize("name", ["float8_e5m2", "bfloat16"])
def test_a_device_tensor_is_read_by_its_tvm_dtype(name: str) -> None:
    # a device tvm.runtime.Tensor has a tvm dtype name and the device array's interface, whose
    # typestr for float8_e5m2 ("<f1") numpy cannot parse (seen on the H100)
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from tvm.runtime.arrays import _read_array

    host = np.zeros((4, 8), getattr(ml_dtypes, name))

    class DeviceArray:
        __cuda_array_interface__ = {"shape": (4, 8), "typestr": host.dtype.str,
                                    "data": (4096, False), "strides": None, "version": 3}

    tensor = tvm.runtime.DeviceTensor(DeviceArray(), (4, 8), name, tvm.cuda(0))
    info = _read_array(tensor)
    assert info is not None
    assert (info.shape, info.dtype, info.device) == ((4, 8), name, "cuda")
