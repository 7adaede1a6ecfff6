"""Shared fixtures: the `gpu` marker, a private cubin cache per test, the device probe, and the
`device` fixture.

A `gpu`-marked test that takes the `device` fixture runs on the GPU where there is one
(`device == "cuda"`) and under the CUDA emulator elsewhere (`device == "cpu"`, with
`TVM_CUDA_EMULATE=1` so that every `tvm.compile(f, target="cuda")` builds for the emulator);
`TVM_TEST_EMULATE=1` picks the emulator on a GPU machine too. Other `gpu`-marked tests skip
without a GPU; those the emulator cannot run by their nature carry
`@pytest.mark.not_emulated(reason)`, and skip with that reason (the list of
docs/guide/emulating-cuda.md). `nox -s emulate` runs the emulated ones."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU and driver (skipped without one)")
    config.addinivalue_line("markers", "not_emulated(reason): a gpu test the CUDA emulator "
                            "cannot run, and why (its skip reason without a GPU)")
    # a source checkout on PYTHONPATH has no entry point: load the backend before any test
    # module imports a name it registers (``from tvm.tirx.layout import tid_in_wg``)
    from tvm_backend_cuda.plugin import register_backend

    register_backend()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not any(item.get_closest_marker("gpu") for item in items):
        return
    from tvm_backend_cuda.runtime import has_cuda_device, no_device_reason

    if has_cuda_device() and not _force_emulation():
        return
    skip = pytest.mark.skip(reason=f"no CUDA device: {no_device_reason()}")
    for item in items:
        if not item.get_closest_marker("gpu"):
            continue
        why = item.get_closest_marker("not_emulated")
        if why is not None:  # first, before the test's own skipif marks
            reason = f"not emulated: {why.args[0]}"
            item.own_markers.insert(0, pytest.mark.skipif(True, reason=reason).mark)
        elif "device" not in getattr(item, "fixturenames", ()):
            item.add_marker(skip)


def _force_emulation() -> bool:
    return os.environ.get("TVM_TEST_EMULATE", "") == "1"


def emulated() -> bool:
    """Whether `gpu` tests taking `device` run under the emulator in this session."""
    from tvm_backend_cuda.runtime import has_cuda_device

    return _force_emulation() or not has_cuda_device()


@pytest.fixture
def device(monkeypatch: pytest.MonkeyPatch) -> str:
    """``"cuda"`` on a GPU; else ``"cpu"`` with ``TVM_CUDA_EMULATE=1`` (the CUDA emulator)."""
    if not emulated():
        monkeypatch.delenv("TVM_CUDA_EMULATE", raising=False)
        return "cuda"
    monkeypatch.setenv("TVM_CUDA_EMULATE", "1")
    return "cpu"


class _TorchCudaStreams:
    """``torch.cuda``'s streams, events and graphs, with :meth:`host` and :meth:`busy`."""

    def __init__(self, torch: Any) -> None:
        self._cuda = torch.cuda

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cuda, name)

    @staticmethod
    def host(fn: Callable[[], Any]) -> None:
        """torch's operations queue themselves on torch's current stream: run ``fn``."""
        fn()

    def busy(self) -> None:
        """Keep the current stream busy for a while (a launch elsewhere would race)."""
        self._cuda._sleep(2_000_000)


class _EmulatedStreams:
    """:mod:`tvm_backend_cuda.emulated_streams`, with :meth:`busy`."""

    def __init__(self) -> None:
        from tvm_backend_cuda import emulated_streams

        self._streams = emulated_streams
        self._gates: list[threading.Event] = []
        outer = self

        class Stream(emulated_streams.Stream):
            def synchronize(self) -> None:
                outer._open_gates()
                super().synchronize()

        self.Stream = Stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._streams, name)

    def busy(self) -> None:
        """Keep the current stream busy until the host waits for a stream (at most 10 s), as
        a long GPU kernel keeps it busy while the host issues the work after it."""
        gate = threading.Event()
        self._gates.append(gate)
        self._streams.host(lambda: gate.wait(10.0))

    def synchronize(self) -> None:
        self._open_gates()
        self._streams.synchronize()

    def _open_gates(self) -> None:
        for gate in self._gates:
            gate.set()


@pytest.fixture
def cuda_streams(device: str) -> Iterator[Any]:
    """The device's streams, events and graphs, named as ``torch.cuda`` names them: on the GPU
    ``torch.cuda``, under the emulator :mod:`tvm_backend_cuda.emulated_streams`; plus
    ``host(fn)``, host work in order on the current stream (on the GPU ``fn()``: torch queues
    its operations on its current stream itself; emulated, ``fn`` is queued there), and
    ``busy()``, work that keeps the current stream busy a while. Each test takes the same steps
    on either. Under the emulator, the work a test left on its streams is waited for after it."""
    if device == "cuda":
        yield _TorchCudaStreams(pytest.importorskip("torch"))
        return
    streams = _EmulatedStreams()
    yield streams
    streams.synchronize()


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every test gets its own TVM_CACHE_DIR, so tests never see each other's (or a user's)
    cubins; the CUDA emulator's precompiled header (the same for every test) is the session's."""
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path_factory.mktemp("tvm-cache")))
    monkeypatch.setenv("TVM_CUDA_EMULATE_PCH_DIR",
                       str(tmp_path_factory.getbasetemp() / "cuda-emu-pch"))
    yield


@pytest.fixture(scope="session")
def nvshmem_ctx():
    """One NVSHMEM context (one PE) for the whole session: NVSHMEM is process-global and is not
    initialised again after a finalize, so every test module shares this one."""
    from tvm_backend_cuda import nvshmem

    if not nvshmem.is_available():
        pytest.skip(f"NVSHMEM wheel not installed: {nvshmem.unavailable_reason()}")
    pytest.importorskip("torch")
    ctx = nvshmem.NvshmemContext.init(symmetric_size=1 << 30)
    yield ctx
    ctx.finalize()


@pytest.fixture(scope="session")
def nvshmem_emulated_ctx():
    """The CUDA emulator's one-PE NVSHMEM context for the whole session (what
    ``NvshmemContext.init()`` returns with ``TVM_CUDA_EMULATE=1``)."""
    pytest.importorskip("torch")
    from tvm_backend_cuda import nvshmem_emu

    ctx = nvshmem_emu.init()
    yield ctx
    ctx.finalize()


@pytest.fixture
def nvshmem_one_pe(device: str, request: pytest.FixtureRequest):
    """One PE: the GPU's context (``nvshmem_ctx``), or under the emulator the emulated one."""
    name = "nvshmem_ctx" if device == "cuda" else "nvshmem_emulated_ctx"
    return request.getfixturevalue(name)


class _Rollback(Exception):
    pass


@pytest.fixture(scope="module")
def cuda_ns() -> Iterator[None]:
    """Register the CUDA ops and namespaces as a fake owner; raising rolls every entry back."""
    from tvm._registry import transaction
    from tvm.script.namespace import register_script_namespace
    from tvm_backend_cuda.intrinsics import register_ops
    from tvm_backend_cuda.script import CUDANamespace, NVSHMEMNamespace, PTXNamespace

    try:
        with transaction("test-cuda-ops"):
            register_ops()
            register_script_namespace("cuda", CUDANamespace(), override=True)
            register_script_namespace("ptx", PTXNamespace(), override=True)
            register_script_namespace("nvshmem", NVSHMEMNamespace(), override=True)
            yield
            raise _Rollback
    except _Rollback:
        pass
