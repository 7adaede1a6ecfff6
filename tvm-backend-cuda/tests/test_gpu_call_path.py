"""The call path a user takes, on the GPU: ``ex(a, b, c)`` on torch tensors runs on the caller's
current torch stream (ordered with the caller's work, captured by ``torch.cuda.graph``,
bracketed by CUDA events), or on ``stream=``; tensor maps are derived from the arrays at
launch; target ``cuda`` builds for this GPU's arch. Kernels: an elementwise add (array
arguments), the row softmax and the TMA GEMM of ``tvm_backend_cuda.kernels`` (tensor maps only).
Under the CUDA emulator the same tests run at smaller sizes on CPU tensors, with the emulated
device's arch and its streams, events and graphs (:mod:`tvm_backend_cuda.emulated_streams`)."""

from __future__ import annotations

from typing import Any

import pytest

import tvm
from tvm_backend_cuda.plugin import register_backend

register_backend()  # a source checkout on PYTHONPATH has no entry point

from tvm_backend_cuda.kernels import add_func, gemm_func, softmax_func  # noqa: E402

pytestmark = pytest.mark.gpu

#: sizes on the GPU and under the emulator: the GEMM's (square), the add's, the softmax's rows
GPU_SIZE, EMULATED_SIZE = 2048, 256
ADD_SIZE = {"cuda": 1 << 22, "cpu": 1 << 16}
SOFTMAX_ROWS = {"cuda": 4096, "cpu": 64}


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


@pytest.fixture(scope="module")
def add_ex() -> Any:
    return tvm.compile(add_func(ADD_SIZE["cuda"], "float32"), target="cuda")


@pytest.fixture(scope="module")
def gemm_ex() -> Any:
    return tvm.compile(gemm_func(2048, 2048, 2048), target="cuda")


@pytest.fixture(scope="module")
def softmax_ex() -> Any:
    return tvm.compile(softmax_func(SOFTMAX_ROWS["cuda"], 1024, "float32"), target="cuda")


@pytest.fixture(scope="module")
def emulated_add_ex() -> Any:
    return tvm.compile(add_func(ADD_SIZE["cpu"], "float32"), target="cuda", emulate=True)


@pytest.fixture(scope="module")
def emulated_gemm_ex() -> Any:
    return tvm.compile(gemm_func(EMULATED_SIZE, EMULATED_SIZE, EMULATED_SIZE), target="cuda",
                       emulate=True)


@pytest.fixture(scope="module")
def emulated_softmax_ex() -> Any:
    return tvm.compile(softmax_func(SOFTMAX_ROWS["cpu"], 1024, "float32"), target="cuda",
                       emulate=True)


def _ex_for(name: str, device: str, request: pytest.FixtureRequest) -> Any:
    """The GPU's executable ``name`` (``add_ex``, ``gemm_ex``, ``softmax_ex``), or under the
    emulator the same kernel at its emulated size."""
    return request.getfixturevalue(name if device == "cuda" else f"emulated_{name}")


def _gemm_for(device: str, request: pytest.FixtureRequest) -> Any:
    """The GPU's 2048^3 GEMM, or under the emulator the same kernel at 256^3."""
    return _ex_for("gemm_ex", device, request)


def _gemm_inputs(torch: Any, seed: int = 0, device: str = "cuda") -> tuple[Any, Any, Any]:
    size = GPU_SIZE if device == "cuda" else EMULATED_SIZE
    g = torch.Generator(device=device).manual_seed(seed)
    a = torch.randn(size, size, device=device, generator=g).to(torch.bfloat16)
    b = torch.randn(size, size, device=device, generator=g).to(torch.bfloat16)
    return a, b, torch.empty(size, size, device=device, dtype=torch.bfloat16)


def _close(torch: Any, c: Any, a: Any, b: Any) -> None:
    assert not torch.isnan(c).any(), f"{int(torch.isnan(c).sum())} outputs unwritten (NaN)"
    ref = a.float() @ b.float().T
    err = float((c.float() - ref).norm() / ref.norm())
    assert err < 1e-2, err


