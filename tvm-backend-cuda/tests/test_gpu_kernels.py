"""The test kernels on the GPU (marker ``gpu``), checked against numpy; plus the demo rows and
the executable's runtime behaviour (argument checks, streams, export/load).

Tests taking the ``device`` fixture (conftest.py) run under the CUDA emulator where there is no
GPU, every test kernel included (the inline PTX of the ``T.cuda.func_call`` ones is translated,
``tvm_backend_cuda.emulator_asm``)."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm_backend_cuda.plugin import register_backend

register_backend()

from cuda_kernels import KERNELS, KernelCase  # noqa: E402

pytestmark = pytest.mark.gpu

def _sync(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def _device_arch() -> str:
    from tvm_backend_cuda.executable import _device_arch

    arch = _device_arch()
    assert arch is not None
    return arch


def _num(arch: str) -> int:
    return int("".join(c for c in arch if c.isdigit()))


def _to_torch(a: np.ndarray, dtype: str, device: str = "cuda"):
    import torch

    t = torch.from_numpy(np.ascontiguousarray(a)).to(device)
    return t.to(getattr(torch, dtype))


@pytest.mark.parametrize("case", KERNELS, ids=[k.name for k in KERNELS])
def test_kernel_on_gpu(case: KernelCase, device: str) -> None:
    pytest.importorskip("torch")
    if device == "cuda":
        arch = _device_arch()
        num = _num(arch)
        if num < case.min_arch or (case.archs is not None and num not in case.archs):
            pytest.skip(f"{case.name} needs another GPU: {case.why}")
        ex = tvm.compile(case.build(), target="cuda")
        assert ex.arch == arch
    else:  # the inline PTX of the func_call kernels too (emulator_asm)
        ex = tvm.compile(case.build(), target="cuda")
    specs = ex.get_function(ex.entry_name).specs
    host = case.inputs(np.random.default_rng(0))
    dev = [_to_torch(a, s.dtype, device) for a, s in zip(host, specs)]
    # the reference sees exactly the values the GPU got (bf16/f16 rounding included)
    seen = [d.float().cpu().numpy() if s.dtype in ("bfloat16",) else a
            for a, d, s in zip(host, dev, specs)]
    ex(*dev)
    _sync(device)
    got = dev[case.output].float().cpu().numpy()
    want = case.reference(*seen)
    np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)


#: the demo's row softmax (rows, columns) and matmul size under the emulator
EMULATED_DEMO_SOFTMAX, EMULATED_DEMO_MATMUL = (64, 1024), 64


def test_demo_rows_pass_on_gpu(device: str) -> None:
    """The GPU rows of ``python -m tvm demo``; under the emulator (where ``demo_cases`` has no
    rows: they exist only with a CUDA device) the same three kernels as rows on numpy arrays
    (no torch needed), the softmax and matmul at smaller shapes, run once."""
    from tvm.demo import make_case, run_cases
    from tvm_backend_cuda.demo import demo_cases, gpu_kernels

    if device == "cuda":
        cases = demo_cases()
    else:
        kernels = gpu_kernels(EMULATED_DEMO_SOFTMAX, EMULATED_DEMO_MATMUL)
        cases = [make_case(k, "cuda", backend="cuda", to_device=lambda a: a,
                           to_numpy=lambda a: a, repeat=1) for k in kernels]
    rows = run_cases(cases)
    assert len(rows) == 3
    for case, result in rows:
        assert result.ok, (case.name, result)


def test_runs_on_current_torch_stream(device: str, cuda_streams) -> None:
    """On torch's current stream (emulated: the emulator's current stream)."""
    torch = pytest.importorskip("torch")
    case = next(k for k in KERNELS if k.name == "vector_add")
    ex = tvm.compile(case.build(), target="cuda")
    a, b, c = (torch.randn(1 << 20, device=device) for _ in range(3))
    s = cuda_streams.Stream()
    with cuda_streams.stream(s):
        cuda_streams.busy()  # keeps the stream busy: a launch elsewhere would race
        cuda_streams.host(lambda: c.fill_(float("nan")))
        ex(a, b, c)
    s.synchronize()
    torch.testing.assert_close(c, a + b)


def test_argument_errors_on_gpu(device: str) -> None:
    torch = pytest.importorskip("torch")

    case = next(k for k in KERNELS if k.name == "vector_add")
    ex = tvm.compile(case.build(), target="cuda")
    a = torch.randn(1 << 20, device=device)
    with pytest.raises(ValueError, match="dtype"):
        ex(a, a, a.half())
    with pytest.raises(ValueError, match="shape"):
        ex(a, a, a[:100])
    if device == "cuda":
        with pytest.raises(ValueError, match="cuda"):
            ex(a, a, a.cpu())
    with pytest.raises(TypeError, match="3 arguments"):
        ex(a, a)


def test_vector_alignment_checked_on_gpu(device: str) -> None:
    torch = pytest.importorskip("torch")

    case = next(k for k in KERNELS if k.name == "vector_add_vec4")
    ex = tvm.compile(case.build(), target="cuda")
    big = torch.randn((1 << 20) + 1, device=device)
    a = big[1:]  # contiguous but 4 bytes off a 16-byte boundary
    b = torch.randn(1 << 20, device=device)
    with pytest.raises(ValueError, match="16-byte aligned"):
        ex(a, b, torch.empty_like(b))


def test_export_load_runs_on_gpu(tmp_path, device: str) -> None:
    torch = pytest.importorskip("torch")

    case = next(k for k in KERNELS if k.name == "row_softmax")
    ex = tvm.compile(case.build(), target="cuda")
    path = ex.export_library(tmp_path / "softmax.tvmex")
    ex2 = tvm.runtime.load_module(path)
    assert type(ex2) is type(ex)
    a = torch.randn(512, 2048, device=device)
    b = torch.empty_like(a)
    ex2(a, b)
    torch.testing.assert_close(b, torch.softmax(a, -1), rtol=1e-4, atol=1e-6)


def test_repeated_calls_take_the_fast_path_and_still_check(device: str) -> None:
    """On the GPU, calls after the first take the fast path (prepared by the first) and it still
    checks dtypes and contiguity. The emulated function has no fast path (it is for CUDA torch
    tensors): its calls after the first reuse the launches the first prepared, with the same
    checks."""
    torch = pytest.importorskip("torch")

    case = next(k for k in KERNELS if k.name == "vector_add")
    ex = tvm.compile(case.build(), target="cuda")
    f = ex.get_function(ex.entry_name)
    launches = []
    for _ in range(3):
        a, b, c = (torch.randn(1 << 20, device=device) for _ in range(3))
        ex(a, b, c)
        _sync(device)
        torch.testing.assert_close(c, a + b)
        launches.append(f._launches)
    if device == "cuda":
        assert f._fast_plan_torch  # prepared after the first call
        assert f._fast_call((a, b, c), None) is True
    else:
        assert f._fast_plan_torch is False and f._fast_call is None
        assert launches[0] is not None and all(x is launches[0] for x in launches)
    with pytest.raises(ValueError, match="dtype"):
        ex(a, b, c.double())
    with pytest.raises(ValueError, match="contiguous"):
        ex(a, b, torch.randn(1 << 21, device=device)[::2])


def test_scalar_parameters_on_gpu(device: str) -> None:
    torch = pytest.importorskip("torch")

    from tvm.script import tirx as T

    @T.prim_func
    def axpy(alpha: T.float32, A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
        T.device_entry()
        bx = T.cta_id([32])
        tx = T.thread_id([128])
        B[bx * 128 + tx] = alpha * A[bx * 128 + tx] + B[bx * 128 + tx]

    ex = tvm.compile(axpy, target="cuda")
    a, b = torch.randn(4096, device=device), torch.randn(4096, device=device)
    want = 2.5 * a + b
    ex(2.5, a, b)
    _sync(device)
    torch.testing.assert_close(b, want)
    b2 = b.clone()
    ex(0.0, a, b)  # fast path now (on the GPU)
    _sync(device)
    torch.testing.assert_close(b, b2)
