"""tvm.runtime.tensor on tvm.cuda(0): device memory on a GPU, host memory under the emulator;
the seed's way to run a kernel (``A = tvm.runtime.tensor(a_np, dev); ex(A); A.numpy()``)."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm.error import DeviceUnavailableError
from tvm.ir import IRModule
from tvm.script import tirx as T


@T.prim_func
def _scale(A: T.Buffer((256,), "float16"), B: T.Buffer((256,), "float16")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    B[bx * 128 + tx] = A[bx * 128 + tx] * T.float16(2)


@pytest.mark.gpu
def test_kernel_on_cuda_tensors(device):
    dev = tvm.cuda(0)
    assert dev.exist and dev.compute_version is not None
    a_np = np.random.default_rng(0).standard_normal(256).astype("float16")
    A = tvm.runtime.tensor(a_np, dev)
    B = tvm.runtime.tensor(np.zeros(256, "float16"), dev)
    assert A.device == dev and A.shape == (256,) and str(A.dtype) == "float16"
    ex = tvm.compile(IRModule({"main": _scale}), target="cuda")
    ex(A, B)
    np.testing.assert_array_equal(B.numpy(), a_np * np.float16(2))
    assert "__global__" in ex.mod.imports[0].inspect_source()
    B.copyfrom(np.ones(256, "float16"))
    np.testing.assert_array_equal(np.asarray(B), np.ones(256, "float16"))
    tvm.testing.assert_allclose(B, np.ones(256))


def test_cuda_tensor_without_a_device_says_how_to_emulate(monkeypatch):
    from tvm_backend_cuda import runtime

    monkeypatch.delenv("TVM_CUDA_EMULATE", raising=False)
    if runtime.has_cuda_device():
        pytest.skip("a GPU is here")
    assert not tvm.cuda(0).exist and tvm.cuda(0).compute_version is None
    with pytest.raises(DeviceUnavailableError, match=r"no tensor can be made on cuda\(0\) here: "
                       r"no CUDA device: .*set TVM_CUDA_EMULATE=1"):
        tvm.runtime.tensor(np.zeros(4, "float32"), tvm.cuda(0))


def test_emulated_device_has_the_emulator_arch(monkeypatch):
    monkeypatch.setenv("TVM_CUDA_EMULATE", "1")
    from tvm_backend_cuda.emulator import device_capability

    major, minor = device_capability()
    assert tvm.cuda(0).compute_version == f"{major}.{minor}"
    assert "one device (0), not 1" in tvm.cuda(1).unavailable()
    assert tvm.testing.cuda_unavailable(major, 0) is None
    assert "or later" in tvm.testing.cuda_unavailable(major + 1, 0)
