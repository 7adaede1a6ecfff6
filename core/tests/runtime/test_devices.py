"""tvm.device / tvm.cuda(0) / tvm.runtime.tensor: the seed's device and tensor API."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm.error import DeviceUnavailableError
from tvm.ir import IRModule
from tvm.runtime import Tensor
from tvm.runtime.devices import DEVICE_TYPES, Device
from tvm.script import tirx as T


def test_device_constructors_and_spellings():
    assert tvm.cuda(1) == Device("cuda", 1) == tvm.device("cuda", 1) == tvm.device("cuda:1")
    assert tvm.cpu() == tvm.device("llvm") == tvm.device(1)
    assert str(tvm.cuda(0)) == "cuda(0)" and repr(tvm.metal(2)) == "metal(2)"
    assert tvm.cuda(3).device_type == 2 and tvm.cuda(3).device_id == 3
    assert DEVICE_TYPES["rocm"] == 10 and tvm.rocm().kind == "rocm"
    assert tvm.cpu().exist and tvm.cpu().compute_version is None


@pytest.mark.parametrize("bad, message", [
    ("tpu", "unknown device kind 'tpu'; known: cpu, cuda"),
    ("cuda:x", "the index after ':' must be a number"),
    (99, "unknown DLPack device type 99"),
])
def test_bad_device_names_say_what_is_known(bad, message):
    with pytest.raises(ValueError, match=message):
        tvm.device(bad)
    with pytest.raises(ValueError, match="non-negative int"):
        tvm.cuda(-1)
    with pytest.raises(ValueError, match="non-negative int"):
        tvm.cpu(-1)


def test_cpu_tensor_is_a_numpy_copy():
    src = np.arange(12, dtype="float32").reshape(3, 4)
    a = tvm.runtime.tensor(src)
    assert isinstance(a, Tensor) and isinstance(a, np.ndarray)
    assert a.device == tvm.cpu() and a.shape == (3, 4) and a.dtype == "float32"
    src[0, 0] = 100  # a copy: the tensor does not see it
    out = a.numpy()
    assert type(out) is np.ndarray and out[0, 0] == 0
    out[1, 1] = -1  # numpy() is a copy too
    assert a[1, 1] == 5
    assert a[1:].device == tvm.cpu()  # views keep the device
    a.copyfrom(np.ones((3, 4)))
    np.testing.assert_array_equal(a.asnumpy(), np.ones((3, 4), "float32"))
    with pytest.raises(ValueError, match=r"source has shape \(2,\), the tensor \(3, 4\)"):
        a.copyfrom(np.ones(2))
    assert type(pickle.loads(pickle.dumps(a))) is np.ndarray


def test_tensor_dtype_conversion_and_ml_dtypes():
    a = tvm.runtime.tensor([1, 2, 3], dtype="float16")
    assert a.dtype == np.float16
    assert tvm.testing.np_dtype_from_str("float32") == np.dtype("float32")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert tvm.testing.numpy_dtype("bfloat16") == np.dtype(ml_dtypes.bfloat16)
    assert tvm.testing.numpy_dtype("e4m3") == np.dtype(ml_dtypes.float8_e4m3fn)
    assert tvm.testing.numpy_dtype("float4_e2m1fn") == np.dtype(ml_dtypes.float4_e2m1fn)


def test_a_device_without_memory_names_the_backend_to_install():
    dev = tvm.device("webgpu")
    if dev.unavailable() is None or "tvm-backend-webgpu" not in dev.unavailable():
        pytest.skip("a backend here gives webgpu memory")
    assert not dev.exist
    with pytest.raises(DeviceUnavailableError,
                       match=r"no tensor can be made on webgpu\(0\) here: no installed backend "
                             r"gives memory on 'webgpu' devices \(pip install tvm-backend-webgpu\)"):
        tvm.runtime.tensor(np.zeros(2), dev)


def test_executables_take_cpu_tensors_and_show_the_seed_module_view():
    @T.prim_func
    def add_one(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (8,), "float32")
        B = T.match_buffer(b, (8,), "float32")
        for i in range(8):
            B[i] = A[i] + T.float32(1)

    ex = tvm.compile(IRModule({"main": add_one}), target="c")
    a = tvm.runtime.tensor(np.arange(8, dtype="float32"), tvm.cpu(0))
    b = tvm.runtime.tensor(np.zeros(8, "float32"), tvm.cpu(0))
    ex(a, b)
    np.testing.assert_array_equal(b.numpy(), np.arange(8) + 1)
    assert ex.mod.imports[0] is ex
    assert ex.mod.imports[0].inspect_source() == ex.inspect_source() != ""


def test_requires_cuda_skips_with_the_reason_when_there_is_none(monkeypatch):
    monkeypatch.setattr(tvm.testing.utils, "cuda_unavailable", lambda *a: "no GPU in this test")

    @tvm.testing.requires_cuda_compute_version(9, exact=True)
    def needs_hopper(x):
        return x

    with pytest.raises(pytest.skip.Exception, match="no GPU in this test"):
        needs_hopper(1)
    monkeypatch.setattr(tvm.testing.utils, "cuda_unavailable", lambda *a: None)
    assert needs_hopper(2) == 2 and needs_hopper.__name__ == "needs_hopper"


class _FakeCuda:
    def __init__(self, reason, version):
        self.reason, self.compute_version = reason, version

    def unavailable(self):
        return self.reason


@pytest.mark.parametrize("have, want, exact, expected", [
    ("9.0", (9, 0, False), False, None),
    ("10.0", (9, 0, False), False, None),
    ("10.0", (9, 0, True), True, "needs a CUDA device of compute capability 9.x; this one is 10.0"),
    ("8.9", (9, 0, False), False, "compute capability 9.0 or later; this one is 8.9"),
])
def test_cuda_compute_version_rule(monkeypatch, have, want, exact, expected):
    monkeypatch.setattr(tvm.testing.utils, "cuda", lambda i: _FakeCuda(None, have))
    reason = tvm.testing.cuda_unavailable(*want)
    assert reason is None if expected is None else expected in reason
    monkeypatch.setattr(tvm.testing.utils, "cuda", lambda i: _FakeCuda("no driver", None))
    assert tvm.testing.cuda_unavailable(*want) == "no driver"