def test_target_cuda_is_this_gpu(torch: Any, device: str, request: pytest.FixtureRequest,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Target ``cuda`` builds for the device's arch: the GPU's, or the emulated device's."""
    if device == "cuda":
        major, minor = torch.cuda.get_device_capability()
    else:
        from tvm_backend_cuda import emulator

        major, minor = emulator.device_capability()
    assert _gemm_for(device, request).arch == f"sm_{major}{minor}" + ("a" if major >= 9 else "")
    if device == "cpu":  # an emulated sm_80 device: target cuda builds and runs for sm_80
        monkeypatch.setattr(emulator, "DEVICE_ARCH", "sm_80")
        ex = tvm.compile(add_func(1024, "float32"), target="cuda")
        assert ex.arch == "sm_80"
        a, b = torch.randn(1024), torch.randn(1024)
        c = torch.empty_like(a)
        ex(a, b, c)
        assert torch.equal(c, a + b)


# The stream tests take the device's streams from ``cuda_streams`` (conftest: torch.cuda on the
# GPU, the emulator's otherwise). ``host(fn)`` is host work in order on the current stream and
# ``busy()`` keeps the stream busy first, so that a launch on another stream would run before
# the fill (or after the copy) and the check would see NaN.


def test_array_kernel_on_a_side_stream(torch: Any, device: str, cuda_streams: Any,
                                       request: pytest.FixtureRequest) -> None:
    add_ex, n = _ex_for("add_ex", device, request), ADD_SIZE[device]
    a, b = torch.randn(n, device=device), torch.randn(n, device=device)
    c, d = torch.empty_like(a), torch.empty_like(a)
    s = cuda_streams.Stream()
    s.wait_stream(cuda_streams.current_stream())
    with cuda_streams.stream(s):
        cuda_streams.busy()
        cuda_streams.host(lambda: c.fill_(float("nan")))
        add_ex(a, b, c)  # on s: after the fill, before the copy
        cuda_streams.host(lambda: d.copy_(c))
    s.synchronize()
    assert torch.equal(d, a + b)


def test_tensor_map_kernel_on_a_side_stream(torch: Any, device: str, cuda_streams: Any,
                                            request: pytest.FixtureRequest) -> None:
    gemm_ex = _gemm_for(device, request)
    a, b, c = _gemm_inputs(torch, device=device)
    d = torch.empty_like(c)
    s = cuda_streams.Stream()
    s.wait_stream(cuda_streams.current_stream())
    with cuda_streams.stream(s):
        for _ in range(3):  # the fast path too
            cuda_streams.busy()
            cuda_streams.host(lambda: c.fill_(float("nan")))
            gemm_ex(a, b, c)
            cuda_streams.host(lambda: d.copy_(c))
    s.synchronize()
    _close(torch, d, a, b)


def test_stream_keyword(torch: Any, device: str, cuda_streams: Any,
                        request: pytest.FixtureRequest) -> None:
    gemm_ex, add_ex = _gemm_for(device, request), _ex_for("add_ex", device, request)
    s = cuda_streams.Stream()
    s.wait_stream(cuda_streams.current_stream())
    a, b, c = _gemm_inputs(torch, 1, device)
    n = ADD_SIZE[device]
    x, y = torch.randn(n, device=device), torch.randn(n, device=device)
    z = torch.empty_like(x)
    d, w = torch.empty_like(c), torch.empty_like(z)
    for _ in range(2):
        with cuda_streams.stream(s):
            cuda_streams.busy()
            cuda_streams.host(lambda: (c.fill_(float("nan")), z.fill_(float("nan"))))
        gemm_ex(a, b, c, stream=s)  # the current stream is the default one: s is named
        add_ex(x, y, z, stream=s)
        with cuda_streams.stream(s):
            cuda_streams.host(lambda: (d.copy_(c), w.copy_(z)))
    s.synchronize()
    _close(torch, d, a, b)
    assert torch.equal(w, x + y)


def test_cuda_graph_captures_softmax_and_gemm(torch: Any, device: str, cuda_streams: Any,
                                              request: pytest.FixtureRequest) -> None:
    softmax_ex, gemm_ex = _ex_for("softmax_ex", device, request), _gemm_for(device, request)
    rows = SOFTMAX_ROWS[device]
    x = torch.randn(rows, 1024, device=device)
    y = torch.empty_like(x)
    a, b, c = _gemm_inputs(torch, 2, device)
    s = cuda_streams.Stream()  # warm up on a side stream, as torch.cuda.graph asks
    s.wait_stream(cuda_streams.current_stream())
    with cuda_streams.stream(s):
        softmax_ex(x, y)
        gemm_ex(a, b, c)
    cuda_streams.current_stream().wait_stream(s)
    graph = cuda_streams.CUDAGraph()
    with cuda_streams.graph(graph):
        softmax_ex(x, y)
        gemm_ex(a, b, c)
    for seed in (3, 4):
        g = torch.Generator(device=device).manual_seed(seed)
        x.copy_(torch.randn(rows, 1024, device=device, generator=g))
        a.copy_(torch.randn(*a.shape, device=device, generator=g).to(torch.bfloat16))
        y.fill_(float("nan"))
        c.fill_(float("nan"))
        graph.replay()
        cuda_streams.synchronize()
        torch.testing.assert_close(y, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)
        _close(torch, c, a, b)


def test_cuda_events_bracket_our_kernels(torch: Any, device: str, cuda_streams: Any,
                                         request: pytest.FixtureRequest) -> None:
    gemm_ex = _gemm_for(device, request)
    a, b, c = _gemm_inputs(torch, 5, device)
    gemm_ex(a, b, c)
    cuda_streams.synchronize()
    start = cuda_streams.Event(enable_timing=True)
    end = cuda_streams.Event(enable_timing=True)
    c.fill_(float("nan"))
    start.record()
    for _ in range(20 if device == "cuda" else 2):
        gemm_ex(a, b, c)
    end.record()
    end.synchronize()  # no device-wide synchronisation: only what torch's stream holds
    _close(torch, c, a, b)
    # 20 GEMMs of 2048^3 are 344 GFLOP: well over 0.1 ms at any speed an H200 reaches (and
    # two emulated 256^3 ones take far longer)
    assert start.elapsed_time(end) > 0.1


def test_rotated_inputs_each_get_their_map(torch: Any, device: str,
                                           request: pytest.FixtureRequest) -> None:
    gemm_ex = _gemm_for(device, request)
    sets = [_gemm_inputs(torch, 10 + i, device) for i in range(3)]
    for _ in range(2):
        for a, b, c in sets:
            c.fill_(float("nan"))
            gemm_ex(a, b, c)
    if device == "cuda":
        torch.cuda.synchronize()
    for a, b, c in sets:
        _close(torch, c, a, b)


def test_a_misaligned_array_is_refused_by_name(torch: Any, device: str,
                                               request: pytest.FixtureRequest) -> None:
    gemm_ex = _gemm_for(device, request)
    a, b, c = _gemm_inputs(torch, 6, device)
    gemm_ex(a, b, c)
    size = a.shape[0]
    flat = torch.empty(size * size + 1, device=device, dtype=torch.bfloat16)
    c = flat[1:].view(size, size)  # contiguous, but 2 bytes past a 16-byte boundary
    with pytest.raises(ValueError, match="argument 'C': TMA needs a 16-byte aligned address"):
        gemm_ex(a, b, c)


def test_the_hot_call_checks_tensors_in_c(torch: Any, device: str, cuda_streams: Any,
                                          request: pytest.FixtureRequest) -> None:
    """After its first call an executable launches through the C tensor launcher (torch's
    DLPack C exchange API): fresh tensors of the same kind launch on the current stream, and
    anything else (a misaligned view, another shape, another dtype) still gets core's error."""
    from tvm_backend_cuda import c_launcher

    add_ex, n = _ex_for("add_ex", device, request), ADD_SIZE[device]
    a, b, c = (torch.randn(n, device=device) for _ in range(3))
    add_ex(a, b, c)
    if device == "cuda" and hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        assert c_launcher.status() == "in use"
    s = cuda_streams.Stream()
    s.wait_stream(cuda_streams.current_stream())
    with cuda_streams.stream(s):
        for seed in range(3):  # fresh tensors each time, on the side stream
            x, y = torch.randn(n, device=device), torch.randn(n, device=device)
            z = torch.empty_like(x)
            cuda_streams.busy()
            cuda_streams.host(lambda z=z: z.fill_(float("nan")))
            add_ex(x, y, z)
            s.synchronize()
            assert torch.equal(z, x + y), seed
    big = torch.randn(n + 4, device=device)
    with pytest.raises(Exception, match="align"):
        add_ex(big[1:n + 1], b, c)  # 4 bytes off the vector width
    with pytest.raises(Exception, match="shape"):
        add_ex(big, b, c)
    with pytest.raises(Exception, match="dtype"):
        add_ex(a.double(), b, c)
    add_ex(a, b, c)
    cuda_streams.current_stream().synchronize()
    assert torch.equal(c, a + b)
