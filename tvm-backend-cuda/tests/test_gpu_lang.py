"""Issue 12 on the GPU (marker ``gpu``): every dispatch variant kernel of ``lang_kernels.py``
against numpy, and the memory-bound kernels of ``tvm_backend_cuda.kernels`` against torch at several
shapes (odd row lengths, partial CTAs) in float32 and bfloat16.

The row and add tests take the ``device`` fixture: without a GPU they run under the CUDA
emulator (the add test's 2**24 elements as ``EMULATED_ADD_N``'s 2**20 there)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvm
from tvm_backend_cuda.plugin import register_backend

register_backend()

from lang_kernels import VARIANT_KERNELS, VariantKernel  # noqa: E402

from tvm_backend_cuda.kernels import (  # noqa: E402
    add_func,
    layer_norm_func,
    rms_norm_func,
    softmax_func,
)

pytestmark = pytest.mark.gpu

GPU_KERNELS = [k for k in VARIANT_KERNELS if "sm_90a" in k.archs]


def _torch() -> Any:
    return pytest.importorskip("torch")


def _to_torch(a: np.ndarray, device: str = "cuda") -> Any:
    torch = _torch()
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.uint16).copy()).view(torch.bfloat16).to(device)
    return torch.from_numpy(a.copy()).to(device)


#: variant kernels the CUDA emulator does not run yet, and why
NOT_EMULATED: dict[str, str] = {}


def _to_numpy(t: Any) -> np.ndarray:
    torch = _torch()
    if t.dtype == torch.bfloat16:
        return t.float().cpu().numpy().astype(np.float64)
    return t.cpu().numpy().astype(np.float64)


@pytest.mark.parametrize("kernel", GPU_KERNELS, ids=[k.name for k in GPU_KERNELS])
def test_variant_kernel_on_gpu(kernel: VariantKernel, device: str) -> None:
    torch = _torch()
    if device == "cuda":
        if torch.cuda.get_device_capability()[0] < 9:
            pytest.skip("these kernels target sm_90")
        ex = tvm.compile(kernel.build(), target="cuda")
    else:
        if kernel.name in NOT_EMULATED:
            pytest.skip(f"not emulated yet: {NOT_EMULATED[kernel.name]}")
        ex = tvm.compile(kernel.build(), target="cuda", arch="sm_90a")
    for seed in (1, 2):  # fresh inputs, output poisoned each time
        args = kernel.inputs(np.random.default_rng(seed))
        dev = [_to_torch(a, device) for a in args]
        maps = kernel.tensor_maps(*dev) if kernel.tensor_maps is not None else []
        ex(*maps, *dev)
        if device == "cuda":
            torch.cuda.synchronize()
        want = kernel.reference(*args)
        got = _to_numpy(dev[-1])
        written = ~np.isnan(want)
        assert not np.isnan(got[written]).any(), "elements left unwritten"
        np.testing.assert_allclose(got[written], want[written], rtol=kernel.rtol, atol=1e-5)


ROW_SHAPES = [(1, 8), (7, 136), (33, 1000), (64, 1024), (5, 4096), (3, 8200), (2, 16384)]


@pytest.mark.parametrize("kind", ["softmax", "rmsnorm", "layernorm"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("m, n", ROW_SHAPES)
def test_row_kernel_against_torch(kind: str, dtype: str, m: int, n: int, device: str) -> None:
    torch = _torch()
    import torch.nn.functional as F  # noqa: N812
    dt = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    factory = {"softmax": softmax_func, "rmsnorm": rms_norm_func,
               "layernorm": layer_norm_func}[kind]
    ex = tvm.compile(factory(m, n, dtype), target="cuda")
    x = (torch.randn(m, n, device=device) * 3).to(dt)
    w = (torch.rand(n, device=device) + 0.5).to(dt)
    b = torch.randn(n, device=device).to(dt)
    y = torch.full((m, n), float("nan"), device=device, dtype=dt)
    xd, wd, bd = x.double(), w.double(), b.double()
    if kind == "softmax":
        ex(x, y)
        want = torch.softmax(xd, -1)
    elif kind == "rmsnorm":
        ex(x, w, y)
        want = F.rms_norm(xd, (n,), wd, 1e-6)
    else:
        ex(x, w, b, y)
        want = F.layer_norm(xd, (n,), wd, bd, 1e-5)
    if device == "cuda":
        torch.cuda.synchronize()
    got = y.double()
    assert not torch.isnan(got).any()
    err = float(torch.linalg.vector_norm(got - want) / torch.linalg.vector_norm(want))
    assert err < (1e-5 if dtype == "float32" else 1e-2), err


#: the smaller length the emulator adds in place of a GPU one: like 2**24, a whole number of
#: 4096-element tiles (no partial CTA, the one case without) over many CTAs (256)
EMULATED_ADD_N = {1 << 24: 1 << 20}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("n", [8, 1000, (1 << 20) + 8, 1 << 24])
def test_add_against_torch(dtype: str, n: int, device: str) -> None:
    torch = _torch()
    if device == "cpu":
        n = EMULATED_ADD_N.get(n, n)
    dt = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    ex = tvm.compile(add_func(n, dtype), target="cuda")
    a, b = torch.randn(n, device=device).to(dt), torch.randn(n, device=device).to(dt)
    c = torch.full((n,), float("nan"), device=device, dtype=dt)
    ex(a, b, c)
    if device == "cuda":
        torch.cuda.synchronize()
    assert torch.equal(c, (a.float() + b.float()).to(dt))
